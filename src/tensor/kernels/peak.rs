//! The machine's fused multiply-add peak, measured: a loop of independent FMAs on registers
//! only (no memory traffic), on every thread at once. Benchmarks quote their GFLOPS as a
//! fraction of this figure, measured in the same run, rather than of a data-sheet number
//! that a shared virtual machine's clock may not reach.

use crate::tensor::kernels::simd::{Flavour, Kernel, Scalar};

/// Independent accumulators: enough to cover the FMA latency (4–5 cycles) on two ports.
const CHAINS: usize = 12;

/// `iters` rounds of `CHAINS` FMAs; returns a value the caller keeps so nothing is elided.
///
/// Safety: call only through a wrapper compiled for `F`'s instructions.
#[inline(always)]
unsafe fn fma_chains<F: Flavour>(iters: u64) -> f32 {
    let a = F::splat(0.999_999);
    let b = F::splat(1e-7);
    let mut acc = [F::splat(1.0); CHAINS];
    for _ in 0..iters {
        for v in acc.iter_mut() {
            *v = F::fmadd(*v, a, b);
        }
    }
    let mut s = F::zero();
    for v in acc {
        s = F::add(s, v);
    }
    F::sum(s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn chains_avx2(iters: u64) -> f32 {
    fma_chains::<crate::tensor::kernels::simd::Avx2>(iters)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn chains_avx512(iters: u64) -> f32 {
    fma_chains::<crate::tensor::kernels::simd::Avx512>(iters)
}

/// Floating-point operations of one round of [`fma_chains`] with `kernel`'s vectors.
fn flops_per_round(kernel: Kernel) -> f64 {
    let lanes = match kernel {
        Kernel::Scalar => Scalar::LANES,
        Kernel::Avx2 => 8,
        Kernel::Avx512 => 16,
    };
    (2 * lanes * CHAINS) as f64
}

fn run(kernel: Kernel, iters: u64) -> f32 {
    match kernel {
        // SAFETY: each wrapper runs only when `Kernel::available` says its instructions exist.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if kernel.available() => unsafe { chains_avx2(iters) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if kernel.available() => unsafe { chains_avx512(iters) },
        // SAFETY: the portable flavour needs no special instructions.
        _ => unsafe { fma_chains::<Scalar>(iters) },
    }
}

/// GFLOPS of `threads` threads each running FMAs with `kernel`'s vectors for about `secs`
/// seconds (all threads at once; the sum of their rates).
pub fn fma_peak_gflops(kernel: Kernel, threads: usize, secs: f64) -> f64 {
    let threads = threads.max(1);
    let per_thread = |_: usize| {
        let chunk = 1u64 << 20;
        let t = std::time::Instant::now();
        let (mut rounds, mut keep) = (0u64, 0.0f32);
        while rounds == 0 || t.elapsed().as_secs_f64() < secs {
            keep += run(kernel, chunk);
            rounds += chunk;
        }
        std::hint::black_box(keep);
        rounds as f64 * flops_per_round(kernel) / t.elapsed().as_secs_f64() / 1e9
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|i| s.spawn(move || per_thread(i))).collect();
        let first = per_thread(0);
        first + handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum::<f64>()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_available_flavour_computes_the_same_chains() {
        // The chains' value is the same whatever the vector width (each lane computes it).
        let want = run(Kernel::Scalar, 1000);
        for k in Kernel::available_kernels() {
            let got = run(k, 1000);
            let lanes = flops_per_round(k) / flops_per_round(Kernel::Scalar);
            assert!((got / lanes as f32 - want).abs() <= 1e-3 * want.abs(), "{}: {got} vs {want} × {lanes}", k.name());
        }
        assert!(fma_peak_gflops(Kernel::Scalar, 1, 0.01) > 0.0);
    }
}
