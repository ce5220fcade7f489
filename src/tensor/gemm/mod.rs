//! GEMM, `C = alpha · op(A) · op(B) + beta · C`, in the BLIS style (as the
//! `matrixmultiply` crate does it): packing, five loops, register-blocked micro-kernels.
//!
//! Micro-kernels for each instruction flavour of [`super::simd`]: portable
//! [`Kernel::Scalar`], [`Kernel::Avx2`] and [`Kernel::Avx512`]. [`gemm`] runs the flavour
//! [`active_kernel`] chose at run time; [`gemm_with`] takes it explicitly (tests, benchmarks).
//! `op(X)` is `X` or `Xᵀ` ([`Trans`]); transposes are strides, never materialised.

mod driver;
pub(crate) mod kernels;
mod small;

use super::error::{Result, TensorError};
use super::matrix::Matrix;
use super::threads::{parallel_ranges, threads};
use driver::{gemm_serial, with_workspace, OutView, Spec, View};
use super::simd::{active_kernel, Kernel};
pub(crate) use small::gemm_small;

/// Whether an operand is used as stored (`N`) or transposed (`T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trans {
    N,
    T,
}

/// Depth of the packed blocks (k steps) of every flavour. Each element of C is summed from
/// zero over one such block, then added to C; [`gemm_small`] sums in the same blocks.
pub(crate) const KC: usize = 256;

/// Block sizes and micro-kernels of flavour `k`.
fn spec(k: Kernel) -> Spec {
    match k {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => Spec {
            mr: kernels::x86::AVX2_MR,
            nr: kernels::x86::AVX2_NR,
            kc: KC,
            mc: 144,
            nc: 4096,
            kernel: kernels::x86::kernel_avx2,
            edges: kernels::x86::AVX2_EDGES,
        },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => Spec {
            mr: kernels::x86::AVX512_MR,
            nr: kernels::x86::AVX512_NR,
            kc: KC,
            mc: 144,
            nc: 4096,
            kernel: kernels::x86::kernel_avx512,
            edges: kernels::x86::AVX512_EDGES,
        },
        // Unavailable flavours never reach here (checked by callers); scalar is safe anyway.
        _ => Spec {
            mr: kernels::SCALAR_MR,
            nr: kernels::SCALAR_NR,
            kc: KC,
            mc: 128,
            nc: 4096,
            kernel: kernels::kernel_scalar,
            edges: kernels::SCALAR_EDGES,
        },
    }
}

/// Below this many flops a GEMM runs on one thread: spawning a scoped thread costs as much
/// as several Mflop of work (docs/benchmarks.md, numeric kernels).
const PAR_MIN_FLOPS: usize = 24_000_000;

/// `C = alpha · op(A) · op(B) + beta · C` on matrices, with the active kernel and thread
/// count. `C` must already have the result's shape.
pub fn gemm(ta: Trans, tb: Trans, alpha: f32, a: &Matrix, b: &Matrix, beta: f32, c: &mut Matrix) -> Result<()> {
    gemm_with(active_kernel(), threads(), ta, tb, alpha, a, b, beta, c)
}

/// [`gemm`] with an explicit kernel and thread count.
#[allow(clippy::too_many_arguments)]
pub fn gemm_with(
    kernel: Kernel,
    nthreads: usize,
    ta: Trans,
    tb: Trans,
    alpha: f32,
    a: &Matrix,
    b: &Matrix,
    beta: f32,
    c: &mut Matrix,
) -> Result<()> {
    let (m, k) = if ta == Trans::N { a.shape() } else { (a.cols(), a.rows()) };
    let (kb, n) = if tb == Trans::N { b.shape() } else { (b.cols(), b.rows()) };
    if k != kb || c.shape() != (m, n) {
        return Err(TensorError::shape(
            "gemm",
            format!(
                "op(A) {m}×{k} · op(B) {kb}×{n} into C {}×{} (A {}×{} {:?}, B {}×{} {:?})",
                c.rows(), c.cols(), a.rows(), a.cols(), ta, b.rows(), b.cols(), tb
            ),
        ));
    }
    let (lda, ldb, ldc) = (a.cols(), b.cols(), n);
    gemm_slices(kernel, nthreads, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data_mut(), ldc)
}

