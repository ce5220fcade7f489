//! A trained DeepChess net quantised for the search, the default way it plays (`net.rs` keeps
//! the f32 layout, `Quantised false`). The same split as `net.rs`: an incremental first
//! layer, the rest of the tower and the head's first layer per position (the code), then a
//! comparison on two codes. Integer all the way to the last layer:
//! - the first layer is a 16-bit accumulator (`tensor::layers::quant::QSparse`), updated
//!   with whole-integer rows along the line;
//! - the rest of the tower, once per position, runs in 16-bit activations (0..=4095, each
//!   unit's scale from calibration, `calibrate.rs`) times 16-bit weights, summed in 32-bit
//!   integers (`madd`, VNNI `vpdpwssd`): 7-bit activations here cost a percent of the
//!   comparisons' order (docs/benchmarks.md);
//! - a code is the head's first layer as left and right halves in 16 bits; a comparison adds
//!   two halves with saturation; a head with hidden layers (the distilled and big nets) runs
//!   them, per comparison, in 8-bit activations (0..=127) times 8-bit weights (`vpdpbusd`
//!   with AVX-512 VNNI, `maddubs`+`madd` with AVX2); the last layer is one float dot product,
//!   the difference of the two logits.
//!
//! Every flavour gives the portable path's bits. Against the f32 net the probabilities
//! agree within the tolerance the tests state (`tests` below, and the held-out comparison
//! agreement in docs/benchmarks.md).

use super::calibrate::{self, Ranges};
use super::comparator::SiameseNet;
use super::net::NetEval;
use crate::deepchess::features::{BITS, INPUTS, MAX_ACTIVE};
use crate::eval::line::{BoardBits, FirstLayer};
use crate::deepchess::model::Net;
use crate::tensor::kernels::int8::{IntFlavour, IntFn, IntKernel};
use crate::tensor::layers::quant::{self, dot16, i16_to_bytes, pad_out, requant_bytes, requant_i16, scale_for, QDense, QSparse, ACT_MAX};
use crate::tensor::layers::quant16::{self, i16_to_act16, requant_act16, QDense16, ACT16_MAX};
use crate::tensor::Kernel;
use crate::tensor::Architecture as _;

/// Calibration: openings and positions per opening (2,000 positions).
const CALIBRATION: (usize, usize) = (400, 5);

/// Per-position code: the head's first layer as left and right halves, 16-bit, each unit in
/// its own scale.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct QHalves<const N: usize> {
    pub left: [i16; N],
    pub right: [i16; N],
}

impl<const N: usize> Default for QHalves<N> {
    fn default() -> Self {
        QHalves { left: [0; N], right: [0; N] }
    }
}

/// A loaded net, quantised. `N` is the head's first hidden width padded to 16 lanes, `W`
/// the widest other layer padded to 32 bytes (the activation buffers).
pub struct QNetEval<const N: usize, const W: usize> {
    first: QSparse,
    /// The first layer's sums to its ReLU's 16-bit activations.
    first_mult: Vec<f32>,
    tower: Vec<QDense16>,
    /// The head's first layer, `[left | right]`, to 16-bit codes.
    halves: QDense16,
    /// A pair's hidden units (16-bit, the codes' scale) to bytes, when the head has hidden
    /// layers after its first.
    z_mult: Vec<f32>,
    head_hidden: Vec<QDense>,
    /// The last layer's logit difference on its input (bytes, or the pair's 16-bit hidden
    /// units for a head of two layers), that input's scale folded in.
    last: Vec<f32>,
    last_b: f32,
    kernel: IntKernel,
    /// The float kernel it was asked for (what the player names).
    asked: Kernel,
    pub description: String,
}

pub type QDistilled = QNetEval<112, 128>;
pub type QBig = QNetEval<400, 608>;
pub type QCompact = QNetEval<32, 128>;

impl<const N: usize> QHalves<N> {
    /// Left then right as one slice of 2N: the halves layer's output.
    fn as_mut_slice(&mut self) -> &mut [i16] {
        // Safety: repr(C) with two [i16; N] fields is 2N contiguous values (N is a multiple
        // of 16, so the alignment adds no padding between them).
        unsafe { std::slice::from_raw_parts_mut(self as *mut Self as *mut i16, 2 * N) }
    }
}

