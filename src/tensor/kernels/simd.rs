//! The instruction flavours the crate's SIMD kernels are written against, GEMM's
//! micro-kernels and every network's inference layers alike (the small vector loops of
//! `vecops` are compiled per flavour instead), and the run-time choice among them:
//! - `Flavour`: a vector of `LANES` f32 as a kernel sees it (load, FMA, max, masks, half
//!   floats). A kernel is one `#[inline(always)]` function generic over it, instantiated by
//!   thin `#[target_feature]` wrappers, as the `matrixmultiply` crate does.
//! - [`Kernel`]: which flavour runs, chosen once at run time with `is_x86_feature_detected!`
//!   and forceable (`DEEPCHESS_KERNEL`, [`set_kernel`], or per call) so tests compare every
//!   flavour with the portable one.
//! - IEEE half floats ([`f16_bits`], [`f16_value`]): inference layers store weights in half
//!   precision and widen them in registers (`Flavour::load_half`).
//!
//! The AVX2 flavour is the vector part of the x86-64-v3 level: AVX2, FMA and F16C together
//! (every CPU with AVX2 has the other two), so one availability test covers every kernel
//! written against it.

use crate::tensor::error::{Result, TensorError};
use std::sync::atomic::{AtomicU8, Ordering};

/// One SIMD instruction set as a kernel sees it: a vector of `LANES` f32.
///
/// Safety: the methods use the flavour's instructions; call them only from code compiled
/// for them (a `#[target_feature]` wrapper) after [`Kernel::available`] said yes.
pub(crate) trait Flavour {
    type V: Copy;
    const LANES: usize;
    /// Vector registers the instruction set has (a register-blocked kernel keeps its
    /// accumulators within this budget).
    const REGISTERS: usize;
    unsafe fn zero() -> Self::V;
    unsafe fn splat(x: f32) -> Self::V;
    unsafe fn load(p: *const f32) -> Self::V;
    unsafe fn store(p: *mut f32, v: Self::V);
    /// `LANES` half floats widened to f32.
    unsafe fn load_half(p: *const u16) -> Self::V;
    /// `a * b + c` (fused where the hardware has it).
    unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b` per lane.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// `max(v, 0)` per lane (ReLU).
    unsafe fn max0(v: Self::V) -> Self::V;
    /// `v` where `m > 0`, zero elsewhere, per lane (a ReLU's backward: `m` is its output).
    unsafe fn gate(v: Self::V, m: Self::V) -> Self::V;
    /// Bit j set when lane j is not zero.
    unsafe fn nonzero(v: Self::V) -> u64;
    /// The sum of the lanes.
    unsafe fn sum(v: Self::V) -> f32;
    /// Asks for the cache line holding `p` ahead of its use (no-op where there is no hint).
    #[inline(always)]
    unsafe fn prefetch(p: *const f32) {
        let _ = p;
    }
}

/// `max(v, 0)` as `maxps(v, 0)` does it: +0 for −0 and NaN too, so that every flavour, and
/// every scalar pass beside the kernels, stores the same bits.
#[inline(always)]
pub(crate) fn relu(v: f32) -> f32 {
    if v > 0.0 { v } else { 0.0 }
}

/// `v` where `m > 0`, zero elsewhere (a ReLU's backward, `m` its output), as every
/// flavour's [`Flavour::gate`] does it.
#[inline(always)]
pub(crate) fn gate(v: f32, m: f32) -> f32 {
    if m > 0.0 { v } else { 0.0 }
}

/// Portable flavour: plain f32 arithmetic (the compiler may still use SSE2).
pub(crate) struct Scalar;
impl Flavour for Scalar {
    type V = f32;
    const LANES: usize = 1;
    const REGISTERS: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> f32 {
        0.0
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        *p
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: f32) {
        *p = v
    }
    #[inline(always)]
    unsafe fn load_half(p: *const u16) -> f32 {
        f16_value(*p)
    }
    #[inline(always)]
    unsafe fn fmadd(a: f32, b: f32, c: f32) -> f32 {
        a * b + c
    }
    #[inline(always)]
    unsafe fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    unsafe fn max0(v: f32) -> f32 {
        relu(v)
    }
    #[inline(always)]
    unsafe fn gate(v: f32, m: f32) -> f32 {
        gate(v, m)
    }
    #[inline(always)]
    unsafe fn nonzero(v: f32) -> u64 {
        (v != 0.0) as u64
    }
    #[inline(always)]
    unsafe fn sum(v: f32) -> f32 {
        v
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx512, Fma128};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Flavour;
    use std::arch::x86_64::*;

    /// AVX2 + FMA + F16C: 8 lanes.
    pub(crate) struct Avx2;
    impl Flavour for Avx2 {
        type V = __m256;
        const LANES: usize = 8;
        const REGISTERS: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m256 {
            _mm256_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m256 {
            _mm256_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m256 {
            _mm256_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m256) {
            _mm256_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn load_half(p: *const u16) -> __m256 {
            _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i))
        }
        #[inline(always)]
        unsafe fn fmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
            _mm256_fmadd_ps(a, b, c)
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            _mm256_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn max0(v: __m256) -> __m256 {
            _mm256_max_ps(v, _mm256_setzero_ps())
        }
        #[inline(always)]
        unsafe fn gate(v: __m256, m: __m256) -> __m256 {
            _mm256_and_ps(v, _mm256_cmp_ps::<_CMP_GT_OQ>(m, _mm256_setzero_ps()))
        }
        #[inline(always)]
        unsafe fn nonzero(v: __m256) -> u64 {
            _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_NEQ_UQ>(v, _mm256_setzero_ps())) as u32 as u64
        }
        #[inline(always)]
        unsafe fn sum(v: __m256) -> f32 {
            let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
        }
        #[inline(always)]
        unsafe fn prefetch(p: *const f32) {
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8)
        }
    }

    /// The AVX2 flavour's instructions on 128-bit vectors: 4 lanes. Not a kernel of its own:
    /// GEMM's edge tiles of 4 columns (a 100-wide layer's last ones) run on it, so that they
    /// store into C directly where an 8-wide vector would reach past its rows.
    pub(crate) struct Fma128;
    impl Flavour for Fma128 {
        type V = __m128;
        const LANES: usize = 4;
        const REGISTERS: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m128 {
            _mm_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m128 {
            _mm_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m128 {
            _mm_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m128) {
            _mm_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn load_half(p: *const u16) -> __m128 {
            _mm_cvtph_ps(_mm_loadl_epi64(p as *const __m128i))
        }
        #[inline(always)]
        unsafe fn fmadd(a: __m128, b: __m128, c: __m128) -> __m128 {
            _mm_fmadd_ps(a, b, c)
        }
        #[inline(always)]
        unsafe fn add(a: __m128, b: __m128) -> __m128 {
            _mm_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn max0(v: __m128) -> __m128 {
            _mm_max_ps(v, _mm_setzero_ps())
        }
        #[inline(always)]
        unsafe fn gate(v: __m128, m: __m128) -> __m128 {
            _mm_and_ps(v, _mm_cmpgt_ps(m, _mm_setzero_ps()))
        }
        #[inline(always)]
        unsafe fn nonzero(v: __m128) -> u64 {
            _mm_movemask_ps(_mm_cmpneq_ps(v, _mm_setzero_ps())) as u32 as u64
        }
        #[inline(always)]
        unsafe fn sum(v: __m128) -> f32 {
            let s = _mm_add_ps(v, _mm_movehl_ps(v, v));
            _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
        }
        #[inline(always)]
        unsafe fn prefetch(p: *const f32) {
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8)
        }
    }

    /// AVX-512F: 16 lanes.
    pub(crate) struct Avx512;
    impl Flavour for Avx512 {
        type V = __m512;
        const LANES: usize = 16;
        const REGISTERS: usize = 32;
        #[inline(always)]
        unsafe fn zero() -> __m512 {
            _mm512_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m512 {
            _mm512_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m512 {
            _mm512_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m512) {
            _mm512_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn load_half(p: *const u16) -> __m512 {
            _mm512_cvtph_ps(_mm256_loadu_si256(p as *const __m256i))
        }
        #[inline(always)]
        unsafe fn fmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
            _mm512_fmadd_ps(a, b, c)
        }
        #[inline(always)]
        unsafe fn add(a: __m512, b: __m512) -> __m512 {
            _mm512_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn max0(v: __m512) -> __m512 {
            _mm512_max_ps(v, _mm512_setzero_ps())
        }
        #[inline(always)]
        unsafe fn gate(v: __m512, m: __m512) -> __m512 {
            _mm512_maskz_mov_ps(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(m, _mm512_setzero_ps()), v)
        }
        #[inline(always)]
        unsafe fn nonzero(v: __m512) -> u64 {
            _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(v, _mm512_setzero_ps()) as u64
        }
        #[inline(always)]
        unsafe fn sum(v: __m512) -> f32 {
            _mm512_reduce_add_ps(v)
        }
        #[inline(always)]
        unsafe fn prefetch(p: *const f32) {
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8)
        }
    }
}

/// Which flavour a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Portable Rust, any CPU.
    Scalar,
    /// x86-64 AVX2 + FMA + F16C.
    Avx2,
    /// x86-64 AVX-512F.
    Avx512,
}

impl Kernel {
    /// All flavours, slowest first.
    pub const ALL: [Kernel; 3] = [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512];

    /// The name used by `DEEPCHESS_KERNEL`, `--kernel` flags and the benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// Parses `scalar`, `avx2` or `avx512`.
    pub fn from_name(s: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(s.trim()))
    }

    /// The kernel a player's layers run: the one `name` asks for (`PlayerSettings::kernel`,
    /// `bench --kernel`) where this CPU has it, else the process's ([`active_kernel`]:
    /// `DEEPCHESS_KERNEL` when set, else the best this CPU has). Every player chooses here,
    /// so every player honours the same default and the same override.
    pub fn for_player(name: Option<&str>) -> Kernel {
        name.and_then(Kernel::from_name).filter(|k| k.available()).unwrap_or_else(active_kernel)
    }

    /// Whether this CPU can run the flavour.
    pub fn available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The flavours this CPU can run.
    pub fn available_kernels() -> Vec<Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.available()).collect()
    }

    /// The fastest available flavour.
    pub fn best() -> Kernel {
        *Kernel::available_kernels().last().unwrap_or(&Kernel::Scalar)
    }

    fn to_u8(self) -> u8 {
        self as u8 + 1
    }
    fn from_u8(v: u8) -> Kernel {
        Kernel::ALL[(v as usize).saturating_sub(1).min(2)]
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// The flavour the dispatched kernels use (GEMM, the sparse layer, vector loops): chosen on
/// first use from `DEEPCHESS_KERNEL` (if set and available; otherwise a warning on stderr)
/// or else the best available one.
pub fn active_kernel() -> Kernel {
    let v = ACTIVE.load(Ordering::Relaxed);
    if v != 0 {
        return Kernel::from_u8(v);
    }
    let k = match std::env::var("DEEPCHESS_KERNEL") {
        Ok(s) if !s.trim().is_empty() => match Kernel::from_name(&s) {
            Some(k) if k.available() => k,
            Some(k) => {
                eprintln!("warning: DEEPCHESS_KERNEL={} not supported by this CPU; using {}", k.name(), Kernel::best().name());
                Kernel::best()
            }
            None => {
                eprintln!("warning: DEEPCHESS_KERNEL='{s}' unknown (scalar|avx2|avx512); using {}", Kernel::best().name());
                Kernel::best()
            }
        },
        _ => Kernel::best(),
    };
    ACTIVE.store(k.to_u8(), Ordering::Relaxed);
    k
}

/// Forces the flavour of [`active_kernel`].
pub fn set_kernel(k: Kernel) -> Result<()> {
    if !k.available() {
        return Err(TensorError::Unavailable(format!("kernel '{}' is not supported by this CPU", k.name())));
    }
    ACTIVE.store(k.to_u8(), Ordering::Relaxed);
    Ok(())
}

/// IEEE 754 half-precision bits of `x`, rounded to nearest even (as F16C's `vcvtps2ph`).
pub fn f16_bits(x: f32) -> u16 {
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
pub fn f16_value(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let (e, m) = (((h >> 10) & 0x1f) as u32, (h & 0x3ff) as u32);
    match e {
        0 => {
            let v = m as f32 * (1.0 / 16_777_216.0);
            if sign != 0 {
                -v
            } else {
                v
            }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (m << 13)),
        _ => f32::from_bits(sign | ((e + 112) << 23) | (m << 13)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half-precision rounding as the hardware does it (F16C, round to nearest even), on
    /// normal, subnormal, overflowing and special values; widening back is exact, and each
    /// flavour's `load_half` widens like `f16_value`.
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
        let halves: Vec<u16> = xs.iter().take(4096).map(|&x| f16_bits(x)).collect();
        let want: Vec<f32> = halves.iter().map(|&h| f16_value(h)).collect();
        for k in Kernel::available_kernels() {
            let got = widen(k, &halves);
            assert!(want.iter().zip(&got).all(|(a, b)| a.to_bits() == b.to_bits()), "{k:?}");
        }
    }

    /// `h` widened through flavour `k`'s `load_half`, a vector at a time.
    fn widen(k: Kernel, h: &[u16]) -> Vec<f32> {
        unsafe fn run<F: Flavour>(h: &[u16], out: &mut [f32]) {
            for (i, o) in (0..h.len() / F::LANES).map(|v| v * F::LANES).zip(out.chunks_exact_mut(F::LANES)) {
                F::store(o.as_mut_ptr(), F::load_half(h.as_ptr().add(i)));
            }
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn avx2(h: &[u16], out: &mut [f32]) {
            run::<Avx2>(h, out)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn avx512(h: &[u16], out: &mut [f32]) {
            run::<Avx512>(h, out)
        }
        let mut out = vec![0.0; h.len()];
        // Safety: only flavours this CPU has are asked for; lengths are whole vectors.
        unsafe {
            match k {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => avx2(h, &mut out),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 => avx512(h, &mut out),
                _ => run::<Scalar>(h, &mut out),
            }
        }
        out
    }
}
