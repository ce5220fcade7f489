//! A restricted Boltzmann machine with binary (Bernoulli) visible and hidden units, trained
//! by contrastive divergence, as in Hinton's "A Practical Guide to Training Restricted
//! Boltzmann Machines" (UTML TR 2010-003; the § numbers below are its sections). It is the
//! unit of greedy layer-wise pretraining: `w` is `visible × hidden`, one row per input like
//! the tape's affine weights, so a trained RBM's `w` and `hbias` become a hidden layer's
//! weight and bias as they are, and [`Rbm::hidden_probs`] of the data is the next RBM's input.
//!
//! Energy `E(v, h) = −v·b − h·c − vᵀ·W·h` (`b` = `vbias`, `c` = `hbias`), so
//! `P(h_j = 1 | v) = σ(c_j + v·W_j)` and `P(v_i = 1 | h) = σ(b_i + W_i·h)`.
//!
//! One [`Rbm::cd_k`] step on a batch `v0` of `n` rows does exactly this:
//! 1. `h0 = σ(v0·W + c)`, probabilities: the positive statistics are `v0ᵀ·h0` (§3.3). A binary
//!    sample of `h0` starts the chain (§3.1: hidden units driven by data are sampled).
//! 2. For `s = 1..=k`: `v_s = σ(h·Wᵀ + b)`. Before the last step the chain goes on from a
//!    binary sample of `v_s` and a binary sample `h` of `σ(v_s·W + c)`. At `s = k` the visible
//!    probabilities are the reconstruction itself (§3.2) and `hk = σ(v_k·W + c)` stays
//!    probabilities (§3.3: the last hidden update is never sampled).
//! 3. With `a = lr / n`: `ΔW = a·(v0ᵀ·h0 − v_kᵀ·hk)`, `Δb = a·Σ_rows(v0 − v_k)`,
//!    `Δc = a·Σ_rows(h0 − hk)`, all from the weights before the step; optionally with
//!    momentum and L2 weight decay on `W` (§9, §10; both 0 by default).
//!
//! The reported reconstruction error is the mean over elements of `(v0 − v_1)²`, `v_1` the
//! first visible probabilities: §5's rough monitor of progress, not the objective. The
//! overfitting monitor of §6 is the gap between the mean [`Rbm::free_energy`] of training
//! rows and of held-out rows.
//!
//! Speed: the dense products go through [`gemm`] (SIMD kernels, threads for the large ones).
//! A sparse batch (a chess position sets ~4 % of its inputs) computes `v0·W` and `v0ᵀ·h0`
//! over its nonzero values only, the way the sparse input layer does. The chain keeps its
//! visible and hidden states transposed (`visible × n`, `hidden × n`), so that its two
//! products, `vᵀ = W·hᵀ` and `hkᵀ = Wᵀ·vᵀ`, have the batch as their columns: at a batch of
//! 32 (or any multiple of the kernel's tile width up to 32) the GEMM then reads W where it
//! is instead of packing it twice a step. Every sum is the one the row-major chain made, in
//! the same order. Buffers live in the struct: after the first batch of a given size, a
//! step allocates nothing.
//!
//! Determinism: the samples are drawn from the caller's [`Rng`] in a fixed order (`h0` row
//! by row, then each chain step's samples), so the same seed, weights, batches and kernel
//! flavour give bit-identical weights. The thread count does not change the result either:
//! GEMM computes every element with the same operations whatever the split, and the rest
//! runs on the calling thread.

pub mod bench;
mod transposed;

use crate::tensor::error::{Result, TensorError};
use crate::tensor::{gemm, Trans};
use crate::tensor::matrix::Matrix;
use crate::tensor::rng::Rng;
use crate::tensor::kernels::simd::active_kernel;
use crate::tensor::kernels::vecops::{add_assign_with, axpy_with, gather_add_with, sigmoid_bias_with};
use transposed::{column_distances, nonzeros, row_sums_add, sample_in_place_t, sample_into_t, sigmoid_bias_rows};

/// Batches with at most this fraction of nonzero visible values take the sparse path for
/// `v0·W` and `v0ᵀ·h0`. Measured on random binary batches at 772 → 100, CPU time of CD-1,
/// sparse against dense: 0.60× at 4 % ones (a chess encoding), 0.73× at 10 %, 0.87× at 20 %.
/// A hidden layer's probabilities (the next RBM's input) are never 0 and go dense.
const SPARSE_MAX_DENSITY: f64 = 0.25;

