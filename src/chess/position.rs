//! `Position`: a small copyable board (copy-make), its incremental zobrist key and
//! the check and pin masks that legal move generation needs.

use super::attacks::*;
use super::bitboard::Bitboard;
use super::moves::Move;
use super::types::{Color, Piece, Role, Square};
use super::zobrist;

/// Castling rights as 4 bits.
pub mod castle {
    pub const WK: u8 = 1;
    pub const WQ: u8 = 2;
    pub const BK: u8 = 4;
    pub const BQ: u8 = 8;
}

/// Rights kept when a move touches a square (king and rook origin squares clear rights).
const CASTLE_KEEP: [u8; 64] = {
    let mut t = [15u8; 64];
    t[0] = 15 & !castle::WQ;
    t[4] = 15 & !(castle::WK | castle::WQ);
    t[7] = 15 & !castle::WK;
    t[56] = 15 & !castle::BQ;
    t[60] = 15 & !(castle::BK | castle::BQ);
    t[63] = 15 & !castle::BK;
    t
};

/// A chess position. Copy it to make a move on a copy (`let mut p = *pos; p.play(m)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub(crate) by_role: [Bitboard; 6],
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) turn: Color,
    pub(crate) castling: u8,
    /// Set only when an en-passant capture is pseudo-legal (Polyglot convention).
    pub(crate) ep: Option<Square>,
    pub(crate) halfmove: u16,
    pub(crate) fullmove: u16,
    pub(crate) hash: u64,
    pub(crate) checkers: Bitboard,
    pub(crate) pinned: Bitboard,
}

