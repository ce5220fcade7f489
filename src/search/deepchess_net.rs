//! The trained DeepChess networks (src/net) behind [`SiameseNet`], for the search.
//!
//! Per position (cached by zobrist): the rest of the tower after the incremental first
//! layer, then the head's first layer split in two halves — the position as the left input
//! (`W_left · f`) and as the right one (`W_right · f`), computed as one layer of twice the
//! width. A comparison then costs one add and ReLU of width N plus the head's remaining
//! layers (100→100→2 for the distilled net), and the search's comparisons ask for both
//! orders at once: one pass widens each weight vector once for the two and keeps two
//! independent accumulator chains (compact net: head 100 → 67 ns per comparison, +7–16 %
//! nodes/s). The last layer is one dot product, the difference of the two logits.
//!
//! Layers are stored padded with zero rows and columns to whole 16-float vectors, so
//! activations are whole vectors end to end (the padding stays 0 through ReLU) and no kernel
//! handles a remainder. Weights past the first layer are rounded to half precision and read
//! as such by the SIMD kernels (widened with F16C / AVX-512): half the cache lines per
//! position and comparison, which is what those layers wait on (probabilities move by ~1e-4;
//! +5 % nodes/s with the compact net, +18 % with the distilled one).
//! Three kernels, equal within float tolerance, chosen once at load
//! ([`Kernel`], the GEMM's flavours) and forceable for tests: the portable loop, AVX2+FMA
//! and AVX-512.

use super::net::SiameseNet;
use crate::data::encode::INPUTS;
use crate::net::Net;
pub use crate::tensor::Kernel;
use std::path::Path;

/// Floats per padded vector: one zmm, two ymm.
const LANES: usize = 16;
/// Widest padded layer the kernels' nonzero masks cover.
const MAX_WIDTH: usize = 1024;

/// IEEE 754 half-precision bits of `x`, rounded to nearest even (as F16C's `vcvtps2ph`).
fn f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    // Subnormal results keep `14 - e` fewer mantissa bits; normal ones drop 13.
    let (m, shift, base) = if e <= 0 { (man | 0x80_0000, (14 - e) as u32, 0) } else { (man, 13, (e as u32) << 10) };
    if shift > 24 {
        return sign;
    }
    let (kept, rest, half) = (m >> shift, m & ((1 << shift) - 1), 1 << (shift - 1));
    let rounded = base + kept + (rest > half || (rest == half && kept & 1 == 1)) as u32;
    sign | rounded as u16
}

/// The f32 value of half-precision bits (exact).
fn f16_value(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let (e, m) = (((h >> 10) & 0x1f) as u32, (h & 0x3ff) as u32);
    match e {
        0 => {
            let v = m as f32 * (1.0 / 16_777_216.0);
            if sign != 0 { -v } else { v }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (m << 13)),
        _ => f32::from_bits(sign | ((e + 112) << 23) | (m << 13)),
    }
}

const fn pad(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

/// One dense layer, input-major (row i = weights from input i), `rows × cols` padded with
/// zeros; the first `out` outputs are meaningful. Hidden layers narrower than a vector run
/// as dot products over `wt`, the transpose (`out × rows`); the head's last layer (the two
/// softmax outputs) is one dot product over `wd`.
struct Dense {
    w: Vec<f32>,
    /// `w` as IEEE half floats, what the SIMD kernels read (half the cache lines; `w`
    /// holds the same values widened back, for the portable loop).
    wh: Vec<u16>,
    b: Vec<f32>,
    rows: usize,
    cols: usize,
    out: usize,
    wt: Vec<f32>,
    /// A 2-output (softmax) layer's logit difference, column 0 − column 1: P(output 0) =
    /// sigmoid(`bd` + x·`wd`), one dot product instead of two (length `rows`).
    wd: Vec<f32>,
    bd: f32,
}

impl Dense {
    fn zeros(n_in: usize, out: usize, cols: usize) -> Dense {
        let rows = pad(n_in);
        Dense { w: vec![0.0; rows * cols], wh: Vec::new(), b: vec![0.0; cols], rows, cols, out, wt: Vec::new(), wd: Vec::new(), bd: 0.0 }
    }

    /// Rounds the weights to half precision (`wh` for the SIMD kernels, `w` widened back
    /// for the portable loop) and fills the transpose of a narrow layer.
    fn to_half(mut self) -> Dense {
        self.wh = self.w.iter().map(|&x| f16_bits(x)).collect();
        for (w, &h) in self.w.iter_mut().zip(&self.wh) {
            *w = f16_value(h);
        }
        if self.narrow() {
            let (w, rows, cols) = (&self.w, self.rows, self.cols);
            self.wt = (0..self.out).flat_map(|o| (0..rows).map(move |i| w[i * cols + o])).collect();
        }
        if self.out == 2 {
            self.wd = (0..self.rows).map(|i| self.w[i * self.cols] - self.w[i * self.cols + 1]).collect();
            self.bd = self.b[0] - self.b[1];
        }
        self
    }

    /// A layer as src/net stores it: `w` is `n_in × n_out`, input-major.
    fn from_logical(w: &[f32], b: &[f32], n_in: usize, n_out: usize) -> Dense {
        let mut d = Dense::zeros(n_in, n_out, pad(n_out));
        for i in 0..n_in {
            d.w[i * d.cols..i * d.cols + n_out].copy_from_slice(&w[i * n_out..(i + 1) * n_out]);
        }
        d.b[..n_out].copy_from_slice(b);
        d.to_half()
    }

    fn narrow(&self) -> bool {
        self.out < LANES
    }
}

/// Per-position code: the head's first layer on this position as left and as right input,
/// `N` floats each (the padded width; `repr(C)` so the fused layer writes both as one slice;
/// aligned to cache lines so a cached code spans the fewest lines: +6-10 % nodes/s).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Halves<const N: usize> {
    pub left: [f32; N],
    pub right: [f32; N],
}

