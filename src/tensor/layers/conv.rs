//! 2-D convolution over NHWC activations (one sample per matrix row, columns
//! `(y·W + x)·C + c`), as im2col + GEMM (the Caffe formulation, on the BLIS-style GEMM of
//! [`crate::tensor::kernels::gemm`]):
//!
//! - im2col: for every output pixel `(sample, oy, ox)` one row of the patch matrix `P`, its
//!   columns the `kh × kw × C` input window in `(ky, kx, c)` order, zeros where the window
//!   hangs over the padding. On NHWC the `kw × C` values of one window row are contiguous
//!   in the input, so a row of `P` is `kh` slice copies.
//! - forward: `Y = P·W + b`, with `W` stored `(kh·kw·C) × out_c` so that `Y`'s rows
//!   `(sample, oy, ox)` are exactly the NHWC output's memory: no reshuffle afterwards.
//! - backward: `dW += Pᵀ·dY`, `db += Σ rows of dY`, and only when the input needs a
//!   gradient `dP = dY·Wᵀ` then col2im (the adjoint of im2col: each `dP` value added back to
//!   the input pixel it was copied from).
//!
//! When `P` would equal the input (a 1×1 kernel at stride 1 without padding, or a kernel
//! covering the whole unpadded input) im2col and col2im are skipped.
//!
//! Threads split the batch (each has its own patch buffer, so nothing is shared but the
//! read-only weights); weight-gradient partial sums of threads 1.. are added to thread 0's
//! in thread order, so a thread count always gives the same bits. The GEMMs inside run on
//! one thread then, or on all of them when the batch is smaller than the thread count
//! (never both: no oversubscription). Buffers come from a pool, so a training loop or a
//! search calling at batch 1 stops allocating after its first call.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::gemm::{gemm_fused_slices, gemm_slices, gemm_small, Fuse, Trans, KC};
use crate::tensor::matrix::Matrix;
use crate::tensor::kernels::precision::{precision, Precision};
use crate::tensor::kernels::simd::{active_kernel, Kernel};
use super::patches::{col2im_add, im2col};
use crate::tensor::runtime::threads::{split_ranges, threads, SendPtr};
use crate::tensor::kernels::vecops::{add_assign_with, col_sums_add_with};
use std::ops::Range;
use std::sync::Mutex;

pub use super::patches::Conv2d;

pub(crate) fn check_operands(what: &str, s: &Conv2d, x: &Matrix, w: &Matrix, b: &Matrix) -> Result<()> {
    s.check()?;
    if x.cols() != s.in_len() {
        return Err(TensorError::shape(what, format!("input rows have {} values, {}×{}×{} needs {}", x.cols(), s.in_h, s.in_w, s.in_c, s.in_len())));
    }
    let (wr, wc) = s.weight_shape();
    if w.shape() != (wr, wc) {
        return Err(TensorError::shape(what, format!("W is {}×{}, expected {wr}×{wc}", w.rows(), w.cols())));
    }
    if b.shape() != (1, s.out_c) {
        return Err(TensorError::shape(what, format!("bias is {}×{}, expected 1×{}", b.rows(), b.cols(), s.out_c)));
    }
    Ok(())
}

/// Below this many flops in all, one thread: as in GEMM, a scoped thread costs about as
/// much as a few Mflop of work.
const PAR_MIN_FLOPS: f64 = 24e6;
/// Patch-matrix rows per GEMM call. Large enough that packing W (once per call) is a few
/// percent of the call, small enough that the patch buffer stays near L2.
const CHUNK_ROWS: usize = 512;

/// Patch-matrix floats per chunk beyond which a chunk is cut: written by im2col and read by
/// the product, `P` (and the backward's `dP`) is moved at a third of the speed once it
/// outgrows L2 (seed 002's third layer: 512 rows of 1,152 values, 2.4 MB).
const CHUNK_FLOATS: usize = 1 << 17;

