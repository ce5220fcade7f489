//! The BLIS loop nest around the micro-kernels: the five loops jc / pc / ic / jr / ir,
//! with A and B packed into contiguous micro-panels on the way ([`super::pack`]). Works on
//! strided views (`A(i,p) = a[i*rsa + p*csa]`), so transposed operands cost nothing extra.

use super::kernels::{Edge, MicroKernel, Store};
use super::pack::{pack_a, pack_b};
use super::view::{OutView, View};
use crate::tensor::runtime::help::{on_board, share};
use crate::tensor::kernels::simd::{gate, relu};
use std::sync::Mutex;

/// Depth of the packed blocks (k steps) of every flavour. Each element of C is summed from
/// zero over one such block, then added to C; [`super::gemm_small`] sums in the same blocks.
pub(crate) const KC: usize = 256;

/// Block sizes and micro-kernel of one instruction flavour.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    pub mr: usize,
    pub nr: usize,
    /// Depth of one packed block: a B micro-panel (kc × nr) should stay in L1.
    pub kc: usize,
    /// Rows of the packed A block (mc × kc), sized for L2.
    pub mc: usize,
    /// Columns of the packed B panel (kc × nc), sized for L3.
    pub nc: usize,
    pub kernel: MicroKernel,
    /// Smaller kernels on the same packed panels, smallest first, for edge tiles.
    pub edges: &'static [Edge],
}

/// Rows per block of a product whose blocks are shared with helpers: a multiple of every
/// flavour's `mr` (6, 8, 4…), small enough that a 256-row product has several blocks.
const SHARED_MC: usize = 48;

/// Packing buffers, pooled so that steady-state training allocates nothing.
#[derive(Default)]
pub(crate) struct Workspace {
    a: Vec<f32>,
    b: Vec<f32>,
    /// The edge tiles' copy of C, made once (zeroing a new one for every shared row
    /// block was a percent of a training step).
    tile: Option<Box<Tile>>,
}

impl Workspace {
    fn tile(&mut self) -> &mut Tile {
        self.tile.get_or_insert_with(|| Box::new(Tile::new()))
    }
}

static POOL: Mutex<Vec<Workspace>> = Mutex::new(Vec::new());

/// Runs `f` with a workspace taken from (and returned to) the global pool.
pub(crate) fn with_workspace<R>(f: impl FnOnce(&mut Workspace) -> R) -> R {
    let mut ws = POOL.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
    let r = f(&mut ws);
    if let Ok(mut p) = POOL.lock() {
        p.push(ws);
    }
    r
}

/// A 64-byte aligned pointer into `v` with room for `len` floats.
fn aligned(v: &mut Vec<f32>, len: usize) -> *mut f32 {
    // 15 floats for the alignment, and at least 16 after the block (a packing store may
    // spill two past it: `transpose6x8_avx`).
    if v.len() < len + 32 {
        v.resize(len + 32, 0.0);
    }
    let p = v.as_mut_ptr();
    let off = p.align_offset(64);
    unsafe { p.add(off.min(15)) }
}

#[repr(C, align(64))]
struct Tile([f32; 512]);

impl Tile {
    fn new() -> Tile {
        Tile([0.0; 512])
    }
}

/// What a product does besides `alpha·op(A)·op(B) (+ C)`, fused into its stores: the sums
/// start from a row (a bias) instead of zero when C is overwritten; the finished values go
/// through a ReLU and then a mask (positions as C's).
#[derive(Clone, Copy)]
pub(crate) struct Epilogue {
    /// Null for none; else C's columns' values (overwrite only).
    pub bias: *const f32,
    pub relu: bool,
    /// Null for none; else a matrix laid out as C with row stride `mask_ld`.
    pub mask: *const f32,
    pub mask_ld: usize,
}
unsafe impl Send for Epilogue {}
unsafe impl Sync for Epilogue {}

impl Epilogue {
    pub(crate) const NONE: Epilogue = Epilogue { bias: std::ptr::null(), relu: false, mask: std::ptr::null(), mask_ld: 0 };

