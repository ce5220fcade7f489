//! GEMM micro-kernels: one `#[inline(always)]` register-blocked kernel generic over
//! the instruction flavour ([`Flavour`], shared with the inference layers), instantiated by
//! thin `#[target_feature]` wrappers. Each computes `C[MR×NR] += alpha · Ap[MR×kc] ·
//! Bp[kc×NR]` from packed panels (A: MR values per k step, B: NR values per k step); the
//! direct ones (`micro_direct`) read A through its strides instead.

use crate::tensor::kernels::simd::{Flavour, Scalar};

/// The register-blocked micro-kernel: `MR` rows × `NV` vectors of accumulators stay in
/// registers for the whole `kc` loop; C is read and written once per tile. `MA` and `NB`
/// are the packed panels' strides (floats per k step of A and B): a smaller kernel
/// (`MR < MA` or `NV*LANES < NB`) runs on the top-left part of the panels, which saves
/// work on mostly empty edge tiles.
/// How the sums meet C is `st`'s ([`Store`]).
///
/// Safety: `a` holds `kc*MA` floats, `b` holds `kc*NB`, `c` is valid for `MR` rows of
/// `NV*LANES` floats with row stride `ldc`, and `st`'s row and mask for as many.
#[inline(always)]
unsafe fn micro<F: Flavour, const MR: usize, const NV: usize, const MA: usize, const NB: usize>(
    kc: usize,
    alpha: f32,
    mut a: *const f32,
    mut b: *const f32,
    c: *mut f32,
    ldc: usize,
    st: &Store,
) {
    prefetch_tile::<F, MR, NV>(c, ldc, st);
    let mut acc = [[F::zero(); NV]; MR];
    for _ in 0..kc {
        let mut bv = [F::zero(); NV];
        for (v, x) in bv.iter_mut().enumerate() {
            *x = F::load(b.add(v * F::LANES));
        }
        for (i, row) in acc.iter_mut().enumerate() {
            let ai = F::splat(*a.add(i));
            for (v, x) in row.iter_mut().enumerate() {
                *x = F::fmadd(ai, bv[v], *x);
            }
        }
        a = a.add(MA);
        b = b.add(NB);
    }
    store::<F, MR, NV>(acc, alpha, c, ldc, st)
}

/// [`micro`] with A read where it is stored, `A(i, p) = a[i*rs + p*cs]`, instead of from a
/// packed panel: for a product of a few B micro-panels' columns (at most 32), each value of
/// A is used by that many tiles only, so packing it would copy all of A to read it once or
/// twice. The same
/// operations in the same order as [`micro`], so the same bits.
///
/// Safety: `a` is valid for `MR` rows and `kc` steps through its strides, `b` holds
/// `kc*NB` floats; `c` and `st` as [`micro`]'s.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn micro_direct<F: Flavour, const MR: usize, const NV: usize, const NB: usize>(
    kc: usize,
    alpha: f32,
    mut a: *const f32,
    rs: usize,
    cs: usize,
    mut b: *const f32,
    c: *mut f32,
    ldc: usize,
    st: &Store,
) {
    const PF: usize = 16;
    prefetch_tile::<F, MR, NV>(c, ldc, st);
    let mut acc = [[F::zero(); NV]; MR];
    for _ in 0..kc {
        let mut bv = [F::zero(); NV];
        for (v, x) in bv.iter_mut().enumerate() {
            *x = F::load(b.add(v * F::LANES));
        }
        // The lines `PF` steps on: rows of a transposed A are too far apart (a 600-wide W:
        // 2,400 bytes) for the hardware's stride prefetcher, which left this loop waiting on
        // L2. A prefetch does not fault, and `wrapping_add` makes no claim past the matrix.
        F::prefetch(a.wrapping_add(PF * cs));
        F::prefetch(a.wrapping_add(PF * cs + (MR - 1) * rs));
        for (i, row) in acc.iter_mut().enumerate() {
            let ai = F::splat(*a.add(i * rs));
            for (v, x) in row.iter_mut().enumerate() {
                *x = F::fmadd(ai, bv[v], *x);
            }
        }
        // Past the last step this points beyond A (its rows are `cs` apart): never read.
        a = a.wrapping_add(cs);
        b = b.add(NB);
    }
    store::<F, MR, NV>(acc, alpha, c, ldc, st)
}

