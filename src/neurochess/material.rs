//! V's material sense as figures (ours; the seed: NeuroChess "learned successfully to protect
//! its material"): V's static value, in centipawns of the search's scale, on the start and on
//! the start with one piece taken from either side (a queen, a rook, a knight, a pawn up and
//! down), and the share of a fixed set of material pairs V orders right: boards of held-out
//! expert games, each beside itself with one of a side's pieces (not the king) taken off,
//! where the side that keeps the piece should stand better. Beside them, V's view of having
//! the move: the same held-out boards with White to move minus Black to move (ours; a value
//! that counts the move against its owner makes every stand-pat pessimistic and the
//! quiescence tree explode, docs/results.md).

use super::data::Line;
use super::infer::{logit, VEval};
use super::model::Value;
use crate::chess::{Color, Game, Position, Role, Square};
use crate::eval::CP_PER_LOGIT;
use crate::tensor::Rng;

/// The pieces the up-and-down probes take off, and the square each is taken from (White's;
/// Black's is the same square mirrored).
pub const PROBES: [(Role, Square); 4] = [(Role::Queen, Square::D1), (Role::Rook, Square::A1), (Role::Knight, Square::B1), (Role::Pawn, Square::new(12))];

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
        if let Some(less) = full.without(sq) {
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
    /// The mean over the pairs' full boards of V with White to move minus V with Black to move
    /// (White's view, centipawns): what V thinks the move is worth; positive as in chess.
    pub tempo: f32,
}

/// `pos` with White to move and with Black to move (the other by a null move; `None` in
/// check, where the other side cannot be to move). The null move also adds a ply to the
/// fifty-move clock and clears an en-passant square, both of which V reads: a small
/// difference beside the side to move, of either sign as the original mover is White or Black.
fn both_to_move(pos: &Position) -> Option<(Position, Position)> {
    if pos.is_check() {
        return None;
    }
    let mut other = *pos;
    other.play_null();
    Some(if pos.turn() == Color::White { (*pos, other) } else { (other, *pos) })
}

/// [`Sense`] of `v` over `pairs`.
pub fn sense(v: &Value, pairs: &[Pair]) -> Sense {
    let mut e = VEval::new(v.clone());
    let start = Position::startpos();
    let mut up_down = [(0.0, 0.0); 4];
    for (k, &(_, sq)) in PROBES.iter().enumerate() {
        let black = Square::from_coords(sq.file(), 7 - sq.rank());
        let up = start.without(black).expect("a probe square holds a piece");
        let down = start.without(sq).expect("a probe square holds a piece");
        up_down[k] = (centipawns(&mut e, &up), centipawns(&mut e, &down));
    }
    let right = pairs
        .iter()
        .filter(|p| {
            let (a, b) = (e.value(&p.full), e.value(&p.less));
            if p.side == Color::White { a > b } else { a < b }
        })
        .count();
    let tempo = move_worth(&mut e, pairs.iter().map(|p| &p.full));
    Sense { start: centipawns(&mut e, &start), up_down, ordered: right as f64 / pairs.len().max(1) as f64, tempo }
}

/// The move's worth to V over `boards` (those not in check): the mean of V with White to move
/// minus V with Black to move, White's view, centipawns; 0 without a board.
pub fn move_worth<'a>(e: &mut VEval, boards: impl Iterator<Item = &'a Position>) -> f32 {
    let (mut sum, mut n) = (0.0f64, 0usize);
    for (w, b) in boards.filter_map(both_to_move) {
        sum += f64::from(centipawns(e, &w) - centipawns(e, &b));
        n += 1;
    }
    (sum / n.max(1) as f64) as f32
}
