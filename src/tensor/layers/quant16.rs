//! The 16-bit dense layer of quantised inference (`quant.rs` has the rest): 16-bit
//! activations (0..=4095) times 16-bit weights summed in 32-bit integers (`madd`, VNNI
//! `vpdpwssd`), for the layers where 7-bit activations lose too much (a DeepChess net's
//! per-position tower: 1.1 % of its comparisons flipped at 8 bits, 0.06 % at 16).

use super::quant::{round_clamp, MAX_IN, pad_out};
use crate::tensor::kernels::int8::IntFlavour;

/// The largest 16-bit activation (12 bits): a column's weights are scaled so that this
/// times the sum of their magnitudes fits a 32-bit sum.
pub const ACT16_MAX: f32 = 4095.0;
/// Inputs of a 16-bit layer are padded to whole 16-value vectors.
pub const IN16_PAD: usize = 16;

pub const fn pad_in16(n: usize) -> usize {
    n.div_ceil(IN16_PAD) * IN16_PAD
}

/// A dense layer on 16-bit activations (0..=4095) with 16-bit weights, for the layers where
/// 7-bit activations lose too much (a net's per-position tower): `rows × cols` padded,
/// input-major in pairs (`w[(g·cols + j)·2 + k]` is input `2g + k`'s weight to output `j`).
/// Each column's weights are scaled to the largest that keeps `4095 · Σ|w|` within a 32-bit
/// sum and every weight within 16 bits.
pub struct QDense16 {
    w: Vec<i16>,
    pub mult: Vec<f32>,
    pub bias: Vec<f32>,
    rows: usize,
    cols: usize,
    out: usize,
}

impl QDense16 {
    /// As [`QDense::new`].
    pub fn new(w: &[f32], b: &[f32], n_in: usize, n_out: usize, s_in: &[f32], s_out: &[f32]) -> QDense16 {
        assert!(w.len() == n_in * n_out && b.len() == n_out && s_in.len() == n_in && s_out.len() == n_out, "quantised layer {n_in}x{n_out}");
        let (rows, cols) = (pad_in16(n_in), pad_out(n_out));
        assert!(rows <= MAX_IN, "quantised layer input {n_in} wider than {MAX_IN}");
        let mut q = vec![0i16; rows * cols];
        let (mut mult, mut bias) = (vec![0.0; cols], vec![0.0; cols]);
        for j in 0..n_out {
            let col = |i: usize| w[i * n_out + j] / s_in[i];
            let top = (0..n_in).map(|i| col(i).abs()).fold(0.0f32, f32::max);
            let total: f32 = (0..n_in).map(|i| col(i).abs()).sum();
            // Rounding adds at most half a unit per weight to the sum of magnitudes.
            let room = (i32::MAX as f32 / ACT16_MAX - 0.5 * n_in as f32) * 0.999;
            let sw = if top > 0.0 { (32767.0 / top).min(room / total) } else { 1.0 };
            for i in 0..n_in {
                q[((i / 2) * cols + j) * 2 + i % 2] = (col(i) * sw).round().clamp(-32767.0, 32767.0) as i16;
            }
            mult[j] = s_out[j] / sw;
            bias[j] = b[j] * s_out[j];
        }
        QDense16 { w: q, mult, bias, rows, cols, out: n_out }
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

/// The integer sums of `d` on 16-bit activations `x` (`d.rows()` long, zero-padded); pairs
/// of zero activations are skipped.
///
/// Safety: `F`'s instructions are available.
#[inline(always)]
pub(crate) unsafe fn affine16<F: IntFlavour>(d: &QDense16, x: &[i16], out: &mut [i32]) {
    assert!(x.len() >= d.rows && out.len() >= d.cols);
    let xw = x.as_ptr() as *const u32;
    let (w, cols) = (d.w.as_ptr(), d.cols);
    // The pairs with a nonzero activation (a ReLU leaves about half the units at zero).
    let mut nz = [0u16; MAX_IN / 2];
    let mut n = 0;
    for g in 0..d.rows / 2 {
        *nz.get_unchecked_mut(n) = g as u16;
        n += (std::ptr::read_unaligned(xw.add(g)) != 0) as usize;
    }
    let nz = &nz[..n];
    let mut c = 0;
    // `$b` vectors of outputs, each summed in `$s` independent chains over the input pairs
    // (one chain would wait on the sum's latency at every step), added at the end.
    macro_rules! block {
        ($b:expr, $s:expr) => {{
            let mut acc = [[F::zero(); $s]; $b];
            let mut chunks = nz.chunks_exact($s);
            for gs in &mut chunks {
                for k in 0..$s {
                    let g = gs[k] as usize;
                    let xv = F::splat4(std::ptr::read_unaligned(xw.add(g)));
                    let wp = w.add((g * cols + c) * 2);
                    for (r, a) in acc.iter_mut().enumerate() {
                        a[k] = F::dot2(a[k], xv, wp.add(r * F::LANES * 2));
                    }
                }
            }
            for &g in chunks.remainder() {
                let g = g as usize;
                let xv = F::splat4(std::ptr::read_unaligned(xw.add(g)));
                let wp = w.add((g * cols + c) * 2);
                for (r, a) in acc.iter_mut().enumerate() {
                    a[0] = F::dot2(a[0], xv, wp.add(r * F::LANES * 2));
                }
            }
            for (r, a) in acc.iter().enumerate() {
                F::store(out.as_mut_ptr().add(c + r * F::LANES), F::sum_lanes(a));
            }
            c += $b * F::LANES;
        }};
    }
    while c + 4 * F::LANES <= cols {
        block!(4, 2);
    }
    if c + 2 * F::LANES <= cols {
        block!(2, 4);
    }
    while c < cols {
        block!(1, 4);
    }
}

/// Sums to 16-bit activations: `clamp(round(sum · mult + bias), 0, 4095)`, `mult.len()` of
/// them, then zeros to the next whole input vector.
#[inline(always)]
pub fn requant_act16(mult: &[f32], bias: &[f32], sums: &[i32], y: &mut [i16]) {
    let n = mult.len();
    for (((y, &s), &m), &b) in y[..n].iter_mut().zip(&sums[..n]).zip(mult).zip(bias) {
        *y = round_clamp(s as f32 * m + b, 0.0, ACT16_MAX) as i16;
    }
    y[n..pad_in16(n)].fill(0);
}

/// 16-bit values to 16-bit activations: `clamp(round(x · mult), 0, 4095)`, one per `mult`,
/// then zeros to the next whole input vector.
#[inline(always)]
pub fn i16_to_act16(x: &[i16], mult: &[f32], y: &mut [i16]) {
    let n = mult.len();
    for ((y, &v), &m) in y[..n].iter_mut().zip(x).zip(mult) {
        *y = round_clamp(v as f32 * m, 0.0, ACT16_MAX) as i16;
    }
    y[n..pad_in16(n)].fill(0);
}
