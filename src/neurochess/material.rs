//! V's material sense as figures (ours; the seed: NeuroChess "learned successfully to protect
//! its material"): V's static value, in centipawns of the search's scale, on the start and on
//! the start with one piece taken from either side (a queen, a rook, a knight, a pawn up and
//! down), and the share of a fixed set of material pairs V orders right: boards of held-out
//! expert games, each beside itself with one of a side's pieces (not the king) taken off,
//! where the side that keeps the piece should stand better.

use super::data::Line;
use super::infer::{logit, VEval};
use super::model::Value;
use crate::chess::{Color, Game, Position, Role, Square};
use crate::eval::CP_PER_LOGIT;
use crate::tensor::Rng;

/// The pieces the up-and-down probes take off, and the square each is taken from (White's;
/// Black's is the same square mirrored).
pub const PROBES: [(Role, Square); 4] = [(Role::Queen, Square::D1), (Role::Rook, Square::A1), (Role::Knight, Square::B1), (Role::Pawn, Square::new(12))];

/// `pos` with the piece on `sq` taken off, if the board stays legal (the side not to move may
/// not be left in check).
pub fn without(pos: &Position, sq: Square) -> Option<Position> {
    let fen = pos.fen();
    let (board, rest) = fen.split_once(' ')?;
    let mut cells: Vec<char> = Vec::with_capacity(64);
    for rank in board.split('/') {
        for ch in rank.chars() {
            match ch.to_digit(10) {
                Some(n) => cells.extend(std::iter::repeat('.').take(n as usize)),
                None => cells.push(ch),
            }
        }
    }
    // FEN lists rank 8 first.
    let at = (7 - sq.rank() as usize) * 8 + sq.file() as usize;
    if cells.len() != 64 || cells[at] == '.' || cells[at].eq_ignore_ascii_case(&'k') {
        return None;
    }
    cells[at] = '.';
    let mut out = String::new();
    for (r, row) in cells.chunks(8).enumerate() {
        if r > 0 {
            out.push('/');
        }
        let mut empty = 0;
        for &c in row {
            if c == '.' {
                empty += 1;
            } else {
                if empty > 0 {
                    out.push_str(&empty.to_string());
                    empty = 0;
                }
                out.push(c);
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
    }
    // A castling right that named the piece (a rook on its corner) goes with it.
    let mut parts: Vec<String> = rest.split(' ').map(str::to_string).collect();
    let gone = match sq.index() {
        0 => 'Q',
        7 => 'K',
        56 => 'q',
        63 => 'k',
        _ => ' ',
    };
    if parts.len() > 1 {
        let left: String = parts[1].chars().filter(|&c| c != gone).collect();
        parts[1] = if left.is_empty() { "-".to_string() } else { left };
    }
    Position::from_fen(&format!("{out} {}", parts.join(" "))).ok()
}

/// V's value of `pos` in centipawns (the search's scale: the logit of White's expected result).
pub fn centipawns(v: &mut VEval, pos: &Position) -> f32 {
    logit(v.value(pos)) * CP_PER_LOGIT
}

/// A board and the same board with one piece of `side` taken off: `side` stands better in the
/// first.
pub struct Pair {
    pub full: Position,
    pub less: Position,
    pub side: Color,
}

/// `n` pairs from the boards of `games` (a seeded ply of a seeded game, a seeded piece of a
/// seeded side), none in check.
pub fn pairs(games: &[Line], n: usize, seed: u64) -> Vec<Pair> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < n && tries < 50 * n && !games.is_empty() {
        tries += 1;
        let (start, moves) = &games[rng.below(games.len() as u64) as usize];
        let mut g = Game::new(*start);
        let plies = rng.below(moves.len() as u64 + 1) as usize;
        for &m in &moves[..plies] {
            g.play_unchecked(m);
        }
        let full = *g.position();
        let side = if rng.below(2) == 0 { Color::White } else { Color::Black };
        let pieces: Vec<Square> = (full.by_color(side) & !full.pieces(side, Role::King)).collect();
        if pieces.is_empty() || full.is_check() {
            continue;
        }
        let sq = pieces[rng.below(pieces.len() as u64) as usize];
        if let Some(less) = without(&full, sq) {
            out.push(Pair { full, less, side });
        }
    }
    out
}

/// V's material figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Sense {
    /// V on the start, centipawns.
    pub start: f32,
    /// Per probe ([`PROBES`]): White that piece up, and down.
    pub up_down: [(f32, f32); 4],
    /// The share of `pairs` where the side keeping the piece stands better by V.
    pub ordered: f64,
}

/// [`Sense`] of `v` over `pairs`.
pub fn sense(v: &Value, pairs: &[Pair]) -> Sense {
    let mut e = VEval::new(v.clone());
    let start = Position::startpos();
    let mut up_down = [(0.0, 0.0); 4];
    for (k, &(_, sq)) in PROBES.iter().enumerate() {
        let black = Square::from_coords(sq.file(), 7 - sq.rank());
        let up = without(&start, black).expect("a probe square holds a piece");
        let down = without(&start, sq).expect("a probe square holds a piece");
        up_down[k] = (centipawns(&mut e, &up), centipawns(&mut e, &down));
    }
    let right = pairs
        .iter()
        .filter(|p| {
            let (a, b) = (e.value(&p.full), e.value(&p.less));
            if p.side == Color::White { a > b } else { a < b }
        })
        .count();
    Sense { start: centipawns(&mut e, &start), up_down, ordered: right as f64 / pairs.len().max(1) as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taking_a_piece_off_keeps_the_rest_of_the_board() {
        let start = Position::startpos();
        let q = without(&start, Square::D1).unwrap();
        assert_eq!(q.fen(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1");
        let r = without(&start, Square::H8).unwrap();
        assert_eq!(r.fen(), "rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQq - 0 1");
        assert!(without(&start, Square::E1).is_none(), "a king stays");
        assert!(without(&start, Square::new(27)).is_none(), "an empty square");
        // Taking off the piece that shields the side not to move from check: not a board.
        let p = Position::from_fen("4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1").unwrap();
        assert!(without(&p, Square::new(52)).is_none());
    }
}
