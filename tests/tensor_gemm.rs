//! Every GEMM kernel against the f64 reference (and so against each other) on random
//! shapes, including odd sizes and every transposition variant.

use deepchess::tensor::kernels::gemm::{gemm_slices, Fuse, Trans};
use deepchess::tensor::matrix::{gemm_fused_with, gemm_reference, gemm_with};
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

fn bits(m: &Matrix) -> Vec<u32> {
    m.data().iter().map(|x| x.to_bits()).collect()
}

/// `v` where `mask > 0`, zero elsewhere: a ReLU's backward, as the pass the fused mask replaces.
fn masked(mut v: Matrix, mask: &Matrix) -> Matrix {
    v.data_mut().iter_mut().zip(mask.data()).for_each(|(x, &y)| *x = if y > 0.0 { *x } else { 0.0 });
    v
}

/// A layer's bias and ReLU, and a ReLU's backward, done in the product's stores give the bits
/// of the product followed by the passes they replace (the bias: C holding it, then β = 1),
/// for every kernel and thread count, on `m × k × n`.
fn check_fused(ta: Trans, tb: Trans, m: usize, k: usize, n: usize, seed: u64) {
    let (a, b, c0) = operands(ta, tb, m, k, n, seed);
    let mut rng = Rng::new(seed ^ 0x5eed);
    let bias = Init::XavierUniform.matrix(1, n, &mut rng);
    // About half the mask's values are positive; a ReLU output also holds exact zeros.
    let mut mask = Init::XavierUniform.matrix(m, n, &mut rng);
    mask.data_mut().iter_mut().step_by(7).for_each(|x| *x = 0.0);
    for kern in Kernel::available_kernels() {
        for threads in [1, 2] {
            let at = format!("{kern:?} {threads}t {ta:?}{tb:?} {m}×{k}×{n}");
            for relu in [false, true] {
                let mut want = Matrix::zeros(m, n);
                (0..m).for_each(|r| want.row_mut(r).copy_from_slice(bias.data()));
                gemm_with(kern, threads, ta, tb, 1.0, &a, &b, 1.0, &mut want).unwrap();
                if relu {
                    deepchess::tensor::layers::relu_inplace(&mut want);
                }
                // C's old values must not be read: NaN there would show.
                let mut got = Matrix::filled(m, n, f32::NAN);
                let fuse = Fuse { bias: Some(bias.data()), relu, mask: None };
                gemm_fused_with(kern, threads, ta, tb, &a, &b, 0.0, &mut got, &fuse).unwrap();
                assert_eq!(bits(&got), bits(&want), "bias, relu {relu}: {at}");
            }
            for beta in [0.0, 1.0] {
                let mut want = c0.clone();
                gemm_with(kern, threads, ta, tb, 1.0, &a, &b, beta, &mut want).unwrap();
                let want = masked(want, &mask);
                let mut got = c0.clone();
                let fuse = Fuse { mask: Some(mask.data()), ..Fuse::default() };
                gemm_fused_with(kern, threads, ta, tb, &a, &b, beta, &mut got, &fuse).unwrap();
                assert_eq!(bits(&got), bits(&want), "mask, beta {beta}: {at}");
            }
        }
    }
}

#[test]
fn fused_epilogues_equal_the_passes_they_replace() {
    // Edge tiles in both directions, several k blocks (the bias where the sums start, the
    // ReLU and mask where they end), large enough to be split over two threads both ways,
    // a single row and column, and nothing to sum.
    for &(m, k, n) in &[(1, 1, 1), (7, 5, 3), (13, 300, 37), (256, 600, 40), (300, 300, 140), (20, 513, 600), (4, 0, 9)] {
        for (t, &(ta, tb)) in TRANS.iter().enumerate() {
            check_fused(ta, tb, m, k, n, (m * 31 + k * 7 + n + t) as u64);
        }
    }
}

/// A tile at the matrix's edge (any rows and columns short of a full tile, stored through a
/// copy or by an edge kernel of its exact shape) gets the bits an interior tile would: the
/// top-left `m × n` of a product is the `m × n` product of its rows and columns.
#[test]
fn edge_tiles_give_the_bits_of_interior_ones() {
    let (k, big_m, big_n) = (300, 25, 49);
    let (a, b, c0) = operands(Trans::N, Trans::N, big_m, k, big_n, 77);
    let mut rng = Rng::new(78);
    let bias = Init::XavierUniform.matrix(1, big_n, &mut rng);
    let sub = |x: &Matrix, r: usize, c: usize| {
        let mut out = Matrix::zeros(r, c);
        (0..r).for_each(|i| out.row_mut(i).copy_from_slice(&x.row(i)[..c]));
        out
    };
    for kern in Kernel::available_kernels() {
        for beta in [0.0, 1.0] {
            let mut whole = c0.clone();
            gemm_with(kern, 1, Trans::N, Trans::N, 1.0, &a, &b, beta, &mut whole).unwrap();
            let mut whole_fused = Matrix::zeros(big_m, big_n);
            let fuse = Fuse { bias: Some(bias.data()), relu: true, mask: None };
            gemm_fused_with(kern, 1, Trans::N, Trans::N, &a, &b, 0.0, &mut whole_fused, &fuse).unwrap();
            for m in 1..=big_m {
                for n in 1..=big_n {
                    let at = format!("{kern:?} beta {beta} {m}×{k}×{n}");
                    let (sa, sb) = (sub(&a, m, k), sub(&b, k, n));
                    let mut c = sub(&c0, m, n);
                    gemm_with(kern, 1, Trans::N, Trans::N, 1.0, &sa, &sb, beta, &mut c).unwrap();
                    assert_eq!(bits(&c), bits(&sub(&whole, m, n)), "{at}");
                    let mut f = Matrix::filled(m, n, f32::NAN);
                    let fuse = Fuse { bias: Some(&bias.data()[..n]), relu: true, mask: None };
                    gemm_fused_with(kern, 1, Trans::N, Trans::N, &sa, &sb, 0.0, &mut f, &fuse).unwrap();
                    assert_eq!(bits(&f), bits(&sub(&whole_fused, m, n)), "fused: {at}");
                }
            }
        }
    }
}