/// Mean activations are clamped to `[P_MIN, 1 − P_MIN]` before `log(p / (1 − p))`, so a
/// feature that is never (or always) on gets a large finite bias, not ±∞.
const P_MIN: f32 = 1e-3;

/// What one contrastive-divergence step measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdStats {
    /// Mean over elements of `(v0 − v_1)²`, `v_1` the one-step reconstruction probabilities.
    pub recon_error: f64,
}

/// Buffers reused from one [`Rbm::cd_k`] call to the next.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// Positive hidden probabilities `h0`.
    h0: Matrix,
    /// Sampled hidden states driving the chain.
    h: Matrix,
    /// Visible probabilities of the chain (a binary sample between steps when `k > 1`),
    /// transposed: `visible × n`.
    vt: Matrix,
    /// Negative hidden probabilities (and the hidden probabilities mid-chain), transposed.
    hkt: Matrix,
    /// The batch transposed (`visible × n`), for the reconstruction error.
    v0t: Matrix,
    /// Each row's squared reconstruction distance, and the partial sums behind it.
    dist: Vec<f32>,
    dist_acc: Vec<f32>,
    /// The batch's nonzero values, row by row: row `r` is `nz_off[r]..nz_off[r + 1]`.
    nz_idx: Vec<u32>,
    nz_val: Vec<f32>,
    nz_off: Vec<usize>,
    /// Whether every nonzero of the batch is exactly 1 (a binary encoding).
    binary: bool,
    /// Column sums: `Σ v0 − Σ v_k` and `Σ h0 − Σ hk`.
    dvb: Vec<f32>,
    dhb: Vec<f32>,
    /// Velocities (§9). `vel_w` is empty while plain steps (no momentum, no decay) are taken.
    vel_w: Matrix,
    vel_vb: Vec<f32>,
    vel_hb: Vec<f32>,
}

/// A Bernoulli-Bernoulli restricted Boltzmann machine. See the module documentation.
#[derive(Clone, Debug)]
pub struct Rbm {
    /// `visible × hidden` weights (one row per visible unit).
    pub w: Matrix,
    /// `1 × visible` visible biases.
    pub vbias: Matrix,
    /// `1 × hidden` hidden biases.
    pub hbias: Matrix,
    /// Momentum of the updates in `[0, 1)` (§9 suggests 0.5 at first, then 0.9). The weight
    /// velocity restarts from zero after steps taken with momentum and decay both 0.
    pub momentum: f32,
    /// L2 weight cost on `W`, not on the biases (§10 suggests 1e-4 to 1e-5).
    pub weight_decay: f32,
    sparse_max_density: f64,
    s: Scratch,
}

impl Rbm {
    /// An RBM with weights drawn from N(0, 0.01²) and zero biases (§8).
    pub fn new(visible: usize, hidden: usize, rng: &mut Rng) -> Self {
        let mut w = Matrix::zeros(visible, hidden);
        w.data_mut().iter_mut().for_each(|x| *x = 0.01 * rng.normal());
        Rbm {
            w,
            vbias: Matrix::zeros(1, visible),
            hbias: Matrix::zeros(1, hidden),
            momentum: 0.0,
            weight_decay: 0.0,
            sparse_max_density: SPARSE_MAX_DENSITY,
            s: Scratch::default(),
        }
    }

    pub fn visible(&self) -> usize {
        self.w.rows()
    }
    pub fn hidden(&self) -> usize {
        self.w.cols()
    }

    /// Sets each visible bias to `log(p / (1 − p))`, `p` the feature's mean over the rows of
    /// `data` clamped to `[0.001, 0.999]` (§8: the visible units then start at their data
    /// means, so the first updates do not spend themselves learning the biases).
    pub fn set_visible_bias_from(&mut self, data: &Matrix) -> Result<()> {
        self.check("Rbm::set_visible_bias_from", data)?;
        if data.rows() == 0 {
            return Err(TensorError::shape("Rbm::set_visible_bias_from", "no rows"));
        }
        let mut sums = vec![0f64; data.cols()];
        for r in 0..data.rows() {
            sums.iter_mut().zip(data.row(r)).for_each(|(s, &x)| *s += x as f64);
        }
        let n = data.rows() as f64;
        for (b, s) in self.vbias.data_mut().iter_mut().zip(&sums) {
            let p = ((s / n) as f32).clamp(P_MIN, 1.0 - P_MIN);
            *b = (p / (1.0 - p)).ln();
        }
        Ok(())
    }