/// Asks for the lines of C (or the mask) the tile will read after its k loop, so that a
/// tile of a large C (a weight gradient accumulated in place) does not wait on memory.
///
/// Safety: as [`micro`]'s.
#[inline(always)]
pub(super) unsafe fn prefetch_tile<F: Flavour, const MR: usize, const NV: usize>(c: *mut f32, ldc: usize, st: &Store) {
    if !st.overwrite {
        for i in 0..MR {
            F::prefetch(c.add(i * ldc));
            F::prefetch(c.add(i * ldc + NV * F::LANES - 1));
        }
    }
    if !st.mask.is_null() {
        for i in 0..MR {
            F::prefetch(st.mask.add(i * st.mask_ld));
            F::prefetch(st.mask.add(i * st.mask_ld + NV * F::LANES - 1));
        }
    }
}

/// Stores a finished tile of sums as `st` says.
///
/// Safety: as [`micro`]'s.
#[inline(always)]
pub(super) unsafe fn store<F: Flavour, const MR: usize, const NV: usize>(acc: [[F::V; NV]; MR], alpha: f32, c: *mut f32, ldc: usize, st: &Store) {
    // One store loop per kind of store, its choices made once: with them inside the loop
    // the compiler kept the accumulators in a stack array in some of its variants, zeroed
    // by a library `memset` at every call (a percent and a half of a training step).
    let (old, mask) = ((st.overwrite, st.init.is_null()), !st.mask.is_null());
    match (old, st.relu, mask) {
        ((false, _), false, false) => store_tile::<F, MR, NV, FROM_C, false, false>(acc, alpha, c, ldc, st),
        ((true, true), false, false) => store_tile::<F, MR, NV, FROM_ZERO, false, false>(acc, alpha, c, ldc, st),
        ((true, false), false, false) => store_tile::<F, MR, NV, FROM_ROW, false, false>(acc, alpha, c, ldc, st),
        ((false, _), true, false) => store_tile::<F, MR, NV, FROM_C, true, false>(acc, alpha, c, ldc, st),
        ((true, true), true, false) => store_tile::<F, MR, NV, FROM_ZERO, true, false>(acc, alpha, c, ldc, st),
        ((true, false), true, false) => store_tile::<F, MR, NV, FROM_ROW, true, false>(acc, alpha, c, ldc, st),
        ((false, _), _, true) => store_tile::<F, MR, NV, FROM_C, false, true>(acc, alpha, c, ldc, st),
        ((true, true), _, true) => store_tile::<F, MR, NV, FROM_ZERO, false, true>(acc, alpha, c, ldc, st),
        ((true, false), _, true) => store_tile::<F, MR, NV, FROM_ROW, false, true>(acc, alpha, c, ldc, st),
    }
}

/// Where a tile's sums start: C's values, zero, or a row (`st.init`).
const FROM_C: u8 = 0;
const FROM_ZERO: u8 = 1;
const FROM_ROW: u8 = 2;

/// Stores a finished tile: `alpha·acc` added to what `FROM` says, then a ReLU when `RELU`
/// (in the masked variants, when `st.relu` says: a mask with a ReLU is rare), then the
/// mask when `MASK`.
///
/// Safety: as [`micro`]'s.
#[inline(always)]
unsafe fn store_tile<F: Flavour, const MR: usize, const NV: usize, const FROM: u8, const RELU: bool, const MASK: bool>(
    acc: [[F::V; NV]; MR],
    alpha: f32,
    c: *mut f32,
    ldc: usize,
    st: &Store,
) {
    const { assert!(MR <= 12, "store_tile unrolls at most 12 rows") };
    let al = F::splat(alpha);
    // Rows by literal index, so that every accumulator is named by a constant: a loop over
    // 24 of them was past the compiler's unrolling limit and went through memory.
    macro_rules! rows {
        ($($i:literal)*) => {
            $(if $i < MR {
                let row = acc[$i];
                for v in 0..NV {
                    let p = c.add($i * ldc + v * F::LANES);
                    // fma(alpha, acc, 0) rounds like alpha·acc: same bits either way; and
                    // starting from a row is what adding the sums to C holding that row does.
                    let old = match FROM {
                        FROM_C => F::load(p),
                        FROM_ZERO => F::zero(),
                        _ => F::load(st.init.add(v * F::LANES)),
                    };
                    let mut y = F::fmadd(al, row[v], old);
                    if RELU || (MASK && st.relu) {
                        y = F::max0(y);
                    }
                    if MASK {
                        y = F::gate(y, F::load(st.mask.add($i * st.mask_ld + v * F::LANES)));
                    }
                    F::store(p, y);
                }
            })*
        };
    }
    rows!(0 1 2 3 4 5 6 7 8 9 10 11);
}

