//! Sampling positions from games, as the paper's "Dataset" paragraph: decisive games only,
//! up to ten random positions per game, none from the first five moves, none whose played
//! move is a capture. Every rule is a setting, defaults = paper. Validation holds out whole
//! games, chosen by a hash of the game's moves so the split is deterministic and identical
//! games (same start, same moves) always land in the same set.

use super::dataset::Record;
use crate::io::fnv1a64 as fnv1a;
use crate::chess::pgn::PgnGame;
use crate::chess::{Move, Position};

/// Which decisive games a dataset keeps beyond the rules of [`Sampling`]. Seed 003 kept games
/// that ended in checkmate between players rated above 2000; `Default` keeps every game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GameFilter {
    /// Only games whose last move mates (adjudicated and resigned games are dropped).
    pub mate_only: bool,
    /// Only games whose `WhiteElo` and `BlackElo` tags are both at least this (a game
    /// without both tags is dropped).
    pub min_elo: Option<u32>,
}

impl GameFilter {
    pub fn keeps(&self, g: &PgnGame) -> bool {
        if let Some(min) = self.min_elo {
            let rated = |tag| g.tag(tag).and_then(|v| v.trim().parse::<u32>().ok()).is_some_and(|e| e >= min);
            if !(rated("WhiteElo") && rated("BlackElo")) {
                return false;
            }
        }
        !self.mate_only || ends_in_mate(&g.start, &g.moves)
    }

    pub fn is_none(&self) -> bool {
        *self == GameFilter::default()
    }

    /// One line for dataset headers.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.mate_only {
            parts.push("ended by checkmate".to_string());
        }
        if let Some(e) = self.min_elo {
            parts.push(format!("WhiteElo and BlackElo >= {e}"));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Whether the position after the last move is checkmate.
pub fn ends_in_mate(start: &Position, moves: &[Move]) -> bool {
    let mut pos = *start;
    for &m in moves {
        pos.play(m);
    }
    pos.is_checkmate()
}

/// Sampling rules. `Default` is the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Positions drawn per game; 0 = every eligible position.
    pub per_game: usize,
    /// Plies skipped at the start of each game (paper: first five moves = 10 plies).
    pub skip_plies: usize,
    /// Drop positions whose played move is a capture (paper: yes).
    pub exclude_captures: bool,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { per_game: 10, skip_plies: 10, exclude_captures: true }
    }
}

impl Sampling {
    /// One line for dataset headers and logs.
    pub fn describe(&self) -> String {
        format!(
            "per_game={} skip_plies={} exclude_captures={} draws=excluded",
            if self.per_game == 0 { "all".to_string() } else { self.per_game.to_string() },
            self.skip_plies,
            self.exclude_captures
        )
    }
}

/// Positions (before the move at each ply) that the rules allow, with their ply index.
pub fn eligible(start: &Position, moves: &[Move], s: &Sampling) -> Vec<(u16, Position)> {
    let mut out = Vec::new();
    let mut pos = *start;
    for (ply, &m) in moves.iter().enumerate() {
        if ply >= s.skip_plies && !(s.exclude_captures && pos.is_capture(m)) {
            out.push((ply.min(u16::MAX as usize) as u16, pos));
        }
        pos.play(m);
    }
    out
}

/// Draws up to `s.per_game` distinct eligible positions uniformly (partial Fisher–Yates
/// driven by `rand`), returned in ply order.
pub fn sample_game(
    start: &Position,
    moves: &[Move],
    white_won: bool,
    game: u32,
    s: &Sampling,
    rand: &mut impl FnMut() -> u64,
) -> Vec<Record> {
    let mut cands = eligible(start, moves, s);
    let k = if s.per_game == 0 { cands.len() } else { s.per_game.min(cands.len()) };
    for i in 0..k {
        let j = i + (rand() % (cands.len() - i) as u64) as usize;
        cands.swap(i, j);
    }
    cands.truncate(k);
    cands.sort_by_key(|c| c.0);
    cands.iter().map(|(ply, pos)| Record::new(pos, white_won, *ply, game)).collect()
}