    /// The parameters' shapes agree with each other and `v` has `visible` columns.
    fn check(&self, what: &str, v: &Matrix) -> Result<()> {
        let (nv, nh) = self.w.shape();
        if self.vbias.shape() != (1, nv) || self.hbias.shape() != (1, nh) {
            return Err(TensorError::shape(
                what,
                format!(
                    "W {nv}×{nh} with visible bias {}×{} and hidden bias {}×{}",
                    self.vbias.rows(),
                    self.vbias.cols(),
                    self.hbias.rows(),
                    self.hbias.cols()
                ),
            ));
        }
        if v.cols() != nv {
            return Err(TensorError::shape(what, format!("{} columns for {nv} visible units", v.cols())));
        }
        Ok(())
    }

    /// `out = σ(v·W + c)`: `P(h = 1 | v)` for each row of `v` (`out` is resized to
    /// `rows × hidden`). During greedy pretraining, the next layer's input.
    pub fn hidden_probs(&self, v: &Matrix, out: &mut Matrix) -> Result<()> {
        self.check("Rbm::hidden_probs", v)?;
        out.resize(v.rows(), self.hidden());
        gemm(Trans::N, Trans::N, 1.0, v, &self.w, 0.0, out)?;
        sigmoid_bias(out, self.hbias.data());
        Ok(())
    }

    /// `out = σ(σ(v·W + c)·Wᵀ + b)`: one up-down pass with probabilities throughout.
    pub fn reconstruct(&self, v: &Matrix, out: &mut Matrix) -> Result<()> {
        let mut h = Matrix::default();
        self.hidden_probs(v, &mut h)?;
        out.resize(v.rows(), self.visible());
        gemm(Trans::N, Trans::T, 1.0, &h, &self.w, 0.0, out)?;
        sigmoid_bias(out, self.vbias.data());
        Ok(())
    }

    /// Free energy of each row, `F(v) = −log Σ_h e^(−E(v, h)) = −v·b − Σ_j softplus(c_j + v·W_j)`,
    /// in f64 with a softplus that neither overflows nor loses small values. Lower is more
    /// probable: `P(v) ∝ e^(−F(v))`.
    pub fn free_energy(&self, v: &Matrix) -> Result<Vec<f64>> {
        self.check("Rbm::free_energy", v)?;
        let mut x = Matrix::zeros(v.rows(), self.hidden());
        gemm(Trans::N, Trans::N, 1.0, v, &self.w, 0.0, &mut x)?;
        let (b, c) = (self.vbias.data(), self.hbias.data());
        Ok((0..v.rows())
            .map(|r| {
                let vb: f64 = v.row(r).iter().zip(b).map(|(&a, &b)| a as f64 * b as f64).sum();
                let sp: f64 = x.row(r).iter().zip(c).map(|(&a, &c)| softplus(a as f64 + c as f64)).sum();
                -vb - sp
            })
            .collect())
    }

