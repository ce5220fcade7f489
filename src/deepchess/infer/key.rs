//! A position as the net comparator keeps it while it is a live value of the search: its
//! zobrist key and its board (the transposition table's packed form is `packed.rs`'s).

use crate::chess::{Bitboard, Color, Position, Role};
use crate::deepchess::features::Features;

/// A position as the net comparator keeps it: its zobrist key and its board (80 bytes), in
/// the thread's [`KeyStore`](crate::eval::KeyStore) while it is a live value (the search
/// holds a [`Handle`](crate::eval::Handle)) and in the transposition table as the stored
/// form. The code itself (hundreds of floats) stays in the feature cache, and the board
/// rebuilds it in the rare case the cache slot was reused meanwhile. The board, not its input
/// bits: a copy of eight bitboards costs next to nothing per key, listing the bits is left to
/// the rare rebuild. The comparator reads `hash` directly (its memo and cache probes).
#[derive(Clone, Copy, Default)]
pub struct NetKey {
    pub(super) hash: u64,
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
    white_to_move: bool,
    castling: u8,
}

impl NetKey {
    #[inline(always)]
    pub(super) fn of(pos: &Position) -> NetKey {
        NetKey {
            hash: pos.hash(),
            by_role: Role::ALL.map(|r| pos.by_role(r)),
            by_color: Color::ALL.map(|c| pos.by_color(c)),
            white_to_move: pos.turn() == Color::White,
            castling: pos.castling_rights(),
        }
    }

    /// Its fields: hash, boards by role and by colour, White to move, castling rights.
    #[inline(always)]
    pub(super) fn parts(&self) -> (u64, [Bitboard; 6], [Bitboard; 2], bool, u8) {
        (self.hash, self.by_role, self.by_color, self.white_to_move, self.castling)
    }

    /// The key of these fields (see [`NetKey::parts`]).
    #[inline(always)]
    pub(super) fn from_parts(hash: u64, by_role: [Bitboard; 6], by_color: [Bitboard; 2], white_to_move: bool, castling: u8) -> NetKey {
        NetKey { hash, by_role, by_color, white_to_move, castling }
    }

    /// The position's input bits.
    pub(super) fn features(&self) -> Features {
        let turn = if self.white_to_move { Color::White } else { Color::Black };
        Features::from_parts(|c, r| self.by_color[c.index()] & self.by_role[r.index()], turn, self.castling)
    }
}
