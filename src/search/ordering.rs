//! Move ordering: hash move, then captures and promotions by MVV-LVA, then killers, then
//! quiet moves by history. Alpha-beta prunes most when the best move comes first.

use crate::chess::{Bitboard, Color, Move, MoveList, Position, Role};
use crate::eval::MAX_PLY;
use std::mem::MaybeUninit;

const HASH_MOVE: i32 = 1 << 30;
const CAPTURE: i32 = 1 << 26;
const KILLER: [i32; 2] = [1 << 25, (1 << 25) - 1];
const HISTORY_MAX: i32 = 1 << 20;
/// Victim values for MVV-LVA (king never captured).
const VALUE: [i32; 6] = [1, 3, 3, 5, 9, 0];

/// Killers (quiet moves that cut at the same ply) and history (cut-offs by from/to).
pub struct Heuristics {
    killers: [[Option<Move>; 2]; MAX_PLY],
    history: Box<[[[i32; 64]; 64]; 2]>,
}

impl Default for Heuristics {
    fn default() -> Self {
        Heuristics { killers: [[None; 2]; MAX_PLY], history: Box::new([[[0; 64]; 64]; 2]) }
    }
}

impl Heuristics {
    pub fn clear(&mut self) {
        *self = Heuristics::default();
    }

    /// A quiet move caused a cut-off at `ply` after a search of `depth`.
    pub fn on_cutoff(&mut self, side: Color, m: Move, ply: usize, depth: i32, tried: &[Move]) {
        if ply < MAX_PLY && self.killers[ply][0] != Some(m) {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = Some(m);
        }
        let bonus = (depth * depth).min(400);
        let h = &mut self.history[side.index()];
        let mut add = |m: Move, b: i32| {
            let e = &mut h[m.from.index()][m.to.index()];
            *e += b - *e * b.abs() / HISTORY_MAX;
        };
        add(m, bonus);
        // Quiet moves tried before it failed to cut: push them down.
        for &q in tried {
            if q != m {
                add(q, -bonus);
            }
        }
    }

    pub fn is_killer(&self, ply: usize, m: Move) -> bool {
        ply < MAX_PLY && self.killers[ply].contains(&Some(m))
    }

    /// Halves history between searches so old statistics fade.
    pub fn age(&mut self) {
        for side in self.history.iter_mut() {
            for row in side.iter_mut() {
                for v in row.iter_mut() {
                    *v /= 2;
                }
            }
        }
        self.killers = [[None; 2]; MAX_PLY];
    }
}

/// Moves of one node with their ordering scores, handed out best first.
pub struct Picker {
    moves: MoveList,
    /// `scores[i]` belongs to move `i`; only the first `moves.len()` are ever read (the
    /// array is not cleared first, as in [`MoveList`]).
    scores: [MaybeUninit<i32>; 256],
    next: usize,
}

impl Picker {
    /// All legal moves (`captures_only`: captures and promotions, for quiescence).
    pub fn new(pos: &Position, captures_only: bool, hash_move: Option<Move>, h: &Heuristics, ply: usize) -> Picker {
        let mut moves = MoveList::default();
        let (to, pawn_to) = if captures_only {
            let theirs = pos.by_color(pos.turn().flip());
            let ep = pos.ep_square().map_or(Bitboard::EMPTY, Bitboard::from_square);
            (theirs, theirs | ep | Bitboard::BACK_RANKS)
        } else {
            (Bitboard::FULL, Bitboard::FULL)
        };
        pos.for_each_piece_moves_to(to, pawn_to, |pm| {
            pm.for_each(|m| moves.push(m));
            false
        });
        let mut scores = [MaybeUninit::uninit(); 256];
        let killers = if ply < MAX_PLY { h.killers[ply] } else { [None; 2] };
        let hist = &h.history[pos.turn().index()];
        for (i, &m) in moves.iter().enumerate() {
            scores[i] = MaybeUninit::new(if Some(m) == hash_move {
                HASH_MOVE
            } else if pos.is_capture(m) || m.promotion.is_some() {
                let victim = pos.role_on(m.to).map_or(VALUE[0], |r| VALUE[r.index()]);
                let attacker = pos.role_on(m.from).map_or(0, |r| r.index() as i32);
                let promo = match m.promotion {
                    Some(Role::Queen) => 8 * 16,
                    Some(_) => -CAPTURE / 2, // under-promotions after quiet moves' killers
                    None => 0,
                };
                CAPTURE + victim * 16 - attacker + promo
            } else if Some(m) == killers[0] {
                KILLER[0]
            } else if Some(m) == killers[1] {
                KILLER[1]
            } else {
                hist[m.from.index()][m.to.index()]
            });
        }
        Picker { moves, scores, next: 0 }
    }

    pub fn len(&self) -> usize {
        self.moves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// Keeps only the moves `keep` accepts (the root's `searchmoves`), before any is picked.
    pub fn retain(&mut self, keep: impl Fn(Move) -> bool) {
        let mut kept = MoveList::default();
        for i in 0..self.moves.len() {
            let m = self.moves.as_slice()[i];
            if keep(m) {
                self.scores[kept.len()] = self.scores[i];
                kept.push(m);
            }
        }
        self.moves = kept;
    }

    /// The best remaining move (selection sort: usually only the first few are needed).
    pub fn next(&mut self) -> Option<Move> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        // Safety: entries 0..n were written in `new` (swaps keep them within 0..n).
        let score = |i: usize| unsafe { self.scores[i].assume_init() };
        let mut best = self.next;
        let mut best_score = score(best);
        for i in self.next + 1..n {
            if score(i) > best_score {
                best = i;
                best_score = score(i);
            }
        }
        let i = self.next;
        self.moves.as_mut_slice().swap(i, best);
        self.scores.swap(i, best);
        self.next += 1;
        Some(self.moves.as_slice()[i])
    }
}
