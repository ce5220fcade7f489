//! The expert games (seed §5: "a database of 120,000 expert games"; ours are the shipped
//! Stockfish 15.1 games, see `data/README.md`): read once, split by game into the games M
//! trains on and the games its error is measured on, and turned into M's pairs
//! (features of s_t, features of s_{t+2}). The same games give the expert prefixes of V's
//! sampling.

use super::feature_set::FeatureSet;
use crate::chess::pgn::{open_pgn, PgnReader};
use crate::chess::{Game, Move, Position, Role, Square};
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

/// Per mille of the expert games held out for M's error (a run's split and `neurochess-slopes`').
pub const HELD_OUT_PER_MILLE: u32 = 50;

/// The expert games as the run uses them.
pub struct Expert {
    pub train: Vec<Line>,
    pub valid: Vec<Line>,
}

/// Splits `games` by game: `per_mille` of them held out (M's error is measured on them; V's
/// prefixes are drawn from the others).
pub fn split(games: Vec<Line>, per_mille: u32, seed: u64) -> Expert {
    let (mut train, mut valid) = (Vec::new(), Vec::new());
    for (i, g) in games.into_iter().enumerate() {
        if held_out(i, per_mille, seed) {
            valid.push(g);
        } else {
            train.push(g);
        }
    }
    Expert { train, valid }
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
    pairs_with(fs, games, max, seed, 0.0)
}

/// [`pairs`], and beside a `counterfactual` share of them (beyond the seed, issue 82) the same
/// pair with one piece taken off both boards: a piece, not a king, that neither of the two
/// moves between them moves or takes, chosen at random, kept only when both moves are still
/// legal on the lighter boards. Trained by mean squared error on the games alone, M is right
/// along the data, where material moves with everything else, and its Jacobian carries a
/// feature's own change two plies on at less than the games do (material 0.87 against 0.986);
/// such pairs show it material that changes while the rest of the board stays. The sample of
/// plain pairs is [`pairs`]'s whatever the share (the counterfactuals draw on their own stream).
pub fn pairs_with(fs: FeatureSet, games: &[&Line], max: usize, seed: u64, counterfactual: f64) -> Pairs {
    let total: usize = games.iter().map(|(_, m)| m.len().saturating_sub(1)).sum();
    let keep = if total == 0 { 0.0 } else { (max as f64 / total as f64).min(1.0) };
    let mut rng = Rng::new(seed ^ 0x4D0D_E1);
    let mut cf_rng = Rng::new(seed ^ 0xCF0F_F1);
    let mut out = Pairs { width: fs.width(), ..Pairs::default() };
    let mut plain = 0usize;
    let mut boards: Vec<Vec<f32>> = Vec::new();
    let mut positions: Vec<Position> = Vec::new();
    let (mut a, mut b) = (vec![0.0f32; fs.width()], vec![0.0f32; fs.width()]);
    for (start, moves) in games {
        let chosen: Vec<usize> = (0..moves.len().saturating_sub(1)).filter(|_| rng.next_f64() < keep).collect();
        if chosen.is_empty() {
            continue;
        }
        // The boards of the game, s_0 … s_n, computed once.
        boards.clear();
        positions.clear();
        let mut g = Game::new(*start);
        let mut f = vec![0.0f32; fs.width()];
        fs.features_into(g.position(), &mut f);
        boards.push(f.clone());
        // The positions themselves only where counterfactual pairs are drawn from them.
        let keep_positions = counterfactual > 0.0;
        if keep_positions {
            positions.push(*g.position());
        }
        for &m in moves.iter() {
            if !g.position().is_legal(m) {
                break;
            }
            g.play_unchecked(m);
            fs.features_into(g.position(), &mut f);
            boards.push(f.clone());
            if keep_positions {
                positions.push(*g.position());
            }
        }
        for t in chosen.into_iter().filter(|t| t + 2 < boards.len()) {
            if plain >= max {
                break;
            }
            out.x.extend_from_slice(&boards[t]);
            out.y.extend_from_slice(&boards[t + 2]);
            plain += 1;
            if counterfactual > 0.0 && cf_rng.next_f64() < counterfactual {
                if let Some((s0, s2)) = piece_off(&positions[t], &positions[t + 2], moves[t], moves[t + 1], &mut cf_rng) {
                    fs.features_into(&s0, &mut a);
                    fs.features_into(&s2, &mut b);
                    out.x.extend_from_slice(&a);
                    out.y.extend_from_slice(&b);
                }
            }
        }
        out.games += 1;
    }
    out
}

