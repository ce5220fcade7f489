//! The seed's input (section III.A): "for each playing field, the presence or absence of one
//! of the twelve individual figures … 12 × 64 = 768 … in addition the four castling rights
//! … a binary vector of length 772". The seed has no side-to-move bit; [`Encoding::Bits773`]
//! adds one at the end so what the missing bit costs can be measured.
//!
//! Bit order: `colour * 384 + role * 64 + square` (White = 0; pawn … king = 0..5; a1 = 0),
//! then castling White king side, White queen side, Black king side, Black queen side at
//! 768..772, then (773 only) bit 772 = White to move.

use crate::chess::position::castle;
use crate::chess::{Bitboard, Color, Position, Role};
use crate::data::dataset::Record;

/// First castling bit.
pub const CASTLING_BITS: usize = 768;
/// The side-to-move bit of the 773-bit variant.
pub const SIDE_BIT: usize = 772;

/// Which input the net reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The seed's 772 bits.
    Bits772,
    /// 772 bits and the side to move.
    Bits773,
}

impl Encoding {
    pub const fn inputs(self) -> usize {
        match self {
            Encoding::Bits772 => 772,
            Encoding::Bits773 => 773,
        }
    }

    pub fn from_inputs(n: usize) -> Option<Encoding> {
        match n {
            772 => Some(Encoding::Bits772),
            773 => Some(Encoding::Bits773),
            _ => None,
        }
    }

    /// The layout as the shared incremental first layer reads it ([`crate::eval::line`]).
    pub const fn bits(self) -> crate::eval::line::BoardBits {
        let side = match self {
            Encoding::Bits772 => None,
            Encoding::Bits773 => Some(SIDE_BIT),
        };
        crate::eval::line::BoardBits { castling: CASTLING_BITS, side }
    }

    /// Set bits of a position, increasing, appended to `out` (cleared first).
    pub fn active(self, pos: &Position, out: &mut Vec<u32>) {
        self.from_parts(|c, r| pos.pieces(c, r), pos.turn(), pos.castling_rights(), out)
    }

    /// Set bits of a dataset record.
    pub fn active_record(self, r: &Record, out: &mut Vec<u32>) {
        let planes = r.planes();
        let turn = if r.white_to_move() { Color::White } else { Color::Black };
        self.from_parts(|c, role| Bitboard(planes[c.index() * 6 + role.index()]), turn, r.castling(), out)
    }

    #[inline(always)]
    fn from_parts(self, pieces: impl Fn(Color, Role) -> Bitboard, turn: Color, rights: u8, out: &mut Vec<u32>) {
        out.clear();
        for c in Color::ALL {
            for r in Role::ALL {
                for sq in pieces(c, r) {
                    out.push((c.index() * 384 + r.index() * 64 + sq.index()) as u32);
                }
            }
        }
        for (i, bit) in [castle::WK, castle::WQ, castle::BK, castle::BQ].into_iter().enumerate() {
            if rights & bit != 0 {
                out.push((CASTLING_BITS + i) as u32);
            }
        }
        if self == Encoding::Bits773 && turn == Color::White {
            out.push(SIDE_BIT as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_position_sets_32_pieces_and_4_rights() {
        let pos = Position::startpos();
        let mut v = Vec::new();
        Encoding::Bits772.active(&pos, &mut v);
        assert_eq!(v.len(), 36);
        assert!(v.windows(2).all(|w| w[0] < w[1]) && *v.last().unwrap() == 771);
        // White's pawn on a2 (square 8), Black's king on e8 (square 60).
        assert!(v.contains(&8) && v.contains(&(384 + 5 * 64 + 60)));
        Encoding::Bits773.active(&pos, &mut v);
        assert_eq!((v.len(), *v.last().unwrap()), (37, 772));
        let black = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").unwrap();
        Encoding::Bits773.active(&black, &mut v);
        assert_eq!((v.len(), *v.last().unwrap()), (36, 771));
    }

    #[test]
    fn records_encode_like_their_positions() {
        let pos = Position::from_fen("r3k2r/8/8/3q4/8/8/8/R3K2R b Kq - 0 1").unwrap();
        let rec = Record::new(&pos, true, 0, 0);
        for enc in [Encoding::Bits772, Encoding::Bits773] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            enc.active(&pos, &mut a);
            enc.active_record(&rec, &mut b);
            assert_eq!(a, b);
            assert!(a.contains(&768) && a.contains(&771) && !a.contains(&769) && !a.contains(&770));
        }
    }
}
