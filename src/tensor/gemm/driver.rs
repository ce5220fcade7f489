//! The BLIS loop nest around the micro-kernels: packing of A and B into contiguous
//! micro-panels, and the five loops jc / pc / ic / jr / ir. Works on strided views
//! (`A(i,p) = a[i*rsa + p*csa]`), so transposed operands cost nothing extra.

use super::kernels::{Edge, MicroKernel, Store};
use crate::tensor::help::{on_board, share};
use crate::tensor::simd::{gate, relu};
use std::sync::Mutex;

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

/// A strided read-only operand. `Send` because the GEMM entry point checked bounds
/// and threads only read it.
#[derive(Clone, Copy)]
pub(crate) struct View {
    pub ptr: *const f32,
    pub rs: usize,
    pub cs: usize,
}
unsafe impl Send for View {}
unsafe impl Sync for View {}

/// The output: row-major with row stride `ld`; threads write disjoint tiles.
#[derive(Clone, Copy)]
pub(crate) struct OutView {
    pub ptr: *mut f32,
    pub ld: usize,
}
unsafe impl Send for OutView {}
unsafe impl Sync for OutView {}

/// Rows per block of a product whose blocks are shared with helpers: a multiple of every
/// flavour's `mr` (6, 8, 4…), small enough that a 256-row product has several blocks.
const SHARED_MC: usize = 48;

/// Packing buffers, pooled so that steady-state training allocates nothing.
#[derive(Default)]
pub(crate) struct Workspace {
    a: Vec<f32>,
    b: Vec<f32>,
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

/// Copies `n` floats (a micro-panel row: at most 16 or so). An inline loop: the library
/// `memcpy` call that `copy_nonoverlapping` becomes for a run-time length cost more than
/// the copy at these sizes (a sixth of a batch-32 GEMM's time went to it).
#[inline(always)]
unsafe fn copy_short(src: *const f32, dst: *mut f32, n: usize) {
    for i in 0..n {
        *dst.add(i) = *src.add(i);
    }
}

/// Packs the `mc × kc` block of A into micro-panels of `mr` rows: within a panel,
/// the `mr` values of one k step are adjacent. Short panels are zero-padded.
unsafe fn pack_a(mc: usize, kc: usize, mr: usize, a: View, dst: *mut f32) {
    for i0 in (0..mc).step_by(mr) {
        let h = mr.min(mc - i0);
        let d = dst.add(i0 * kc);
        let src = a.ptr.add(i0 * a.rs);
        if a.rs == 1 {
            // op(A) = Aᵀ of a row-major matrix: the mr values of a k step are contiguous.
            #[cfg(target_arch = "x86_64")]
            if mr == 6 && h == 6 && std::arch::is_x86_feature_detected!("avx") {
                // Four and two floats per k step in two moves (the element loop below was
                // a third of the packing of a weight gradient's `Xᵀ·G`).
                copy6_avx(src, a.cs, d, kc);
                continue;
            }
            for p in 0..kc {
                let s = src.add(p * a.cs);
                let dp = d.add(p * mr);
                copy_short(s, dp, h);
                for i in h..mr {
                    *dp.add(i) = 0.0;
                }
            }
        } else {
            // Row-major A, six rows (the AVX2 tile), eight k steps at a time: transposed in
            // registers (the element-by-element loop below was a quarter of the driver's
            // time in training steps); the last `kc % 8` steps go through that loop.
            #[cfg(target_arch = "x86_64")]
            if mr == 6 && h == 6 && a.cs == 1 && kc >= 8 && std::arch::is_x86_feature_detected!("avx") {
                let k8 = kc - kc % 8;
                for p in (0..k8).step_by(8) {
                    transpose6x8_avx(src.add(p), a.rs, d.add(p * 6));
                }
                for i in 0..6 {
                    let s = src.add(i * a.rs);
                    for p in k8..kc {
                        *d.add(p * 6 + i) = *s.add(p);
                    }
                }
                continue;
            }
            // Row-major A: read each row contiguously, scatter with stride mr.
            scatter(h, mr, kc, src, a.rs, a.cs, d);
        }
    }
}

/// One micro-panel `width` wide packed element by element: run `i < h` of the source
/// (starting `i·between` floats after `src`, one value every `step`) read in order and
/// scattered with stride `width` (`d[p·width + i]`); the lanes from `h` to `width` zeroed.
unsafe fn scatter(h: usize, width: usize, kc: usize, src: *const f32, between: usize, step: usize, d: *mut f32) {
    for i in 0..h {
        let s = src.add(i * between);
        for p in 0..kc {
            *d.add(p * width + i) = *s.add(p * step);
        }
    }
    for i in h..width {
        for p in 0..kc {
            *d.add(p * width + i) = 0.0;
        }
    }
}

/// Packs the `kc × nc` panel of B into micro-panels of `nr` columns: within a panel,
/// the `nr` values of one k step are adjacent. Short panels are zero-padded.
unsafe fn pack_b(kc: usize, nc: usize, nr: usize, b: View, dst: *mut f32) {
    if b.cs == 1 {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            // Whole 256-bit moves (the portable loop below compiles to 128-bit ones, and its
            // stores were most of the packing of `X·W`).
            return deal_rows_avx(kc, nc, nr, b, dst);
        }
        return deal_rows(kc, nc, nr, b, dst);
    }
    for j0 in (0..nc).step_by(nr) {
        let w = nr.min(nc - j0);
        let d = dst.add(j0 * kc);
        let src = b.ptr.add(j0 * b.cs);
        // op(B) = Bᵀ of a row-major matrix: read each stored row contiguously.
        #[cfg(target_arch = "x86_64")]
        if b.rs == 1 && w == nr && nr.is_multiple_of(8) && kc >= 8 && std::arch::is_x86_feature_detected!("avx") {
            // Whole 8×8 blocks in registers (a third of a batch-32 `h·Wᵀ` went to the
            // element-by-element loop below); the last `kc % 8` steps go through it.
            let k8 = kc - kc % 8;
            for jb in (0..nr).step_by(8) {
                for p in (0..k8).step_by(8) {
                    transpose8x8_avx(src.add(jb * b.cs + p), b.cs, d.add(p * nr + jb), nr);
                }
            }
            for j in 0..w {
                let s = src.add(j * b.cs);
                for p in k8..kc {
                    *d.add(p * nr + j) = *s.add(p);
                }
            }
            continue;
        }
        scatter(w, nr, kc, src, b.cs, b.rs, d);
    }
}