/// `s0` and `s2` (two plies apart, by `m1` then `m2`) with one piece taken off both: a random
/// piece of `s0`, not a king, that `m1` and `m2` neither move nor take (it stands on its square
/// in `s2`). `None` when there is none, or when the moves are not legal without it.
fn piece_off(s0: &Position, s2: &Position, m1: Move, m2: Move, rng: &mut Rng) -> Option<(Position, Position)> {
    let still: Vec<Square> = s0
        .occupied()
        .into_iter()
        .filter(|&sq| sq != m1.from && sq != m2.from)
        .filter(|&sq| s0.piece_on(sq).is_some_and(|p| p.role != Role::King) && s2.piece_on(sq) == s0.piece_on(sq))
        .collect();
    if still.is_empty() {
        return None;
    }
    let sq = still[rng.below(still.len() as u64) as usize];
    let mut p = s0.without(sq)?;
    let first = p;
    for m in [m1, m2] {
        if !p.is_legal(m) {
            return None;
        }
        p.play(m);
    }
    Some((first, p))
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

    #[test]
    fn counterfactual_pairs_take_one_untouched_piece_off_both_boards() {
        let mut g = Game::new(Position::startpos());
        let mut moves = Vec::new();
        for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6", "d7c6", "e1g1", "f7f6"] {
            let m = g.position().parse_uci(uci).unwrap();
            g.play_unchecked(m);
            moves.push(m);
        }
        let line: Line = (Position::startpos(), moves.clone());
        let plain = pairs(FeatureSet::Ours, &[&line], 100, 3);
        assert_eq!(pairs_with(FeatureSet::Ours, &[&line], 100, 3, 0.0).x, plain.x, "share 0 is the plain sample");
        let cf = pairs_with(FeatureSet::Ours, &[&line], 100, 3, 1.0);
        assert!(cf.len() > plain.len() && cf.len() <= 2 * plain.len(), "{} against {}", cf.len(), plain.len());
        // The boards of the game, to name every extra pair as (s_t − piece, s_t+2 − piece).
        let mut boards = vec![Position::startpos()];
        let mut g = Game::new(Position::startpos());
        for &m in &moves {
            g.play_unchecked(m);
            boards.push(*g.position());
        }
        let feats = |p: &Position| {
            let mut f = vec![0.0f32; FeatureSet::Ours.width()];
            FeatureSet::Ours.features_into(p, &mut f);
            f
        };
        let (mut i, mut extra) = (0, 0);
        for t in 0..boards.len() - 2 {
            assert_eq!(cf.row(i), (&feats(&boards[t])[..], &feats(&boards[t + 2])[..]), "plain pair {t} in its place");
            i += 1;
            if i < cf.len() && cf.row(i).0 != &feats(&boards[t + 1])[..] {
                let found = Iterator::any(&mut boards[t].occupied(), |sq| {
                    let (Some(a), Some(b)) = (boards[t].without(sq), boards[t + 2].without(sq)) else { return false };
                    sq != moves[t].from && sq != moves[t + 1].from && cf.row(i) == (&feats(&a)[..], &feats(&b)[..])
                });
                assert!(found, "pair {i} after t = {t} is s_t and s_t+2 with one untouched piece off");
                i += 1;
                extra += 1;
            }
        }
        assert_eq!((i, extra), (cf.len(), cf.len() - plain.len()));
        assert!(extra >= 4, "most of the 9 plain pairs have a counterfactual ({extra})");
    }
}