    /// One CD-k update on the batch `v0` (`n × visible`, values in `[0, 1]`) with learning
    /// rate `lr`; see the module documentation for exactly what is computed and in which
    /// order samples are drawn from `rng`. Errors (nothing changed): wrong width, an empty
    /// batch, a value outside `[0, 1]`, `k == 0`, a non-finite `lr`, momentum outside
    /// `[0, 1)` or a negative weight decay.
    pub fn cd_k(&mut self, v0: &Matrix, k: usize, lr: f32, rng: &mut Rng) -> Result<CdStats> {
        const WHAT: &str = "Rbm::cd_k";
        self.check(WHAT, v0)?;
        if v0.rows() == 0 {
            return Err(TensorError::shape(WHAT, "empty batch"));
        }
        if k == 0 {
            return Err(TensorError::argument(WHAT, "k must be at least 1"));
        }
        if !lr.is_finite() {
            return Err(TensorError::argument(WHAT, format!("learning rate {lr}")));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(TensorError::argument(WHAT, format!("momentum {} is not in [0, 1)", self.momentum)));
        }
        if !(self.weight_decay >= 0.0 && self.weight_decay.is_finite()) {
            return Err(TensorError::argument(WHAT, format!("weight decay {}", self.weight_decay)));
        }
        let (n, nv, nh) = (v0.rows(), self.visible(), self.hidden());
        let kern = active_kernel();
        let Rbm { w, vbias, hbias, momentum, weight_decay, sparse_max_density, s } = self;
        let density = s.scan(v0)?;
        let sparse = density <= *sparse_max_density;

        // 1. Positive phase (a sparse batch sums the W rows of its nonzeros).
        s.h0.resize(n, nh);
        if sparse {
            for r in 0..n {
                let (lo, hi) = (s.nz_off[r], s.nz_off[r + 1]);
                let row = s.h0.row_mut(r);
                row.fill(0.0);
                if s.binary {
                    // Sums of W rows, accumulated in registers (the sparse input layer's loop).
                    gather_add_with(kern, row, w.data(), nh, 0, &s.nz_idx[lo..hi]);
                } else {
                    for (&i, &x) in s.nz_idx[lo..hi].iter().zip(&s.nz_val[lo..hi]) {
                        axpy_with(kern, row, x, w.row(i as usize));
                    }
                }
            }
        } else {
            gemm(Trans::N, Trans::N, 1.0, v0, w, 0.0, &mut s.h0)?;
        }
        sigmoid_bias(&mut s.h0, hbias.data());
        sample_into(&s.h0, &mut s.h, rng);

        // 2. The Gibbs chain, its products with the batch in the columns (`vᵀ = W·hᵀ`,
        //    `hkᵀ = Wᵀ·vᵀ`): a batch of 32 is one or two micro-panels wide, so the products
        //    read W where it is instead of packing it (the same sums, so the same bits).
        let mut recon_error = 0.0;
        s.vt.resize(nv, n);
        s.hkt.resize(nh, n);
        for step in 1..=k {
            gemm(Trans::N, Trans::T, 1.0, w, &s.h, 0.0, &mut s.vt)?;
            sigmoid_bias_rows(kern, s.vt.data_mut(), n, vbias.data());
            if step == 1 {
                // v0 transposed from its nonzeros, then each row's squared distance.
                s.v0t.resize(nv, n);
                let v0t = s.v0t.data_mut();
                v0t.fill(0.0);
                for r in 0..n {
                    let (lo, hi) = (s.nz_off[r], s.nz_off[r + 1]);
                    for (&i, &x) in s.nz_idx[lo..hi].iter().zip(&s.nz_val[lo..hi]) {
                        v0t[i as usize * n + r] = x;
                    }
                }
                s.dist.resize(n, 0.0);
                column_distances(kern, s.v0t.data(), s.vt.data(), nv, n, &mut s.dist_acc, &mut s.dist);
                let se: f64 = s.dist.iter().map(|&x| x as f64).sum();
                recon_error = se / (n * nv) as f64;
            }
            if step < k {
                sample_in_place_t(&mut s.vt, rng);
            }
            gemm(Trans::T, Trans::N, 1.0, w, &s.vt, 0.0, &mut s.hkt)?;
            sigmoid_bias_rows(kern, s.hkt.data_mut(), n, hbias.data());
            if step < k {
                sample_into_t(&s.hkt, &mut s.h, rng);
            }
        }

        // 3. The update, from statistics all computed with the old weights.
        let a = lr / n as f32;
        let plain = *momentum == 0.0 && *weight_decay == 0.0;
        if plain {
            s.vel_w.resize(0, 0);
            gemm(Trans::N, Trans::T, -a, &s.vt, &s.hkt, 1.0, w)?;
            s.add_positive(v0, sparse, a, w)?;
        } else {
            if s.vel_w.shape() != (nv, nh) {
                s.vel_w.resize_zeroed(nv, nh);
            }
            let mut vel = std::mem::take(&mut s.vel_w);
            gemm(Trans::N, Trans::T, -a, &s.vt, &s.hkt, *momentum, &mut vel)?;
            s.add_positive(v0, sparse, a, &mut vel)?;
            if *weight_decay != 0.0 {
                axpy_with(kern, vel.data_mut(), -lr * *weight_decay, w.data());
            }
            add_assign_with(kern, w.data_mut(), vel.data());
            s.vel_w = vel;
        }
        s.dvb.clear();
        s.dvb.resize(nv, 0.0);
        if sparse {
            for (&i, &x) in s.nz_idx.iter().zip(&s.nz_val) {
                s.dvb[i as usize] += x;
            }
        } else {
            col_sums_add(v0, 1.0, &mut s.dvb);
        }
        row_sums_add(&s.vt, -1.0, &mut s.dvb);
        s.dhb.clear();
        s.dhb.resize(nh, 0.0);
        col_sums_add(&s.h0, 1.0, &mut s.dhb);
        row_sums_add(&s.hkt, -1.0, &mut s.dhb);
        let m = *momentum;
        for (bias, vel, d) in [(vbias, &mut s.vel_vb, &s.dvb), (hbias, &mut s.vel_hb, &s.dhb)] {
            vel.resize(d.len(), 0.0);
            for ((b, v), &g) in bias.data_mut().iter_mut().zip(vel.iter_mut()).zip(d.iter()) {
                *v = m * *v + a * g;
                *b += *v;
            }
        }
        Ok(CdStats { recon_error })
    }

