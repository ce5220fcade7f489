//! Products in bf16 with f32 sums (`with_precision(Precision::Bf16, ..)`): every kernel, on every shape and
//! transposition, equals the f64 reference on bf16-rounded operands within f32 tolerance
//! (the AVX-512 kernel runs them on AMX tiles where the CPU and OS allow them, else multiplies
//! pairs with `vdpbf16ps` where the CPU has it; the others multiply the rounded operands),
//! whatever the thread count. The odd shapes cross the tiles' edges (16 rows, 16 columns, 16
//! pairs of k) and the 32 × 32 blocks of C; `DEEPCHESS_AMX=off` runs the same tests on the
//! vector kernels.

use deepchess::tensor::kernels::gemm::bf16::round_bf16;
use deepchess::tensor::kernels::gemm::{Fuse, Trans};
use deepchess::tensor::matrix::{gemm_fused_with, gemm_reference, gemm_with};
use deepchess::tensor::{with_precision, Init, Kernel, Matrix, Precision, Rng};
use proptest::prelude::*;

const TRANS: [(Trans, Trans); 4] = [(Trans::N, Trans::N), (Trans::N, Trans::T), (Trans::T, Trans::N), (Trans::T, Trans::T)];

fn operands(ta: Trans, tb: Trans, m: usize, k: usize, n: usize, seed: u64) -> (Matrix, Matrix, Matrix) {
    let mut rng = Rng::new(seed);
    let a = if ta == Trans::N { Init::XavierUniform.matrix(m, k, &mut rng) } else { Init::XavierUniform.matrix(k, m, &mut rng) };
    let b = if tb == Trans::N { Init::XavierUniform.matrix(k, n, &mut rng) } else { Init::XavierUniform.matrix(n, k, &mut rng) };
    (a, b, Init::XavierUniform.matrix(m, n, &mut rng))
}

fn rounded(m: &Matrix) -> Matrix {
    Matrix::from_vec(m.rows(), m.cols(), m.data().iter().map(|&x| round_bf16(x)).collect()).unwrap()
}

/// As the f32 kernels' tests: rounding of the sums grows with the number of terms.
fn tol(k: usize) -> f32 {
    1e-5 * (k as f32 + 1.0).sqrt() * 4.0
}

#[allow(clippy::too_many_arguments)]
fn check(ta: Trans, tb: Trans, m: usize, k: usize, n: usize, alpha: f32, beta: f32, seed: u64) {
    let (a, b, c0) = operands(ta, tb, m, k, n, seed);
    let mut want = c0.clone();
    gemm_reference(ta, tb, alpha, &rounded(&a), &rounded(&b), beta, &mut want);
    for kern in Kernel::available_kernels() {
        let mut by_threads = Vec::new();
        for threads in [1, 2] {
            let mut c = c0.clone();
            with_precision(Precision::Bf16, || gemm_with(kern, threads, ta, tb, alpha, &a, &b, beta, &mut c)).unwrap();
            let d = c.max_abs_diff(&want);
            assert!(d <= tol(k), "{kern:?} {threads}t {ta:?}{tb:?} {m}×{k}×{n}: diff {d}");
            by_threads.push(c);
        }
        assert_eq!(by_threads[0], by_threads[1], "{kern:?}: the thread count changed the bits");
    }
}

#[test]
fn odd_shapes_every_transposition() {
    for (i, &(ta, tb)) in TRANS.iter().enumerate() {
        for &m in &[1usize, 5, 13, 37] {
            for &n in &[1usize, 9, 17, 50] {
                for &k in &[1usize, 2, 7, 33, 300] {
                    check(ta, tb, m, k, n, 1.0, 0.0, (i * 1000 + m * 7 + n * 3 + k) as u64);
                }
            }
        }
    }
}

/// The network's shapes and ones crossing the packed blocks (k past 256, rows past mc).
#[test]
fn training_shapes_and_block_boundaries() {
    check(Trans::N, Trans::N, 256, 600, 400, 1.0, 0.0, 1);
    check(Trans::T, Trans::N, 600, 256, 400, 1.0, 1.0, 2);
    check(Trans::N, Trans::T, 256, 400, 600, 1.0, 0.0, 3);
    check(Trans::T, Trans::T, 149, 517, 203, -0.5, 0.25, 4);
}

