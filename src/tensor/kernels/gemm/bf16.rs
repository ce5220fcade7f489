//! Products in bfloat16 with f32 sums: an opt-in precision for training (mixed precision, as
//! the ML frameworks offer it). The operands of each product are rounded to bf16 (8 bits of
//! mantissa, round to nearest even); the products of two bf16 are exact in f32 and are summed
//! in f32, so only the operands lose precision, never the sums or the weights (the optimizer
//! keeps f32 weights).
//!
//! Where the CPU has AVX-512 BF16, `vdpbf16ps` does two such multiply-adds per f32 lane in
//! one instruction: twice the f32 FMA's arithmetic per cycle. Its operands are pairs of bf16
//! along k, so each operand is first converted into a matrix of pairs (half as many 32-bit
//! values: [`pairs_along`], [`pairs_across`]), which the f32 driver then packs and walks as
//! it would an f32 matrix of half the depth ([`super::driver`]), with bf16 micro-kernels.
//! Elsewhere (other kernels, other CPUs) the operands are rounded to bf16 and multiplied by
//! the f32 kernels: the same products, summed in another order, so the results agree
//! within float tolerance (tests below).
//!
//! Which products are in bf16 is the calling thread's precision
//! ([`crate::tensor::kernels::precision`]): a trainer's stage sets it for its steps;
//! searches and evaluations never do.

