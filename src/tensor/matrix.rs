//! [`Matrix`]: a row-major `f32` matrix, batch × features (one example per row), and the
//! weight initialisers that draw one ([`Init`]: He for ReLU layers, Xavier/Glorot for the rest);
//! the products on matrices ([`gemm`], [`gemm_fused`], with an explicit kernel and thread
//! count [`gemm_with`], [`gemm_fused_with`]): their shapes checked here, then the kernels'
//! products on slices ([`crate::tensor::kernels::gemm`]) compute them.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::gemm::{gemm_fused_slices, gemm_slices, Fuse, Trans};
use crate::tensor::kernels::simd::{active_kernel, Kernel};
use crate::tensor::lines::Lines;
use crate::tensor::rng::Rng;
use crate::tensor::runtime::threads::threads;
use std::fmt;

/// Row-major `rows × cols` matrix of `f32`. Rows are examples, columns features. The values
/// start on a cache line ([`Lines`]).
#[derive(Clone, PartialEq, Default)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Lines,
}

impl fmt::Debug for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Matrix {}×{} ", self.rows, self.cols)?;
        let shown: Vec<f32> = self.data().iter().take(8).copied().collect();
        write!(f, "{shown:?}{}", if self.len() > 8 { "…" } else { "" })
    }
}

impl Matrix {
    /// A `rows × cols` matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix { rows, cols, data: Lines::filled(rows * cols, 0.0) }
    }

    /// A `rows × cols` matrix filled with `v`.
    pub fn filled(rows: usize, cols: usize, v: f32) -> Self {
        Matrix { rows, cols, data: Lines::filled(rows * cols, v) }
    }

    /// Wraps row-major `data`; errors if its length is not `rows * cols`.
    pub fn from_vec(rows: usize, cols: usize, data: Vec<f32>) -> Result<Self> {
        if data.len() != rows * cols {
            return Err(TensorError::shape(
                "Matrix::from_vec",
                format!("{} values for a {rows}×{cols} matrix", data.len()),
            ));
        }
        Ok(Matrix { rows, cols, data: Lines::from_slice(&data) })
    }

    /// Builds a matrix from equal-length rows; errors on ragged rows.
    pub fn from_rows(rows: &[Vec<f32>]) -> Result<Self> {
        let cols = rows.first().map_or(0, |r| r.len());
        let mut data = Vec::with_capacity(rows.len() * cols);
        for (i, r) in rows.iter().enumerate() {
            if r.len() != cols {
                return Err(TensorError::shape(
                    "Matrix::from_rows",
                    format!("row {i} has {} values, row 0 has {cols}", r.len()),
                ));
            }
            data.extend_from_slice(r);
        }
        Ok(Matrix { rows: rows.len(), cols, data: Lines::from_slice(&data) })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// The row-major values.
    pub fn data(&self) -> &[f32] {
        self.data.as_slice()
    }
    pub fn data_mut(&mut self) -> &mut [f32] {
        self.data.as_mut_slice()
    }
    pub fn into_vec(self) -> Vec<f32> {
        self.data.as_slice().to_vec()
    }
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data()[i * self.cols..(i + 1) * self.cols]
    }
    pub fn row_mut(&mut self, i: usize) -> &mut [f32] {
        let c = self.cols;
        &mut self.data_mut()[i * c..(i + 1) * c]
    }
    pub fn get(&self, i: usize, j: usize) -> f32 {
        self.data()[i * self.cols + j]
    }
    pub fn set(&mut self, i: usize, j: usize, v: f32) {
        let c = self.cols;
        self.data_mut()[i * c + j] = v;
    }

    /// Reshapes in place to `rows × cols`, reusing the allocation (no allocation once
    /// the buffer has been this large). Contents are unspecified afterwards.
    pub fn resize(&mut self, rows: usize, cols: usize) {
        self.rows = rows;
        self.cols = cols;
        self.data.resize(rows * cols, 0.0);
    }

    /// Reshapes to `rows × cols` and sets every value to zero.
    pub fn resize_zeroed(&mut self, rows: usize, cols: usize) {
        self.resize(rows, cols);
        self.fill(0.0);
    }

    pub fn fill(&mut self, v: f32) {
        self.data_mut().fill(v);
    }

    /// Copies `other` into `self`, reusing `self`'s buffer.
    pub fn copy_from(&mut self, other: &Matrix) {
        self.resize(other.rows, other.cols);
        self.data_mut().copy_from_slice(other.data());
    }

    /// A new matrix that is the transpose (tests and tools only; the kernels
    /// handle transposes through strides without materialising them).
    pub fn transpose(&self) -> Matrix {
        let mut t = Matrix::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                t.data_mut()[j * self.rows + i] = self.data()[i * self.cols + j];
            }
        }
        t
    }

    /// `self · other` (a convenience; hot code calls [`gemm`] with reused buffers).
    pub fn matmul(&self, other: &Matrix) -> Result<Matrix> {
        if self.cols != other.rows {
            return Err(TensorError::shape(
                "Matrix::matmul",
                format!("{}×{} · {}×{}", self.rows, self.cols, other.rows, other.cols),
            ));
        }
        let mut out = Matrix::zeros(self.rows, other.cols);
        gemm(Trans::N, Trans::N, 1.0, self, other, 0.0, &mut out)?;
        Ok(out)
    }

    /// Index of the largest value of each row.
    pub fn argmax_rows(&self) -> Vec<usize> {
        (0..self.rows)
            .map(|i| {
                let r = self.row(i);
                let mut best = 0;
                for (j, &v) in r.iter().enumerate() {
                    if v > r[best] {
                        best = j;
                    }
                }
                best
            })
            .collect()
    }

    /// Largest absolute difference with `other` (same shape), for tests.
    pub fn max_abs_diff(&self, other: &Matrix) -> f32 {
        assert_eq!(self.shape(), other.shape(), "max_abs_diff: shapes differ");
        self.data().iter().zip(other.data()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
    }

    /// Sum of all values (in f64, so it is stable for large matrices).
    pub fn sum(&self) -> f64 {
        self.data().iter().map(|&x| x as f64).sum()
    }
}

