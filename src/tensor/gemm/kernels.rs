//! GEMM micro-kernels: one `#[inline(always)]` register-blocked kernel generic over
//! the instruction flavour ([`Flavour`]), instantiated by thin `#[target_feature]`
//! wrappers. Each computes `C[MR×NR] += alpha · Ap[MR×kc] · Bp[kc×NR]` from packed
//! panels (A: MR values per k step, B: NR values per k step).

/// One SIMD instruction set as the micro-kernel sees it: a vector of `LANES` f32.
pub(crate) trait Flavour {
    type V: Copy;
    const LANES: usize;
    unsafe fn zero() -> Self::V;
    unsafe fn splat(x: f32) -> Self::V;
    unsafe fn load(p: *const f32) -> Self::V;
    unsafe fn store(p: *mut f32, v: Self::V);
    /// Vector registers the instruction set has (a register-blocked kernel keeps its
    /// accumulators within this budget).
    const REGISTERS: usize;
    /// `a * b + c` (fused where the hardware has it).
    unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b` per lane.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// `max(v, 0)` per lane (ReLU).
    unsafe fn max0(v: Self::V) -> Self::V;
    /// Bit j set when lane j is not zero.
    unsafe fn nonzero(v: Self::V) -> u64;
    /// The sum of the lanes.
    unsafe fn sum(v: Self::V) -> f32;
}

/// The register-blocked micro-kernel: `MR` rows × `NV` vectors of accumulators stay in
/// registers for the whole `kc` loop; C is read and written once per tile. `MA` and `NB`
/// are the packed panels' strides (floats per k step of A and B): a smaller kernel
/// (`MR < MA` or `NV*LANES < NB`) runs on the top-left part of the panels, which saves
/// work on mostly empty edge tiles.
/// With `overwrite`, C is not read (`C = alpha·AB`: the first k block when beta = 0).
///
/// Safety: `a` holds `kc*MA` floats, `b` holds `kc*NB`, and `c` is valid for
/// `MR` rows of `NV*LANES` floats with row stride `ldc`.
#[inline(always)]
unsafe fn micro<F: Flavour, const MR: usize, const NV: usize, const MA: usize, const NB: usize>(
    kc: usize,
    alpha: f32,
    mut a: *const f32,
    mut b: *const f32,
    c: *mut f32,
    ldc: usize,
    overwrite: bool,
) {
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
    let al = F::splat(alpha);
    for (i, row) in acc.iter().enumerate() {
        for (v, x) in row.iter().enumerate() {
            let p = c.add(i * ldc + v * F::LANES);
            // fma(alpha, acc, 0) rounds like alpha·acc: same bits either way.
            let old = if overwrite { F::zero() } else { F::load(p) };
            F::store(p, F::fmadd(al, *x, old));
        }
    }
}

/// Signature shared by all micro-kernels (see [`micro`] for the contract).
pub(crate) type MicroKernel =
    unsafe fn(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, overwrite: bool);

/// Portable flavour: plain f32 arithmetic (the compiler may still use SSE2).
pub(crate) struct Scalar;
impl Flavour for Scalar {
    type V = f32;
    const LANES: usize = 1;
    #[inline(always)]
    unsafe fn zero() -> f32 {
        0.0
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        *p
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: f32) {
        *p = v
    }
    #[inline(always)]
    unsafe fn fmadd(a: f32, b: f32, c: f32) -> f32 {
        a * b + c
    }
    #[inline(always)]
    unsafe fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    const REGISTERS: usize = 16;
    #[inline(always)]
    unsafe fn max0(v: f32) -> f32 {
        v.max(0.0)
    }
    #[inline(always)]
    unsafe fn nonzero(v: f32) -> u64 {
        (v != 0.0) as u64
    }
    #[inline(always)]
    unsafe fn sum(v: f32) -> f32 {
        v
    }
}

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
pub(crate) unsafe fn kernel_scalar(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, ow: bool) {
    micro::<Scalar, 4, 8, 4, 8>(kc, alpha, a, b, c, ldc, ow)
}
unsafe fn scalar_4x4(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, ow: bool) {
    micro::<Scalar, 4, 4, 4, 8>(kc, alpha, a, b, c, ldc, ow)
}
unsafe fn scalar_2x8(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, ow: bool) {
    micro::<Scalar, 2, 8, 4, 8>(kc, alpha, a, b, c, ldc, ow)
}
unsafe fn scalar_2x4(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, ow: bool) {
    micro::<Scalar, 2, 4, 4, 8>(kc, alpha, a, b, c, ldc, ow)
}
/// Smaller scalar kernels for edge tiles.
pub(crate) const SCALAR_EDGES: &[Edge] = &[
    Edge { rows: 2, cols: 4, kernel: scalar_2x4 },
    Edge { rows: 4, cols: 4, kernel: scalar_4x4 },
    Edge { rows: 2, cols: 8, kernel: scalar_2x8 },
];

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::{micro, Edge, Flavour};
    use std::arch::x86_64::*;

    /// AVX2 + FMA: 8 lanes. (Also the search's net kernels, src/search/deepchess_net.rs.)
    pub(crate) struct Avx2;
    impl Flavour for Avx2 {
        type V = __m256;
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> __m256 {
            _mm256_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m256 {
            _mm256_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m256 {
            _mm256_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m256) {
            _mm256_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn fmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
            _mm256_fmadd_ps(a, b, c)
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            _mm256_add_ps(a, b)
        }
        const REGISTERS: usize = 16;
        #[inline(always)]
        unsafe fn max0(v: __m256) -> __m256 {
            _mm256_max_ps(v, _mm256_setzero_ps())
        }
        #[inline(always)]
        unsafe fn nonzero(v: __m256) -> u64 {
            _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_NEQ_UQ>(v, _mm256_setzero_ps())) as u32 as u64
        }
        #[inline(always)]
        unsafe fn sum(v: __m256) -> f32 {
            let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
        }
    }

    /// AVX-512F: 16 lanes.
    pub(crate) struct Avx512;
    impl Flavour for Avx512 {
        type V = __m512;
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m512 {
            _mm512_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m512 {
            _mm512_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m512 {
            _mm512_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m512) {
            _mm512_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn fmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
            _mm512_fmadd_ps(a, b, c)
        }
        #[inline(always)]
        unsafe fn add(a: __m512, b: __m512) -> __m512 {
            _mm512_add_ps(a, b)
        }
        const REGISTERS: usize = 32;
        #[inline(always)]
        unsafe fn max0(v: __m512) -> __m512 {
            _mm512_max_ps(v, _mm512_setzero_ps())
        }
        #[inline(always)]
        unsafe fn nonzero(v: __m512) -> u64 {
            _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(v, _mm512_setzero_ps()) as u64
        }
        #[inline(always)]
        unsafe fn sum(v: __m512) -> f32 {
            _mm512_reduce_add_ps(v)
        }
    }

    /// Thin `#[target_feature]` wrapper around [`micro`] for one flavour and tile.
    macro_rules! wrapper {
        ($name:ident, $feat:literal, $fl:ty, $mr:literal, $nv:literal, $ma:expr, $nb:expr) => {
            #[target_feature(enable = $feat)]
            pub(crate) unsafe fn $name(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, ow: bool) {
                micro::<$fl, $mr, $nv, $ma, $nb>(kc, alpha, a, b, c, ldc, ow)
            }
        };
    }

