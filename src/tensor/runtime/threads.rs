//! Thread count for the numeric kernels, and a deterministic split of work over
//! threads ([`crate::tensor::runtime::crew`]'s kept ones).
//!
//! Every parallel kernel in this module gives each output element to exactly one
//! thread and computes it in a fixed order, so results do not depend on timing.

use std::sync::atomic::{AtomicUsize, Ordering};

static THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the workers of [`crate::tensor::optim::shards`]: each already has a core of its own,
    /// so the kernels they call run on the calling thread.
    static SERIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the kernels it calls on this thread only ([`threads`] is 1 inside).
pub fn serial<R>(f: impl FnOnce() -> R) -> R {
    let before = SERIAL.with(|s| s.replace(true));
    let r = f();
    SERIAL.with(|s| s.set(before));
    r
}

/// Threads the kernels use: 1 inside [`serial`], else [`set_threads`], else
/// `DEEPCHESS_THREADS`, else all cores.
pub fn threads() -> usize {
    if SERIAL.with(|s| s.get()) {
        return 1;
    }
    configured_threads()
}

/// The configured thread count, ignoring [`serial`].
pub fn configured_threads() -> usize {
    let t = THREADS.load(Ordering::Relaxed);
    if t != 0 {
        return t;
    }
    let t = std::env::var("DEEPCHESS_THREADS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&t| t > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    THREADS.store(t, Ordering::Relaxed);
    t
}

/// Sets the thread count (0 restores the default).
pub fn set_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// Splits `0..len` into at most `parts` contiguous ranges whose starts are multiples
/// of `align` (except that the last range ends at `len`).
pub fn split_ranges(len: usize, parts: usize, align: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1);
    let align = align.max(1);
    let chunk = len.div_ceil(parts).div_ceil(align) * align;
    let mut out = Vec::with_capacity(parts);
    let mut s = 0;
    while s < len {
        let e = (s + chunk.max(1)).min(len);
        out.push(s..e);
        s = e;
    }
    out
}

/// Runs `f(range)` for each range of [`split_ranges`]; the first range runs on the
/// calling thread, the others on the kept threads of [`crate::tensor::runtime::crew`].
pub fn parallel_ranges<F>(len: usize, parts: usize, align: usize, f: F)
where
    F: Fn(std::ops::Range<usize>) + Sync,
{
    let ranges = split_ranges(len, parts, align);
    if ranges.len() <= 1 {
        if let Some(r) = ranges.into_iter().next() {
            f(r);
        }
        return;
    }
    crate::tensor::runtime::crew::run(ranges.len(), &|i| f(ranges[i].clone()));
}

/// Runs `f` on every item, sharing the items out over two threads (each to the side with
/// less `size` so far, in order) when there are at least two [`threads`] and their sizes add
/// up to `min_total`; otherwise on the calling thread. For elementwise work on whole
/// parameters (optimizer steps, gradient sums): the result does not depend on the split.
pub(crate) fn for_each_in_two<T: Send>(items: Vec<T>, size: impl Fn(&T) -> usize, min_total: usize, f: impl Fn(T) + Sync) {
    let total: usize = items.iter().map(&size).sum();
    if total < min_total || threads() < 2 {
        items.into_iter().for_each(f);
        return;
    }
    let (mut left, mut right, mut nl, mut nr) = (Vec::new(), Vec::new(), 0, 0);
    for it in items {
        if nl <= nr {
            nl += size(&it);
            left.push(it);
        } else {
            nr += size(&it);
            right.push(it);
        }
    }
    let sides = [std::sync::Mutex::new(left), std::sync::Mutex::new(right)];
    crate::tensor::runtime::crew::run(2, &|i| {
        let items = std::mem::take(&mut *sides[i].lock().unwrap_or_else(|e| e.into_inner()));
        items.into_iter().for_each(&f);
    });
}

/// A raw pointer that may cross into scoped threads, for kernels whose threads each write
/// a disjoint part of one output buffer.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub(crate) *mut f32);
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// Through a method, so closures capture the whole (Sync) wrapper, not the raw field.
    pub(crate) fn ptr(self) -> *mut f32 {
        self.0
    }
}
