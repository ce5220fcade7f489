//! The two networks of NeuroChess (seed §3, §5):
//! - **V**, the evaluation net: F features → `hidden` tanh units (0 to 80; 0 is a linear
//!   model) → one tanh output, White's expected result in (−1, 1);
//! - **M**, the chess model: F → 165 tanh → F linear, the features of the board two
//!   half-moves later ([`super::chess_model`], re-exported here).
//!
//! F is the width of the net's feature set ([`FeatureSet`]: ours, 175, or GNU Chess's terms,
//! 58), recorded in its architecture.
//!
//! V's training fits values *and slopes* (Tangent-Prop): its loss on a board is
//! `a·(V(x) − t)² + λ·‖∇ₓV(x) − s‖²`, so its gradient needs the derivative of an
//! input-gradient with respect to the weights. For this one-hidden-layer shape it is written
//! out by hand in [`Value::accumulate`] (the derivation is in its comments) and checked
//! against finite differences in the tests. M is trained on the tape (`tensor::autograd`);
//! EBNN needs only its vector–Jacobian product, [`Model::vjp`].
//!
//! Parameter names: V `v.w1` (F × H, one row per feature), `v.b1`, `v.w2` (H × 1; F × 1
//! when H = 0), `v.b2`; M `m.w1` (F × 165), `m.b1`, `m.w2` (165 × F), `m.b2`.

pub use super::feature_set::FeatureSet;
use super::feature_set::TAGS;
use crate::tensor::{params_of, Architecture, Field, Init, Layer, Matrix, NetFile, ParamId, Params, Result, Rng, Value as FieldValue, Values};

pub use super::chess_model::{Model, ModelArch, MODEL_HIDDEN};
/// The most hidden units V may have (the seed's 80).
pub const MAX_HIDDEN: usize = 80;


/// V's architecture, `175-H-1` (`gnu58-H-1` on GNU Chess's terms): the feature set, the
/// hidden units (0 to 80; 0: V is linear), one output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueArch {
    pub features: FeatureSet,
    pub hidden: usize,
}

impl Architecture for ValueArch {
    const FORM: &'static [Field] = &[Field::Word { name: "features", words: TAGS }, Field::Text("-"), Field::Width { name: "hidden", min: 0, max: MAX_HIDDEN }, Field::Text("-1")];

    fn values(&self) -> Vec<FieldValue> {
        vec![FieldValue::Word(self.features.tag()), FieldValue::Width(self.hidden)]
    }

    fn from_values(mut v: Values) -> std::result::Result<ValueArch, String> {
        Ok(ValueArch { features: FeatureSet::from_tag(v.word()).expect("a tag of TAGS"), hidden: v.width() })
    }

    /// `v.w1`, `v.b1` (F × H, absent when H is 0), `v.w2`, `v.b2` (H × 1, or F × 1).
    fn layers(&self) -> Vec<Layer> {
        let n = self.features.width();
        if self.hidden == 0 {
            return vec![Layer::Named { weight: "v.w2", bias: "v.b2", inputs: n, outputs: 1 }];
        }
        vec![Layer::Named { weight: "v.w1", bias: "v.b1", inputs: n, outputs: self.hidden }, Layer::Named { weight: "v.w2", bias: "v.b2", inputs: self.hidden, outputs: 1 }]
    }
}

/// The evaluation net V.
#[derive(Clone)]
pub struct Value {
    /// The board features it reads.
    pub features: FeatureSet,
    pub hidden: usize,
    pub params: Params,
    /// `v.w1`, `v.b1`, `v.w2`, `v.b2` (the first two absent when `hidden` is 0).
    pub ids: [Option<ParamId>; 4],
}

/// What one board's forward pass leaves for the backward one.
#[derive(Clone, Debug, Default)]
pub struct Pass {
    /// Hidden activations `h = tanh(x·W1 + b1)`.
    pub h: Vec<f32>,
    /// The output `V = tanh(u)`.
    pub v: f32,
}

