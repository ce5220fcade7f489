//! The paper's comparison-based alpha-beta (§4), one node: alpha and beta are positions
//! ([`Window`]s around [`Value`]s) compared by the [`Comparator`]; Black's nodes read the
//! comparator reversed. The node probes the transposition table, applies the pruning steps
//! of `pruning.rs`, then searches its moves in the picker's order with principal variation
//! search, late-move reductions and pruning, SEE pruning and a check extension; depth 0 hands
//! over to quiescence (`quiesce.rs`).

use super::ordering::Picker;
use super::pruning::{has_pieces, lmp_count, lmr, see_margin, NULL_MOVE_DEPTH, STATIC_CUT_DEPTH};
use super::see::see_ge;
use super::searcher::Searcher;
use super::tt::Bound;
use super::window::Window;
use crate::chess::{Move, Position, Square};
use crate::eval::{Comparator, Kind, Value, MAX_PLY};
use std::cmp::Ordering::Greater;

impl<C: Comparator> Searcher<C> {
    /// `alpha` and `beta` are bounds for the side to move ([`Window`]); the result is a value
    /// (fail-soft): at least `beta` is a cut-off, not above `alpha` a fail-low, anything
    /// else exact. `pv`: a node on the principal variation with an open window; every other
    /// node gets a null window (`beta` = `alpha` + ε: only "better than alpha or not?").
    ///
    /// One long body on purpose: a node's steps (draws and mate distance, the table, the
    /// static cut-offs, null move, the move loop with reductions and its re-searches, the
    /// table store) read in the order a node takes them, as in every engine's search.
    #[inline]
    pub(super) fn alphabeta(
        &mut self,
        pos: &Position,
        depth: i32,
        ply: usize,
        alpha: Window<C::Key>,
        beta: Window<C::Key>,
        pv: bool,
    ) -> Value<C::Key> {
        // Every key the node makes is released on return but the one it returns (every
        // return of `node`, early ones included, passes here).
        let mark = self.comp.mark();
        let mut v = self.node(pos, depth, ply, alpha, beta, pv);
        self.comp.release(mark, &mut v);
        v
    }

