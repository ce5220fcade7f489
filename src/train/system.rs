//! A trainable system as the command line sees it: its name (`train --system NAME`), the
//! seed it reproduces, its flags and what runs it. Each system declares one in its
//! `pipeline.rs`; the registry's `SYSTEMS` (src/players.rs) lists them, and `deepchess
//! train`, its `--help` and the top-level help are made from that list.

use crate::io::args::{CliError, Flag, Parsed};

pub struct System {
    /// `train --system NAME`.
    pub name: &'static str,
    /// The source it reproduces, e.g. `seed 001: deep belief networks (IJCTE 2018)`.
    pub seed: &'static str,
    /// One line for the lists of systems.
    pub about: &'static str,
    /// `train --system NAME --help`: the synopsis and the description above the flags.
    pub synopsis: &'static str,
    pub help: &'static str,
    /// Its flags, `--system` aside.
    pub flags: &'static [Flag],
    /// Trains with the parsed flags (the caller has parsed them against `flags`).
    pub run: fn(&Parsed) -> Result<(), CliError>,
}

/// The flags `--per-batch N` and `--games N` of a system trained on the episode stage, applied
/// to its profile's `games_per_batch` and `batches` (games must be a whole number of batches).
pub fn episode_flags(p: &Parsed, system: &str, games_per_batch: &mut usize, batches: &mut usize) -> Result<(), CliError> {
    let usage_err = |m: &str| CliError::Usage(format!("deepchess train --system {system}: {m}"));
    if p.get("per-batch").is_some() {
        *games_per_batch = p.get_or("train", "per-batch", 100)?;
        if !(1..=100_000).contains(games_per_batch) {
            return Err(usage_err("--per-batch must be 1 to 100000"));
        }
    }
    if p.get("games").is_some() {
        let games: usize = p.get_or("train", "games", 1)?;
        if games == 0 || games % *games_per_batch != 0 {
            return Err(usage_err(&format!("--games must be a positive multiple of the batch ({games_per_batch} games)")));
        }
        *batches = games / *games_per_batch;
    }
    Ok(())
}