impl<const N: usize> Default for Halves<N> {
    fn default() -> Self {
        Halves { left: [0.0; N], right: [0.0; N] }
    }
}

impl<const N: usize> Halves<N> {
    /// Left then right as one slice of 2N: the fused layer's output.
    fn as_mut_slice(&mut self) -> &mut [f32] {
        // Safety: repr(C) with two [f32; N] fields is 2N contiguous floats (N is a multiple of
        // 16, so the alignment adds no padding).
        unsafe { std::slice::from_raw_parts_mut(self as *mut Self as *mut f32, 2 * N) }
    }
}

/// A loaded net ready for search. `N` is the head's first hidden width and `W` the widest
/// hidden tower layer, both padded to whole vectors: 112 and 112 for the distilled net
/// (100 wide), 400 and 608 for the big one (400 and 600).
pub struct NetEval<const N: usize, const W: usize> {
    first: Vec<f32>,
    first_bias: Vec<f32>,
    tower: Vec<Dense>,
    /// The head's first layer as `[left | right]`, `2N` columns.
    halves: Dense,
    head_rest: Vec<Dense>,
    kernel: Kernel,
    pub description: String,
}

pub type Distilled = NetEval<112, 112>;
pub type Big = NetEval<400, 608>;
/// Students narrower than the paper's distilled net (heads of 17 to 32, towers up to 128):
/// the compact net 773-32-32/32-2 (train phase `compact`, or `--distill-arch`), and the
/// 773-32-32-32/32-32-2 one it replaced.
pub type Compact = NetEval<32, 128>;

/// A net file loaded into whichever search build fits its shape.
pub enum AnyNet {
    Distilled(Distilled),
    Compact(Compact),
    Big(Big),
}

impl AnyNet {
    pub fn load(path: &Path) -> Result<AnyNet, String> {
        let (net, _) = Net::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let e1 = match Distilled::from_net(&net) {
            Ok(n) => return Ok(AnyNet::Distilled(n)),
            Err(e) => e,
        };
        if let Ok(n) = Compact::from_net(&net) {
            return Ok(AnyNet::Compact(n));
        }
        if let Ok(n) = Big::from_net(&net) {
            return Ok(AnyNet::Big(n));
        }
        Err(format!("{}: {e1}; nor the compact (head 17 to 32, tower up to 128) or big (head 385 to 400, tower up to 608) build", path.display()))
    }

    /// Forces a kernel (see [`NetEval::set_kernel`]).
    pub fn set_kernel(&mut self, k: Kernel) -> bool {
        match self {
            AnyNet::Distilled(n) => n.set_kernel(k),
            AnyNet::Compact(n) => n.set_kernel(k),
            AnyNet::Big(n) => n.set_kernel(k),
        }
    }

    pub fn kernel(&self) -> Kernel {
        match self {
            AnyNet::Distilled(n) => n.kernel(),
            AnyNet::Compact(n) => n.kernel(),
            AnyNet::Big(n) => n.kernel(),
        }
    }

    /// The layers, e.g. `773-32-32/32-2`.
    pub fn description(&self) -> &str {
        match self {
            AnyNet::Distilled(n) => &n.description,
            AnyNet::Compact(n) => &n.description,
            AnyNet::Big(n) => &n.description,
        }
    }
}

fn dense_of(net: &Net, (w, b): (crate::tensor::ParamId, crate::tensor::ParamId)) -> Dense {
    let (w, b) = (net.params.value(w), net.params.value(b));
    Dense::from_logical(w.data(), b.row(0), w.rows(), w.cols())
}

