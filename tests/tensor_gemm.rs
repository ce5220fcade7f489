//! Every GEMM kernel against the f64 reference (and so against each other) on random
//! shapes, including odd sizes and every transposition variant.

use deepchess::tensor::gemm::{gemm_reference, gemm_slices, gemm_with, Trans};
use deepchess::tensor::Kernel;
use deepchess::tensor::{Init, Matrix, Rng};
use proptest::prelude::*;

fn operands(ta: Trans, tb: Trans, m: usize, k: usize, n: usize, seed: u64) -> (Matrix, Matrix, Matrix) {
    let mut rng = Rng::new(seed);
    let a = if ta == Trans::N { Init::XavierUniform.matrix(m, k, &mut rng) } else { Init::XavierUniform.matrix(k, m, &mut rng) };
    let b = if tb == Trans::N { Init::XavierUniform.matrix(k, n, &mut rng) } else { Init::XavierUniform.matrix(n, k, &mut rng) };
    let c = Init::XavierUniform.matrix(m, n, &mut rng);
    (a, b, c)
}

/// Tolerance scaled by the inner size: f32 rounding grows with the number of terms.
fn tol(k: usize) -> f32 {
    1e-5 * (k as f32 + 1.0).sqrt() * 4.0
}

#[allow(clippy::too_many_arguments)]
fn check_all(ta: Trans, tb: Trans, m: usize, k: usize, n: usize, alpha: f32, beta: f32, seed: u64) {
    let (a, b, c0) = operands(ta, tb, m, k, n, seed);
    let mut want = c0.clone();
    gemm_reference(ta, tb, alpha, &a, &b, beta, &mut want);
    for kern in Kernel::available_kernels() {
        for threads in [1, 2] {
            let mut c = c0.clone();
            gemm_with(kern, threads, ta, tb, alpha, &a, &b, beta, &mut c).unwrap();
            let d = c.max_abs_diff(&want);
            assert!(d <= tol(k), "{kern:?} {threads}t {ta:?}{tb:?} {m}×{k}×{n}: diff {d}");
        }
    }
}

const TRANS: [(Trans, Trans); 4] = [(Trans::N, Trans::N), (Trans::N, Trans::T), (Trans::T, Trans::N), (Trans::T, Trans::T)];

#[test]
fn odd_sizes_all_variants() {
    let sizes = [1usize, 7, 33, 773];
    for (i, &(ta, tb)) in TRANS.iter().enumerate() {
        for &m in &sizes {
            for &n in &[1usize, 7, 50] {
                for &k in &[1usize, 7, 300] {
                    check_all(ta, tb, m, k, n, 1.0, 0.0, (i * 1000 + m * 7 + n * 3 + k) as u64);
                }
            }
        }
    }
}

#[test]
fn large_odd_shapes_cross_blocks() {
    // 1023 and 773 cross the kc / mc block boundaries and leave edge tiles everywhere.
    check_all(Trans::N, Trans::N, 1023, 773, 37, 1.0, 0.0, 1);
    check_all(Trans::T, Trans::N, 773, 1023, 29, 0.5, 1.0, 2);
    check_all(Trans::N, Trans::T, 67, 1023, 773, -1.0, 0.25, 3);
    check_all(Trans::T, Trans::T, 129, 517, 1023, 1.0, 1.0, 4);
}

#[test]
fn multithreaded_is_bitwise_deterministic() {
    let (a, b, c0) = operands(Trans::N, Trans::N, 256, 773, 600, 9);
    for kern in Kernel::available_kernels() {
        let mut c1 = c0.clone();
        let mut c2 = c0.clone();
        gemm_with(kern, 1, Trans::N, Trans::N, 1.0, &a, &b, 1.0, &mut c1).unwrap();
        gemm_with(kern, 2, Trans::N, Trans::N, 1.0, &a, &b, 1.0, &mut c2).unwrap();
        assert_eq!(c1, c2, "{kern:?}: thread count changed the result");
    }
}

#[test]
fn beta_zero_ignores_nan_in_c() {
    let (a, b, _) = operands(Trans::N, Trans::N, 5, 4, 3, 5);
    for kern in Kernel::available_kernels() {
        let mut c = Matrix::filled(5, 3, f32::NAN);
        gemm_with(kern, 1, Trans::N, Trans::N, 1.0, &a, &b, 0.0, &mut c).unwrap();
        assert!(c.data().iter().all(|x| x.is_finite()));
    }
}

#[test]
fn bad_shapes_are_errors_not_panics() {
    let a = Matrix::zeros(3, 4);
    let b = Matrix::zeros(5, 2);
    let mut c = Matrix::zeros(3, 2);
    let e = gemm_with(Kernel::Scalar, 1, Trans::N, Trans::N, 1.0, &a, &b, 0.0, &mut c).unwrap_err();
    assert!(e.to_string().contains("gemm"), "{e}");
    let mut out = [0.0f32; 4];
    assert!(gemm_slices(Kernel::Scalar, 1, Trans::N, Trans::N, 2, 2, 2, 1.0, &[0.0; 3], 2, &[0.0; 4], 2, 0.0, &mut out, 2).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn kernels_match_reference(m in 1usize..70, k in 1usize..300, n in 1usize..70, t in 0usize..4,
                               alpha in -2.0f32..2.0, beta in prop::sample::select(vec![0.0f32, 1.0, -0.5]), seed in any::<u64>()) {
        let (ta, tb) = TRANS[t];
        check_all(ta, tb, m, k, n, alpha, beta, seed);
    }
}

#[test]
fn kernel_selection_by_name_and_forcing() {
    use deepchess::tensor::{active_kernel, set_kernel};
    assert_eq!(Kernel::from_name("AVX2"), Some(Kernel::Avx2));
    assert_eq!(Kernel::from_name("scalar"), Some(Kernel::Scalar));
    assert_eq!(Kernel::from_name("neon"), None);
    assert!(Kernel::best().available());
    for k in Kernel::ALL {
        if k.available() {
            set_kernel(k).unwrap();
            assert_eq!(active_kernel(), k);
        } else {
            assert!(set_kernel(k).is_err());
            let a = Matrix::zeros(1, 1);
            let mut c = Matrix::zeros(1, 1);
            assert!(gemm_with(k, 1, Trans::N, Trans::N, 1.0, &a, &a, 0.0, &mut c).is_err());
        }
    }
    set_kernel(Kernel::best()).unwrap();
}
