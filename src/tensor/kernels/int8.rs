//! Integer flavours for quantised inference: unsigned 8-bit activations times signed 8-bit
//! weights summed in 32-bit lanes, as strong engines run their nets (Stockfish's `nnue/`).
//!
//! Two instructions are special:
//! - [`IntFlavour::dot4`]: four byte products summed into each 32-bit lane. AVX2 and
//!   AVX-512BW do it as `maddubs` (byte pairs into 16-bit sums) then `madd` (16-bit pairs into
//!   32-bit sums); AVX-512 VNNI as one `vpdpbusd`. With activations in 0..=127 and weights in
//!   −127..=127 no 16-bit pair sum saturates (2·127·127 < 2^15).
//! - [`IntFlavour::dot2`]: two 16-bit products summed into each 32-bit lane, `madd` (VNNI:
//!   `vpdpwssd`), for the layers that keep 16-bit activations.
//!
//! So every flavour and the portable loop give the same integers, bit for bit.
//!
//! Everything else a quantised net does (16-bit accumulator updates, requantising sums to the
//! next layer's bytes, the last float dot product) is written as plain loops over 16-lane
//! arrays, so the compiler vectorises it inside each flavour's `#[target_feature]` wrapper with
//! the same arithmetic per lane: those too are equal bit for bit across flavours.
//!
//! [`IntKernel`] is chosen from the float [`Kernel`]: the AVX-512 kernel runs VNNI where the
//! CPU has it, AVX-512BW otherwise, and AVX2 when it lacks BW.

use super::simd::Kernel;

/// A vector of `LANES` i32 sums as an integer kernel sees it.
///
/// Safety: as `Flavour`: call only from code compiled for the flavour's instructions.
pub(crate) trait IntFlavour {
    type V: Copy;
    const LANES: usize;
    unsafe fn zero() -> Self::V;
    /// The four bytes of `x` (little-endian) repeated in every 32-bit lane.
    unsafe fn splat4(x: u32) -> Self::V;
    /// `acc` plus, in each lane j, Σ_k x.byte(k) · w[4j + k] (x's bytes unsigned and at most
    /// 127, weights signed and at least −127).
    unsafe fn dot4(acc: Self::V, x: Self::V, w: *const i8) -> Self::V;
    /// `acc` plus, in each lane j, Σ_k x.half(k) · w[2j + k] for the two signed 16-bit halves
    /// of `x` (activations at most 2^12, so no pair sum overflows).
    unsafe fn dot2(acc: Self::V, x: Self::V, w: *const i16) -> Self::V;
    unsafe fn store(p: *mut i32, v: Self::V);
    /// Lane-wise sum of several accumulators (integer: any order gives the same sums).
    unsafe fn sum_lanes(v: &[Self::V]) -> Self::V;
}

/// The portable flavour: one lane.
pub(crate) struct IntScalar;
impl IntFlavour for IntScalar {
    type V = u32x1;
    const LANES: usize = 1;
    #[inline(always)]
    unsafe fn zero() -> u32x1 {
        u32x1(0, 0)
    }
    #[inline(always)]
    unsafe fn splat4(x: u32) -> u32x1 {
        u32x1(x, 0)
    }
    #[inline(always)]
    unsafe fn dot4(acc: u32x1, x: u32x1, w: *const i8) -> u32x1 {
        let b = x.0.to_le_bytes();
        let s = (0..4).map(|k| b[k] as i32 * *w.add(k) as i32).sum::<i32>();
        u32x1(x.0, acc.1 + s)
    }
    #[inline(always)]
    unsafe fn dot2(acc: u32x1, x: u32x1, w: *const i16) -> u32x1 {
        let (lo, hi) = (x.0 as u16 as i16 as i32, (x.0 >> 16) as u16 as i16 as i32);
        u32x1(x.0, acc.1 + lo * *w as i32 + hi * *w.add(1) as i32)
    }
    #[inline(always)]
    unsafe fn store(p: *mut i32, v: u32x1) {
        *p = v.1
    }
    #[inline(always)]
    unsafe fn sum_lanes(v: &[u32x1]) -> u32x1 {
        u32x1(0, v.iter().map(|a| a.1).sum())
    }
}