    /// AVX2 tile: 6 × 16 = 12 ymm accumulators + 2 for B + 1 broadcast (of 16).
    pub(crate) const AVX2_MR: usize = 6;
    pub(crate) const AVX2_NR: usize = 16;
    wrapper!(kernel_avx2, "avx2,fma", Avx2, 6, 2, AVX2_MR, AVX2_NR);
    wrapper!(avx2_6x8, "avx2,fma", Avx2, 6, 1, AVX2_MR, AVX2_NR);
    wrapper!(avx2_3x16, "avx2,fma", Avx2, 3, 2, AVX2_MR, AVX2_NR);
    wrapper!(avx2_3x8, "avx2,fma", Avx2, 3, 1, AVX2_MR, AVX2_NR);
    pub(crate) const AVX2_EDGES: &[Edge] = &[
        Edge { rows: 3, cols: 8, kernel: avx2_3x8 },
        Edge { rows: 6, cols: 8, kernel: avx2_6x8 },
        Edge { rows: 3, cols: 16, kernel: avx2_3x16 },
    ];

    /// AVX-512 tile: 12 × 32 = 24 zmm accumulators + 2 for B + 1 broadcast (of 32).
    pub(crate) const AVX512_MR: usize = 12;
    pub(crate) const AVX512_NR: usize = 32;
    wrapper!(kernel_avx512, "avx512f", Avx512, 12, 2, AVX512_MR, AVX512_NR);
    wrapper!(avx512_12x16, "avx512f", Avx512, 12, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_6x32, "avx512f", Avx512, 6, 2, AVX512_MR, AVX512_NR);
    wrapper!(avx512_6x16, "avx512f", Avx512, 6, 1, AVX512_MR, AVX512_NR);
    // 8-wide edges use ymm registers (AVX-512F CPUs have AVX2 and FMA).
    wrapper!(avx512_12x8, "avx512f,avx2,fma", Avx2, 12, 1, AVX512_MR, AVX512_NR);
    wrapper!(avx512_6x8, "avx512f,avx2,fma", Avx2, 6, 1, AVX512_MR, AVX512_NR);
    pub(crate) const AVX512_EDGES: &[Edge] = &[
        Edge { rows: 6, cols: 8, kernel: avx512_6x8 },
        Edge { rows: 12, cols: 8, kernel: avx512_12x8 },
        Edge { rows: 6, cols: 16, kernel: avx512_6x16 },
        Edge { rows: 12, cols: 16, kernel: avx512_12x16 },
        Edge { rows: 6, cols: 32, kernel: avx512_6x32 },
    ];
}