/// Positions a game offers for engine labelling (seed 001): every position from ply
/// `skip_plies` on, the one after the last move included, that has a legal move (checkmate
/// and stalemate are never labelled); a position met again later in the game (same board,
/// side to move, castling and en passant) is listed once, at its first ply.
pub fn label_candidates(start: &Position, moves: &[Move], skip_plies: usize) -> Vec<(u16, Position)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut pos = *start;
    for ply in 0..=moves.len() {
        if ply >= skip_plies && ply <= u16::MAX as usize && seen.insert(pos.hash()) && pos.has_legal_move() {
            out.push((ply as u16, pos));
        }
        if let Some(&m) = moves.get(ply) {
            pos.play(m);
        }
    }
    out
}

/// Draws up to `per_game` of a game's [`label_candidates`] uniformly (a Fisher–Yates
/// shuffle driven by `rand`), passing over positions in `taken` (chosen from earlier games)
/// and adding the chosen ones to it, so that no position is labelled twice in a set.
/// Returned in ply order.
pub fn sample_for_labels(
    start: &Position,
    moves: &[Move],
    skip_plies: usize,
    per_game: usize,
    taken: &mut std::collections::HashSet<u64>,
    rand: &mut impl FnMut() -> u64,
) -> Vec<(u16, Position)> {
    let mut cands = label_candidates(start, moves, skip_plies);
    let mut chosen = Vec::new();
    for i in 0..cands.len() {
        if chosen.len() == per_game {
            break;
        }
        let j = i + (rand() % (cands.len() - i) as u64) as usize;
        cands.swap(i, j);
        if taken.insert(cands[i].1.hash()) {
            chosen.push(cands[i]);
        }
    }
    chosen.sort_by_key(|c| c.0);
    chosen
}

/// Stable identity of a game: hash of its start position and moves.
pub fn game_key(start: &Position, moves: &[Move]) -> u64 {
    let mut bytes = start.fen().into_bytes();
    for m in moves {
        bytes.extend_from_slice(&m.to_u16().to_le_bytes());
    }
    fnv1a(&bytes)
}

/// Whether a game belongs to the validation set: `per_mille` games in 1000, by game key.
pub fn is_validation(key: u64, per_mille: u32, salt: u64) -> bool {
    // Mix so that nearby keys spread; salt lets a user draw a different split.
    let mut z = key ^ salt;
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^= z >> 33;
    (z % 1000) < per_mille as u64
}

