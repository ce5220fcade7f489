//! Convolution and max pooling: im2col + GEMM against the six-loop definition for every
//! kernel flavour and thread count, determinism per thread count, pooling's ceil mode and
//! ties on hand examples, and bad shapes as errors.

use deepchess::tensor::layers::conv::{self, backward_reference, forward_reference};
use deepchess::tensor::layers::pool;
use deepchess::tensor::{Conv2d, Kernel, Matrix, MaxPool2d, Params, Rng, Tape};
use proptest::prelude::*;

fn rand(r: usize, c: usize, rng: &mut Rng) -> Matrix {
    let mut m = Matrix::zeros(r, c);
    m.data_mut().iter_mut().for_each(|x| *x = rng.uniform(-1.0, 1.0));
    m
}

/// `|a - b| ≤ tol · (1 + |b|)` elementwise (float sums of up to a few thousand terms).
fn close(a: &Matrix, b: &Matrix, tol: f32, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}: shapes");
    for (i, (x, y)) in a.data().iter().zip(b.data()).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}: element {i}: {x} vs {y}");
    }
}

fn bits(m: &Matrix) -> Vec<u32> {
    m.data().iter().map(|v| v.to_bits()).collect()
}

/// Forward and backward (with and without dX) of `s` at `batch` with kernel `k` and `t`
/// threads: `(y, dw, db, dx)`, the gradients added onto fixed non-zero starting values.
fn run(k: Kernel, t: usize, s: &Conv2d, batch: usize, seed: u64) -> (Matrix, Matrix, Matrix, Matrix) {
    let mut rng = Rng::new(seed);
    let (wr, wc) = s.weight_shape();
    let (x, w, b, dy) = (rand(batch, s.in_len(), &mut rng), rand(wr, wc, &mut rng), rand(1, wc, &mut rng), rand(batch, s.out_len(), &mut rng));
    let (mut dw, mut db, mut dx) = (rand(wr, wc, &mut rng), rand(1, wc, &mut rng), rand(batch, s.in_len(), &mut rng));
    let mut y = Matrix::default();
    conv::forward_with(k, t, s, &x, &w, &b, &mut y).unwrap();
    let (mut dw2, mut db2) = (dw.clone(), db.clone());
    conv::backward_with(k, t, s, &x, &w, &dy, &mut dw, &mut db, Some(&mut dx)).unwrap();
    // Without dX the weight and bias gradients are the same computation.
    conv::backward_with(k, t, s, &x, &w, &dy, &mut dw2, &mut db2, None).unwrap();
    assert_eq!(bits(&dw), bits(&dw2), "dW does not depend on whether dX is wanted");
    assert_eq!(bits(&db), bits(&db2));
    (y, dw, db, dx)
}

/// The definition's answer for [`run`]'s operands.
fn reference(s: &Conv2d, batch: usize, seed: u64) -> (Matrix, Matrix, Matrix, Matrix) {
    let mut rng = Rng::new(seed);
    let (wr, wc) = s.weight_shape();
    let (x, w, b, dy) = (rand(batch, s.in_len(), &mut rng), rand(wr, wc, &mut rng), rand(1, wc, &mut rng), rand(batch, s.out_len(), &mut rng));
    let (dw0, db0, dx0) = (rand(wr, wc, &mut rng), rand(1, wc, &mut rng), rand(batch, s.in_len(), &mut rng));
    let y = forward_reference(s, &x, &w, &b);
    let (gw, gb, gx) = backward_reference(s, &x, &w, &dy);
    let add = |a: &Matrix, b: &Matrix| Matrix::from_vec(a.rows(), a.cols(), a.data().iter().zip(b.data()).map(|(p, q)| p + q).collect()).unwrap();
    (y, add(&dw0, &gw), add(&db0, &gb), add(&dx0, &gx))
}

