//! A small convolutional network learns a translation-invariant pattern that a dense
//! network with at least as many parameters does not; and the optimizer pieces seed 003's
//! recipe uses (Caffe's `inv` learning rate, its momentum form, no weight decay on biases).

use deepchess::tensor::{Adam, Conv2d, Init, LrPolicy, Matrix, MaxPool2d, Optimizer, Params, Rng, Sgd, Tape};

const SIDE: usize = 8;
/// A plus sign (the pattern to find) and an X (the decoy, same pixel count), as (row, col).
const PLUS: [(usize, usize); 5] = [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)];
const CROSS: [(usize, usize); 5] = [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)];

fn plant(img: &mut [f32], shape: &[(usize, usize)], rng: &mut Rng) {
    let (y0, x0) = (rng.below((SIDE - 2) as u64) as usize, rng.below((SIDE - 2) as u64) as usize);
    for &(y, x) in shape {
        img[(y0 + y) * SIDE + x0 + x] = 1.0;
    }
}

fn contains_plus(img: &[f32]) -> bool {
    (0..SIDE - 2).any(|y0| (0..SIDE - 2).any(|x0| PLUS.iter().all(|&(y, x)| img[(y0 + y) * SIDE + x0 + x] == 1.0)))
}

/// `n` binary 8×8 images, 10 % noise and an X somewhere; half also hold a plus somewhere
/// (label 1), the other half a second X and no plus anywhere (label 0). Both classes have
/// the same number of planted pixels, so only the shape tells them apart.
fn dataset(n: usize, rng: &mut Rng) -> (Matrix, Matrix) {
    let (mut x, mut t) = (Matrix::zeros(n, SIDE * SIDE), Matrix::zeros(n, 1));
    for i in 0..n {
        let positive = i % 2 == 0;
        loop {
            let img = x.row_mut(i);
            img.iter_mut().for_each(|v| *v = if rng.next_f32() < 0.1 { 1.0 } else { 0.0 });
            plant(img, &CROSS, rng);
            plant(img, if positive { &PLUS } else { &CROSS }, rng);
            if positive || !contains_plus(img) {
                break;
            }
        }
        t.set(i, 0, positive as u8 as f32);
    }
    (x, t)
}

fn accuracy(p: &Matrix, t: &Matrix) -> f64 {
    p.data().iter().zip(t.data()).filter(|(p, t)| (**p > 0.5) == (**t > 0.5)).count() as f64 / t.len() as f64
}

const CONV: Conv2d = Conv2d { in_h: SIDE, in_w: SIDE, in_c: 1, out_c: 6, kh: 3, kw: 3, stride: 1, pad: 0 };
/// One window over the whole 6×6 map: "anywhere" is a global max.
const POOL: MaxPool2d = MaxPool2d { in_h: 6, in_w: 6, c: 6, k: 6, stride: 6, ceil: false };

/// Trains full-batch with Adam for `steps` and returns the held-out accuracy.
/// `cnn`: conv 3×3×6 → ReLU → global max pool → dense 6→1 → sigmoid (67 parameters);
/// otherwise dense 64→2 → tanh → dense 2→1 → sigmoid (133 parameters).
fn train(cnn: bool, train_set: &(Matrix, Matrix), test_set: &(Matrix, Matrix), steps: usize) -> (f64, f64, usize) {
    let mut rng = Rng::new(11);
    let mut p = Params::new();
    let ids = if cnn {
        let w = p.add("conv.w", Init::HeNormal.matrix(9, 6, &mut rng)).unwrap();
        let b = p.add("conv.b", Matrix::zeros(1, 6)).unwrap();
        let v = p.add("out.w", Init::XavierUniform.matrix(6, 1, &mut rng)).unwrap();
        let c = p.add("out.b", Matrix::zeros(1, 1)).unwrap();
        [w, b, v, c]
    } else {
        let w = p.add("h.w", Init::XavierUniform.matrix(64, 2, &mut rng)).unwrap();
        let b = p.add("h.b", Matrix::zeros(1, 2)).unwrap();
        let v = p.add("out.w", Init::XavierUniform.matrix(2, 1, &mut rng)).unwrap();
        let c = p.add("out.b", Matrix::zeros(1, 1)).unwrap();
        [w, b, v, c]
    };
    let [w, b, v, c] = ids;
    let forward = |t: &mut Tape, p: &Params, x: &Matrix| {
        let xi = t.input(x);
        let h = if cnn {
            let a = t.conv2d(p, xi, w, b, CONV).unwrap();
            let a = t.relu(a).unwrap();
            t.max_pool2d(a, POOL).unwrap()
        } else {
            let a = t.affine(p, xi, w, b).unwrap();
            t.tanh(a).unwrap()
        };
        let z = t.affine(p, h, v, c).unwrap();
        t.sigmoid(z).unwrap()
    };
    let mut opt = Adam::new(0.05);
    let mut tape = Tape::new();
    for _ in 0..steps {
        tape.reset();
        let y = forward(&mut tape, &p, &train_set.0);
        let tg = tape.input(&train_set.1);
        let loss = tape.binary_cross_entropy(y, tg).unwrap();
        tape.backward(loss, &mut p).unwrap();
        opt.step(&mut p);
    }
    let mut acc = |set: &(Matrix, Matrix)| {
        tape.reset();
        let y = forward(&mut tape, &p, &set.0);
        accuracy(tape.value(y), &set.1)
    };
    (acc(train_set), acc(test_set), p.num_values())
}