/// How a micro-kernel's sums meet C: where they start (C's values, zero or a row) and what
/// is done to them before they are stored (a ReLU, a mask): a layer's bias and activation,
/// or an activation's backward, done on the tile while it is in registers instead of in
/// passes over C of their own.
#[derive(Clone, Copy)]
pub(crate) struct Store {
    /// C is not read: the sums start from `init` when it is not null (one row of the tile's
    /// width, the same for every row: a layer's bias), from zero otherwise.
    pub overwrite: bool,
    pub init: *const f32,
    /// `max(y, 0)` on what is stored.
    pub relu: bool,
    /// When not null, what is stored is kept only where this matrix (row stride `mask_ld`,
    /// the tile's shape) is positive: zero elsewhere.
    pub mask: *const f32,
    pub mask_ld: usize,
}

impl Store {
    /// C read and added to (or overwritten), nothing fused.
    pub(crate) const fn plain(overwrite: bool) -> Store {
        Store { overwrite, init: std::ptr::null(), relu: false, mask: std::ptr::null(), mask_ld: 0 }
    }
}

/// Signature shared by all micro-kernels (see [`micro`] for the contract).
pub(crate) type MicroKernel =
    unsafe fn(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store);

/// Signature of the kernels that read A as stored ([`micro_direct`]): a whole `MR × NR` tile.
pub(crate) type DirectKernel = unsafe fn(
    kc: usize,
    alpha: f32,
    a: *const f32,
    rs: usize,
    cs: usize,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    st: &Store,
);

/// One micro-kernel and the (top-left) part of a packed tile it computes.
#[derive(Clone, Copy)]
pub(crate) struct Edge {
    pub rows: usize,
    pub cols: usize,
    pub kernel: MicroKernel,
}

