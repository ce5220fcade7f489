//! deepchess: the learned chess systems of five source documents reproduced end to end on
//! one set of rules, one numeric engine, one search and one arena, so that they can be
//! studied side by side and measured against each other. In: DeepChess (seed 000, David,
//! Netanyahu & Wolf 2016), the deep belief network evaluators (seed 001) and the
//! convolutional win/loss classifier (seed 003), NeuroChess (seed 004) and the self-play
//! Q-learning agents (seed 002), the last two on the episode stage (systems that learn by
//! playing) and, for the agents, players without search.
//!
//! A floor per shared layer, a folder per learned system; dependencies point down only
//! (`docs/architecture.md`, guarded by `tests/house_layering.rs`):
//! - [`io`]: atomic writes, bounded reads, xz streams, checksums, command-line flags;
//! - [`chess`] (rules) and [`tensor`] (numerics: kernels, autograd, layers, the parallel
//!   runtime, optimizers, weight files), which know nothing of each other;
//! - [`data`] (games to positions, datasets) and [`eval`] (what a search needs from an
//!   evaluator: comparators, scalar evaluators, the handcrafted one);
//! - [`train`] (the shared trainer: the epoch stage and the episode stage) and [`search`]
//!   (comparison alpha-beta over any comparator, and the `Player` every move chooser is; it
//!   knows no network);
//! - the systems, one folder each in one template: [`deepchess`], [`dbn`], [`cnn`],
//!   [`neurochess`], [`selfplay`];
//! - [`players`]: the one registry of players and of trainable systems;
//! - [`uci`] (the engine) and [`arena`] (matches, Elo, datagen, labelling);
//! - [`cli`]: one file per subcommand.

// Printing that never panics. std's `print!` and `eprint!` panic when their stream is gone
// (a closed pipe, a terminal that went away), which made a training run whose stderr was a
// closed pipe exit with 101 (issue 45). These shadow them for the whole crate (a
// `macro_rules!` in textual scope comes before the prelude's):
// - stderr carries progress and diagnostics: a write that fails is dropped and the work goes
//   on (a run's log and checkpoints are on disk);
// - stdout carries a command's output: once its reader is gone nothing more can be said, so
//   the process ends quietly (`io::stdout_failed`).
// Both escape every control character but line feed, tab and carriage return
// (`io::text::write_clean`): messages quote strings from files and engines, and an ESC, BEL or
// NUL there must not reach the terminal raw (issue 61).
macro_rules! eprint {
    ($($t:tt)*) => {{
        let _ = $crate::io::text::write_clean(&mut std::io::stderr().lock(), format_args!($($t)*));
    }};
}
macro_rules! eprintln {
    () => { eprint!("\n") };
    ($($t:tt)*) => {{
        let _ = $crate::io::text::write_clean(&mut std::io::stderr().lock(), format_args!("{}\n", format_args!($($t)*)));
    }};
}
macro_rules! print {
    ($($t:tt)*) => {{
        if let Err(e) = $crate::io::text::write_clean(&mut std::io::stdout().lock(), format_args!($($t)*)) {
            $crate::io::stdout_failed(e);
        }
    }};
}
macro_rules! println {
    () => { print!("\n") };
    ($($t:tt)*) => {{
        if let Err(e) = $crate::io::text::write_clean(&mut std::io::stdout().lock(), format_args!("{}\n", format_args!($($t)*))) {
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
pub mod neurochess;
pub mod players;
pub mod search;
pub mod selfplay;
pub mod tensor;
pub mod train;
pub mod uci;
