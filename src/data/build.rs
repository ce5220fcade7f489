//! Building train and validation datasets from PGN sources (`deepchess data`).

use super::dataset::Dataset;
use super::sample::{game_key, is_validation, is_validation_position, sample_game, GameFilter, Sampling};
use crate::chess::pgn::{open_pgn, PgnReader};
use crate::chess::{Color, Outcome};
use crate::tensor::rng::SplitMix64;
use std::path::Path;

/// What validation holds out: the protocol every accuracy figure must be quoted with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitBy {
    /// Whole games: no validation position shares a game with a training one.
    #[default]
    Games,
    /// Single positions: the other positions of a validation position's game may be in
    /// training (what "randomly selected positions" gives).
    Positions,
    /// Both protocols on one training set: whole games held out (the validation set), and
    /// single positions of the other games held out (a second validation set).
    Both,
}

impl SplitBy {
    pub fn name(self) -> &'static str {
        match self {
            SplitBy::Games => "games",
            SplitBy::Positions => "positions",
            SplitBy::Both => "both",
        }
    }

    pub fn from_name(s: &str) -> Option<SplitBy> {
        match s {
            "games" => Some(SplitBy::Games),
            "positions" => Some(SplitBy::Positions),
            "both" => Some(SplitBy::Both),
            _ => None,
        }
    }
}

/// How datasets are built. `Default` = the paper's sampling, 5 % of games held out.
#[derive(Clone, Debug)]
pub struct BuildSettings {
    pub sampling: Sampling,
    /// Games dropped before sampling (seed 003's checkmate and rating filter).
    pub filter: GameFilter,
    /// Whole games or single positions held out.
    pub split_by: SplitBy,
    /// Games (or positions, by `split_by`) per thousand held out for validation.
    pub valid_per_mille: u32,
    /// Changes which games are held out, for a different split.
    pub split_salt: u64,
    /// Seed of the position sampling.
    pub seed: u64,
    /// Stop after this many games read (all sources together).
    pub max_games: Option<u64>,
}

impl Default for BuildSettings {
    fn default() -> Self {
        BuildSettings { sampling: Sampling::default(), filter: GameFilter::default(), split_by: SplitBy::Games, valid_per_mille: 50, split_salt: 0, seed: 1, max_games: None }
    }
}

/// Counts reported while building and at the end.
#[derive(Clone, Debug, Default)]
pub struct BuildStats {
    pub games_read: u64,
    pub skipped: u64,
    pub draws: u64,
    pub unfinished: u64,
    /// Decisive games the [`GameFilter`] dropped.
    pub filtered: u64,
    pub decisive: u64,
    pub train_games: u64,
    pub valid_games: u64,
    pub train_w: u64,
    pub train_l: u64,
    pub valid_w: u64,
    pub valid_l: u64,
    /// With [`SplitBy::Both`]: the position split's games and positions.
    pub valid_pos_games: u64,
    pub valid_pos_w: u64,
    pub valid_pos_l: u64,
    /// Sources read to their end without a single readable game, with how many entries of
    /// each were skipped as unreadable.
    pub empty_sources: Vec<(String, u64)>,
}

impl std::fmt::Display for BuildStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} games read, {} skipped (bad), {} draws and {} unfinished dropped, {}{} decisive: \
             train {} games ({} W + {} L positions), validation {} games ({} W + {} L positions)",
            self.games_read, self.skipped, self.draws, self.unfinished,
            if self.filtered > 0 { format!("{} decisive dropped by the filter, ", self.filtered) } else { String::new() },
            self.decisive,
            self.train_games, self.train_w, self.train_l, self.valid_games, self.valid_w, self.valid_l
        )?;
        if self.valid_pos_games > 0 {
            write!(f, ", position validation {} positions of {} trained games ({} W + {} L)", self.valid_pos_w + self.valid_pos_l, self.valid_pos_games, self.valid_pos_w, self.valid_pos_l)?;
        }
        Ok(())
    }
}

/// What [`build_sets`] makes.
pub struct Built {
    pub train: Dataset,
    /// Held out by `split_by` (by game with [`SplitBy::Both`]).
    pub valid: Dataset,
    /// With [`SplitBy::Both`]: single positions of training games held out.
    pub valid_positions: Option<Dataset>,
    pub stats: BuildStats,
}