// ---------------------------------------------------------------- products on matrices

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

/// `C = mask ⊙ act(op(A)·op(B) + bias)` (with a bias, `beta` must be 0), or without one
/// `C = mask ⊙ act(op(A)·op(B) + beta·C)`: a layer's bias and ReLU, or a ReLU's backward, done
/// in the product's stores instead of passes over C ([`gemm_fused_slices`]). The same bits as
/// the product followed by those passes (for the bias: C holding it, then β = 1).
pub fn gemm_fused(ta: Trans, tb: Trans, a: &Matrix, b: &Matrix, beta: f32, c: &mut Matrix, fuse: &Fuse) -> Result<()> {
    gemm_fused_with(active_kernel(), threads(), ta, tb, a, b, beta, c, fuse)
}

/// [`gemm_fused`] with an explicit kernel and thread count.
#[allow(clippy::too_many_arguments)]
pub fn gemm_fused_with(
    kernel: Kernel,
    nthreads: usize,
    ta: Trans,
    tb: Trans,
    a: &Matrix,
    b: &Matrix,
    beta: f32,
    c: &mut Matrix,
    fuse: &Fuse,
) -> Result<()> {
    if !kernel.available() {
        return Err(TensorError::Unavailable(format!("kernel '{}' is not supported by this CPU", kernel.name())));
    }
    let (m, k) = if ta == Trans::N { a.shape() } else { (a.cols(), a.rows()) };
    let (kb, n) = if tb == Trans::N { b.shape() } else { (b.cols(), b.rows()) };
    if k != kb || c.shape() != (m, n) || fuse.bias.is_some_and(|r| r.len() != n) || fuse.mask.is_some_and(|x| x.len() != m * n) {
        return Err(TensorError::shape(
            "gemm",
            format!(
                "op(A) {m}×{k} · op(B) {kb}×{n} into C {}×{} with a bias of {} and a mask of {} values",
                c.rows(), c.cols(), fuse.bias.map_or(0, |r| r.len()), fuse.mask.map_or(0, |x| x.len())
            ),
        ));
    }
    let (lda, ldb) = (a.cols(), b.cols());
    gemm_fused_slices(kernel, nthreads, ta, tb, m, n, k, a.data(), lda, b.data(), ldb, beta, c.data_mut(), fuse)
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

/// Weight initialisers for a `fan_in × fan_out` matrix (one row per input feature).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// He/Kaiming normal, std = sqrt(2 / fan_in): keeps ReLU activations' variance.
    HeNormal,
    /// He uniform, limit = sqrt(6 / fan_in).
    HeUniform,
    /// Xavier/Glorot uniform, limit = sqrt(6 / (fan_in + fan_out)): for sigmoid/tanh/linear.
    XavierUniform,
    /// All zeros (biases).
    Zeros,
}

