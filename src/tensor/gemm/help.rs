//! Help between the shards of a training step ([`crate::tensor::shards`]): a thread that has
//! finished its own shards takes row blocks of the products the other shards are still
//! running, instead of waiting for them at the step's end.
//!
//! Why: each shard of a step runs on one core, and the step waits for the slowest one. On a
//! shared machine a core is often slowed for seconds at a time while the other is not, and
//! the step then lasts as long as the slow core's shard. Most of a shard's time is in the
//! products; from the moment one core is free, the products of the other shard are shared
//! out block by block, so the step ends close to the mean of the two cores' times.
//!
//! The unit of help is one row block of one packed B panel (BLIS's 3rd loop): the running
//! shard ("owner") packs the panel and offers it on the step's [`Board`]; the owner and any
//! helpers claim row blocks from a counter, each packing its block of A into its own
//! workspace, and the owner waits for the blocks in flight before the next panel. A tile is
//! computed the same way whoever runs its block, so help changes no bits.

use super::driver::{aligned, with_workspace, Panel, Tile};
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Rows per offered block: a multiple of every flavour's `mr` (6, 8, 4…), small enough
/// that a 256-row product has several blocks for a helper to claim.
pub(super) const MC: usize = 48;

/// An offered panel: what to compute, the next unclaimed block, and the helpers at work.
struct Offer {
    panel: Panel,
    next: AtomicUsize,
    helpers: AtomicUsize,
}

/// Where the shards of one step offer their panels. One offer at a time: a thread that is
/// itself running a shard is not free to help, so a second offer would find no taker.
#[derive(Default)]
pub struct Board {
    offer: AtomicPtr<Offer>,
    /// Taken to join an offer or to withdraw it, so a helper never joins a withdrawn one.
    lock: Mutex<()>,
}

thread_local! {
    /// The board of the step whose shard this thread is running (null outside one).
    static CURRENT: Cell<*const Board> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `board` as this thread's board: the products `f` runs offer their panels.
pub fn with_board<R>(board: &Board, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|c| c.replace(board));
    let r = f();
    CURRENT.with(|c| c.set(before));
    r
}

/// This thread's board, if it is running a shard of a step that has one.
pub(super) fn current() -> Option<&'static Board> {
    let p = CURRENT.with(|c| c.get());
    // Safety: `with_board` sets it only for the duration of a borrow of the board, and
    // every product that reads it returns within that call.
    (!p.is_null()).then(|| unsafe { &*p })
}

fn lock(m: &Mutex<()>) -> std::sync::MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Board {
    pub fn new() -> Board {
        Board::default()
    }

    /// Runs all row blocks of `panel`, offering them to helpers while it does; returns
    /// when every block is done. `ap` and `tile` are the owner's buffers.
    ///
    /// Safety: as [`Panel::block`].
    pub(super) unsafe fn share(&self, panel: &Panel, ap: *mut f32, tile: &mut Tile) {
        let blocks = panel.blocks();
        let offer = Offer { panel: *panel, next: AtomicUsize::new(0), helpers: AtomicUsize::new(0) };
        let me = &offer as *const Offer as *mut Offer;
        let offered = blocks > 1 && {
            let _g = lock(&self.lock);
            self.offer.compare_exchange(std::ptr::null_mut(), me, Ordering::AcqRel, Ordering::Acquire).is_ok()
        };
        // Withdraws the offer when this call ends, even by a panic: no helper may be left
        // holding a pointer into this frame.
        struct Withdraw<'a>(&'a Board, &'a Offer, bool);
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
                // to C are published by their Release in `help`).
                while self.1.helpers.load(Ordering::Acquire) > 0 {
                    std::hint::spin_loop();
                }
            }
        }
        let _withdraw = Withdraw(self, &offer, offered);
        loop {
            let i = offer.next.fetch_add(1, Ordering::Relaxed);
            if i >= blocks {
                break;
            }
            panel.block(i, ap, tile);
        }
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
            p as *const Offer
        };
        let offer = unsafe { &*offer };
        let panel = &offer.panel;
        with_workspace(|ws| {
            let ap = aligned(&mut ws.a, panel.mc * panel.kcb);
            let mut tile = Tile::new();
            loop {
                let i = offer.next.fetch_add(1, Ordering::Relaxed);
                if i >= panel.blocks() {
                    break;
                }
                // Safety: the owner checked the views; blocks are disjoint rows of C.
                unsafe { panel.block(i, ap, &mut tile) };
            }
        });
        offer.helpers.fetch_sub(1, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::gemm::{gemm_with, Trans};
    use crate::tensor::simd::Kernel;
    use crate::tensor::{Init, Rng};
    use std::sync::atomic::AtomicBool;

    /// Products run with a board while another thread helps give the same bits as without
    /// one, for every flavour, both transposes, beta 0 and 1, and odd shapes (edge tiles,
    /// several k blocks, a last row block shorter than the others); and the helper did take
    /// blocks (else the test would prove nothing).
    #[test]
    fn helped_products_are_the_same_bits() {
        let mut rng = Rng::new(11);
        let shapes = [(600, 400, 300), (257, 131, 517), (97, 33, 64), (300, 7, 260)];
        for kernel in Kernel::available_kernels() {
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
                for round in 0..200 {
                    for &(m, n, k) in &shapes {
                        for (ta, tb, beta) in [(Trans::N, Trans::N, 0.0), (Trans::T, Trans::N, 1.0), (Trans::N, Trans::T, 1.0)] {
                            let a = if ta == Trans::N { Init::HeNormal.matrix(m, k, &mut rng) } else { Init::HeNormal.matrix(k, m, &mut rng) };
                            let b = if tb == Trans::N { Init::HeNormal.matrix(k, n, &mut rng) } else { Init::HeNormal.matrix(n, k, &mut rng) };
                            let c0 = Init::HeNormal.matrix(m, n, &mut rng);
                            let (mut alone, mut shared) = (c0.clone(), c0.clone());
                            gemm_with(kernel, 1, ta, tb, 0.7, &a, &b, beta, &mut alone).unwrap();
                            with_board(&board, || gemm_with(kernel, 1, ta, tb, 0.7, &a, &b, beta, &mut shared)).unwrap();
                            assert_eq!(alone.data(), shared.data(), "{} {m}×{n}×{k} {ta:?}{tb:?} beta {beta}", kernel.name());
                        }
                    }
                    if round >= 2 && helped.load(Ordering::Relaxed) >= 20 {
                        break;
                    }
                }
            });
            assert!(helped.load(Ordering::Relaxed) > 0, "{}: the helper never took a block", kernel.name());
        }
        assert!(current().is_none(), "the board is this thread's only inside with_board");
    }
}
