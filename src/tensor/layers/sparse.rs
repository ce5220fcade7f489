//! The sparse binary input layer. A position is 773 bits of which about 32 are set,
//! so `X·W` is the sum of the weight rows of the set bits (weights stored one row per
//! input feature), and the gradient `Xᵀ·dY` only touches those rows. Training and
//! search both use this; it is ~24× less arithmetic than the dense product.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::matrix::Matrix;
use crate::tensor::kernels::simd::{active_kernel, Kernel};
use crate::tensor::runtime::help::{on_board, share};
use crate::tensor::runtime::threads::{parallel_ranges, threads, SendPtr};
use crate::tensor::kernels::vecops::{add_assign_with, gather_add_with, gather_set_with, GATHER_BLOCK};
use std::sync::Mutex;

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
        let mut m = Matrix::default();
        self.to_dense_into(&mut m);
        m
    }

    /// [`SparseBatch::to_dense`] into `out`, reusing its buffer (a training step's targets).
    pub fn to_dense_into(&self, out: &mut Matrix) {
        out.resize_zeroed(self.rows(), self.features);
        for r in 0..self.rows() {
            for &i in self.row(r) {
                let v = out.get(r, i as usize);
                out.set(r, i as usize, v + 1.0);
            }
        }
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
const PAR_MIN_WORK: usize = 400_000;
/// Columns per cache block (a multiple of the register block).
const COL_BLOCK: usize = 2 * GATHER_BLOCK;

/// The batch transposed: for each feature, the rows where it is set (increasing).
#[derive(Default)]
struct ByFeature {
    offsets: Vec<usize>,
    rows: Vec<u32>,
}

impl ByFeature {
    fn build(&mut self, x: &SparseBatch) {
        let f = x.features();
        self.offsets.clear();
        self.offsets.resize(f + 2, 0);
        for &i in &x.indices {
            self.offsets[i as usize + 2] += 1;
        }
        for i in 2..f + 2 {
            self.offsets[i] += self.offsets[i - 1];
        }
        self.rows.clear();
        self.rows.resize(x.nnz(), 0);
        // Counting sort: offsets[i + 1] is the next free slot of feature i.
        for r in 0..x.rows() {
            for &i in x.row(r) {
                let slot = &mut self.offsets[i as usize + 1];
                self.rows[*slot] = r as u32;
                *slot += 1;
            }
        }
        self.offsets.truncate(f + 1);
    }
    fn rows_of(&self, f: usize) -> &[u32] {
        &self.rows[self.offsets[f]..self.offsets[f + 1]]
    }
}

static BY_FEATURE_POOL: Mutex<Vec<ByFeature>> = Mutex::new(Vec::new());

/// Runs `g` with the transposed batch, its buffers taken from (and returned to) a pool.
fn with_by_feature<R>(x: &SparseBatch, g: impl FnOnce(&ByFeature) -> R) -> R {
    let mut t = BY_FEATURE_POOL.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
    t.build(x);
    let r = g(&t);
    if let Ok(mut p) = BY_FEATURE_POOL.lock() {
        p.push(t);
    }
    r
}

/// `y = X·W + b` for binary `X`: each output row is `b` plus the W rows of its set bits.
/// `y` is resized to `rows × W.cols`.
pub fn forward(x: &SparseBatch, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    forward_with(active_kernel(), threads(), x, w, b, y)
}

/// [`forward`] with an explicit kernel flavour and thread count.
///
/// Column blocks outermost: a block of W (773 rows × 128 columns, 400 KB) stays in L2
/// while every position sums its rows of it in registers. Threads own column ranges.
/// Each output sums its W rows in the order the position lists them, so the search
/// (batch 1) and training (batch 256) get the same values.
pub fn forward_with(k: Kernel, nthreads: usize, x: &SparseBatch, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    forward_impl(k, nthreads, x, w, b, y, false)
}

/// `max(forward, 0)`: the ReLU applied to each block of a row while it is still in L1
/// (the same bits as a separate pass over the output, without that pass).
pub(crate) fn forward_relu(x: &SparseBatch, w: &Matrix, b: &Matrix, y: &mut Matrix) -> Result<()> {
    forward_impl(active_kernel(), threads(), x, w, b, y, true)
}

fn forward_impl(k: Kernel, nthreads: usize, x: &SparseBatch, w: &Matrix, b: &Matrix, y: &mut Matrix, relu: bool) -> Result<()> {
    check("sparse_affine forward", x, w, b)?;
    let n = w.cols();
    y.resize(x.rows(), n);
    let nt = if x.nnz() * n < PAR_MIN_WORK { 1 } else { nthreads };
    let yp = SendPtr(y.data_mut().as_mut_ptr());
    let columns = |cols: std::ops::Range<usize>| {
        for c0 in cols.clone().step_by(COL_BLOCK) {
            let c1 = (c0 + COL_BLOCK).min(cols.end);
            for r in 0..x.rows() {
                // Safety: each thread writes only its own columns of y.
                let yr = unsafe { std::slice::from_raw_parts_mut(yp.ptr().add(r * n + c0), c1 - c0) };
                yr.copy_from_slice(&b.data()[c0..c1]);
                gather_add_with(k, yr, w.data(), n, c0, x.row(r));
                if relu {
                    yr.iter_mut().for_each(|v| *v = v.max(0.0));
                }
            }
        }
    };
    if nt == 1 && on_board() {
        // A shard's layer: its column blocks shared with threads that are out of shards.
        share(n.div_ceil(COL_BLOCK), &|i| columns(i * COL_BLOCK..(n.min((i + 1) * COL_BLOCK))));
    } else {
        parallel_ranges(n, nt, GATHER_BLOCK, columns);
    }
    Ok(())
}

/// Backward of [`forward`]: `dW[i] += dY[r]` for each set bit `i` of row `r`, and
/// `db += Σ_r dY[r]`. Accumulates (does not overwrite) `dW` and `db`.
pub fn backward(x: &SparseBatch, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix) -> Result<()> {
    backward_with(active_kernel(), threads(), x, dy, dw, db)
}

/// [`backward`] with an explicit kernel flavour and thread count. Goes feature by
/// feature (the batch transposed by a counting sort): each touched block of a `dW` row
/// is read and written once, summing its dY rows in registers; untouched rows are skipped.
/// Threads own disjoint feature ranges (balanced by set bits), so no locking is needed
/// and the summation order (rows in increasing order) never changes.
pub fn backward_with(k: Kernel, nthreads: usize, x: &SparseBatch, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix) -> Result<()> {
    backward_impl(k, nthreads, x, dy, dw, db, false)
}

/// [`backward_with`] with `dW` overwritten instead of added to: each row becomes the sum
/// of its dY rows (zero for features no row has), the same bits as accumulating into a
/// zeroed `dW`, without the zeroing pass over the whole matrix. `db` still accumulates.
pub(crate) fn backward_overwrite_with(k: Kernel, nthreads: usize, x: &SparseBatch, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix) -> Result<()> {
    backward_impl(k, nthreads, x, dy, dw, db, true)
}

fn backward_impl(k: Kernel, nthreads: usize, x: &SparseBatch, dy: &Matrix, dw: &mut Matrix, db: &mut Matrix, overwrite: bool) -> Result<()> {
    let n = dw.cols();
    check("sparse_affine backward", x, dw, db)?;
    if dy.shape() != (x.rows(), n) {
        return Err(TensorError::shape(
            "sparse_affine backward",
            format!("dY is {}×{}, expected {}×{n}", dy.rows(), dy.cols(), x.rows()),
        ));
    }
    for r in 0..x.rows() {
        add_assign_with(k, db.data_mut(), dy.row(r));
    }
    let nt = if x.nnz() * n < PAR_MIN_WORK { 1 } else { nthreads.max(1) };
    let dwp = SendPtr(dw.data_mut().as_mut_ptr());
    with_by_feature(x, |t| {
        let work = |fs: std::ops::Range<usize>, cols: std::ops::Range<usize>| {
            // Column blocks outermost so the dY block (256 × 128 floats) stays in L2.
            for c0 in cols.step_by(COL_BLOCK) {
                let c1 = (c0 + COL_BLOCK).min(n);
                for f in fs.clone() {
                    let rows = t.rows_of(f);
                    if rows.is_empty() && !overwrite {
                        continue;
                    }
                    // Safety: each thread owns the dW rows of its feature range.
                    let d = unsafe { std::slice::from_raw_parts_mut(dwp.ptr().add(f * n + c0), c1 - c0) };
                    if overwrite {
                        gather_set_with(k, d, dy.data(), n, c0, rows);
                    } else {
                        gather_add_with(k, d, dy.data(), n, c0, rows);
                    }
                }
            }
        };
        if nt == 1 && on_board() {
            // A shard's layer: its column blocks shared with threads that are out of shards
            // (each element summed in the same order whoever runs its block).
            let all = 0..x.features();
            share(n.div_ceil(COL_BLOCK), &|i| work(all.clone(), i * COL_BLOCK..n.min((i + 1) * COL_BLOCK)));
            return;
        }
        // Feature boundaries that split the set bits evenly.
        let total = x.nnz();
        let mut bounds = vec![0usize];
        for p in 1..nt {
            let target = total * p / nt;
            let f = t.offsets.partition_point(|&o| o < target).min(x.features());
            bounds.push(f.max(*bounds.last().unwrap_or(&0)));
        }
        bounds.push(x.features());
        crate::tensor::runtime::crew::run(bounds.len() - 1, &|i| work(bounds[i]..bounds[i + 1], 0..n));
    });
    Ok(())
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::runtime::help::{with_board, with_helper};
    use crate::tensor::{Init, Rng};

    /// Overwriting `dW` gives the bits of accumulating into a zeroed one, whatever it held
    /// (NaN here), for features no row has too, a width with a short last register block,
    /// every flavour and 1 or 2 threads.
    #[test]
    fn overwriting_equals_adding_into_zeros() {
        let mut rng = Rng::new(5);
        let (features, n) = (97, 203);
        // Features 0..10 never set: their rows must come out zero.
        let rows: Vec<Vec<u32>> = (0..70).map(|_| (0..1 + rng.below(20)).map(|_| 10 + rng.below(87) as u32).collect()).collect();
        let x = SparseBatch::from_rows(features, &rows).unwrap();
        let dy = Init::HeNormal.matrix(rows.len(), n, &mut rng);
        for k in Kernel::available_kernels() {
            for t in [1, 2] {
                let (mut want, mut db0) = (Matrix::zeros(features, n), Matrix::zeros(1, n));
                backward_with(k, t, &x, &dy, &mut want, &mut db0).unwrap();
                let mut got = Matrix::from_vec(features, n, vec![f32::NAN; features * n]).unwrap();
                let mut db1 = Matrix::zeros(1, n);
                backward_overwrite_with(k, t, &x, &dy, &mut got, &mut db1).unwrap();
                assert_eq!(got.data(), want.data(), "{} {t} threads", k.name());
                assert_eq!(db1.data(), db0.data());
                assert!(got.row(3).iter().all(|&v| v == 0.0));
            }
        }
    }

    /// The sparse layer's forward and backward (adding and overwriting), helped, give the
    /// same bits as alone, with a width that leaves a short last column block.
    #[test]
    fn helped_sparse_layers_are_the_same_bits() {
        let mut rng = Rng::new(12);
        let (features, n) = (301, 333);
        for kernel in Kernel::available_kernels() {
            let helped = with_helper(|board| {
                let rows: Vec<Vec<u32>> = (0..190)
                    .map(|_| {
                        let mut r: Vec<u32> = (0..1 + rng.below(40)).map(|_| rng.below(features as u64) as u32).collect();
                        r.sort_unstable();
                        r.dedup();
                        r
                    })
                    .collect();
                let x = SparseBatch::from_rows(features, &rows).unwrap();
                let w = Init::HeNormal.matrix(features, n, &mut rng);
                let b = Init::HeNormal.matrix(1, n, &mut rng);
                let dy = Init::HeNormal.matrix(rows.len(), n, &mut rng);
                let (mut y0, mut y1) = (Matrix::default(), Matrix::default());
                forward_with(kernel, 1, &x, &w, &b, &mut y0).unwrap();
                with_board(board, || forward_with(kernel, 1, &x, &w, &b, &mut y1)).unwrap();
                assert_eq!(y0.data(), y1.data(), "{} forward", kernel.name());
                for overwrite in [false, true] {
                    let (mut dw0, mut db0) = (Init::HeNormal.matrix(features, n, &mut rng), Matrix::zeros(1, n));
                    let (mut dw1, mut db1) = (dw0.clone(), db0.clone());
                    let back = if overwrite { backward_overwrite_with } else { backward_with };
                    back(kernel, 1, &x, &dy, &mut dw0, &mut db0).unwrap();
                    with_board(board, || back(kernel, 1, &x, &dy, &mut dw1, &mut db1)).unwrap();
                    assert_eq!(dw0.data(), dw1.data(), "{} backward, overwrite {overwrite}", kernel.name());
                    assert_eq!(db0.data(), db1.data(), "{} bias backward", kernel.name());
                }
                true
            });
            assert!(helped > 0, "{}: the helper never took a block", kernel.name());
        }
    }
}
