//! The seed's input ("Chess position representation"): an 8×8×7 volume, six piece-type
//! planes (pawn, knight, bishop, rook, queen, king) holding +1 for a White piece and −1 for a
//! Black one, and a seventh plane of +1 everywhere when White is to move, −1 otherwise.
//! Castling rights and en passant are not in it (the seed has neither).
//!
//! Layout (the tensor engine's NHWC): value `(rank * 8 + file) * 7 + plane`, a1 = rank 0,
//! file 0. Convolutions are translation-equivariant, so the orientation only has to be the
//! same in training and play.

use crate::chess::{Bitboard, Color, Position, Role};
use crate::data::dataset::Record;

/// Planes per square.
pub const PLANES: usize = 7;
/// Values per position: 8 × 8 × 7.
pub const INPUTS: usize = 64 * PLANES;
/// The side-to-move plane.
pub const SIDE_PLANE: usize = 6;

/// Writes the encoding of a position into `out` (length [`INPUTS`]).
pub fn encode(pos: &Position, out: &mut [f32]) {
    fill(|c, r| pos.pieces(c, r), pos.turn() == Color::White, out)
}

/// Writes the encoding of a dataset record into `out` (length [`INPUTS`]).
pub fn encode_record(r: &Record, out: &mut [f32]) {
    let planes = r.planes();
    fill(|c, role| Bitboard(planes[c.index() * 6 + role.index()]), r.white_to_move(), out)
}

#[inline(always)]
fn fill(pieces: impl Fn(Color, Role) -> Bitboard, white_to_move: bool, out: &mut [f32]) {
    debug_assert_eq!(out.len(), INPUTS);
    let side = if white_to_move { 1.0 } else { -1.0 };
    for sq in out.chunks_exact_mut(PLANES) {
        sq[..6].fill(0.0);
        sq[SIDE_PLANE] = side;
    }
    for (c, sign) in [(Color::White, 1.0), (Color::Black, -1.0)] {
        for role in Role::ALL {
            let mut bb = pieces(c, role).0;
            while bb != 0 {
                let s = bb.trailing_zeros() as usize;
                bb &= bb - 1;
                out[s * PLANES + role.index()] = sign;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(v: &[f32], square: &str, plane: usize) -> f32 {
        let b = square.as_bytes();
        let s = (b[1] - b'1') as usize * 8 + (b[0] - b'a') as usize;
        v[s * PLANES + plane]
    }

    #[test]
    fn start_position_by_hand() {
        let mut v = vec![9.0; INPUTS];
        encode(&Position::startpos(), &mut v);
        assert_eq!(at(&v, "e1", 5), 1.0, "White king");
        assert_eq!(at(&v, "e8", 5), -1.0, "Black king");
        assert_eq!(at(&v, "d1", 4), 1.0);
        assert_eq!(at(&v, "d8", 4), -1.0);
        assert_eq!(at(&v, "a1", 3), 1.0);
        assert_eq!(at(&v, "h8", 3), -1.0);
        assert_eq!(at(&v, "b1", 1), 1.0);
        assert_eq!(at(&v, "c8", 2), -1.0);
        for f in b'a'..=b'h' {
            let file = f as char;
            assert_eq!(at(&v, &format!("{file}2"), 0), 1.0);
            assert_eq!(at(&v, &format!("{file}7"), 0), -1.0);
            assert_eq!(at(&v, &format!("{file}4"), 0), 0.0);
        }
        // 32 pieces, each once; the side plane all +1.
        let pieces: f32 = v.chunks(PLANES).map(|s| s[..6].iter().map(|x| x.abs()).sum::<f32>()).sum();
        assert_eq!(pieces, 32.0);
        let piece_sum: f32 = v.chunks(PLANES).map(|s| s[..6].iter().sum::<f32>()).sum();
        assert_eq!(piece_sum, 0.0, "White and Black cancel");
        assert!(v.chunks(PLANES).all(|s| s[SIDE_PLANE] == 1.0));
    }

    #[test]
    fn black_to_move_and_a_hand_made_position() {
        // Black to move: K e1, R h1, P e4 (White); k g8, q d5, n c6 (Black).
        let pos = Position::from_fen("6k1/8/2n5/3q4/4P3/8/8/4K2R b K - 0 1").unwrap();
        let mut v = vec![0.0; INPUTS];
        encode(&pos, &mut v);
        assert!(v.chunks(PLANES).all(|s| s[SIDE_PLANE] == -1.0));
        let expect = [("e1", 5, 1.0), ("h1", 3, 1.0), ("e4", 0, 1.0), ("g8", 5, -1.0), ("d5", 4, -1.0), ("c6", 1, -1.0)];
        for (sq, plane, val) in expect {
            assert_eq!(at(&v, sq, plane), val, "{sq}");
        }
        let nonzero = v.chunks(PLANES).map(|s| s[..6].iter().filter(|x| **x != 0.0).count()).sum::<usize>();
        assert_eq!(nonzero, 6);
        // The record of the same position encodes identically.
        let mut w = vec![0.0; INPUTS];
        encode_record(&Record::new(&pos, true, 0, 0), &mut w);
        assert_eq!(v, w);
    }
}