impl Value {
    /// V on our 175 features with `hidden` units (0 to 80), Xavier-initialised.
    pub fn new(hidden: usize, rng: &mut Rng) -> Value {
        Value::with_features(FeatureSet::Ours, hidden, rng)
    }

    /// V on `features` with `hidden` units (0 to 80), Xavier-initialised.
    pub fn with_features(features: FeatureSet, hidden: usize, rng: &mut Rng) -> Value {
        assert!(hidden <= MAX_HIDDEN, "at most {MAX_HIDDEN} hidden units");
        let n = features.width();
        let mut params = Params::new();
        let mut ids = [None; 4];
        let last_in = if hidden == 0 { n } else { hidden };
        if hidden > 0 {
            ids[0] = Some(params.add("v.w1", Init::XavierUniform.matrix(n, hidden, rng)).expect("new name"));
            ids[1] = Some(params.add("v.b1", Matrix::zeros(1, hidden)).expect("new name"));
        }
        ids[2] = Some(params.add("v.w2", Init::XavierUniform.matrix(last_in, 1, rng)).expect("new name"));
        ids[3] = Some(params.add("v.b2", Matrix::zeros(1, 1)).expect("new name"));
        Value { features, hidden, params, ids }
    }

    /// Inputs per board.
    pub fn width(&self) -> usize {
        self.features.width()
    }

    fn id(&self, k: usize) -> ParamId {
        self.ids[k].expect("a layer of this shape")
    }

    /// `175-H-1` (`gnu58-H-1` on GNU Chess's terms).
    pub fn describe(&self) -> String {
        self.arch().describe()
    }

    /// The weights as the fast inference path reads them: W1 (F rows of H, row-major), b1,
    /// w2 (H, or F without a hidden layer), b2.
    pub fn weights(&self) -> (&[f32], &[f32], &[f32], f32) {
        let w2 = self.params.value(self.id(2)).data();
        let b2 = self.params.value(self.id(3)).get(0, 0);
        if self.hidden == 0 {
            return (&[], &[], w2, b2);
        }
        (self.params.value(self.id(0)).data(), self.params.value(self.id(1)).data(), w2, b2)
    }

    /// V(x) and what the backward pass needs.
    pub fn forward(&self, x: &[f32], pass: &mut Pass) -> f32 {
        let w2 = self.params.value(self.id(2)).data();
        let u = if self.hidden == 0 {
            x.iter().zip(w2).map(|(a, b)| a * b).sum::<f32>()
        } else {
            let (w1, b1) = (self.params.value(self.id(0)).data(), self.params.value(self.id(1)).data());
            let h = self.hidden;
            pass.h.clear();
            pass.h.extend_from_slice(b1);
            for (i, &xi) in x.iter().enumerate() {
                if xi != 0.0 {
                    for (a, w) in pass.h.iter_mut().zip(&w1[i * h..(i + 1) * h]) {
                        *a += xi * w;
                    }
                }
            }
            pass.h.iter_mut().for_each(|a| *a = a.tanh());
            pass.h.iter().zip(w2).map(|(a, b)| a * b).sum::<f32>()
        } + self.params.value(self.id(3)).get(0, 0);
        pass.v = u.tanh();
        pass.v
    }

    /// ∇ₓV at the board of `pass` (after [`Value::forward`]), into `g` (F).
    pub fn input_gradient(&self, pass: &Pass, g: &mut [f32]) {
        self.input_gradient_scaled(pass, 1.0 - pass.v * pass.v, g);
    }

