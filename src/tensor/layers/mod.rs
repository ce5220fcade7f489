//! Forward functions shared by the autograd [`Tape`](crate::tensor::autograd::tape::Tape) and by
//! inference without a tape (the search's fast path), so both compute identical values.

pub mod conv;
pub mod dense;
mod patches;
pub mod pool;
pub mod quant;
pub mod quant16;
pub mod sparse;

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::gemm::{Fuse, Trans};
use crate::tensor::matrix::{gemm, gemm_fused, Matrix};
use crate::tensor::kernels::simd::active_kernel;
use crate::tensor::kernels::vecops;

/// `y = x·W + b` (dense affine; `W` is `in × out`, one row per input feature; `b` is `1 × out`).
/// `y` is resized to `x.rows × out`.
pub fn affine(x: &Matrix, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    check_affine(x, w, b)?;
    y.resize(x.rows(), w.cols());
    for r in 0..x.rows() {
        y.row_mut(r).copy_from_slice(b.data());
    }
    if x.rows() == 1 {
        // One position (a search's evaluator): read W as stored rather than packing it on
        // every call; the same per-element sums as the packed kernels.
        let (n, kd) = (w.cols(), w.rows());
        crate::tensor::kernels::gemm::gemm_small(crate::tensor::kernels::simd::active_kernel(), 1, n, kd, x.data(), kd, w.data(), n, y.data_mut(), n);
        return Ok(());
    }
    gemm(Trans::N, Trans::N, 1.0, x, w, 1.0, y)
}

/// `y = max(x·W + b, 0)` (with `relu`) or `y = x·W + b`: [`affine`] then [`relu_inplace`],
/// the same bits, with the bias and the ReLU done in the product's stores for a batch
/// (one pass over `y` instead of three).
pub fn affine_act(x: &Matrix, w: &Matrix, b: &Matrix, relu: bool, y: &mut Matrix) -> Result<()> {
    if x.rows() <= 1 {
        affine(x, w, b, y)?;
        if relu {
            relu_inplace(y);
        }
        return Ok(());
    }
    check_affine(x, w, b)?;
    y.resize(x.rows(), w.cols());
    gemm_fused(Trans::N, Trans::N, x, w, 0.0, y, &Fuse { bias: Some(b.data()), relu, mask: None })
}

fn check_affine(x: &Matrix, w: &Matrix, b: &Matrix) -> Result<()> {
    if x.cols() != w.rows() || b.shape() != (1, w.cols()) {
        return Err(TensorError::shape(
            "affine",
            format!("x {}×{}, W {}×{}, b {}×{}", x.rows(), x.cols(), w.rows(), w.cols(), b.rows(), b.cols()),
        ));
    }
    Ok(())
}

/// `max(x, 0)` in place.
pub fn relu_inplace(x: &mut Matrix) {
    x.data_mut().iter_mut().for_each(|v| *v = crate::tensor::kernels::simd::relu(*v));
}

/// Logistic sigmoid of one value, stable for large |x|.
#[inline]
pub fn sigmoid(x: f32) -> f32 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// Sigmoid in place.
pub fn sigmoid_inplace(x: &mut Matrix) {
    x.data_mut().iter_mut().for_each(|v| *v = sigmoid(*v));
}

/// `tanh` in place.
pub fn tanh_inplace(x: &mut Matrix) {
    x.data_mut().iter_mut().for_each(|v| *v = v.tanh());
}

/// Softmax of each row in place (max subtracted first, so no overflow).
pub fn softmax_rows_inplace(x: &mut Matrix) {
    for r in 0..x.rows() {
        let row = x.row_mut(r);
        let mx = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut s = 0.0f32;
        for v in row.iter_mut() {
            *v = (*v - mx).exp();
            s += *v;
        }
        let inv = 1.0 / s;
        row.iter_mut().for_each(|v| *v *= inv);
    }
}

/// `[a | b]`: rows of `a` followed by rows of `b`, side by side. `out` is resized.
pub fn concat_cols(a: &Matrix, b: &Matrix, out: &mut Matrix) -> Result<()> {
    if a.rows() != b.rows() {
        return Err(TensorError::shape("concat", format!("{} rows vs {} rows", a.rows(), b.rows())));
    }
    let (ca, cb) = (a.cols(), b.cols());
    out.resize(a.rows(), ca + cb);
    for r in 0..a.rows() {
        let o = out.row_mut(r);
        o[..ca].copy_from_slice(a.row(r));
        o[ca..].copy_from_slice(b.row(r));
    }
    Ok(())
}

/// Adds the column sums of `g` into the `1 × cols` matrix `db` (a bias gradient).
pub fn add_col_sums(g: &Matrix, db: &mut Matrix) {
    let n = g.cols().min(db.len());
    let rows = &g.data()[..g.rows() * g.cols()];
    if n == g.cols() {
        vecops::col_sums_add_with(active_kernel(), &mut db.data_mut()[..n], rows);
    } else {
        // A bias shorter than the rows: only its columns are summed.
        for row in rows.chunks_exact(g.cols().max(1)) {
            vecops::add_assign_with(active_kernel(), &mut db.data_mut()[..n], &row[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Rng;

    /// One row (the unpacked path) gives exactly the bits that row gets in a batch.
    #[test]
    fn affine_of_one_row_equals_its_row_in_a_batch() {
        let mut rng = Rng::new(3);
        for (n_in, n_out) in [(1, 1), (7, 3), (800, 70), (70, 1), (33, 129)] {
            let m = |r, c, rng: &mut Rng| Matrix::from_vec(r, c, (0..r * c).map(|_| rng.uniform(-1.0, 1.0)).collect()).unwrap();
            let (x, w, b) = (m(5, n_in, &mut rng), m(n_in, n_out, &mut rng), m(1, n_out, &mut rng));
            let mut all = Matrix::zeros(0, 0);
            affine(&x, &w, &b, &mut all).unwrap();
            for r in 0..5 {
                let one = Matrix::from_vec(1, n_in, x.row(r).to_vec()).unwrap();
                let mut y = Matrix::zeros(0, 0);
                affine(&one, &w, &b, &mut y).unwrap();
                assert_eq!(y.row(0), all.row(r), "{n_in}x{n_out} row {r}");
            }
        }
    }
}
