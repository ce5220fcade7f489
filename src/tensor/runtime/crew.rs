//! Kept threads for the numeric kernels' parallel parts: [`run`] hands `f(1..n)` to threads
//! started once and kept waiting, instead of starting (and joining) threads on every call.
//!
//! Why: a training step of the comparator splits its work over the cores three times (the
//! shards, their gradients' sum, the optimizer), and starting and joining a scoped thread
//! costs 30–120 µs on the 2-core machines this is made on (median about 80), which is 2 %
//! of a step. Handing a job to a thread that is already running costs a few microseconds
//! while it still spins from its last job, a futex wake once it sleeps.
//!
//! A kept thread spins for a short while after each job (so the next one, usually a
//! fraction of a millisecond away, is taken at once) and then sleeps on a condition
//! variable: an idle process does not hold a core.
//!
//! One caller at a time uses the crew. A call made while it is busy (from inside a job, or
//! from another thread at the same moment) runs on scoped threads as before, so nesting
//! and concurrent callers are always safe. Which thread runs a part never changes what it
//! computes: every parallel kernel gives each output to one part.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// How long a kept thread spins for its next job before it sleeps.
const SPIN: Duration = Duration::from_micros(300);

/// A job: part `i` of a function that outlives it (the caller waits for every part before
/// returning, even when it unwinds).
struct Job {
    f: *const (dyn Fn(usize) + Sync + 'static),
    i: usize,
}
// Safety: `f` is `Sync` and is only called while the caller of `run` waits for it.
unsafe impl Send for Job {}

/// One kept thread's mailbox.
#[derive(Default)]
struct Member {
    /// Jobs posted so far; the thread runs one whenever this exceeds what it has done.
    posted: AtomicUsize,
    /// Jobs finished so far (published with their writes: Release).
    done: AtomicUsize,
    job: Mutex<Option<Job>>,
    wake: Condvar,
    /// The panic of its last job, if it had one.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Member {
    /// The kept thread's loop: wait for a job, run it, publish that it is done.
    fn serve(&self) {
        let mut seen = 0;
        loop {
            let t = Instant::now();
            let mut spins = 0u32;
            while self.posted.load(Ordering::Acquire) == seen {
                spins = spins.wrapping_add(1);
                if spins % 64 != 0 || t.elapsed() < SPIN {
                    std::hint::spin_loop();
                    continue;
                }
                // Posting changes `posted` under this lock, so no wake-up is lost.
                let g = lock(&self.job);
                drop(self.wake.wait_while(g, |_| self.posted.load(Ordering::Acquire) == seen).unwrap_or_else(|e| e.into_inner()));
            }
            seen += 1;
            let job = lock(&self.job).take();
            if let Some(job) = job {
                // Safety: the caller of `run` keeps `f` alive until `done` says this part ended.
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.f)(job.i) })) {
                    *lock(&self.panic) = Some(p);
                }
            }
            self.done.store(seen, Ordering::Release);
        }
    }

    fn post(&self, job: Job) {
        {
            let mut g = lock(&self.job);
            *g = Some(job);
            self.posted.fetch_add(1, Ordering::AcqRel);
        }
        self.wake.notify_one();
    }
}

/// The kept threads (grown on demand, never stopped: they sleep when idle).
static CREW: Mutex<Vec<Arc<Member>>> = Mutex::new(Vec::new());