fn compare(s: &Conv2d, batch: usize, seed: u64, threads: &[usize]) {
    let want = reference(s, batch, seed);
    for k in Kernel::available_kernels() {
        for &t in threads {
            let got = run(k, t, s, batch, seed);
            let what = format!("{s:?} batch {batch} {k:?} {t} thread(s)");
            close(&got.0, &want.0, 2e-5 * (s.weight_shape().0 as f32).sqrt(), &format!("{what}: y"));
            close(&got.1, &want.1, 1e-5 * ((batch * s.out_h() * s.out_w()) as f32).sqrt(), &format!("{what}: dW"));
            close(&got.2, &want.2, 1e-5 * ((batch * s.out_h() * s.out_w()) as f32).sqrt(), &format!("{what}: db"));
            close(&got.3, &want.3, 2e-5 * (s.out_c as f32).sqrt() * 2.0, &format!("{what}: dX"));
            // The same thread count gives the same bits.
            let again = run(k, t, s, batch, seed);
            assert_eq!((bits(&got.0), bits(&got.1), bits(&got.2), bits(&got.3)), (bits(&again.0), bits(&again.1), bits(&again.2), bits(&again.3)), "{what}: not deterministic");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Odd shapes, strides, padding, 1×1 and whole-input kernels (the im2col-free paths).
    #[test]
    fn conv_matches_the_definition(batch in 1usize..4, in_h in 1usize..8, in_w in 1usize..8, in_c in 1usize..6, out_c in 1usize..21,
                                   kh in 1usize..5, kw in 1usize..5, stride in 1usize..4, pad in 0usize..3, mode in 0u8..4, seed in any::<u64>()) {
        let mut s = Conv2d { in_h, in_w, in_c, out_c, kh: kh.min(in_h + 2 * pad), kw: kw.min(in_w + 2 * pad), stride, pad };
        match mode {
            2 => (s.kh, s.kw, s.pad) = (in_h, in_w, 0),
            3 => (s.kh, s.kw, s.stride, s.pad) = (1, 1, 1, 0),
            _ => {}
        }
        compare(&s, batch, seed, &[1, 2, 3]);
    }
}

/// The seed's layers and a large single image: enough work for the threaded paths (split
/// over the batch; or, with fewer samples than threads, inside the GEMMs).
#[test]
fn threaded_paths_match_the_definition_and_are_deterministic() {
    let conv1 = Conv2d { in_h: 8, in_w: 8, in_c: 7, out_c: 400, kh: 4, kw: 4, stride: 1, pad: 0 };
    let conv2 = Conv2d { in_h: 3, in_w: 3, in_c: 400, out_c: 200, kh: 2, kw: 2, stride: 1, pad: 0 };
    let big = Conv2d { in_h: 20, in_w: 19, in_c: 64, out_c: 64, kh: 3, kw: 3, stride: 1, pad: 1 };
    let pointwise = Conv2d { in_h: 9, in_w: 7, in_c: 100, out_c: 120, kh: 1, kw: 1, stride: 1, pad: 0 };
    let best = Kernel::best();
    for (s, batch) in [(conv1, 23), (conv2, 37), (big, 1), (big, 2), (pointwise, 17)] {
        assert!(s.flops() * batch as f64 > 24e6, "{s:?} at {batch} must take the threaded path");
        let want = reference(&s, batch, 5);
        let one = run(best, 1, &s, batch, 5);
        for t in [1, 2, 3] {
            let got = run(best, t, &s, batch, 5);
            let what = format!("{s:?} batch {batch} {t} threads");
            close(&got.0, &want.0, 1e-4, &format!("{what}: y"));
            close(&got.1, &want.1, 1e-4, &format!("{what}: dW"));
            close(&got.2, &want.2, 1e-4, &format!("{what}: db"));
            close(&got.3, &want.3, 1e-4, &format!("{what}: dX"));
            // Across thread counts: equal within float tolerance (only dW's summation order differs).
            close(&got.1, &one.1, 1e-4, &format!("{what}: dW vs 1 thread"));
            assert_eq!(bits(&got.0), bits(&one.0), "{what}: y does not depend on the thread count");
        }
    }
}

#[test]
fn batch_one_gives_the_batch_rows_bit_for_bit() {
    // The search's call: one position at a time into the same output matrix (the few-row
    // product that reads W unpacked), equal to the same row of a batch call (the packed
    // GEMM), for every flavour; 203 and 405 outputs leave tail columns, 1600 patch values
    // span several k blocks.
    let shapes = [
        Conv2d { in_h: 8, in_w: 8, in_c: 7, out_c: 405, kh: 4, kw: 4, stride: 1, pad: 0 },
        Conv2d { in_h: 3, in_w: 3, in_c: 400, out_c: 203, kh: 2, kw: 2, stride: 1, pad: 0 },
    ];
    for s in shapes {
        let mut rng = Rng::new(9);
        let (wr, wc) = s.weight_shape();
        let (x, w, b) = (rand(9, s.in_len(), &mut rng), rand(wr, wc, &mut rng), rand(1, wc, &mut rng));
        for k in Kernel::available_kernels() {
            let mut all = Matrix::default();
            conv::forward_with(k, 1, &s, &x, &w, &b, &mut all).unwrap();
            let mut y = Matrix::default();
            for r in 0..x.rows() {
                let one = Matrix::from_vec(1, s.in_len(), x.row(r).to_vec()).unwrap();
                conv::forward_with(k, 1, &s, &one, &w, &b, &mut y).unwrap();
                assert_eq!(y.shape(), (1, s.out_len()));
                let same = y.row(0).iter().zip(all.row(r)).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{s:?} {k:?} row {r}");
            }
        }
    }
}

#[test]
fn pool_ceil_mode_on_a_hand_example() {
    // One channel, 5×5 values 0..25 row by row, except two planted maxima and a tie.
    let mut v: Vec<f32> = (0..25).map(|i| i as f32).collect();
    v[0] = 100.0; // window (0,0) = {100, 1, 5, 6}
    v[7] = 50.0; // (1,2), in window (0,1) = {2, 3, 50, 50}
    v[8] = 50.0; // (1,3): a tie with index 7; the first in scan order wins
    let x = Matrix::from_vec(1, 25, v).unwrap();
    let s = MaxPool2d { in_h: 5, in_w: 5, c: 1, k: 2, stride: 2, ceil: true };
    assert_eq!((s.out_h(), s.out_w(), s.out_len()), (3, 3, 9));
    let (mut y, mut arg) = (Matrix::default(), Vec::new());
    pool::forward_argmax(&s, &x, &mut y, &mut arg).unwrap();
    // Windows: rows {0,1},{2,3},{4}; columns likewise. The edge windows see only the edge.
    assert_eq!(y.data(), &[100.0, 50.0, 9.0, 16.0, 18.0, 19.0, 21.0, 23.0, 24.0]);
    assert_eq!(arg, vec![0, 7, 9, 16, 18, 19, 21, 23, 24]);
    let mut plain = Matrix::default();
    pool::forward(&s, &x, &mut plain).unwrap();
    assert_eq!(plain, y);
    // Backward routes each gradient to its argmax (accumulating).
    let dy = Matrix::from_vec(1, 9, (1..=9).map(|i| i as f32).collect()).unwrap();
    let mut dx = Matrix::filled(1, 25, 0.5);
    pool::backward(&s, &arg, &dy, &mut dx).unwrap();
    for (i, &g) in dx.data().iter().enumerate() {
        let want = 0.5 + arg.iter().position(|&a| a as usize == i).map_or(0.0, |o| (o + 1) as f32);
        assert_eq!(g, want, "dx[{i}]");
    }
    // Floor mode drops the partial windows: 2×2.
    let f = MaxPool2d { ceil: false, ..s };
    pool::forward(&f, &x, &mut y).unwrap();
    assert_eq!(y.data(), &[100.0, 50.0, 16.0, 18.0]);
    // Negative values and padding: an edge window of negatives returns its max, never 0.
    let neg = Matrix::from_vec(1, 25, (0..25).map(|i| -1.0 - i as f32).collect()).unwrap();
    pool::forward(&s, &neg, &mut y).unwrap();
    assert_eq!(y.get(0, 8), -25.0);
    assert_eq!(y.get(0, 2), -5.0);
}

#[test]
fn pool_channels_are_independent_and_shapes_follow_pytorch() {
    let s = MaxPool2d { in_h: 4, in_w: 3, c: 2, k: 2, stride: 2, ceil: true };
    assert_eq!((s.out_h(), s.out_w()), (2, 2));
    // Ceil mode never starts a window past the input (k < stride).
    let t = MaxPool2d { in_h: 5, in_w: 5, c: 1, k: 1, stride: 3, ceil: true };
    assert_eq!((t.out_h(), t.out_w()), (2, 2));
    let u = MaxPool2d { in_h: 6, in_w: 7, c: 1, k: 3, stride: 2, ceil: true };
    assert_eq!((u.out_h(), u.out_w()), (3, 3));
    let u = MaxPool2d { ceil: false, ..u };
    assert_eq!((u.out_h(), u.out_w()), (2, 3));
    // Channel 0 increases, channel 1 decreases along the row-major order.
    let x = Matrix::from_vec(1, 24, (0..12).flat_map(|i| [i as f32, -(i as f32)]).collect()).unwrap();
    let mut y = Matrix::default();
    pool::forward(&s, &x, &mut y).unwrap();
    assert_eq!(y.data(), &[4.0, 0.0, 5.0, -2.0, 10.0, -6.0, 11.0, -8.0]);
}

#[test]
fn bad_shapes_are_errors_not_panics() {
    let s = Conv2d { in_h: 4, in_w: 4, in_c: 2, out_c: 3, kh: 3, kw: 3, stride: 1, pad: 0 };
    assert!(s.check().is_ok());
    for bad in [
        Conv2d { in_c: 0, ..s },
        Conv2d { out_c: 0, ..s },
        Conv2d { stride: 0, ..s },
        Conv2d { kh: 0, ..s },
        Conv2d { kh: 5, ..s },
        Conv2d { kw: 7, pad: 1, ..s },
        Conv2d { in_h: usize::MAX / 2, in_w: usize::MAX / 2, ..s },
    ] {
        assert!(bad.check().is_err(), "{bad:?}");
        let mut y = Matrix::default();
        let r = conv::forward(&bad, &Matrix::zeros(1, 32), &Matrix::zeros(18, 3), &Matrix::zeros(1, 3), &mut y);
        assert!(r.is_err(), "{bad:?}");
    }
    let (x, w, b) = (Matrix::zeros(2, 32), Matrix::zeros(18, 3), Matrix::zeros(1, 3));
    let mut y = Matrix::default();
    assert!(conv::forward(&s, &Matrix::zeros(2, 31), &w, &b, &mut y).is_err());
    assert!(conv::forward(&s, &x, &Matrix::zeros(3, 18), &b, &mut y).is_err());
    assert!(conv::forward(&s, &x, &w, &Matrix::zeros(3, 1), &mut y).is_err());
    conv::forward(&s, &x, &w, &b, &mut y).unwrap();
    let (mut dw, mut db, mut dx) = (Matrix::zeros(18, 3), Matrix::zeros(1, 3), Matrix::zeros(2, 32));
    assert!(conv::backward(&s, &x, &w, &Matrix::zeros(2, 11), &mut dw, &mut db, None).is_err());
    assert!(conv::backward(&s, &x, &w, &y, &mut Matrix::zeros(3, 18), &mut db, None).is_err());
    assert!(conv::backward(&s, &x, &w, &y, &mut dw, &mut Matrix::zeros(1, 2), None).is_err());
    assert!(conv::backward(&s, &x, &w, &y, &mut dw, &mut db, Some(&mut Matrix::zeros(2, 33))).is_err());
    conv::backward(&s, &x, &w, &y, &mut dw, &mut db, Some(&mut dx)).unwrap();

    let p = MaxPool2d { in_h: 5, in_w: 5, c: 2, k: 2, stride: 2, ceil: true };
    for bad in [MaxPool2d { k: 0, ..p }, MaxPool2d { stride: 0, ..p }, MaxPool2d { c: 0, ..p }, MaxPool2d { k: 6, ..p }, MaxPool2d { in_w: 1, ..p }] {
        assert!(bad.check().is_err(), "{bad:?}");
        assert!(pool::forward(&bad, &Matrix::zeros(1, 50), &mut y).is_err(), "{bad:?}");
    }
    assert!(pool::forward(&p, &Matrix::zeros(1, 49), &mut y).is_err());
    let (mut py, mut arg) = (Matrix::default(), Vec::new());
    pool::forward_argmax(&p, &Matrix::zeros(2, 50), &mut py, &mut arg).unwrap();
    assert!(pool::backward(&p, &arg[1..], &py, &mut Matrix::zeros(2, 50)).is_err());
    assert!(pool::backward(&p, &arg, &py, &mut Matrix::zeros(2, 49)).is_err());
    let mut wild = arg.clone();
    wild[0] = 50;
    assert!(pool::backward(&p, &wild, &py, &mut Matrix::zeros(2, 50)).is_err());

    // The tape: an error, and no node pushed.
    let mut params = Params::new();
    let wid = params.add("w", Matrix::zeros(18, 3)).unwrap();
    let bid = params.add("b", Matrix::zeros(1, 3)).unwrap();
    let mut t = Tape::new();
    let v = t.input(&Matrix::zeros(2, 31));
    let good = t.input(&Matrix::zeros(2, 32));
    assert!(t.conv2d(&params, v, wid, bid, s).is_err());
    assert!(t.conv2d(&params, good, bid, wid, s).is_err(), "weights and bias swapped");
    assert!(t.max_pool2d(v, p).is_err());
    assert_eq!(t.len(), 2);
    assert!(t.conv2d(&params, good, wid, bid, s).is_ok());
}

/// The weight gradient of a convolution whose patch matrix is cut into chunks (seed 002's
/// last two layers at batch 256 and 200: 512-row chunks of 1,152 and 288 values, cut to 256
/// rows) gives the bits of one product over all its rows: the chunks end only where the
/// product stores and resumes its sums over k anyway; bf16 products, whose AMX tiles sum a
/// call's whole k, keep their 512-row chunks. Likewise the outputs, row by row.
#[test]
fn chunked_weight_gradient_keeps_the_bits_of_one_product() {
    use deepchess::tensor::{gemm_with, with_precision, Precision, Trans};
    let c = |hw: usize, i: usize, o: usize| Conv2d { in_h: hw, in_w: hw, in_c: i, out_c: o, kh: 3, kw: 3, stride: 1, pad: 0 };
    for (s, batch) in [(c(4, 128, 32), 256), (c(4, 128, 32), 200), (c(6, 32, 128), 256), (c(6, 32, 128), 45)] {
        let mut rng = Rng::new(batch as u64);
        let (wr, wc) = s.weight_shape();
        let (x, w, b, dy) = (rand(batch, s.in_len(), &mut rng), rand(wr, wc, &mut rng), rand(1, wc, &mut rng), rand(batch, s.out_len(), &mut rng));
        let dw0 = rand(wr, wc, &mut rng);
        // The patch matrix written out: row (n, oy, ox), column (ky, kx, c).
        let (oh, ow) = (s.out_h(), s.out_w());
        let mut p = Matrix::zeros(batch * oh * ow, wr);
        for n in 0..batch {
            for (oy, ox) in (0..oh).flat_map(|y| (0..ow).map(move |x| (y, x))) {
                for (ky, kx, ch) in (0..3).flat_map(|a| (0..3).flat_map(move |b| (0..s.in_c).map(move |ch| (a, b, ch)))) {
                    let v = x.get(n, ((oy + ky) * s.in_w + ox + kx) * s.in_c + ch);
                    p.set((n * oh + oy) * ow + ox, (ky * 3 + kx) * s.in_c + ch, v);
                }
            }
        }
        let dy_rows = Matrix::from_vec(batch * oh * ow, wc, dy.data().to_vec()).unwrap();
        // bf16 products (on AMX tiles where the CPU has them: each call's sum over all of
        // its k stored once) are left in chunks of 512 rows: the layer's dW is the products
        // of those chunks added in turn.
        let rows = |m: &Matrix, r: std::ops::Range<usize>| Matrix::from_vec(r.len(), m.cols(), m.data()[r.start * m.cols()..r.end * m.cols()].to_vec()).unwrap();
        for k in Kernel::available_kernels() {
            let step = (512 / (oh * ow)) * oh * ow;
            let mut want = dw0.clone();
            with_precision(Precision::Bf16, || {
                for r0 in (0..p.rows()).step_by(step) {
                    let r = r0..(r0 + step).min(p.rows());
                    gemm_with(k, 1, Trans::T, Trans::N, 1.0, &rows(&p, r.clone()), &rows(&dy_rows, r), 1.0, &mut want).unwrap();
                }
            });
            let (mut dw, mut db) = (dw0.clone(), Matrix::zeros(1, wc));
            with_precision(Precision::Bf16, || conv::backward_with(k, 1, &s, &x, &w, &dy, &mut dw, &mut db, None)).unwrap();
            let first = bits(&dw).iter().zip(bits(&want)).position(|(a, b)| *a != b);
            assert_eq!(first, None, "{} bf16 batch {batch}, {wr} × {wc}: dW differs first at this element", k.name());
        }
        for k in Kernel::available_kernels() {
            let mut want = dw0.clone();
            gemm_with(k, 1, Trans::T, Trans::N, 1.0, &p, &dy_rows, 1.0, &mut want).unwrap();
            let (mut dw, mut db) = (dw0.clone(), Matrix::zeros(1, wc));
            conv::backward_with(k, 1, &s, &x, &w, &dy, &mut dw, &mut db, None).unwrap();
            let first = bits(&dw).iter().zip(bits(&want)).position(|(a, b)| *a != b);
            assert_eq!(first, None, "{} batch {batch}, {wr} × {wc}: dW differs first at this element", k.name());
            let mut y = Matrix::default();
            conv::forward_with(k, 1, &s, &x, &w, &b, &mut y).unwrap();
            let mut y1 = Matrix::default();
            conv::forward_with(k, 1, &s, &Matrix::from_vec(1, s.in_len(), x.row(batch - 1).to_vec()).unwrap(), &w, &b, &mut y1).unwrap();
            assert_eq!(bits(&Matrix::from_vec(1, s.out_len(), y.row(batch - 1).to_vec()).unwrap()), bits(&y1), "{} batch {batch}: the last row alone", k.name());
        }
    }
}