/// Samples per forward chunk: [`CHUNK_ROWS`] rows, fewer when their patches would pass
/// [`CHUNK_FLOATS`] (each row is summed on its own, so any cut gives the same bits).
fn forward_chunk(px: usize, kk: usize) -> usize {
    (CHUNK_ROWS.min(CHUNK_FLOATS / kk.max(1)) / px).max(1)
}

/// Samples per backward chunk. The weight gradient adds each chunk's product in turn, so
/// a chunk's last row is where its sums over k are stored and resumed: [`CHUNK_ROWS`] rows,
/// cut only into whole blocks of the product's own k steps ([`KC`] rows, where it stores
/// and resumes them anyway) so that every sum keeps its order and its bits. Only f32
/// products are cut: bf16 ones on AMX tiles sum over all of a call's k before storing.
fn backward_chunk(px: usize, kk: usize) -> usize {
    let samples = (CHUNK_ROWS / px).max(1);
    let rows = samples * px;
    let f32_products = precision() == Precision::F32;
    if f32_products && rows * kk > CHUNK_FLOATS && rows % KC == 0 && KC % px == 0 {
        KC / px
    } else {
        samples
    }
}

/// Up to this many patch rows in a forward call (batch 1 of the seed's layers: 25 and 4),
/// the product reads W as stored instead of packing it ([`gemm_small`]).
const SMALL_ROWS: usize = 32;

/// Threads over the batch, and threads inside each GEMM: one of the two is 1.
fn split_threads(nthreads: usize, batch: usize, flops: f64) -> (usize, usize) {
    let nt = nthreads.max(1);
    if flops < PAR_MIN_FLOPS || nt == 1 {
        (1, 1)
    } else if batch >= nt {
        (nt, 1)
    } else {
        (1, nt)
    }
}

/// Per-thread buffers: the patch matrix and its gradient.
#[derive(Default)]
struct Work {
    p: Vec<f32>,
    dp: Vec<f32>,
}

static WORK: Mutex<Vec<Work>> = Mutex::new(Vec::new());
/// Weight- and bias-gradient partial sums of threads 1.. (thread 0 adds into the caller's).
static PARTIALS: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

fn with_work<R>(f: impl FnOnce(&mut Work) -> R) -> R {
    let mut ws = WORK.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
    let r = f(&mut ws);
    if let Ok(mut p) = WORK.lock() {
        p.push(ws);
    }
    r
}

/// `buf[..len]`, grown if needed (contents unspecified).
fn sized(buf: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    &mut buf[..len]
}