/// The setting reaches every kernel and transposition: `1 + 2⁻¹⁰` is not a bf16 (it rounds
/// to 1), so 300 products of it with 1 sum to 300 in bf16 and to 300.29 in f32; and the
/// setting is f32 again after the call.
#[test]
fn the_switch_changes_the_products() {
    let (k, x) = (300, 1.0 + 1.0 / 1024.0);
    for kern in Kernel::available_kernels() {
        for &(ta, tb) in &TRANS {
            let a = if ta == Trans::N { Matrix::filled(3, k, x) } else { Matrix::filled(k, 3, x) };
            let b = if tb == Trans::N { Matrix::filled(k, 5, 1.0) } else { Matrix::filled(5, k, 1.0) };
            let run = |precision: Precision| {
                let mut c = Matrix::zeros(3, 5);
                with_precision(precision, || gemm_with(kern, 1, ta, tb, 1.0, &a, &b, 0.0, &mut c)).unwrap();
                c
            };
            let bf16 = run(Precision::Bf16);
            assert!(bf16.data().iter().all(|&v| v == 300.0), "{kern:?} {ta:?}{tb:?}: {:?}", bf16.data());
            assert!(run(Precision::F32).data().iter().all(|&v| (v - 300.29297).abs() < 1e-3), "{kern:?} {ta:?}{tb:?}: f32 products changed");
        }
    }
}

/// Bias, ReLU and mask fused into the stores: as the f32 kernels do them on rounded operands.
fn check_fused(ta: Trans, tb: Trans, m: usize, k: usize, n: usize, seed: u64) {
    let (a, b, _) = operands(ta, tb, m, k, n, seed);
    let mut rng = Rng::new(seed ^ 0x55);
    let bias: Vec<f32> = Init::XavierUniform.matrix(1, n, &mut rng).data().to_vec();
    let mask = Init::XavierUniform.matrix(m, n, &mut rng);
    for kern in Kernel::available_kernels() {
        for (relu, with_mask) in [(true, false), (false, true), (true, true)] {
            let fuse = Fuse { bias: Some(&bias), relu, mask: with_mask.then_some(mask.data()) };
            let mut want = Matrix::zeros(m, n);
            gemm_fused_with(kern, 1, ta, tb, &rounded(&a), &rounded(&b), 0.0, &mut want, &fuse).unwrap();
            let mut got = Matrix::zeros(m, n);
            with_precision(Precision::Bf16, || gemm_fused_with(kern, 1, ta, tb, &a, &b, 0.0, &mut got, &fuse)).unwrap();
            let d = got.max_abs_diff(&want);
            assert!(d <= tol(k), "{kern:?} {ta:?}{tb:?} {m}×{k}×{n} relu {relu} mask {with_mask}: diff {d}");
        }
    }
}

#[test]
fn fused_epilogues() {
    for (i, &(ta, tb)) in TRANS.iter().enumerate() {
        check_fused(ta, tb, 29, 301, 45, i as u64);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn kernels_match_the_rounded_reference(m in 1usize..70, k in 1usize..300, n in 1usize..70, t in 0usize..4,
                                           alpha in -2.0f32..2.0, beta in prop::sample::select(vec![0.0f32, 1.0, -0.5]), seed in any::<u64>()) {
        let (ta, tb) = TRANS[t];
        check(ta, tb, m, k, n, alpha, beta, seed);
    }

    #[test]
    fn fused_match_on_odd_shapes(m in 1usize..40, k in 1usize..300, n in 1usize..40, t in 0usize..4, seed in any::<u64>()) {
        let (ta, tb) = TRANS[t];
        check_fused(ta, tb, m, k, n, seed);
    }
}

/// What `--precision bf16` reports it ran follows the machine: the portable kernel always
/// rounds the operands; the AVX-512 one names the tiles exactly where they are used.
#[test]
fn the_bf16_path_is_named_as_it_runs() {
    use deepchess::tensor::kernels::gemm::{amx_tiles, bf16_instructions, bf16_path};
    assert!(bf16_path(Kernel::Scalar).starts_with("operands rounded"));
    if Kernel::Avx512.available() {
        let p = bf16_path(Kernel::Avx512);
        assert_eq!(p.starts_with("AMX"), amx_tiles(), "{p}");
        assert_eq!(p.starts_with("AVX-512"), !amx_tiles() && bf16_instructions(), "{p}");
    }
}