impl<const N: usize, const W: usize> NetEval<N, W> {
    /// Builds from a loaded net; fails when its widths do not pad to this type's `N` and
    /// fit `W`.
    pub fn from_net(net: &Net) -> Result<Self, String> {
        let arch = net.arch.describe();
        let h = net.arch.head[0];
        if pad(h) != N {
            return Err(format!("net {arch}: head width {h}, this type takes {} to {N}", N + 1 - LANES));
        }
        if net.arch.head.len() < 2 {
            return Err(format!("net {arch}: a head of one layer cannot be split for the search"));
        }
        // The first layer is only read row by row (incremental sums): kept unpadded.
        let (first_w, first_b) = (net.params.value(net.tower[0].0), net.params.value(net.tower[0].1));
        if first_w.rows() != INPUTS {
            return Err(format!("net {arch}: first layer has {} inputs, expected {INPUTS}", first_w.rows()));
        }
        if net.arch.tower[1..].iter().any(|&w| pad(w) > W) || net.arch.head[1..].iter().any(|&w| pad(w) > N) || W > MAX_WIDTH || 2 * N > MAX_WIDTH {
            return Err(format!("net {arch}: layers wider than this build's buffers ({W} tower, {N} head)"));
        }
        let tower: Vec<Dense> = net.tower[1..].iter().map(|&l| dense_of(net, l)).collect();
        // Rows 0..f of the head's first layer see the left position, rows f..2f the right.
        let f = net.arch.features();
        let (h0w, h0b) = (net.params.value(net.head[0].0), net.params.value(net.head[0].1));
        let (h0w, h0b) = (h0w.data(), h0b.row(0));
        let mut halves = Dense::zeros(f, 2 * N, 2 * N);
        for i in 0..f {
            let row = &mut halves.w[i * 2 * N..(i + 1) * 2 * N];
            row[..h].copy_from_slice(&h0w[i * h..(i + 1) * h]);
            row[N..N + h].copy_from_slice(&h0w[(f + i) * h..(f + i + 1) * h]);
        }
        halves.b[..h].copy_from_slice(h0b);
        let halves = halves.to_half();
        let head_rest: Vec<Dense> = net.head[1..].iter().map(|&l| dense_of(net, l)).collect();
        if head_rest.last().map(|d| d.out) != Some(2) {
            return Err(format!("net {arch}: the head must end in the two softmax outputs"));
        }
        Ok(NetEval {
            first_bias: first_b.row(0).to_vec(),
            first: first_w.data().to_vec(),
            tower,
            halves,
            head_rest,
            kernel: Kernel::best(),
            description: arch,
        })
    }