/// Runs `f(i)` for every `i < n`, each exactly once, and returns when all have: part 0 on
/// the calling thread, the others on kept threads (on scoped threads when the crew is
/// busy). A panic in any part is raised here after every part has ended.
pub(crate) fn run(n: usize, f: &(dyn Fn(usize) + Sync)) {
    if n <= 1 {
        (0..n).for_each(f);
        return;
    }
    let mut crew = match CREW.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return scoped(n, f),
    };
    while crew.len() < n - 1 {
        let m = Arc::new(Member::default());
        let served = Arc::clone(&m);
        let started = std::thread::Builder::new().name("deepchess-crew".into()).spawn(move || served.serve());
        if started.is_err() {
            drop(crew);
            return scoped(n, f);
        }
        crew.push(m);
    }
    // The lifetime is erased for the kept threads; `Wait` below outlives every use.
    let erased: *const (dyn Fn(usize) + Sync + '_) = f;
    let erased: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(erased) };
    let members = &crew[..n - 1];
    for m in members {
        // Left by a call whose own part panicked before it looked.
        lock(&m.panic).take();
    }
    let targets: Vec<usize> = members.iter().map(|m| m.done.load(Ordering::Acquire) + 1).collect();

    /// Waits for the posted parts however this frame ends (part 0 may panic).
    struct Wait<'a>(&'a [Arc<Member>], &'a [usize], usize);
    impl Drop for Wait<'_> {
        fn drop(&mut self) {
            for (m, &t) in self.0.iter().zip(self.1).take(self.2) {
                let t0 = Instant::now();
                while m.done.load(Ordering::Acquire) < t {
                    if t0.elapsed() < SPIN {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
        }
    }
    let mut wait = Wait(members, &targets, 0);
    for (i, m) in members.iter().enumerate() {
        m.post(Job { f: erased, i: i + 1 });
        wait.2 = i + 1;
    }
    f(0);
    drop(wait);
    let panic = members.iter().find_map(|m| lock(&m.panic).take());
    drop(crew);
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// [`run`] on scoped threads started for this call.
fn scoped(n: usize, f: &(dyn Fn(usize) + Sync)) {
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..n).map(|i| s.spawn(move || f(i))).collect();
        f(0);
        for h in handles {
            if let Err(p) = h.join() {
                resume_unwind(p);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Every part runs exactly once, on more than one thread, call after call.
    #[test]
    fn every_part_runs_once() {
        for n in [0, 1, 2, 3, 5] {
            for _ in 0..50 {
                let counts: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                run(n, &|i| {
                    counts[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1), "n = {n}");
            }
        }
    }

    /// Parts run on other threads than the caller's, and a job sees what the caller wrote
    /// before it and the caller sees what the job wrote.
    #[test]
    fn parts_run_elsewhere_and_their_writes_are_seen() {
        let me = std::thread::current().id();
        let data: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        for round in 1..=100u64 {
            let other = Mutex::new(Vec::new());
            run(4, &|i| {
                assert_eq!(data[i].load(Ordering::Relaxed), round - 1);
                data[i].store(round, Ordering::Relaxed);
                other.lock().unwrap().push((i, std::thread::current().id()));
            });
            assert!(data.iter().all(|d| d.load(Ordering::Relaxed) == round));
            for (i, id) in other.into_inner().unwrap() {
                assert_eq!(i == 0, id == me, "part {i}");
            }
        }
    }

    /// A call from inside a part (the crew busy) and calls from two threads at once finish.
    #[test]
    fn nested_and_concurrent_calls_finish() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..20 {
                        run(3, &|_| {
                            run(2, &|_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            })
                        });
                    }
                });
            }
        });
        assert_eq!(total.into_inner(), 2 * 20 * 3 * 2);
    }

    /// A part's panic reaches the caller, after the other parts ended; the crew still works.
    #[test]
    fn a_panic_reaches_the_caller_and_the_crew_goes_on() {
        for bad in [0, 1] {
            let finished = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                run(2, &|i| {
                    if i == bad {
                        panic!("part {i} fails");
                    }
                    std::thread::sleep(Duration::from_millis(5));
                    finished.fetch_add(1, Ordering::Relaxed);
                })
            }));
            assert!(r.is_err(), "part {bad}'s panic was lost");
            assert_eq!(finished.load(Ordering::Relaxed), 1, "the other part had not ended");
        }
        let ran = AtomicUsize::new(0);
        run(2, &|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.into_inner(), 2);
    }

    /// A kept thread asleep (after its spin) wakes for the next job.
    #[test]
    fn a_sleeping_thread_wakes() {
        run(2, &|_| {});
        std::thread::sleep(SPIN * 10);
        let ran = AtomicUsize::new(0);
        run(2, &|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.into_inner(), 2);
    }
}
