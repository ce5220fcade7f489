//! The sparse binary input layer equals the dense affine layer on the same 0/1 input,
//! forward and backward, for every kernel flavour and thread count.

use deepchess::tensor::{gemm_with, Trans};
use deepchess::tensor::Kernel;
use deepchess::tensor::layers::add_col_sums;
use deepchess::tensor::layers::sparse::{backward_with, forward_with};
use deepchess::tensor::{Init, Matrix, Rng, SparseBatch};
use proptest::prelude::*;

fn random_batch(rows: usize, features: usize, active: usize, rng: &mut Rng) -> SparseBatch {
    let mut b = SparseBatch::new(features);
    for _ in 0..rows {
        let mut idx: Vec<u32> = Vec::new();
        while idx.len() < active.min(features) {
            let i = rng.below(features as u64) as u32;
            if !idx.contains(&i) {
                idx.push(i);
            }
        }
        b.push_row(&idx).unwrap();
    }
    b
}

fn check(rows: usize, features: usize, out: usize, active: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let x = random_batch(rows, features, active, &mut rng);
    let dense = x.to_dense();
    let w = Init::HeNormal.matrix(features, out, &mut rng);
    let b = Init::XavierUniform.matrix(1, out, &mut rng);
    let dy = Init::XavierUniform.matrix(rows, out, &mut rng);
    // Dense reference.
    let mut want_y = Matrix::zeros(rows, out);
    for r in 0..rows {
        want_y.row_mut(r).copy_from_slice(b.data());
    }
    gemm_with(Kernel::Scalar, 1, Trans::N, Trans::N, 1.0, &dense, &w, 1.0, &mut want_y).unwrap();
    let dw0 = Init::XavierUniform.matrix(features, out, &mut rng);
    let mut want_dw = dw0.clone();
    gemm_with(Kernel::Scalar, 1, Trans::T, Trans::N, 1.0, &dense, &dy, 1.0, &mut want_dw).unwrap();
    let mut want_db = Matrix::zeros(1, out);
    add_col_sums(&dy, &mut want_db);
    for k in Kernel::available_kernels() {
        for t in [1, 2] {
            let mut y = Matrix::default();
            forward_with(k, t, &x, &w, &b, &mut y).unwrap();
            assert!(y.max_abs_diff(&want_y) < 1e-4, "{k:?} {t}t forward");
            let mut dw = dw0.clone();
            let mut db = Matrix::zeros(1, out);
            backward_with(k, t, &x, &dy, &mut dw, &mut db).unwrap();
            assert!(dw.max_abs_diff(&want_dw) < 1e-4, "{k:?} {t}t dW");
            assert!(db.max_abs_diff(&want_db) < 1e-4, "{k:?} {t}t db");
        }
    }
}

#[test]
fn chess_sized_layer() {
    // 773 inputs, ~32 set bits, enough work to take the multi-threaded path.
    check(256, 773, 600, 32, 1);
    check(7, 773, 100, 32, 2);
}

#[test]
fn out_of_range_index_is_an_error() {
    let mut b = SparseBatch::new(773);
    let e = b.push_row(&[3, 773]).unwrap_err().to_string();
    assert!(e.contains("773"), "{e}");
    let w = Matrix::zeros(700, 4);
    let bias = Matrix::zeros(1, 4);
    let mut y = Matrix::default();
    assert!(forward_with(Kernel::Scalar, 1, &SparseBatch::new(773), &w, &bias, &mut y).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn sparse_equals_dense(rows in 1usize..20, features in 1usize..100, out in 1usize..40, active in 0usize..12, seed in any::<u64>()) {
        check(rows, features, out, active, seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// The search's incremental first-layer update, `dst = src + Σ added rows − Σ removed
    /// rows`, against the plain loop, bit for bit (same summation order), for every flavour
    /// this CPU has, on odd widths (whole register blocks and tails) and row lists.
    #[test]
    fn incremental_update_matches_the_plain_loop(width in 1usize..300, inputs in 1usize..60, n_add in 0usize..6, n_rem in 0usize..6, seed in any::<u64>()) {
        use deepchess::tensor::kernels::vecops::update_with;
        let mut rng = Rng::new(seed);
        let w: Vec<f32> = (0..inputs * width).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let src: Vec<f32> = (0..width).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let added: Vec<usize> = (0..n_add).map(|_| rng.below(inputs as u64) as usize).collect();
        let removed: Vec<usize> = (0..n_rem).map(|_| rng.below(inputs as u64) as usize).collect();
        let mut want = src.clone();
        for &r in &added {
            want.iter_mut().zip(&w[r * width..(r + 1) * width]).for_each(|(a, x)| *a += x);
        }
        for &r in &removed {
            want.iter_mut().zip(&w[r * width..(r + 1) * width]).for_each(|(a, x)| *a -= x);
        }
        for k in Kernel::available_kernels() {
            let mut got = vec![f32::NAN; width];
            update_with(k, &mut got, &src, &w, width, &added, &removed);
            prop_assert_eq!(&got, &want, "{:?}", k);
        }
    }
}

/// The dense targets a training step rebuilds in its own buffer every step are the batch's
/// 0/1 rows whatever the buffer held before (its shape, NaN).
#[test]
fn dense_targets_rebuilt_in_place_are_the_batch() {
    let mut rng = Rng::new(31);
    let mut buf = Matrix::filled(7, 3, f32::NAN);
    for (rows, features) in [(5, 11), (9, 773), (1, 2)] {
        let x = random_batch(rows, features, 4, &mut rng);
        x.to_dense_into(&mut buf);
        assert_eq!(buf.shape(), (rows, features));
        for r in 0..rows {
            for f in 0..features {
                let set = x.row(r).contains(&(f as u32));
                assert_eq!(buf.get(r, f), if set { 1.0 } else { 0.0 }, "row {r}, feature {f}");
            }
        }
    }
}
