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

pub mod arena;
pub mod chess;
pub mod cli;
pub mod cnn;
pub mod data;
pub mod dbn;
pub mod deepchess;
pub mod eval;
pub mod players;
pub mod search;
pub mod tensor;
pub mod train;
pub mod uci;
