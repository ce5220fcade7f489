//! Legal move generation with check and pin masks (no make-and-test, except for the rare
//! en-passant capture, whose removal of two pawns from one rank can expose the king).

use super::attacks::*;
use super::bitboard::Bitboard;
use super::moves::{Move, MoveList, PieceMoves};
use super::position::{castle, Position};
use super::types::{Color, Role, Square};

impl Position {
    /// Calls `f` with the legal moves grouped by piece; stops early when `f` returns true.
    /// Returns whether it stopped early.
    #[inline(always)]
    pub fn for_each_piece_moves(&self, f: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate::<true>(Bitboard::FULL, Bitboard::FULL, f).0
    }

    /// The same for the legal moves to `to` (pawns: to `pawn_to`) only, in the same order;
    /// quiescence asks for captures and promotions without generating the rest (the king's
    /// quiet steps each cost an attack test).
    #[inline(always)]
    pub fn for_each_piece_moves_to(&self, to: Bitboard, pawn_to: Bitboard, f: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate::<true>(to, pawn_to, f).0
    }

    /// The generator. With `ALL_PAWNS = false`, unpinned pawns' pushes and captures are not
    /// visited but counted set-wise (bulk counting); the count is returned beside the flag.
    #[inline(always)]
    fn generate<const ALL_PAWNS: bool>(&self, mask: Bitboard, pawn_mask: Bitboard, mut f: impl FnMut(PieceMoves) -> bool) -> (bool, usize) {
        let us = self.turn;
        let them = us.flip();
        let ours = self.by_color(us);
        let theirs = self.by_color(them);
        let occ = ours | theirs;
        let k = self.king(us);

        // King: every destination must be safe with the king itself removed (x-rays).
        let mut king_to = Bitboard::EMPTY;
        let occ_no_king = occ.without(k);
        for to in king_attacks(k) & !ours & mask {
            if !self.is_attacked(to, them, occ_no_king) {
                king_to |= Bitboard::from_square(to);
            }
        }
        if king_to.any() && f(PieceMoves { role: Role::King, from: k, to: king_to }) {
            return (true, 0);
        }
        let checkers = self.checkers;
        if checkers.more_than_one() {
            return (false, 0);
        }
        let check_target = match checkers.single() {
            Some(c) => between(k, c).with(c),
            None => !ours,
        };
        let target = check_target & mask;
        let pinned = self.pinned;

        for from in self.pieces(us, Role::Knight) & !pinned {
            let to = knight_attacks(from) & target;
            if to.any() && f(PieceMoves { role: Role::Knight, from, to }) {
                return (true, 0);
            }
        }
        for (role, diag, orth) in
            [(Role::Bishop, true, false), (Role::Rook, false, true), (Role::Queen, true, true)]
        {
            for from in self.pieces(us, role) {
                let mut to = Bitboard::EMPTY;
                if diag {
                    to |= bishop_attacks(from, occ);
                }
                if orth {
                    to |= rook_attacks(from, occ);
                }
                to &= target;
                if pinned.has(from) {
                    to &= line(k, from);
                }
                if to.any() && f(PieceMoves { role, from, to }) {
                    return (true, 0);
                }
            }
        }

        // Pawns, one piece at a time so pins apply per pawn (or set-wise when only counting).
        let empty = !occ;
        let (up, start_rank): (i8, u8) = if us == Color::White { (8, 1) } else { (-8, 6) };
        let mut bulk = 0;
        let mut pawns = self.pieces(us, Role::Pawn);
        if !ALL_PAWNS {
            bulk = count_pawn_sets(us, pawns & !pinned, empty, theirs, check_target & pawn_mask);
            pawns &= pinned;
        }
        for from in pawns {
            let mut to = pawn_attacks(us, from) & theirs;
            let one = Square::new((from.index() as i8 + up) as u8);
            if empty.has(one) {
                to |= Bitboard::from_square(one);
                if from.rank() == start_rank {
                    let two = Square::new((one.index() as i8 + up) as u8);
                    if empty.has(two) {
                        to |= Bitboard::from_square(two);
                    }
                }
            }
            to &= check_target & pawn_mask;
            if pinned.has(from) {
                to &= line(k, from);
            }
            if to.any() && f(PieceMoves { role: Role::Pawn, from, to }) {
                return (true, 0);
            }
        }
        if let Some(ep) = self.ep.filter(|&ep| pawn_mask.has(ep)) {
            let victim = Square::new((ep.index() as i8 - up) as u8);
            for from in pawn_attacks(them, ep) & self.pieces(us, Role::Pawn) {
                if self.ep_is_legal(from, ep, victim, k) {
                    let pm = PieceMoves { role: Role::Pawn, from, to: Bitboard::from_square(ep) };
                    if f(pm) {
                        return (true, 0);
                    }
                }
            }
        }

        // Castling: not out of, through or into check; the path between king and rook empty.
        if checkers.is_empty() {
            let (rights, rank) = match us {
                Color::White => (self.castling & (castle::WK | castle::WQ), 0),
                Color::Black => (self.castling >> 2 & 3, 7),
            };
            // rights bit 1 = king side, bit 2 = queen side (after the shift above).
            for (bit, rook_file, king_to_file, via_file) in [(1u8, 7u8, 6u8, 5u8), (2, 0, 2, 3)] {
                if rights & bit == 0 {
                    continue;
                }
                let rook = Square::from_coords(rook_file, rank);
                let to = Square::from_coords(king_to_file, rank);
                let via = Square::from_coords(via_file, rank);
                if !mask.has(to) || (between(k, rook) & occ).any()
                    || self.is_attacked(via, them, occ)
                    || self.is_attacked(to, them, occ)
                {
                    continue;
                }
                if f(PieceMoves { role: Role::King, from: k, to: Bitboard::from_square(to) }) {
                    return (true, 0);
                }
            }
        }
        (false, bulk)
    }

