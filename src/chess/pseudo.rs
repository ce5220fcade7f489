//! Pseudo-legal moves: what the pieces can do with no regard for their own king, as an
//! environment without check plays (seed 002's: a king may be left attacked, and the
//! opponent may take it, which ends the game). Castling stays as the rules have it (only the
//! legal castlings are offered). A position reached this way may have the side not to move
//! in check; [`Position::play`] handles it like any other, but a move that takes the king
//! must not be played: the environment ends the game there ([`Position::takes_king`]).

use super::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks};
use super::{Bitboard, Color, Move, Position, Role, Square};

impl Position {
    /// Every pseudo-legal move of the side to move: each piece's moves to squares not held by
    /// its own side (the opponent's king's square included), pawn pushes, captures, en passant
    /// and promotions (to each of the four pieces), and the legal castlings.
    pub fn pseudo_legal_moves(&self) -> Vec<Move> {
        let us = self.turn();
        let ours = self.by_color(us);
        let theirs = self.by_color(us.flip());
        let occ = ours | theirs;
        let mut out = Vec::with_capacity(64);
        let mut push = |from: Square, to: Square, promo: bool| {
            if promo {
                for r in Role::PROMOTIONS {
                    out.push(Move::new(from, to, Some(r)));
                }
            } else {
                out.push(Move::new(from, to, None));
            }
        };
        let last_rank = |sq: Square| sq.index() / 8 == if us == Color::White { 7 } else { 0 };
        for from in self.pieces(us, Role::Pawn) {
            let step: i32 = if us == Color::White { 8 } else { -8 };
            let one = from.index() as i32 + step;
            if (0..64).contains(&one) {
                let one = Square::new(one as u8);
                if !occ.has(one) {
                    push(from, one, last_rank(one));
                    if from.index() / 8 == if us == Color::White { 1 } else { 6 } {
                        let two = Square::new((one.index() as i32 + step) as u8);
                        if !occ.has(two) {
                            push(from, two, false);
                        }
                    }
                }
            }
            let ep = self.ep_square().map_or(Bitboard::EMPTY, Bitboard::from_square);
            for to in pawn_attacks(us, from) & (theirs | ep) {
                push(from, to, last_rank(to));
            }
        }
        for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King] {
            for from in self.pieces(us, role) {
                let attacks = match role {
                    Role::Knight => knight_attacks(from),
                    Role::Bishop => bishop_attacks(from, occ),
                    Role::Rook => rook_attacks(from, occ),
                    Role::Queen => queen_attacks(from, occ),
                    _ => king_attacks(from),
                };
                for to in attacks & !ours {
                    push(from, to, false);
                }
            }
        }
        for m in self.legal_moves().iter() {
            if self.is_castling(*m) {
                out.push(*m);
            }
        }
        out
    }

    /// Whether `m` takes the opponent's king (only a pseudo-legal environment lets that arise).
    pub fn takes_king(&self, m: Move) -> bool {
        self.role_on(m.to) == Some(Role::King) && self.color_on(m.to) == Some(self.turn().flip())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    /// Where no king is in check and nothing is pinned, the pseudo-legal moves are the legal
    /// ones (perft's kiwipete and the start included).
    #[test]
    fn without_check_or_pin_they_are_the_legal_moves() {
        for fen in ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", "4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 1"] {
            let p = Position::from_fen(fen).unwrap();
            let legal = sorted(p.legal_moves().iter().map(|m| m.to_string()).collect());
            let pseudo = sorted(p.pseudo_legal_moves().iter().map(|m| m.to_string()).collect());
            assert_eq!(legal, pseudo, "{fen}");
        }
    }

    /// A pinned piece may move, a king may step into an attack, and a king left attacked may be
    /// taken; the position after such a move is playable.
    #[test]
    fn the_king_may_be_left_attacked_and_taken() {
        // The knight on e2 is pinned by the rook on e8.
        let p = Position::from_fen("4r1k1/8/8/8/8/8/4N3/4K3 w - - 0 1").unwrap();
        let pseudo: Vec<String> = p.pseudo_legal_moves().iter().map(|m| m.to_string()).collect();
        assert!(pseudo.contains(&"e2c3".to_string()) && !p.legal_moves().iter().any(|m| m.to_string() == "e2c3"));
        let mut after = p;
        after.play(p.parse_uci("e2c3").unwrap_or(Move::new(Square::parse("e2").unwrap(), Square::parse("c3").unwrap(), None)));
        let take = after.pseudo_legal_moves().into_iter().find(|&m| after.takes_king(m)).expect("the rook takes the king");
        assert_eq!(take.to_string(), "e8e1");
        assert!(!p.pseudo_legal_moves().iter().any(|&m| p.takes_king(m)));
    }
}