impl Init {
    /// A new `fan_in × fan_out` matrix drawn from this initialiser.
    pub fn matrix(self, fan_in: usize, fan_out: usize, rng: &mut Rng) -> Matrix {
        let mut m = Matrix::zeros(fan_in, fan_out);
        let fi = fan_in.max(1) as f32;
        let fo = fan_out.max(1) as f32;
        match self {
            Init::HeNormal => {
                let std = (2.0 / fi).sqrt();
                m.data_mut().iter_mut().for_each(|x| *x = rng.normal() * std);
            }
            Init::HeUniform => {
                let l = (6.0 / fi).sqrt();
                m.data_mut().iter_mut().for_each(|x| *x = rng.uniform(-l, l));
            }
            Init::XavierUniform => {
                let l = (6.0 / (fi + fo)).sqrt();
                m.data_mut().iter_mut().for_each(|x| *x = rng.uniform(-l, l));
            }
            Init::Zeros => {}
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::runtime::help::{with_board, with_helper};

    /// Products run with a board while another thread helps give the same bits as without
    /// one, for every flavour, both transposes, beta 0 and 1, and odd shapes (edge tiles,
    /// several k blocks, a last row block shorter than the others); and the helper did take
    /// blocks (else the test would prove nothing).
    #[test]
    fn helped_products_are_the_same_bits() {
        let mut rng = Rng::new(11);
        let shapes = [(600, 400, 300), (257, 131, 517), (97, 33, 64), (300, 7, 260)];
        for kernel in Kernel::available_kernels() {
            let helped = with_helper(|board| {
                for &(m, n, k) in &shapes {
                    for (ta, tb, beta) in [(Trans::N, Trans::N, 0.0), (Trans::T, Trans::N, 1.0), (Trans::N, Trans::T, 1.0)] {
                        let a = if ta == Trans::N { Init::HeNormal.matrix(m, k, &mut rng) } else { Init::HeNormal.matrix(k, m, &mut rng) };
                        let b = if tb == Trans::N { Init::HeNormal.matrix(k, n, &mut rng) } else { Init::HeNormal.matrix(n, k, &mut rng) };
                        let c0 = Init::HeNormal.matrix(m, n, &mut rng);
                        let (mut alone, mut shared) = (c0.clone(), c0.clone());
                        gemm_with(kernel, 1, ta, tb, 0.7, &a, &b, beta, &mut alone).unwrap();
                        with_board(board, || gemm_with(kernel, 1, ta, tb, 0.7, &a, &b, beta, &mut shared)).unwrap();
                        assert_eq!(alone.data(), shared.data(), "{} {m}×{n}×{k} {ta:?}{tb:?} beta {beta}", kernel.name());
                    }
                }
                true
            });
            assert!(helped > 0, "{}: the helper never took a block", kernel.name());
        }
    }
}
