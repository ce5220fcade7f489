//! GEMM, `C = alpha · op(A) · op(B) + beta · C`, in the BLIS style (as the
//! `matrixmultiply` crate does it): packing, five loops, register-blocked micro-kernels.
//!
//! Micro-kernels for each instruction flavour of [`crate::tensor::kernels::simd`]: portable
//! [`Kernel::Scalar`], [`Kernel::Avx2`] and [`Kernel::Avx512`], the flavour and thread count
//! given by the caller. The products work on row-major slices with strides ([`gemm_slices`]);
//! the ones on matrices, with the active kernel and thread count, are
//! [`crate::tensor::matrix::gemm`] and its kin, which call these.
//! `op(X)` is `X` or `Xᵀ` ([`Trans`]); transposes are strides, never materialised.
//! [`gemm_fused_slices`] also does a layer's bias and ReLU, or a ReLU's backward, in the kernels'
//! stores (each element's last k block), so that the tape makes no passes over C for them.
//! A thread may ask for products in bf16 with f32 sums (its precision, training's opt-in
//! mixed precision: [`crate::tensor::kernels::precision`]): [`bf16`].

#[cfg(target_arch = "x86_64")]
pub mod amx;
pub mod bf16;
mod driver;
pub(crate) mod kernels;
mod pack;
mod small;
mod view;

use crate::tensor::error::{Result, TensorError};
use crate::tensor::runtime::threads::parallel_ranges;
use driver::{gemm_serial, with_workspace, Epilogue, Spec};
/// The f32 kernels' block of k: a product's sums over k are stored and resumed every `KC` steps.
pub(crate) use driver::KC;
use view::{OutView, View};
use crate::tensor::kernels::precision::{precision, Precision};
use crate::tensor::kernels::simd::Kernel;
pub(crate) use small::gemm_small;
pub use bf16::bf16_instructions;

/// How this machine runs bf16 products on `kernel` (what `--precision bf16` runs): AMX tiles,
/// AVX-512 BF16 dot products, or the operands rounded to bf16 and multiplied by the f32 kernels.
pub fn bf16_path(kernel: Kernel) -> &'static str {
    match kernel {
        Kernel::Avx512 if amx_tiles() => "AMX tiles (tdpbf16ps)",
        Kernel::Avx512 if bf16_instructions() => "AVX-512 BF16 dot products (vdpbf16ps)",
        _ => "operands rounded to bf16, multiplied by the f32 kernels",
    }
}

