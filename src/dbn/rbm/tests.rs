//! Tests of the restricted Boltzmann machine: learning, free energy, the exact update, determinism, errors.

use super::*;

/// Three 12-bit patterns with different numbers of bits set (a learnt RBM must tell them apart).
fn patterns() -> Matrix {
    let p = ["111100000000", "000011110011", "010101010101"];
    let rows: Vec<Vec<f32>> = p.iter().map(|s| s.bytes().map(|b| (b - b'0') as f32).collect()).collect();
    Matrix::from_rows(&rows).unwrap()
}

fn train(k: usize, momentum: f32, steps: usize) -> (Rbm, f64, f64) {
    let mut rng = Rng::new(11);
    let mut rbm = Rbm::new(12, 8, &mut rng);
    rbm.momentum = momentum;
    let data = patterns();
    let first = rbm.cd_k(&data, k, 0.1, &mut rng).unwrap().recon_error;
    let mut last = first;
    for _ in 0..steps {
        last = rbm.cd_k(&data, k, 0.1, &mut rng).unwrap().recon_error;
    }
    (rbm, first, last)
}

fn assert_reconstructs(rbm: &Rbm, first: f64, last: f64) {
    let data = patterns();
    let mut out = Matrix::default();
    rbm.reconstruct(&data, &mut out).unwrap();
    for r in 0..data.rows() {
        let bits: Vec<f32> = out.row(r).iter().map(|&p| if p > 0.5 { 1.0 } else { 0.0 }).collect();
        assert_eq!(bits, data.row(r), "pattern {r}: probabilities {:?}", out.row(r));
    }
    assert!(last < first / 100.0, "reconstruction error {first} -> {last}");
}

#[test]
fn cd1_learns_the_patterns_and_lowers_their_free_energy() {
    let (rbm, first, last) = train(1, 0.0, 3000);
    assert_reconstructs(&rbm, first, last);
    // Every pattern is more probable than every random vector that is not a pattern.
    let data = patterns();
    let fe_data = rbm.free_energy(&data).unwrap();
    let mut rng = Rng::new(5);
    let mut noise = Matrix::zeros(200, 12);
    noise.data_mut().iter_mut().for_each(|x| *x = rng.below(2) as f32);
    let fe_noise = rbm.free_energy(&noise).unwrap();
    let worst_pattern = fe_data.iter().copied().fold(f64::MIN, f64::max);
    for (r, f) in fe_noise.iter().enumerate() {
        if (0..3).any(|p| noise.row(r) == data.row(p)) {
            continue;
        }
        assert!(*f > worst_pattern, "random row {r}: F {f} vs patterns {fe_data:?}");
    }
}

#[test]
fn cd3_and_momentum_learn_too() {
    let (rbm, first, last) = train(3, 0.0, 3000);
    assert_reconstructs(&rbm, first, last);
    let (rbm, first, last) = train(1, 0.5, 1500);
    assert_reconstructs(&rbm, first, last);
    let mut rbm = rbm;
    rbm.weight_decay = 1e-4;
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        rbm.cd_k(&patterns(), 1, 0.1, &mut rng).unwrap();
    }
    let mut out = Matrix::default();
    rbm.reconstruct(&patterns(), &mut out).unwrap();
    assert!(out.max_abs_diff(&patterns()) < 0.5, "still reconstructs with weight decay");
}

#[test]
fn free_energy_matches_the_sum_over_hidden_states() {
    let mut rng = Rng::new(2);
    let (nv, nh) = (5, 4);
    let mut rbm = Rbm::new(nv, nh, &mut rng);
    rbm.w.data_mut().iter_mut().for_each(|x| *x = rng.normal());
    rbm.vbias.data_mut().iter_mut().for_each(|x| *x = rng.normal());
    rbm.hbias.data_mut().iter_mut().for_each(|x| *x = rng.normal());
    let mut v = Matrix::zeros(6, nv);
    v.data_mut().iter_mut().for_each(|x| *x = rng.next_f32());
    let fe = rbm.free_energy(&v).unwrap();
    for (r, f) in fe.iter().enumerate() {
        let mut z = 0.0f64;
        for hs in 0..1u32 << nh {
            let h = |j: usize| ((hs >> j) & 1) as f64;
            let mut e = 0.0;
            for i in 0..nv {
                e -= v.get(r, i) as f64 * rbm.vbias.get(0, i) as f64;
                for j in 0..nh {
                    e -= v.get(r, i) as f64 * rbm.w.get(i, j) as f64 * h(j);
                }
            }
            for j in 0..nh {
                e -= h(j) * rbm.hbias.get(0, j) as f64;
            }
            z += (-e).exp();
        }
        assert!((f + z.ln()).abs() < 1e-4, "row {r}: {f} vs {}", -z.ln());
    }
    assert_eq!(softplus(1000.0), 1000.0);
    assert!((softplus(-50.0) - (-50f64).exp()).abs() < 1e-30);
}

