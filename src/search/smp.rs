//! Lazy SMP, as strong engines run several threads: every thread searches the same root
//! with its own comparator (its caches, its incremental line) and ordering heuristics, all
//! sharing one transposition table (`tt.rs`, an entry per sequence lock). Nothing else is
//! shared: the threads help one another only through what they store. Helpers start their
//! iterative deepening at staggered depths so they are not all in the same subtree; the main
//! thread alone keeps the clock, reports `info` (with every thread's nodes) and chooses the
//! move, and its end stops the helpers.
//!
//! A comparator joins by [`Comparator::fork`] (a fresh one on the same evaluator: a net's
//! weights shared, its caches its own); one that cannot fork searches on one thread.

use super::searcher::{Info, SearchResult, Searcher};
use super::time::Limits;
use crate::chess::Game;
use crate::eval::Comparator;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Stack of a helper thread (the search recurses deeply, each frame holding a node's moves
/// and positions, as the main search thread does): address space each helper maps, though
/// it touches little of it.
pub const HELPER_STACK: usize = 64 << 20;

impl<C: Comparator> Searcher<C> {
    /// Searches with `n` threads from the next search on (1: this thread alone, as `bench`
    /// does for its deterministic node count). Returns the number it will use: 1 when the
    /// comparator cannot fork.
    pub fn set_threads(&mut self, n: usize) -> usize {
        let n = n.max(1);
        self.helpers.truncate(n - 1);
        self.helper_counts.truncate(n - 1);
        while self.helpers.len() < n - 1 {
            let Some(comp) = self.comp.fork() else { break };
            let mut h = Searcher::new(comp, 1);
            h.tt = self.tt.clone();
            let count = Arc::new(AtomicU64::new(0));
            h.published = Some(count.clone());
            self.helper_counts.push(count);
            // Helpers 1, 3, … start one iteration ahead of the main thread.
            h.start_depth = 1 + (self.helpers.len() as u32 + 1) % 2;
            self.helpers.push(h);
        }
        self.helpers.len() + 1
    }

    /// The threads this searcher uses.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// Nodes the helpers have searched in the current search (as they last published them).
    pub(super) fn helper_nodes(&self) -> u64 {
        self.helper_counts.iter().map(|p| p.load(Ordering::Relaxed)).sum()
    }

    /// The main thread's search with its helpers beside it.
    pub(super) fn search_smp(&mut self, game: &Game, limits: &Limits, overhead: Duration, stop: Arc<AtomicBool>, on_info: &mut dyn FnMut(&Info)) -> SearchResult {
        let mut helpers = std::mem::take(&mut self.helpers);
        let helper_stop = Arc::new(AtomicBool::new(false));
        // Helpers search until the main thread ends: no clock, no node limit; the same
        // depth or mate bound and root moves.
        let helper_limits = Limits { depth: limits.depth, mate: limits.mate, searchmoves: limits.searchmoves.clone(), infinite: true, ..Limits::default() };
        for h in &mut helpers {
            h.tt = self.tt.clone();
            h.selective = self.selective;
            h.null_windows = self.null_windows;
            h.quiescence = self.quiescence;
        }
        let counts = self.helper_counts.clone();
        counts.iter().for_each(|c| c.store(0, Ordering::Relaxed));
        let result = std::thread::scope(|s| {
            let running: Vec<_> = helpers
                .iter_mut()
                .map(|h| {
                    let (stop, limits) = (helper_stop.clone(), &helper_limits);
                    std::thread::Builder::new()
                        .stack_size(HELPER_STACK)
                        .spawn_scoped(s, move || {
                            let r = h.search_alone(game, limits, Duration::ZERO, stop, &mut |_| {});
                            if let Some(p) = &h.published {
                                p.store(h.nodes, Ordering::Relaxed);
                            }
                            r
                        })
                        .ok()
                })
                .collect();
            let mut r = self.search_alone(game, limits, overhead, stop, on_info);
            helper_stop.store(true, Ordering::Relaxed);
            for t in running.into_iter().flatten() {
                // A helper that panicked loses only its help.
                let Ok(h) = t.join() else { continue };
                // A helper that completed a deeper iteration than the main thread has the
                // better-founded move (its last iteration may have been cut: then it reports
                // the one before, as the main thread does).
                if h.info.depth > r.info.depth && h.best.is_some() {
                    r.best = h.best;
                    r.ponder = h.ponder;
                    r.info.depth = h.info.depth;
                    r.info.score = h.info.score;
                    r.info.pv = h.info.pv;
                }
            }
            r.info.nodes = self.nodes + self.helper_nodes();
            r
        });
        self.helpers = helpers;
        result
    }
}