#[test]
fn a_cnn_finds_a_shape_anywhere_where_a_dense_net_cannot() {
    let mut rng = Rng::new(2024);
    let train_set = dataset(160, &mut rng);
    let test_set = dataset(400, &mut rng);
    let (cnn_train, cnn_test, cnn_params) = train(true, &train_set, &test_set, 300);
    let (dense_train, dense_test, dense_params) = train(false, &train_set, &test_set, 300);
    eprintln!("CNN ({cnn_params} parameters): train {cnn_train:.3} held-out {cnn_test:.3}; dense ({dense_params}): train {dense_train:.3} held-out {dense_test:.3}");
    assert!(dense_params >= cnn_params);
    assert!(cnn_test >= 0.9, "CNN held-out accuracy {cnn_test}");
    assert!(cnn_test >= dense_test + 0.2, "CNN {cnn_test} vs dense {dense_test}");
}

#[test]
fn inv_learning_rate_policy() {
    let p = LrPolicy::Inv { base: 0.01, gamma: 1e-4, power: 0.75 };
    assert_eq!(p.at(0), 0.01);
    // (1 + 1e-4·10000)^-0.75 = 2^-0.75.
    assert!((p.at(10_000) - 0.01 * 2f32.powf(-0.75)).abs() < 1e-9, "{}", p.at(10_000));
    assert!((p.at(30_000) - 0.01 * 4f32.powf(-0.75)).abs() < 1e-9);
    assert!(p.at(1) < p.at(0) && p.at(1_000_000) < p.at(100_000));
    assert_eq!(LrPolicy::Fixed(0.3).at(123_456), 0.3);
}

/// One scalar parameter `w` and one `b`, gradients set by hand, two steps.
fn two_steps(opt: &mut Sgd, grads: [[f32; 2]; 2]) -> (f32, f32) {
    let mut p = Params::new();
    let w = p.add("w", Matrix::filled(1, 1, 1.0)).unwrap();
    let b = p.add("b", Matrix::filled(1, 1, -2.0)).unwrap();
    for g in grads {
        p.grad_mut(w).set(0, 0, g[0]);
        p.grad_mut(b).set(0, 0, g[1]);
        opt.step(&mut p);
    }
    (p.value(w).get(0, 0), p.value(b).get(0, 0))
}

#[test]
fn sgd_with_the_learning_rate_inside_the_velocity() {
    // Caffe: v ← μv − lr(g + λw); w ← w + v. μ = 0.9, lr = 0.1, λ = 0.01.
    // w: v1 = −0.1(0.5 + 0.01) = −0.051, w1 = 0.949; v2 = 0.9·−0.051 − 0.1(−1 + 0.00949) = 0.053151, w2 = 1.002151.
    // b: v1 = −0.1(0.25 − 0.02) = −0.023, b1 = −2.023; v2 = −0.0207 − 0.1(1 − 0.02023) = −0.118677, b2 = −2.141677.
    let mut opt = Sgd::new(0.1).with_momentum(0.9).with_weight_decay(0.01).with_lr_in_velocity(true);
    let (w, b) = two_steps(&mut opt, [[0.5, 0.25], [-1.0, 1.0]]);
    assert!((w - 1.002151).abs() < 1e-6, "{w}");
    assert!((b + 2.141677).abs() < 1e-6, "{b}");
    // The default form (v ← μv + g + λw; w ← w − lr·v) agrees at a constant rate.
    let mut plain = Sgd::new(0.1).with_momentum(0.9).with_weight_decay(0.01);
    let (pw, pb) = two_steps(&mut plain, [[0.5, 0.25], [-1.0, 1.0]]);
    assert!((pw - w).abs() < 1e-6 && (pb - b).abs() < 1e-6, "{pw} {pb}");
}

#[test]
fn decay_exemption_spares_the_listed_parameters() {
    // Plain SGD, zero gradients, λ = 0.5, lr = 0.1: w shrinks by 5 % a step, b not at all.
    let mut p = Params::new();
    let w = p.add("w", Matrix::filled(1, 1, 1.0)).unwrap();
    let b = p.add("b", Matrix::filled(1, 1, 1.0)).unwrap();
    let mut opt = Sgd::new(0.1).with_weight_decay(0.5).with_decay_exempt(vec![b]);
    opt.step(&mut p);
    opt.step(&mut p);
    assert!((p.value(w).get(0, 0) - 0.9025).abs() < 1e-6);
    assert_eq!(p.value(b).get(0, 0), 1.0);
    // With momentum, in both forms.
    for caffe in [false, true] {
        let mut opt = Sgd::new(0.1).with_momentum(0.9).with_weight_decay(0.5).with_lr_in_velocity(caffe).with_decay_exempt(vec![b]);
        let before = p.value(b).get(0, 0);
        opt.step(&mut p);
        assert_eq!(p.value(b).get(0, 0), before);
    }
}

#[test]
fn sgd_caffe_momentum_resumes_bit_for_bit() {
    let run = |split: Option<usize>| {
        let mut p = Params::new();
        let w = p.add("w", Matrix::from_vec(1, 3, vec![0.5, -1.0, 2.0]).unwrap()).unwrap();
        let new_opt = || Sgd::new(0.05).with_momentum(0.9).with_weight_decay(1e-3).with_lr_in_velocity(true);
        let mut opt = new_opt();
        let policy = LrPolicy::Inv { base: 0.05, gamma: 0.1, power: 0.75 };
        for i in 0..6u64 {
            if Some(i as usize) == split {
                let saved = opt.state();
                opt = new_opt();
                opt.set_state(&saved, &p, true).unwrap();
            }
            opt.set_lr(policy.at(i));
            let g: Vec<f32> = p.value(w).data().iter().map(|x| x * x - 0.3).collect();
            p.grad_mut(w).data_mut().copy_from_slice(&g);
            opt.step(&mut p);
        }
        p.value(w).clone()
    };
    let whole = run(None);
    assert_eq!(run(Some(3)), whole);
}