    /// En passant is legal unless it leaves the king attacked: by a slider through the two
    /// vacated squares, or by a non-slider checker other than the captured pawn.
    #[inline(always)]
    fn ep_is_legal(&self, from: Square, ep: Square, victim: Square, k: Square) -> bool {
        let them = self.turn.flip();
        let occ = (self.occupied().without(from).without(victim)).with(ep);
        let theirs = self.by_color(them).without(victim);
        let queens = self.by_role(Role::Queen);
        let sliders = (rook_attacks(k, occ) & (self.by_role(Role::Rook) | queens))
            | (bishop_attacks(k, occ) & (self.by_role(Role::Bishop) | queens));
        let leapers = self.checkers & (self.by_role(Role::Knight) | self.by_role(Role::Pawn));
        (sliders & theirs).is_empty() && leapers.without(victim).is_empty()
    }

    /// All legal moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::default();
        self.for_each_piece_moves(|pm| {
            pm.for_each(|m| list.push(m));
            false
        });
        list
    }

    /// Number of legal moves, without enumerating them (bulk counting).
    #[inline(always)]
    pub fn count_legal(&self) -> usize {
        let mut n = 0;
        let (_, bulk) = self.generate::<false>(Bitboard::FULL, Bitboard::FULL, |pm| {
            n += pm.len();
            false
        });
        n + bulk
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        self.for_each_piece_moves(|_| true)
    }

    /// Whether `m` is legal here (for moves from untrusted sources: UCI, PGN, hash tables).
    pub fn is_legal(&self, m: Move) -> bool {
        self.for_each_piece_moves(|pm| {
            pm.from == m.from
                && pm.to.has(m.to)
                && (if pm.is_promotion() {
                    matches!(m.promotion, Some(Role::Knight | Role::Bishop | Role::Rook | Role::Queen))
                } else {
                    m.promotion.is_none()
                })
        })
    }
}

/// Counts pushes and captures of unpinned pawns with whole-set shifts (promotions count 4).
#[inline(always)]
fn count_pawn_sets(us: Color, pawns: Bitboard, empty: Bitboard, theirs: Bitboard, target: Bitboard) -> usize {
    const NOT_A: u64 = !0x0101_0101_0101_0101;
    const NOT_H: u64 = !0x8080_8080_8080_8080;
    let p = pawns.0;
    let (one, two, west, east, last) = match us {
        Color::White => {
            let one = (p << 8) & empty.0;
            let two = ((one & 0xFF << 16) << 8) & empty.0;
            (one, two, (p & NOT_A) << 7 & theirs.0, (p & NOT_H) << 9 & theirs.0, 0xFFu64 << 56)
        }
        Color::Black => {
            let one = (p >> 8) & empty.0;
            let two = ((one & 0xFF << 40) >> 8) & empty.0;
            (one, two, (p & NOT_A) >> 9 & theirs.0, (p & NOT_H) >> 7 & theirs.0, 0xFF)
        }
    };
    let t = target.0;
    let count = |b: u64| ((b & t & !last).count_ones() + 4 * (b & t & last).count_ones()) as usize;
    count(one) + (two & t).count_ones() as usize + count(west) + count(east)
}
