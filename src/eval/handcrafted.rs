//! The handcrafted evaluator: material + tapered piece-square tables, a scalar
//! [`Evaluator`] behind the same comparator trait as the nets (through
//! [`ScoreComparator`]), so "learned vs handcrafted, same search" is a fair match (the
//! paper's Falcon comparison, table 2).
//!
//! Tables are Michniewski's "simplified evaluation function" (middle game), a king table and
//! pawn-advance bonus for the end game, and PeSTO's material values; tapered by the usual
//! 24-point phase (N, B = 1, R = 2, Q = 4).

use super::scalar::{Evaluator, ScoreComparator};
use crate::chess::{Color, Position, Role};
use std::sync::OnceLock;

const MATERIAL_MG: [i32; 6] = [82, 337, 365, 477, 1025, 0];
const MATERIAL_EG: [i32; 6] = [94, 281, 297, 512, 936, 0];
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
const BISHOP_PAIR: i32 = 30;
const TEMPO: i32 = 10;

// Visual layout: first row is rank 8, from White's side. White looks up `sq ^ 56`.
#[rustfmt::skip]
const PST_MG: [[i8; 64]; 6] = [
    [ 0,  0,  0,  0,  0,  0,  0,  0,
     50, 50, 50, 50, 50, 50, 50, 50,
     10, 10, 20, 30, 30, 20, 10, 10,
      5,  5, 10, 25, 25, 10,  5,  5,
      0,  0,  0, 20, 20,  0,  0,  0,
      5, -5,-10,  0,  0,-10, -5,  5,
      5, 10, 10,-20,-20, 10, 10,  5,
      0,  0,  0,  0,  0,  0,  0,  0],
    [-50,-40,-30,-30,-30,-30,-40,-50,
     -40,-20,  0,  0,  0,  0,-20,-40,
     -30,  0, 10, 15, 15, 10,  0,-30,
     -30,  5, 15, 20, 20, 15,  5,-30,
     -30,  0, 15, 20, 20, 15,  0,-30,
     -30,  5, 10, 15, 15, 10,  5,-30,
     -40,-20,  0,  5,  5,  0,-20,-40,
     -50,-40,-30,-30,-30,-30,-40,-50],
    [-20,-10,-10,-10,-10,-10,-10,-20,
     -10,  0,  0,  0,  0,  0,  0,-10,
     -10,  0,  5, 10, 10,  5,  0,-10,
     -10,  5,  5, 10, 10,  5,  5,-10,
     -10,  0, 10, 10, 10, 10,  0,-10,
     -10, 10, 10, 10, 10, 10, 10,-10,
     -10,  5,  0,  0,  0,  0,  5,-10,
     -20,-10,-10,-10,-10,-10,-10,-20],
    [ 0,  0,  0,  0,  0,  0,  0,  0,
      5, 10, 10, 10, 10, 10, 10,  5,
     -5,  0,  0,  0,  0,  0,  0, -5,
     -5,  0,  0,  0,  0,  0,  0, -5,
     -5,  0,  0,  0,  0,  0,  0, -5,
     -5,  0,  0,  0,  0,  0,  0, -5,
     -5,  0,  0,  0,  0,  0,  0, -5,
      0,  0,  0,  5,  5,  0,  0,  0],
    [-20,-10,-10, -5, -5,-10,-10,-20,
     -10,  0,  0,  0,  0,  0,  0,-10,
     -10,  0,  5,  5,  5,  5,  0,-10,
      -5,  0,  5,  5,  5,  5,  0, -5,
       0,  0,  5,  5,  5,  5,  0, -5,
     -10,  5,  5,  5,  5,  5,  0,-10,
     -10,  0,  5,  0,  0,  0,  0,-10,
     -20,-10,-10, -5, -5,-10,-10,-20],
    [-30,-40,-40,-50,-50,-40,-40,-30,
     -30,-40,-40,-50,-50,-40,-40,-30,
     -30,-40,-40,-50,-50,-40,-40,-30,
     -30,-40,-40,-50,-50,-40,-40,-30,
     -20,-30,-30,-40,-40,-30,-30,-20,
     -10,-20,-20,-20,-20,-20,-20,-10,
      20, 20,  0,  0,  0,  0, 20, 20,
      20, 30, 10,  0,  0, 10, 30, 20],
];

