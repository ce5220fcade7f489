//! Help between the shards of a training step ([`crate::tensor::optim::shards`]): a thread that has
//! finished its own shards takes blocks of the kernels the other shards are still running
//! (row blocks of the products, column blocks of the sparse layer), instead of waiting for
//! them at the step's end.
//!
//! Why: each shard of a step runs on one core, and the step waits for the slowest one. On a
//! shared machine a core is often slowed for seconds at a time while the other is not, and
//! the step then lasts as long as the slow core's shard. From the moment one core is free,
//! the other shard's kernels are shared out block by block, so the step ends close to the
//! mean of the two cores' times.
//!
//! A kernel that can be helped cuts its work into blocks that write disjoint outputs, each
//! computed the same way whichever thread runs it, and runs them through [`share`]: on the
//! step's [`Board`] it offers them, and it and any helpers claim blocks from a counter; it
//! returns when all are done. Help therefore changes no bits.

use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Offered work: `blocks` calls of `run`, the next unclaimed block, and the helpers at work.
struct Offer<'a> {
    run: &'a (dyn Fn(usize) + Sync),
    blocks: usize,
    next: AtomicUsize,
    helpers: AtomicUsize,
}

impl Offer<'_> {
    /// Claims and runs blocks until none is left.
    fn drain(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.blocks {
                break;
            }
            (self.run)(i);
        }
    }
}

/// Where the shards of one step offer their blocks. One offer at a time: a thread that is
/// itself running a shard is not free to help, so a second offer would find no taker.
#[derive(Default)]
pub struct Board {
    offer: AtomicPtr<Offer<'static>>,
    /// Taken to join an offer or to withdraw it, so a helper never joins a withdrawn one.
    lock: Mutex<()>,
}

thread_local! {
    /// The board of the step whose shard this thread is running (null outside one).
    static CURRENT: Cell<*const Board> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `board` as this thread's board: the kernels `f` runs offer their blocks.
pub fn with_board<R>(board: &Board, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|c| c.replace(board));
    let r = f();
    CURRENT.with(|c| c.set(before));
    r
}

/// Whether this thread runs a shard of a step with a board (its kernels then cut their
/// work into blocks and [`share`] them).
pub(crate) fn on_board() -> bool {
    !CURRENT.with(|c| c.get()).is_null()
}

/// Runs `run(i)` for every `i < blocks`, each exactly once; on a board, offering them to
/// helpers while it does. Returns when every block is done.
pub(crate) fn share(blocks: usize, run: &(dyn Fn(usize) + Sync)) {
    let p = CURRENT.with(|c| c.get());
    if p.is_null() || blocks < 2 {
        (0..blocks).for_each(run);
        return;
    }
    // Safety: `with_board` sets it only while the board is borrowed, and this call returns
    // within that borrow.
    unsafe { &*p }.share(blocks, run);
}

