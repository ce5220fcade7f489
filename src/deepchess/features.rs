//! The paper's 773-bit position encoding (section 3, "Dataset"), from positions and from
//! dataset records.
//!
//! Bit order, documented here once and tested:
//! - bits `0..768`: piece bits, index = `colour * 384 + role * 64 + square`, with colour
//!   White = 0, Black = 1; role Pawn, Knight, Bishop, Rook, Queen, King = 0..5; square
//!   a1 = 0, b1 = 1, …, h8 = 63.
//! - bit `768`: side to move, 1 when White is to move.
//! - bits `769..773`: castling rights White king side, White queen side, Black king side,
//!   Black queen side.
//!
//! About 32 bits are set, so positions are handled as sorted lists of set indices.

use crate::chess::position::castle;
use crate::chess::{Bitboard, Color, Piece, Position, Role, Square};
use crate::data::dataset::Record;

/// Number of input bits.
pub const INPUTS: usize = 773;
/// Index of the side-to-move bit.
pub const SIDE_BIT: usize = 768;
/// Index of the first castling bit (WK, WQ, BK, BQ follow in that order).
pub const CASTLING_BITS: usize = 769;
/// The encoding as the shared incremental first layer reads it ([`crate::eval::line`]).
pub const BITS: crate::eval::line::BoardBits = crate::eval::line::BoardBits { castling: CASTLING_BITS, side: Some(SIDE_BIT) };
/// At most 32 pieces + side + 4 castling bits are set.
pub const MAX_ACTIVE: usize = 37;

/// Index of the bit for a piece on a square.
#[inline(always)]
pub const fn piece_bit(color: Color, role: Role, sq: Square) -> usize {
    color.index() * 384 + role.index() * 64 + sq.index()
}

/// The set bits of one encoded position, in increasing order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features {
    idx: [u16; MAX_ACTIVE],
    len: u8,
}

impl Default for Features {
    /// No bits set.
    fn default() -> Self {
        Features { idx: [0; MAX_ACTIVE], len: 0 }
    }
}

impl std::fmt::Debug for Features {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Features {
    /// Encodes a position.
    pub fn from_position(pos: &Position) -> Features {
        Self::from_parts(|c, r| pos.pieces(c, r), pos.turn(), pos.castling_rights())
    }

    /// Encodes a dataset record (loading rejects records of more than 32 pieces; one built
    /// in memory with more is cut to [`MAX_ACTIVE`] bits, not a panic).
    pub fn from_record(r: &Record) -> Features {
        let planes = r.planes();
        let turn = if r.white_to_move() { Color::White } else { Color::Black };
        Self::from_parts(|c, role| Bitboard(planes[c.index() * 6 + role.index()]), turn, r.castling())
    }

    /// Encodes a position given as its pieces by colour and role, side to move and castling
    /// rights (`castle::*` bits).
    #[inline(always)]
    pub fn from_parts(pieces: impl Fn(Color, Role) -> Bitboard, turn: Color, rights: u8) -> Features {
        let mut f = Features { idx: [0; MAX_ACTIVE], len: 0 };
        for c in Color::ALL {
            for r in Role::ALL {
                for sq in pieces(c, r) {
                    f.push(piece_bit(c, r, sq));
                }
            }
        }
        if turn == Color::White {
            f.push(SIDE_BIT);
        }
        for (i, bit) in [castle::WK, castle::WQ, castle::BK, castle::BQ].into_iter().enumerate() {
            if rights & bit != 0 {
                f.push(CASTLING_BITS + i);
            }
        }
        f
    }

    /// From indices already sorted and in range (at most [`MAX_ACTIVE`]).
    pub(crate) fn from_sorted(idx: &[u16]) -> Features {
        let mut f = Features { idx: [0; MAX_ACTIVE], len: 0 };
        for &i in idx.iter().take(MAX_ACTIVE) {
            f.push(i as usize);
        }
        f
    }

    /// Appends a bit; one beyond [`MAX_ACTIVE`] is dropped.
    #[inline(always)]
    fn push(&mut self, i: usize) {
        if let Some(slot) = self.idx.get_mut(self.len as usize) {
            *slot = i as u16;
            self.len += 1;
        }
    }

    /// The set bit indices, increasing.
    #[inline(always)]
    pub fn as_slice(&self) -> &[u16] {
        &self.idx[..self.len as usize]
    }

    /// The colour-mirrored position's features, computed on the indices: board flipped,
    /// colours swapped, side-to-move bit toggled, castling rights swapped.
    pub fn mirrored(&self) -> Features {
        let mut idx = [0u16; MAX_ACTIVE];
        let mut n = 0;
        let mut white_to_move = false;
        for &i in self.as_slice() {
            let i = i as usize;
            if i == SIDE_BIT {
                white_to_move = true;
                continue;
            }
            idx[n] = BITS.mirror_bit(i) as u16;
            n += 1;
        }
        if !white_to_move && n < MAX_ACTIVE {
            idx[n] = SIDE_BIT as u16;
            n += 1;
        }
        idx[..n].sort_unstable();
        Features::from_sorted(&idx[..n])
    }