    /// Forces a kernel (tests, benchmarks); returns false and keeps the current one when
    /// this CPU lacks it.
    pub fn set_kernel(&mut self, k: Kernel) -> bool {
        let ok = k.available();
        if ok {
            self.kernel = k;
        }
        ok
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Loads a net file (`.dcw`).
    pub fn load(path: &Path) -> Result<Self, String> {
        let (net, _) = Net::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::from_net(&net).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// `y = b + x·W` (ReLU'd when `relu`), skipping inputs the previous ReLU zeroed.
fn dense_portable(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
    if d.narrow() {
        y[d.out..d.cols].fill(0.0);
        for (o, yo) in y[..d.out].iter_mut().enumerate() {
            let s = d.b[o] + x.iter().zip(&d.wt[o * d.rows..(o + 1) * d.rows]).map(|(a, w)| a * w).sum::<f32>();
            *yo = if relu { s.max(0.0) } else { s };
        }
        return;
    }
    let y = &mut y[..d.cols];
    y.copy_from_slice(&d.b);
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for (a, w) in y.iter_mut().zip(&d.w[i * d.cols..(i + 1) * d.cols]) {
                *a += xi * w;
            }
        }
    }
    if relu {
        y.iter_mut().for_each(|v| *v = v.max(0.0));
    }
}

/// The tower after the first layer, then the head's fused halves; `dense` is the layer
/// kernel, so every kernel shares this code.
#[inline(always)]
fn finish_with<const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32], dense: impl Fn(&Dense, &[f32], &mut [f32], bool)) -> Halves<N> {
    let (mut xa, mut ya) = ([0.0f32; W], [0.0f32; W]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    for (a, &s) in x.iter_mut().zip(first) {
        *a = s.max(0.0);
    }
    for d in &n.tower {
        dense(d, &x[..d.rows], &mut y[..d.cols], true);
        std::mem::swap(&mut x, &mut y);
    }
    let mut h = Halves::<N>::default();
    dense(&n.halves, &x[..n.halves.rows], h.as_mut_slice(), false);
    h
}

/// The head's remaining layers on a pair of codes: the logit difference, sigmoid of which is
/// P(a better than b for White). `dense` runs the hidden layers and `dot` the last one's
/// logit difference (the kernel's own).
#[inline(always)]
fn head_with<const N: usize, const W: usize>(
    n: &NetEval<N, W>,
    a: &Halves<N>,
    b: &Halves<N>,
    dense: impl Fn(&Dense, &[f32], &mut [f32], bool),
    dot: impl Fn(&[f32], &[f32]) -> f32,
) -> f32 {
    // Later head layers are no wider than the first (checked at load): N-sized scratch.
    let (mut xa, mut ya) = ([0.0f32; N], [0.0f32; N]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    for i in 0..N {
        x[i] = (a.left[i] + b.right[i]).max(0.0);
    }
    let (last, hidden) = n.head_rest.split_last().expect("checked at load");
    for d in hidden {
        dense(d, &x[..d.rows], &mut y[..d.cols], true);
        std::mem::swap(&mut x, &mut y);
    }
    last.bd + dot(&x[..last.rows], &last.wd)
}

fn dot_portable(x: &[f32], w: &[f32]) -> f32 {
    x.iter().zip(w).map(|(a, b)| a * b).sum()
}

/// The SIMD kernels: one layer kernel generic over the instruction flavour, thin
/// `#[target_feature]` wrappers per flavour. In BLIS terms a layer is a 1×cols by
/// cols×rows product: the jr loop walks blocks of output vectors held in registers, the k
/// loop streams only the inputs the ReLU left nonzero (bits of a mask), each broadcast once
/// per block.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{Dense, Halves, NetEval, LANES, MAX_WIDTH};
    use crate::tensor::gemm::kernels::x86::{Avx2, Avx512};
    use crate::tensor::gemm::kernels::Flavour;
    use std::arch::x86_64::*;

    /// A vector of `LANES` floats from as many half floats.
    trait Half: Flavour {
        unsafe fn load_half(p: *const u16) -> Self::V;
    }
    impl Half for Avx2 {
        #[inline(always)]
        unsafe fn load_half(p: *const u16) -> __m256 {
            _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i))
        }
    }
    impl Half for Avx512 {
        #[inline(always)]
        unsafe fn load_half(p: *const u16) -> __m512 {
            _mm512_cvtph_ps(_mm256_loadu_si256(p as *const __m256i))
        }
    }

    /// Output vectors accumulated in registers per pass: the register file less the
    /// broadcast input and a spare.
    const fn max_acc(registers: usize) -> usize {
        registers - 2
    }

    /// `B` output vectors from column `c`: bias, then one FMA per vector for each nonzero
    /// input (the micro-kernel), then ReLU and store.
    #[inline(always)]
    unsafe fn block<F: Half, const B: usize>(d: &Dense, x: &[f32], words: &[u64], c: usize, y: &mut [f32], relu: bool) {
        // Two accumulator sets taking alternate inputs (two dependency chains of half the
        // length: the layer is bound by FMA latency, not throughput), when they fit.
        let two = 2 * B <= max_acc(F::REGISTERS);
        let mut acc = [F::zero(); B];
        let mut acc2 = [F::zero(); B];
        for (v, a) in acc.iter_mut().enumerate() {
            *a = F::load(d.b.as_ptr().add(c + v * F::LANES));
        }
        for (k, &word) in words.iter().enumerate() {
            let mut m = word;
            while m != 0 {
                fma_row::<F, B>(d, x, k * 64 + m.trailing_zeros() as usize, c, &mut acc);
                m &= m - 1;
                if two && m != 0 {
                    fma_row::<F, B>(d, x, k * 64 + m.trailing_zeros() as usize, c, &mut acc2);
                    m &= m - 1;
                }
            }
        }
        for (v, &a) in acc.iter().enumerate() {
            let a = if two { F::add(a, acc2[v]) } else { a };
            F::store(y.as_mut_ptr().add(c + v * F::LANES), if relu { F::max0(a) } else { a });
        }
    }

    /// `acc += x[i] · W[i, c..]` over `B` vectors.
    #[inline(always)]
    unsafe fn fma_row<F: Half, const B: usize>(d: &Dense, x: &[f32], i: usize, c: usize, acc: &mut [F::V; B]) {
        let xi = F::splat(*x.get_unchecked(i));
        let row = d.wh.as_ptr().add(i * d.cols + c);
        for (v, a) in acc.iter_mut().enumerate() {
            *a = F::fmadd(xi, F::load_half(row.add(v * F::LANES)), *a);
        }
    }

    /// A layer narrower than a vector: dot products over the (padded) inputs; the padding
    /// outputs are written 0 (the next layer's nonzero mask reads them).
    #[inline(always)]
    unsafe fn narrow<F: Flavour>(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
        y[d.out..d.cols].fill(0.0);
        for (o, yo) in y[..d.out].iter_mut().enumerate() {
            let w = d.wt.as_ptr().add(o * d.rows);
            let mut acc = F::zero();
            for v in 0..d.rows / F::LANES {
                acc = F::fmadd(F::load(x.as_ptr().add(v * F::LANES)), F::load(w.add(v * F::LANES)), acc);
            }
            let s = d.b[o] + F::sum(acc);
            *yo = if relu { s.max(0.0) } else { s };
        }
    }

    /// The inputs nonzero in any of `xs` (the ReLU left the rest at 0), as bits: the k loop
    /// visits only those.
    #[inline(always)]
    unsafe fn nonzero_words<F: Flavour, const K: usize>(xs: [&[f32]; K], rows: usize) -> [u64; MAX_WIDTH / 64] {
        let mut words = [0u64; MAX_WIDTH / 64];
        for j in (0..rows).step_by(F::LANES) {
            let nz = xs.iter().fold(0, |m, x| m | F::nonzero(F::load(x.as_ptr().add(j))));
            words[j / 64] |= nz << (j % 64);
        }
        words
    }

    /// The jr loop: `(first column, vectors)` of blocks covering `vectors` output vectors as
    /// evenly as blocks of at most `cap` vectors allow.
    #[inline(always)]
    fn blocks(vectors: usize, cap: usize, lanes: usize) -> impl Iterator<Item = (usize, usize)> {
        let n = vectors.div_ceil(cap);
        (0..n).scan(0, move |done, k| {
            let size = (vectors - *done).div_ceil(n - k);
            let c = *done * lanes;
            *done += size;
            Some((c, size))
        })
    }

    /// `y = b + x·W`, ReLU'd when `relu`; `x` has `d.rows` entries, `y` at least `d.cols`.
    #[inline(always)]
    unsafe fn layer<F: Half>(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
        assert!(x.len() == d.rows && y.len() >= d.cols && d.rows <= MAX_WIDTH && d.rows % LANES == 0 && d.cols % LANES == 0);
        if d.narrow() {
            return narrow::<F>(d, x, y, relu);
        }
        let words = nonzero_words::<F, 1>([x], d.rows);
        let words = &words[..d.rows.div_ceil(64)];
        for (c, size) in blocks(d.cols / F::LANES, max_acc(F::REGISTERS), F::LANES) {
            macro_rules! by_size {
                ($($n:literal)*) => {
                    match size {
                        $($n => block::<F, $n>(d, x, words, c, y, relu),)*
                        _ => unreachable!("block of {size} vectors"),
                    }
                };
            }
            by_size!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30);
        }
    }

    /// `x · w` over whole vectors (`x.len()` a multiple of `LANES`).
    #[inline(always)]
    unsafe fn dot<F: Flavour>(x: &[f32], w: &[f32]) -> f32 {
        debug_assert!(x.len() % F::LANES == 0 && w.len() >= x.len());
        let mut acc = F::zero();
        for v in 0..x.len() / F::LANES {
            acc = F::fmadd(F::load(x.as_ptr().add(v * F::LANES)), F::load(w.as_ptr().add(v * F::LANES)), acc);
        }
        F::sum(acc)
    }

    /// [`block`] on two inputs at once (the two orders of a comparison): each weight vector
    /// is loaded and widened once for both, and the two accumulator sets are independent
    /// chains.
    #[inline(always)]
    unsafe fn block2<F: Half, const B: usize>(d: &Dense, x: [&[f32]; 2], words: &[u64], c: usize, y: [&mut [f32]; 2], relu: bool) {
        let mut acc = [[F::zero(); B]; 2];
        for v in 0..B {
            let bias = F::load(d.b.as_ptr().add(c + v * F::LANES));
            acc[0][v] = bias;
            acc[1][v] = bias;
        }
        for (k, &word) in words.iter().enumerate() {
            let mut m = word;
            while m != 0 {
                let i = k * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let (x0, x1) = (F::splat(*x[0].get_unchecked(i)), F::splat(*x[1].get_unchecked(i)));
                let row = d.wh.as_ptr().add(i * d.cols + c);
                for v in 0..B {
                    let w = F::load_half(row.add(v * F::LANES));
                    acc[0][v] = F::fmadd(x0, w, acc[0][v]);
                    acc[1][v] = F::fmadd(x1, w, acc[1][v]);
                }
            }
        }
        for (out, acc) in y.into_iter().zip(acc) {
            for (v, a) in acc.into_iter().enumerate() {
                F::store(out.as_mut_ptr().add(c + v * F::LANES), if relu { F::max0(a) } else { a });
            }
        }
    }

    /// [`layer`] on two inputs: the k loop visits inputs nonzero in either.
    #[inline(always)]
    unsafe fn layer2<F: Half>(d: &Dense, x: [&[f32]; 2], y: [&mut [f32]; 2], relu: bool) {
        assert!(x.iter().all(|x| x.len() == d.rows) && y.iter().all(|y| y.len() >= d.cols) && d.rows <= MAX_WIDTH && d.rows % LANES == 0 && d.cols % LANES == 0);
        if d.narrow() {
            let [y0, y1] = y;
            narrow::<F>(d, x[0], y0, relu);
            return narrow::<F>(d, x[1], y1, relu);
        }
        let words = nonzero_words::<F, 2>(x, d.rows);
        let words = &words[..d.rows.div_ceil(64)];
        let [y0, y1] = y;
        // Two accumulator sets, two broadcasts and the weight vector within the registers.
        for (c, size) in blocks(d.cols / F::LANES, (F::REGISTERS - 3) / 2, F::LANES) {
            macro_rules! by_size {
                ($($n:literal)*) => {
                    match size {
                        $($n => block2::<F, $n>(d, x, words, c, [&mut *y0, &mut *y1], relu),)*
                        _ => unreachable!("block of {size} vectors"),
                    }
                };
            }
            by_size!(1 2 3 4 5 6 7 8 9 10 11 12 13 14);
        }
    }

    /// Both orders of a comparison, the logits of (a, b) and (b, a), through one pass of
    /// the head.
    #[inline(always)]
    unsafe fn head_pair<F: Half, const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> (f32, f32) {
        let (mut xa, mut xb, mut ya, mut yb) = ([0.0f32; N], [0.0f32; N], [0.0f32; N], [0.0f32; N]);
        for i in 0..N {
            xa[i] = (a.left[i] + b.right[i]).max(0.0);
            xb[i] = (b.left[i] + a.right[i]).max(0.0);
        }
        let (mut x, mut y) = ([&mut xa[..], &mut xb[..]], [&mut ya[..], &mut yb[..]]);
        let (last, hidden) = n.head_rest.split_last().expect("checked at load");
        for d in hidden {
            let [y0, y1] = &mut y;
            layer2::<F>(d, [&x[0][..d.rows], &x[1][..d.rows]], [&mut y0[..d.cols], &mut y1[..d.cols]], true);
            std::mem::swap(&mut x, &mut y);
        }
        (last.bd + dot::<F>(&x[0][..last.rows], &last.wd), last.bd + dot::<F>(&x[1][..last.rows], &last.wd))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn finish_avx2<const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32]) -> Halves<N> {
        super::finish_with(n, first, |d, x, y, r| layer::<Avx2>(d, x, y, r))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn head_logit_avx2<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> f32 {
        super::head_with(n, a, b, |d, x, y, r| layer::<Avx2>(d, x, y, r), |x, w| dot::<Avx2>(x, w))
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn head_logit_pair_avx2<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> (f32, f32) {
        head_pair::<Avx2, N, W>(n, a, b)
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn finish_avx512<const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32]) -> Halves<N> {
        super::finish_with(n, first, |d, x, y, r| layer::<Avx512>(d, x, y, r))
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn head_logit_avx512<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> f32 {
        super::head_with(n, a, b, |d, x, y, r| layer::<Avx512>(d, x, y, r), |x, w| dot::<Avx512>(x, w))
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn head_logit_pair_avx512<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> (f32, f32) {
        head_pair::<Avx512, N, W>(n, a, b)
    }

    /// One layer through each kernel, for the comparison with the portable loop.
    #[cfg(test)]
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn layer_avx2(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
        layer::<Avx2>(d, x, y, relu)
    }

    #[cfg(test)]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn layer_avx512(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
        layer::<Avx512>(d, x, y, relu)
    }
}

impl<const N: usize, const W: usize> SiameseNet for NetEval<N, W> {
    type Code = Halves<N>;

    fn first_width(&self) -> usize {
        self.first_bias.len()
    }
    fn first_weights(&self) -> &[f32] {
        &self.first
    }
    fn first_bias(&self) -> &[f32] {
        &self.first_bias
    }
    fn finish(&self, first: &[f32]) -> Halves<N> {
        // Safety (each SIMD arm): the kernel was checked available when it was chosen.
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { simd::finish_avx512(self, first) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { simd::finish_avx2(self, first) },
            _ => finish_with(self, first, dense_portable),
        }
    }
    fn head_logit(&self, a: &Halves<N>, b: &Halves<N>) -> f32 {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { simd::head_logit_avx512(self, a, b) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { simd::head_logit_avx2(self, a, b) },
            _ => head_with(self, a, b, dense_portable, dot_portable),
        }
    }
    fn head_logit_pair(&self, a: &Halves<N>, b: &Halves<N>) -> (f32, f32) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { simd::head_logit_pair_avx512(self, a, b) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { simd::head_logit_pair_avx2(self, a, b) },
            _ => (self.head_logit(a, b), self.head_logit(b, a)),
        }
    }
}

