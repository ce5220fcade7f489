//! The pieces of the run every system's `deepchess train` follows, which [`super::driver`]
//! puts in order:
//!
//! 1. the flags: a profile chosen by name ([`TrainCli::profile`]) and overridden by flags
//!    ([`TrainCli::set`], [`TrainCli::episodes`]), the common flags (`--threads`, `--seed`,
//!    `--out`, `--resume`);
//! 2. admission ([`Run::admit`]): the run's settings against what its folder recorded, before
//!    any input is loaded (a refusal should not wait for a corpus);
//! 3. [`Run::begin`], once the inputs have loaded: the folder made and, for a new run,
//!    `run.txt` written;
//! 4. the system's own run (its stages), then [`Run::finish`]: `results.md` written
//!    atomically, last (a run is finished when it is there), and printed.

use super::settings::{RunSettings, FILE};
use crate::io::args::{CliError, Parsed};
use std::fmt::Display;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

/// The parsed flags of one `deepchess train` invocation, with the system's command name for
/// its messages.
pub struct TrainCli<'a> {
    pub p: &'a Parsed,
    /// `deepchess train` or `deepchess train --system NAME`: what usage errors begin with.
    cmd: String,
}

impl<'a> TrainCli<'a> {
    /// `cmd`: the command as its user types it (`deepchess train` for the default system,
    /// `deepchess train --system NAME` for the others), the start of every usage error.
    pub fn new(p: &'a Parsed, cmd: &str) -> TrainCli<'a> {
        TrainCli { p, cmd: cmd.to_string() }
    }

    /// A usage error (exit 2) in the system's words.
    pub fn usage(&self, msg: impl Display) -> CliError {
        CliError::Usage(format!("{}: {msg}", self.cmd))
    }

    /// `--profile NAME` (`default` when absent) among the system's `profiles` (name and
    /// maker, in the order help lists them); an unknown name is a usage error listing them.
    /// Returns the name as given and the profile.
    pub fn profile<P>(&self, default: &'a str, profiles: &[(&str, fn() -> P)]) -> Result<(&'a str, P), CliError> {
        let name = self.p.get("profile").unwrap_or(default);
        match profiles.iter().find(|(n, _)| *n == name) {
            Some((_, make)) => Ok((name, make())),
            None => Err(self.usage(format!("unknown profile '{name}' ({})", profiles.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))),
        }
    }

    /// Sets `slot` (the profile's value) from `--FLAG V` when the flag is given; a value
    /// `valid` refuses is a usage error `--FLAG {why}`. The profile-override step every
    /// system repeated flag by flag.
    pub fn set<T: FromStr + Clone>(&self, flag: &str, slot: &mut T, valid: impl Fn(&T) -> bool, why: &str) -> Result<(), CliError> {
        if self.p.get(flag).is_none() {
            return Ok(());
        }
        let v: T = self.p.get_or("train", flag, slot.clone())?;
        if !valid(&v) {
            return Err(self.usage(format!("--{flag} {why}")));
        }
        *slot = v;
        Ok(())
    }

    /// `--FLAG V` parsed as it comes (no check) when given.
    pub fn set_any<T: FromStr + Clone>(&self, flag: &str, slot: &mut T) -> Result<(), CliError> {
        self.set(flag, slot, |_| true, "")
    }

    /// `--per-batch N` and `--games N` of a system trained on the episode stage, applied to
    /// its profile's `games_per_batch` and `batches` (games must be a whole number of
    /// batches).
    pub fn episodes(&self, games_per_batch: &mut usize, batches: &mut usize) -> Result<(), CliError> {
        if self.p.get("per-batch").is_some() {
            *games_per_batch = self.p.get_or("train", "per-batch", 100)?;
            if !(1..=100_000).contains(games_per_batch) {
                return Err(self.usage("--per-batch must be 1 to 100000"));
            }
        }
        if self.p.get("games").is_some() {
            let games: usize = self.p.get_or("train", "games", 1)?;
            if games == 0 || games % *games_per_batch != 0 {
                return Err(self.usage(format!("--games must be a positive multiple of the batch ({games_per_batch} games)")));
            }
            *batches = games / *games_per_batch;
        }
        Ok(())
    }

    /// `--threads N` by the system's rule (see [`Threads`]): the count as given (or its
    /// default), the numeric engine's pool set when the threads are the kernels'.
    pub fn threads(&self, rule: &Threads) -> Result<usize, CliError> {
        match *rule {
            Threads::Kernels { default, min } => {
                let threads: usize = self.p.get_or("train", "threads", default)?;
                crate::tensor::set_threads(threads.clamp(min, 64));
                Ok(threads)
            }
            Threads::Games => {
                let threads: usize = self.p.get_or("train", "threads", 0)?;
                Ok(if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads.min(256) })
            }
        }
    }

