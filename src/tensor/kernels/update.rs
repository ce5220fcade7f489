//! The optimizers' elementwise passes (plain SGD over two shards' gradients, Adam), each a
//! generic loop compiled three times: as it is, and under `#[target_feature]` wrappers so the
//! compiler vectorises it for AVX2 / AVX-512. Every rounding is written out (no contraction
//! into an FMA; `sqrt` and `/` are correctly rounded in every width), so each flavour gives the
//! bits of the scalar loop. Dispatched with the same [`Kernel`] as GEMM.

use crate::tensor::kernels::simd::Kernel;

/// Adam's constants for one step: the moments' decays, the step size and ε with the bias
/// corrections folded in, and the decoupled weight decay already multiplied by the rate.
#[derive(Clone, Copy, Debug)]
pub struct AdamStep {
    pub b1: f32,
    pub b2: f32,
    pub step: f32,
    pub eps: f32,
    pub wd: f32,
}

/// One flavoured pass: the generic loop, its AVX2 and AVX-512 builds, and `$with`, which
/// runs the given flavour (the portable loop where it is not available).
macro_rules! flavoured {
    ($(#[$doc:meta])* $with:ident, $generic:ident, $avx2:ident, $avx512:ident, ($($arg:ident: $ty:ty),*)) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx2($($arg: $ty),*) {
            $generic($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $avx512($($arg: $ty),*) {
            $generic($($arg),*)
        }

        $(#[$doc])*
        #[inline]
        pub fn $with(k: Kernel, $($arg: $ty),*) {
            match k {
                // Safety: the flavour was checked available when it was selected.
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 if k.available() => unsafe { $avx2($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx512 if k.available() => unsafe { $avx512($($arg),*) },
                _ => $generic($($arg),*),
            }
        }
    };
}

/// Plain SGD over two shards' gradients summed as they are read: `w -= lr·((g + o) + wd·w)`
/// and `g = 0`, elementwise (over the shortest length).
#[inline(always)]
fn sgd_sum2_generic(w: &mut [f32], g: &mut [f32], o: &[f32], lr: f32, wd: f32) {
    for ((x, gv), ov) in w.iter_mut().zip(g.iter_mut()).zip(o) {
        *x -= lr * ((*gv + *ov) + wd * *x);
        *gv = 0.0;
    }
}

flavoured!(
    /// `sgd_sum2_generic` in the given flavour: one pass instead of a sum and an update.
    sgd_sum2_with, sgd_sum2_generic, sgd_sum2_avx2, sgd_sum2_avx512,
    (w: &mut [f32], g: &mut [f32], o: &[f32], lr: f32, wd: f32)
);

/// Adam's update of one element from its gradient `gv`; the moments `m`, `v` in place.
#[inline(always)]
fn adam_one(c: &AdamStep, x: &mut f32, gv: f32, m: &mut f32, v: &mut f32) {
    *m = c.b1 * *m + (1.0 - c.b1) * gv;
    *v = c.b2 * *v + (1.0 - c.b2) * gv * gv;
    *x -= c.wd * *x + c.step * *m / (v.sqrt() + c.eps);
}

/// Adam over one gradient: the moments and the weights updated, `g = 0` (shortest length).
#[inline(always)]
fn adam_generic(w: &mut [f32], g: &mut [f32], m: &mut [f32], v: &mut [f32], c: AdamStep) {
    for (((x, gv), mv), vv) in w.iter_mut().zip(g.iter_mut()).zip(m.iter_mut()).zip(v.iter_mut()) {
        adam_one(&c, x, *gv, mv, vv);
        *gv = 0.0;
    }
}

/// Adam over two shards' gradients summed as they are read (`g + o`, the bits of adding `o`
/// into `g` first), then `g = 0`.
#[inline(always)]
fn adam_sum2_generic(w: &mut [f32], g: &mut [f32], o: &[f32], m: &mut [f32], v: &mut [f32], c: AdamStep) {
    for ((((x, gv), ov), mv), vv) in w.iter_mut().zip(g.iter_mut()).zip(o).zip(m.iter_mut()).zip(v.iter_mut()) {
        adam_one(&c, x, *gv + *ov, mv, vv);
        *gv = 0.0;
    }
}

flavoured!(
    /// `adam_generic` (one gradient) in the given flavour.
    adam_with, adam_generic, adam_avx2, adam_avx512,
    (w: &mut [f32], g: &mut [f32], m: &mut [f32], v: &mut [f32], c: AdamStep)
);

flavoured!(
    /// `adam_sum2_generic` (two shards' gradients summed as read) in the given flavour.
    adam_sum2_with, adam_sum2_generic, adam_sum2_avx2, adam_sum2_avx512,
    (w: &mut [f32], g: &mut [f32], o: &[f32], m: &mut [f32], v: &mut [f32], c: AdamStep)
);

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Values over fourteen decades, signs mixed (odd lengths: the vector loops' tails too).
    fn vals(n: usize, s: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32 * 0.37 + s).sin() * 3.0) * 10f32.powi((i % 7) as i32 - 3)).collect()
    }

    /// The SGD pass gives the scalar loop's bits in every flavour and clears the gradient.
    #[test]
    fn sgd_sum2_gives_the_scalar_bits_in_every_flavour() {
        let n = 1003;
        let (w0, g0, o) = (vals(n, 0.1), vals(n, 1.3), vals(n, 2.9));
        let (lr, wd) = (0.013, 5e-4);
        let want: Vec<f32> = (0..n).map(|i| w0[i] - lr * ((g0[i] + o[i]) + wd * w0[i])).collect();
        for k in Kernel::available_kernels() {
            let (mut w, mut g) = (w0.clone(), g0.clone());
            sgd_sum2_with(k, &mut w, &mut g, &o, lr, wd);
            assert_eq!(bits(&w), bits(&want), "{}", k.name());
            assert!(g.iter().all(|&v| v == 0.0));
        }
    }

    /// Adam's pass, alone and over two shards, gives the bits of the scalar update written
    /// out element by element in every flavour (moments included), and clears the gradient.
    #[test]
    fn adam_gives_the_scalar_bits_in_every_flavour() {
        for n in [1, 15, 17, 1003] {
            let (w0, g0, o) = (vals(n, 0.1), vals(n, 1.3), vals(n, 2.9));
            let (m0, v0): (Vec<f32>, Vec<f32>) = (vals(n, 4.1), vals(n, 5.3).iter().map(|x| x * x).collect());
            let c = AdamStep { b1: 0.9, b2: 0.999, step: 1.3e-3, eps: 3e-9, wd: 1e-5 };
            let expect = |sum: bool| {
                let (mut w, mut m, mut v) = (w0.clone(), m0.clone(), v0.clone());
                for i in 0..n {
                    let gv = if sum { g0[i] + o[i] } else { g0[i] };
                    m[i] = c.b1 * m[i] + (1.0 - c.b1) * gv;
                    v[i] = c.b2 * v[i] + (1.0 - c.b2) * gv * gv;
                    w[i] -= c.wd * w[i] + c.step * m[i] / (v[i].sqrt() + c.eps);
                }
                (w, m, v)
            };
            for k in Kernel::available_kernels() {
                for sum in [false, true] {
                    let (mut w, mut g, mut m, mut v) = (w0.clone(), g0.clone(), m0.clone(), v0.clone());
                    if sum {
                        adam_sum2_with(k, &mut w, &mut g, &o, &mut m, &mut v, c);
                    } else {
                        adam_with(k, &mut w, &mut g, &mut m, &mut v, c);
                    }
                    let (ww, wm, wv) = expect(sum);
                    assert_eq!((bits(&w), bits(&m), bits(&v)), (bits(&ww), bits(&wm), bits(&wv)), "{} n={n} sum={sum}", k.name());
                    assert!(g.iter().all(|&x| x == 0.0));
                }
            }
        }
    }
}
