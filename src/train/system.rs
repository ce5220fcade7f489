//! A trainable system as the command line and the arena see it: its name (`train --system
//! NAME`), the seed it reproduces, its flags and what runs it, the subcommands and benchmark
//! parts it brings, its smoke run, and its colour in the arena's figures. Each system declares one in its
//! `pipeline.rs`; the registry's `SYSTEMS` (src/players.rs) lists them, and `deepchess
//! train`, its `--help`, the top-level help, the subcommands of the systems and the
//! tournament's ladders are made from that list.

use crate::io::args::{CliError, Flag, Parsed};
use crate::tensor::Rng;
use std::path::Path;

pub struct System {
    /// `train --system NAME`.
    pub name: &'static str,
    /// The source it reproduces, e.g. `seed 001: deep belief networks (IJCTE 2018)`.
    pub seed: &'static str,
    /// One line for the lists of systems.
    pub about: &'static str,
    /// Its colour in the arena's figures (`#rrggbb`: the tournament's ladders).
    pub colour: &'static str,
    /// The subcommands it brings (`deepchess accuracy`, `deepchess bench-dbn`, ...): the
    /// command line runs them and lists them in its help, knowing nothing of them.
    pub commands: &'static [Command],
    /// The parts of `deepchess bench-tensor` it brings (the DBN's RBM training).
    pub bench_tensor: &'static [BenchPart],
    /// Its dense layers, (inputs, outputs), whose three products (forward, and the backward
    /// ones into the input and the weights) bench-tensor's GEMM table times at batch 256
    /// beside numpy: the table's shapes are the systems' own, none of them written in cli.
    pub gemm_layers: &'static [(usize, usize)],
    /// `train --system NAME --help`: the synopsis and the description above the flags.
    pub synopsis: &'static str,
    pub help: &'static str,
    /// Its flags, `--system` aside.
    pub flags: &'static [Flag],
    /// Flag sets that change what its run's checkpoints hold (another optimizer or none,
    /// other shapes, other stages): the kill/resume tests run each beside the tiny profile,
    /// so that every recipe the trainer accepts is shown to resume.
    pub checkpoint_variants: &'static [&'static [&'static str]],
    /// Trains with the parsed flags (the caller has parsed them against `flags`); the
    /// second argument is the command as typed, which usage errors begin with. The driver
    /// over the system's recipe: `train::driver::run::<ITS_RECIPE>`.
    pub run: fn(&Parsed, &str) -> Result<(), CliError>,
    /// Writes its smoke run's inputs into a folder and returns the run's arguments after
    /// `deepchess train` (`train::driver::smoke::<ITS_RECIPE>`): what the kill/resume and
    /// provenance tests run, for every system the registry lists.
    pub smoke: fn(&Path) -> Result<Vec<String>, String>,
}

/// A subcommand of a system, beside the generic ones of src/cli/.
pub struct Command {
    /// `deepchess NAME ...`.
    pub name: &'static str,
    /// The top-level help's line: `NAME SYNOPSIS` in the first column, `about` beside it.
    pub synopsis: &'static str,
    pub about: &'static str,
    /// Runs it with the words after its name: its own flags, `--help` and errors
    /// (`CliError::Usage`: exit code 2, `Failed`: 1, `Help`: the text on stdout).
    pub run: fn(&[String]) -> Result<(), CliError>,
}

/// A part of `deepchess bench-tensor` a system brings: run after the shared kernels' parts
/// (GEMM, sparse input) and before the convolution's, or alone with `--only NAME`.
pub struct BenchPart {
    /// `--only NAME`.
    pub name: &'static str,
    /// What it measures, a phrase of bench-tensor's description (line breaks as wanted).
    pub about: &'static str,
    /// Its own flags, listed by bench-tensor among its own (before `--no-torch`).
    pub flags: &'static [Flag],
    pub run: fn(&BenchArgs, &mut Rng),
}

/// What bench-tensor hands each part.
pub struct BenchArgs<'a> {
    /// Repetitions per figure (medians are quoted).
    pub reps: usize,
    /// `--quick`: fewer repetitions, shorter timings.
    pub quick: bool,
    /// The threads of the 'threaded' figures.
    pub threads: usize,
    /// Every flag of the command line, the part's own among them.
    pub parsed: &'a Parsed,
}