/// The portable flavour's "vector": the broadcast input bytes and one sum.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub(crate) struct u32x1(u32, i32);

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{IntAvx2, IntAvx512, IntVnni};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::IntFlavour;
    use std::arch::x86_64::*;

    /// AVX2: 8 lanes, `maddubs` + `madd`.
    pub(crate) struct IntAvx2;
    impl IntFlavour for IntAvx2 {
        type V = __m256i;
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> __m256i {
            _mm256_setzero_si256()
        }
        #[inline(always)]
        unsafe fn splat4(x: u32) -> __m256i {
            _mm256_set1_epi32(x as i32)
        }
        #[inline(always)]
        unsafe fn dot4(acc: __m256i, x: __m256i, w: *const i8) -> __m256i {
            let p = _mm256_maddubs_epi16(x, _mm256_loadu_si256(w as *const __m256i));
            _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)))
        }
        #[inline(always)]
        unsafe fn dot2(acc: __m256i, x: __m256i, w: *const i16) -> __m256i {
            _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_loadu_si256(w as *const __m256i)))
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: __m256i) {
            _mm256_storeu_si256(p as *mut __m256i, v)
        }
        #[inline(always)]
        unsafe fn sum_lanes(v: &[__m256i]) -> __m256i {
            v.iter().fold(_mm256_setzero_si256(), |s, &a| _mm256_add_epi32(s, a))
        }
    }

    /// AVX-512BW: 16 lanes, `maddubs` + `madd`.
    pub(crate) struct IntAvx512;
    impl IntFlavour for IntAvx512 {
        type V = __m512i;
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m512i {
            _mm512_setzero_si512()
        }
        #[inline(always)]
        unsafe fn splat4(x: u32) -> __m512i {
            _mm512_set1_epi32(x as i32)
        }
        #[inline(always)]
        unsafe fn dot4(acc: __m512i, x: __m512i, w: *const i8) -> __m512i {
            let p = _mm512_maddubs_epi16(x, _mm512_loadu_si512(w as *const __m512i));
            _mm512_add_epi32(acc, _mm512_madd_epi16(p, _mm512_set1_epi16(1)))
        }
        #[inline(always)]
        unsafe fn dot2(acc: __m512i, x: __m512i, w: *const i16) -> __m512i {
            _mm512_add_epi32(acc, _mm512_madd_epi16(x, _mm512_loadu_si512(w as *const __m512i)))
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: __m512i) {
            _mm512_storeu_si512(p as *mut __m512i, v)
        }
        #[inline(always)]
        unsafe fn sum_lanes(v: &[__m512i]) -> __m512i {
            v.iter().fold(_mm512_setzero_si512(), |s, &a| _mm512_add_epi32(s, a))
        }
    }

    /// AVX-512 VNNI: AVX-512BW's vectors, its two products each one instruction
    /// (`vpdpbusd`, `vpdpwssd`).
    pub(crate) struct IntVnni;
    impl IntFlavour for IntVnni {
        type V = __m512i;
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m512i {
            IntAvx512::zero()
        }
        #[inline(always)]
        unsafe fn splat4(x: u32) -> __m512i {
            IntAvx512::splat4(x)
        }
        #[inline(always)]
        unsafe fn dot4(acc: __m512i, x: __m512i, w: *const i8) -> __m512i {
            _mm512_dpbusd_epi32(acc, x, _mm512_loadu_si512(w as *const __m512i))
        }
        #[inline(always)]
        unsafe fn dot2(acc: __m512i, x: __m512i, w: *const i16) -> __m512i {
            _mm512_dpwssd_epi32(acc, x, _mm512_loadu_si512(w as *const __m512i))
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: __m512i) {
            IntAvx512::store(p, v)
        }
        #[inline(always)]
        unsafe fn sum_lanes(v: &[__m512i]) -> __m512i {
            IntAvx512::sum_lanes(v)
        }
    }
}

/// Which integer flavour runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntKernel {
    Portable,
    Avx2,
    Avx512,
    Vnni,
}

impl IntKernel {
    pub const ALL: [IntKernel; 4] = [IntKernel::Portable, IntKernel::Avx2, IntKernel::Avx512, IntKernel::Vnni];