/// Whether one position of a game belongs to the validation set under the position split
/// (seed 003's probable protocol, and the DeepChess paper's): `per_mille` positions in 1000,
/// by game key and ply, so the other positions of its game may be trained on.
pub fn is_validation_position(key: u64, ply: u16, per_mille: u32, salt: u64) -> bool {
    is_validation(key ^ (ply as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15), per_mille, salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(sans: &[&str]) -> (Position, Vec<Move>) {
        let start = Position::startpos();
        let mut p = start;
        let mut moves = Vec::new();
        for s in sans {
            let m = p.parse_san(s).unwrap();
            moves.push(m);
            p.play(m);
        }
        (start, moves)
    }

    #[test]
    fn first_moves_and_captures_are_excluded() {
        // 12 plies; ply 10 (6.d4?) is exd4? Build so that ply 10 and 11 are captures.
        let (start, moves) = game(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d3", "d6", "b4", "Bxb4", "cxb4", "Nxb4", "O-O"]);
        let s = Sampling::default();
        let plies: Vec<u16> = eligible(&start, &moves, &s).iter().map(|c| c.0).collect();
        // Plies 0..9 skipped; 11 (Bxb4), 12 (cxb4), 13 (Nxb4) are captures.
        assert_eq!(plies, vec![10, 14]);
        let all = Sampling { skip_plies: 0, exclude_captures: false, ..s };
        assert_eq!(eligible(&start, &moves, &all).len(), moves.len());
    }

    #[test]
    fn sampling_draws_distinct_positions_up_to_the_limit() {
        let (start, moves) = game(&["Nf3", "Nf6", "Ng1", "Ng8", "Nc3", "Nc6", "Nb1", "Nb8", "e3", "e6", "d3", "d6", "c3", "c6", "b3", "b6", "a3", "a6", "h3", "h6", "g3", "g6", "f3", "f6", "Be2", "Be7"]);
        let mut x = 7u64;
        let mut rand = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 11
        };
        let s = Sampling::default();
        let recs = sample_game(&start, &moves, true, 3, &s, &mut rand);
        assert_eq!(recs.len(), 10);
        let mut plies: Vec<u16> = recs.iter().map(|r| r.ply).collect();
        plies.dedup();
        assert_eq!(plies.len(), 10);
        assert!(plies.iter().all(|&p| p >= 10));
        assert!(recs.iter().all(|r| r.label == 1 && r.game == 3));
        let few = Sampling { per_game: 100, ..s };
        assert_eq!(sample_game(&start, &moves, false, 0, &few, &mut rand).len(), 16);
    }

    #[test]
    fn label_sampling_skips_ends_and_repeats() {
        // Knights out and back twice: the start position recurs at plies 4 and 8.
        let (start, moves) = game(&["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8", "e4"]);
        let plies: Vec<u16> = label_candidates(&start, &moves, 0).iter().map(|c| c.0).collect();
        // Plies 4 and 8 repeat ply 0, 5..=7 repeat 1..=3; ply 9 (after the last move) is kept.
        assert_eq!(plies, vec![0, 1, 2, 3, 9]);
        // Skipped plies do not count as seen: ply 4 is the first sampled occurrence of ply 0.
        assert_eq!(label_candidates(&start, &moves, 2).iter().map(|c| c.0).collect::<Vec<_>>(), vec![2, 3, 4, 5, 9]);
        // Fool's mate: the final, mated position is never a candidate.
        let (start, moves) = game(&["f3", "e5", "g4", "Qh4#"]);
        assert_eq!(label_candidates(&start, &moves, 0).iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        let mut x = 1u64;
        let mut rand = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 11
        };
        let mut taken = std::collections::HashSet::new();
        let first = sample_for_labels(&start, &moves, 0, 3, &mut taken, &mut rand);
        assert_eq!(first.len(), 3);
        assert!(first.windows(2).all(|w| w[0].0 < w[1].0));
        // The same game again offers only the one position not taken yet.
        let again = sample_for_labels(&start, &moves, 0, 3, &mut taken, &mut rand);
        assert_eq!(again.len(), 1);
        assert!(!first.iter().any(|c| c.0 == again[0].0));
    }

    #[test]
    fn filter_keeps_mates_and_rated_games() {
        let (start, moves) = game(&["f3", "e5", "g4", "Qh4#"]);
        assert!(ends_in_mate(&start, &moves));
        assert!(!ends_in_mate(&start, &moves[..3]));
        let mut g = PgnGame::new(start);
        for &m in &moves {
            g.push(m, None);
        }
        let mates = GameFilter { mate_only: true, min_elo: None };
        assert!(mates.keeps(&g) && GameFilter::default().keeps(&g));
        let rated = GameFilter { mate_only: true, min_elo: Some(2000) };
        assert!(!rated.keeps(&g), "no Elo tags");
        g.set_tag("WhiteElo", "2100");
        g.set_tag("BlackElo", "1990");
        assert!(!rated.keeps(&g));
        g.set_tag("BlackElo", "2000");
        assert!(rated.keeps(&g));
        g.moves.pop();
        assert!(!rated.keeps(&g), "not mate");
        assert_eq!(rated.describe(), "ended by checkmate, WhiteElo and BlackElo >= 2000");
    }

    #[test]
    fn position_split_puts_one_game_on_both_sides() {
        let n = (0..200u16).filter(|&p| is_validation_position(77, p, 100, 0)).count();
        assert!((5..45).contains(&n), "{n}");
        let all = (0..20_000u64).filter(|&k| is_validation_position(k, 3, 50, 0)).count();
        assert!((800..1200).contains(&all), "{all}");
    }

    #[test]
    fn validation_split_is_deterministic_and_near_the_fraction() {
        let n = (0..20_000u64).filter(|&k| is_validation(k, 50, 0)).count();
        assert!((800..1200).contains(&n), "{n}");
        assert_eq!(is_validation(12345, 50, 9), is_validation(12345, 50, 9));
    }
}
