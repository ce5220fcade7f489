//! Quantised inference layers, as strong engines lay out their nets (Stockfish's `nnue/`):
//! - [`QSparse`]: a binary-input first layer kept as a 16-bit accumulator, updated with the
//!   rows of the input bits a move adds and removes (integer sums: no drift along a line);
//! - [`QDense`]: a dense layer of signed 8-bit weights on unsigned 8-bit activations
//!   (0..=127), summed in 32-bit integers by `tensor::kernels::int8` (`quant16.rs`: the same
//!   on 16-bit activations and weights);
//! - requantisation: a layer's sums to the next layer's bytes (`relu`, clipped at 127) or to
//!   16-bit codes, with one float multiply and add per output;
//! - [`dot16`]: the last layer's float dot product, written over 16 lanes so every flavour
//!   sums in the same order.
//!
//! Scales. Every activation has its own scale (`q = a · s`, from calibration data: the
//! largest activation seen maps to 127) and every weight column its own (the largest weight
//! maps to 127): the input scales are folded into the weights before they are rounded, and
//! each output's sum is brought to the next scale by `mult`, its bias by `bias`. The 16-bit
//! accumulator's column scale is the largest for which no position can overflow it: the bias
//! plus the `max_active` largest weights of the column fit in 32,000.
//!
//! Kernels are `#[inline(always)]` and generic over the integer flavour: a net hands its
//! forward pass to `IntKernel::run`, which compiles it once per instruction set; the integer
//! sums agree bit for bit and so does every loop around them.

use crate::tensor::kernels::int8::IntFlavour;

/// Inputs (bytes) are padded to whole 32-byte vectors, outputs to whole 16-lane vectors.
pub const IN_PAD: usize = 32;
pub const OUT_PAD: usize = 16;
/// Widest padded input of a dense layer (stack buffers).
pub const MAX_IN: usize = 1024;
/// The largest activation byte: 2 · 127 · 127 fits a 16-bit pair sum.
pub const ACT_MAX: f32 = 127.0;


pub const fn pad_in(n: usize) -> usize {
    n.div_ceil(IN_PAD) * IN_PAD
}
pub const fn pad_out(n: usize) -> usize {
    n.div_ceil(OUT_PAD) * OUT_PAD
}


/// The scale that maps `max` (the largest value seen) to `top`; a unit never seen active
/// gets the scale of a unit whose largest value is 1/1000 of `top`'s reach.
pub fn scale_for(max: f32, top: f32) -> f32 {
    top / max.max(1e-3)
}

/// Rounds `x` to the nearest integer within `lo..=hi` (ties up): clamped first, then
/// shifted positive so truncation is a floor, which every flavour vectorises alike. `lo`
/// and `hi` lie within ±32767.
#[inline(always)]
pub fn round_clamp(x: f32, lo: f32, hi: f32) -> i32 {
    debug_assert!(lo >= -32767.0 && hi <= 32767.0);
    // `max` returns `lo` for NaN, so `c` is a number in lo..=hi.
    let c = x.max(lo).min(hi);
    // Safety: c + 32768.5 lies in 0.5..=65535.5, well within i32 (a plain `as` would add a
    // saturation check per lane and keep the loop scalar).
    unsafe { (c + 32768.5).to_int_unchecked::<i32>() - 32768 }
}

/// A dense layer quantised: `rows × cols` padded, input-major in groups of four inputs
/// (`w[(g·cols + j)·4 + k]` is input `4g + k`'s weight to output `j`).
pub struct QDense {
    w: Vec<i8>,
    /// Sum → output scale, per output.
    pub mult: Vec<f32>,
    /// The bias in the output scale.
    pub bias: Vec<f32>,
    rows: usize,
    cols: usize,
    out: usize,
}

