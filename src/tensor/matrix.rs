//! [`Matrix`]: a row-major `f32` matrix, batch × features (one example per row), and the
//! weight initialisers that draw one ([`Init`]: He for ReLU layers, Xavier/Glorot for the rest).

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::gemm::{gemm, Trans};
use crate::tensor::lines::Lines;
use crate::tensor::rng::Rng;
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
