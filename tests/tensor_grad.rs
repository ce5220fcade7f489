//! Every tape op's gradient against central finite differences, on random shapes; and
//! the statistics of dropout's mask.

use deepchess::tensor::{Conv2d, Init, Matrix, MaxPool2d, Params, Rng, SparseBatch, Tape, Var};
use proptest::prelude::*;

type Build = dyn Fn(&mut Tape, &Params, &[Var]) -> Var;

fn loss_of(build: &Build, inputs: &[Matrix], params: &Params) -> f64 {
    let mut t = Tape::new();
    let vars: Vec<Var> = inputs.iter().map(|m| t.variable(m)).collect();
    let l = build(&mut t, params, &vars);
    t.scalar(l) as f64
}

/// Compares analytic gradients of all inputs and parameters with central differences.
fn check(build: &Build, inputs: Vec<Matrix>, params: Params) {
    check_h(build, inputs, params, 1e-2)
}

/// [`check`] with step `h`.
fn check_h(build: &Build, inputs: Vec<Matrix>, mut params: Params, h: f32) {
    let mut t = Tape::new();
    let vars: Vec<Var> = inputs.iter().map(|m| t.variable(m)).collect();
    let l = build(&mut t, &params, &vars);
    params.zero_grads();
    t.backward(l, &mut params).unwrap();
    let close = |a: f64, n: f64, what: &str| {
        let tol = 2e-3 + 3e-2 * a.abs().max(n.abs());
        assert!((a - n).abs() <= tol, "{what}: analytic {a} vs numeric {n}");
    };
    for (vi, v) in vars.iter().enumerate() {
        let g = t.grad(*v).clone();
        for e in 0..inputs[vi].len() {
            let mut ins = inputs.clone();
            ins[vi].data_mut()[e] += h;
            let up = loss_of(build, &ins, &params);
            ins[vi].data_mut()[e] -= 2.0 * h;
            let down = loss_of(build, &ins, &params);
            close(g.data()[e] as f64, (up - down) / (2.0 * h as f64), &format!("input {vi} element {e}"));
        }
    }
    for id in params.ids().collect::<Vec<_>>() {
        let g = params.grad(id).clone();
        for e in 0..g.len() {
            let orig = params.value(id).data()[e];
            params.value_mut(id).data_mut()[e] = orig + h;
            let up = loss_of(build, &inputs, &params);
            params.value_mut(id).data_mut()[e] = orig - h;
            let down = loss_of(build, &inputs, &params);
            params.value_mut(id).data_mut()[e] = orig;
            close(g.data()[e] as f64, (up - down) / (2.0 * h as f64), &format!("param '{}' element {e}", params.name(id)));
        }
    }
}

fn rand(r: usize, c: usize, rng: &mut Rng) -> Matrix {
    let mut m = Matrix::zeros(r, c);
    m.data_mut().iter_mut().for_each(|x| *x = rng.uniform(-1.0, 1.0));
    m
}

/// Values kept away from 0 so ReLU's kink is never crossed by the finite difference.
fn away_from_zero(r: usize, c: usize, rng: &mut Rng) -> Matrix {
    let mut m = rand(r, c, rng);
    m.data_mut().iter_mut().for_each(|x| *x = x.signum() * (0.1 + x.abs()));
    m
}

