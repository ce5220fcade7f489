//! Pieces en prise and the moves that save them: the rule behind seed 002's "escape"
//! milestone, measured on positions the same way for every player.
//!
//! A piece is *en prise* when the opponent attacks it with a cheaper piece, or attacks it and
//! nothing of its own side defends it (pawn 1, knight and bishop 3, rook 5, queen 9; the king
//! is never the cheaper attacker). Attacks are direct (no x-rays), as a static look at the
//! board sees them. An *escape case* is a position, not in check, where exactly one of the
//! mover's knights, bishops, rooks or queens is en prise, no legal capture takes as much as
//! that piece is worth (so trading is no answer), and at least one legal move leaves the piece
//! (on its new square if it moved) no longer en prise: a move that *saves* it.

use super::{Move, Position, Role, Square};

/// The static values the rule compares (the king: above every piece).
pub fn value(r: Role) -> u32 {
    [1, 3, 3, 5, 9, 1000][r.index()]
}

/// The one-ply greedy capturer's move: the legal capture of the most valuable piece (en
/// passant takes a pawn), the first in generation order on a tie; `None` without a capture.
pub fn greedy_capture(pos: &Position) -> Option<Move> {
    let mut best: Option<(u32, Move)> = None;
    for &m in pos.legal_moves().iter() {
        if pos.is_capture(m) {
            let v = pos.role_on(m.to).map_or(1, value);
            if best.map_or(true, |(b, _)| v > b) {
                best = Some((v, m));
            }
        }
    }
    best.map(|(_, m)| m)
}

/// Whether the piece on `sq` is en prise (attacked by its opponent with a cheaper piece, or
/// attacked and undefended). An empty square is not.
pub fn en_prise(pos: &Position, sq: Square) -> bool {
    let (Some(colour), Some(role)) = (pos.color_on(sq), pos.role_on(sq)) else { return false };
    let occ = pos.occupied();
    let attackers = pos.attackers(sq, colour.flip(), occ);
    if !attackers.any() {
        return false;
    }
    let cheapest = attackers.map(|a| pos.role_on(a).map_or(1000, value)).min().unwrap_or(1000);
    cheapest < value(role) || !pos.attackers(sq, colour, occ).any()
}

/// The mover's knights, bishops, rooks and queens that are en prise.
pub fn hanging(pos: &Position) -> Vec<Square> {
    let us = pos.turn();
    [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].iter().flat_map(|&r| pos.pieces(us, r)).filter(|&sq| en_prise(pos, sq)).collect()
}

/// Whether `mv` saves the piece on `sq` (see the module documentation): after it, the piece
/// (on `mv.to` when it is the piece that moved) is not en prise.
pub fn saves(pos: &Position, sq: Square, mv: Move) -> bool {
    let mut after = *pos;
    after.play(mv);
    let now = if mv.from == sq { mv.to } else { sq };
    after.color_on(now) == Some(pos.turn()) && !en_prise(&after, now)
}

/// An escape case: the hanging piece's square and the legal moves that save it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Escape {
    pub square: Square,
    pub saving: Vec<Move>,
    pub legal: usize,
}

/// The escape case `pos` is, if it is one (see the module documentation).
pub fn escape_case(pos: &Position) -> Option<Escape> {
    if pos.is_check() {
        return None;
    }
    let hang = hanging(pos);
    let [square] = hang[..] else { return None };
    let worth = value(pos.role_on(square)?);
    let moves = pos.legal_moves();
    // A capture worth as much (the opponent's king, left attacked where there is no check,
    // above all) is the answer, not an escape.
    if moves.iter().any(|&m| pos.is_capture(m) && pos.role_on(m.to).map_or(1, value) >= worth) {
        return None;
    }
    let saving: Vec<Move> = moves.iter().copied().filter(|&m| saves(pos, square, m)).collect();
    if saving.is_empty() {
        return None;
    }
    Some(Escape { square, saving, legal: moves.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(i: u8) -> Square {
        Square::from_coords(i % 8, i / 8)
    }

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap()
    }

    #[test]
    fn en_prise_means_a_cheaper_attacker_or_no_defender() {
        // A knight on d5 attacked by a pawn on e6 while a pawn on e4 defends it: en prise.
        let p = pos("4k3/8/4p3/3N4/4P3/8/8/4K3 w - - 0 1");
        assert!(en_prise(&p, sq(35)));
        // The same knight attacked by a rook only, and defended: not en prise.
        let p = pos("3rk3/8/8/3N4/4P3/8/8/4K3 w - - 0 1");
        assert!(!en_prise(&p, sq(35)));
        // Attacked by the rook and undefended: en prise.
        let p = pos("3rk3/8/8/3N4/8/8/8/4K3 w - - 0 1");
        assert!(en_prise(&p, sq(35)));
        assert!(!en_prise(&p, sq(20)), "an empty square");
    }

    #[test]
    fn an_escape_case_lists_the_moves_that_save_the_piece() {
        // White's knight on d5 is attacked by the e6 pawn; no white capture takes as much.
        let p = pos("4k3/8/4p3/3N4/8/8/8/4K3 w - - 0 1");
        let e = escape_case(&p).expect("an escape case");
        assert_eq!(e.square, sq(35));
        let names: Vec<String> = e.saving.iter().map(|m| m.to_string()).collect();
        // Every knight move but into the king's reach (e7) saves it; no king move does.
        assert!(names.iter().all(|n| n.starts_with("d5")), "{names:?}");
        for m in ["d5c7", "d5b4", "d5f4", "d5f6", "d5c3"] {
            assert!(names.contains(&m.to_string()), "{m} missing from {names:?}");
        }
        assert!(!names.contains(&"d5e7".to_string()), "{names:?}");
        assert_eq!(e.legal, 8 + 5);
        // Capturing the attacker saves it too.
        let p = pos("4k3/8/4p3/3N4/8/7B/8/4K3 w - - 0 1");
        let e = escape_case(&p).expect("an escape case");
        assert!(e.saving.iter().any(|m| m.to_string() == "h3e6"), "{:?}", e.saving);
    }

    #[test]
    fn not_a_case_in_check_with_two_hanging_pieces_or_an_equal_capture() {
        // In check.
        assert!(escape_case(&pos("4k3/8/4p3/3N4/8/8/8/4K2r w - - 0 1")).is_none());
        // Two pieces hanging (the knight on d5, the bishop on c4 attacked by the b5 pawn).
        assert!(escape_case(&pos("4k3/8/4p3/1p1N4/2B5/8/8/4K3 w - - 0 1")).is_none());
        // A capture worth as much as the knight (the bishop on a6 takes a knight on b7).
        assert!(escape_case(&pos("4k3/1n6/B3p3/3N4/8/8/8/4K3 w - - 0 1")).is_none());
        // Nothing hanging.
        assert!(escape_case(&Position::startpos()).is_none());
    }
}
