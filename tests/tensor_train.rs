//! Real (small) training runs: the engine must actually learn.

use deepchess::tensor::{Adam, Init, Matrix, Optimizer, Params, Rng, Sgd, SparseBatch, Tape};

#[test]
fn xor_is_learned() {
    let mut rng = Rng::new(42);
    let mut p = Params::new();
    let w1 = p.add("l1.w", Init::XavierUniform.matrix(2, 8, &mut rng)).unwrap();
    let b1 = p.add("l1.b", Matrix::zeros(1, 8)).unwrap();
    let w2 = p.add("l2.w", Init::XavierUniform.matrix(8, 1, &mut rng)).unwrap();
    let b2 = p.add("l2.b", Matrix::zeros(1, 1)).unwrap();
    let x = Matrix::from_rows(&[vec![0.0, 0.0], vec![0.0, 1.0], vec![1.0, 0.0], vec![1.0, 1.0]]).unwrap();
    let y = Matrix::from_rows(&[vec![0.0], vec![1.0], vec![1.0], vec![0.0]]).unwrap();
    let mut opt = Adam::new(0.05);
    let mut tape = Tape::new();
    let mut loss = f32::INFINITY;
    for _ in 0..600 {
        tape.reset();
        let xi = tape.input(&x);
        let h = tape.affine(&p, xi, w1, b1).unwrap();
        let h = tape.tanh(h).unwrap();
        let z = tape.affine(&p, h, w2, b2).unwrap();
        let out = tape.sigmoid(z).unwrap();
        let t = tape.input(&y);
        let l = tape.binary_cross_entropy(out, t).unwrap();
        loss = tape.scalar(l);
        tape.backward(l, &mut p).unwrap();
        opt.step(&mut p);
        if loss < 0.02 {
            break;
        }
    }
    assert!(loss < 0.05, "XOR loss stayed at {loss}");
}

#[test]
fn xor_with_softmax_and_sgd_momentum() {
    let mut rng = Rng::new(7);
    let mut p = Params::new();
    let w1 = p.add("w1", Init::HeNormal.matrix(2, 16, &mut rng)).unwrap();
    let b1 = p.add("b1", Matrix::zeros(1, 16)).unwrap();
    let w2 = p.add("w2", Init::XavierUniform.matrix(16, 2, &mut rng)).unwrap();
    let b2 = p.add("b2", Matrix::zeros(1, 2)).unwrap();
    let x = Matrix::from_rows(&[vec![0.0, 0.0], vec![0.0, 1.0], vec![1.0, 0.0], vec![1.0, 1.0]]).unwrap();
    let labels = [0usize, 1, 1, 0];
    let mut opt = Sgd::new(0.1).with_momentum(0.9);
    let mut tape = Tape::new();
    let mut pred = Vec::new();
    for _ in 0..1000 {
        tape.reset();
        let xi = tape.input(&x);
        let h = tape.affine(&p, xi, w1, b1).unwrap();
        let h = tape.relu(h).unwrap();
        let z = tape.affine(&p, h, w2, b2).unwrap();
        let t = tape.one_hot(&labels, 2).unwrap();
        let l = tape.softmax_cross_entropy(z, t).unwrap();
        pred = tape.probs(l).argmax_rows();
        tape.backward(l, &mut p).unwrap();
        opt.step(&mut p);
    }
    assert_eq!(pred, labels.to_vec());
}

/// A sparse-input autoencoder (the Pos2Vec shape in miniature): 64 binary features,
/// 4 set per example, squeezed through 16 ReLU units and reconstructed with a sigmoid.
#[test]
fn sparse_autoencoder_loss_goes_down() {
    let mut rng = Rng::new(9);
    let (feats, code, n) = (64usize, 16usize, 128usize);
    // Structured data: each example is one of 8 prototypes (so it is compressible).
    let protos: Vec<Vec<u32>> = (0..8).map(|k| (0..4).map(|j| (k * 8 + j * 2) as u32).collect()).collect();
    let rows: Vec<Vec<u32>> = (0..n).map(|_| protos[rng.below(8) as usize].clone()).collect();
    let x = SparseBatch::from_rows(feats, &rows).unwrap();
    let target = x.to_dense();
    let mut p = Params::new();
    let we = p.add("enc.w", Init::HeNormal.matrix(feats, code, &mut rng)).unwrap();
    let be = p.add("enc.b", Matrix::zeros(1, code)).unwrap();
    let wd = p.add("dec.w", Init::XavierUniform.matrix(code, feats, &mut rng)).unwrap();
    let bd = p.add("dec.b", Matrix::zeros(1, feats)).unwrap();
    let mut opt = Adam::new(0.01);
    let mut tape = Tape::new();
    let mut first = None;
    let mut last = 0.0;
    for _ in 0..300 {
        tape.reset();
        let h = tape.sparse_affine(&p, &x, we, be).unwrap();
        let h = tape.relu(h).unwrap();
        let z = tape.affine(&p, h, wd, bd).unwrap();
        let y = tape.sigmoid(z).unwrap();
        let t = tape.input(&target);
        let l = tape.binary_cross_entropy(y, t).unwrap();
        last = tape.scalar(l);
        first.get_or_insert(last);
        tape.backward(l, &mut p).unwrap();
        opt.step(&mut p);
    }
    let first = first.unwrap();
    assert!(last < first * 0.2, "autoencoder loss {first} -> {last}");
}

#[test]
fn sgd_decay_follows_the_paper_schedule() {
    let mut opt = Sgd::new(0.005).with_decay(0.98);
    for _ in 0..10 {
        opt.end_epoch();
    }
    assert!((opt.lr() - 0.005 * 0.98f32.powi(10)).abs() < 1e-9);
    let mut a = Adam::adamw(1e-3, 0.01).with_decay(0.5);
    a.end_epoch();
    assert!((a.lr() - 5e-4).abs() < 1e-9);
}

#[test]
fn training_is_deterministic_for_a_seed() {
    let run = || {
        let mut rng = Rng::new(11);
        let mut p = Params::new();
        let w = p.add("w", Init::HeNormal.matrix(773, 32, &mut rng)).unwrap();
        let b = p.add("b", Matrix::zeros(1, 32)).unwrap();
        let rows: Vec<Vec<u32>> = (0..64).map(|_| (0..32).map(|_| rng.below(773) as u32).collect()).collect();
        let x = SparseBatch::from_rows(773, &rows).unwrap();
        let tgt = Init::XavierUniform.matrix(64, 32, &mut rng);
        let mut opt = Adam::new(1e-3);
        let mut tape = Tape::new();
        for _ in 0..5 {
            tape.reset();
            let y = tape.sparse_affine(&p, &x, w, b).unwrap();
            let t = tape.input(&tgt);
            let l = tape.mse(y, t).unwrap();
            tape.backward(l, &mut p).unwrap();
            opt.step(&mut p);
        }
        p.value(w).clone()
    };
    assert_eq!(run(), run());
}
