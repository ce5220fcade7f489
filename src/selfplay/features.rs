//! The state as the seed's agents see it (seed 002, "state representation"): an 8×8×6
//! volume, one plane per piece type (pawn, knight, bishop, rook, queen, king), +1 where the
//! *agent's* piece stands and −1 where the opponent's does. The seed writes +1 for White
//! whichever agent looks; ours is relative to the agent, which for Black's own seven nets is
//! the seed's input with every sign flipped (the same function class, the same initial
//! distribution), so one encoding serves both agents. The board is not turned round for
//! Black: squares keep their names, and the 64 outputs of every net are indexed by square
//! (a1 = 0, h8 = 63).
//!
//! Layout (the tensor engine's NHWC): value `(rank * 8 + file) * 6 + plane`, a1 = rank 0,
//! file 0. Castling rights, en passant and the side to move are not in it (the seed has
//! none; the agent to move is the net's owner).
//!
//! Also here: what a move captures (the seed's piece values) and the legal squares the
//! selectors are masked to.

use crate::chess::{Color, Move, Position, Role, Square};

/// Planes per square.
pub const PLANES: usize = 6;
/// Values per position: 8 × 8 × 6.
pub const INPUTS: usize = 64 * PLANES;

/// The seed's piece values: pawn 1, knight 3, bishop 3, rook 5, queen 9; the king 255 (its
/// environment lets a king be taken; ours is legal chess, so a mate earns it: see `train`).
pub const VALUES: [f32; 6] = [1.0, 3.0, 3.0, 5.0, 9.0, 255.0];
/// What a mate is worth: the king's value.
pub const MATE_VALUE: f32 = VALUES[5];

/// Writes `pos` as `agent` sees it into `out` (length [`INPUTS`]).
pub fn encode(pos: &Position, agent: Color, out: &mut [f32]) {
    debug_assert_eq!(out.len(), INPUTS);
    out.fill(0.0);
    for (c, sign) in [(agent, 1.0), (agent.flip(), -1.0)] {
        for role in Role::ALL {
            let mut bb = pos.pieces(c, role).0;
            while bb != 0 {
                let s = bb.trailing_zeros() as usize;
                bb &= bb - 1;
                out[s * PLANES + role.index()] = sign;
            }
        }
    }
}

/// The value of what `m` takes in `pos` (en passant takes a pawn; 0 for a quiet move).
pub fn capture_value(pos: &Position, m: Move) -> f32 {
    if !pos.is_capture(m) {
        return 0.0;
    }
    pos.role_on(m.to).map_or(VALUES[Role::Pawn.index()], |r| VALUES[r.index()])
}

/// The squares the piece selector may choose (own pieces with a legal move) and, per
/// from-square, the legal destinations (bit sets over squares, a1 = bit 0).
pub fn legal_squares(pos: &Position) -> (u64, [u64; 64]) {
    let mut to = [0u64; 64];
    let mut from = 0u64;
    for m in pos.legal_moves().iter() {
        from |= 1 << m.from.index();
        to[m.from.index()] |= 1 << m.to.index();
    }
    (from, to)
}

/// A square's index as the outputs use it.
#[inline]
pub fn out_index(s: Square) -> usize {
    s.index()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(v: &[f32], square: &str, role: Role) -> f32 {
        let b = square.as_bytes();
        let s = (b[1] - b'1') as usize * 8 + (b[0] - b'a') as usize;
        v[s * PLANES + role.index()]
    }

    #[test]
    fn the_agent_sees_its_pieces_as_plus_one() {
        let p = Position::startpos();
        let (mut w, mut b) = ([0.0; INPUTS], [0.0; INPUTS]);
        encode(&p, Color::White, &mut w);
        encode(&p, Color::Black, &mut b);
        assert_eq!(at(&w, "e1", Role::King), 1.0);
        assert_eq!(at(&w, "d8", Role::Queen), -1.0);
        assert_eq!(at(&b, "e1", Role::King), -1.0);
        assert_eq!(at(&b, "d8", Role::Queen), 1.0);
        assert_eq!(at(&w, "e4", Role::Pawn), 0.0);
        // Black's view is White's with every sign flipped, square for square.
        assert!(w.iter().zip(&b).all(|(x, y)| *x == -*y));
        assert_eq!(w.iter().filter(|v| **v != 0.0).count(), 32);
        // One value per occupied square, in its piece's plane only.
        assert_eq!(w.iter().sum::<f32>(), 0.0);
    }

    #[test]
    fn captures_are_worth_the_seed_values() {
        let p = Position::from_fen("4k3/8/8/3pP3/8/q7/1B6/4K3 w - d6 0 1").unwrap();
        let ep = p.parse_uci("e5d6").unwrap();
        assert_eq!(capture_value(&p, ep), 1.0, "en passant takes a pawn");
        assert_eq!(capture_value(&p, p.parse_uci("b2a3").unwrap()), 9.0);
        assert_eq!(capture_value(&p, p.parse_uci("e1f1").unwrap()), 0.0);
    }

    #[test]
    fn the_masks_are_the_legal_moves() {
        let p = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let (from, to) = legal_squares(&p);
        let n: u32 = to.iter().map(|b| b.count_ones()).sum();
        assert_eq!(n as usize, p.legal_moves().len());
        assert_eq!(from.count_ones(), 3, "two rooks and the king");
        let e1 = Square::parse("e1").unwrap().index();
        assert!(to[e1] & (1 << Square::parse("g1").unwrap().index()) != 0, "castling is the king's move to g1");
    }
}
