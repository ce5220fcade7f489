//! Game generation through an external UCI engine (e.g. Stockfish) to grow the corpus:
//! openings drawn among near-best MultiPV moves, per-side node budgets drawn log-uniformly,
//! adjudication like rating lists, a `{score/depth}` comment on every engine move.

use crate::chess::pgn::EngineEval;
use crate::chess::{Color, Game, Move, Outcome, Position};
use crate::play::uci_client::{Engine, EngineError, Score};
use std::time::Duration;

/// How games are generated. `Default` matches the shipped corpus's settings.
#[derive(Clone, Debug)]
pub struct GenSettings {
    /// Per-side node budget range; each side's budget is drawn log-uniformly per game.
    pub nodes_min: u64,
    pub nodes_max: u64,
    /// Opening plies chosen at random among near-best moves: a count in this range.
    pub opening_plies: (usize, usize),
    pub opening_multipv: u32,
    pub opening_depth: u32,
    /// Moves within this many centipawns of the best may be chosen in the opening.
    pub opening_margin_cp: i32,
    /// Win adjudication: the mover's score ≥ this for the same side …
    pub win_cp: i32,
    /// … over this many consecutive plies (so both sides agree).
    pub win_plies: usize,
    /// Draw adjudication: |score| ≤ draw_cp for draw_plies consecutive plies after draw_after_ply.
    pub draw_cp: i32,
    pub draw_plies: usize,
    pub draw_after_ply: usize,
    /// A game still running at this ply is a draw.
    pub max_plies: usize,
    /// Longest wait for one engine answer.
    pub move_timeout: Duration,
}

impl Default for GenSettings {
    fn default() -> Self {
        GenSettings {
            nodes_min: 300,
            nodes_max: 6000,
            opening_plies: (4, 10),
            opening_multipv: 6,
            opening_depth: 8,
            opening_margin_cp: 40,
            win_cp: 900,
            win_plies: 6,
            draw_cp: 8,
            draw_plies: 10,
            draw_after_ply: 80,
            max_plies: 400,
            move_timeout: Duration::from_secs(30),
        }
    }
}

/// A generated game, ready to be written as PGN.
#[derive(Clone, Debug)]
pub struct GeneratedGame {
    pub start: Position,
    pub moves: Vec<Move>,
    /// `{+0.39/8}`-style comment text per move (`None` for opening plies).
    pub comments: Vec<Option<String>>,
    pub outcome: Outcome,
    /// `rules` or `adjudicated`.
    pub termination: &'static str,
    pub nodes: [u64; 2],
}

/// Draws a node budget log-uniformly in [lo, hi] from a uniform u64.
pub fn log_uniform(lo: u64, hi: u64, r: u64) -> u64 {
    let (lo, hi) = (lo.max(1) as f64, hi.max(lo.max(1)) as f64);
    let u = (r >> 11) as f64 / (1u64 << 53) as f64;
    (lo * (hi / lo).powf(u)).round() as u64
}

fn position_cmd(start: &Position, moves: &[Move]) -> String {
    let mut s = format!("position fen {}", start.fen());
    if !moves.is_empty() {
        s.push_str(" moves");
        for m in moves {
            s.push(' ');
            s.push_str(&m.to_string());
        }
    }
    s
}

/// Plays one game with `engine` from `start`. `rand` supplies uniform u64s.
pub fn play_game(
    engine: &mut Engine,
    start: Position,
    s: &GenSettings,
    rand: &mut impl FnMut() -> u64,
) -> Result<GeneratedGame, EngineError> {
    let nodes = [log_uniform(s.nodes_min, s.nodes_max, rand()), log_uniform(s.nodes_min, s.nodes_max, rand())];
    engine.new_game(s.move_timeout)?;
    let mut game = Game::new(start);
    let mut comments = Vec::new();
    let (lo, hi) = s.opening_plies;
    let opening = lo + (rand() % (hi.saturating_sub(lo) as u64 + 1)) as usize;

    // Opening: a random move among those within the margin of the best MultiPV line.
    if opening > 0 {
        engine.send(&format!("setoption name MultiPV value {}", s.opening_multipv))?;
    }
    for _ in 0..opening {
        if game.outcome().is_some() {
            break;
        }
        let r = engine.go(
            &position_cmd(&start, game.moves()),
            &format!("depth {}", s.opening_depth),
            s.move_timeout,
        )?;
        let best = r.lines.iter().map(|l| l.score.to_cp()).max();
        let near: Vec<&str> = r
            .lines
            .iter()
            .filter(|l| best.is_some_and(|b| l.score.to_cp() >= b - s.opening_margin_cp) && !l.first_move.is_empty())
            .map(|l| l.first_move.as_str())
            .collect();
        let pick = if near.is_empty() { r.bestmove.as_str() } else { near[(rand() % near.len() as u64) as usize] };
        let m = game
            .position()
            .parse_uci(pick)
            .map_err(|e| EngineError::Protocol(format!("opening move: {e}")))?;
        game.play_unchecked(m);
        comments.push(None);
    }
    if opening > 0 {
        engine.send("setoption name MultiPV value 1")?;
    }

    // Main game with adjudication on White-relative scores.
    let mut white_scores: Vec<i32> = Vec::new();
    let (outcome, termination) = loop {
        if let Some((o, _)) = game.outcome() {
            break (o, "rules");
        }
        if game.moves().len() >= s.max_plies {
            break (Outcome::Draw, "adjudicated");
        }
        let side = game.position().turn();
        let r = engine.go(
            &position_cmd(&start, game.moves()),
            &format!("nodes {}", nodes[side.index()]),
            s.move_timeout,
        )?;
        let m = game
            .position()
            .parse_uci(&r.bestmove)
            .map_err(|e| EngineError::Protocol(format!("bestmove: {e}")))?;
        let score = r.score.unwrap_or(Score::Cp(0));
        comments.push(Some(EngineEval { score, depth: r.depth }.to_string()));
        game.play_unchecked(m);
        let w = if side == Color::White { score.to_cp() } else { -score.to_cp() };
        white_scores.push(w);
        let n = white_scores.len();
        if n >= s.win_plies {
            let tail = &white_scores[n - s.win_plies..];
            if tail.iter().all(|&x| x >= s.win_cp) {
                break (Outcome::Win(Color::White), "adjudicated");
            }
            if tail.iter().all(|&x| x <= -s.win_cp) {
                break (Outcome::Win(Color::Black), "adjudicated");
            }
        }
        if game.moves().len() > s.draw_after_ply
            && n >= s.draw_plies
            && white_scores[n - s.draw_plies..].iter().all(|x| x.abs() <= s.draw_cp)
        {
            break (Outcome::Draw, "adjudicated");
        }
    };
    Ok(GeneratedGame { start, moves: game.moves().to_vec(), comments, outcome, termination, nodes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_uniform_stays_in_range_and_spreads() {
        let vals: Vec<u64> = (0..1000u64).map(|i| log_uniform(300, 6000, i.wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect();
        assert!(vals.iter().all(|&v| (300..=6000).contains(&v)));
        let below_geo_mean = vals.iter().filter(|&&v| v < 1342).count();
        assert!((350..650).contains(&below_geo_mean), "{below_geo_mean}");
    }
}
