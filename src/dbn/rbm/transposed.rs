//! The Gibbs chain's passes over batches stored transposed (`visible × n` and `hidden × n`:
//! one column per row of the batch, the layout in which the chain's products read W as it
//! is stored), and the scan of a batch for its nonzeros. Each is written once and run with
//! the active kernel's instructions ([`Kernel::run`]), and each gives the bits of the
//! row-major loop it replaces: the same operations on each element, sums in the same order.

use crate::tensor::kernels::dispatch::FlavourFn;
use crate::tensor::kernels::simd::{Flavour, Kernel};
use crate::tensor::kernels::vecops::sigmoid;
use crate::tensor::matrix::Matrix;
use crate::tensor::rng::Rng;

/// `xt = σ(xt + bias)` with `bias[i]` along all of row `i` (`cols` values a row): the
/// sigmoid of a transposed batch, each element as `sigmoid_bias_with` computes it.
pub(super) fn sigmoid_bias_rows(k: Kernel, xt: &mut [f32], cols: usize, bias: &[f32]) {
    struct Job<'a>(&'a mut [f32], usize, &'a [f32]);
    #[inline(always)]
    fn body(xt: &mut [f32], cols: usize, bias: &[f32]) {
        for (row, &b) in xt.chunks_exact_mut(cols.max(1)).zip(bias) {
            for v in row {
                *v = sigmoid(*v + b);
            }
        }
    }
    impl FlavourFn for Job<'_> {
        type Output = ();
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) {
            body(self.0, self.1, self.2)
        }
        fn portable(self) {
            body(self.0, self.1, self.2)
        }
    }
    k.run(Job(xt, cols, bias))
}

/// `out[r] = Σ_i (at[i][r] − bt[i][r])²` for each column `r` of two row-major `rows × cols`
/// matrices, summed as the row-major loop it replaces summed a row of the untransposed ones:
/// eight partial sums (the terms of rows `i ≡ l mod 8` below the last whole block of eight,
/// in order), added together in order, plus the last `rows % 8` terms summed in order.
/// `acc` is scratch (`8 × cols` values).
pub(super) fn column_distances(k: Kernel, at: &[f32], bt: &[f32], rows: usize, cols: usize, acc: &mut Vec<f32>, out: &mut [f32]) {
    struct Job<'a>(&'a [f32], &'a [f32], usize, usize, &'a mut Vec<f32>, &'a mut [f32]);
    #[inline(always)]
    fn body(at: &[f32], bt: &[f32], rows: usize, cols: usize, acc: &mut Vec<f32>, out: &mut [f32]) {
        acc.clear();
        acc.resize(8 * cols, 0.0);
        let whole = rows - rows % 8;
        for i in 0..whole {
            let (a, b) = (&at[i * cols..(i + 1) * cols], &bt[i * cols..(i + 1) * cols]);
            let s = &mut acc[(i % 8) * cols..(i % 8 + 1) * cols];
            for ((s, &x), &y) in s.iter_mut().zip(a).zip(b) {
                *s += (x - y) * (x - y);
            }
        }
        let out = &mut out[..cols];
        out.fill(0.0);
        for l in 0..8 {
            for (o, &x) in out.iter_mut().zip(&acc[l * cols..(l + 1) * cols]) {
                *o += x;
            }
        }
        // The tail in its own sums (the row loop sums it apart, then adds it at the end).
        let tail = &mut acc[..cols];
        tail.fill(0.0);
        for i in whole..rows {
            let (a, b) = (&at[i * cols..(i + 1) * cols], &bt[i * cols..(i + 1) * cols]);
            for ((t, &x), &y) in tail.iter_mut().zip(a).zip(b) {
                *t += (x - y) * (x - y);
            }
        }
        for (o, &t) in out.iter_mut().zip(tail.iter()) {
            *o += t;
        }
    }
    impl FlavourFn for Job<'_> {
        type Output = ();
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) {
            body(self.0, self.1, self.2, self.3, self.4, self.5)
        }
        fn portable(self) {
            body(self.0, self.1, self.2, self.3, self.4, self.5)
        }
    }
    k.run(Job(at, bt, rows, cols, acc, out))
}

/// Calls `f(i)` for each `i` with `row[i] != 0` (NaN included), in order: the zero test on
/// blocks of sixteen values as one vector compare and a bit mask, the others visited bit
/// by bit (most blocks of a chess position's row have no nonzero).
pub(super) fn nonzeros<G: FnMut(usize)>(k: Kernel, row: &[f32], f: G) {
    struct Job<'a, G>(&'a [f32], G);
    #[inline(always)]
    fn body<G: FnMut(usize)>(row: &[f32], mut f: G) {
        const CHUNK: usize = 16;
        for (c, chunk) in row.chunks(CHUNK).enumerate() {
            let mut mask = chunk.iter().enumerate().fold(0u32, |m, (l, &x)| m | (((x != 0.0) as u32) << l));
            while mask != 0 {
                f(c * CHUNK + mask.trailing_zeros() as usize);
                mask &= mask - 1;
            }
        }
    }
    impl<G: FnMut(usize)> FlavourFn for Job<'_, G> {
        type Output = ();
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) {
            body(self.0, self.1)
        }
        fn portable(self) {
            body(self.0, self.1)
        }
    }
    k.run(Job(row, f))
}

