//! deepchess: the DeepChess paper (David, Netanyahu & Wolf, 2016) reproduced end to end.
//!
//! Layers, data flowing top to bottom (see `docs/architecture.md`):
//! - [`chess`]: rules: bitboards, legal move generation, FEN/SAN/UCI notation, PGN, perft.
//! - [`cli`]: hand-written argument parsing and one file per subcommand.
//! - [`tensor`]: matrices, SIMD GEMM, sparse input layer, autograd, optimizers, weight files.

pub mod arena;
pub mod chess;
pub mod cli;
pub mod data;
pub mod eval;
pub mod deepchess;
pub mod players;
pub mod search;
pub mod tensor;
pub mod train;
pub mod uci;