impl Default for Position {
    fn default() -> Self {
        Position::startpos()
    }
}

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
            .expect("start position FEN is valid")
    }

    /// An empty board builder used by FEN parsing and tests; call [`Position::refresh`] after edits.
    pub(crate) fn empty() -> Position {
        Position {
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            turn: Color::White,
            castling: 0,
            ep: None,
            halfmove: 0,
            fullmove: 1,
            hash: 0,
            checkers: Bitboard::EMPTY,
            pinned: Bitboard::EMPTY,
        }
    }

    // --- accessors -------------------------------------------------------------------

    #[inline(always)]
    pub fn turn(&self) -> Color {
        self.turn
    }
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }
    #[inline(always)]
    pub fn by_color(&self, c: Color) -> Bitboard {
        self.by_color[c.index()]
    }
    #[inline(always)]
    pub fn by_role(&self, r: Role) -> Bitboard {
        self.by_role[r.index()]
    }
    #[inline(always)]
    pub fn pieces(&self, c: Color, r: Role) -> Bitboard {
        self.by_color[c.index()] & self.by_role[r.index()]
    }
    /// Castling rights as 4 bits (see [`castle`]).
    #[inline(always)]
    pub fn castling_rights(&self) -> u8 {
        self.castling
    }
    /// The en-passant target square, when a capture there is pseudo-legal.
    #[inline(always)]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep
    }
    #[inline(always)]
    pub fn halfmove_clock(&self) -> u16 {
        self.halfmove
    }
    #[inline(always)]
    pub fn fullmove_number(&self) -> u16 {
        self.fullmove
    }
    /// Zobrist key, updated incrementally by [`Position::play`].
    #[inline(always)]
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// Pieces giving check to the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }
    #[inline(always)]
    pub fn is_check(&self) -> bool {
        self.checkers.any()
    }
    /// Pieces of the side to move pinned to their king.
    #[inline(always)]
    pub fn pinned(&self) -> Bitboard {
        self.pinned
    }
    #[inline(always)]
    pub fn king(&self, c: Color) -> Square {
        self.pieces(c, Role::King).lsb()
    }

    #[inline(always)]
    pub fn role_on(&self, sq: Square) -> Option<Role> {
        if !self.occupied().has(sq) {
            return None;
        }
        Role::ALL.into_iter().find(|r| self.by_role[r.index()].has(sq))
    }

    #[inline(always)]
    pub fn color_on(&self, sq: Square) -> Option<Color> {
        if self.by_color[0].has(sq) {
            Some(Color::White)
        } else if self.by_color[1].has(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    pub fn piece_on(&self, sq: Square) -> Option<Piece> {
        Some(Piece::new(self.color_on(sq)?, self.role_on(sq)?))
    }

    // --- editing (FEN, tests) ------------------------------------------------------------

    #[inline(always)]
    fn toggle(&mut self, c: Color, r: Role, sq: Square) {
        let b = Bitboard::from_square(sq);
        self.by_role[r.index()] ^= b;
        self.by_color[c.index()] ^= b;
        self.hash ^= zobrist::piece(c, r, sq);
    }

    pub(crate) fn put(&mut self, p: Piece, sq: Square) {
        self.toggle(p.color, p.role, sq);
    }

    /// This position with the piece on `sq` taken off, as probes of an evaluation build a
    /// side a piece down: a castling right that named it (a rook on its corner) goes with it,
    /// and so does an en-passant square whose pawn it was. `None` for an empty square or a
    /// king, or when the board left is not one [`Position::from_fen`] accepts (the side not to
    /// move in check, or more than two checkers).
    pub fn without(&self, sq: Square) -> Option<Position> {
        let piece = self.piece_on(sq)?;
        if piece.role == Role::King {
            return None;
        }
        let mut p = *self;
        p.toggle(piece.color, piece.role, sq);
        p.castling &= CASTLE_KEEP[sq.index()];
        if let Some(ep) = p.ep {
            let pushed = if p.turn == Color::White { ep.index() - 8 } else { ep.index() + 8 };
            if pushed == sq.index() {
                p.ep = None;
            }
        }
        let them = p.turn.flip();
        if p.is_attacked(p.king(them), p.turn, p.occupied()) {
            return None;
        }
        p.refresh();
        (p.checkers.count() <= 2).then_some(p)
    }

    /// Recomputes the key, the en-passant normalisation and the check/pin masks from scratch.
    pub(crate) fn refresh(&mut self) {
        if let Some(ep) = self.ep {
            if !self.ep_capturable(ep) {
                self.ep = None;
            }
        }
        self.hash = self.compute_hash();
        self.update_masks();
    }

    /// Whether a pawn of the side to move attacks `ep` (pseudo-legal en passant).
    fn ep_capturable(&self, ep: Square) -> bool {
        (pawn_attacks(self.turn.flip(), ep) & self.pieces(self.turn, Role::Pawn)).any()
    }

    /// The zobrist key recomputed from scratch (tests compare it with the incremental one).
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for c in Color::ALL {
            for r in Role::ALL {
                for sq in self.pieces(c, r) {
                    h ^= zobrist::piece(c, r, sq);
                }
            }
        }
        if self.turn == Color::Black {
            h ^= zobrist::side();
        }
        h ^= zobrist::castling(self.castling);
        if let Some(ep) = self.ep {
            h ^= zobrist::ep_file(ep.file());
        }
        h
    }

    // --- attacks -------------------------------------------------------------------------

    /// Pieces of `by` attacking `sq` given occupancy `occ`.
    #[inline(always)]
    pub fn attackers(&self, sq: Square, by: Color, occ: Bitboard) -> Bitboard {
        let them = self.by_color[by.index()];
        let diag = self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()];
        let orth = self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()];
        them & ((pawn_attacks(by.flip(), sq) & self.by_role[Role::Pawn.index()])
            | (knight_attacks(sq) & self.by_role[Role::Knight.index()])
            | (king_attacks(sq) & self.by_role[Role::King.index()])
            | (bishop_attacks(sq, occ) & diag)
            | (rook_attacks(sq, occ) & orth))
    }

    #[inline(always)]
    pub fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard) -> bool {
        self.attackers(sq, by, occ).any()
    }

    /// Computes checkers and pinned pieces for the side to move.
    #[inline(always)]
    pub(crate) fn update_masks(&mut self) {
        let us = self.turn;
        let them = us.flip();
        let k = self.king(us);
        let theirs = self.by_color[them.index()];
        let occ = self.occupied();
        let mut checkers = theirs
            & ((knight_attacks(k) & self.by_role[Role::Knight.index()])
                | (pawn_attacks(us, k) & self.by_role[Role::Pawn.index()]));
        let queens = self.by_role[Role::Queen.index()];
        let snipers = theirs
            & ((rook_attacks(k, Bitboard::EMPTY) & (self.by_role[Role::Rook.index()] | queens))
                | (bishop_attacks(k, Bitboard::EMPTY) & (self.by_role[Role::Bishop.index()] | queens)));
        let mut pinned = Bitboard::EMPTY;
        for s in snipers {
            let block = between(k, s) & occ;
            if block.is_empty() {
                checkers |= Bitboard::from_square(s);
            } else if !block.more_than_one() {
                pinned |= block & self.by_color[us.index()];
            }
        }
        self.checkers = checkers;
        self.pinned = pinned;
    }

    // --- making moves ----------------------------------------------------------------------

    /// Plays a legal move of the side to move (legality is the caller's promise: use
    /// [`Position::is_legal`] for untrusted moves).
    #[inline]
    pub fn play(&mut self, m: Move) {
        let us = self.turn;
        let them = us.flip();
        let moved = self.role_on(m.from).expect("play: no piece on the from-square");
        let captured = self.role_on(m.to);
        self.hash ^= zobrist::side();
        if let Some(ep) = self.ep.take() {
            self.hash ^= zobrist::ep_file(ep.file());
        }
        self.halfmove = self.halfmove.saturating_add(1);
        if let Some(c) = captured {
            self.toggle(them, c, m.to);
            self.halfmove = 0;
        }
        self.toggle(us, moved, m.from);
        self.toggle(us, m.promotion.unwrap_or(moved), m.to);
        match moved {
            Role::Pawn => {
                self.halfmove = 0;
                let (f, t) = (m.from.index() as i32, m.to.index() as i32);
                if (t - f).abs() == 16 {
                    let ep = Square::new(((f + t) / 2) as u8);
                    if (pawn_attacks(us, ep) & self.pieces(them, Role::Pawn)).any() {
                        self.ep = Some(ep);
                        self.hash ^= zobrist::ep_file(ep.file());
                    }
                } else if captured.is_none() && m.from.file() != m.to.file() {
                    // En passant: the captured pawn stands behind the target square.
                    let victim = Square::new(if us == Color::White { t - 8 } else { t + 8 } as u8);
                    self.toggle(them, Role::Pawn, victim);
                }
            }
            Role::King if m.from.file().abs_diff(m.to.file()) == 2 => {
                let rank = m.from.rank();
                let (rf, rt) = if m.to.file() == 6 { (7, 5) } else { (0, 3) };
                self.toggle(us, Role::Rook, Square::from_coords(rf, rank));
                self.toggle(us, Role::Rook, Square::from_coords(rt, rank));
            }
            _ => {}
        }
        let rights = self.castling & CASTLE_KEEP[m.from.index()] & CASTLE_KEEP[m.to.index()];
        if rights != self.castling {
            self.hash ^= zobrist::castling(self.castling) ^ zobrist::castling(rights);
            self.castling = rights;
        }
        if us == Color::Black {
            self.fullmove = self.fullmove.saturating_add(1);
        }
        self.turn = them;
        self.update_masks();
    }

    /// Passes the turn (a "null move"); only valid when not in check. Used by search.
    pub fn play_null(&mut self) {
        debug_assert!(!self.is_check());
        self.hash ^= zobrist::side();
        if let Some(ep) = self.ep.take() {
            self.hash ^= zobrist::ep_file(ep.file());
        }
        self.halfmove = self.halfmove.saturating_add(1);
        self.turn = self.turn.flip();
        self.update_masks();
    }

    /// Whether the move is a capture (including en passant).
    pub fn is_capture(&self, m: Move) -> bool {
        self.by_color(self.turn.flip()).has(m.to)
            || (self.pieces(self.turn, Role::Pawn).has(m.from) && m.from.file() != m.to.file())
    }

    /// Whether the move is castling (king moves two files).
    pub fn is_castling(&self, m: Move) -> bool {
        self.pieces(self.turn, Role::King).has(m.from) && m.from.file().abs_diff(m.to.file()) == 2
    }

    /// The colour-mirrored position: board flipped vertically, colours, side to move and
    /// castling rights swapped. Its perft equals this position's.
    pub fn mirror(&self) -> Position {
        let mut p = Position::empty();
        for r in Role::ALL {
            p.by_role[r.index()] = self.by_role[r.index()].flip_vertical();
        }
        p.by_color[0] = self.by_color[1].flip_vertical();
        p.by_color[1] = self.by_color[0].flip_vertical();
        p.turn = self.turn.flip();
        p.castling = (self.castling >> 2) | ((self.castling & 3) << 2);
        p.ep = self.ep.map(|s| s.flip_rank());
        p.halfmove = self.halfmove;
        p.fullmove = self.fullmove;
        p.refresh();
        p
    }
}