/// Row-major B read row by row (one sequential stream, which the prefetcher follows) and
/// dealt out to the micro-panels: panel by panel, each k step would touch a new line of a
/// matrix that is usually out of L2 by now.
#[inline(always)]
unsafe fn deal_rows(kc: usize, nc: usize, nr: usize, b: View, dst: *mut f32) {
    for p in 0..kc {
        let src = b.ptr.add(p * b.rs);
        for j0 in (0..nc).step_by(nr) {
            let w = nr.min(nc - j0);
            let dp = dst.add(j0 * kc + p * nr);
            copy_short(src.add(j0), dp, w);
            for j in w..nr {
                *dp.add(j) = 0.0;
            }
        }
    }
}

/// [`deal_rows`] with whole panels moved eight floats at a time.
///
/// Safety: as [`deal_rows`]'s, and AVX is available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn deal_rows_avx(kc: usize, nc: usize, nr: usize, b: View, dst: *mut f32) {
    use std::arch::x86_64::{_mm256_loadu_ps, _mm256_storeu_ps};
    if !nr.is_multiple_of(8) {
        return deal_rows(kc, nc, nr, b, dst);
    }
    let whole = nc - nc % nr;
    for p in 0..kc {
        let src = b.ptr.add(p * b.rs);
        for j0 in (0..whole).step_by(nr) {
            let dp = dst.add(j0 * kc + p * nr);
            for j in (0..nr).step_by(8) {
                _mm256_storeu_ps(dp.add(j), _mm256_loadu_ps(src.add(j0 + j)));
            }
        }
        if whole < nc {
            let w = nc - whole;
            let dp = dst.add(whole * kc + p * nr);
            copy_short(src.add(whole), dp, w);
            for j in w..nr {
                *dp.add(j) = 0.0;
            }
        }
    }
}

