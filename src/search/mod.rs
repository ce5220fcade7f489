//! Search (paper §4): the comparison-based alpha-beta over any [`Comparator`] (it knows no
//! network), transposition table, move ordering, static exchange, time management and the
//! fixed-depth bench. See docs/search.md.

mod alphabeta;
pub mod bench;
pub mod ordering;
mod pruning;
mod quiesce;
pub mod see;
mod searcher;
pub mod time;
pub mod tt;

pub use searcher::{DynSearcher, Info, Score, SearchResult, Searcher};
pub use time::{Limits, Ponder, MAX_DEPTH};

/// Asks the CPU to start loading the cache line at `p` (tables read a few microseconds
/// later: the child's transposition entry and feature-cache slot). No effect elsewhere.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // Safety: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
