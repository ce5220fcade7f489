//! Small vector loops (row additions for the sparse layer, activations, losses) compiled
//! three times: generic Rust, and under `#[target_feature]` wrappers so the compiler
//! vectorises them for AVX2 / AVX-512. Dispatched with the same [`Kernel`] as GEMM.

use crate::tensor::kernels::simd::Kernel;

#[inline(always)]
fn add_generic(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_avx2(dst: &mut [f32], src: &[f32]) {
    add_generic(dst, src)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn add_avx512(dst: &mut [f32], src: &[f32]) {
    add_generic(dst, src)
}

/// `dst += src` elementwise (over the shorter length) with the given kernel flavour.
#[inline]
pub fn add_assign_with(k: Kernel, dst: &mut [f32], src: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { add_avx2(dst, src) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { add_avx512(dst, src) },
        _ => add_generic(dst, src),
    }
}

/// `sums += row` for every row of `rows` (`sums.len()` values each), in row order: a bias's
/// gradient, the column sums of its layer's output gradient.
#[inline(always)]
fn col_sums_generic(sums: &mut [f32], rows: &[f32]) {
    let n = sums.len().max(1);
    for row in rows.chunks_exact(n) {
        add_generic(sums, row);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn col_sums_avx2(sums: &mut [f32], rows: &[f32]) {
    col_sums_generic(sums, rows)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn col_sums_avx512(sums: &mut [f32], rows: &[f32]) {
    col_sums_generic(sums, rows)
}

/// [`col_sums_generic`] with the given kernel flavour: one dispatch for the whole matrix
/// (a call per row cost more than its adds for seed 002's 32-wide layers).
#[inline]
pub fn col_sums_add_with(k: Kernel, sums: &mut [f32], rows: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { col_sums_avx2(sums, rows) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { col_sums_avx512(sums, rows) },
        _ => col_sums_generic(sums, rows),
    }
}

/// `dx += g` where `y > 0`, elementwise: ReLU's backward pass (`y` its output). Written as
/// a select, not a branch, so that it vectorises (a branch on the sign of activations is
/// mispredicted half the time).
#[inline(always)]
fn relu_backward_generic(dx: &mut [f32], g: &[f32], y: &[f32]) {
    for ((d, &gv), &yv) in dx.iter_mut().zip(g).zip(y) {
        *d += if yv > 0.0 { gv } else { 0.0 };
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn relu_backward_avx2(dx: &mut [f32], g: &[f32], y: &[f32]) {
    relu_backward_generic(dx, g, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn relu_backward_avx512(dx: &mut [f32], g: &[f32], y: &[f32]) {
    relu_backward_generic(dx, g, y)
}

/// `dx += g · [y > 0]` (over the shortest length) with the given kernel flavour.
#[inline]
pub fn relu_backward_with(k: Kernel, dx: &mut [f32], g: &[f32], y: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { relu_backward_avx2(dx, g, y) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { relu_backward_avx512(dx, g, y) },
        _ => relu_backward_generic(dx, g, y),
    }
}

/// `g = 0` where `y <= 0`, elementwise: a fused ReLU's backward on its own gradient.
#[inline(always)]
fn relu_mask_generic(g: &mut [f32], y: &[f32]) {
    for (gv, &yv) in g.iter_mut().zip(y) {
        *gv = crate::tensor::kernels::simd::gate(*gv, yv);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn relu_mask_avx2(g: &mut [f32], y: &[f32]) {
    relu_mask_generic(g, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn relu_mask_avx512(g: &mut [f32], y: &[f32]) {
    relu_mask_generic(g, y)
}

/// `g ← g · [y > 0]` (over the shorter length) with the given kernel flavour.
#[inline]
pub fn relu_mask_with(k: Kernel, g: &mut [f32], y: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { relu_mask_avx2(g, y) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { relu_mask_avx512(g, y) },
        _ => relu_mask_generic(g, y),
    }
}

/// Columns summed in registers at once by [`gather_add_with`] (4 AVX-512 / 8 AVX2 registers).
pub const GATHER_BLOCK: usize = 64;

/// `dst += Σ_r w[r, col0 .. col0+dst.len()]` over `rows` (row stride `ld`). The inner loop
/// of the sparse layer: blocks of [`GATHER_BLOCK`] columns are accumulated in registers,
/// so `dst` is read and written once and only the `w` rows stream through. Each element
/// sums in the order `dst, w[rows[0]], w[rows[1]], …` whatever the block size.
/// With `SET`, `dst = Σ_r …` instead: the sums start from zero and `dst` is not read (the
/// same bits as zeroing `dst` first, without that pass).
#[inline(always)]
fn gather_add_generic<const SET: bool>(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    let len = dst.len();
    let mut c = 0;
    while c + GATHER_BLOCK <= len {
        gather_block::<GATHER_BLOCK, SET>(&mut dst[c..c + GATHER_BLOCK], w, ld, col0 + c, rows);
        c += GATHER_BLOCK;
    }
    // The last columns a register at a time, then what is left of one (a library memset
    // or a loop through memory per row cost more than the sums at these lengths).
    while c + 8 <= len {
        gather_block::<8, SET>(&mut dst[c..c + 8], w, ld, col0 + c, rows);
        c += 8;
    }
    if c < len {
        gather_block::<8, SET>(&mut dst[c..], w, ld, col0 + c, rows);
    }
}

/// `dst (+)= Σ_r w[r, col0 .. col0+dst.len()]` for `dst.len() <= B`, summed in a `B`-float
/// accumulator.
#[inline(always)]
fn gather_block<const B: usize, const SET: bool>(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    let len = dst.len();
    let mut acc = [0f32; B];
    if !SET {
        acc[..len].copy_from_slice(dst);
    }
    if len == B {
        for &r in rows {
            let s = &w[r as usize * ld + col0..][..B];
            for (a, x) in acc.iter_mut().zip(s) {
                *a += *x;
            }
        }
    } else {
        for &r in rows {
            let s = &w[r as usize * ld + col0..][..len];
            for (a, x) in acc.iter_mut().zip(s) {
                *a += *x;
            }
        }
    }
    dst.copy_from_slice(&acc[..len]);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gather_add_avx2<const SET: bool>(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    gather_add_generic::<SET>(dst, w, ld, col0, rows)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather_add_avx512<const SET: bool>(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    gather_add_generic::<SET>(dst, w, ld, col0, rows)
}

#[inline]
fn gather_with<const SET: bool>(k: Kernel, dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    match k {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { gather_add_avx2::<SET>(dst, w, ld, col0, rows) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { gather_add_avx512::<SET>(dst, w, ld, col0, rows) },
        _ => gather_add_generic::<SET>(dst, w, ld, col0, rows),
    }
}

/// `dst += Σ_r w[r, col0 .. col0+dst.len()]` for each `r` in `rows` (indices already checked).
#[inline]
pub fn gather_add_with(k: Kernel, dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    gather_with::<false>(k, dst, w, ld, col0, rows)
}

/// `dst = Σ_r w[r, col0 .. col0+dst.len()]` (zero for no rows): [`gather_add_with`] into a
/// zeroed `dst`, bit for bit, without reading it.
#[inline]
pub fn gather_set_with(k: Kernel, dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    gather_with::<true>(k, dst, w, ld, col0, rows)
}

/// `dst = src + Σ_{r ∈ added} w[r] − Σ_{r ∈ removed} w[r]` (rows of length `dst.len()`,
/// stride `ld`): the search's incremental first layer, a child's sums from its parent's.
/// Blocks of [`GATHER_BLOCK`] columns stay in registers, so `src` is read and `dst`
/// written once; each element sums in the order `src, added…, removed…`.
#[inline(always)]
fn update_generic(dst: &mut [f32], src: &[f32], w: &[f32], ld: usize, added: &[usize], removed: &[usize]) {
    let len = dst.len();
    assert!(src.len() == len && added.iter().chain(removed).all(|&r| r * ld + len <= w.len()));
    // Whole blocks: a fixed-size accumulator the compiler keeps in registers.
    let mut c = 0;
    while c + GATHER_BLOCK <= len {
        let mut acc = [0f32; GATHER_BLOCK];
        acc.copy_from_slice(&src[c..c + GATHER_BLOCK]);
        for &r in added {
            for (a, x) in acc.iter_mut().zip(&w[r * ld + c..][..GATHER_BLOCK]) {
                *a += *x;
            }
        }
        for &r in removed {
            for (a, x) in acc.iter_mut().zip(&w[r * ld + c..][..GATHER_BLOCK]) {
                *a -= *x;
            }
        }
        dst[c..c + GATHER_BLOCK].copy_from_slice(&acc);
        c += GATHER_BLOCK;
    }
    if c < len {
        let tail = &mut dst[c..];
        tail.copy_from_slice(&src[c..]);
        for &r in added {
            for (a, x) in tail.iter_mut().zip(&w[r * ld + c..]) {
                *a += *x;
            }
        }
        for &r in removed {
            for (a, x) in tail.iter_mut().zip(&w[r * ld + c..]) {
                *a -= *x;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_avx2(dst: &mut [f32], src: &[f32], w: &[f32], ld: usize, added: &[usize], removed: &[usize]) {
    update_generic(dst, src, w, ld, added, removed)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn update_avx512(dst: &mut [f32], src: &[f32], w: &[f32], ld: usize, added: &[usize], removed: &[usize]) {
    update_generic(dst, src, w, ld, added, removed)
}

/// `dst = src + Σ added rows − Σ removed rows` of `w` (row stride `ld`) with the given flavour.
#[inline]
pub fn update_with(k: Kernel, dst: &mut [f32], src: &[f32], w: &[f32], ld: usize, added: &[usize], removed: &[usize]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { update_avx2(dst, src, w, ld, added, removed) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { update_avx512(dst, src, w, ld, added, removed) },
        _ => update_generic(dst, src, w, ld, added, removed),
    }
}

/// `dst += a · src` elementwise (over the shorter length). Written as a multiply then an
/// add (Rust never contracts them), so every flavour gives bit-identical results.
#[inline(always)]
fn axpy_generic(dst: &mut [f32], a: f32, src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += a * *s;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn axpy_avx2(dst: &mut [f32], a: f32, src: &[f32]) {
    axpy_generic(dst, a, src)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn axpy_avx512(dst: &mut [f32], a: f32, src: &[f32]) {
    axpy_generic(dst, a, src)
}

/// `dst += a · src` with the given kernel flavour.
#[inline]
pub fn axpy_with(k: Kernel, dst: &mut [f32], a: f32, src: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { axpy_avx2(dst, a, src) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { axpy_avx512(dst, a, src) },
        _ => axpy_generic(dst, a, src),
    }
}

/// `h += Σ x_i · w[i·n .. (i+1)·n]` over the nonzero `x_i` (`n = h.len()`): a dense
/// layer's sums, one [`axpy_with`] row per nonzero input (NeuroChess's hidden layer), each a
/// multiply then an add, so every flavour gives the bits of the scalar loop.
#[inline(always)]
fn axpy_rows_generic(h: &mut [f32], x: &[f32], w: &[f32]) {
    let n = h.len();
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for (a, w) in h.iter_mut().zip(&w[i * n..(i + 1) * n]) {
                *a += xi * w;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn axpy_rows_avx2(h: &mut [f32], x: &[f32], w: &[f32]) {
    axpy_rows_generic(h, x, w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn axpy_rows_avx512(h: &mut [f32], x: &[f32], w: &[f32]) {
    axpy_rows_generic(h, x, w)
}

/// `h += Σ x_i · w[i·n .. (i+1)·n]` over the nonzero `x_i` (`n = h.len()`, `w` input-major,
/// at least `x.len() · n` long) with the given kernel flavour.
#[inline]
pub fn axpy_rows_with(k: Kernel, h: &mut [f32], x: &[f32], w: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { axpy_rows_avx2(h, x, w) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { axpy_rows_avx512(h, x, w) },
        _ => axpy_rows_generic(h, x, w),
    }
}

/// `e^x` for `x` in `[-87, 88]` (clamped to it), within 2 ulp: Cody-Waite reduction
/// `x = n·ln2 + r`, `|r| ≤ ln2/2`, Cephes' degree-6 polynomial for `e^r`, and `2^n` built in
/// the exponent bits. Only adds, multiplies, a clamp and conversions, so the loops that call
/// it vectorise (libm's `expf` is a scalar call); no fused multiply-add, so every flavour
/// gives the same bits.
#[inline(always)]
fn exp_approx(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // Adding then subtracting 1.5·2^23 rounds to the nearest integer (ties to even).
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.0, 88.0);
    let t = x * LOG2E + ROUND;
    let n = t - ROUND;
    // n as an integer, read from t's mantissa bits (a float-to-int `as` saturates, which
    // the compiler does one lane at a time).
    let ni = t.to_bits().wrapping_sub(ROUND.to_bits()) as i32;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let er = p * (r * r) + r + 1.0;
    er * f32::from_bits(((ni + 127) as u32) << 23)
}

/// `x = σ(x + bias)` elementwise, `σ(z) = 1 / (1 + e^-z)` with [`exp_approx`]: within a few
/// ulp of the exact value, in `(0, 1]`, never NaN for finite input.
#[inline(always)]
fn sigmoid_bias_generic(x: &mut [f32], bias: &[f32]) {
    for (v, &b) in x.iter_mut().zip(bias) {
        *v = sigmoid(*v + b);
    }
}

/// `σ(z) = 1 / (1 + e^-z)` with [`exp_approx`], as [`sigmoid_bias_with`] computes it: for loops
/// written elsewhere and run under a flavour's instructions ([`Kernel::run`]).
#[inline(always)]
pub(crate) fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + exp_approx(-z))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sigmoid_bias_avx2(x: &mut [f32], bias: &[f32]) {
    sigmoid_bias_generic(x, bias)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sigmoid_bias_avx512(x: &mut [f32], bias: &[f32]) {
    sigmoid_bias_generic(x, bias)
}

/// `x = σ(x + bias)` elementwise (over the shorter length) with the given kernel flavour.
#[inline]
pub fn sigmoid_bias_with(k: Kernel, x: &mut [f32], bias: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { sigmoid_bias_avx2(x, bias) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { sigmoid_bias_avx512(x, bias) },
        _ => sigmoid_bias_generic(x, bias),
    }
}

/// `ln(1 + x)` for `x` in `[0, 1]` (the softplus of a non-positive number, given its
/// exponential): `2·atanh(s)` with `s = x / (2 + x) ≤ 1/3`, the odd series to `s¹⁵`
/// (truncation under 2e-9 relative), so within a few float roundings of libm's `ln_1p`.
/// Plain multiplies and adds: the same bits in every flavour.
#[inline(always)]
fn ln_1p_unit(x: f32) -> f32 {
    let s = x / (2.0 + x);
    let s2 = s * s;
    let mut q = 1.0 / 15.0;
    q = q * s2 + 1.0 / 13.0;
    q = q * s2 + 1.0 / 11.0;
    q = q * s2 + 1.0 / 9.0;
    q = q * s2 + 1.0 / 7.0;
    q = q * s2 + 1.0 / 5.0;
    q = q * s2 + 1.0 / 3.0;
    q = q * s2 + 1.0;
    2.0 * s * q
}

/// `p = σ(z)` and each element's `softplus(−|z|) = ln(1 + e^−|z|)` into `sp`: the
/// elementwise half of a cross-entropy on logits (the caller sums it in double precision).
/// A scalar `ln_1p` per element cost a tenth of an autoencoder's training step.
#[inline(always)]
fn sigmoid_and_softplus_generic(z: &[f32], p: &mut [f32], sp: &mut [f32]) {
    for ((&zv, pv), spv) in z.iter().zip(p.iter_mut()).zip(sp.iter_mut()) {
        let x = exp_approx(-zv.abs());
        *spv = ln_1p_unit(x);
        // σ(z) = 1/(1+e^−z) for z ≥ 0, e^z/(1+e^z) otherwise: both from e^−|z|, no overflow.
        *pv = if zv >= 0.0 { 1.0 / (1.0 + x) } else { x / (1.0 + x) };
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sigmoid_and_softplus_avx2(z: &[f32], p: &mut [f32], sp: &mut [f32]) {
    sigmoid_and_softplus_generic(z, p, sp)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sigmoid_and_softplus_avx512(z: &[f32], p: &mut [f32], sp: &mut [f32]) {
    sigmoid_and_softplus_generic(z, p, sp)
}

/// `p = σ(z)` and `sp = ln(1 + e^−|z|)` elementwise (over the shortest length) with the
/// given kernel flavour; the same bits on every flavour (no fused multiply-add).
#[inline]
pub fn sigmoid_and_softplus_with(k: Kernel, z: &[f32], p: &mut [f32], sp: &mut [f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { sigmoid_and_softplus_avx2(z, p, sp) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { sigmoid_and_softplus_avx512(z, p, sp) },
        _ => sigmoid_and_softplus_generic(z, p, sp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Column sums added row by row give the scalar loop's bits in every flavour (odd
    /// widths: the vector loops' tails too).
    #[test]
    fn col_sums_give_the_scalar_bits_in_every_flavour() {
        let f = |i: usize| ((i as f32 * 0.37).sin() * 3.0) * 10f32.powi((i % 7) as i32 - 3);
        for n in [1, 15, 17, 83] {
            let rows: Vec<f32> = (0..29 * n).map(f).collect();
            let start: Vec<f32> = (0..n).map(|i| f(i + 5000)).collect();
            let mut want = start.clone();
            for r in 0..29 {
                for j in 0..n {
                    want[j] += rows[r * n + j];
                }
            }
            for k in Kernel::available_kernels() {
                let mut got = start.clone();
                col_sums_add_with(k, &mut got, &rows);
                assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "{} n={n}", k.name());
            }
        }
    }

    /// The rows of the nonzero inputs, summed as the scalar loop sums them, in every flavour
    /// (odd widths: the vector loops' tails too; zeros skipped).
    #[test]
    fn axpy_rows_gives_the_scalar_bits_in_every_flavour() {
        let (inputs, n) = (37, 83);
        let f = |i: usize, s: f32| ((i as f32 * 0.37 + s).sin() * 3.0) * 10f32.powi((i % 5) as i32 - 2);
        let x: Vec<f32> = (0..inputs).map(|i| if i % 3 == 0 { 0.0 } else { f(i, 0.4) }).collect();
        let w: Vec<f32> = (0..inputs * n).map(|i| f(i, 1.1)).collect();
        let h0: Vec<f32> = (0..n).map(|i| f(i, 2.3)).collect();
        let mut want = h0.clone();
        for (i, &xi) in x.iter().enumerate().filter(|(_, &xi)| xi != 0.0) {
            for (a, wv) in want.iter_mut().zip(&w[i * n..(i + 1) * n]) {
                *a += xi * wv;
            }
        }
        for k in Kernel::available_kernels() {
            let mut h = h0.clone();
            axpy_rows_with(k, &mut h, &x, &w);
            assert_eq!(h.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "{}", k.name());
        }
    }

    #[test]
    fn exp_and_sigmoid_match_libm_in_every_flavour() {
        let xs: Vec<f32> = (-4000..=4000).map(|i| i as f32 * 0.0217).chain([-1e4, -87.5, 0.0, 88.5, 1e4]).collect();
        for &x in &xs {
            let (got, want) = (exp_approx(x) as f64, (x.clamp(-87.0, 88.0) as f64).exp());
            assert!((got - want).abs() <= 3e-7 * want, "exp({x}) = {got}, want {want}");
        }
        let zero = vec![0.0f32; xs.len()];
        let mut first: Option<Vec<f32>> = None;
        for k in Kernel::available_kernels() {
            let mut s = xs.clone();
            sigmoid_bias_with(k, &mut s, &zero);
            for (&x, &y) in xs.iter().zip(&s) {
                let want = 1.0 / (1.0 + (-(x as f64)).exp());
                assert!((y as f64 - want).abs() <= 1e-6 * want + 1e-37, "σ({x}) = {y}, want {want} ({})", k.name());
                assert!(y > 0.0 && y <= 1.0);
            }
            if let Some(f) = &first {
                assert_eq!(f, &s, "{} differs from the first flavour", k.name());
            }
            first = Some(s);
        }
    }

    /// The softplus half of the cross-entropy on logits against libm, and the same bits in
    /// every flavour (odd length: the vector loops' tails too).
    #[test]
    fn softplus_matches_libm_in_every_flavour() {
        let z: Vec<f32> = (-3001..=3001).map(|i| i as f32 * 0.0311).chain([-1e4, -87.5, 0.0, 88.5, 1e4, 1e-30]).collect();
        let mut first: Option<(Vec<f32>, Vec<f32>)> = None;
        for k in Kernel::available_kernels() {
            let (mut p, mut sp) = (vec![0.0; z.len()], vec![0.0; z.len()]);
            sigmoid_and_softplus_with(k, &z, &mut p, &mut sp);
            for ((&zv, &pv), &s) in z.iter().zip(&p).zip(&sp) {
                let x = -(zv.abs() as f64);
                let want = x.exp().ln_1p();
                assert!((s as f64 - want).abs() <= 1e-6 * want + 1e-37, "softplus({x}) = {s}, want {want} ({})", k.name());
                let want_p = 1.0 / (1.0 + (-(zv as f64)).exp());
                assert!((pv as f64 - want_p).abs() <= 1e-6 * want_p + 1e-37, "σ({zv}) = {pv}, want {want_p}");
            }
            if let Some(f) = &first {
                assert_eq!((&f.0, &f.1), (&p, &sp), "{} differs from the first flavour", k.name());
            }
            first = Some((p, sp));
        }
    }
}