/// The RBM's `sample_into` in place on a transposed matrix, drawing in the order of the
/// matrix it is the transpose of (row by row of `v`): the draws of the untransposed chain.
pub(super) fn sample_in_place_t(pt: &mut Matrix, rng: &mut Rng) {
    let (rows, cols) = (pt.rows(), pt.cols());
    let d = pt.data_mut();
    for r in 0..cols {
        for i in 0..rows {
            let q = &mut d[i * cols + r];
            *q = if rng.next_f32() < *q { 1.0 } else { 0.0 };
        }
    }
}

/// `out = 1` with probability `pt`ᵀ (each element), else `0`: the RBM's `sample_into` of
/// the matrix `pt` is the transpose of, drawn in that matrix's order.
pub(super) fn sample_into_t(pt: &Matrix, out: &mut Matrix, rng: &mut Rng) {
    let (rows, cols) = (pt.rows(), pt.cols());
    out.resize(cols, rows);
    let d = pt.data();
    for (r, row) in out.data_mut().chunks_exact_mut(rows.max(1)).enumerate().take(cols) {
        for (i, o) in row.iter_mut().enumerate() {
            *o = if rng.next_f32() < d[i * cols + r] { 1.0 } else { 0.0 };
        }
    }
}

/// `sums += sign · Σ_columns mt`, added column by column: the same sums, in the same order,
/// as the RBM's `col_sums_add` of the matrix `mt` is the transpose of.
pub(super) fn row_sums_add(mt: &Matrix, sign: f32, sums: &mut [f32]) {
    for (i, s) in sums.iter_mut().enumerate().take(mt.rows()) {
        mt.row(i).iter().for_each(|&x| *s += sign * x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::kernels::vecops::sigmoid_bias_with;
    use crate::tensor::rng::Rng;

    /// `rows × cols` values in `[0, 1)`, about a third of them exact zeros, and their transpose.
    fn matrix(rows: usize, cols: usize, rng: &mut Rng) -> (Vec<f32>, Vec<f32>) {
        let m: Vec<f32> = (0..rows * cols).map(|_| if rng.next_f32() < 0.3 { 0.0 } else { rng.next_f32() }).collect();
        let t = (0..cols * rows).map(|x| m[(x % rows) * cols + x / rows]).collect();
        (m, t)
    }

    /// The row-major loop the transposed passes replace: eight interleaved partial sums,
    /// then the tail.
    fn row_distance(a: &[f32], b: &[f32]) -> f32 {
        let mut acc = [0f32; 8];
        let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
        let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| (x - y) * (x - y)).sum();
        for (x, y) in ca.zip(cb) {
            for l in 0..8 {
                acc[l] += (x[l] - y[l]) * (x[l] - y[l]);
            }
        }
        acc.iter().sum::<f32>() + tail
    }

    #[test]
    fn transposed_passes_give_the_bits_of_the_row_major_loops() {
        let mut rng = Rng::new(5);
        for k in Kernel::available_kernels() {
            for (n, width) in [(1, 1), (3, 7), (32, 8), (32, 17), (5, 772), (33, 100)] {
                // v (n × width) and its transpose; the same for the batch v0.
                let (v, vt) = matrix(n, width, &mut rng);
                let (v0, v0t) = matrix(n, width, &mut rng);
                let mut dist = vec![0f32; n];
                column_distances(k, &v0t, &vt, width, n, &mut Vec::new(), &mut dist);
                for r in 0..n {
                    let want = row_distance(&v0[r * width..(r + 1) * width], &v[r * width..(r + 1) * width]);
                    assert_eq!(dist[r].to_bits(), want.to_bits(), "{k:?} {n}×{width} row {r}");
                }
                let bias: Vec<f32> = (0..width).map(|_| rng.next_f32() * 4.0 - 2.0).collect();
                let (mut rm, mut tm) = (v.clone(), vt.clone());
                for r in 0..n {
                    sigmoid_bias_with(k, &mut rm[r * width..(r + 1) * width], &bias);
                }
                sigmoid_bias_rows(k, &mut tm, n, &bias);
                for (x, &got) in tm.iter().enumerate() {
                    assert_eq!(got.to_bits(), rm[(x % n) * width + x / n].to_bits(), "{k:?} {n}×{width} sigmoid");
                }
                for r in 0..n {
                    let row = &v[r * width..(r + 1) * width];
                    let mut got = Vec::new();
                    nonzeros(k, row, |i| got.push(i));
                    let want: Vec<usize> = (0..width).filter(|&i| row[i] != 0.0).collect();
                    assert_eq!(got, want, "{k:?} {n}×{width} row {r}");
                }
            }
        }
        // NaN is not zero (the scan reports it, and the caller refuses it); -0 is.
        let mut got = Vec::new();
        nonzeros(Kernel::Scalar, &[0.0, f32::NAN, -0.0, 1.0], |i| got.push(i));
        assert_eq!(got, [1, 3]);
    }
}