    /// The epilogue of the part of C from row `r`, column `c` on.
    ///
    /// Safety: the part lies within the matrices the pointers cover.
    pub(crate) unsafe fn at(&self, r: usize, c: usize) -> Epilogue {
        Epilogue {
            bias: if self.bias.is_null() { self.bias } else { self.bias.add(c) },
            mask: if self.mask.is_null() { self.mask } else { self.mask.add(r * self.mask_ld + c) },
            ..*self
        }
    }
}

/// `C[m×n] += alpha · op(A)[m×k] · op(B)[k×n]` on one thread; with `overwrite`,
/// `C = alpha · op(A) · op(B)` and C is never read (beta = 0); `ep` as [`Epilogue`] says
/// (applied where each element's last k block is stored). Inside a shard of a step
/// with a board ([`crate::tensor::runtime::help`]), the row blocks of each packed B panel are
/// shared with threads that have finished their own shards.
///
/// Safety: the views are valid for the given sizes (checked by the caller).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm_serial(
    spec: &Spec,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: View,
    b: View,
    c: OutView,
    overwrite: bool,
    ep: &Epilogue,
    ws: &mut Workspace,
) {
    let nr = spec.nr;
    debug_assert!(spec.mr * nr <= 512);
    let shared = on_board();
    // Shared blocks are smaller, so that a helper arriving late still finds some.
    let mc = if shared { SHARED_MC.min(spec.mc) } else { spec.mc };
    let kc_max = spec.kc.min(k);
    let nc_max = spec.nc.min(n).div_ceil(nr) * nr;
    let mc_max = mc.min(m).div_ceil(spec.mr) * spec.mr;
    let bp = aligned(&mut ws.b, kc_max * nc_max);
    // Shared blocks pack their A into the workspace of whoever runs them (below).
    let ap = if shared { std::ptr::null_mut() } else { aligned(&mut ws.a, kc_max * mc_max) };
    // Safety of the raw parts below: `bp`, `ap` and the tile are disjoint fields of `ws`.
    let tile: *mut Tile = ws.tile();
    // 5th loop (jc): panels of nc columns of B and C.
    for jc in (0..n).step_by(spec.nc) {
        let ncb = spec.nc.min(n - jc);
        // 4th loop (pc): blocks of kc along the shared dimension; B panel packed once.
        for pc in (0..k).step_by(spec.kc) {
            let kcb = spec.kc.min(k - pc);
            let bv = View { ptr: b.ptr.add(pc * b.rs + jc * b.cs), ..b };
            pack_b(kcb, ncb, nr, bv, bp);
            let panel = Panel {
                spec: *spec,
                m,
                mc,
                kcb,
                ncb,
                alpha,
                a: View { ptr: a.ptr.add(pc * a.cs), ..a },
                bp,
                c: OutView { ptr: c.ptr.add(jc), ..c },
                // The bias where the sums start, the ReLU and mask where they end.
                first: Store { overwrite: overwrite && pc == 0, init: if pc == 0 && overwrite { ep.at(0, jc).bias } else { std::ptr::null() }, ..Store::plain(false) },
                last: if pc + kcb >= k { ep.at(0, jc) } else { Epilogue::NONE },
            };
            // 3rd loop (ic): blocks of mc rows of A, packed into L2-sized blocks.
            if shared {
                // Whoever runs a block packs its A into a workspace of its own.
                share(panel.blocks(), &|i| {
                    with_workspace(|w| {
                        let ap = aligned(&mut w.a, panel.mc * panel.kcb);
                        let tile: *mut Tile = w.tile();
                        // Safety: as this function's; blocks write disjoint rows of C.
                        unsafe { panel.block(i, ap, &mut *tile) }
                    })
                });
            } else {
                (0..panel.blocks()).for_each(|i| panel.block(i, ap, &mut *tile));
            }
        }
    }
}

/// One packed `kc × nc` panel of B and what its row blocks need: the 3rd loop's work.
#[derive(Clone, Copy)]
struct Panel {
    spec: Spec,
    m: usize,
    /// Rows per block (a multiple of `mr`).
    mc: usize,
    kcb: usize,
    ncb: usize,
    alpha: f32,
    /// A at this panel's first k step.
    a: View,
    /// The packed panel.
    bp: *const f32,
    /// C at this panel's first column.
    c: OutView,
    /// Where the sums start (C's values, zero or the bias at this panel's first column).
    first: Store,
    /// What is done to them when this is their last k block (at this panel's columns).
    last: Epilogue,
}
// Safety: the views are only read (A, the packed panel) or written in disjoint blocks (C).
unsafe impl Send for Panel {}
unsafe impl Sync for Panel {}

