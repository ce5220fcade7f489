//! The sparse binary input layer. A position is 773 bits of which about 32 are set,
//! so `X·W` is the sum of the weight rows of the set bits (weights stored one row per
//! input feature), and the gradient `Xᵀ·dY` only touches those rows. Training and
//! search both use this; it is ~20× less work than the dense product.

use super::error::{Result, TensorError};
use super::gemm::{active_kernel, Kernel};
use super::matrix::Matrix;
use super::threads::{parallel_ranges, threads};
use super::vecops::{add_assign_with, gather_add_with};

/// A batch of binary feature vectors stored as the indices of their set bits (CSR).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseBatch {
    features: usize,
    indices: Vec<u32>,
    /// Row `r` is `indices[offsets[r]..offsets[r + 1]]`.
    offsets: Vec<usize>,
}

impl SparseBatch {
    /// An empty batch of vectors with `features` bits each.
    pub fn new(features: usize) -> Self {
        SparseBatch { features, indices: Vec::new(), offsets: vec![0] }
    }

    /// A batch from one list of set-bit indices per row; errors on an index `>= features`.
    pub fn from_rows<R: AsRef<[u32]>>(features: usize, rows: &[R]) -> Result<Self> {
        let mut b = SparseBatch::new(features);
        for r in rows {
            b.push_row(r.as_ref())?;
        }
        Ok(b)
    }

    /// Empties the batch, keeping its buffers (no allocation in steady state).
    pub fn clear(&mut self) {
        self.indices.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }

    /// Changes the feature count (only allowed on an empty batch's contents being valid).
    pub fn set_features(&mut self, features: usize) -> Result<()> {
        if let Some(&bad) = self.indices.iter().find(|&&i| i as usize >= features) {
            return Err(TensorError::Index {
                what: "SparseBatch::set_features".into(),
                detail: format!("existing index {bad} >= {features} features"),
            });
        }
        self.features = features;
        Ok(())
    }

    /// Appends one row given by its set-bit indices (any order; duplicates count twice).
    pub fn push_row(&mut self, idx: &[u32]) -> Result<()> {
        if let Some(&bad) = idx.iter().find(|&&i| i as usize >= self.features) {
            return Err(TensorError::Index {
                what: "SparseBatch::push_row".into(),
                detail: format!("row {}: index {bad} >= {} features", self.rows(), self.features),
            });
        }
        self.indices.extend_from_slice(idx);
        self.offsets.push(self.indices.len());
        Ok(())
    }

    /// Copies `other` into `self`, reusing buffers.
    pub fn copy_from(&mut self, other: &SparseBatch) {
        self.features = other.features;
        self.indices.clear();
        self.indices.extend_from_slice(&other.indices);
        self.offsets.clear();
        self.offsets.extend_from_slice(&other.offsets);
    }

    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }
    pub fn features(&self) -> usize {
        self.features
    }
    /// Set-bit indices of row `r`.
    pub fn row(&self, r: usize) -> &[u32] {
        &self.indices[self.offsets[r]..self.offsets[r + 1]]
    }
    /// Total number of set bits.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// The dense 0/1 matrix (rows × features), for tests and comparisons.
    pub fn to_dense(&self) -> Matrix {
        let mut m = Matrix::zeros(self.rows(), self.features);
        for r in 0..self.rows() {
            for &i in self.row(r) {
                let v = m.get(r, i as usize);
                m.set(r, i as usize, v + 1.0);
            }
        }
        m
    }
}

fn check(what: &str, x: &SparseBatch, w: &Matrix, b: &Matrix) -> Result<()> {
    if w.rows() != x.features() {
        return Err(TensorError::shape(what, format!("input has {} features but W has {} rows", x.features(), w.rows())));
    }
    if b.shape() != (1, w.cols()) {
        return Err(TensorError::shape(what, format!("bias is {}×{}, expected 1×{}", b.rows(), b.cols(), w.cols())));
    }
    Ok(())
}

/// Below this many row additions the layer runs on one thread.
const PAR_MIN_WORK: usize = 200_000;

/// `y = X·W + b` for binary `X`: each output row is `b` plus the W rows of its set bits.
/// `y` is resized to `rows × W.cols`.
pub fn forward(x: &SparseBatch, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    forward_with(active_kernel(), threads(), x, w, b, y)
}

/// [`forward`] with an explicit kernel flavour and thread count (rows split over threads).
pub fn forward_with(k: Kernel, nthreads: usize, x: &SparseBatch, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    check("sparse_affine forward", x, w, b)?;
    let n = w.cols();
    y.resize(x.rows(), n);
    let nt = if x.nnz() * n < PAR_MIN_WORK { 1 } else { nthreads };
    let yp = SendPtr(y.data_mut().as_mut_ptr());
    parallel_ranges(x.rows(), nt, 1, |rows| {
        let yp = yp;
        for r in rows {
            // Safety: each thread writes only its own rows of y.
            let yr = unsafe { std::slice::from_raw_parts_mut(yp.0.add(r * n), n) };
            yr.copy_from_slice(b.data());
            gather_add_with(k, yr, w.data(), n, 0, x.row(r));
        }
    });
    Ok(())
}

/// Backward of [`forward`]: `dW[i] += dY[r]` for each set bit `i` of row `r`, and
/// `db += Σ_r dY[r]`. Accumulates (does not overwrite) `dW` and `db`.
pub fn backward(x: &SparseBatch, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix) -> Result<()> {
    backward_with(active_kernel(), threads(), x, dy, dw, db)
}

/// [`backward`] with an explicit kernel flavour and thread count. Threads own disjoint
/// column ranges of `dW`, so rows shared by several positions need no locking and the
/// summation order is fixed.
pub fn backward_with(k: Kernel, nthreads: usize, x: &SparseBatch, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix) -> Result<()> {
    let n = dw.cols();
    check("sparse_affine backward", x, dw, db)?;
    if dy.shape() != (x.rows(), n) {
        return Err(TensorError::shape(
            "sparse_affine backward",
            format!("dY is {}×{}, expected {}×{n}", dy.rows(), dy.cols(), x.rows()),
        ));
    }
    let nt = if x.nnz() * n < PAR_MIN_WORK { 1 } else { nthreads };
    let dwp = SendPtr(dw.data_mut().as_mut_ptr());
    let dbp = SendPtr(db.data_mut().as_mut_ptr());
    parallel_ranges(n, nt, 16, |cols| {
        let (dwp, dbp) = (dwp, dbp);
        let len = cols.len();
        // Safety: each thread touches only columns `cols` of dW and db.
        let dbs = unsafe { std::slice::from_raw_parts_mut(dbp.0.add(cols.start), len) };
        for r in 0..x.rows() {
            let g = &dy.row(r)[cols.clone()];
            add_assign_with(k, dbs, g);
            for &i in x.row(r) {
                let d = unsafe { std::slice::from_raw_parts_mut(dwp.0.add(i as usize * n + cols.start), len) };
                add_assign_with(k, d, g);
            }
        }
    });
    Ok(())
}

/// A raw pointer that may cross into scoped threads (each writes a disjoint part).
#[derive(Clone, Copy)]
struct SendPtr(*mut f32);
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}