fn soft_targets(r: usize, c: usize, rng: &mut Rng) -> Matrix {
    let mut m = Matrix::zeros(r, c);
    for i in 0..r {
        let row: Vec<f32> = (0..c).map(|_| rng.uniform(0.1, 1.0)).collect();
        let s: f32 = row.iter().sum();
        m.row_mut(i).iter_mut().zip(&row).for_each(|(d, v)| *d = v / s);
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn affine(b in 1usize..5, i in 1usize..6, o in 1usize..6, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut p = Params::new();
        let w = p.add("w", rand(i, o, &mut rng)).unwrap();
        let bias = p.add("b", rand(1, o, &mut rng)).unwrap();
        let target = rand(b, o, &mut rng);
        let build = move |t: &mut Tape, p: &Params, v: &[Var]| {
            let y = t.affine(p, v[0], w, bias).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![rand(b, i, &mut rng)], p);
    }

    #[test]
    fn sparse_affine(b in 1usize..5, feats in 1usize..12, o in 1usize..5, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut p = Params::new();
        let w = p.add("w", rand(feats, o, &mut rng)).unwrap();
        let bias = p.add("b", rand(1, o, &mut rng)).unwrap();
        let rows: Vec<Vec<u32>> = (0..b).map(|_| (0..feats as u32).filter(|_| rng.below(2) == 1).collect()).collect();
        let x = SparseBatch::from_rows(feats, &rows).unwrap();
        let target = rand(b, o, &mut rng);
        let build = move |t: &mut Tape, p: &Params, _: &[Var]| {
            let y = t.sparse_affine(p, &x, w, bias).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![], p);
    }

    #[test]
    fn activations_and_add(r in 1usize..4, c in 1usize..6, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let target = rand(r, c, &mut rng);
        let build = move |t: &mut Tape, _: &Params, v: &[Var]| {
            let a = t.relu(v[0]).unwrap();
            let s = t.sigmoid(v[1]).unwrap();
            let h = t.tanh(v[1]).unwrap();
            let x = t.add(a, s).unwrap();
            let y = t.add(x, h).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![away_from_zero(r, c, &mut rng), rand(r, c, &mut rng)], Params::new());
    }

    #[test]
    fn concat_and_param(r in 1usize..4, c1 in 1usize..5, c2 in 1usize..5, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut p = Params::new();
        let pid = p.add("p", rand(r, c2, &mut rng)).unwrap();
        let target = rand(r, c1 + c2, &mut rng);
        let build = move |t: &mut Tape, p: &Params, v: &[Var]| {
            let pv = t.param(p, pid);
            let q = t.add(pv, v[1]).unwrap();
            let y = t.concat(v[0], q).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![rand(r, c1, &mut rng), rand(r, c2, &mut rng)], p);
    }

    #[test]
    fn pair_halves(n in 1usize..4, c in 1usize..5, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let target = rand(n, 2 * c, &mut rng);
        let build = move |t: &mut Tape, _: &Params, v: &[Var]| {
            let y = t.pair_halves(v[0]).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![rand(2 * n, c, &mut rng)], Params::new());
    }

    #[test]
    fn bce_with_logits(r in 1usize..4, c in 1usize..5, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut z = rand(r, c, &mut rng);
        z.data_mut().iter_mut().for_each(|x| *x *= 4.0);
        let mut tg = Matrix::zeros(r, c);
        tg.data_mut().iter_mut().for_each(|x| *x = rng.uniform(0.0, 1.0));
        let build = |t: &mut Tape, _: &Params, v: &[Var]| t.bce_with_logits(v[0], v[1]).unwrap();
        check(&build, vec![z, tg], Params::new());
    }

    /// One value as both the logits and the targets (both gradients land on it), and
    /// sizes past the loss's eight running sums.
    #[test]
    fn bce_with_logits_against_itself(r in 1usize..4, c in 1usize..12, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let z = rand(r, c, &mut rng);
        let build = |t: &mut Tape, _: &Params, v: &[Var]| t.bce_with_logits(v[0], v[0]).unwrap();
        check(&build, vec![z], Params::new());
    }

    #[test]
    fn softmax_cross_entropy(r in 1usize..5, c in 2usize..6, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let build = |t: &mut Tape, _: &Params, v: &[Var]| t.softmax_cross_entropy(v[0], v[1]).unwrap();
        check(&build, vec![rand(r, c, &mut rng), soft_targets(r, c, &mut rng)], Params::new());
    }

    #[test]
    fn binary_cross_entropy(r in 1usize..4, c in 1usize..5, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut p = Matrix::zeros(r, c);
        // Not nearer 0 or 1: the central difference's error grows as 1/p³ (at p = t = 0.1 with
        // one element it is 3.3e-3, above the check's 2e-3 floor where the gradient is 0).
        p.data_mut().iter_mut().for_each(|x| *x = rng.uniform(0.2, 0.8));
        let mut tg = Matrix::zeros(r, c);
        tg.data_mut().iter_mut().for_each(|x| *x = rng.uniform(0.0, 1.0));
        let build = |t: &mut Tape, _: &Params, v: &[Var]| t.binary_cross_entropy(v[0], v[1]).unwrap();
        check(&build, vec![p, tg], Params::new());
    }

    #[test]
    fn dropout_with_a_fixed_mask(r in 1usize..4, c in 1usize..6, rate in 0.1f32..0.8, seed in any::<u64>()) {
        // The mask is drawn inside the graph from a generator seeded afresh on every
        // evaluation, so every finite-difference evaluation sees the same mask.
        let mut rng = Rng::new(seed);
        let target = rand(r, c, &mut rng);
        let build = move |t: &mut Tape, _: &Params, v: &[Var]| {
            let a = t.tanh(v[0]).unwrap();
            let d = t.dropout(a, rate, &mut Rng::new(seed ^ 0x5eed)).unwrap();
            let tg = t.input(&target);
            t.mse(d, tg).unwrap()
        };
        check(&build, vec![rand(r, c, &mut rng)], Params::new());
    }

    #[test]
    fn huber_both_sides_of_delta(r in 1usize..4, c in 1usize..6, delta in 0.2f32..1.5, seed in any::<u64>()) {
        // Differences kept at least 0.05 away from ±delta (and h = 0.01), so no finite
        // difference straddles the switch from quadratic to linear; about half fall on each side.
        let mut rng = Rng::new(seed);
        let pred = rand(r, c, &mut rng);
        let mut tg = pred.clone();
        for x in tg.data_mut() {
            let inner = rng.below(2) == 0;
            let mag = if inner { rng.uniform(0.0, delta - 0.05).max(0.0) } else { rng.uniform(delta + 0.05, delta + 2.0) };
            *x -= if rng.below(2) == 0 { mag } else { -mag };
        }
        let build = move |t: &mut Tape, _: &Params, v: &[Var]| t.huber(v[0], v[1], delta).unwrap();
        check(&build, vec![pred, tg], Params::new());
    }

    #[test]
    fn conv2d(batch in 1usize..3, in_h in 1usize..6, in_w in 1usize..6, in_c in 1usize..3, out_c in 1usize..4,
              kh in 1usize..4, kw in 1usize..4, stride in 1usize..3, pad in 0usize..2, seed in any::<u64>()) {
        // Odd sizes, kernels of 1, strides of 2, padding: kernel sides clipped to the padded input.
        let s = Conv2d { in_h, in_w, in_c, out_c, kh: kh.min(in_h + 2 * pad), kw: kw.min(in_w + 2 * pad), stride, pad };
        let mut rng = Rng::new(seed);
        let mut p = Params::new();
        let (wr, wc) = s.weight_shape();
        let w = p.add("w", rand(wr, wc, &mut rng)).unwrap();
        let bias = p.add("b", rand(1, wc, &mut rng)).unwrap();
        let target = rand(batch, s.out_len(), &mut rng);
        let build = move |t: &mut Tape, p: &Params, v: &[Var]| {
            let y = t.conv2d(p, v[0], w, bias, s).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![rand(batch, s.in_len(), &mut rng)], p);
    }

    #[test]
    fn max_pool2d(batch in 1usize..3, in_h in 1usize..7, in_w in 1usize..7, c in 1usize..4, k in 1usize..4,
                  stride in 1usize..4, ceil in any::<bool>(), seed in any::<u64>()) {
        let s = MaxPool2d { in_h, in_w, c, k: k.min(in_h).min(in_w), stride, ceil };
        let mut rng = Rng::new(seed);
        // Distinct values at least 0.05 apart (h = 0.01): no finite difference changes a window's winner.
        let n = batch * s.in_len();
        let mut vals: Vec<f32> = (0..n).map(|i| (i as f32 - n as f32 / 2.0) * 0.05).collect();
        rng.shuffle(&mut vals);
        let x = Matrix::from_vec(batch, s.in_len(), vals).unwrap();
        let target = rand(batch, s.out_len(), &mut rng);
        let build = move |t: &mut Tape, _: &Params, v: &[Var]| {
            let y = t.max_pool2d(v[0], s).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check(&build, vec![x], Params::new());
    }

    #[test]
    fn conv_pool_conv_chain(seed in any::<u64>()) {
        // The seed's layer order at a small size: conv, 2×2 ceil-mode pool (5×5 → 3×3), conv,
        // sigmoid. The pool's inputs are conv outputs, so two values of a window may be
        // close; a step of h moves any conv output by at most h (every value is within ±1),
        // so draws where a window's top two are within 4h are skipped: no finite difference
        // then crosses a max's kink.
        let h = 5e-4f32;
        let c1 = Conv2d { in_h: 6, in_w: 6, in_c: 2, out_c: 3, kh: 2, kw: 2, stride: 1, pad: 0 };
        let pl = MaxPool2d { in_h: 5, in_w: 5, c: 3, k: 2, stride: 2, ceil: true };
        let c2 = Conv2d { in_h: 3, in_w: 3, in_c: 3, out_c: 2, kh: 2, kw: 2, stride: 1, pad: 0 };
        assert_eq!((pl.out_h(), pl.out_w()), (3, 3));
        let mut rng = Rng::new(seed);
        let mut p = Params::new();
        let w1 = p.add("w1", rand(8, 3, &mut rng)).unwrap();
        let b1 = p.add("b1", rand(1, 3, &mut rng)).unwrap();
        let w2 = p.add("w2", rand(12, 2, &mut rng)).unwrap();
        let b2 = p.add("b2", rand(1, 2, &mut rng)).unwrap();
        let target = rand(2, c2.out_len(), &mut rng);
        let x = rand(2, c1.in_len(), &mut rng);
        let mut a = Matrix::default();
        deepchess::tensor::layers::conv::forward(&c1, &x, p.value(w1), p.value(b1), &mut a).unwrap();
        for n in 0..2 {
            for (wy, wx, ch) in (0..3).flat_map(|y| (0..3).flat_map(move |x| (0..3).map(move |c| (y, x, c)))) {
                let mut v: Vec<f32> = (2 * wy..(2 * wy + 2).min(5))
                    .flat_map(|y| (2 * wx..(2 * wx + 2).min(5)).map(move |x| (y, x)))
                    .map(|(y, x)| a.get(n, (y * 5 + x) * 3 + ch))
                    .collect();
                v.sort_by(|a, b| b.total_cmp(a));
                prop_assume!(v.len() < 2 || v[0] - v[1] > 4.0 * h);
            }
        }
        let build = move |t: &mut Tape, p: &Params, v: &[Var]| {
            let a = t.conv2d(p, v[0], w1, b1, c1).unwrap();
            let m = t.max_pool2d(a, pl).unwrap();
            let z = t.conv2d(p, m, w2, b2, c2).unwrap();
            let y = t.sigmoid(z).unwrap();
            let tg = t.input(&target);
            t.mse(y, tg).unwrap()
        };
        check_h(&build, vec![x], p, h);
    }

    #[test]
    fn sum_mean_mse(r in 1usize..4, c in 1usize..5, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let build = |t: &mut Tape, _: &Params, v: &[Var]| {
            let a = t.tanh(v[0]).unwrap();
            let s = t.sum(a).unwrap();
            let m = t.mean(v[1]).unwrap();
            let q = t.mse(v[0], v[1]).unwrap();
            let sm = t.add(s, m).unwrap();
            t.add(sm, q).unwrap()
        };
        check(&build, vec![rand(r, c, &mut rng), rand(r, c, &mut rng)], Params::new());
    }
}

/// The Siamese network's tied weights: one tower applied to two inputs; the shared
/// parameters must receive the sum of both paths' gradients.
#[test]
fn tied_weights_accumulate_both_paths() {
    let mut rng = Rng::new(3);
    let mut p = Params::new();
    let w1 = p.add("tower.w", Init::HeNormal.matrix(10, 4, &mut rng)).unwrap();
    let b1 = p.add("tower.b", rand(1, 4, &mut rng)).unwrap();
    let w2 = p.add("head.w", Init::XavierUniform.matrix(8, 2, &mut rng)).unwrap();
    let b2 = p.add("head.b", Init::Zeros.matrix(1, 2, &mut rng)).unwrap();
    let xa = SparseBatch::from_rows(10, &[vec![0u32, 3, 7], vec![1, 2]]).unwrap();
    let xb = SparseBatch::from_rows(10, &[vec![3u32, 4], vec![9, 2, 5]]).unwrap();
    let build = move |t: &mut Tape, p: &Params, _: &[Var]| {
        let fa = t.sparse_affine(p, &xa, w1, b1).unwrap();
        let fa = t.tanh(fa).unwrap();
        let fb = t.sparse_affine(p, &xb, w1, b1).unwrap();
        let fb = t.tanh(fb).unwrap();
        let h = t.concat(fa, fb).unwrap();
        let z = t.affine(p, h, w2, b2).unwrap();
        let y = t.one_hot(&[0, 1], 2).unwrap();
        t.softmax_cross_entropy(z, y).unwrap()
    };
    check(&build, vec![], p);
}

#[test]
fn frozen_params_get_no_gradient_and_reused_tape_is_stable() {
    let mut rng = Rng::new(5);
    let mut p = Params::new();
    let w = p.add("w", rand(3, 2, &mut rng)).unwrap();
    let b = p.add("b", rand(1, 2, &mut rng)).unwrap();
    p.set_frozen(w, true);
    let x = rand(4, 3, &mut rng);
    let target = rand(4, 2, &mut rng);
    let mut t = Tape::new();
    let mut first = None;
    for _ in 0..3 {
        t.reset();
        p.zero_grads();
        let xi = t.input(&x);
        let y = t.affine(&p, xi, w, b).unwrap();
        let tg = t.input(&target);
        let l = t.mse(y, tg).unwrap();
        t.backward(l, &mut p).unwrap();
        assert!(p.grad(w).data().iter().all(|&g| g == 0.0));
        let gb = p.grad(b).clone();
        assert!(gb.data().iter().any(|&g| g != 0.0));
        if let Some(f) = &first {
            assert_eq!(f, &gb);
        }
        first = Some(gb);
        assert_eq!(t.len(), 4);
    }
}

#[test]
fn huber_values_on_both_sides_of_delta() {
    let mut t = Tape::new();
    let y = t.input(&Matrix::from_vec(1, 4, vec![0.5, -0.5, 3.0, -2.0]).unwrap());
    let z = t.input(&Matrix::zeros(1, 4));
    let l = t.huber(y, z, 1.0).unwrap();
    // 0.125 + 0.125 + (3 - 0.5) + (2 - 0.5), over 4 elements.
    assert!((t.scalar(l) - (0.25 + 2.5 + 1.5) / 4.0).abs() < 1e-6, "{}", t.scalar(l));
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(t.huber(y, z, bad).is_err(), "delta {bad}");
    }
}

fn dropout_of(x: &Matrix, rate: f32, seed: u64) -> Matrix {
    let mut t = Tape::new();
    let v = t.input(x);
    let d = t.dropout(v, rate, &mut Rng::new(seed)).unwrap();
    t.value(d).clone()
}

#[test]
fn dropout_is_deterministic_for_a_seed() {
    let x = Matrix::filled(16, 33, 1.0);
    assert_eq!(dropout_of(&x, 0.5, 9), dropout_of(&x, 0.5, 9));
    assert_ne!(dropout_of(&x, 0.5, 9), dropout_of(&x, 0.5, 10));
    // Rate 0 is the identity and the same variable.
    let mut t = Tape::new();
    let v = t.input(&x);
    let mut rng = Rng::new(1);
    assert_eq!(t.dropout(v, 0.0, &mut rng).unwrap(), v);
    assert_eq!(rng.next_u64(), Rng::new(1).next_u64(), "rate 0 draws nothing");
    for bad in [1.0, 1.5, -0.1, f32::NAN] {
        assert!(t.dropout(v, bad, &mut rng).is_err(), "rate {bad}");
    }
}

#[test]
fn dropout_keeps_one_minus_rate_and_the_mean() {
    // 256×512 = 131072 elements: the kept fraction's standard deviation is
    // sqrt(p(1-p)/n) ≈ 0.0014 at p = 0.5, so 0.01 is a 7-sigma band.
    let mut rng = Rng::new(4);
    let mut x = Matrix::zeros(256, 512);
    x.data_mut().iter_mut().for_each(|v| *v = rng.uniform(0.5, 1.5));
    for rate in [0.2f32, 0.5, 0.8] {
        let y = dropout_of(&x, rate, 77);
        let kept = y.data().iter().filter(|&&v| v != 0.0).count() as f64 / y.len() as f64;
        assert!((kept - (1.0 - rate as f64)).abs() < 0.01, "rate {rate}: kept {kept}");
        for (a, b) in x.data().iter().zip(y.data()) {
            assert!(*b == 0.0 || (b - a / (1.0 - rate)).abs() <= 1e-6 * b.abs(), "kept values are scaled by 1/(1-rate)");
        }
        // Mean preserved in expectation: relative standard error ≈ sqrt(rate/(1-rate)/n) ≤ 0.006.
        let (mx, my) = (x.sum() / x.len() as f64, y.sum() / y.len() as f64);
        assert!((my / mx - 1.0).abs() < 0.03, "rate {rate}: mean {my} vs {mx}");
    }
}

#[test]
fn dropout_backward_uses_the_forward_mask() {
    let mut t = Tape::new();
    let x = t.variable(&Matrix::filled(8, 8, 2.0));
    let d = t.dropout(x, 0.5, &mut Rng::new(3)).unwrap();
    let mask = t.dropout_mask(d).clone();
    let s = t.sum(d).unwrap();
    t.backward(s, &mut Params::new()).unwrap();
    assert_eq!(t.grad(x), &mask);
    assert!(mask.data().iter().all(|&m| m == 0.0 || m == 2.0));
}

#[test]
fn shape_errors_are_reported() {
    let mut t = Tape::new();
    let a = t.input(&Matrix::zeros(2, 3));
    let b = t.input(&Matrix::zeros(3, 3));
    let e = t.concat(a, b).unwrap_err().to_string();
    assert!(e.contains("concat"), "{e}");
    assert!(t.mse(a, b).is_err());
    assert!(t.huber(a, b, 1.0).is_err());
    let mut p = Params::new();
    let l = t.sum(a).unwrap();
    assert!(t.backward(a, &mut p).is_err(), "a 2×3 node is not a loss");
    t.backward(l, &mut p).unwrap();
}

/// The fused ops compute what their two-op forms compute, values and gradients alike.
#[test]
fn fused_affine_relu_equals_affine_then_relu() {
    let mut rng = Rng::new(21);
    let mut p = Params::new();
    let w = p.add("w", rand(9, 7, &mut rng)).unwrap();
    let b = p.add("b", rand(1, 7, &mut rng)).unwrap();
    let w2 = p.add("w2", rand(7, 3, &mut rng)).unwrap();
    let b2 = p.add("b2", rand(1, 3, &mut rng)).unwrap();
    let x = rand(5, 9, &mut rng);
    let rows: Vec<Vec<u32>> = (0..5).map(|_| (0..9u32).filter(|_| rng.below(2) == 1).collect()).collect();
    let xs = SparseBatch::from_rows(9, &rows).unwrap();
    let target = rand(5, 3, &mut rng);
    for sparse in [false, true] {
        let mut results = Vec::new();
        for fused in [false, true] {
            let mut q = p.clone();
            let mut t = Tape::new();
            let xv = t.input(&x);
            let h = match (sparse, fused) {
                (false, false) => { let a = t.affine(&q, xv, w, b).unwrap(); t.relu(a).unwrap() }
                (false, true) => t.affine_relu(&q, xv, w, b).unwrap(),
                (true, false) => { let a = t.sparse_affine(&q, &xs, w, b).unwrap(); t.relu(a).unwrap() }
                (true, true) => t.sparse_affine_relu(&q, &xs, w, b).unwrap(),
            };
            let y = t.affine_relu(&q, h, w2, b2).unwrap();
            let tg = t.input(&target);
            let l = t.mse(y, tg).unwrap();
            t.backward(l, &mut q).unwrap();
            let grads: Vec<Vec<f32>> = q.ids().map(|id| q.grad(id).data().to_vec()).collect();
            results.push((t.value(h).data().to_vec(), grads));
        }
        assert_eq!(results[0], results[1], "sparse {sparse}: fused and two-op forms differ");
    }
}

/// A convolution with its ReLU fused computes what the two-op form computes, values and
/// gradients alike: read by another convolution (its gradient masked in place) and by a
/// dense layer (masked as that layer's `G·Wᵀ` stores it); a batch through the packed
/// product and a single position (the second layer through the small one).
#[test]
fn fused_conv2d_relu_equals_conv2d_then_relu() {
    let c1 = Conv2d { in_h: 6, in_w: 5, in_c: 3, out_c: 4, kh: 3, kw: 2, stride: 1, pad: 1 };
    let c2 = Conv2d { in_h: c1.out_h(), in_w: c1.out_w(), in_c: 4, out_c: 5, kh: 2, kw: 2, stride: 2, pad: 0 };
    let mut rng = Rng::new(8);
    let mut p = Params::new();
    let (r1, k1) = c1.weight_shape();
    let (r2, k2) = c2.weight_shape();
    let w1 = p.add("w1", rand(r1, k1, &mut rng)).unwrap();
    let b1 = p.add("b1", rand(1, k1, &mut rng)).unwrap();
    let w2 = p.add("w2", rand(r2, k2, &mut rng)).unwrap();
    let b2 = p.add("b2", rand(1, k2, &mut rng)).unwrap();
    let w3 = p.add("w3", rand(c2.out_len(), 3, &mut rng)).unwrap();
    let b3 = p.add("b3", rand(1, 3, &mut rng)).unwrap();
    for batch in [1, 37] {
        let x = rand(batch, c1.in_len(), &mut rng);
        let target = rand(batch, 3, &mut rng);
        let mut results = Vec::new();
        for fused in [false, true] {
            let mut q = p.clone();
            let mut t = Tape::new();
            let mut h = t.input(&x);
            let mut zeros = 0;
            for (w, b, s) in [(w1, b1, c1), (w2, b2, c2)] {
                h = if fused {
                    t.conv2d_relu(&q, h, w, b, s).unwrap()
                } else {
                    let a = t.conv2d(&q, h, w, b, s).unwrap();
                    t.relu(a).unwrap()
                };
                zeros += t.value(h).data().iter().filter(|&&v| v == 0.0).count();
            }
            assert!(zeros > 0, "the ReLUs clip something");
            let y = t.affine(&q, h, w3, b3).unwrap();
            let tg = t.input(&target);
            let l = t.mse(y, tg).unwrap();
            t.backward(l, &mut q).unwrap();
            let grads: Vec<Vec<f32>> = q.ids().map(|id| q.grad(id).data().to_vec()).collect();
            results.push((t.value(h).data().to_vec(), t.scalar(l), grads));
        }
        assert_eq!(results[0], results[1], "batch {batch}: fused and two-op forms differ");
    }
}

/// The fused loss on logits equals the two-op form where the latter's clamp is inactive.
#[test]
fn bce_with_logits_equals_sigmoid_then_bce() {
    let mut rng = Rng::new(5);
    let z = rand(6, 11, &mut rng);
    let mut tg = Matrix::zeros(6, 11);
    tg.data_mut().iter_mut().for_each(|x| *x = if rng.below(2) == 1 { 1.0 } else { 0.0 });
    let mut t = Tape::new();
    let (zv, tv) = (t.input(&z), t.input(&tg));
    let fused = t.bce_with_logits(zv, tv).unwrap();
    let p = t.sigmoid(zv).unwrap();
    let two = t.binary_cross_entropy(p, tv).unwrap();
    let (a, b) = (t.scalar(fused), t.scalar(two));
    assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
}

/// `backward_set` over garbage (NaN) gives, bit for bit, what `backward_into` adds to zeroed
/// gradients: tied sparse weights (features no row has included), layers whose weight
/// product writes the gradient first, a parameter read as a value, a frozen one (left as
/// it was), and a leaf's gradient through a layer whose dX product writes it first.
#[test]
fn backward_set_over_garbage_equals_adding_to_zeros() {
    let mut rng = Rng::new(29);
    let mut p = Params::new();
    let w1 = p.add("w1", rand(12, 6, &mut rng)).unwrap();
    let b1 = p.add("b1", rand(1, 6, &mut rng)).unwrap();
    let w2 = p.add("w2", rand(12, 4, &mut rng)).unwrap();
    let b2 = p.add("b2", rand(1, 4, &mut rng)).unwrap();
    let w3 = p.add("w3", rand(4, 2, &mut rng)).unwrap();
    let b3 = p.add("b3", rand(1, 2, &mut rng)).unwrap();
    let shift = p.add("shift", rand(2, 2, &mut rng)).unwrap();
    let frozen = p.add("frozen", rand(5, 4, &mut rng)).unwrap();
    let fb = p.add("frozen.b", rand(1, 4, &mut rng)).unwrap();
    p.set_frozen(frozen, true);
    // Features 8..12 are set in no row: their gradient rows must come out zero.
    let xa = SparseBatch::from_rows(12, &[vec![0u32, 3, 7], vec![1, 2]]).unwrap();
    let xb = SparseBatch::from_rows(12, &[vec![3u32, 4], vec![6, 2, 5]]).unwrap();
    let side = rand(2, 5, &mut rng);
    let target = rand(2, 2, &mut rng);
    let run = |set: bool| {
        let mut grads: Vec<Matrix> = p.ids().map(|id| {
            let (r, c) = p.value(id).shape();
            Matrix::filled(r, c, if set { f32::NAN } else { 0.0 })
        }).collect();
        let mut t = Tape::new();
        let fa = t.sparse_affine_relu(&p, &xa, w1, b1).unwrap();
        let fb2 = t.sparse_affine_relu(&p, &xb, w1, b1).unwrap();
        let h = t.concat(fa, fb2).unwrap();
        let h = t.affine_relu(&p, h, w2, b2).unwrap();
        let v = t.variable(&side);
        let s = t.affine(&p, v, frozen, fb).unwrap();
        let h3 = t.concat(h, s).unwrap();
        let _ = h3;
        let z = t.affine(&p, h, w3, b3).unwrap();
        let sv = t.affine(&p, s, w3, b3).unwrap();
        let z = t.add(z, sv).unwrap();
        let sh = t.param(&p, shift);
        let z = t.add(z, sh).unwrap();
        let tg = t.input(&target);
        let l = t.mse(z, tg).unwrap();
        if set {
            t.backward_set(l, &p, &mut grads, 0.5).unwrap();
        } else {
            t.backward_into(l, &p, &mut grads, 0.5).unwrap();
        }
        (grads, t.grad(v).clone())
    };
    let (added, leaf_added) = run(false);
    let (set, leaf_set) = run(true);
    for (i, id) in p.ids().enumerate() {
        let (a, s) = (added[i].data(), set[i].data());
        if p.is_frozen(id) {
            assert!(s.iter().all(|v| v.is_nan()), "a frozen parameter's gradient was written");
        } else {
            let bits = |m: &[f32]| m.iter().map(|v| v.to_bits() & 0x7fff_ffff).collect::<Vec<_>>();
            assert_eq!(bits(a), bits(s), "parameter {} differs", p.name(id));
        }
    }
    assert!(set[p.ids().position(|id| id == w1).unwrap()].row(10).iter().all(|&v| v == 0.0), "an unset feature's row kept its garbage");
    assert_eq!(leaf_added, leaf_set);
    assert!(leaf_set.data().iter().all(|v| v.is_finite()) && leaf_set.data().iter().any(|&v| v != 0.0));
}