    /// Tests: forces the dense path (0) or the sparse one (1) whatever the batch.
    #[cfg(test)]
    fn set_sparse_max_density(&mut self, d: f64) {
        self.sparse_max_density = d;
    }
}

impl Scratch {
    /// Lists the nonzero values of `v0` row by row and returns their fraction; errors on a
    /// value outside `[0, 1]` (NaN included).
    fn scan(&mut self, v0: &Matrix) -> Result<f64> {
        self.nz_idx.clear();
        self.nz_val.clear();
        self.nz_off.clear();
        self.nz_off.push(0);
        self.binary = true;
        let kern = active_kernel();
        for r in 0..v0.rows() {
            let row = v0.row(r);
            let lo = self.nz_idx.len();
            nonzeros(kern, row, |i| self.nz_idx.push(i as u32));
            for &i in &self.nz_idx[lo..] {
                let x = row[i as usize];
                if !(0.0..=1.0).contains(&x) {
                    return Err(TensorError::argument("Rbm::cd_k", format!("value {x} at row {r}, column {i} is not in [0, 1]")));
                }
                self.binary &= x == 1.0;
                self.nz_val.push(x);
            }
            self.nz_off.push(self.nz_idx.len());
        }
        Ok(self.nz_idx.len() as f64 / v0.len().max(1) as f64)
    }

    /// `dst += a · v0ᵀ·h0` (the positive statistics), over the nonzeros when `sparse`.
    fn add_positive(&self, v0: &Matrix, sparse: bool, a: f32, dst: &mut Matrix) -> Result<()> {
        if !sparse {
            return gemm(Trans::T, Trans::N, a, v0, &self.h0, 1.0, dst);
        }
        let kern = active_kernel();
        for r in 0..v0.rows() {
            let (lo, hi) = (self.nz_off[r], self.nz_off[r + 1]);
            for (&i, &x) in self.nz_idx[lo..hi].iter().zip(&self.nz_val[lo..hi]) {
                axpy_with(kern, dst.row_mut(i as usize), a * x, self.h0.row(r));
            }
        }
        Ok(())
    }
}

/// `x = σ(x + bias)` on every row (vectorised; libm's `expf` was a fifth of a CD-1 step).
fn sigmoid_bias(x: &mut Matrix, bias: &[f32]) {
    let k = active_kernel();
    for r in 0..x.rows() {
        sigmoid_bias_with(k, x.row_mut(r), bias);
    }
}

/// `out = 1` with probability `p` (each element of `p`), else `0`; one draw per element.
fn sample_into(p: &Matrix, out: &mut Matrix, rng: &mut Rng) {
    out.resize(p.rows(), p.cols());
    out.data_mut().iter_mut().zip(p.data()).for_each(|(o, &q)| *o = if rng.next_f32() < q { 1.0 } else { 0.0 });
}

/// `sums += sign · Σ_rows m`.
fn col_sums_add(m: &Matrix, sign: f32, sums: &mut [f32]) {
    for r in 0..m.rows() {
        sums.iter_mut().zip(m.row(r)).for_each(|(s, &x)| *s += sign * x);
    }
}

/// `ln(1 + e^x)` without overflow for large `x` or lost precision for very negative `x`.
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

#[cfg(test)]
mod tests;