/// Whether bf16 products run on AMX tiles on this machine ([`amx`]).
pub fn amx_tiles() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        amx::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether an operand is used as stored (`N`) or transposed (`T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trans {
    N,
    T,
}

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
            direct: Some(kernels::x86::direct_avx2),
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
            direct: Some(kernels::x86::direct_avx512),
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
            direct: Some(kernels::direct_scalar),
        },
    }
}

/// Below this many flops a GEMM runs on one thread: spawning a scoped thread costs as much
/// as several Mflop of work (docs/notebook/benchmarks.md, numeric kernels).
const PAR_MIN_FLOPS: usize = 24_000_000;

/// What a layer fuses into its product ([`crate::tensor::matrix::gemm_fused`], [`gemm_fused_slices`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Fuse<'a> {
    /// A row added to every row of the product (C's old values are not read: β = 0).
    pub bias: Option<&'a [f32]>,
    /// `max(·, 0)` on the result.
    pub relu: bool,
    /// The result kept only where this matrix (C's shape and row stride) is positive: an
    /// activation's backward, `mask` being its output.
    pub mask: Option<&'a [f32]>,
}

/// `C = mask ⊙ act(op(A)·op(B) + bias)` (with a bias, `beta` must be 0), or without one
/// `C = mask ⊙ act(op(A)·op(B) + beta·C)` on row-major slices, as [`gemm_slices`] with α = 1
/// and C's row stride `n` (the mask's too): a layer's bias and ReLU, or a ReLU's backward,
/// done in the product's stores instead of passes over C. The same bits as the product
/// followed by those passes (for the bias: C holding it, then β = 1).
#[allow(clippy::too_many_arguments)]
pub fn gemm_fused_slices(
    kernel: Kernel,
    nthreads: usize,
    ta: Trans,
    tb: Trans,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    beta: f32,
    c: &mut [f32],
    fuse: &Fuse,
) -> Result<()> {
    if !kernel.available() {
        return Err(TensorError::Unavailable(format!("kernel '{}' is not supported by this CPU", kernel.name())));
    }
    if c.len() != m * n || fuse.bias.is_some_and(|r| r.len() != n) || fuse.mask.is_some_and(|x| x.len() != m * n) {
        return Err(TensorError::shape(
            "gemm",
            format!(
                "C of {m}×{n} in {} values with a bias of {} and a mask of {} values",
                c.len(), fuse.bias.map_or(0, |r| r.len()), fuse.mask.map_or(0, |x| x.len())
            ),
        ));
    }
    if fuse.bias.is_some() && beta != 0.0 {
        return Err(TensorError::shape("gemm", format!("a fused bias replaces C's values: β must be 0, not {beta}")));
    }
    if k == 0 {
        // Nothing to sum: the bias (or β·C), then the activation and mask, elementwise.
        for (i, y) in c.iter_mut().enumerate() {
            let mut v = match fuse.bias {
                Some(r) => r[i % n],
                None if beta == 0.0 => 0.0,
                None => beta * *y,
            };
            if fuse.relu {
                v = crate::tensor::kernels::simd::relu(v);
            }
            if let Some(x) = fuse.mask {
                v = crate::tensor::kernels::simd::gate(v, x[i]);
            }
            *y = v;
        }
        return Ok(());
    }
    let ep = Epilogue {
        bias: fuse.bias.map_or(std::ptr::null(), |r| r.as_ptr()),
        relu: fuse.relu,
        mask: fuse.mask.map_or(std::ptr::null(), |x| x.as_ptr()),
        mask_ld: n,
    };
    // Safety: the bias holds n values and the mask m×n with row stride n (checked above).
    unsafe { gemm_impl(kernel, nthreads, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, n, &ep) }
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
    // Safety: no epilogue pointers to cover.
    unsafe { gemm_impl(kernel, nthreads, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, &Epilogue::NONE) }
}

/// [`gemm_slices`] with an epilogue.
///
/// Safety: `ep`'s bias covers C's `n` columns and its mask C's `m × n` (with its stride).
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_impl(
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
    ep: &Epilogue,
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
    let view = |p: &[f32], ld: usize, t: Trans| match t {
        Trans::N => View { ptr: p.as_ptr(), rs: ld, cs: 1 },
        Trans::T => View { ptr: p.as_ptr(), rs: 1, cs: ld },
    };
    let cv = OutView { ptr: c.as_mut_ptr(), ld: ldc };
    if precision() != Precision::Bf16 {
        run(&spec(kernel), nthreads, m, n, k, alpha, view(a, lda, ta), view(b, ldb, tb), cv, overwrite, ep);
        return Ok(());
    }
    with_operand_buffers(|abuf, bbuf| {
        #[cfg(target_arch = "x86_64")]
        if kernel == Kernel::Avx512 && amx::available() {
            // Tiles of bf16 pairs (A's k along its rows, B's down its columns).
            let (ap, bp) = ((a.as_ptr(), lda, ta == Trans::N), (b.as_ptr(), ldb, tb == Trans::T));
            amx::gemm(nthreads, m, n, k, alpha, ap, bp, cv.ptr, ldc, overwrite, ep, abuf, bbuf);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if kernel == Kernel::Avx512 && bf16::bf16_instructions() {
            // Operands as matrices of bf16 pairs along k, walked as f32 matrices of depth k2.
            let k2 = k.div_ceil(2);
            abuf.resize(m * k2, 0.0);
            bbuf.resize(k2 * n, 0.0);
            let (ap, bp) = (abuf.as_mut_ptr(), bbuf.as_mut_ptr());
            // A(i, p) and B(p, j) through each converted matrix's strides.
            let (a_i, a_p) = bf16::to_pairs(a.as_ptr(), lda, ta == Trans::N, m, k, ap);
            let (b_j, b_p) = bf16::to_pairs(b.as_ptr(), ldb, tb == Trans::T, n, k, bp);
            let (av, bv) = (View { ptr: ap, rs: a_i, cs: a_p }, View { ptr: bp, rs: b_p, cs: b_j });
            // KC/2 pairs: the same blocks of k as the f32 kernels'.
            let spec = Spec { kc: KC / 2, kernel: bf16::x86::kernel, edges: bf16::x86::EDGES, direct: None, ..spec(kernel) };
            run(&spec, nthreads, m, n, k2, alpha, av, bv, cv, overwrite, ep);
            return;
        }
        // Elsewhere: the operands rounded to bf16, multiplied by the f32 kernels.
        let (ar, ac) = if ta == Trans::N { (m, k) } else { (k, m) };
        let (br, bc) = if tb == Trans::N { (k, n) } else { (n, k) };
        abuf.resize(ar * ac, 0.0);
        bbuf.resize(br * bc, 0.0);
        bf16::rounded(a.as_ptr(), lda, ar, ac, abuf.as_mut_ptr());
        bf16::rounded(b.as_ptr(), ldb, br, bc, bbuf.as_mut_ptr());
        run(&spec(kernel), nthreads, m, n, k, alpha, view(abuf, ac, ta), view(bbuf, bc, tb), cv, overwrite, ep);
    });
    Ok(())
}

/// Buffers for a product's converted operands, pooled (no allocation in steady state).
static OPERANDS: std::sync::Mutex<Vec<(Vec<f32>, Vec<f32>)>> = std::sync::Mutex::new(Vec::new());

fn with_operand_buffers(f: impl FnOnce(&mut Vec<f32>, &mut Vec<f32>)) {
    let mut bufs = OPERANDS.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
    f(&mut bufs.0, &mut bufs.1);
    if let Ok(mut p) = OPERANDS.lock() {
        p.push(bufs);
    }
}

/// The products on views, over up to `nthreads` threads.
///
/// Safety: the views are valid for the given sizes; `ep` as [`gemm_impl`]'s.
#[allow(clippy::too_many_arguments)]
unsafe fn run(
    spec: &Spec,
    nthreads: usize,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    av: View,
    bv: View,
    cv: OutView,
    overwrite: bool,
    ep: &Epilogue,
) {
    let spec = *spec;
    let flops = 2usize.saturating_mul(m).saturating_mul(n).saturating_mul(k);
    let nt = if flops < PAR_MIN_FLOPS { 1 } else { nthreads.max(1) };
    // Tiles keep their position whatever the split, so every element is computed with
    // the same operations whatever the thread count (bitwise deterministic).
    // Split the columns: each thread packs only its part of B and shares the (usually
    // batch-sized) A; splitting rows instead was slower for the network shapes
    // (docs/notebook/benchmarks.md). Rows are split only when C is too narrow to share.
    // Boundaries at nr/2 are covered by the half-width edge kernels.
    let split_m = n < spec.nr * nt.max(1) && m > n;
    if split_m {
        parallel_ranges(m, nt, spec.mr, |r| unsafe {
            let (av, cv) = (av, cv); // capture whole (Sync) views, not their raw fields
            let a = View { ptr: av.ptr.add(r.start * av.rs), ..av };
            let c = OutView { ptr: cv.ptr.add(r.start * cv.ld), ..cv };
            let ep = ep.at(r.start, 0);
            with_workspace(|ws| gemm_serial(&spec, r.len(), n, k, alpha, a, bv, c, overwrite, &ep, ws));
        });
    } else {
        parallel_ranges(n, nt, spec.nr / 2, |r| unsafe {
            let (bv, cv) = (bv, cv);
            let b = View { ptr: bv.ptr.add(r.start * bv.cs), ..bv };
            let c = OutView { ptr: cv.ptr.add(r.start), ..cv };
            let ep = ep.at(0, r.start);
            with_workspace(|ws| gemm_serial(&spec, m, r.len(), k, alpha, av, b, c, overwrite, &ep, ws));
        });
    }
}