/// Salt of the position split under [`SplitBy::Both`], so it is drawn independently of
/// the game split.
/// The position split's validation set written by `--split both` beside valid.dcds.
pub const VALID_POSITIONS: &str = "valid-positions.dcds";

const BOTH_POSITION_SALT: u64 = 0xB07A;

/// [`build_sets`] without the second validation set of [`SplitBy::Both`].
pub fn build(
    sources: &[String],
    s: &BuildSettings,
    warn: impl FnMut(&str),
    progress: impl FnMut(&BuildStats),
) -> Result<(Dataset, Dataset, BuildStats), String> {
    build_sets(sources, s, warn, progress).map(|b| (b.train, b.valid, b.stats))
}

/// Reads every source (path or `-`), samples decisive games, splits by game.
/// `warn` receives each skipped game's message; `progress` is called every 1000 games.
/// A source without a readable game (empty, binary, UTF-16, not PGN) is listed in the stats'
/// `empty_sources`; when no source holds one, the build fails naming them all.
pub fn build_sets(
    sources: &[String],
    s: &BuildSettings,
    mut warn: impl FnMut(&str),
    mut progress: impl FnMut(&BuildStats),
) -> Result<Built, String> {
    let mut train = Dataset::default();
    let mut valid = Dataset::default();
    let mut valid_pos = Dataset::default();
    let mut st = BuildStats::default();
    let mut game_index: u32 = 0;
    'sources: for src in sources {
        let input = open_pgn(src).map_err(|e| format!("{src}: {e}"))?;
        let mut reader = PgnReader::new(input);
        let (mut read_here, mut skipped_here) = (0u64, 0u64);
        while let Some(item) = reader.next_game() {
            if s.max_games.is_some_and(|m| st.games_read >= m) {
                break 'sources;
            }
            st.games_read += 1;
            read_here += 1;
            game_index = game_index.wrapping_add(1);
            if st.games_read % 1000 == 0 {
                progress(&st);
            }
            let g = match item {
                Ok(g) => g,
                Err(skip) => {
                    st.skipped += 1;
                    skipped_here += 1;
                    warn(&format!("{src}: {skip}"));
                    continue;
                }
            };
            let white_won = match g.result {
                Some(Outcome::Win(c)) => c == Color::White,
                Some(Outcome::Draw) => {
                    st.draws += 1;
                    continue;
                }
                None => {
                    st.unfinished += 1;
                    continue;
                }
            };
            if !s.filter.keeps(&g) {
                st.filtered += 1;
                continue;
            }
            st.decisive += 1;
            let key = game_key(&g.start, &g.moves);
            let mut rng = SplitMix64(s.seed ^ key);
            let recs = sample_game(&g.start, &g.moves, white_won, game_index, &s.sampling, &mut || rng.next_u64());
            let game_held_out = is_validation(key, s.valid_per_mille, s.split_salt);
            let (mut in_train, mut in_valid, mut in_pos) = (false, false, false);
            for r in recs {
                let (held_out, pos_held_out) = match s.split_by {
                    SplitBy::Games => (game_held_out, false),
                    SplitBy::Positions => (is_validation_position(key, r.ply, s.valid_per_mille, s.split_salt), false),
                    SplitBy::Both => (game_held_out, !game_held_out && is_validation_position(key, r.ply, s.valid_per_mille, s.split_salt ^ BOTH_POSITION_SALT)),
                };
                let (set, w, l, seen) = if held_out {
                    (&mut valid, &mut st.valid_w, &mut st.valid_l, &mut in_valid)
                } else if pos_held_out {
                    (&mut valid_pos, &mut st.valid_pos_w, &mut st.valid_pos_l, &mut in_pos)
                } else {
                    (&mut train, &mut st.train_w, &mut st.train_l, &mut in_train)
                };
                *if white_won { w } else { l } += 1;
                *seen = true;
                set.records.push(r);
            }
            // A game with no eligible position still counts on the side its hash gives it.
            if !in_train && !in_valid {
                *if game_held_out { &mut in_valid } else { &mut in_train } = true;
            }
            st.train_games += in_train as u64;
            st.valid_games += in_valid as u64;
            st.valid_pos_games += in_pos as u64;
        }
        if let Some(e) = &reader.summary().io_error {
            return Err(format!("{src}: read error: {e}"));
        }
        if read_here == skipped_here {
            st.empty_sources.push((src.clone(), skipped_here));
        }
    }
    if st.games_read == st.skipped {
        let which: Vec<String> = st.empty_sources.iter().map(|(src, skipped)| describe_empty(src, *skipped)).collect();
        let which = if which.is_empty() { sources.join(", ") } else { which.join("; ") };
        return Err(format!("no game found in {which}: nothing written"));
    }
    let both = s.split_by == SplitBy::Both;
    for (set, name) in [(&mut train, "train"), (&mut valid, "validation"), (&mut valid_pos, "validation-positions")] {
        set.set_meta("set", name);
        set.set_meta("source", sources.join(" "));
        set.set_meta("sampling", s.sampling.describe());
        if !s.filter.is_none() {
            set.set_meta("filter", s.filter.describe());
        }
        // Each validation set names its own protocol; a training set made for both names both.
        let protocol = match (s.split_by, name) {
            (SplitBy::Both, "validation") => "games",
            (SplitBy::Both, "validation-positions") => "positions",
            (by, _) => by.name(),
        };
        set.set_meta("protocol", protocol);
        set.set_meta(
            "split",
            match s.split_by {
                SplitBy::Both => format!(
                    "whole games held out as validation: a game is in validation when mix(fnv1a(start FEN + moves) ^ {}) % 1000 < {}; \
                     of the other games, single positions held out as validation-positions when mix(fnv1a(start FEN + moves) ^ ply hash ^ {}) % 1000 < {}",
                    s.split_salt, s.valid_per_mille, s.split_salt ^ BOTH_POSITION_SALT, s.valid_per_mille
                ),
                SplitBy::Games => format!(
                    "whole games held out: a game is in validation when mix(fnv1a(start FEN + moves) ^ {}) % 1000 < {}",
                    s.split_salt, s.valid_per_mille
                ),
                SplitBy::Positions => format!(
                    "single positions held out (games on both sides): a position is in validation when mix(fnv1a(start FEN + moves) ^ ply hash ^ {}) % 1000 < {}",
                    s.split_salt, s.valid_per_mille
                ),
            },
        );
        set.set_meta("seed", s.seed.to_string());
        set.set_meta("stats", st.to_string());
    }
    progress(&st);
    Ok(Built { train, valid, valid_positions: both.then_some(valid_pos), stats: st })
}