/// GEMM on row-major slices with leading dimensions (BLAS-like). `A` is stored
/// `m×k` (`ta = N`) or `k×m` (`ta = T`) with row stride `lda`; likewise `B`; `C` is
/// `m×n` with row stride `ldc`. Slice lengths and strides are checked.
#[allow(clippy::too_many_arguments)]
pub fn gemm_slices(
    kernel: Kernel,
    nthreads: usize,
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
) -> Result<()> {
    if !kernel.available() {
        return Err(TensorError::Unavailable(format!("kernel '{}' is not supported by this CPU", kernel.name())));
    }
    let check = |name: &str, rows: usize, cols: usize, ld: usize, len: usize| -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        if ld < cols || (rows - 1) * ld + cols > len {
            return Err(TensorError::shape(
                "gemm",
                format!("{name}: {rows}×{cols} with row stride {ld} does not fit in {len} values"),
            ));
        }
        Ok(())
    };
    let (ar, ac) = if ta == Trans::N { (m, k) } else { (k, m) };
    let (br, bc) = if tb == Trans::N { (k, n) } else { (n, k) };
    check("A", ar, ac, lda, a.len())?;
    check("B", br, bc, ldb, b.len())?;
    check("C", m, n, ldc, c.len())?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    // beta = 0: the first k block overwrites C, which is never read (NaN-safe).
    // Otherwise C is scaled by beta first and the kernels accumulate.
    let overwrite = beta == 0.0 && k > 0 && alpha != 0.0;
    if !overwrite {
        for i in 0..m {
            let row = &mut c[i * ldc..i * ldc + n];
            if beta == 0.0 {
                row.fill(0.0);
            } else if beta != 1.0 {
                row.iter_mut().for_each(|x| *x *= beta);
            }
        }
    }
    if k == 0 || alpha == 0.0 {
        return Ok(());
    }
    let av = match ta {
        Trans::N => View { ptr: a.as_ptr(), rs: lda, cs: 1 },
        Trans::T => View { ptr: a.as_ptr(), rs: 1, cs: lda },
    };
    let bv = match tb {
        Trans::N => View { ptr: b.as_ptr(), rs: ldb, cs: 1 },
        Trans::T => View { ptr: b.as_ptr(), rs: 1, cs: ldb },
    };
    let cv = OutView { ptr: c.as_mut_ptr(), ld: ldc };
    let spec = spec(kernel);
    let flops = 2usize.saturating_mul(m).saturating_mul(n).saturating_mul(k);
    let nt = if flops < PAR_MIN_FLOPS { 1 } else { nthreads.max(1) };
    // Tiles keep their position whatever the split, so every element is computed with
    // the same operations whatever the thread count (bitwise deterministic).
    // Split the columns: each thread packs only its part of B and shares the (usually
    // batch-sized) A; splitting rows instead was slower for the network shapes
    // (docs/benchmarks.md). Rows are split only when C is too narrow to share.
    // Boundaries at nr/2 are covered by the half-width edge kernels.
    let split_m = n < spec.nr * nt.max(1) && m > n;
    if split_m {
        parallel_ranges(m, nt, spec.mr, |r| unsafe {
            let (av, cv) = (av, cv); // capture whole (Sync) views, not their raw fields
            let a = View { ptr: av.ptr.add(r.start * av.rs), ..av };
            let c = OutView { ptr: cv.ptr.add(r.start * cv.ld), ..cv };
            with_workspace(|ws| gemm_serial(&spec, r.len(), n, k, alpha, a, bv, c, overwrite, ws));
        });
    } else {
        parallel_ranges(n, nt, spec.nr / 2, |r| unsafe {
            let (bv, cv) = (bv, cv);
            let b = View { ptr: bv.ptr.add(r.start * bv.cs), ..bv };
            let c = OutView { ptr: cv.ptr.add(r.start), ..cv };
            with_workspace(|ws| gemm_serial(&spec, m, r.len(), k, alpha, av, b, c, overwrite, ws));
        });
    }
    Ok(())
}

/// Straightforward triple loop in f64, the reference the tests compare kernels with.
pub fn gemm_reference(ta: Trans, tb: Trans, alpha: f32, a: &Matrix, b: &Matrix, beta: f32, c: &mut Matrix) {
    let (m, k) = if ta == Trans::N { a.shape() } else { (a.cols(), a.rows()) };
    let n = if tb == Trans::N { b.cols() } else { b.rows() };
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f64;
            for p in 0..k {
                let x = if ta == Trans::N { a.get(i, p) } else { a.get(p, i) };
                let y = if tb == Trans::N { b.get(p, j) } else { b.get(j, p) };
                s += x as f64 * y as f64;
            }
            let old = if beta == 0.0 { 0.0 } else { beta as f64 * c.get(i, j) as f64 };
            c.set(i, j, (alpha as f64 * s + old) as f32);
        }
    }
}