#[rustfmt::skip]
const KING_EG: [i8; 64] = [
    -50,-40,-30,-20,-20,-30,-40,-50,
    -30,-20,-10,  0,  0,-10,-20,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-30,  0,  0,  0,  0,-30,-30,
    -50,-30,-30,-30,-30,-30,-30,-50];

/// End-game pawn bonus by relative rank: passed-ish pawns matter more as material goes.
const PAWN_EG_RANK: [i32; 8] = [0, 0, 5, 15, 30, 55, 90, 0];

/// (mg, eg) of a piece on a square, from White's side (Black's entries are negated).
struct Tables {
    mg: [[[i32; 64]; 6]; 2],
    eg: [[[i32; 64]; 6]; 2],
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = Tables { mg: [[[0; 64]; 6]; 2], eg: [[[0; 64]; 6]; 2] };
        for role in 0..6 {
            for sq in 0..64usize {
                // Table index as seen by White (rank flipped) and by Black (as written).
                for (c, vis, rel_rank) in [(0usize, sq ^ 56, sq / 8), (1, sq, 7 - sq / 8)] {
                    let sign = if c == 0 { 1 } else { -1 };
                    let mg = MATERIAL_MG[role] + PST_MG[role][vis] as i32;
                    let eg = MATERIAL_EG[role]
                        + match role {
                            0 => PAWN_EG_RANK[rel_rank],
                            5 => KING_EG[vis] as i32,
                            _ => PST_MG[role][vis] as i32 / 2,
                        };
                    t.mg[c][role][sq] = sign * mg;
                    t.eg[c][role][sq] = sign * eg;
                }
            }
        }
        t
    })
}

/// Static evaluation in centipawns from White's side.
pub fn evaluate(pos: &Position) -> i32 {
    let t = tables();
    let (mut mg, mut eg, mut phase) = (0, 0, 0);
    for c in Color::ALL {
        for r in Role::ALL {
            for sq in pos.pieces(c, r) {
                mg += t.mg[c.index()][r.index()][sq.index()];
                eg += t.eg[c.index()][r.index()][sq.index()];
                phase += PHASE[r.index()];
            }
        }
        if pos.pieces(c, Role::Bishop).more_than_one() {
            let s = if c == Color::White { BISHOP_PAIR } else { -BISHOP_PAIR };
            mg += s;
            eg += s;
        }
    }
    let phase = phase.min(24);
    let score = (mg * phase + eg * (24 - phase)) / 24;
    score + if pos.turn() == Color::White { TEMPO } else { -TEMPO }
}

/// The handcrafted evaluator: [`evaluate`] in centipawns.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handcrafted;

impl Evaluator for Handcrafted {
    fn name(&self) -> &'static str {
        "handcrafted"
    }

    #[inline]
    fn evaluate(&mut self, pos: &Position) -> f32 {
        evaluate(pos) as f32
    }

    fn cp_per_unit(&self) -> f32 {
        1.0
    }
    fn fork(&self) -> Option<Self> {
        Some(*self)
    }
}

/// The handcrafted evaluator as a comparator, the way the search takes it.
pub fn handcrafted() -> ScoreComparator<Handcrafted> {
    ScoreComparator::new(Handcrafted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_is_balanced_and_mirror_is_antisymmetric() {
        let p = Position::startpos();
        assert_eq!(evaluate(&p), TEMPO);
        for fen in [
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "8/5k2/8/3P4/8/8/5K2/8 b - - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ] {
            let p = Position::from_fen(fen).unwrap();
            assert_eq!(evaluate(&p), -evaluate(&p.mirror()), "{fen}");
        }
    }

    #[test]
    fn extra_queen_is_good() {
        let p = Position::from_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1").unwrap();
        assert!(evaluate(&p) > 800);
    }
}