/// The documented CD-k step in plain f64 loops, drawing samples in the documented order.
fn reference_step(rbm: &Rbm, v0: &Matrix, k: usize, lr: f64, rng: &mut Rng) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (n, nv, nh) = (v0.rows(), rbm.visible(), rbm.hidden());
    let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
    let up = |v: &[f64]| -> Vec<f64> {
        (0..n * nh).map(|e| sig(rbm.hbias.get(0, e % nh) as f64 + (0..nv).map(|i| v[e / nh * nv + i] * rbm.w.get(i, e % nh) as f64).sum::<f64>())).collect()
    };
    let down = |h: &[f64]| -> Vec<f64> {
        (0..n * nv).map(|e| sig(rbm.vbias.get(0, e % nv) as f64 + (0..nh).map(|j| h[e / nv * nh + j] * rbm.w.get(e % nv, j) as f64).sum::<f64>())).collect()
    };
    let mut sample = |p: &[f64]| -> Vec<f64> { p.iter().map(|&q| if (rng.next_f32() as f64) < q { 1.0 } else { 0.0 }).collect() };
    let x0: Vec<f64> = v0.data().iter().map(|&x| x as f64).collect();
    let h0 = up(&x0);
    let mut h = sample(&h0);
    let (mut v, mut hk) = (Vec::new(), Vec::new());
    for step in 1..=k {
        v = down(&h);
        if step < k {
            v = sample(&v);
        }
        hk = up(&v);
        if step < k {
            h = sample(&hk);
        }
    }
    let a = lr / n as f64;
    let w = (0..nv * nh)
        .map(|e| {
            let (i, j) = (e / nh, e % nh);
            let g: f64 = (0..n).map(|r| x0[r * nv + i] * h0[r * nh + j] - v[r * nv + i] * hk[r * nh + j]).sum();
            rbm.w.get(i, j) as f64 + a * g
        })
        .collect();
    let vb = (0..nv).map(|i| rbm.vbias.get(0, i) as f64 + a * (0..n).map(|r| x0[r * nv + i] - v[r * nv + i]).sum::<f64>()).collect();
    let hb = (0..nh).map(|j| rbm.hbias.get(0, j) as f64 + a * (0..n).map(|r| h0[r * nh + j] - hk[r * nh + j]).sum::<f64>()).collect();
    (w, vb, hb)
}

#[test]
fn one_step_is_the_documented_update() {
    let mut rng = Rng::new(21);
    // Values in [0, 1], and a binary batch (its own sparse path); both sparse and dense.
    let mut real = Matrix::zeros(7, 10);
    real.data_mut().iter_mut().for_each(|v| *v = if rng.below(3) == 0 { 1.0 } else { rng.next_f32() * 0.3 });
    let mut binary = Matrix::zeros(7, 10);
    binary.data_mut().iter_mut().for_each(|v| *v = (rng.below(3) == 0) as u8 as f32);
    let cases = [(&real, 1, 0.0), (&real, 1, 1.0), (&real, 2, 1.0), (&real, 3, 0.0), (&binary, 1, 1.0), (&binary, 2, 0.0)];
    for (x, k, density) in cases {
        let mut rbm = Rbm::new(10, 6, &mut rng);
        rbm.w.data_mut().iter_mut().for_each(|w| *w = rng.normal());
        rbm.hbias.data_mut().iter_mut().for_each(|b| *b = rng.normal());
        rbm.set_sparse_max_density(density);
        let (w, vb, hb) = reference_step(&rbm, x, k, 0.5, &mut Rng::new(k as u64));
        rbm.cd_k(x, k, 0.5, &mut Rng::new(k as u64)).unwrap();
        let close = |got: &[f32], want: &[f64]| got.iter().zip(want).all(|(&g, &w)| (g as f64 - w).abs() < 1e-4);
        assert!(close(rbm.w.data(), &w), "k={k}: W");
        assert!(close(rbm.vbias.data(), &vb), "k={k}: visible bias");
        assert!(close(rbm.hbias.data(), &hb), "k={k}: hidden bias");
    }
}

