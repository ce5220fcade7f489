//! `deepchess train`, run once for every system: the driver owns the order of the steps and
//! the flags every system shares, a [`Recipe`] supplies what is the system's own. The steps:
//!
//! 1. the profile, by `--profile` among the recipe's (its default when absent);
//! 2. the recipe's flag overrides and their checks, giving its [`Recipe::Setup`];
//! 3. `--threads`, by the recipe's rule ([`Threads`]), then the recipe's look at the count;
//! 4. `--seed`, 5. `--out` (the recipe's folder prefix and the profile's name when absent),
//!    6. `--resume`;
//! 7. admission: `system`, `profile` and `seed`, then the recipe's own settings, against what
//!    the folder recorded (before any input loads: a refusal should not wait for a corpus);
//! 8. the recipe loads its inputs; 9. the folder made and `run.txt` written for a new run;
//! 10. the recipe's stages; 11. its results table; 12. `results.md` written, last, and
//!    printed.
//!
//! A recipe also names a smoke run ([`Recipe::SMOKE`], [`Recipe::smoke_inputs`]): the tiny
//! run the tests kill, resume and make again, its inputs written into a folder by the system
//! itself, so that the tests know no system (`deepchess train --system NAME --smoke-inputs
//! DIR` prints its arguments).

use super::run::{Run, Threads, TrainCli};
use super::settings::{Kind, RunSettings};
use crate::io::args::{CliError, Parsed};
use std::path::{Path, PathBuf};

/// What a system brings to `deepchess train`: everything the driver does not do alike for
/// every system.
pub trait Recipe {
    /// `train --system NAME`, and the `system` key of `run.txt`.
    const NAME: &'static str;
    /// The profile run when `--profile` is absent.
    const DEFAULT_PROFILE: &'static str;
    /// The run folder when `--out` is absent: this followed by the profile's name.
    const OUT_PREFIX: &'static str;
    /// What `--threads` counts.
    const THREADS: Threads;
    /// The smoke run's flags (after `deepchess train`), its inputs' flags aside: a tiny
    /// profile and few threads.
    const SMOKE: &'static [&'static str];

    /// A profile: the schedule a name stands for.
    type Profile: 'static;
    /// The profile after the flags' overrides, with whatever else the flags chose.
    type Setup;
    /// What the run trains on, loaded once admitted.
    type Inputs;
    /// What the stages leave for the results table.
    type Outcome;

    /// The profiles `--profile` takes, in the order help lists them.
    const PROFILES: &'static [(&'static str, fn() -> Self::Profile)];
    /// The flags applied to `profile`, each checked (a usage error in the system's words).
    fn setup(cli: &TrainCli, profile: Self::Profile) -> Result<Self::Setup, CliError>;
    /// A look at the thread count once known (the DBN's `--jobs` shares the cores with it).
    fn threads_chosen(_cli: &TrainCli, _setup: &mut Self::Setup, _threads: usize) -> Result<(), CliError> {
        Ok(())
    }
    /// The settings that define the run beside `system`, `profile` and `seed`, which the
    /// driver adds first (see `train::settings`).
    fn settings(setup: &Self::Setup, s: &mut RunSettings) -> Result<(), CliError>;
    fn load(setup: &Self::Setup, run: &Run) -> Result<Self::Inputs, CliError>;
    /// Trains (or, for parts already in the run's folder, loads) what the run makes.
    fn train(setup: &Self::Setup, inputs: &Self::Inputs, run: &Run) -> Result<Self::Outcome, CliError>;
    /// The text of `results.md` (figures of its own may be written beside it first).
    fn results(setup: &Self::Setup, inputs: &Self::Inputs, outcome: &Self::Outcome, run: &Run) -> Result<String, CliError>;
    /// Writes the smoke run's inputs into `dir` (which exists); returns the flags naming them.
    fn smoke_inputs(dir: &Path) -> Result<Vec<String>, String>;
}

/// Trains system `R` with the parsed flags; `cmd` is the command as typed (`deepchess
/// train`, or `deepchess train --system NAME`), the start of its usage errors.
pub fn run<R: Recipe>(p: &Parsed, cmd: &str) -> Result<(), CliError> {
    let cli = TrainCli::new(p, cmd);
    let (profile, prof) = cli.profile(R::DEFAULT_PROFILE, R::PROFILES)?;
    let mut setup = R::setup(&cli, prof)?;
    let threads = cli.threads(&R::THREADS)?;
    R::threads_chosen(&cli, &mut setup, threads)?;
    let seed = cli.seed()?;
    let out = cli.out(format!("{}{profile}", R::OUT_PREFIX));
    let resume = cli.resume();
    let mut settings = RunSettings { profile_key: Some("profile".into()), ..Default::default() };
    settings.add("system", R::NAME, "--system", Kind::Defining);
    settings.add("profile", profile, "--profile", Kind::Defining);
    settings.add("seed", seed, "--seed", Kind::Defining);
    R::settings(&setup, &mut settings)?;
    let run = Run::admit(out, resume, profile, seed, threads, settings)?;
    let inputs = R::load(&setup, &run)?;
    run.begin()?;
    let outcome = R::train(&setup, &inputs, &run)?;
    let md = R::results(&setup, &inputs, &outcome, &run)?;
    run.finish(&md)
}

/// The smoke run of `R` with its inputs in `dir` (made if absent): the arguments after
/// `deepchess train`, `--out` and `--resume` aside.
pub fn smoke<R: Recipe>(dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut args = vec!["--system".to_string(), R::NAME.to_string()];
    args.extend(R::SMOKE.iter().map(|s| s.to_string()));
    args.extend(R::smoke_inputs(dir)?);
    Ok(args)
}

/// The games smoke runs are made from: 30 Stockfish games of the source tree's test data
/// (a smoke run is for the tests of a built tree).
pub fn smoke_games() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pgn/sf15-sample.pgn"))
}
