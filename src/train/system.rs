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
