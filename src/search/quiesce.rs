//! Quiescence: the comparator only saw quiet positions, so captures and promotions are
//! resolved first. Standing pat is the position itself; in check, every evasion.

use super::ordering::Picker;
use super::see::see_ge;
use super::searcher::Searcher;
use super::window::Window;
use crate::chess::Position;
use crate::eval::{Comparator, Value, MAX_PLY};
use std::cmp::Ordering::Greater;

/// Quiescence plies within which checks are answered with every evasion.
const QS_EVASION_PLIES: usize = 3;

impl<C: Comparator> Searcher<C> {
    /// Quiescence: the comparator only saw quiet positions, so resolve captures and
    /// promotions first. Standing pat is the position itself; in check, every evasion.
    #[inline]
    pub(super) fn quiesce(
        &mut self,
        pos: &Position,
        ply: usize,
        qply: usize,
        alpha: Window<C::Key>,
        beta: Window<C::Key>,
    ) -> Value<C::Key> {
        // As `alphabeta`: the keys it made are released on return but the returned one's.
        let mark = self.comp.mark();
        let mut v = self.qnode(pos, ply, qply, alpha, beta);
        self.comp.release(mark, &mut v);
        v
    }

    fn qnode(
        &mut self,
        pos: &Position,
        ply: usize,
        qply: usize,
        mut alpha: Window<C::Key>,
        beta: Window<C::Key>,
    ) -> Value<C::Key> {
        self.pv_len[ply] = 0;
        self.nodes += 1;
        self.tree.qnodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if self.check_abort() {
            return alpha.value;
        }
        let side = pos.turn();
        let in_check = pos.is_check();
        if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
            if !in_check || pos.has_legal_move() {
                return Value::draw();
            }
        }
        if !self.quiescence {
            if !pos.has_legal_move() {
                return if in_check { Value::mate(side.flip(), ply) } else { Value::draw() };
            }
            return Value::pos(self.comp.key(ply, pos));
        }
        // Deep in quiescence a check is not resolved any more (evasions are quiet moves and
        // chains of checking captures would explode): the position stands for itself.
        if ply >= MAX_PLY - 1 || (in_check && qply > QS_EVASION_PLIES) {
            return Value::pos(self.comp.key(ply, pos));
        }
        let mut best = Value::worst_for(side);
        if !in_check {
            let stand = Value::pos(self.comp.key(ply, pos));
            if self.reaches(&stand, &beta, side) {
                return stand;
            }
            best = stand;
            if self.exceeds(&stand, &alpha, side) {
                alpha = Window::at(stand);
            }
        }
        let mut picker = Picker::new(pos, !in_check, None, &self.heur, ply);
        if picker.is_empty() {
            if in_check {
                return Value::mate(side.flip(), ply);
            }
            if !pos.has_legal_move() {
                return Value::draw();
            }
            return best;
        }
        while let Some(m) = picker.next() {
            // Losing captures cannot restore a standing pat; skip them (not when evading).
            if !in_check && !see_ge(pos, m, 0) {
                continue;
            }
            let mut child = *pos;
            child.play(m);
            self.enter(ply + 1, &child, 0);
            let mark = self.comp.mark();
            let v = self.quiesce(&child, ply + 1, qply + 1, beta.flip(), alpha.flip());
            if self.aborted {
                return best;
            }
            if self.reaches(&v, &beta, side) {
                return v;
            }
            if self.exceeds(&v, &alpha, side) {
                best = v;
                alpha = Window::at(v);
                self.set_pv(ply, m);
            } else if v.cmp_for(&best, side, &mut self.comp) == Greater {
                best = v;
            } else {
                // Not kept: its key is dead (as in `alphabeta`'s move loop).
                self.comp.truncate(mark);
            }
        }
        best
    }
}
