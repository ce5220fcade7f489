//! Search (paper §4): the comparison-based alpha-beta over any
//! [`Comparator`](crate::eval::Comparator) (it knows no network), transposition table, move
//! ordering, static exchange, time management and the fixed-depth bench; and the [`Player`]
//! every move chooser is (the searcher, or a [`PolicyPlayer`] that picks from one ply of
//! move scores). See docs/search.md.

mod alphabeta;
pub mod bench;
pub mod ordering;
pub mod player;
pub mod policy;
mod pruning;
mod quiesce;
pub mod see;
mod searcher;
mod smp;
pub mod time;
pub mod tree;
pub mod tt;
mod window;

pub use player::{Built, Player, PlayerOption, PlayerSettings};
pub use policy::{MoveScorer, PolicyPlayer};
pub use searcher::{Info, Score, SearchResult, Searcher};
pub use smp::HELPER_STACK;
pub use time::{Limits, Ponder, MAX_DEPTH};

pub(crate) use crate::io::pages::prefetch;