/// `FILE (empty, or not PGN text)` / `FILE (3 entries skipped as unreadable)`.
pub fn describe_empty(src: &str, skipped: u64) -> String {
    match skipped {
        0 => format!("{src} (empty, or not PGN text)"),
        1 => format!("{src} (1 entry skipped as unreadable: binary, UTF-16 or not PGN?)"),
        n => format!("{src} ({n} entries skipped as unreadable: binary, UTF-16 or not PGN?)"),
    }
}

/// Writes `built`'s sets into `out` (made if absent) as `deepchess data` does: train.dcds,
/// valid.dcds and, with the position split's second set, valid-positions.dcds, all carrying
/// one pair id (a dataset built without the second set removes an older one beside it).
pub fn save_sets(out: &Path, built: Built) -> Result<(), String> {
    let Built { mut train, mut valid, valid_positions, .. } = built;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    // The two files are written one after the other; one id from both contents lets train
    // refuse a pair a kill between the two writes left mismatched.
    let pair = pair_id(&train, &valid);
    train.set_meta("pair", &pair);
    valid.set_meta("pair", &pair);
    train.save(&out.join("train.dcds")).map_err(|e| e.to_string())?;
    valid.save(&out.join("valid.dcds")).map_err(|e| e.to_string())?;
    // The second validation set of --split both carries the same id; a dataset built
    // without it must not leave an older one beside it (train would read it).
    let pos_path = out.join(VALID_POSITIONS);
    match valid_positions {
        Some(mut vp) => {
            vp.set_meta("pair", &pair);
            vp.save(&pos_path).map_err(|e| e.to_string())?;
        }
        None if pos_path.exists() => {
            std::fs::remove_file(&pos_path).map_err(|e| format!("cannot remove the older {}: {e}", pos_path.display()))?;
        }
        None => {}
    }
    Ok(())
}

/// The id of a train/validation pair: FNV-1a of both files' bytes (before the id is set).
fn pair_id(train: &Dataset, valid: &Dataset) -> String {
    let (a, b) = (crate::io::fnv1a64(&train.to_bytes()), crate::io::fnv1a64(&valid.to_bytes()));
    format!("{:016x}", a ^ b.rotate_left(17))
}
