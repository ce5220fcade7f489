//! Search (paper §4): the comparison-based alpha-beta, its comparators (handcrafted or
//! learned, behind one trait), transposition table, move ordering and time management.
//! See docs/search.md.

pub mod alphabeta;
pub mod bench;
pub mod comparator;
pub mod deepchess_net;
pub mod handcrafted;
pub mod net;
pub mod ordering;
pub mod random_net;
pub mod see;
pub mod time;
pub mod tt;

pub use alphabeta::{Info, Score, SearchResult, Searcher};
pub use comparator::{Comparator, ComparatorStats, Kind, Value};
pub use handcrafted::Handcrafted;
pub use time::Limits;
pub use net::{NetComparator, SiameseNet};