    /// `a·∇ₓu` at the board of `pass`, u V's logit (V = tanh u): `a = 1 − V²` gives ∇ₓV;
    /// another board's `1 − V²` gives the slope the logit's slope would have at that board's
    /// level (EBNN's slopes carried in the logit, [`super::train::TdCfg::slope_logit`]).
    pub fn input_gradient_scaled(&self, pass: &Pass, a: f32, g: &mut [f32]) {
        let w2 = self.params.value(self.id(2)).data();
        if self.hidden == 0 {
            g.iter_mut().zip(w2).for_each(|(gi, w)| *gi = a * w);
            return;
        }
        let (w1, h) = (self.params.value(self.id(0)).data(), self.hidden);
        // g = a · W1 c, c_j = (1 − h_j²) w2_j.
        let c: Vec<f32> = pass.h.iter().zip(w2).map(|(hj, w)| (1.0 - hj * hj) * w).collect();
        for (i, gi) in g.iter_mut().enumerate().take(self.width()) {
            *gi = a * w1[i * h..(i + 1) * h].iter().zip(&c).map(|(w, cj)| w * cj).sum::<f32>();
        }
    }

    /// Adds to the parameters' gradients those of
    /// `value_weight·(V(x) − target)² + slope_weight·‖∇ₓV(x) − slope‖²` at board `x`; returns
    /// the two terms. `slope` is skipped when `None` (plain back-propagation); its third part,
    /// when given, weighs each feature's slope term (`λ·w_i`: 0 leaves that feature's slope free).
    ///
    /// With `z = x·W1 + b1`, `h = tanh z`, `u = h·w2 + b2`, `V = tanh u`, `a = 1 − V²`,
    /// `c_j = (1 − h_j²)·w2_j`: `∇ₓV = a·W1·c`. For the slope term, with `r = ∇ₓV − s` and
    /// `e = 2λr`: ∂/∂W1\[i,j\] gets `e_i·a·c_j`; through `c`, `p = a·W1ᵀe` gives
    /// ∂/∂w2_j `p_j(1 − h_j²)` and ∂/∂h_j `−2 p_j w2_j h_j`; through `a`, ∂/∂u gets
    /// `(e·W1c)·(−2Va)`. Then u, h and z back-propagate as in the value term.
    pub fn accumulate(&mut self, x: &[f32], target: f32, value_weight: f32, slope: Option<(&[f32], f32, Option<&[f32]>)>, pass: &mut Pass) -> (f32, f32) {
        let v = self.forward(x, pass);
        let a = 1.0 - v * v;
        let mut du = 2.0 * value_weight * (v - target) * a;
        let value_loss = value_weight * (v - target) * (v - target);
        let mut slope_loss = 0.0;
        let h = self.hidden;
        let n = self.width();
        if h == 0 {
            let w2 = self.params.value(self.id(2)).data().to_vec();
            let mut gw2 = vec![0.0f32; n];
            if let Some((s, weight, per)) = slope {
                // ∇ₓV = a·w2: ∂/∂w2_i gets e_i·a, ∂/∂u gets (e·w2)(−2Va).
                let mut ew = 0.0;
                for i in 0..n {
                    let lambda = per.map_or(weight, |p| weight * p[i]);
                    let r = a * w2[i] - s[i];
                    slope_loss += lambda * r * r;
                    let e = 2.0 * lambda * r;
                    gw2[i] += e * a;
                    ew += e * w2[i];
                }
                du += ew * (-2.0 * v * a);
            }
            for i in 0..n {
                gw2[i] += du * x[i];
            }
            add(self.params.grad_mut(self.id(2)).data_mut(), &gw2);
            self.params.grad_mut(self.id(3)).data_mut()[0] += du;
            return (value_loss, slope_loss);
        }
        let w1 = self.params.value(self.id(0)).data().to_vec();
        let w2 = self.params.value(self.id(2)).data().to_vec();
        let hv = pass.h.clone();
        let mut gw1 = vec![0.0f32; n * h];
        let mut gw2 = vec![0.0f32; h];
        let mut dh = vec![0.0f32; h];
        if let Some((s, weight, per)) = slope {
            let c: Vec<f32> = hv.iter().zip(&w2).map(|(hj, w)| (1.0 - hj * hj) * w).collect();
            let mut p = vec![0.0f32; h];
            let mut e_dot_q = 0.0;
            for i in 0..n {
                let lambda = per.map_or(weight, |p| weight * p[i]);
                let row = &w1[i * h..(i + 1) * h];
                let q: f32 = row.iter().zip(&c).map(|(w, cj)| w * cj).sum();
                let r = a * q - s[i];
                slope_loss += lambda * r * r;
                let e = 2.0 * lambda * r;
                e_dot_q += e * q;
                let g = &mut gw1[i * h..(i + 1) * h];
                for j in 0..h {
                    g[j] += e * a * c[j];
                    p[j] += a * e * row[j];
                }
            }
            du += e_dot_q * (-2.0 * v * a);
            for j in 0..h {
                gw2[j] += p[j] * (1.0 - hv[j] * hv[j]);
                dh[j] += -2.0 * p[j] * w2[j] * hv[j];
            }
        }
        for j in 0..h {
            gw2[j] += du * hv[j];
            dh[j] += du * w2[j];
        }
        let dz: Vec<f32> = dh.iter().zip(&hv).map(|(d, hj)| d * (1.0 - hj * hj)).collect();
        for (i, &xi) in x.iter().enumerate() {
            if xi != 0.0 {
                for (g, d) in gw1[i * h..(i + 1) * h].iter_mut().zip(&dz) {
                    *g += xi * d;
                }
            }
        }
        add(self.params.grad_mut(self.id(0)).data_mut(), &gw1);
        add(self.params.grad_mut(self.id(1)).data_mut(), &dz);
        add(self.params.grad_mut(self.id(2)).data_mut(), &gw2);
        self.params.grad_mut(self.id(3)).data_mut()[0] += du;
        (value_loss, slope_loss)
    }
}