/// Scalar tile: 4 × 8 (32 accumulators; small enough for 16 registers after SLP).
pub(crate) const SCALAR_MR: usize = 4;
pub(crate) const SCALAR_NR: usize = 8;
pub(crate) unsafe fn kernel_scalar(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
    micro::<Scalar, 4, 8, 4, 8>(kc, alpha, a, b, c, ldc, st)
}
pub(crate) unsafe fn direct_scalar(kc: usize, alpha: f32, a: *const f32, rs: usize, cs: usize, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
    micro_direct::<Scalar, 4, 8, 8>(kc, alpha, a, rs, cs, b, c, ldc, st)
}
unsafe fn scalar_4x4(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
    micro::<Scalar, 4, 4, 4, 8>(kc, alpha, a, b, c, ldc, st)
}
unsafe fn scalar_2x8(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
    micro::<Scalar, 2, 8, 4, 8>(kc, alpha, a, b, c, ldc, st)
}
unsafe fn scalar_2x4(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
    micro::<Scalar, 2, 4, 4, 8>(kc, alpha, a, b, c, ldc, st)
}
/// Smaller scalar kernels for edge tiles.
pub(crate) const SCALAR_EDGES: &[Edge] = &[
    Edge { rows: 2, cols: 4, kernel: scalar_2x4 },
    Edge { rows: 4, cols: 4, kernel: scalar_4x4 },
    Edge { rows: 2, cols: 8, kernel: scalar_2x8 },
];

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::{micro, micro_direct, Edge, Store};
    use crate::tensor::kernels::simd::{Avx2, Avx512, Fma128};

    /// Thin `#[target_feature]` wrapper around [`micro`] for one flavour and tile.
    macro_rules! wrapper {
        ($name:ident, $feat:literal, $fl:ty, $mr:literal, $nv:literal, $ma:expr, $nb:expr) => {
            #[target_feature(enable = $feat)]
            pub(crate) unsafe fn $name(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
                micro::<$fl, $mr, $nv, $ma, $nb>(kc, alpha, a, b, c, ldc, st)
            }
        };
    }

    /// A [`super::micro_direct`] wrapper: the flavour's whole tile with A read as stored.
    macro_rules! direct {
        ($name:ident, $feat:literal, $fl:ty, $mr:literal, $nv:literal, $nb:expr) => {
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub(crate) unsafe fn $name(kc: usize, alpha: f32, a: *const f32, rs: usize, cs: usize, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
                micro_direct::<$fl, $mr, $nv, $nb>(kc, alpha, a, rs, cs, b, c, ldc, st)
            }
        };
    }

    /// AVX2 tile: 6 × 16 = 12 ymm accumulators + 2 for B + 1 broadcast (of 16).
    pub(crate) const AVX2_MR: usize = 6;
    pub(crate) const AVX2_NR: usize = 16;
    wrapper!(kernel_avx2, "avx2,fma", Avx2, 6, 2, AVX2_MR, AVX2_NR);
    direct!(direct_avx2, "avx2,fma", Avx2, 6, 2, AVX2_NR);
    wrapper!(avx2_6x8, "avx2,fma", Avx2, 6, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_3x16, "avx2,fma", Avx2, 3, 2, AVX2_MR, AVX2_NR);
    wrapper!(avx2_3x8, "avx2,fma", Avx2, 3, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_4x16, "avx2,fma", Avx2, 4, 2, AVX2_MR, AVX2_NR);
    wrapper!(avx2_4x8, "avx2,fma", Avx2, 4, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_2x16, "avx2,fma", Avx2, 2, 2, AVX2_MR, AVX2_NR);
    wrapper!(avx2_2x8, "avx2,fma", Avx2, 2, 1, AVX2_MR, AVX2_NR);
    // 4-column tiles on 128-bit vectors: the last columns of a 100-wide product (6 × 16 + 4)
    // store into C directly instead of through a copy of a whole tile.
    wrapper!(avx2_6x4, "avx2,fma", Fma128, 6, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_4x4, "avx2,fma", Fma128, 4, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_3x4, "avx2,fma", Fma128, 3, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_2x4, "avx2,fma", Fma128, 2, 1, AVX2_MR, AVX2_NR);
    /// Smallest first: the copy path takes the first that covers a tile. The 4- and 2-row
    /// ones fit the last tiles of 256-, 128- and 200-row products exactly; the 4-column ones
    /// the last columns of 100-wide products.
    pub(crate) const AVX2_EDGES: &[Edge] = &[
        Edge { rows: 2, cols: 4, kernel: avx2_2x4 },
        Edge { rows: 3, cols: 4, kernel: avx2_3x4 },
        Edge { rows: 4, cols: 4, kernel: avx2_4x4 },
        Edge { rows: 6, cols: 4, kernel: avx2_6x4 },
        Edge { rows: 2, cols: 8, kernel: avx2_2x8 },
        Edge { rows: 3, cols: 8, kernel: avx2_3x8 },
        Edge { rows: 2, cols: 16, kernel: avx2_2x16 },
        Edge { rows: 4, cols: 8, kernel: avx2_4x8 },
        Edge { rows: 6, cols: 8, kernel: avx2_6x8 },
        Edge { rows: 3, cols: 16, kernel: avx2_3x16 },
        Edge { rows: 4, cols: 16, kernel: avx2_4x16 },
    ];

    /// AVX-512 tile: 12 × 32 = 24 zmm accumulators + 2 for B + 1 broadcast (of 32).
    pub(crate) const AVX512_MR: usize = 12;
    pub(crate) const AVX512_NR: usize = 32;
    wrapper!(kernel_avx512, "avx512f", Avx512, 12, 2, AVX512_MR, AVX512_NR);
    direct!(direct_avx512, "avx512f", Avx512, 12, 2, AVX512_NR);
    wrapper!(avx512_12x16, "avx512f", Avx512, 12, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_6x32, "avx512f", Avx512, 6, 2, AVX512_MR, AVX512_NR);
    wrapper!(avx512_6x16, "avx512f", Avx512, 6, 1, AVX512_MR, AVX512_NR);
    // 8-wide edges use ymm registers (AVX-512F CPUs have AVX2 and FMA).
    wrapper!(avx512_12x8, "avx512f,avx2,fma", Avx2, 12, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_6x8, "avx512f,avx2,fma", Avx2, 6, 1, AVX512_MR, AVX512_NR);
    // Exact kernels for the last rows of 256-row (4) and 128-row (8) products.
    wrapper!(avx512_4x32, "avx512f", Avx512, 4, 2, AVX512_MR, AVX512_NR);
    wrapper!(avx512_4x16, "avx512f", Avx512, 4, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_4x8, "avx512f,avx2,fma", Avx2, 4, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_8x32, "avx512f", Avx512, 8, 2, AVX512_MR, AVX512_NR);
    wrapper!(avx512_8x16, "avx512f", Avx512, 8, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_8x8, "avx512f,avx2,fma", Avx2, 8, 1, AVX512_MR, AVX512_NR);
    /// Smallest first, as the AVX2 list.
    pub(crate) const AVX512_EDGES: &[Edge] = &[
        Edge { rows: 4, cols: 8, kernel: avx512_4x8 },
        Edge { rows: 6, cols: 8, kernel: avx512_6x8 },
        Edge { rows: 4, cols: 16, kernel: avx512_4x16 },
        Edge { rows: 8, cols: 8, kernel: avx512_8x8 },
        Edge { rows: 12, cols: 8, kernel: avx512_12x8 },
        Edge { rows: 6, cols: 16, kernel: avx512_6x16 },
        Edge { rows: 4, cols: 32, kernel: avx512_4x32 },
        Edge { rows: 8, cols: 16, kernel: avx512_8x16 },
        Edge { rows: 12, cols: 16, kernel: avx512_12x16 },
        Edge { rows: 6, cols: 32, kernel: avx512_6x32 },
        Edge { rows: 8, cols: 32, kernel: avx512_8x32 },
    ];
}