/// Whether this CPU has the bf16 dot-product instructions (AVX-512 BF16, with the BW
/// permutations the conversions use).
pub fn bf16_instructions() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `x`'s bf16 bits, as the conversion instructions round: to nearest even, denormals to
/// zero (of the same sign), NaN kept a (quiet) NaN.
#[inline]
pub fn bf16_bits(x: f32) -> u16 {
    let u = x.to_bits();
    if x.is_nan() {
        return ((u >> 16) | 0x40) as u16;
    }
    if x.is_subnormal() {
        return ((u >> 16) & 0x8000) as u16;
    }
    (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

/// `x` rounded to bf16, as an f32.
#[inline]
pub fn round_bf16(x: f32) -> f32 {
    f32::from_bits((bf16_bits(x) as u32) << 16)
}

/// Two bf16 in one 32-bit value (`lo` first along k), stored in an f32 slot: the packing
/// only moves these bits, never computes with them.
#[inline]
fn pair(lo: f32, hi: f32) -> f32 {
    f32::from_bits(bf16_bits(lo) as u32 | (bf16_bits(hi) as u32) << 16)
}

/// An operand of a product as bf16 pairs along k in `dst` (`other` × ⌈k/2⌉ values): by
/// [`pairs_along`] when k runs along its stored rows, else by [`pairs_across`]. Returns the
/// converted matrix's strides along `other` and along the pairs.
///
/// Safety: `src` holds the operand (stored `other × k` when `k_in_rows`, else `k × other`,
/// row stride `ld`); `dst` holds `other·⌈k/2⌉` values.
pub(crate) unsafe fn to_pairs(src: *const f32, ld: usize, k_in_rows: bool, other: usize, k: usize, dst: *mut f32) -> (usize, usize) {
    if k_in_rows {
        pairs_along(src, ld, other, k, dst);
        (k.div_ceil(2), 1)
    } else {
        pairs_across(src, ld, k, other, dst);
        (1, other)
    }
}

/// `dst[r*k2 + p] = (src[r*ld + 2p], src[r*ld + 2p+1])` for `rows` rows of `k` values
/// (`k2 = ⌈k/2⌉`, a missing last partner is zero): pairs along a row, for an operand whose
/// k runs along its rows.
///
/// Safety: `src` holds `rows` rows of `k` values with stride `ld`; `dst` holds `rows·k2`.
pub(crate) unsafe fn pairs_along(src: *const f32, ld: usize, rows: usize, k: usize, dst: *mut f32) {
    pairs_along_into(src, ld, rows, k, dst, k.div_ceil(2))
}

/// [`pairs_along`] into rows `ldd` values apart (`ldd ≥ ⌈k/2⌉`; the rest of a row untouched).
///
/// Safety: as [`pairs_along`]'s, `dst` holding `rows` rows of stride `ldd`.
pub(crate) unsafe fn pairs_along_into(src: *const f32, ld: usize, rows: usize, k: usize, dst: *mut f32, ldd: usize) {
    #[cfg(target_arch = "x86_64")]
    if bf16_instructions() {
        return x86::pairs_along(src, ld, rows, k, dst, ldd);
    }
    pairs_along_scalar(src, ld, rows, k, dst, ldd)
}

unsafe fn pairs_along_scalar(src: *const f32, ld: usize, rows: usize, k: usize, dst: *mut f32, ldd: usize) {
    let k2 = k.div_ceil(2);
    for r in 0..rows {
        let s = std::slice::from_raw_parts(src.add(r * ld), k);
        for p in 0..k2 {
            *dst.add(r * ldd + p) = pair(s[2 * p], s.get(2 * p + 1).copied().unwrap_or(0.0));
        }
    }
}

/// `dst[p*cols + j] = (src[2p*ld + j], src[(2p+1)*ld + j])` for `k` rows of `cols` values:
/// pairs across two rows, for an operand whose k runs down its columns.
///
/// Safety: `src` holds `k` rows of `cols` values with stride `ld`; `dst` holds `k2·cols`.
pub(crate) unsafe fn pairs_across(src: *const f32, ld: usize, k: usize, cols: usize, dst: *mut f32) {
    pairs_across_into(src, ld, k, cols, dst, cols)
}

/// [`pairs_across`] into rows `ldd` values apart (`ldd ≥ cols`; the rest of a row untouched).
///
/// Safety: as [`pairs_across`]'s, `dst` holding `⌈k/2⌉` rows of stride `ldd`.
pub(crate) unsafe fn pairs_across_into(src: *const f32, ld: usize, k: usize, cols: usize, dst: *mut f32, ldd: usize) {
    #[cfg(target_arch = "x86_64")]
    if bf16_instructions() {
        return x86::pairs_across(src, ld, k, cols, dst, ldd);
    }
    pairs_across_scalar(src, ld, k, cols, dst, ldd)
}

unsafe fn pairs_across_scalar(src: *const f32, ld: usize, k: usize, cols: usize, dst: *mut f32, ldd: usize) {
    for p in 0..k.div_ceil(2) {
        for j in 0..cols {
            let hi = if 2 * p + 1 < k { *src.add((2 * p + 1) * ld + j) } else { 0.0 };
            *dst.add(p * ldd + j) = pair(*src.add(2 * p * ld + j), hi);
        }
    }
}

/// `dst[r*cols + j] = round_bf16(src[r*ld + j])`: an operand rounded for the f32 kernels.
///
/// Safety: `src` holds `rows` rows of `cols` values with stride `ld`; `dst` `rows·cols`.
pub(crate) unsafe fn rounded(src: *const f32, ld: usize, rows: usize, cols: usize, dst: *mut f32) {
    for r in 0..rows {
        for j in 0..cols {
            *dst.add(r * cols + j) = round_bf16(*src.add(r * ld + j));
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::super::kernels::{prefetch_tile, store, Edge, Store};
    use crate::tensor::kernels::simd::Avx512;
    use std::arch::x86_64::*;

    /// [`super::pairs_along`]: 32 values of a row become 16 pairs in one conversion.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(super) unsafe fn pairs_along(src: *const f32, ld: usize, rows: usize, k: usize, dst: *mut f32, ldd: usize) {
        let k2 = k.div_ceil(2);
        for r in 0..rows {
            let (s, d) = (src.add(r * ld), dst.add(r * ldd));
            let mut p = 0;
            while 2 * p + 32 <= k {
                let lo = _mm512_loadu_ps(s.add(2 * p));
                let hi = _mm512_loadu_ps(s.add(2 * p + 16));
                // The second operand's values go first: bf16 i of the result is value i.
                let v: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
                _mm512_storeu_si512(d.add(p) as *mut _, v);
                p += 16;
            }
            if p < k2 {
                let left = k - 2 * p;
                let (m_lo, m_hi) = (mask(left.min(16)), mask(left.saturating_sub(16)));
                let lo = _mm512_maskz_loadu_ps(m_lo, s.add(2 * p));
                let hi = _mm512_maskz_loadu_ps(m_hi, s.add(2 * p + 16));
                let v: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
                _mm512_mask_storeu_epi32(d.add(p) as *mut _, mask(k2 - p), v);
            }
        }
    }

    /// [`super::pairs_across`]: 16 columns of two rows become 16 pairs (both rows converted
    /// at once, then their bf16 interleaved by one permutation).
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn pairs_across(src: *const f32, ld: usize, k: usize, cols: usize, dst: *mut f32, ldd: usize) {
        // bf16 2i of the result is value i of the first row, 2i+1 value i of the second.
        let mut order = [0i16; 32];
        for (i, o) in order.iter_mut().enumerate() {
            *o = (i / 2 + 16 * (i % 2)) as i16;
        }
        let order = _mm512_loadu_si512(order.as_ptr() as *const _);
        for p in 0..k.div_ceil(2) {
            let (s0, d) = (src.add(2 * p * ld), dst.add(p * ldd));
            let s1 = if 2 * p + 1 < k { Some(src.add((2 * p + 1) * ld)) } else { None };
            let mut j = 0;
            while j < cols {
                let m = mask((cols - j).min(16));
                let lo = _mm512_maskz_loadu_ps(m, s0.add(j));
                let hi = match s1 {
                    Some(s1) => _mm512_maskz_loadu_ps(m, s1.add(j)),
                    None => _mm512_setzero_ps(),
                };
                let both: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
                _mm512_mask_storeu_epi32(d.add(j) as *mut _, m, _mm512_permutexvar_epi16(order, both));
                j += 16;
            }
        }
    }

    /// The first `n` (≤ 16) lanes.
    #[inline(always)]
    fn mask(n: usize) -> __mmask16 {
        ((1u32 << n) - 1) as __mmask16
    }

    /// The bf16 micro-kernel: as the f32 one ([`super::super::kernels`]), on packed panels of
    /// pairs (A: `MA` pairs per step, B: `NB`), two k steps per `vdpbf16ps`.
    ///
    /// Safety: as the f32 micro-kernel's, with `kc` counting pairs.
    #[inline(always)]
    unsafe fn micro<const MR: usize, const NV: usize, const MA: usize, const NB: usize>(
        kc: usize,
        alpha: f32,
        mut a: *const f32,
        mut b: *const f32,
        c: *mut f32,
        ldc: usize,
        st: &Store,
    ) {
        prefetch_tile::<Avx512, MR, NV>(c, ldc, st);
        let mut acc = [[_mm512_setzero_ps(); NV]; MR];
        for _ in 0..kc {
            let mut bv = [std::mem::transmute::<__m512, __m512bh>(_mm512_setzero_ps()); NV];
            for (v, x) in bv.iter_mut().enumerate() {
                *x = std::mem::transmute::<__m512, __m512bh>(_mm512_loadu_ps(b.add(v * 16)));
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let ai: __m512bh = std::mem::transmute(_mm512_set1_ps(*a.add(i)));
                for (v, x) in row.iter_mut().enumerate() {
                    *x = _mm512_dpbf16_ps(*x, ai, bv[v]);
                }
            }
            a = a.add(MA);
            b = b.add(NB);
        }
        store::<Avx512, MR, NV>(acc, alpha, c, ldc, st)
    }

    macro_rules! wrapper {
        ($name:ident, $mr:literal, $nv:literal) => {
            #[target_feature(enable = "avx512f,avx512bf16")]
            pub(crate) unsafe fn $name(kc: usize, alpha: f32, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, st: &Store) {
                micro::<$mr, $nv, 12, 32>(kc, alpha, a, b, c, ldc, st)
            }
        };
    }

    // The f32 AVX-512 tile's shape: 12 × 32, 24 zmm accumulators.
    wrapper!(kernel, 12, 2);
    wrapper!(k12x16, 12, 1);
    wrapper!(k8x32, 8, 2);
    wrapper!(k8x16, 8, 1);
    wrapper!(k6x32, 6, 2);
    wrapper!(k6x16, 6, 1);
    wrapper!(k4x32, 4, 2);
    wrapper!(k4x16, 4, 1);
    /// Smallest first, as the f32 lists.
    pub(crate) const EDGES: &[Edge] = &[
        Edge { rows: 4, cols: 16, kernel: k4x16 },
        Edge { rows: 6, cols: 16, kernel: k6x16 },
        Edge { rows: 4, cols: 32, kernel: k4x32 },
        Edge { rows: 8, cols: 16, kernel: k8x16 },
        Edge { rows: 12, cols: 16, kernel: k12x16 },
        Edge { rows: 6, cols: 32, kernel: k6x32 },
        Edge { rows: 8, cols: 32, kernel: k8x32 },
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::rng::Rng;

    #[test]
    fn rounding_is_to_nearest_even() {
        assert_eq!(bf16_bits(1.0), 0x3f80);
        assert_eq!(bf16_bits(-2.0), 0xc000);
        // Halfway: down to the even 0x3f80, up to the even 0x3f82.
        assert_eq!(bf16_bits(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(bf16_bits(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(bf16_bits(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(bf16_bits(f32::MAX), 0x7f80, "the largest f32 rounds up to infinity");
        assert_eq!(bf16_bits(f32::from_bits(0x8000_0001)), 0x8000, "a denormal becomes a signed zero");
        assert!(round_bf16(f32::NAN).is_nan());
        assert_eq!(round_bf16(3.0), 3.0);
    }

    /// Values with every kind of rounding, signs, zeros, a denormal and large magnitudes.
    fn values(n: usize, rng: &mut Rng) -> Vec<f32> {
        // Normal with He's std for one input, as `Init::HeNormal.matrix(1, n, rng)` draws them.
        let std = 2f32.sqrt();
        let mut v: Vec<f32> = (0..n).map(|_| rng.normal() * std).collect();
        for (i, x) in v.iter_mut().enumerate() {
            match i % 11 {
                3 => *x = 0.0,
                5 => *x = -*x * 1e30,
                7 => *x = f32::from_bits(0x0000_0100),
                _ => {}
            }
        }
        v
    }

    /// The vector conversions give the scalar ones' bits, at widths around the 16-pair
    /// vectors and with an odd depth's zero partner.
    #[test]
    fn vector_pairs_equal_scalar_pairs() {
        if !bf16_instructions() {
            return;
        }
        let mut rng = Rng::new(4);
        for (rows, k, ld_extra) in [(1, 1, 0), (3, 2, 1), (2, 15, 0), (5, 16, 3), (2, 17, 0), (4, 31, 2), (3, 32, 0), (2, 33, 5), (7, 65, 1), (1, 300, 0)] {
            let ld = k + ld_extra;
            let src = values(rows * ld, &mut rng);
            let k2 = k.div_ceil(2);
            let (mut want, mut got) = (vec![0f32; rows * k2], vec![1f32; rows * k2]);
            unsafe {
                pairs_along_scalar(src.as_ptr(), ld, rows, k, want.as_mut_ptr(), k2);
                x86::pairs_along(src.as_ptr(), ld, rows, k, got.as_mut_ptr(), k2);
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "along: {rows}×{k}");
            // Across: k rows of `rows` columns (the same source read the other way).
            let cols = ld;
            let src = values(k * cols, &mut rng);
            let (mut want, mut got) = (vec![0f32; k2 * cols], vec![1f32; k2 * cols]);
            unsafe {
                pairs_across_scalar(src.as_ptr(), cols, k, cols, want.as_mut_ptr(), cols);
                x86::pairs_across(src.as_ptr(), cols, k, cols, got.as_mut_ptr(), cols);
            }
            assert_eq!(bits(&got), bits(&want), "across: {k}×{cols}");
        }
    }
}