/// A product of at most 32 columns reads A where it is stored instead of packing it; each of
/// its elements gets the bits it gets inside a wider (packed) product: for both layouts of A,
/// k within and across blocks, rows short of a tile, C added to or overwritten, the fused
/// bias, ReLU and mask, one thread and two (the last shape is split between them).
#[test]
fn products_that_read_a_as_stored_give_the_bits_of_packed_ones() {
    let first = |x: &Matrix, n: usize| {
        let mut out = Matrix::zeros(x.rows(), n);
        (0..x.rows()).for_each(|i| out.row_mut(i).copy_from_slice(&x.row(i)[..n]));
        out
    };
    let wide = 72;
    for &(m, k) in &[(1, 5), (11, 256), (12, 257), (37, 700), (1200, 700)] {
        for ta in [Trans::N, Trans::T] {
            let (a, b, c0) = operands(ta, Trans::T, m, k, wide, (m * 7 + k) as u64);
            let mut rng = Rng::new(m as u64);
            let bias = Init::XavierUniform.matrix(1, wide, &mut rng);
            let mask = Init::XavierUniform.matrix(m, wide, &mut rng);
            for kern in Kernel::available_kernels() {
                for threads in [1, 2] {
                    let mut whole = c0.clone();
                    gemm_with(kern, threads, ta, Trans::T, 0.7, &a, &b, 1.0, &mut whole).unwrap();
                    let mut whole_fused = Matrix::zeros(m, wide);
                    let fuse = Fuse { bias: Some(bias.data()), relu: true, mask: None };
                    gemm_fused_with(kern, threads, ta, Trans::T, &a, &b, 0.0, &mut whole_fused, &fuse).unwrap();
                    let mut whole_masked = c0.clone();
                    let fuse = Fuse { mask: Some(mask.data()), ..Fuse::default() };
                    gemm_fused_with(kern, threads, ta, Trans::T, &a, &b, 1.0, &mut whole_masked, &fuse).unwrap();
                    for n in [8, 16, 32] {
                        let at = format!("{kern:?} {threads}t A {ta:?} {m}×{k}×{n}");
                        // B transposed: its first n rows are the first n columns of op(B).
                        let mut bn = Matrix::zeros(n, k);
                        (0..n).for_each(|j| bn.row_mut(j).copy_from_slice(b.row(j)));
                        let mut c = first(&c0, n);
                        gemm_with(kern, threads, ta, Trans::T, 0.7, &a, &bn, 1.0, &mut c).unwrap();
                        assert_eq!(bits(&c), bits(&first(&whole, n)), "{at}");
                        let mut f = Matrix::filled(m, n, f32::NAN);
                        let fuse = Fuse { bias: Some(&bias.data()[..n]), relu: true, mask: None };
                        gemm_fused_with(kern, threads, ta, Trans::T, &a, &bn, 0.0, &mut f, &fuse).unwrap();
                        assert_eq!(bits(&f), bits(&first(&whole_fused, n)), "bias and ReLU: {at}");
                        let (mut g, mn) = (first(&c0, n), first(&mask, n));
                        let fuse = Fuse { mask: Some(mn.data()), ..Fuse::default() };
                        gemm_fused_with(kern, threads, ta, Trans::T, &a, &bn, 1.0, &mut g, &fuse).unwrap();
                        assert_eq!(bits(&g), bits(&first(&whole_masked, n)), "mask: {at}");
                    }
                }
            }
        }
    }
}

#[test]
fn fused_products_refuse_what_they_cannot_do() {
    let (a, b, _) = operands(Trans::N, Trans::N, 3, 4, 2, 1);
    let mut c = Matrix::zeros(3, 2);
    let k = Kernel::Scalar;
    let run = |c: &mut Matrix, beta: f32, fuse: Fuse| gemm_fused_with(k, 1, Trans::N, Trans::N, &a, &b, beta, c, &fuse).unwrap_err().to_string();
    let short = [0.0f32; 1];
    assert!(run(&mut c, 0.0, Fuse { bias: Some(&short), ..Fuse::default() }).contains("bias of 1"));
    assert!(run(&mut c, 0.0, Fuse { mask: Some(&short), ..Fuse::default() }).contains("mask of 1"));
    let two = [0.0f32; 2];
    assert!(run(&mut c, 1.0, Fuse { bias: Some(&two), ..Fuse::default() }).contains("β must be 0"));
    let mut wrong = Matrix::zeros(2, 2);
    assert!(run(&mut wrong, 0.0, Fuse::default()).contains("into C 2×2"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn kernels_match_reference(m in 1usize..70, k in 1usize..300, n in 1usize..70, t in 0usize..4,
                               alpha in -2.0f32..2.0, beta in prop::sample::select(vec![0.0f32, 1.0, -0.5]), seed in any::<u64>()) {
        let (ta, tb) = TRANS[t];
        check_all(ta, tb, m, k, n, alpha, beta, seed);
    }

    #[test]
    fn fused_epilogues_match_on_odd_shapes(m in 1usize..40, k in 0usize..300, n in 1usize..40, t in 0usize..4, seed in any::<u64>()) {
        let (ta, tb) = TRANS[t];
        check_fused(ta, tb, m, k, n, seed);
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
