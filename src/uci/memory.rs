//! What the engine's memory allows: `Hash` and `Threads` accounted together against what
//! the process can still have (the machine's or its container's memory, and its address
//! space under `ulimit -v`), refused or reduced with an `info string`, never a panic; helper
//! threads started off the command loop, so that `isready` is answered while their caches
//! are allocated.

use super::{available_mb, say_info, Engine, Running};
use crate::io::pages::address_space_left_mb;
use crate::search::HELPER_STACK;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Address space (MB) the C library reserves for a thread's own allocation arena (64 MB on
/// 64-bit glibc): counted under `ulimit -v`, though little of it is touched.
const THREAD_ARENA_MB: usize = 64;

impl Engine {
    /// What this player takes (MB) with a table of `hash_mb` searched by `threads` threads.
    pub(super) fn memory_mb(&self, hash_mb: usize, threads: usize) -> usize {
        (self.eval.memory_mb)(hash_mb).saturating_add(threads.saturating_sub(1).saturating_mul(self.eval.thread_mb(hash_mb)))
    }

    /// The most threads, up to `Threads`, that the machine can hold beside this player and
    /// its table: each thread beyond the first takes its own caches and maps its stack. The
    /// memory of threads already started counts as held.
    pub(super) fn threads_that_fit(&self) -> usize {
        let per = self.eval.thread_mb(self.hash_mb).max(1);
        let built = self.searcher.as_ref().map_or(0, |s| s.threads());
        let have = built.max(1);
        let mut fit = self.threads_asked;
        if let Some(avail) = available_mb() {
            let base = if built == 0 { (self.eval.memory_mb)(self.hash_mb) } else { 0 };
            fit = fit.min(have + avail.saturating_sub(base) / per);
        }
        if let Some(left) = address_space_left_mb() {
            // Each thread maps its stack and, once it allocates, the C library's arena of
            // its own; the search thread's and the starting thread's first, and a margin.
            let thread = (HELPER_STACK >> 20) + THREAD_ARENA_MB;
            fit = fit.min(have + left.saturating_sub(3 * thread) / (per + thread));
        }
        fit.max(1)
    }

    /// Starts the searcher's helper threads for `Threads` on a thread of their own, so that
    /// the command loop answers (`isready` above all) while their caches are allocated; the
    /// next `go` waits for them. Fewer start where the machine cannot hold them (said in an
    /// `info string`); says how many will search always when `say` is set, else only when
    /// fewer than asked.
    pub(super) fn start_threads(&mut self, say: bool) {
        let asked = self.threads_asked;
        let fit = self.threads_that_fit();
        if fit < asked {
            self.info(&format!(
                "Threads {asked}: {asked} threads need about {} MB with Eval {} and Hash {} MB, more than this machine can give; using {fit}",
                self.memory_mb(self.hash_mb, asked),
                self.eval.name,
                self.hash_mb
            ));
        }
        // The next searches use what fits; the asked count is kept, so that a smaller Hash or
        // a cheaper Eval later starts as many as then fit.
        self.threads = fit;
        if self.searcher.as_ref().is_some_and(|s| s.threads() == fit) {
            if say {
                self.info(&format!("Threads {asked}: searching on {fit} thread{} (Lazy SMP)", if fit == 1 { "" } else { "s" }));
            }
            return;
        }
        let Some(mut s) = self.searcher.take() else { return };
        let (out, note, name) = (self.out.clone(), self.fallback.clone(), self.eval.name);
        let job = std::thread::Builder::new().name("threads".into()).spawn(move || {
            let used = s.set_threads(fit);
            if used < fit {
                say_info(&out, note.as_deref(), &format!("Threads {asked}: Eval {name} searches on {used} thread{} (its evaluator cannot be shared, or the memory for more could not be had)", if used == 1 { "" } else { "s" }));
            } else if say || fit < asked {
                say_info(&out, note.as_deref(), &format!("Threads {asked}: searching on {used} thread{} (Lazy SMP)", if used == 1 { "" } else { "s" }));
            }
            s
        });
        match job {
            Ok(handle) => self.running = Some(Running { stop: Arc::new(AtomicBool::new(false)), ponder: None, handle, starting: true }),
            Err(e) => {
                // The searcher went with the closure: the next go or isready builds it again.
                self.threads = 1;
                self.info(&format!("Threads {asked}: could not start a thread ({e}); searching on 1"));
            }
        }
    }

    /// `Hash`: refused when this player's table and cache would not fit in the memory the
    /// machine (or its container) has available; with a searcher built, the table is
    /// allocated now, fallibly, keeping the previous one when that fails. Without one, the
    /// size is kept for the build at `isready` or `go`.
    pub(super) fn set_hash(&mut self, mb: usize) {
        let need = self.memory_mb(mb, self.threads);
        if let Some(avail) = available_mb().filter(|&a| need > a) {
            return self.info(&format!(
                "setoption Hash: {mb} MB needs about {need} MB for Eval {}, more than the {avail} MB available; keeping {} MB",
                self.eval.name, self.hash_mb
            ));
        }
        let Some(s) = self.searcher.as_mut() else {
            self.hash_mb = mb;
            return;
        };
        match s.set_hash(mb) {
            Ok(()) => {
                self.hash_mb = mb;
                if self.threads < self.threads_asked {
                    self.start_threads(false);
                }
            }
            Err(e) => {
                let kept = self.hash_mb;
                self.info(&format!("setoption Hash: {e}; keeping {kept} MB"))
            }
        }
    }
}
