//! deepchess: learned chess systems reproduced end to end on one set of rules, one numeric
//! engine, one search and one arena. Today DeepChess (David, Netanyahu & Wolf, 2016).
//!
//! A floor per shared layer, a folder per learned system; dependencies point down only
//! (`docs/architecture.md`, guarded by `tests/layering.rs`):
//! - [`chess`] (rules) and [`tensor`] (numerics: SIMD flavours, GEMM, dense and sparse
//!   layers, autograd, optimizers, weight files), which know nothing of each other;
//! - [`data`] (games to positions, datasets) and [`eval`] (what a search needs from an
//!   evaluator: comparators, scalar evaluators, the handcrafted one);
//! - [`train`] (the shared trainer) and [`search`] (comparison alpha-beta over any
//!   comparator; it knows no network);
//! - the systems: [`deepchess`], [`dbn`] (seed 001), [`cnn`] (seed 003);
//! - [`players`]: the one registry of evaluators the engine plays with;
//! - [`uci`] (the engine) and [`arena`] (matches, Elo, datagen);
//! - [`cli`]: one file per subcommand.

// Printing that never panics. std's `print!` and `eprint!` panic when their stream is gone
// (a closed pipe, a terminal that went away), which made a training run whose stderr was a
// closed pipe exit with 101 (issue 45). These shadow them for the whole crate (a
// `macro_rules!` in textual scope comes before the prelude's):
// - stderr carries progress and diagnostics: a write that fails is dropped and the work goes
//   on (a run's log and checkpoints are on disk);
// - stdout carries a command's output: once its reader is gone nothing more can be said, so
//   the process ends quietly (`io::stdout_failed`).
macro_rules! eprint {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($t)*);
    }};
}
macro_rules! eprintln {
    () => { eprint!("\n") };
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}
macro_rules! print {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($t)*) {
            $crate::io::stdout_failed(e);
        }
    }};
}
macro_rules! println {
    () => { print!("\n") };
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($t)*) {
            $crate::io::stdout_failed(e);
        }
    }};
}

pub mod arena;
pub mod chess;
pub mod cli;
pub mod cnn;
pub mod data;
pub mod dbn;
pub mod deepchess;
pub mod eval;
pub mod io;
pub mod players;
pub mod search;
pub mod tensor;
pub mod train;
pub mod uci;