impl QDense {
    /// From f32 weights `w` (`n_in × n_out`, input-major) and bias `b`, the scale of each
    /// input (`s_in`, length `n_in`) and the scale wanted for each output (`s_out`, `n_out`).
    pub fn new(w: &[f32], b: &[f32], n_in: usize, n_out: usize, s_in: &[f32], s_out: &[f32]) -> QDense {
        assert!(w.len() == n_in * n_out && b.len() == n_out && s_in.len() == n_in && s_out.len() == n_out, "quantised layer {n_in}x{n_out}");
        let (rows, cols) = (pad_in(n_in), pad_out(n_out));
        assert!(rows <= MAX_IN, "quantised layer input {n_in} wider than {MAX_IN}");
        let mut q = vec![0i8; rows * cols];
        let (mut mult, mut bias) = (vec![0.0; cols], vec![0.0; cols]);
        for j in 0..n_out {
            // The input's scale folded in: a = q / s_in, so the weight on q is w / s_in.
            let col = |i: usize| w[i * n_out + j] / s_in[i];
            let top = (0..n_in).map(|i| col(i).abs()).fold(0.0f32, f32::max);
            let sw = if top > 0.0 { 127.0 / top } else { 1.0 };
            for i in 0..n_in {
                q[((i / 4) * cols + j) * 4 + i % 4] = (col(i) * sw).round().clamp(-127.0, 127.0) as i8;
            }
            mult[j] = s_out[j] / sw;
            bias[j] = b[j] * s_out[j];
        }
        QDense { w: q, mult, bias, rows, cols, out: n_out }
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    pub fn outputs(&self) -> usize {
        self.out
    }
}

/// Inputs below which every group is summed (a short dependent chain beats the branches of
/// skipping zeros); from this width on, groups of four zero bytes are skipped.
const SKIP_FROM: usize = 128;

/// The integer sums of `d` on bytes `x` (`d.rows()` long, zero-padded) into `out`
/// (`d.cols()`). On wide inputs, groups of four zero bytes (a ReLU's zeros) are skipped.
///
/// Safety: `F`'s instructions are available.
#[inline(always)]
pub(crate) unsafe fn affine<F: IntFlavour>(d: &QDense, x: &[u8], out: &mut [i32]) {
    assert!(x.len() >= d.rows && out.len() >= d.cols);
    let groups = d.rows / 4;
    let xw = x.as_ptr() as *const u32;
    let word = |g: usize| u32::from_le(std::ptr::read_unaligned(xw.add(g)));
    if d.rows < SKIP_FROM {
        blocks::<F>(d, (0..groups).map(|g| (g, word(g))), out);
        return;
    }
    let mut nz = [0u16; MAX_IN / 4];
    let mut n = 0;
    for g in 0..groups {
        *nz.get_unchecked_mut(n) = g as u16;
        n += (word(g) != 0) as usize;
    }
    blocks::<F>(d, nz[..n].iter().map(|&g| (g as usize, word(g as usize))), out);
}

/// [`affine`] on two inputs at once (a comparison's two orders): each weight vector is
/// loaded once for both. Every group is summed (the two inputs' zeros differ).
///
/// Safety: `F`'s instructions are available.
#[inline(always)]
pub(crate) unsafe fn affine_pair<F: IntFlavour>(d: &QDense, xa: &[u8], xb: &[u8], oa: &mut [i32], ob: &mut [i32]) {
    assert!(xa.len() >= d.rows && xb.len() >= d.rows && oa.len() >= d.cols && ob.len() >= d.cols);
    let (pa, pb) = (xa.as_ptr() as *const u32, xb.as_ptr() as *const u32);
    let (w, cols, groups) = (d.w.as_ptr(), d.cols, d.rows / 4);
    let mut c = 0;
    macro_rules! block {
        ($b:expr) => {{
            let (mut aa, mut ab) = ([F::zero(); $b], [F::zero(); $b]);
            for g in 0..groups {
                let (va, vb) = (F::splat4(std::ptr::read_unaligned(pa.add(g))), F::splat4(std::ptr::read_unaligned(pb.add(g))));
                let wp = w.add((g * cols + c) * 4);
                for r in 0..$b {
                    aa[r] = F::dot4(aa[r], va, wp.add(r * F::LANES * 4));
                    ab[r] = F::dot4(ab[r], vb, wp.add(r * F::LANES * 4));
                }
            }
            for r in 0..$b {
                F::store(oa.as_mut_ptr().add(c + r * F::LANES), aa[r]);
                F::store(ob.as_mut_ptr().add(c + r * F::LANES), ab[r]);
            }
            c += $b * F::LANES;
        }};
    }
    while c + 4 * F::LANES <= cols {
        block!(4);
    }
    while c < cols {
        block!(1);
    }
}

/// Column blocks of four vectors, then two, then one: independent sums in flight, each
/// over the input groups `gs` yields (index, its four bytes).
#[inline(always)]
unsafe fn blocks<F: IntFlavour>(d: &QDense, gs: impl Iterator<Item = (usize, u32)> + Clone, out: &mut [i32]) {
    let mut c = 0;
    while c + 4 * F::LANES <= d.cols {
        block::<F, 4>(d, gs.clone(), c, out);
        c += 4 * F::LANES;
    }
    if c + 2 * F::LANES <= d.cols {
        block::<F, 2>(d, gs.clone(), c, out);
        c += 2 * F::LANES;
    }
    while c < d.cols {
        block::<F, 1>(d, gs.clone(), c, out);
        c += F::LANES;
    }
}

#[inline(always)]
unsafe fn block<F: IntFlavour, const B: usize>(d: &QDense, gs: impl Iterator<Item = (usize, u32)>, c: usize, out: &mut [i32]) {
    let (w, cols) = (d.w.as_ptr(), d.cols);
    let mut acc = [F::zero(); B];
    for (g, x4) in gs {
        let xv = F::splat4(x4);
        let wp = w.add((g * cols + c) * 4);
        for (r, a) in acc.iter_mut().enumerate() {
            *a = F::dot4(*a, xv, wp.add(r * F::LANES * 4));
        }
    }
    for (r, a) in acc.iter().enumerate() {
        F::store(out.as_mut_ptr().add(c + r * F::LANES), *a);
    }
}

/// `d`'s sums requantised to activation bytes: `clamp(round(sum · mult + bias), 0, 127)`
/// (the ReLU and the clip in one), `d.cols()` of them, then zeros to the next whole input
/// vector (the next layer reads its padding).
#[inline(always)]
pub fn requant_bytes(d: &QDense, sums: &[i32], y: &mut [u8]) {
    for (((y, &s), &m), &b) in y[..d.cols].iter_mut().zip(&sums[..d.cols]).zip(&d.mult).zip(&d.bias) {
        *y = round_clamp(s as f32 * m + b, 0.0, ACT_MAX) as u8;
    }
    y[d.cols..pad_in(d.cols)].fill(0);
}

/// Sums requantised to 16-bit values (no ReLU): a per-position code, `mult.len()` of them.
#[inline(always)]
pub fn requant_i16(mult: &[f32], bias: &[f32], sums: &[i32], y: &mut [i16]) {
    let n = mult.len();
    for (((y, &s), &m), &b) in y[..n].iter_mut().zip(&sums[..n]).zip(mult).zip(bias) {
        *y = round_clamp(s as f32 * m + b, -32767.0, 32767.0) as i16;
    }
}

/// 16-bit values to activation bytes: `clamp(round(x · mult), 0, 127)`, one per `mult`,
/// then zeros to the next whole input vector.
#[inline(always)]
pub fn i16_to_bytes(x: &[i16], mult: &[f32], y: &mut [u8]) {
    let n = mult.len();
    for ((y, &v), &m) in y[..n].iter_mut().zip(x).zip(mult) {
        *y = round_clamp(v as f32 * m, 0.0, ACT_MAX) as u8;
    }
    y[n..pad_in(n)].fill(0);
}

/// `Σ x[i] · w[i]` over 16 lanes then the lanes in a fixed order: every flavour (and the
/// portable loop) sums alike. `x` and `w` are whole 16-lane vectors long.
#[inline(always)]
pub fn dot16(x: impl Fn(usize) -> f32, w: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    for (c, wc) in w.chunks_exact(16).enumerate() {
        for l in 0..16 {
            acc[l] += x(16 * c + l) * wc[l];
        }
    }
    let mut h = [0.0f32; 8];
    for l in 0..8 {
        h[l] = acc[l] + acc[l + 8];
    }
    let (a, b) = ((h[0] + h[4]) + (h[2] + h[6]), (h[1] + h[5]) + (h[3] + h[7]));
    a + b
}

/// A binary-input first layer as a 16-bit accumulator: `acc = bias + Σ rows of set bits`,
/// per column in its own scale, wrapping arithmetic (exact: every final sum fits).
pub struct QSparse {
    w: Vec<i16>,
    bias: Vec<i16>,
    /// Each column's scale (acc = sum · scale).
    pub scale: Vec<f32>,
    cols: usize,
    out: usize,
}

impl QSparse {
    /// From f32 weights (`inputs × n`, input-major) and bias, for inputs with at most
    /// `max_active` bits set.
    pub fn new(w: &[f32], b: &[f32], inputs: usize, n: usize, max_active: usize) -> QSparse {
        assert!(w.len() == inputs * n && b.len() == n, "quantised sparse layer {inputs}x{n}");
        let cols = pad_out(n);
        let mut scale = vec![1.0; cols];
        for j in 0..n {
            let mut col: Vec<f32> = (0..inputs).map(|i| w[i * n + j].abs()).collect();
            col.sort_unstable_by(|a, b| b.total_cmp(a));
            let reach = b[j].abs() + col.iter().take(max_active).sum::<f32>();
            scale[j] = 32000.0 / reach.max(1e-6);
        }
        let mut q = vec![0i16; inputs * cols];
        for i in 0..inputs {
            for j in 0..n {
                q[i * cols + j] = (w[i * n + j] * scale[j]).round() as i16;
            }
        }
        let bias = (0..cols).map(|j| if j < n { (b[j] * scale[j]).round() as i16 } else { 0 }).collect();
        QSparse { w: q, bias, scale, cols, out: n }
    }
    /// Padded width of the accumulator.
    pub fn cols(&self) -> usize {
        self.cols
    }
    pub fn outputs(&self) -> usize {
        self.out
    }
    /// `out = bias + Σ rows of `active``.
    #[inline(always)]
    pub fn refresh(&self, active: &[usize], out: &mut [i16]) {
        let out = &mut out[..self.cols];
        out.copy_from_slice(&self.bias);
        for &r in active {
            add_row(out, &self.w[r * self.cols..(r + 1) * self.cols]);
        }
    }
    /// `dst = src + Σ added rows − Σ removed rows`.
    #[inline(always)]
    pub fn update(&self, dst: &mut [i16], src: &[i16], added: &[usize], removed: &[usize]) {
        let dst = &mut dst[..self.cols];
        dst.copy_from_slice(&src[..self.cols]);
        for &r in added {
            add_row(dst, &self.w[r * self.cols..(r + 1) * self.cols]);
        }
        for &r in removed {
            sub_row(dst, &self.w[r * self.cols..(r + 1) * self.cols]);
        }
    }
}

#[inline(always)]
fn add_row(d: &mut [i16], r: &[i16]) {
    for (d, &r) in d.iter_mut().zip(r) {
        *d = d.wrapping_add(r);
    }
}

#[inline(always)]
fn sub_row(d: &mut [i16], r: &[i16]) {
    for (d, &r) in d.iter_mut().zip(r) {
        *d = d.wrapping_sub(r);
    }
}

#[cfg(test)]
mod tests {
    use super::super::quant16::{affine16, pad_in16, requant_act16, QDense16, ACT16_MAX};
    use super::*;
    use crate::tensor::kernels::int8::{IntFn, IntKernel};
    use crate::tensor::Rng;
    use proptest::prelude::*;