impl<const N: usize, const W: usize> QNetEval<N, W> {
    /// Quantises a loaded net; fails when its shape does not fit this build.
    pub fn from_net(net: &Net) -> Result<Self, String> {
        NetEval::<N, W>::fits(&net.arch)?;
        let name = net.arch.describe();
        if net.arch.tower[1..].iter().chain(&net.arch.head[1..]).any(|&w| quant::pad_in(w) > W) || N > W {
            return Err(format!("net {name}: layers wider than this build's {W}-byte activations"));
        }
        let positions = calibrate::positions(CALIBRATION.0, CALIBRATION.1, 1);
        Ok(Self::with_ranges(net, &calibrate::ranges(net, &positions)))
    }

    fn with_ranges(net: &Net, r: &Ranges) -> Self {
        let p = |id| net.params.value(id);
        let scales = |max: &[f32]| max.iter().map(|&m| scale_for(m, ACT_MAX)).collect::<Vec<f32>>();
        // The tower's 16-bit activations: the largest value seen at 2/3 of the range, so a
        // position beyond the calibration set still fits.
        let scales16 = |max: &[f32]| max.iter().map(|&m| scale_for(1.5 * m, ACT16_MAX)).collect::<Vec<f32>>();
        let (w0, b0) = (p(net.tower[0].0), p(net.tower[0].1));
        let first = QSparse::new(w0.data(), b0.row(0), INPUTS, w0.cols(), MAX_ACTIVE);
        let mut s_in = scales16(&r.first);
        let mut first_mult: Vec<f32> = s_in.iter().zip(&first.scale).map(|(s, a)| s / a).collect();
        first_mult.resize(first.cols(), 0.0);
        let mut tower = Vec::new();
        for (l, &(w, b)) in net.tower[1..].iter().enumerate() {
            let (w, b) = (p(w), p(b));
            let s_out = scales16(&r.tower[l]);
            tower.push(QDense16::new(w.data(), b.row(0), w.rows(), w.cols(), &s_in, &s_out));
            s_in = s_out;
        }
        // The head's first layer as one layer of 2N outputs: left (with the bias), right.
        let f = net.arch.features();
        let (h0w, h0b) = (p(net.head[0].0), p(net.head[0].1));
        let h = h0w.cols();
        let s_code: Vec<f32> = (0..h).map(|j| scale_for(r.code[j].max(r.z[j]), 16_000.0)).collect();
        let (mut w, mut b, mut s_out) = (vec![0.0; f * 2 * N], vec![0.0; 2 * N], vec![1.0; 2 * N]);
        for i in 0..f {
            w[i * 2 * N..i * 2 * N + h].copy_from_slice(&h0w.data()[i * h..(i + 1) * h]);
            w[i * 2 * N + N..i * 2 * N + N + h].copy_from_slice(&h0w.data()[(f + i) * h..(f + i + 1) * h]);
        }
        b[..h].copy_from_slice(h0b.row(0));
        s_out[..h].copy_from_slice(&s_code);
        s_out[N..N + h].copy_from_slice(&s_code);
        let halves = QDense16::new(&w, &b, f, 2 * N, &s_in, &s_out);
        // The rest of the head.
        let (lw, lb) = net.head.last().map(|&(w, b)| (p(w), p(b))).expect("fits() checked two head layers");
        let (mut z_mult, mut head_hidden) = (Vec::new(), Vec::new());
        let last_in: Vec<f32> = if net.head.len() == 2 {
            s_code.clone()
        } else {
            let s_z = scales(&r.z);
            z_mult = s_z.iter().zip(&s_code).map(|(z, c)| z / c).collect();
            z_mult.resize(N, 0.0);
            let mut s_in = s_z;
            for (l, &(w, b)) in net.head[1..net.head.len() - 1].iter().enumerate() {
                let (w, b) = (p(w), p(b));
                let s_out = scales(&r.head[l]);
                head_hidden.push(QDense::new(w.data(), b.row(0), w.rows(), w.cols(), &s_in, &s_out));
                s_in = s_out;
            }
            s_in
        };
        let mut last = vec![0.0; pad_out(last_in.len()).max(N)];
        for (i, s) in last_in.iter().enumerate() {
            last[i] = (lw.get(i, 0) - lw.get(i, 1)) / s;
        }
        QNetEval {
            first,
            first_mult,
            tower,
            halves,
            z_mult,
            head_hidden,
            last,
            last_b: lb.get(0, 0) - lb.get(0, 1),
            kernel: IntKernel::for_kernel(Kernel::best()),
            asked: Kernel::best(),
            description: net.arch.describe(),
        }
    }

