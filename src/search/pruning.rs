//! The selective steps of a node (beyond the paper): the static cut and null move, which
//! may end a node before its moves are searched, and the margins and counts of the move
//! loop's late-move reductions, late-move pruning and SEE pruning. `Selective false` (UCI)
//! and `go mate` turn them all off.

use super::searcher::Searcher;
use super::window::Window;
use crate::chess::{Color, Position, Role};
use crate::eval::{Comparator, Kind, Value};

/// Depth from which null move is tried.
pub(super) const NULL_MOVE_DEPTH: i32 = 3;

impl<C: Comparator> Searcher<C> {
    /// Static cut (reverse futility in comparison terms): a few plies from the leaves, a
    /// position the comparator is confident is better than beta for the side to move stays
    /// above it. Confidence, not a margin, is what a comparator offers. Returns the
    /// position's own value and whether it cuts.
    #[inline]
    pub(super) fn static_cut(&mut self, pos: &Position, ply: usize, depth: i32, beta: &Window<C::Key>) -> (Value<C::Key>, bool) {
        let v = Value::pos(self.comp.key(ply, pos));
        let p_white = match beta.value.kind {
            Kind::Pos => Some(self.comp.prob_white_better(&v.key, &beta.value.key)),
            Kind::Draw => Some(self.comp.prob_better_than_draw(&v.key)),
            _ => None,
        };
        let cut = p_white.is_some_and(|p| {
            let p_side = if pos.turn() == Color::White { p } else { 1.0 - p };
            p_side >= static_cut_confidence(depth)
        });
        self.tree.static_tries += 1;
        self.tree.static_cuts += cut as u64;
        (v, cut)
    }

    /// Null move: if passing still leaves the side at least at beta after a reduced search,
    /// a real move would too. Only where the position itself (`stand`, computed here if the
    /// static cut did not) already reaches beta; the caller excludes checks and pawn endings
    /// (zugzwang). `Some` is a cut-off; after an abort, `None`.
    #[inline]
    pub(super) fn null_move(&mut self, pos: &Position, ply: usize, depth: i32, beta: &Window<C::Key>, stand: Option<Value<C::Key>>) -> Option<Value<C::Key>> {
        let side = pos.turn();
        let stand = stand.unwrap_or_else(|| Value::pos(self.comp.key(ply, pos)));
        if !self.reaches(&stand, beta, side) {
            return None;
        }
        self.tree.null_tries += 1;
        let r = 3 + depth / 6;
        let mut child = *pos;
        child.play_null();
        self.enter(ply + 1, &child, depth - 1 - r);
        self.path.push(child.hash());
        // Window (beta - ε, beta): only "does it reach beta?".
        let v = self.alphabeta(&child, depth - 1 - r, ply + 1, beta.flip(), beta.lowered().flip(), false);
        self.path.pop();
        // A mate found after passing is no proof of anything: search normally.
        let cut = !self.aborted && !v.is_mate() && self.reaches(&v, beta, side);
        self.tree.null_cuts += cut as u64;
        cut.then_some(v)
    }
}

/// Late-move reduction in plies for the `index`-th move (0-based) at `depth`: none for
/// the first three, then growing with the logarithms of both.
pub(super) fn lmr(depth: i32, index: usize) -> i32 {
    if index < 3 {
        return 0;
    }
    (0.75 + (depth as f64).ln() * (index as f64).ln() / 2.25) as i32
}

/// Depth up to which the static cut applies, and the confidence it asks for at `depth`.
pub(super) const STATIC_CUT_DEPTH: i32 = 3;
fn static_cut_confidence(depth: i32) -> f32 {
    0.55 + 0.05 * depth as f32
}

/// SEE below which a move is pruned at `depth` (see the move loop): quiet moves may hang
/// less than captures, whose exchange already won something.
pub(super) fn see_margin(depth: i32, quiet: bool) -> i32 {
    if quiet {
        -15 * depth * depth
    } else {
        -90 * depth
    }
}

/// Moves searched at `depth` before late quiet moves are pruned (see the move loop).
pub(super) fn lmp_count(depth: i32) -> usize {
    3 + (depth * depth) as usize
}

/// Whether `side` has a piece besides pawns and king (null move is unsafe without one).
pub(super) fn has_pieces(pos: &Position, side: Color) -> bool {
    let pawns_kings = pos.by_role(Role::Pawn) | pos.by_role(Role::King);
    !(pos.by_color(side) & !pawns_kings).is_empty()
}