    struct Affine<'a>(&'a QDense, &'a [u8]);
    impl IntFn for Affine<'_> {
        type Output = (Vec<i32>, Vec<u8>);
        #[inline(always)]
        unsafe fn simd<F: IntFlavour>(self) -> (Vec<i32>, Vec<u8>) {
            let mut s = vec![0i32; self.0.cols()];
            affine::<F>(self.0, self.1, &mut s);
            let mut y = vec![0u8; pad_in(self.0.cols())];
            requant_bytes(self.0, &s, &mut y);
            (s, y)
        }
    }

    struct Affine16<'a>(&'a QDense16, &'a [i16]);
    impl IntFn for Affine16<'_> {
        type Output = (Vec<i32>, Vec<i16>);
        #[inline(always)]
        unsafe fn simd<F: IntFlavour>(self) -> (Vec<i32>, Vec<i16>) {
            let mut s = vec![0i32; self.0.cols()];
            affine16::<F>(self.0, self.1, &mut s);
            let mut y = vec![0i16; pad_in16(self.0.cols())];
            requant_act16(&self.0.mult, &self.0.bias, &s, &mut y);
            (s, y)
        }
    }

    struct Pair<'a>(&'a QDense, &'a [u8], &'a [u8]);
    impl IntFn for Pair<'_> {
        type Output = (Vec<i32>, Vec<i32>);
        #[inline(always)]
        unsafe fn simd<F: IntFlavour>(self) -> (Vec<i32>, Vec<i32>) {
            let (mut a, mut b) = (vec![0i32; self.0.cols()], vec![0i32; self.0.cols()]);
            affine_pair::<F>(self.0, self.1, self.2, &mut a, &mut b);
            (a, b)
        }
    }

    fn layer(rng: &mut Rng, n_in: usize, n_out: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        let w = (0..n_in * n_out).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let b = (0..n_out).map(|_| rng.uniform(-0.5, 0.5)).collect();
        let s_in = (0..n_in).map(|_| rng.uniform(10.0, 200.0)).collect();
        let s_out = (0..n_out).map(|_| rng.uniform(5.0, 50.0)).collect();
        (w, b, s_in, s_out)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every integer flavour gives the portable loop's sums and bytes bit for bit, on odd
        /// shapes (short last blocks, inputs not a multiple of four) and sparse inputs.
        #[test]
        fn flavours_equal_the_portable_layer(n_in in 1usize..300, n_out in 1usize..200, zeros in 0.0f32..0.9, seed in 0u64..1000) {
            let mut rng = Rng::new(seed);
            let (w, b, s_in, s_out) = layer(&mut rng, n_in, n_out);
            let d = QDense::new(&w, &b, n_in, n_out, &s_in, &s_out);
            let mut x = vec![0u8; d.rows()];
            for v in x.iter_mut().take(n_in) {
                *v = if rng.uniform(0.0, 1.0) < zeros { 0 } else { rng.below(128) as u8 };
            }
            let want = IntKernel::Portable.run(Affine(&d, &x));
            let mut x2 = x.clone();
            x2.reverse();
            x2.rotate_left(d.rows() - n_in);
            let pair = (IntKernel::Portable.run(Affine(&d, &x)).0, IntKernel::Portable.run(Affine(&d, &x2)).0);
            for k in IntKernel::available_kernels() {
                prop_assert_eq!(&k.run(Affine(&d, &x)), &want, "{}", k.name());
                prop_assert_eq!(&k.run(Pair(&d, &x, &x2)), &pair, "{} pair", k.name());
            }
            // And the integer layer is the float layer within its rounding.
            for j in 0..n_out {
                let real: f32 = (0..n_in).map(|i| x[i] as f32 / s_in[i] * w[i * n_out + j]).sum::<f32>() + b[j];
                let q = (want.0[j] as f32 * d.mult[j] + d.bias[j]) / s_out[j];
                // Each weight is off by at most half a step, 1/254 of the column's largest.
                let top = (0..n_in).map(|i| (w[i * n_out + j] / s_in[i]).abs()).fold(0.0, f32::max);
                let bound = (0..n_in).map(|i| x[i] as f32).sum::<f32>() * top / 254.0 * 1.001 + 1e-4 * (1.0 + real.abs());
                prop_assert!((real - q).abs() <= bound, "output {}: {} vs {} (bound {})", j, real, q, bound);
            }
        }

        /// The 16-bit layer likewise: every flavour equals the portable loop bit for bit, and
        /// the integer layer is the float one within its rounding.
        #[test]
        fn flavours_equal_the_portable_16_bit_layer(n_in in 1usize..300, n_out in 1usize..200, zeros in 0.0f32..0.9, seed in 0u64..1000) {
            let mut rng = Rng::new(seed);
            let (w, b, s_in, s_out) = layer(&mut rng, n_in, n_out);
            let d = QDense16::new(&w, &b, n_in, n_out, &s_in, &s_out);
            let mut x = vec![0i16; d.rows()];
            for v in x.iter_mut().take(n_in) {
                *v = if rng.uniform(0.0, 1.0) < zeros { 0 } else { rng.below(4096) as i16 };
            }
            let want = IntKernel::Portable.run(Affine16(&d, &x));
            for k in IntKernel::available_kernels() {
                prop_assert_eq!(&k.run(Affine16(&d, &x)), &want, "{}", k.name());
            }
            for j in 0..n_out {
                let real: f32 = (0..n_in).map(|i| x[i] as f32 / s_in[i] * w[i * n_out + j]).sum::<f32>() + b[j];
                let q = (want.0[j] as f32 * d.mult[j] + d.bias[j]) / s_out[j];
                // Each weight is off by at most half a step of its column's scale.
                let top = (0..n_in).map(|i| (w[i * n_out + j] / s_in[i]).abs()).fold(0.0f32, f32::max);
                let total: f32 = (0..n_in).map(|i| (w[i * n_out + j] / s_in[i]).abs()).sum();
                let sw = (32767.0 / top).min((i32::MAX as f32 / ACT16_MAX - 0.5 * n_in as f32) * 0.999 / total);
                let bound = (0..n_in).map(|i| x[i] as f32).sum::<f32>() * 0.5 / sw * 1.001 + 1e-4 * (1.0 + real.abs());
                prop_assert!((real - q).abs() <= bound, "output {}: {} vs {} (bound {})", j, real, q, bound);
            }
        }

        /// The accumulator updated along random moves equals one refreshed from scratch, and
        /// its value is the float layer's sum within half a step per row.
        #[test]
        fn the_accumulator_is_exact_along_a_line(n in 1usize..100, seed in 0u64..1000) {
            let mut rng = Rng::new(seed);
            let inputs = 773;
            let w: Vec<f32> = (0..inputs * n).map(|_| rng.uniform(-2.0, 2.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
            let l = QSparse::new(&w, &b, inputs, n, 37);
            let mut set: Vec<usize> = (0..30).map(|_| rng.below(inputs as u64) as usize).collect();
            set.sort_unstable();
            set.dedup();
            let mut acc = vec![0i16; l.cols()];
            l.refresh(&set, &mut acc);
            for _ in 0..50 {
                let out = set.remove(rng.below(set.len() as u64) as usize);
                let inn = loop {
                    let c = rng.below(inputs as u64) as usize;
                    if !set.contains(&c) { break c; }
                };
                set.push(inn);
                let prev = acc.clone();
                l.update(&mut acc, &prev, &[inn], &[out]);
            }
            let mut fresh = vec![0i16; l.cols()];
            l.refresh(&set, &mut fresh);
            prop_assert_eq!(&acc, &fresh);
            for j in 0..n {
                let real = b[j] + set.iter().map(|&i| w[i * n + j]).sum::<f32>();
                let q = acc[j] as f32 / l.scale[j];
                prop_assert!((real - q).abs() <= (set.len() + 1) as f32 * 0.5 / l.scale[j] + 1e-6);
            }
        }
    }

    /// The 16-lane dot product is the plain sum within float rounding, and rounding clamps.
    #[test]
    fn dot16_and_rounding() {
        let mut rng = Rng::new(9);
        let x: Vec<f32> = (0..112).map(|_| rng.uniform(-3.0, 3.0)).collect();
        let w: Vec<f32> = (0..112).map(|_| rng.uniform(-3.0, 3.0)).collect();
        let plain: f64 = x.iter().zip(&w).map(|(a, b)| *a as f64 * *b as f64).sum();
        assert!((dot16(|i| x[i], &w) as f64 - plain).abs() < 1e-3);
        assert_eq!(round_clamp(2.5, 0.0, 127.0), 3);
        assert_eq!(round_clamp(-2.5, -10.0, 10.0), -2);
        assert_eq!(round_clamp(-2.6, -10.0, 10.0), -3);
        assert_eq!(round_clamp(1e9, 0.0, 127.0), 127);
        assert_eq!(round_clamp(-1e9, -32767.0, 32767.0), -32767);
        assert_eq!(round_clamp(f32::NAN, 0.0, 127.0), 0);
    }
}