    /// `--seed N`, 1 by default.
    pub fn seed(&self) -> Result<u64, CliError> {
        self.p.get_or("train", "seed", 1)
    }

    /// `--max-positions N` when given.
    pub fn max_positions(&self) -> Result<Option<usize>, CliError> {
        match self.p.get("max-positions") {
            Some(_) => Ok(Some(self.p.get_or("train", "max-positions", usize::MAX)?)),
            None => Ok(None),
        }
    }

    /// `--out DIR`, else `default`.
    pub fn out(&self, default: impl Display) -> PathBuf {
        PathBuf::from(self.p.get("out").map(String::from).unwrap_or_else(|| default.to_string()))
    }

    pub fn resume(&self) -> bool {
        self.p.has("resume")
    }
}

/// What `--threads` counts for a system.
#[derive(Clone, Copy, Debug)]
pub enum Threads {
    /// The numeric engine's pool: `default` when absent (0: every core), at least `min`
    /// and at most 64 applied.
    Kernels { default: usize, min: usize },
    /// Games played at once: every core when absent or 0, at most 256.
    Games,
}

/// One admitted run: its folder, whether it resumes, the common flags' values, and the
/// settings it records.
pub struct Run {
    pub out: PathBuf,
    pub resume: bool,
    /// The profile's name, as `--profile` gave it (or the system's default).
    pub profile: String,
    pub seed: u64,
    /// `--threads` as [`TrainCli::threads`] read it.
    pub threads: usize,
    settings: RunSettings,
    recorded: Option<Vec<(String, String)>>,
    started: Instant,
}

impl Run {
    /// Admits a run with `settings` in `out` (see [`RunSettings::admit`]: a folder holding a
    /// run needs `--resume`, and a resume must match what was recorded). The clock of the
    /// invocation starts here.
    pub fn admit(out: PathBuf, resume: bool, profile: &str, seed: u64, threads: usize, settings: RunSettings) -> Result<Run, CliError> {
        let recorded = settings.admit(&out, resume).map_err(CliError::Failed)?;
        Ok(Run { out, resume, profile: profile.to_string(), seed, threads, settings, recorded, started: Instant::now() })
    }

    /// The settings recorded by the run this one continues (`None`: a new run).
    pub fn recorded(&self) -> Option<&[(String, String)]> {
        self.recorded.as_deref()
    }

    /// The value of one of the run's settings (as `run.txt` records it).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings.settings.iter().find(|s| s.key == key).map(|s| s.value.as_str())
    }

    /// Makes the run's folder and, for a new run, records its settings: called once the
    /// inputs are known to load, so a bad input leaves no run behind.
    pub fn begin(&self) -> Result<(), CliError> {
        std::fs::create_dir_all(&self.out).map_err(|e| CliError::Failed(format!("cannot create {}: {e}", self.out.display())))?;
        if self.recorded.is_none() {
            self.settings.save(&self.out).map_err(|e| CliError::Failed(format!("writing {}: {e}", self.out.join(FILE).display())))?;
        }
        Ok(())
    }

    /// Minutes since [`Run::admit`]: the wall time of this invocation.
    pub fn minutes(&self) -> f64 {
        self.started.elapsed().as_secs_f64() / 60.0
    }

    /// Writes `md` as the run's `results.md` (atomically, the run's last write) and prints it.
    pub fn finish(&self, md: &str) -> Result<(), CliError> {
        crate::io::write_atomic(&self.out.join("results.md"), md.as_bytes()).map_err(|e| CliError::Failed(format!("writing results.md: {e}")))?;
        print!("{md}");
        Ok(())
    }
}