    /// Forces the integer flavour of a float kernel choice (tests, benchmarks); false when
    /// this CPU lacks the float kernel.
    pub fn set_kernel(&mut self, k: Kernel) -> bool {
        let ok = k.available();
        if ok {
            self.kernel = IntKernel::for_kernel(k);
            self.asked = k;
        }
        ok
    }

    pub fn kernel(&self) -> IntKernel {
        self.kernel
    }

    /// The kernel as a player names it, e.g. `avx512 kernel, integer avx512-vnni`.
    pub fn kernel_description(&self) -> String {
        format!("{} kernel, integer {}", self.asked.name(), self.kernel.name())
    }
}

/// The rest of the tower and the halves from the first layer's sums.
///
/// Safety: `F`'s instructions are available.
#[inline(always)]
unsafe fn finish_with<F: IntFlavour, const N: usize, const W: usize>(n: &QNetEval<N, W>, first: &[i16]) -> QHalves<N> {
    let (mut x, mut y) = ([0i16; W], [0i16; W]);
    // The halves layer has 2N outputs, N ≤ W.
    let mut sums = [[0i32; W]; 2];
    let sums = sums.as_flattened_mut();
    i16_to_act16(first, &n.first_mult, &mut x);
    for d in &n.tower {
        quant16::affine16::<F>(d, &x, sums);
        requant_act16(&d.mult, &d.bias, sums, &mut y);
        std::mem::swap(&mut x, &mut y);
    }
    quant16::affine16::<F>(&n.halves, &x, sums);
    let mut c = QHalves::<N>::default();
    requant_i16(&n.halves.mult, &n.halves.bias, sums, c.as_mut_slice());
    c
}

/// The logit difference of the pair (a as left, b as right).
///
/// Safety: as [`finish_with`].
#[inline(always)]
unsafe fn head_with<F: IntFlavour, const N: usize, const W: usize>(n: &QNetEval<N, W>, a: &QHalves<N>, b: &QHalves<N>) -> f32 {
    let mut z = [0i16; N];
    for i in 0..N {
        z[i] = a.left[i].saturating_add(b.right[i]).max(0);
    }
    if n.head_hidden.is_empty() {
        return dot16(|i| z[i] as f32, &n.last[..N]) + n.last_b;
    }
    let (mut x, mut y) = ([0u8; W], [0u8; W]);
    let mut sums = [0i32; W];
    i16_to_bytes(&z, &n.z_mult, &mut x);
    for d in &n.head_hidden {
        quant::affine::<F>(d, &x, &mut sums);
        requant_bytes(d, &sums, &mut y);
        std::mem::swap(&mut x, &mut y);
    }
    dot16(|i| x[i] as f32, &n.last) + n.last_b
}

struct Finish<'a, const N: usize, const W: usize>(&'a QNetEval<N, W>, &'a [i16]);
impl<const N: usize, const W: usize> IntFn for Finish<'_, N, W> {
    type Output = QHalves<N>;
    #[inline(always)]
    unsafe fn simd<F: IntFlavour>(self) -> QHalves<N> {
        finish_with::<F, N, W>(self.0, self.1)
    }
}