/// Eight rows of eight floats transposed in registers: `out[c]` holds column `c`.
///
/// Safety: AVX is available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn transpose8(r: [std::arch::x86_64::__m256; 8]) -> [std::arch::x86_64::__m256; 8] {
    use std::arch::x86_64::*;
    // Pairs of rows interleaved, then pairs of pairs, then the 128-bit halves swapped.
    let (t0, t1) = (_mm256_unpacklo_ps(r[0], r[1]), _mm256_unpackhi_ps(r[0], r[1]));
    let (t2, t3) = (_mm256_unpacklo_ps(r[2], r[3]), _mm256_unpackhi_ps(r[2], r[3]));
    let (t4, t5) = (_mm256_unpacklo_ps(r[4], r[5]), _mm256_unpackhi_ps(r[4], r[5]));
    let (t6, t7) = (_mm256_unpacklo_ps(r[6], r[7]), _mm256_unpackhi_ps(r[6], r[7]));
    let (s0, s1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2));
    let (s2, s3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
    let (s4, s5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6));
    let (s6, s7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
    [
        _mm256_permute2f128_ps::<0x20>(s0, s4),
        _mm256_permute2f128_ps::<0x20>(s1, s5),
        _mm256_permute2f128_ps::<0x20>(s2, s6),
        _mm256_permute2f128_ps::<0x20>(s3, s7),
        _mm256_permute2f128_ps::<0x31>(s0, s4),
        _mm256_permute2f128_ps::<0x31>(s1, s5),
        _mm256_permute2f128_ps::<0x31>(s2, s6),
        _mm256_permute2f128_ps::<0x31>(s3, s7),
    ]
}

/// `dst[c·ld_dst + r] = src[r·ld_src + c]` for an 8×8 block (unaligned loads and stores).
///
/// Safety: AVX is available, and both blocks are valid for 8 rows of 8 floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose8x8_avx(src: *const f32, ld_src: usize, dst: *mut f32, ld_dst: usize) {
    use std::arch::x86_64::*;
    let r = |i: usize| src.add(i * ld_src);
    let rows = [
        _mm256_loadu_ps(r(0)), _mm256_loadu_ps(r(1)), _mm256_loadu_ps(r(2)), _mm256_loadu_ps(r(3)),
        _mm256_loadu_ps(r(4)), _mm256_loadu_ps(r(5)), _mm256_loadu_ps(r(6)), _mm256_loadu_ps(r(7)),
    ];
    for (c, v) in transpose8(rows).into_iter().enumerate() {
        _mm256_storeu_ps(dst.add(c * ld_dst), v);
    }
}

/// Six rows of eight floats (row stride `ld_src`) transposed into eight groups of six at
/// `dst` (`dst[c·6 + r] = src[r·ld_src + c]`). Each group is stored as eight floats, the
/// last two of which the next group overwrites; the last group's two spill into the next
/// six floats after the block, which the caller writes later or leaves in slack.
///
/// Safety: AVX is available, the six rows are valid for eight floats, and `dst` for 50.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose6x8_avx(src: *const f32, ld_src: usize, dst: *mut f32) {
    use std::arch::x86_64::*;
    let r = |i: usize| src.add(i * ld_src);
    let z = _mm256_setzero_ps();
    let rows = [
        _mm256_loadu_ps(r(0)), _mm256_loadu_ps(r(1)), _mm256_loadu_ps(r(2)), _mm256_loadu_ps(r(3)),
        _mm256_loadu_ps(r(4)), _mm256_loadu_ps(r(5)), z, z,
    ];
    for (c, v) in transpose8(rows).into_iter().enumerate() {
        _mm256_storeu_ps(dst.add(c * 6), v);
    }
}

/// `dst[p·6 .. p·6+6] = src[p·ld .. p·ld+6]` for `p < kc`: six floats a step as a 4-float
/// and a 2-float move, reading nothing past the six.
///
/// Safety: AVX is available, each source run is valid for six floats, `dst` for `6·kc`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy6_avx(src: *const f32, ld: usize, dst: *mut f32, kc: usize) {
    use std::arch::x86_64::*;
    for p in 0..kc {
        let s = src.add(p * ld);
        let d = dst.add(p * 6);
        _mm_storeu_ps(d, _mm_loadu_ps(s));
        _mm_store_sd(d.add(4) as *mut f64, _mm_load_sd(s.add(4) as *const f64));
    }
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
/// with a board ([`crate::tensor::help`]), the row blocks of each packed B panel are
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
    let mut tile = Tile::new();
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
                        // Safety: as this function's; blocks write disjoint rows of C.
                        unsafe { panel.block(i, ap, &mut Tile::new()) }
                    })
                });
            } else {
                (0..panel.blocks()).for_each(|i| panel.block(i, ap, &mut tile));
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