impl Panel {
    fn blocks(&self) -> usize {
        self.m.div_ceil(self.mc)
    }

    /// Row block `i`: packs its A block into `ap` (room for `mc × kcb`) and runs the 2nd
    /// and 1st loops. Every tile is computed the same way whichever thread runs the block
    /// and however the rows are blocked (`mc` is a multiple of `mr`), so help changes no bits.
    ///
    /// Safety: the panel's views are valid, `ap` is 64-byte aligned with room to spare.
    unsafe fn block(&self, i: usize, ap: *mut f32, tile: &mut Tile) {
        let (spec, kcb, ncb, c) = (&self.spec, self.kcb, self.ncb, self.c);
        let (mr, nr) = (spec.mr, spec.nr);
        let ic = i * self.mc;
        let mcb = self.mc.min(self.m - ic);
        let av = View { ptr: self.a.ptr.add(ic * self.a.rs), ..self.a };
        pack_a(mcb, kcb, mr, av, ap);
        let (first, last) = (self.first, self.last);
        let alpha = self.alpha;
        // 2nd loop (jr): one B micro-panel stays in L1 ...
        for jr in (0..ncb).step_by(nr) {
            let nrb = nr.min(ncb - jr);
            let bmp = self.bp.add(jr * kcb);
            // ... 1st loop (ir): while the A micro-panels stream past it.
            for ir in (0..mcb).step_by(mr) {
                let mrb = mr.min(mcb - ir);
                let amp = ap.add(ir * kcb);
                let cp = c.ptr.add((ic + ir) * c.ld + jr);
                let ep = last.at(ic + ir, jr);
                // A kernel that covers the tile exactly stores into C itself: the full one,
                // or an edge kernel of the tile's shape (a 256-row product's last 4 rows).
                let exact = if mrb == mr && nrb == nr {
                    Some(spec.kernel)
                } else {
                    spec.edges.iter().find(|e| e.rows == mrb && e.cols == nrb).map(|e| e.kernel)
                };
                if let Some(kern) = exact {
                    let init = if first.init.is_null() { first.init } else { first.init.add(jr) };
                    let st = Store { init, relu: ep.relu, mask: ep.mask, mask_ld: ep.mask_ld, ..first };
                    kern(kcb, alpha, amp, bmp, cp, c.ld, &st);
                } else {
                    // Edge tile: go through a full-size copy of C so the arithmetic
                    // (and so the result) is the same as for an interior tile; the bias
                    // goes into the copy and the ReLU and mask on the way back, as the
                    // kernel would read past the matrices' edges.
                    let t = tile.0.as_mut_ptr();
                    let bias = if first.overwrite { first.init } else { std::ptr::null() };
                    if !first.overwrite || !bias.is_null() {
                        for i in 0..mr {
                            for j in 0..nr {
                                *t.add(i * nr + j) = match (i < mrb && j < nrb, bias.is_null()) {
                                    (false, _) => 0.0,
                                    (true, true) => *cp.add(i * c.ld + j),
                                    (true, false) => *bias.add(jr + j),
                                };
                            }
                        }
                    }
                    // A mostly empty tile only needs its top-left part computed.
                    let kern = spec.edges.iter().find(|e| e.rows >= mrb && e.cols >= nrb).map_or(spec.kernel, |e| e.kernel);
                    kern(kcb, alpha, amp, bmp, t, nr, &Store::plain(first.overwrite && bias.is_null()));
                    for i in 0..mrb {
                        for j in 0..nrb {
                            let mut y = *t.add(i * nr + j);
                            if ep.relu {
                                y = relu(y);
                            }
                            if !ep.mask.is_null() {
                                y = gate(y, *ep.mask.add(i * ep.mask_ld + j));
                            }
                            *cp.add(i * c.ld + j) = y;
                        }
                    }
                }
            }
        }
    }
}