/// Where the shipped nets are looked for when no file is given: `data/nets/` under the
/// working directory, beside the executable's build tree, then under the source tree.
pub fn default_net_path(file: &str) -> Option<std::path::PathBuf> {
    let mut dirs = vec![std::path::PathBuf::from("data/nets")];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            dirs.push(d.join("../../data/nets"));
        }
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets"));
    dirs.into_iter().map(|d| d.join(file)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;
    use crate::data::encode::Features;

    /// The split head and incremental-ready tower give the same probability as src/net,
    /// with every kernel this CPU has.
    #[test]
    fn matches_the_reference_inference() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
        ];
        for file in ["distilled.dcw", "deepchess.dcw"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets").join(file);
            let (net, _) = Net::load(&path).unwrap();
            let check = |p: &dyn Fn(&[f32], &[f32]) -> f32| {
                for a in fens {
                    for b in fens {
                        let (fa, fb) = (Features::from_position(&Position::from_fen(a).unwrap()), Features::from_position(&Position::from_fen(b).unwrap()));
                        let want = net.compare(&net.features(fa.as_slice()), &net.features(fb.as_slice()));
                        let got = p(&first_sums(&net, &fa), &first_sums(&net, &fb));
                        // Weights past the first layer are half floats (2^-11 relative).
                        assert!((want - got).abs() < 1e-3, "{file}: {want} vs {got}");
                    }
                }
            };
            for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
                if net.arch.head[0] == 100 {
                    let mut e = Distilled::from_net(&net).unwrap();
                    assert!(e.set_kernel(k));
                    check(&|a, b| both_orders(&e, a, b));
                } else {
                    let mut e = Big::from_net(&net).unwrap();
                    assert!(e.set_kernel(k));
                    check(&|a, b| both_orders(&e, a, b));
                    assert!(Distilled::from_net(&net).is_err());
                }
            }
        }
    }

    /// Other shapes (random weights): each loads into the build that fits it, and agrees
    /// with src/net's inference under every kernel.
    #[test]
    fn other_shapes_load_and_match() {
        let fens = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11"];
        let dir = std::env::temp_dir().join(format!("deepchess-shapes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (arch, want) in [("773-128-32-32/32-32-2", "compact"), ("773-120-24-17/20-9-2", "compact"), ("773-100-100-100/100-100-2", "distilled"), ("773-90-100/97-2", "distilled")] {
            let net = Net::new(crate::net::Arch::parse(arch).unwrap(), &mut crate::tensor::rng::Rng::new(7));
            let path = dir.join("n.dcw");
            net.save(&path, &[]).unwrap();
            let got = match AnyNet::load(&path).unwrap() {
                AnyNet::Distilled(_) => "distilled",
                AnyNet::Compact(_) => "compact",
                AnyNet::Big(_) => "big",
            };
            assert_eq!(got, want, "{arch}");
            for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
                let probs: Vec<f32> = match AnyNet::load(&path).unwrap() {
                    AnyNet::Distilled(mut e) => {
                        e.set_kernel(k);
                        pairs(&net, &fens, |a, b| both_orders(&e, a.0, b.0))
                    }
                    AnyNet::Compact(mut e) => {
                        e.set_kernel(k);
                        pairs(&net, &fens, |a, b| both_orders(&e, a.0, b.0))
                    }
                    AnyNet::Big(_) => unreachable!(),
                };
                let want = pairs(&net, &fens, |a, b| net.compare(&net.features(a.1), &net.features(b.1)));
                for (w, g) in want.iter().zip(&probs) {
                    assert!((w - g).abs() < 1e-3, "{arch} {k:?}: {w} vs {g}");
                }
            }
        }
        let net = Net::new(crate::net::Arch::parse("773-300-32/2").unwrap(), &mut crate::tensor::rng::Rng::new(7));
        let path = dir.join("n.dcw");
        net.save(&path, &[]).unwrap();
        let e = AnyNet::load(&path).err().expect("no build takes a one-layer head");
        assert!(e.contains("n.dcw"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// P(a, b) through the fused two-order pass, checked against the single-order head both
    /// ways round.
    fn both_orders<const N: usize, const W: usize>(e: &NetEval<N, W>, a: &[f32], b: &[f32]) -> f32 {
        let (ca, cb) = (e.finish(a), e.finish(b));
        let (ab, ba) = e.head_logit_pair(&ca, &cb);
        let (ab1, ba1) = (e.head_logit(&ca, &cb), e.head_logit(&cb, &ca));
        assert!((ab - ab1).abs() < 1e-4 && (ba - ba1).abs() < 1e-4, "{:?}: pair ({ab}, {ba}), single ({ab1}, {ba1})", e.kernel);
        e.head(&ca, &cb)
    }

    /// `f` on every ordered pair of the positions, given first-layer sums and input bits.
    fn pairs(net: &Net, fens: &[&str], f: impl Fn((&[f32], &[u16]), (&[f32], &[u16])) -> f32) -> Vec<f32> {
        let feats: Vec<Features> = fens.iter().map(|f| Features::from_position(&Position::from_fen(f).unwrap())).collect();
        let sums: Vec<Vec<f32>> = feats.iter().map(|f| first_sums(net, f)).collect();
        let mut out = Vec::new();
        for i in 0..fens.len() {
            for j in 0..fens.len() {
                out.push(f((&sums[i], feats[i].as_slice()), (&sums[j], feats[j].as_slice())));
            }
        }
        out
    }

    /// Padding columns of a layer's output stay zero (the next layer's mask relies on it).
    #[test]
    fn padded_outputs_stay_zero() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/distilled.dcw");
        let (net, _) = Net::load(&path).unwrap();
        let fa = Features::from_position(&Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap());
        for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
            let mut e = Distilled::from_net(&net).unwrap();
            e.set_kernel(k);
            let h = e.finish(&first_sums(&net, &fa));
            assert!(h.left[100..].iter().chain(&h.right[100..]).all(|&v| v == 0.0), "{k:?}");
            assert!(h.left[..100].iter().any(|&v| v != 0.0), "{k:?}");
        }
    }

    /// Half-precision rounding as the hardware does it (F16C, round to nearest even), on
    /// normal, subnormal, overflowing and special values; widening back is exact.
    #[test]
    fn half_floats_round_like_the_hardware() {
        let mut r = crate::tensor::rng::Rng::new(5);
        let mut xs: Vec<f32> = vec![0.0, -0.0, 1.0, -2.5, 65504.0, 65520.0, 1e9, -1e9, 6.0e-5, 6.1e-5, 5.96e-8, 2.9e-8, 3.0e-8, 1e-10, f32::INFINITY, f32::NEG_INFINITY];
        for _ in 0..100_000 {
            let e = r.uniform(-30.0, 17.0);
            xs.push(r.uniform(-1.0, 1.0) * 2f32.powf(e));
        }
        for h in 0..=u16::MAX {
            let v = f16_value(h);
            if !v.is_nan() {
                assert_eq!(f16_bits(v), h, "round trip of {h:#06x} ({v})");
            }
        }
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("f16c") {
            use std::arch::x86_64::*;
            for &x in &xs {
                // Safety: F16C checked just above.
                let hw = unsafe {
                    #[target_feature(enable = "f16c")]
                    unsafe fn cvt(x: f32) -> u16 {
                        _mm_extract_epi16::<0>(_mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_set_ss(x))) as u16
                    }
                    cvt(x)
                };
                assert_eq!(f16_bits(x), hw, "{x:e}");
                let back = f16_value(hw);
                assert!(x.is_infinite() || x.abs() > 65504.0 || (back - x).abs() <= x.abs() * 4.9e-4 + 3e-8, "{x:e} -> {back:e}");
            }
        }
    }

    proptest::proptest! {
        /// Each SIMD layer kernel against the portable loop on odd shapes (narrow ones
        /// included), with ReLU-like zeros in the input, with and without ReLU.
        #[test]
        fn simd_layers_match_portable(n_in in 1usize..140, n_out in 1usize..500, seed in 0u64..1000, relu: bool) {
            let mut r = crate::tensor::rng::Rng::new(seed);
            let mut u = || r.uniform(-0.5, 0.5);
            let w: Vec<f32> = (0..n_in * n_out).map(|_| u()).collect();
            let b: Vec<f32> = (0..n_out).map(|_| u()).collect();
            let d = Dense::from_logical(&w, &b, n_in, n_out);
            let mut x = vec![0.0; d.rows];
            x[..n_in].iter_mut().for_each(|v| *v = u().max(0.0));
            let mut want = vec![0.0; d.cols];
            dense_portable(&d, &x, &mut want, relu);
            for k in [Kernel::Avx2, Kernel::Avx512].into_iter().filter(|k| k.available()) {
                let mut got = vec![f32::NAN; d.cols];
                #[cfg(target_arch = "x86_64")]
                unsafe {
                    match k {
                        Kernel::Avx2 => simd::layer_avx2(&d, &x, &mut got, relu),
                        _ => simd::layer_avx512(&d, &x, &mut got, relu),
                    }
                }
                for (o, (a, b)) in want.iter().zip(&got).take(n_out).enumerate() {
                    proptest::prop_assert!((a - b).abs() < 1e-4, "{k:?} {n_in}x{n_out} output {o}: {a} vs {b}");
                }
                if !d.narrow() {
                    proptest::prop_assert!(got[n_out..].iter().all(|&v| v == 0.0), "{k:?}: padding not zero");
                }
            }
        }
    }

    fn first_sums(net: &Net, f: &Features) -> Vec<f32> {
        let (w, b) = net.tower[0];
        let mut h = net.params.value(b).row(0).to_vec();
        for &i in f.as_slice() {
            for (a, x) in h.iter_mut().zip(net.params.value(w).row(i as usize)) {
                *a += x;
            }
        }
        h
    }
}