/// Both orders of a pair: a head of two layers as two [`head_with`]; hidden layers as one
/// pass over their weights for the two orders.
///
/// Safety: as [`finish_with`].
#[inline(always)]
unsafe fn head_pair<F: IntFlavour, const N: usize, const W: usize>(n: &QNetEval<N, W>, a: &QHalves<N>, b: &QHalves<N>) -> (f32, f32) {
    if n.head_hidden.is_empty() {
        return (head_with::<F, N, W>(n, a, b), head_with::<F, N, W>(n, b, a));
    }
    let (mut za, mut zb) = ([0i16; N], [0i16; N]);
    for i in 0..N {
        za[i] = a.left[i].saturating_add(b.right[i]).max(0);
        zb[i] = b.left[i].saturating_add(a.right[i]).max(0);
    }
    let (mut xa, mut xb, mut ya, mut yb) = ([0u8; W], [0u8; W], [0u8; W], [0u8; W]);
    let (mut sa, mut sb) = ([0i32; W], [0i32; W]);
    i16_to_bytes(&za, &n.z_mult, &mut xa);
    i16_to_bytes(&zb, &n.z_mult, &mut xb);
    for d in &n.head_hidden {
        quant::affine_pair::<F>(d, &xa, &xb, &mut sa, &mut sb);
        requant_bytes(d, &sa, &mut ya);
        requant_bytes(d, &sb, &mut yb);
        std::mem::swap(&mut xa, &mut ya);
        std::mem::swap(&mut xb, &mut yb);
    }
    (dot16(|i| xa[i] as f32, &n.last) + n.last_b, dot16(|i| xb[i] as f32, &n.last) + n.last_b)
}

struct Pair<'a, const N: usize, const W: usize>(&'a QNetEval<N, W>, &'a QHalves<N>, &'a QHalves<N>);
impl<const N: usize, const W: usize> IntFn for Pair<'_, N, W> {
    type Output = (f32, f32);
    #[inline(always)]
    unsafe fn simd<F: IntFlavour>(self) -> (f32, f32) {
        head_pair::<F, N, W>(self.0, self.1, self.2)
    }
}

struct Single<'a, const N: usize, const W: usize>(&'a QNetEval<N, W>, &'a QHalves<N>, &'a QHalves<N>);
impl<const N: usize, const W: usize> IntFn for Single<'_, N, W> {
    type Output = f32;
    #[inline(always)]
    unsafe fn simd<F: IntFlavour>(self) -> f32 {
        head_with::<F, N, W>(self.0, self.1, self.2)
    }
}

struct Update<'a>(&'a QSparse, &'a mut [i16], &'a [i16], &'a [usize], &'a [usize]);
impl IntFn for Update<'_> {
    type Output = ();
    #[inline(always)]
    unsafe fn simd<F: IntFlavour>(self) {
        self.0.update(self.1, self.2, self.3, self.4)
    }
}

impl<const N: usize, const W: usize> FirstLayer for QNetEval<N, W> {
    type Sum = i16;
    fn bits(&self) -> BoardBits {
        BITS
    }
    fn width(&self) -> usize {
        self.first.cols()
    }
    fn refresh(&self, active: &[usize], out: &mut [i16]) {
        self.first.refresh(active, out)
    }
    fn update(&self, dst: &mut [i16], src: &[i16], added: &[usize], removed: &[usize]) {
        self.kernel.run(Update(&self.first, dst, src, added, removed))
    }
}

impl<const N: usize, const W: usize> SiameseNet for QNetEval<N, W> {
    type Code = QHalves<N>;