fn add(acc: &mut [f32], g: &[f32]) {
    acc.iter_mut().zip(g).for_each(|(a, b)| *a += b);
}

impl NetFile for Value {
    const KIND: &'static str = "neurochess-v";
    const WHAT: &'static str = "a NeuroChess V net";
    type Arch = ValueArch;

    fn arch(&self) -> ValueArch {
        ValueArch { features: self.features, hidden: self.hidden }
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: ValueArch, tensors: Vec<(String, Matrix)>) -> Result<Value> {
        let (params, found) = params_of(tensors)?;
        // Without a hidden layer only w2 and b2 are there (slots 2 and 3).
        let mut ids = [None; 4];
        let first = if arch.hidden > 0 { 0 } else { 2 };
        for (k, id) in found.into_iter().enumerate() {
            ids[first + k] = Some(id);
        }
        Ok(Value { features: arch.features, hidden: arch.hidden, params, ids })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neurochess::features::FEATURES;

    /// The headers' tags are the feature sets' own, and both nets' architectures read back
    /// what they write; a header off the form is refused with the field at fault.
    #[test]
    fn architectures_describe_and_parse_back() {
        assert_eq!(FeatureSet::ALL.map(|f| f.tag()).to_vec(), TAGS.to_vec());
        for features in FeatureSet::ALL {
            for hidden in [0, 1, 80] {
                let a = ValueArch { features, hidden };
                assert_eq!(ValueArch::parse(&a.describe()), Some(a));
            }
            let m = ModelArch { features, residual: false };
            assert_eq!(ModelArch::parse(&m.describe()), Some(m));
        }
        assert_eq!(ValueArch { features: FeatureSet::Gnu, hidden: 8 }.describe(), "gnu58-8-1");
        assert_eq!(ModelArch { features: FeatureSet::Ours, residual: false }.describe(), "175-165-175");
        let r = ModelArch { features: FeatureSet::Gnu, residual: true };
        assert_eq!(r.describe(), "gnu58-165-gnu58+x");
        assert_eq!(ModelArch::parse("gnu58-165-gnu58+x"), Some(r));
        for (bad, why) in [("175-81-1", "hidden: 81 is not within 0 to 80"), ("176-8-1", "features: one of 175, gnu58 expected at '176-8-1'"), ("175-8-2", "'-1' expected at '-2'")] {
            assert_eq!(ValueArch::read(bad).unwrap_err(), format!("bad architecture '{bad}': {why}"));
        }
        for (bad, why) in [("175-165-gnu58", "M predicts the features it reads: gnu58 is not 175"), ("175-164-175", "hidden: 164 is not within 165 to 165")] {
            assert_eq!(ModelArch::read(bad).unwrap_err(), format!("bad architecture '{bad}': {why}"));
        }
    }

    fn input(rng: &mut Rng) -> Vec<f32> {
        // Feature-like: many zeros, the rest in [−1, 1].
        (0..FEATURES).map(|i| if i % 3 == 0 { 0.0 } else { rng.uniform(-1.0, 1.0) }).collect()
    }

    /// The loss `a(V − t)² + Σ λ·w_i(∂V/∂x_i − s_i)²` as a plain function of the parameters
    /// (for finite differences).
    fn loss(v: &Value, x: &[f32], t: f32, a: f32, s: Option<(&[f32], f32, Option<&[f32]>)>) -> f64 {
        let mut pass = Pass::default();
        let y = v.forward(x, &mut pass);
        let mut l = (a * (y - t) * (y - t)) as f64;
        if let Some((s, lambda, per)) = s {
            let mut g = vec![0.0; FEATURES];
            v.input_gradient(&pass, &mut g);
            let w = |i: usize| per.map_or(1.0, |p| p[i]) as f64;
            l += lambda as f64 * g.iter().zip(s).enumerate().map(|(i, (gi, si))| w(i) * ((gi - si) as f64).powi(2)).sum::<f64>();
        }
        l
    }

    /// Tangent-Prop's gradient (and the plain value gradient) against central finite
    /// differences, for a hidden layer and for none.
    #[test]
    fn tangent_prop_gradient_matches_finite_differences() {
        for hidden in [0usize, 7] {
            let mut rng = Rng::new(9 + hidden as u64);
            let mut v = Value::new(hidden, &mut rng);
            // Larger weights than the initialisation so the tanh curvature matters.
            for id in v.ids.iter().flatten() {
                v.params.value_mut(*id).data_mut().iter_mut().for_each(|w| *w *= 3.0);
            }
            let x = input(&mut rng);
            let s: Vec<f32> = (0..FEATURES).map(|_| rng.uniform(-0.05, 0.05)).collect();
            // Some features' slopes free (weight 0), the others weighed 1 and 0.5.
            let per: Vec<f32> = (0..FEATURES).map(|i| [0.0, 1.0, 0.5][i % 3]).collect();
            for slope in [None, Some((&s[..], 4.0f32, None)), Some((&s[..], 4.0f32, Some(&per[..])))] {
                for id in v.ids.iter().flatten() {
                    v.params.grad_mut(*id).data_mut().fill(0.0);
                }
                let mut pass = Pass::default();
                let (lv, ls) = v.accumulate(&x, 0.3, 2.0, slope, &mut pass);
                assert!(((lv + ls) as f64 - loss(&v, &x, 0.3, 2.0, slope)).abs() < 1e-5);
                for id in v.ids.iter().flatten().copied() {
                    let n = v.params.value(id).len();
                    for k in (0..n).step_by((n / 23).max(1)) {
                        let eps = 1e-3f32;
                        let orig = v.params.value(id).data()[k];
                        v.params.value_mut(id).data_mut()[k] = orig + eps;
                        let up = loss(&v, &x, 0.3, 2.0, slope);
                        v.params.value_mut(id).data_mut()[k] = orig - eps;
                        let down = loss(&v, &x, 0.3, 2.0, slope);
                        v.params.value_mut(id).data_mut()[k] = orig;
                        let fd = (up - down) / (2.0 * eps as f64);
                        let got = v.params.grad_mut(id).data()[k] as f64;
                        assert!((fd - got).abs() < 2e-3 * (1.0 + fd.abs()), "hidden {hidden}, slope {}, {} [{k}]: analytic {got}, numeric {fd}", slope.is_some(), v.params.name(id));
                    }
                }
            }
        }
    }

    /// ∇ₓV and M's vector–Jacobian product against finite differences in the input, M plain
    /// and predicting the change; the residual M's forward pass is its tape's.
    #[test]
    fn input_gradient_and_model_vjp_match_finite_differences() {
        let mut rng = Rng::new(4);
        let v = Value::new(11, &mut rng);
        let plain = Model::new(&mut rng);
        let x = input(&mut rng);
        let dir: Vec<f32> = (0..FEATURES).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let mut pass = Pass::default();
        v.forward(&x, &mut pass);
        let mut g = vec![0.0; FEATURES];
        v.input_gradient(&pass, &mut g);
        let eps = 1e-3f32;
        for i in (0..FEATURES).step_by(7) {
            let (mut up, mut down) = (x.clone(), x.clone());
            up[i] += eps;
            down[i] -= eps;
            let fd = (v.forward(&up, &mut pass) - v.forward(&down, &mut pass)) / (2.0 * eps);
            assert!((fd - g[i]).abs() < 1e-3, "∇V[{i}]: {} vs {fd}", g[i]);
        }
        for m in [plain, Model::new(&mut Rng::new(9)).residual(true)] {
            let mut vjp = vec![0.0; FEATURES];
            m.vjp(&x, &dir, &mut vjp);
            let proj = |x: &[f32]| {
                let (mut h, mut y) = (Vec::new(), vec![0.0; FEATURES]);
                m.forward(x, &mut h, &mut y);
                y.iter().zip(&dir).map(|(a, b)| a * b).sum::<f32>()
            };
            for i in (0..FEATURES).step_by(7) {
                let (mut up, mut down) = (x.clone(), x.clone());
                up[i] += eps;
                down[i] -= eps;
                let fd = (proj(&up) - proj(&down)) / (2.0 * eps);
                assert!((fd - vjp[i]).abs() < 2e-3 * (1.0 + fd.abs()), "residual {}: vjp[{i}]: {} vs {fd}", m.residual, vjp[i]);
            }
            let mut tape = crate::tensor::Tape::new();
            let xm = Matrix::from_vec(1, FEATURES, x.clone()).unwrap();
            let (_, y) = m.loss_on_tape(&mut tape, &xm, &xm).unwrap();
            let (mut h, mut want) = (Vec::new(), vec![0.0; FEATURES]);
            m.forward(&x, &mut h, &mut want);
            for (a, b) in tape.value(y).data().iter().zip(&want) {
                assert!((a - b).abs() < 1e-5, "residual {}: tape {a} vs forward {b}", m.residual);
            }
        }
    }

    #[test]
    fn nets_save_and_load() {
        let dir = std::env::temp_dir().join(format!("deepchess-nc-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for hidden in [0, 5] {
            let v = Value::new(hidden, &mut Rng::new(1));
            let p = dir.join(format!("v{hidden}.dcw"));
            v.save(&p, &[]).unwrap();
            let (back, _) = Value::load(&p).unwrap();
            let x = vec![0.5; FEATURES];
            assert_eq!(back.forward(&x, &mut Pass::default()), v.forward(&x, &mut Pass::default()));
        }
        let m = Model::new(&mut Rng::new(2));
        m.save(&dir.join("m.dcw"), &[]).unwrap();
        assert!(!Model::load(&dir.join("m.dcw")).unwrap().0.residual);
        Model::new(&mut Rng::new(2)).residual(true).save(&dir.join("m-res.dcw"), &[]).unwrap();
        assert!(Model::load(&dir.join("m-res.dcw")).unwrap().0.residual);
        assert!(Value::load(&dir.join("m.dcw")).err().expect("M is not V").to_string().contains("not a NeuroChess V net"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
