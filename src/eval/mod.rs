//! What a search needs from an evaluator, and the evaluator that needs no training.
//! - [`Comparator`]: "is position A better than B for White?" (the paper's §4 interface),
//!   and [`Value`], a search value: a comparator-judged position or an outcome the search
//!   itself knows (mate, draw).
//! - [`Evaluator`]: a scalar evaluator (one number per position), and
//!   [`ScoreComparator`], its adapter to a comparator;
//! - [`PositionCache`]: per-position results by zobrist key (a net's codes, costly values);
//! - [`line::Line`]: a board-bits first layer kept incrementally along the search's line.
//! - [`KeyStore`]: a thread's live positions, so the search's values hold a [`Handle`].
//! - [`Handcrafted`]: material and piece-square tables, the paper's "Falcon" stand-in.

pub mod cache;
pub mod comparator;
pub mod gnu;
pub mod handcrafted;
pub mod line;
pub mod scalar;
pub mod store;

pub use cache::PositionCache;
pub use comparator::{Comparator, Counter, Counters, Kind, Value, MAX_PLY};
pub use handcrafted::{handcrafted, Handcrafted};
pub use scalar::{Evaluator, ScoreComparator, CP_PER_LOGIT};
pub use store::{Handle, KeyStore};