    pub fn name(self) -> &'static str {
        match self {
            IntKernel::Portable => "portable",
            IntKernel::Avx2 => "avx2",
            IntKernel::Avx512 => "avx512bw",
            IntKernel::Vnni => "avx512-vnni",
        }
    }

    pub fn available(self) -> bool {
        match self {
            IntKernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            IntKernel::Avx2 => Kernel::Avx2.available(),
            #[cfg(target_arch = "x86_64")]
            IntKernel::Avx512 => Kernel::Avx2.available() && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"),
            #[cfg(target_arch = "x86_64")]
            IntKernel::Vnni => IntKernel::Avx512.available() && is_x86_feature_detected!("avx512vnni"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    pub fn available_kernels() -> Vec<IntKernel> {
        IntKernel::ALL.into_iter().filter(|k| k.available()).collect()
    }

    /// The integer flavour for a float kernel choice: the same instruction set, the best
    /// integer variant of it this CPU has.
    pub fn for_kernel(k: Kernel) -> IntKernel {
        let want = match k {
            Kernel::Scalar => return IntKernel::Portable,
            Kernel::Avx2 => IntKernel::Avx2,
            Kernel::Avx512 => IntKernel::Vnni,
        };
        IntKernel::ALL[..=want as usize].iter().rev().copied().find(|k| k.available()).unwrap_or(IntKernel::Portable)
    }

    /// `f` with this flavour's instructions when this CPU has them, else its portable path.
    #[inline(always)]
    pub(crate) fn run<J: IntFn>(self, f: J) -> J::Output {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn avx2<J: IntFn>(f: J) -> J::Output {
            f.simd::<IntAvx2>()
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw")]
        unsafe fn avx512<J: IntFn>(f: J) -> J::Output {
            f.simd::<IntAvx512>()
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma,f16c,avx512f,avx512bw,avx512vnni")]
        unsafe fn vnni<J: IntFn>(f: J) -> J::Output {
            f.simd::<IntVnni>()
        }
        match self {
            // Safety: the flavour is available (checked in the guard).
            #[cfg(target_arch = "x86_64")]
            IntKernel::Avx2 if self.available() => unsafe { avx2(f) },
            #[cfg(target_arch = "x86_64")]
            IntKernel::Avx512 if self.available() => unsafe { avx512(f) },
            #[cfg(target_arch = "x86_64")]
            IntKernel::Vnni if self.available() => unsafe { vnni(f) },
            _ => f.simd_portable(),
        }
    }
}

/// A computation written once, generic over the integer flavour (see `FlavourFn`).
pub(crate) trait IntFn: Sized {
    type Output;
    /// With flavour `F`'s instructions (mark it `#[inline(always)]`).
    ///
    /// Safety: `F`'s instructions are available and the caller is compiled for them.
    unsafe fn simd<F: IntFlavour>(self) -> Self::Output;
    /// The portable path: the same code on the one-lane flavour.
    fn simd_portable(self) -> Self::Output {
        // Safety: the portable flavour uses no instruction beyond the base set.
        unsafe { self.simd::<IntScalar>() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dot4` of every flavour on the extreme values the layers allow (activations 0..=127,
    /// weights −127..=127): no pair saturates, so all agree with plain integer arithmetic.
    #[test]
    fn dot4_is_exact_at_the_extremes() {
        struct Dot([u8; 4], [i8; 64]);
        impl IntFn for Dot {
            type Output = Vec<i32>;
            #[inline(always)]
            unsafe fn simd<F: IntFlavour>(self) -> Vec<i32> {
                let mut out = vec![0i32; 16];
                let x = F::splat4(u32::from_le_bytes(self.0));
                for c in (0..16).step_by(F::LANES) {
                    let acc = F::dot4(F::zero(), x, self.1.as_ptr().add(4 * c));
                    let acc = F::dot4(acc, x, self.1.as_ptr().add(4 * c));
                    F::store(out.as_mut_ptr().add(c), acc);
                }
                out
            }
        }
        let mut rng = crate::tensor::Rng::new(3);
        for case in 0..200 {
            let x: [u8; 4] = std::array::from_fn(|k| if case < 2 { 127 * (case as u8 ^ 1) } else { rng.below(128) as u8 }.max(if k == 0 && case == 0 { 127 } else { 0 }));
            let w: [i8; 64] = std::array::from_fn(|i| if case < 2 { if i % 2 == 0 { 127 } else { -127 } } else { rng.below(255) as i8 as i16 as i8 }.max(-127));
            let want: Vec<i32> = (0..16).map(|j| 2 * (0..4).map(|k| x[k] as i32 * w[4 * j + k] as i32).sum::<i32>()).collect();
            for k in IntKernel::available_kernels() {
                assert_eq!(k.run(Dot(x, w)), want, "{} case {case}", k.name());
            }
        }
    }

    /// Each float kernel maps to an integer flavour this CPU has, of the same instruction set.
    #[test]
    fn integer_flavours_follow_the_float_kernel() {
        assert_eq!(IntKernel::for_kernel(Kernel::Scalar), IntKernel::Portable);
        for k in Kernel::available_kernels() {
            let i = IntKernel::for_kernel(k);
            assert!(i.available(), "{k:?} -> {i:?}");
            assert_eq!(i == IntKernel::Portable, k == Kernel::Scalar, "{k:?} -> {i:?}");
        }
    }
}