    /// The dense 773-element 0/1 vector (for tests and dense reference paths).
    pub fn to_dense(&self) -> Vec<f32> {
        let mut v = vec![0.0; INPUTS];
        for &i in self.as_slice() {
            v[i as usize] = 1.0;
        }
        v
    }

    /// Decodes back to a position (for debugging): en-passant square and clocks are not
    /// part of the encoding and come back empty. Fails if the bits do not make a legal FEN.
    pub fn to_position(&self) -> Result<Position, String> {
        let mut board: [Option<Piece>; 64] = [None; 64];
        let mut white = false;
        let mut castling = String::new();
        for &i in self.as_slice() {
            let i = i as usize;
            if i < SIDE_BIT {
                let color = if i < 384 { Color::White } else { Color::Black };
                let role = Role::from_index(i % 384 / 64);
                board[i % 64] = Some(Piece::new(color, role));
            } else if i == SIDE_BIT {
                white = true;
            } else if i < INPUTS {
                castling.push(['K', 'Q', 'k', 'q'][i - CASTLING_BITS]);
            } else {
                return Err(format!("feature index {i} out of range"));
            }
        }
        let mut fen = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file] {
                    Some(p) => {
                        if empty > 0 {
                            fen.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        fen.push(p.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        if castling.is_empty() {
            castling.push('-');
        }
        let fen = format!("{fen} {} {castling} - 0 1", if white { 'w' } else { 'b' });
        Position::from_fen(&fen).map_err(|e| e.to_string())
    }
}

/// Input bits that differ between two positions: (added, removed), appended to the lists,
/// each in increasing order (the order the first layer's update sums rows in). Only the
/// squares whose occupant changed are looked at: two to four after a move.
pub fn feature_delta(from: &Position, to: &Position, added: &mut Vec<usize>, removed: &mut Vec<usize>) {
    BITS.delta(from, to, added, removed)
}

/// The colour-mirrored position's features: board flipped, colours, side to move and
/// castling rights swapped. A position from a game White won becomes one Black won.
pub fn mirror(pos: &Position) -> Features {
    Features::from_position(&pos.mirror())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_bits() {
        let f = Features::from_position(&Position::startpos());
        assert_eq!(f.as_slice().len(), 32 + 1 + 4);
        // White rook a1, white king e1, white pawn e2, black king e8, side, four castling rights.
        for bit in [3 * 64, 5 * 64 + 4, 12, 384 + 5 * 64 + 60, 768, 769, 770, 771, 772] {
            assert!(f.as_slice().contains(&(bit as u16)), "bit {bit}");
        }
        assert_eq!(f.to_position().unwrap(), Position::startpos());
    }

    /// A record built in memory with more pieces than a position holds (loading rejects
    /// it) is cut to the encoding's 37 bits, and mirroring the cut bits does not panic.
    #[test]
    fn an_overfull_record_is_cut_to_the_encodings_capacity() {
        let mut r = Record::new(&Position::startpos(), true, 10, 0);
        for b in &mut r.board[8..24] {
            *b = 0x11; // white pawns on ranks 3-6: 64 pieces in all
        }
        let f = Features::from_record(&r);
        assert_eq!(f.as_slice().len(), MAX_ACTIVE);
        assert!(f.as_slice().windows(2).all(|w| w[0] < w[1]));
        assert!(f.mirrored().as_slice().len() <= MAX_ACTIVE);
    }

    #[test]
    fn black_to_move_has_no_side_bit_and_mirror_swaps() {
        let p = Position::from_fen("4k2r/8/8/8/8/8/4P3/4K3 b k - 0 1").unwrap();
        let f = Features::from_position(&p);
        assert!(!f.as_slice().contains(&768));
        assert!(f.as_slice().contains(&(CASTLING_BITS as u16 + 2)));
        let m = mirror(&p);
        assert!(m.as_slice().contains(&768));
        assert!(m.as_slice().contains(&(CASTLING_BITS as u16)));
        // White pawn e2 becomes a black pawn on e7.
        assert!(m.as_slice().contains(&(piece_bit(Color::Black, Role::Pawn, Square::parse("e7").unwrap()) as u16)));
        assert_eq!(f.to_dense().iter().sum::<f32>() as usize, f.as_slice().len());
        assert_eq!(f.mirrored(), m);
        assert_eq!(m.mirrored(), f);
        let k = Position::from_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQk - 0 1").unwrap();
        assert_eq!(Features::from_position(&k).mirrored(), mirror(&k));
    }
}
