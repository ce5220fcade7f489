//! Where code written outside `tensor::kernels` gets its instruction set: every choice of
//! one (`#[target_feature]`, `is_x86_feature_detected!`) is made in this folder. Code generic
//! over the flavour elsewhere — a network's whole forward pass, one inference layer — is a
//! [`FlavourFn`] handed to [`Kernel::run`], which runs it inlined into one `#[target_feature]`
//! function per flavour when this CPU has the flavour, else on its portable path.
//!
//! A type, not a closure: a closure passed in would not inherit the wrapper's target
//! features, and every intrinsic in it would become a call (the distilled and big nets
//! searched ten times slower so). A `FlavourFn` whose `simd` is `#[inline(always)]` inlines
//! into the wrapper with everything it calls that is `#[inline(always)]`.

use super::simd::{Flavour, Kernel};
#[cfg(target_arch = "x86_64")]
use super::simd::{Avx2, Avx512};

/// A computation written once, generic over the SIMD flavour, with a portable path beside it.
pub(crate) trait FlavourFn {
    type Output;
    /// With flavour `F`'s instructions (mark it `#[inline(always)]`).
    ///
    /// Safety: `F`'s instructions are available and the caller is compiled for them, as
    /// [`Kernel::run`]'s wrappers are.
    unsafe fn simd<F: Flavour>(self) -> Self::Output;
    /// With the base instruction set only: [`Kernel::Scalar`], or a flavour this CPU lacks.
    fn portable(self) -> Self::Output;
}

impl Kernel {
    /// `f` with this flavour's instructions when this CPU has them, else its portable path.
    #[inline(always)]
    pub(crate) fn run<J: FlavourFn>(self, f: J) -> J::Output {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma,f16c")]
        unsafe fn avx2<J: FlavourFn>(f: J) -> J::Output {
            f.simd::<Avx2>()
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn avx512<J: FlavourFn>(f: J) -> J::Output {
            f.simd::<Avx512>()
        }
        match self {
            // Safety: the flavour is available (checked in the guard).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if self.available() => unsafe { avx2(f) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 if self.available() => unsafe { avx512(f) },
            _ => f.portable(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lanes of the flavour that ran, or 0 for the portable path.
    struct Lanes;
    impl FlavourFn for Lanes {
        type Output = usize;
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) -> usize {
            F::LANES
        }
        fn portable(self) -> usize {
            0
        }
    }

    /// Each available flavour runs its own instantiation; the scalar kernel and a flavour
    /// this CPU lacks take the portable path.
    #[test]
    fn each_kernel_runs_its_flavour_or_the_portable_path() {
        for k in Kernel::ALL {
            let want = match k {
                Kernel::Avx2 if k.available() => 8,
                Kernel::Avx512 if k.available() => 16,
                _ => 0,
            };
            assert_eq!(k.run(Lanes), want, "{}", k.name());
        }
    }
}