/// Runs `f(part, range)` over [`split_ranges`]`(len, parts, 1)`: part 0 on the calling
/// thread, the others on [`crate::tensor::runtime::crew`]'s kept threads. Results in part order.
fn run_parts<T: Send>(len: usize, parts: usize, f: impl Fn(usize, Range<usize>) -> T + Sync) -> Vec<T> {
    let ranges = split_ranges(len, parts, 1);
    if ranges.len() <= 1 {
        return ranges.into_iter().map(|r| f(0, r)).collect();
    }
    let out: Vec<std::sync::Mutex<Option<T>>> = ranges.iter().map(|_| std::sync::Mutex::new(None)).collect();
    crate::tensor::runtime::crew::run(ranges.len(), &|i| {
        let r = f(i, ranges[i].clone());
        *out[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    });
    out.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every part ran")).collect()
}

/// The sample ranges of one thread's chunks.
fn chunks(r: Range<usize>, per_chunk: usize) -> impl Iterator<Item = Range<usize>> {
    let step = per_chunk.max(1);
    (r.start..r.end).step_by(step).map(move |s| s..(s + step).min(r.end))
}

/// `y = conv(x, W) + b` for a batch; `y` is resized to `batch × out_len`.
pub fn forward(s: &Conv2d, x: &Matrix, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    forward_with(active_kernel(), threads(), s, x, w, b, y)
}

/// [`forward`], with the ReLU fused when `relu` ([`forward_act_with`]).
pub fn forward_act(s: &Conv2d, x: &Matrix, w: &Matrix, b: &Matrix, relu: bool, y: &mut Matrix) -> Result<()> {
    forward_act_with(active_kernel(), threads(), s, x, w, b, relu, y)
}

/// [`forward`] with an explicit kernel flavour and thread count.
pub fn forward_with(k: Kernel, nthreads: usize, s: &Conv2d, x: &Matrix, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    forward_act_with(k, nthreads, s, x, w, b, false, y)
}

/// [`forward_with`], with `relu`: `max(conv(x, W) + b, 0)` in the product's epilogue, the
/// bits of a ReLU pass over [`forward_with`]'s result without that pass.
#[allow(clippy::too_many_arguments)]
pub fn forward_act_with(k: Kernel, nthreads: usize, s: &Conv2d, x: &Matrix, w: &Matrix, b: &Matrix, relu: bool, y: &mut Matrix) -> Result<()> {
    check_operands("conv2d forward", s, x, w, b)?;
    if !k.available() {
        return Err(TensorError::Unavailable(format!("kernel '{}' is not supported by this CPU", k.name())));
    }
    let (batch, n, kk, px) = (x.rows(), s.out_c, s.patch_len(), s.pixels());
    let (in_len, out_len) = (s.in_len(), s.out_len());
    y.resize(batch, out_len);
    if batch * px <= SMALL_ROWS {
        // A search's single position: no threads, no packing, buffers from the pool.
        return with_work(|ws| {
            for row in y.data_mut().chunks_exact_mut(n) {
                row.copy_from_slice(b.data());
            }
            let p: &[f32] = if s.patches_are_input() {
                x.data()
            } else {
                let p = sized(&mut ws.p, batch * px * kk);
                im2col(k, s, x.data(), p);
                p
            };
            gemm_small(k, batch * px, n, kk, p, kk, w.data(), n, y.data_mut(), n);
            if relu {
                y.data_mut().iter_mut().for_each(|v| *v = crate::tensor::kernels::simd::relu(*v));
            }
            Ok(())
        });
    }
    let (outer, inner) = split_threads(nthreads, batch, s.flops() * batch as f64);
    let yp = SendPtr(y.data_mut().as_mut_ptr());
    let per_chunk = forward_chunk(px, kk);
    let results = run_parts(batch, outer, |_, r| {
        with_work(|ws| -> Result<()> {
            for c in chunks(r, per_chunk) {
                let rows = c.len() * px;
                // Safety: parts own disjoint sample ranges of y, which holds batch × out_len values.
                let yc = unsafe { std::slice::from_raw_parts_mut(yp.ptr().add(c.start * out_len), c.len() * out_len) };
                let xc = &x.data()[c.start * in_len..c.end * in_len];
                let p: &[f32] = if s.patches_are_input() {
                    xc
                } else {
                    let p = sized(&mut ws.p, rows * kk);
                    im2col(k, s, xc, p);
                    p
                };
                // The bias where the sums start (the bits of C holding it, then β = 1).
                let fuse = Fuse { bias: Some(b.data()), relu, ..Fuse::default() };
                gemm_fused_slices(k, inner, Trans::N, Trans::N, rows, n, kk, p, kk, w.data(), n, 0.0, yc, &fuse)?;
            }
            Ok(())
        })
    });
    results.into_iter().collect()
}

/// Backward of [`forward`] for `dy` (`batch × out_len`): **adds** `Pᵀ·dY` to `dw`, the
/// column sums of `dy` to `db`, and, when `dx` is given (`batch × in_len`), the input
/// gradient to it. Pass `None` for a first layer: the `dY·Wᵀ` product and col2im are then
/// not computed at all.
#[allow(clippy::too_many_arguments)]
pub fn backward(s: &Conv2d, x: &Matrix, w: &Matrix, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix, dx: Option<&mut Matrix>) -> Result<()> {
    backward_with(active_kernel(), threads(), s, x, w, dy, dw, db, dx)
}

/// [`backward`] with an explicit kernel flavour and thread count.
#[allow(clippy::too_many_arguments)]
pub fn backward_with(
    k: Kernel,
    nthreads: usize,
    s: &Conv2d,
    x: &Matrix,
    w: &Matrix,
    dy: &Matrix,
    dw: &mut Matrix,
    db: &mut Matrix,
    dx: Option<&mut Matrix>,
) -> Result<()> {
    const WHAT: &str = "conv2d backward";
    check_operands(WHAT, s, x, w, db)?;
    if !k.available() {
        return Err(TensorError::Unavailable(format!("kernel '{}' is not supported by this CPU", k.name())));
    }
    let (batch, n, kk, px) = (x.rows(), s.out_c, s.patch_len(), s.pixels());
    let (in_len, out_len) = (s.in_len(), s.out_len());
    if dy.shape() != (batch, out_len) {
        return Err(TensorError::shape(WHAT, format!("dY is {}×{}, expected {batch}×{out_len}", dy.rows(), dy.cols())));
    }
    if dw.shape() != w.shape() {
        return Err(TensorError::shape(WHAT, format!("dW is {}×{}, expected {}×{}", dw.rows(), dw.cols(), w.rows(), w.cols())));
    }
    if let Some(d) = &dx {
        if d.shape() != x.shape() {
            return Err(TensorError::shape(WHAT, format!("dX is {}×{}, expected {batch}×{in_len}", d.rows(), d.cols())));
        }
    }
    let (outer, inner) = split_threads(nthreads, batch, 3.0 * s.flops() * batch as f64);
    let parts = split_ranges(batch, outer, 1).len().max(1);
    // Zeroed partial sums for parts 1..: dW values then db values.
    let mut partials: Vec<Vec<f32>> = {
        let mut pool = PARTIALS.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default();
        (1..parts).map(|_| {
            let mut v = pool.pop().unwrap_or_default();
            v.clear();
            v.resize(dw.len() + n, 0.0);
            v
        }).collect()
    };
    let slots: Vec<SendPtr> = std::iter::once(SendPtr(std::ptr::null_mut())).chain(partials.iter_mut().map(|v| SendPtr(v.as_mut_ptr()))).collect();
    let (dwp, dbp) = (SendPtr(dw.data_mut().as_mut_ptr()), SendPtr(db.data_mut().as_mut_ptr()));
    let dxp = dx.map(|d| SendPtr(d.data_mut().as_mut_ptr()));
    let per_chunk = backward_chunk(px, kk);
    let results = run_parts(batch, outer, |part, r| {
        // Safety: part 0 alone writes the caller's dw and db; part i > 0 alone its partial
        // buffer (dw.len() + n values); parts own disjoint sample ranges of dx.
        let (gw, gb) = unsafe {
            if part == 0 {
                (std::slice::from_raw_parts_mut(dwp.ptr(), kk * n), std::slice::from_raw_parts_mut(dbp.ptr(), n))
            } else {
                let v = std::slice::from_raw_parts_mut(slots[part].ptr(), kk * n + n);
                v.split_at_mut(kk * n)
            }
        };
        with_work(|ws| -> Result<()> {
            for c in chunks(r, per_chunk) {
                let rows = c.len() * px;
                let dyc = &dy.data()[c.start * out_len..c.end * out_len];
                col_sums_add_with(k, gb, dyc);
                let xc = &x.data()[c.start * in_len..c.end * in_len];
                let p: &[f32] = if s.patches_are_input() {
                    xc
                } else {
                    let p = sized(&mut ws.p, rows * kk);
                    im2col(k, s, xc, p);
                    p
                };
                gemm_slices(k, inner, Trans::T, Trans::N, kk, n, rows, 1.0, p, kk, dyc, n, 1.0, gw, n)?;
                if let Some(dxp) = dxp {
                    let dxc = unsafe { std::slice::from_raw_parts_mut(dxp.ptr().add(c.start * in_len), c.len() * in_len) };
                    if s.patches_are_input() {
                        gemm_slices(k, inner, Trans::N, Trans::T, rows, kk, n, 1.0, dyc, n, w.data(), n, 1.0, dxc, kk)?;
                    } else {
                        let dp = sized(&mut ws.dp, rows * kk);
                        gemm_slices(k, inner, Trans::N, Trans::T, rows, kk, n, 1.0, dyc, n, w.data(), n, 0.0, dp, kk)?;
                        col2im_add(k, s, dp, dxc);
                    }
                }
            }
            Ok(())
        })
    });
    // Partial sums added in part order: the same bits for the same thread count.
    for v in &partials {
        let (pw, pb) = v.split_at(kk * n);
        add_assign_with(k, dw.data_mut(), pw);
        add_assign_with(k, db.data_mut(), pb);
    }
    if let Ok(mut pool) = PARTIALS.lock() {
        pool.append(&mut partials);
    }
    results.into_iter().collect()
}

/// Direct convolution in f64 by the definition (six nested loops): the reference the
/// tests compare [`forward`] with.
pub fn forward_reference(s: &Conv2d, x: &Matrix, w: &Matrix, b: &Matrix) -> Matrix {
    let (oh, ow) = (s.out_h(), s.out_w());
    let mut y = Matrix::zeros(x.rows(), s.out_len());
    for n in 0..x.rows() {
        for oy in 0..oh {
            for ox in 0..ow {
                for o in 0..s.out_c {
                    let mut acc = b.get(0, o) as f64;
                    for ky in 0..s.kh {
                        for kx in 0..s.kw {
                            let (iy, ix) = ((oy * s.stride + ky) as isize - s.pad as isize, (ox * s.stride + kx) as isize - s.pad as isize);
                            if iy < 0 || ix < 0 || iy >= s.in_h as isize || ix >= s.in_w as isize {
                                continue;
                            }
                            for c in 0..s.in_c {
                                let xv = x.get(n, (iy as usize * s.in_w + ix as usize) * s.in_c + c) as f64;
                                acc += xv * w.get((ky * s.kw + kx) * s.in_c + c, o) as f64;
                            }
                        }
                    }
                    y.set(n, (oy * ow + ox) * s.out_c + o, acc as f32);
                }
            }
        }
    }
    y
}

/// Backward of [`forward_reference`] in f64 by the definition: `(dW, db, dX)` for `dy`
/// (fresh, not accumulated).
#[allow(clippy::needless_range_loop)] // the definition's indices, written as the formula has them
pub fn backward_reference(s: &Conv2d, x: &Matrix, w: &Matrix, dy: &Matrix) -> (Matrix, Matrix, Matrix) {
    let (oh, ow) = (s.out_h(), s.out_w());
    let (wr, wc) = s.weight_shape();
    let (mut dw, mut db, mut dx) = (vec![0.0f64; wr * wc], vec![0.0f64; wc], vec![0.0f64; x.len()]);
    for n in 0..x.rows() {
        for oy in 0..oh {
            for ox in 0..ow {
                for o in 0..s.out_c {
                    let g = dy.get(n, (oy * ow + ox) * s.out_c + o) as f64;
                    db[o] += g;
                    for ky in 0..s.kh {
                        for kx in 0..s.kw {
                            let (iy, ix) = ((oy * s.stride + ky) as isize - s.pad as isize, (ox * s.stride + kx) as isize - s.pad as isize);
                            if iy < 0 || ix < 0 || iy >= s.in_h as isize || ix >= s.in_w as isize {
                                continue;
                            }
                            for c in 0..s.in_c {
                                let xi = n * s.in_len() + (iy as usize * s.in_w + ix as usize) * s.in_c + c;
                                let wi = ((ky * s.kw + kx) * s.in_c + c) * wc + o;
                                dw[wi] += x.data()[xi] as f64 * g;
                                dx[xi] += w.data()[wi] as f64 * g;
                            }
                        }
                    }
                }
            }
        }
    }
    let m = |r: usize, c: usize, v: Vec<f64>| Matrix::from_vec(r, c, v.into_iter().map(|v| v as f32).collect()).unwrap_or_default();
    (m(wr, wc, dw), m(1, wc, db), m(x.rows(), x.cols(), dx))
}