#[test]
fn same_seed_same_weights() {
    let run = |seed: u64| {
        let mut rng = Rng::new(seed);
        let mut rbm = Rbm::new(40, 16, &mut rng);
        let mut x = Matrix::zeros(9, 40);
        x.data_mut().iter_mut().for_each(|v| *v = (rng.below(25) == 0) as u8 as f32);
        for k in [1, 2, 1] {
            rbm.cd_k(&x, k, 0.05, &mut rng).unwrap();
        }
        rbm
    };
    let (a, b, c) = (run(4), run(4), run(5));
    assert_eq!((&a.w, &a.vbias, &a.hbias), (&b.w, &b.vbias, &b.hbias));
    assert_ne!(a.w, c.w);
}

#[test]
fn sparse_and_dense_paths_agree_and_buffers_are_reused() {
    let mut rng = Rng::new(8);
    let mut x = Matrix::zeros(32, 77);
    x.data_mut().iter_mut().for_each(|v| *v = if rng.below(20) == 0 { rng.next_f32() } else { 0.0 });
    let base = Rbm::new(77, 13, &mut rng);
    let mut out = Vec::new();
    for d in [0.0, 1.0] {
        let mut rbm = base.clone();
        rbm.set_sparse_max_density(d);
        rbm.momentum = 0.5;
        let stats = rbm.cd_k(&x, 1, 0.1, &mut Rng::new(1)).unwrap();
        let ptrs = (rbm.s.vt.data().as_ptr(), rbm.s.h0.data().as_ptr(), rbm.s.vel_w.data().as_ptr());
        rbm.cd_k(&x, 1, 0.1, &mut Rng::new(2)).unwrap();
        assert_eq!(ptrs, (rbm.s.vt.data().as_ptr(), rbm.s.h0.data().as_ptr(), rbm.s.vel_w.data().as_ptr()));
        out.push((rbm, stats));
    }
    assert!(out[0].0.w.max_abs_diff(&out[1].0.w) < 1e-6);
    assert!(out[0].0.vbias.max_abs_diff(&out[1].0.vbias) < 1e-6);
    assert!(out[0].0.hbias.max_abs_diff(&out[1].0.hbias) < 1e-6);
    assert!((out[0].1.recon_error - out[1].1.recon_error).abs() < 1e-6);
}

#[test]
fn visible_bias_from_data_means() {
    let mut rbm = Rbm::new(3, 2, &mut Rng::new(1));
    let data = Matrix::from_rows(&[vec![1.0, 0.0, 1.0], vec![0.0, 0.0, 1.0], vec![1.0, 0.0, 1.0], vec![0.0, 0.0, 1.0]]).unwrap();
    rbm.set_visible_bias_from(&data).unwrap();
    let b = rbm.vbias.data();
    assert!(b[0].abs() < 1e-6 && b[1] < -6.0 && b[2] > 6.0 && b[1].is_finite() && b[2].is_finite(), "{b:?}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut rng = Rng::new(1);
    let mut rbm = Rbm::new(6, 3, &mut rng);
    let mut out = Matrix::default();
    let wide = Matrix::zeros(2, 7);
    assert!(rbm.cd_k(&wide, 1, 0.1, &mut rng).is_err());
    assert!(rbm.hidden_probs(&wide, &mut out).is_err());
    assert!(rbm.reconstruct(&wide, &mut out).is_err());
    assert!(rbm.free_energy(&wide).is_err());
    assert!(rbm.set_visible_bias_from(&wide).is_err());
    let ok = Matrix::zeros(2, 6);
    assert!(rbm.cd_k(&Matrix::zeros(0, 6), 1, 0.1, &mut rng).is_err());
    assert!(rbm.cd_k(&ok, 0, 0.1, &mut rng).is_err());
    assert!(rbm.cd_k(&ok, 1, f32::NAN, &mut rng).is_err());
    for bad in [1.5, -0.5, f32::NAN] {
        let mut x = ok.clone();
        x.set(1, 2, bad);
        let before = rbm.w.clone();
        let e = rbm.cd_k(&x, 1, 0.1, &mut rng).unwrap_err().to_string();
        assert!(e.contains("row 1, column 2"), "{e}");
        assert_eq!(rbm.w, before, "nothing changes on an error");
    }
    rbm.momentum = 1.0;
    assert!(rbm.cd_k(&ok, 1, 0.1, &mut rng).is_err());
    rbm.momentum = 0.0;
    rbm.weight_decay = -1.0;
    assert!(rbm.cd_k(&ok, 1, 0.1, &mut rng).is_err());
    rbm.weight_decay = 0.0;
    rbm.hbias = Matrix::zeros(1, 4);
    assert!(rbm.cd_k(&ok, 1, 0.1, &mut rng).is_err());
    assert!(rbm.free_energy(&ok).is_err());
}
