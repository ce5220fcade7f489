//! The expert games (seed §5: "a database of 120,000 expert games"; ours are the shipped
//! Stockfish 15.1 games, see `data/README.md`): read once, split by game into the games M
//! trains on and the games its error is measured on, and turned into M's pairs
//! (features of s_t, features of s_{t+2}). The same games give the expert prefixes of V's
//! sampling.

use super::feature_set::FeatureSet;
use crate::chess::pgn::{open_pgn, PgnReader};
use crate::chess::{Game, Move, Position};
use crate::tensor::Rng;
use std::path::Path;

/// One expert game: its start and moves (its result is not used: V learns from the results
/// of the games it completes itself).
pub type Line = (Position, Vec<Move>);

/// Games shorter than this many plies are left out (nothing for M to learn two plies on).
pub const MIN_PLIES: usize = 12;

/// Reads every game of `files` (PGN, `.xz` decompressed) of at least [`MIN_PLIES`] plies.
pub fn read_games(files: &[&Path]) -> Result<Vec<Line>, String> {
    let mut out = Vec::new();
    for f in files {
        let src = open_pgn(&f.display().to_string()).map_err(|e| format!("{}: {e}", f.display()))?;
        let mut reader = PgnReader::new(src);
        while let Some(g) = reader.next_game() {
            if let Ok(g) = g {
                if g.moves.len() >= MIN_PLIES {
                    out.push((g.start, g.moves));
                }
            }
        }
        if let Some(e) = &reader.summary().io_error {
            return Err(format!("{}: {e}", f.display()));
        }
    }
    if out.is_empty() {
        return Err(format!("no game of at least {MIN_PLIES} plies in {}", files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    Ok(out)
}

/// Game `i` is held out when its seeded hash falls in the first `per_mille` of a thousand.
pub fn held_out(i: usize, per_mille: u32, seed: u64) -> bool {
    let mut h = (i as u64 ^ seed.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 31;
    (h.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 40) % 1000 < per_mille as u64
}

/// M's examples: `x` the features of s_t, `y` those of s_{t+2}, one row of `width` each.
#[derive(Clone, Debug, Default)]
pub struct Pairs {
    pub width: usize,
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    /// Games they come from.
    pub games: usize,
}

impl Pairs {
    pub fn len(&self) -> usize {
        self.x.len() / self.width.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    pub fn row(&self, i: usize) -> (&[f32], &[f32]) {
        let w = self.width;
        (&self.x[i * w..(i + 1) * w], &self.y[i * w..(i + 1) * w])
    }
}

/// Up to `max` pairs (s_t, s_{t+2}) of `games` in the features `fs`, every board t with a
/// board two plies later equally likely to be taken (a seeded sample when there are more).
pub fn pairs(fs: FeatureSet, games: &[&Line], max: usize, seed: u64) -> Pairs {
    let total: usize = games.iter().map(|(_, m)| m.len().saturating_sub(1)).sum();
    let keep = if total == 0 { 0.0 } else { (max as f64 / total as f64).min(1.0) };
    let mut rng = Rng::new(seed ^ 0x4D0D_E1);
    let mut out = Pairs { width: fs.width(), ..Pairs::default() };
    let mut boards: Vec<Vec<f32>> = Vec::new();
    for (start, moves) in games {
        let chosen: Vec<usize> = (0..moves.len().saturating_sub(1)).filter(|_| rng.next_f64() < keep).collect();
        if chosen.is_empty() {
            continue;
        }
        // The boards of the game, s_0 … s_n, computed once.
        boards.clear();
        let mut g = Game::new(*start);
        let mut f = vec![0.0f32; fs.width()];
        fs.features_into(g.position(), &mut f);
        boards.push(f.clone());
        for &m in moves.iter() {
            if !g.position().is_legal(m) {
                break;
            }
            g.play_unchecked(m);
            fs.features_into(g.position(), &mut f);
            boards.push(f.clone());
        }
        for t in chosen.into_iter().filter(|t| t + 2 < boards.len()) {
            if out.len() >= max {
                break;
            }
            out.x.extend_from_slice(&boards[t]);
            out.y.extend_from_slice(&boards[t + 2]);
        }
        out.games += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_two_plies_apart() {
        let mut g = Game::new(Position::startpos());
        let mut moves = Vec::new();
        for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"] {
            let m = g.position().parse_uci(uci).unwrap();
            g.play_unchecked(m);
            moves.push(m);
        }
        let line: Line = (Position::startpos(), moves.clone());
        let p = pairs(FeatureSet::Ours, &[&line], 100, 1);
        assert_eq!(p.len(), 5, "boards s_0 … s_6: t = 0 … 4 have an s_(t+2)");
        let mut g = Game::new(Position::startpos());
        let mut f = [0.0; crate::neurochess::features::FEATURES];
        g.play_unchecked(moves[0]);
        g.play_unchecked(moves[1]);
        crate::neurochess::features::features_into(g.position(), &mut f);
        assert_eq!(p.row(0).1, &f[..], "s_2 after e4 e5");
        assert_eq!(pairs(FeatureSet::Ours, &[&line], 2, 1).len(), 2, "at most max");
        let gnu = pairs(FeatureSet::Gnu, &[&line], 100, 1);
        assert_eq!((gnu.len(), gnu.row(0).0.len()), (5, FeatureSet::Gnu.width()));
        assert!((0..1000).filter(|&i| held_out(i, 100, 5)).count().abs_diff(100) < 40);
    }
}