    fn node(
        &mut self,
        pos: &Position,
        mut depth: i32,
        ply: usize,
        mut alpha: Window<C::Key>,
        beta: Window<C::Key>,
        pv: bool,
    ) -> Value<C::Key> {
        self.pv_len[ply] = 0;
        if depth <= 0 {
            return self.quiesce(pos, ply, 0, alpha, beta);
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if ply > 0 && self.check_abort() {
            return alpha.value;
        }
        let side = pos.turn();
        let in_check = pos.is_check();
        if ply > 0 && self.is_rule_draw(pos) && (!in_check || pos.has_legal_move()) {
            return Value::draw();
        }
        if ply >= MAX_PLY - 1 {
            return Value::pos(self.comp.key(ply, pos));
        }

        let hash = pos.hash();
        let mut hash_move = None;
        if let Some(e) = self.tt.probe(hash, ply) {
            hash_move = Move::from_u16(e.mv).filter(|&m| e.mv != 0 && pos.is_legal(m));
            // A stored bound the comparator cannot make live again serves for its move only.
            let mark = self.comp.mark();
            if let Some(v) = (ply > 0 && e.depth as i32 >= depth).then(|| self.tt_value(&e.value)).flatten() {
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => self.reaches(&v, &beta, side),
                    Bound::Upper => !self.exceeds(&v, &alpha, side),
                };
                if cut {
                    return v;
                }
            }
            // The bound did not cut: its key is dead.
            self.comp.truncate(mark);
        }

        // Internal iterative reduction: a node deep enough to matter that the table knows no
        // move for is probably new to this line; search it one ply shallower (its next
        // visit will have the move this visit stores).
        if self.selective && ply > 0 && depth >= 4 && hash_move.is_none() {
            depth -= 1;
        }

        // Static cut and null move (pruning.rs): both only off the principal variation,
        // out of check, below the root.
        let prunable = self.selective && !pv && !in_check && ply > 0;
        let mut stand = None;
        if prunable && depth <= STATIC_CUT_DEPTH {
            let (v, cut) = self.static_cut(pos, ply, depth, &beta);
            if cut {
                return v;
            }
            stand = Some(v);
        }
        if prunable && depth >= NULL_MOVE_DEPTH && !beta.value.is_mate() && has_pieces(pos, side) {
            if let Some(v) = self.null_move(pos, ply, depth, &beta, stand) {
                return v;
            }
            if self.aborted {
                return alpha.value;
            }
        }

        let mut picker = Picker::new(pos, false, hash_move, &self.heur, ply);
        if ply == 0 && !self.root_moves.is_empty() {
            picker.retain(|m| self.root_moves.contains(&m));
        }
        if picker.is_empty() {
            return if in_check { Value::mate(side.flip(), ply) } else { Value::draw() };
        }
        self.tree.move_nodes += 1;
        self.tree.hash_move_nodes += hash_move.is_some() as u64;
        let mut best = Value::worst_for(side);
        let mut best_move = None;
        // Quiet moves searched so far (the first 64): history pushes them down on a cut-off.
        let mut quiets = [Move::new(Square::A1, Square::A1, None); 64];
        let mut n_quiets = 0;
        let mut index = 0usize;
        while let Some(m) = picker.next() {
            let quiet = !pos.is_capture(m) && m.promotion.is_none();
            // Late-move pruning: near the leaves of a null-window node, quiet moves this far
            // down the ordering almost never cut; skip them (never in check, never checks).
            // Tested first: most moves it skips need no static exchange.
            let late = self.selective && !pv && quiet && !in_check && depth <= 4 && index >= lmp_count(depth);
            let mut child = *pos;
            if late {
                child.play(m);
                if !child.is_check() {
                    self.tree.lmp_skips += 1;
                    continue;
                }
            }
            // SEE pruning: near the leaves, once one move has been searched, a move that loses
            // material on its square by more than the depth allows is not worth searching.
            if self.selective
                && ply > 0
                && index > 0
                && !in_check
                && depth <= 6
                && !best.is_losing_mate_for(side)
                && Some(m) != hash_move
                && !see_ge(pos, m, see_margin(depth, quiet))
            {
                self.tree.see_skips += 1;
                continue;
            }
            if !late {
                child.play(m);
            }
            let gives_check = child.is_check();
            self.enter(ply + 1, &child, depth - 1);
            self.path.push(child.hash());
            // Check extension, bounded so perpetual checks cannot blow up the tree; a check
            // that loses material on its square is not worth a ply (a sacrifice that mates is
            // still searched, one ply shorter).
            let ext = (gives_check
                && self.quiescence
                && (ply as i32) < 2 * self.root_depth
                && see_ge(pos, m, 0)) as i32;
            let new_depth = depth - 1 + ext;
            // The child's keys, its value's among them, go above this mark.
            let mark = self.comp.mark();
            let v = if index == 0 || !self.null_windows {
                self.alphabeta(&child, new_depth, ply + 1, beta.flip(), alpha.flip(), pv)
            } else {
                // Principal variation search: later moves only have to show they are not
                // better than alpha (window (alpha, alpha + ε)), late quiet ones at reduced
                // depth first; one that is better is searched again at full depth, and on the
                // principal variation with the full window.
                let r = if self.selective
                    && quiet
                    && !in_check
                    && !gives_check
                    && depth >= 3
                    && !self.heur.is_killer(ply, m)
                {
                    (lmr(depth, index) - pv as i32).clamp(0, new_depth - 1)
                } else {
                    0
                };
                let (na, nb) = (alpha.raised().flip(), alpha.flip());
                self.tree.null_windows += 1;
                let mut v = self.alphabeta(&child, new_depth - r, ply + 1, na, nb, false);
                if r > 0 && !self.aborted && self.exceeds(&v, &alpha, side) {
                    self.tree.lmr_researches += 1;
                    v = self.alphabeta(&child, new_depth, ply + 1, na, nb, false);
                }
                if pv
                    && !self.aborted
                    && self.exceeds(&v, &alpha, side)
                    && !self.reaches(&v, &beta, side)
                {
                    self.tree.pv_researches += 1;
                    v = self.alphabeta(&child, new_depth, ply + 1, beta.flip(), alpha.flip(), true);
                }
                v
            };
            index += 1;
            self.path.pop();
            if self.aborted {
                return alpha.value;
            }
            if self.reaches(&v, &beta, side) {
                self.tree.cutoffs += 1;
                self.tree.first_move_cutoffs += (index == 1) as u64;
                self.tree.hash_move_cutoffs += (Some(m) == hash_move) as u64;
                if quiet {
                    self.heur.on_cutoff(side, m, ply, depth, &quiets[..n_quiets]);
                }
                let sv = self.to_stored(&v);
                self.tt.store(hash, ply, depth, Bound::Lower, sv, Some(m));
                if ply == 0 {
                    self.root_best = Some(m);
                    self.set_pv(ply, m);
                }
                return v;
            }
            // Whatever beat alpha beats every earlier move too (best ≤ alpha): one comparison.
            if self.exceeds(&v, &alpha, side) {
                best = v;
                alpha = Window::at(v);
                best_move = Some(m);
                self.set_pv(ply, m);
                if ply == 0 {
                    self.root_best = Some(m);
                }
            } else if index == 1 || v.cmp_for(&best, side, &mut self.comp) == Greater {
                best = v;
            } else {
                // Neither kept as alpha nor as the best: its key is dead (the store stays a
                // few entries per ply).
                self.comp.truncate(mark);
            }
            if quiet && n_quiets < quiets.len() {
                quiets[n_quiets] = m;
                n_quiets += 1;
            }
        }
        // A root limited by `searchmoves` knows only a lower bound on the position's value:
        // stored as exact or upper it could cut the position where it recurs in the tree.
        if ply > 0 || self.root_moves.is_empty() {
            let bound = if best_move.is_some() { Bound::Exact } else { Bound::Upper };
            let sv = self.to_stored(&best);
            self.tt.store(hash, ply, depth, bound, sv, best_move);
        }
        best
    }

    /// A table entry's value as a live one (only a position bound needs the comparator).
    #[inline]
    fn tt_value(&mut self, v: &Value<C::Stored>) -> Option<Value<C::Key>> {
        let key = match v.kind {
            Kind::Pos => self.comp.from_stored(&v.key)?,
            _ => C::Key::default(),
        };
        Some(Value { kind: v.kind, key })
    }

    /// A live value in the form the table keeps.
    #[inline]
    fn to_stored(&mut self, v: &Value<C::Key>) -> Value<C::Stored> {
        let key = match v.kind {
            Kind::Pos => self.comp.stored(&v.key),
            _ => C::Stored::default(),
        };
        Value { kind: v.kind, key }
    }
}
