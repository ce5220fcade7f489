//! `C += A·B` for a handful of rows of A, with B read as stored (row-major, no packing).
//!
//! The packed GEMM copies all of B into micro-panels on every call, which pays off when
//! many rows of A reuse each panel. With a few rows (a convolution at batch 1: 4 to 25
//! patch rows against a 1600 × 200 weight matrix) the copy costs more than the products:
//! here each weight row is streamed once per block of 4 rows of A straight from the
//! caller's matrix, with 4 rows × 2 vectors of C held in registers.
//!
//! Every element is summed exactly as the packed kernels of the same flavour sum it (from
//! zero over each block of [`KC`] steps of k, then added to C), so a row gives the same bits
//! whichever path computed it: a search's batch-1 evaluation equals the batch's.

use super::driver::KC;
use crate::tensor::kernels::simd::{Flavour, Kernel, Scalar};

/// Rows of A (and C) per register block.
const ROWS: usize = 4;

/// Columns `j0..` of `RR` rows of C in blocks of `NV` vectors of `F`, while whole blocks
/// fit before `n`; returns the first column left.
///
/// Safety: `a` is valid for `RR` rows of `kd` values (stride `lda`), `b` for `kd` rows of
/// `n` (stride `ldb`), `c` for `RR` rows of `n` (stride `ldc`); `F` runs on this CPU.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn cols<F: Flavour, const RR: usize, const NV: usize>(
    kd: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    j0: usize,
    n: usize,
) -> usize {
    let w = NV * F::LANES;
    let mut j = j0;
    while j + w <= n {
        for k0 in (0..kd).step_by(KC) {
            let mut acc = [[F::zero(); NV]; RR];
            let mut bp = b.add(k0 * ldb + j);
            for p in k0..(k0 + KC).min(kd) {
                let mut bv = [F::zero(); NV];
                for (v, x) in bv.iter_mut().enumerate() {
                    *x = F::load(bp.add(v * F::LANES));
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let ar = F::splat(*a.add(r * lda + p));
                    for (v, x) in row.iter_mut().enumerate() {
                        *x = F::fmadd(ar, bv[v], *x);
                    }
                }
                bp = bp.add(ldb);
            }
            for (r, row) in acc.iter().enumerate() {
                for (v, x) in row.iter().enumerate() {
                    let cp = c.add(r * ldc + j + v * F::LANES);
                    F::store(cp, F::add(*x, F::load(cp)));
                }
            }
        }
        j += w;
    }
    j
}

/// The last columns one at a time, with the rounding of the flavour whose vector blocks
/// came before: fused multiply-adds (`FUSED`) or the portable kernel's multiply then add.
///
/// Safety: as [`cols`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tail<const RR: usize, const FUSED: bool>(kd: usize, a: *const f32, lda: usize, b: *const f32, ldb: usize, c: *mut f32, ldc: usize, j0: usize, n: usize) {
    for j in j0..n {
        for r in 0..RR {
            let cp = c.add(r * ldc + j);
            for k0 in (0..kd).step_by(KC) {
                let mut acc = 0f32;
                for p in k0..(k0 + KC).min(kd) {
                    let (x, y) = (*a.add(r * lda + p), *b.add(p * ldb + j));
                    acc = if FUSED { x.mul_add(y, acc) } else { x * y + acc };
                }
                *cp += acc;
            }
        }
    }
}

/// One flavour's whole product: blocks of [`ROWS`] rows, then single rows; in each, wide
/// column blocks, then narrower ones, then single columns.
macro_rules! flavour_fn {
    ($name:ident, $feat:literal, $fused:literal, [$(($fl:ty, $nv:literal)),*]) => {
        #[allow(clippy::too_many_arguments)]
        #[cfg_attr(target_arch = "x86_64", target_feature(enable = $feat))]
        unsafe fn $name(m: usize, n: usize, kd: usize, a: *const f32, lda: usize, b: *const f32, ldb: usize, c: *mut f32, ldc: usize) {
            let mut i = 0;
            while i + ROWS <= m {
                let (ai, ci) = (a.add(i * lda), c.add(i * ldc));
                let j = 0;
                $(let j = cols::<$fl, ROWS, $nv>(kd, ai, lda, b, ldb, ci, ldc, j, n);)*
                tail::<ROWS, $fused>(kd, ai, lda, b, ldb, ci, ldc, j, n);
                i += ROWS;
            }
            while i < m {
                let (ai, ci) = (a.add(i * lda), c.add(i * ldc));
                let j = 0;
                $(let j = cols::<$fl, 1, $nv>(kd, ai, lda, b, ldb, ci, ldc, j, n);)*
                tail::<1, $fused>(kd, ai, lda, b, ldb, ci, ldc, j, n);
                i += 1;
            }
        }
    };
}

flavour_fn!(small_scalar, "sse2", false, [(Scalar, 8)]);
#[cfg(target_arch = "x86_64")]
use crate::tensor::kernels::simd::{Avx2, Avx512};
#[cfg(target_arch = "x86_64")]
flavour_fn!(small_avx2, "avx2,fma", true, [(Avx2, 2), (Avx2, 1)]);
#[cfg(target_arch = "x86_64")]
flavour_fn!(small_avx512, "avx512f,avx2,fma", true, [(Avx512, 2), (Avx512, 1), (Avx2, 1)]);

/// `C[m×n] += A[m×kd]·B[kd×n]`, all row-major with row strides `lda`, `ldb`, `ldc`, on one
/// thread with flavour `k` (the portable one if `k` is not available).
///
/// Panics if a slice is too short for its shape (callers check shapes first).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_small(k: Kernel, m: usize, n: usize, kd: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, c: &mut [f32], ldc: usize) {
    if m == 0 || n == 0 || kd == 0 {
        return;
    }
    let fits = |len: usize, rows: usize, cols: usize, ld: usize| ld >= cols && (rows - 1) * ld + cols <= len;
    assert!(fits(a.len(), m, kd, lda) && fits(b.len(), kd, n, ldb) && fits(c.len(), m, n, ldc), "gemm_small: operands too short");
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    // Safety: bounds checked above; each flavour only when this CPU has it.
    unsafe {
        match k {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if k.available() => small_avx2(m, n, kd, a, lda, b, ldb, c, ldc),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 if k.available() => small_avx512(m, n, kd, a, lda, b, ldb, c, ldc),
            _ => small_scalar(m, n, kd, a, lda, b, ldb, c, ldc),
        }
    }
}
