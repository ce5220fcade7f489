//! The BLIS loop nest around the micro-kernels: the five loops jc / pc / ic / jr / ir,
//! with A and B packed into contiguous micro-panels on the way ([`super::pack`]). Works on
//! strided views (`A(i,p) = a[i*rsa + p*csa]`), so transposed operands cost nothing extra.

use super::kernels::{DirectKernel, Edge, MicroKernel, Store};
use super::pack::{copy_short, pack_a, pack_b};
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
    /// The whole tile with A read as stored (products of at most [`DIRECT_COLS`] columns; [`super::kernels`]' `micro_direct`), where the flavour has one.
    pub direct: Option<DirectKernel>,
}

/// A product of at most this many columns (whole B micro-panels) reads A as stored instead
/// of packing it: each value of A then feeds a few tiles (one on AVX-512, two on AVX2, four
/// on the portable kernel), one after the other, and
/// packing it would cost more than reading it where it is (the RBM's `W·hᵀ` and `Wᵀ·vᵀ`,
/// the batch in the columns). B's panels for all of them (`kc × 32` floats, 32 KB) stay
/// in L1 while A streams past.
pub(crate) const DIRECT_COLS: usize = 32;

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
    let direct = spec.direct.is_some() && n % nr == 0 && n <= DIRECT_COLS;
    // Shared blocks pack their A into the workspace of whoever runs them (below); a direct
    // product packs only its last rows when they are fewer than a tile's.
    let ap = if shared { std::ptr::null_mut() } else { aligned(&mut ws.a, kc_max * if direct { spec.mr } else { mc_max }) };
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
                direct,
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
                        let ap = aligned(&mut w.a, if direct { panel.spec.mr } else { panel.mc } * panel.kcb);
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
    /// A read as stored ([`Spec::direct`]) rather than packed, but for rows short of a tile.
    direct: bool,
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

    /// Row block `i`: packs its A block into `ap` (room for `mc × kcb`; a direct panel's
    /// for `mr × kcb`) and runs the 2nd and 1st loops. Every tile is computed the same way
    /// whichever thread runs the block, however the rows are blocked (`mc` is a multiple of
    /// `mr`) and whether A was packed, so help changes no bits.
    ///
    /// Safety: the panel's views are valid, `ap` is 64-byte aligned with room to spare.
    unsafe fn block(&self, i: usize, ap: *mut f32, tile: &mut Tile) {
        let mr = self.spec.mr;
        let ic = i * self.mc;
        let mcb = self.mc.min(self.m - ic);
        let Some(kernel) = self.spec.direct.filter(|_| self.direct) else {
            return self.packed(ic, mcb, ap, tile);
        };
        // Whole tiles read A where it is; the last rows, if fewer than a tile's, are packed
        // (zero-padded) for the edge kernels.
        let whole = mcb - mcb % mr;
        let (first, last, a, c) = (self.first, self.last, self.a, self.c);
        // Each tile of A read once from memory: its panels of B while it is in L1.
        for ir in (0..whole).step_by(mr) {
            let r = ic + ir;
            for jr in (0..self.ncb).step_by(self.spec.nr) {
                let bmp = self.bp.add(jr * self.kcb);
                let init = if first.init.is_null() { first.init } else { first.init.add(jr) };
                let ep = last.at(r, jr);
                let st = Store { init, relu: ep.relu, mask: ep.mask, mask_ld: ep.mask_ld, ..first };
                kernel(self.kcb, self.alpha, a.ptr.add(r * a.rs), a.rs, a.cs, bmp, c.ptr.add(r * c.ld + jr), c.ld, &st);
            }
        }
        if whole < mcb {
            self.packed(ic + whole, mcb - whole, ap, tile);
        }
    }

    /// Rows `ic..ic + mcb` of the panel's C from A packed into `ap`.
    ///
    /// Safety: as [`Panel::block`]'s; `ap` has room for `mcb` rows rounded up to `mr`.
    unsafe fn packed(&self, ic: usize, mcb: usize, ap: *mut f32, tile: &mut Tile) {
        let (spec, kcb, ncb, c) = (&self.spec, self.kcb, self.ncb, self.c);
        let (mr, nr) = (spec.mr, spec.nr);
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
                    // kernel would read past the matrices' edges. Only the tile's part
                    // inside C is filled: each element is summed on its own, so whatever
                    // an earlier tile left in the rest of the copy reaches no element that
                    // is copied back (filling all of it was most of a rank-32 update's
                    // edge cost).
                    let t = tile.0.as_mut_ptr();
                    let bias = if first.overwrite { first.init } else { std::ptr::null() };
                    if !first.overwrite || !bias.is_null() {
                        for i in 0..mrb {
                            let src = if bias.is_null() { cp.add(i * c.ld) as *const f32 } else { bias.add(jr) };
                            copy_short(src, t.add(i * nr), nrb);
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