/// One round of a wait: a spin at first, then a yield, so that a waiting thread gives its
/// core to the one it waits for when the two share a core (more threads than cores).
pub(crate) fn pause(rounds: &mut u32) {
    if *rounds < 64 {
        *rounds += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

fn lock(m: &Mutex<()>) -> std::sync::MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Board {
    pub fn new() -> Board {
        Board::default()
    }

    fn share(&self, blocks: usize, run: &(dyn Fn(usize) + Sync)) {
        let offer = Offer { run, blocks, next: AtomicUsize::new(0), helpers: AtomicUsize::new(0) };
        // The lifetime is erased for the board; the offer is withdrawn (and its helpers
        // gone) before this frame ends, below.
        let me = &offer as *const Offer<'_> as *mut Offer<'static>;
        let offered = {
            let _g = lock(&self.lock);
            self.offer.compare_exchange(std::ptr::null_mut(), me, Ordering::AcqRel, Ordering::Acquire).is_ok()
        };
        // Withdraws the offer when this call ends, even by a panic: no helper may be left
        // holding a pointer into this frame.
        struct Withdraw<'a>(&'a Board, &'a AtomicUsize, bool);
        impl Drop for Withdraw<'_> {
            fn drop(&mut self) {
                if !self.2 {
                    return;
                }
                {
                    let _g = lock(&self.0.lock);
                    self.0.offer.store(std::ptr::null_mut(), Ordering::Release);
                }
                // No helper can join now; wait for those still on a block (their writes
                // are published by their Release in `help`).
                let mut rounds = 0;
                while self.1.load(Ordering::Acquire) > 0 {
                    pause(&mut rounds);
                }
            }
        }
        let _withdraw = Withdraw(self, &offer.helpers, offered);
        offer.drain();
    }

    /// Helps with the current offer, if any: claims its blocks until none is left.
    /// Returns whether there was one.
    pub fn help(&self) -> bool {
        if self.offer.load(Ordering::Acquire).is_null() {
            return false;
        }
        let offer = {
            let _g = lock(&self.lock);
            let p = self.offer.load(Ordering::Acquire);
            if p.is_null() {
                return false;
            }
            // Safety: the owner withdraws the offer under this lock and then waits for the
            // helpers counted here, so the offer outlives this use.
            unsafe { (*p).helpers.fetch_add(1, Ordering::AcqRel) };
            p as *const Offer<'static>
        };
        let offer = unsafe { &*offer };
        offer.drain();
        offer.helpers.fetch_sub(1, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::kernels::gemm::{gemm_with, Trans};
    use crate::tensor::kernels::simd::Kernel;
    use crate::tensor::layers::sparse::{backward_overwrite_with, backward_with, forward_with, SparseBatch};
    use crate::tensor::{Init, Matrix, Rng};
    use std::sync::atomic::AtomicBool;

    /// Runs `round(board)` (which returns whether to go on) up to 200 times while another
    /// thread helps on `board`; returns how many offers the helper joined.
    fn with_helper(mut round: impl FnMut(&Board) -> bool) -> usize {
        let board = Board::new();
        let (stop, helped) = (AtomicBool::new(false), AtomicUsize::new(0));
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Acquire) {
                    if board.help() {
                        helped.fetch_add(1, Ordering::Relaxed);
                    } else {
                        std::hint::spin_loop();
                    }
                }
            });
            // Stops the helper however this thread leaves the scope (a failed assert too).
            struct Stop<'a>(&'a AtomicBool);
            impl Drop for Stop<'_> {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Release);
                }
            }
            let _stop = Stop(&stop);
            for r in 0..200 {
                if !round(&board) || (r >= 2 && helped.load(Ordering::Relaxed) >= 20) {
                    break;
                }
            }
        });
        assert!(!on_board(), "the board is this thread's only inside with_board");
        helped.into_inner()
    }

    /// Products run with a board while another thread helps give the same bits as without
    /// one, for every flavour, both transposes, beta 0 and 1, and odd shapes (edge tiles,
    /// several k blocks, a last row block shorter than the others); and the helper did take
    /// blocks (else the test would prove nothing).
    #[test]
    fn helped_products_are_the_same_bits() {
        let mut rng = Rng::new(11);
        let shapes = [(600, 400, 300), (257, 131, 517), (97, 33, 64), (300, 7, 260)];
        for kernel in Kernel::available_kernels() {
            let helped = with_helper(|board| {
                for &(m, n, k) in &shapes {
                    for (ta, tb, beta) in [(Trans::N, Trans::N, 0.0), (Trans::T, Trans::N, 1.0), (Trans::N, Trans::T, 1.0)] {
                        let a = if ta == Trans::N { Init::HeNormal.matrix(m, k, &mut rng) } else { Init::HeNormal.matrix(k, m, &mut rng) };
                        let b = if tb == Trans::N { Init::HeNormal.matrix(k, n, &mut rng) } else { Init::HeNormal.matrix(n, k, &mut rng) };
                        let c0 = Init::HeNormal.matrix(m, n, &mut rng);
                        let (mut alone, mut shared) = (c0.clone(), c0.clone());
                        gemm_with(kernel, 1, ta, tb, 0.7, &a, &b, beta, &mut alone).unwrap();
                        with_board(board, || gemm_with(kernel, 1, ta, tb, 0.7, &a, &b, beta, &mut shared)).unwrap();
                        assert_eq!(alone.data(), shared.data(), "{} {m}×{n}×{k} {ta:?}{tb:?} beta {beta}", kernel.name());
                    }
                }
                true
            });
            assert!(helped > 0, "{}: the helper never took a block", kernel.name());
        }
    }

    /// The sparse layer's forward and backward (adding and overwriting), helped, give the
    /// same bits as alone, with a width that leaves a short last column block.
    #[test]
    fn helped_sparse_layers_are_the_same_bits() {
        let mut rng = Rng::new(12);
        let (features, n) = (301, 333);
        for kernel in Kernel::available_kernels() {
            let helped = with_helper(|board| {
                let rows: Vec<Vec<u32>> = (0..190)
                    .map(|_| {
                        let mut r: Vec<u32> = (0..1 + rng.below(40)).map(|_| rng.below(features as u64) as u32).collect();
                        r.sort_unstable();
                        r.dedup();
                        r
                    })
                    .collect();
                let x = SparseBatch::from_rows(features, &rows).unwrap();
                let w = Init::HeNormal.matrix(features, n, &mut rng);
                let b = Init::HeNormal.matrix(1, n, &mut rng);
                let dy = Init::HeNormal.matrix(rows.len(), n, &mut rng);
                let (mut y0, mut y1) = (Matrix::default(), Matrix::default());
                forward_with(kernel, 1, &x, &w, &b, &mut y0).unwrap();
                with_board(board, || forward_with(kernel, 1, &x, &w, &b, &mut y1)).unwrap();
                assert_eq!(y0.data(), y1.data(), "{} forward", kernel.name());
                for overwrite in [false, true] {
                    let (mut dw0, mut db0) = (Init::HeNormal.matrix(features, n, &mut rng), Matrix::zeros(1, n));
                    let (mut dw1, mut db1) = (dw0.clone(), db0.clone());
                    let back = if overwrite { backward_overwrite_with } else { backward_with };
                    back(kernel, 1, &x, &dy, &mut dw0, &mut db0).unwrap();
                    with_board(board, || back(kernel, 1, &x, &dy, &mut dw1, &mut db1)).unwrap();
                    assert_eq!(dw0.data(), dw1.data(), "{} backward, overwrite {overwrite}", kernel.name());
                    assert_eq!(db0.data(), db1.data(), "{} bias backward", kernel.name());
                }
                true
            });
            assert!(helped > 0, "{}: the helper never took a block", kernel.name());
        }
    }
}