    fn finish(&self, first: &[i16]) -> QHalves<N> {
        self.kernel.run(Finish(self, first))
    }
    fn head_logit(&self, a: &QHalves<N>, b: &QHalves<N>) -> f32 {
        self.kernel.run(Single(self, a, b))
    }
    fn head_logit_pair(&self, a: &QHalves<N>, b: &QHalves<N>) -> (f32, f32) {
        self.kernel.run(Pair(self, a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;
    use crate::deepchess::features::Features;
    use crate::deepchess::infer::{Big, Compact, Distilled};
    use std::path::Path;
    use crate::tensor::NetFile;

    /// First-layer sums of a position through any net's own refresh.
    fn code<S: SiameseNet>(n: &S, p: &Position) -> S::Code {
        let rows: Vec<usize> = Features::from_position(p).as_slice().iter().map(|&i| i as usize).collect();
        let mut acc = vec![S::Sum::default(); n.width()];
        n.refresh(&rows, &mut acc);
        n.finish(&acc)
    }

    /// The antisymmetric probability the search reads, P(a better for White than b).
    fn prob<S: SiameseNet>(n: &S, a: &S::Code, b: &S::Code) -> (f32, f32) {
        let (ab, ba) = n.head_logit_pair(a, b);
        (0.5 * (crate::tensor::layers::sigmoid(ab) + 1.0 - crate::tensor::layers::sigmoid(ba)), ab - ba)
    }

    /// Agreement of the quantised net with its f32 layout on held-out positions (another
    /// seed's random games than calibration's): pairs of a position and the next one kept,
    /// and of positions of different games. Returns (mean |Δp|, largest |Δp|, fraction of
    /// pairs ordered alike, the same among pairs the f32 net does not call close: |p − ½|
    /// > 0.1).
    pub(crate) fn agreement<const N: usize, const W: usize, S: SiameseNet>(q: &QNetEval<N, W>, f: &S, positions: &[Position]) -> (f64, f64, f64, f64) {
        let qc: Vec<_> = positions.iter().map(|p| code(q, p)).collect();
        let fc: Vec<_> = positions.iter().map(|p| code(f, p)).collect();
        let (mut sum, mut max, mut same, mut n, mut clear_same, mut clear) = (0.0f64, 0.0f64, 0usize, 0usize, 0usize, 0usize);
        for i in 0..positions.len() {
            for j in [(i + 1) % positions.len(), (i + 7 * positions.len() / 13) % positions.len()] {
                let ((pq, mq), (pf, mf)) = (prob(q, &qc[i], &qc[j]), prob(f, &fc[i], &fc[j]));
                let d = (pq - pf).abs() as f64;
                sum += d;
                max = max.max(d);
                same += ((mq > 0.0) == (mf > 0.0)) as usize;
                n += 1;
                if (pf - 0.5).abs() > 0.1 {
                    clear += 1;
                    clear_same += ((mq > 0.0) == (mf > 0.0)) as usize;
                }
            }
        }
        (sum / n as f64, max, same as f64 / n as f64, clear_same as f64 / clear.max(1) as f64)
    }

    /// The shipped compact, distilled and big nets, quantised, against their f32 layouts, with
    /// every integer flavour this CPU has: the same bits across flavours, and probabilities
    /// within the stated tolerance of f32: mean |Δp| < 0.015, every pair within 0.25, at
    /// least 97 % of pairs ordered alike and 99.5 % of those the f32 net does not call close.
    #[test]
    fn quantised_nets_agree_with_f32() {
        let held_out = calibrate::positions(1000, 3, 77);
        let held_out = &held_out[held_out.len() - 800..];
        for file in ["compact.dcw", "distilled.dcw", "deepchess.dcw"] {
            let (net, _) = Net::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets").join(file)).unwrap();
            let mut codes = Vec::new();
            for k in Kernel::available_kernels() {
                let (stats, c) = if file == "compact.dcw" {
                    let mut q = QCompact::from_net(&net).unwrap();
                    q.set_kernel(k);
                    (agreement(&q, &Compact::from_net(&net).unwrap(), held_out), held_out.iter().map(|p| code(&q, p).left.to_vec()).collect::<Vec<_>>())
                } else if file == "distilled.dcw" {
                    let mut q = QDistilled::from_net(&net).unwrap();
                    q.set_kernel(k);
                    (agreement(&q, &Distilled::from_net(&net).unwrap(), held_out), held_out.iter().map(|p| code(&q, p).left.to_vec()).collect::<Vec<_>>())
                } else {
                    let mut q = QBig::from_net(&net).unwrap();
                    q.set_kernel(k);
                    (agreement(&q, &Big::from_net(&net).unwrap(), held_out), held_out.iter().map(|p| code(&q, p).left.to_vec()).collect::<Vec<_>>())
                };
                eprintln!("{file} {:?}: mean |dp| {:.5}, max {:.4}, ordered alike {:.4}, of clear pairs {:.4}", IntKernel::for_kernel(k), stats.0, stats.1, stats.2, stats.3);
                assert!(stats.0 < 0.015 && stats.1 < 0.25 && stats.2 > 0.97 && stats.3 > 0.995, "{file} {k:?}: {stats:?}");
                codes.push(c);
            }
            assert!(codes.windows(2).all(|w| w[0] == w[1]), "{file}: flavours disagree");
        }
    }
}
