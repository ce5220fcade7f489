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

/// For the tests of kernels that can be helped (products, the sparse layer): runs
/// `round(board)` (which returns whether to go on) up to 200 times while another thread helps
/// on `board`; returns how many offers the helper joined.
#[cfg(test)]
pub(crate) fn with_helper(mut round: impl FnMut(&Board) -> bool) -> usize {
    let board = Board::new();
    let (stop, helped) = (std::sync::atomic::AtomicBool::new(false), AtomicUsize::new(0));
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
        struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
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
