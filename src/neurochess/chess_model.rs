//! The chess model M of NeuroChess (seed §3, §5): F features → 165 tanh → F linear, the
//! features of the board two half-moves later (F as [`super::model`] says). M is trained on
//! the tape (`tensor::autograd`) from expert games' pairs; EBNN needs only its vector–Jacobian
//! product, [`Model::vjp`]. Parameter names: `m.w1` (F × 165), `m.b1`, `m.w2` (165 × F), `m.b2`.

use super::feature_set::{FeatureSet, TAGS};
use crate::tensor::{params_of, Architecture, Field, Init, Layer, Matrix, NetFile, ParamId, Params, Result, Rng, Value as FieldValue, Values};

/// M's hidden width (the seed's 165).
pub const MODEL_HIDDEN: usize = 165;

/// M's architecture, `175-165-175` (`gnu58-165-gnu58`): its shape follows its feature set;
/// `+x` after it when M predicts the change (`M(x) = x + f(x)`, [`Model::residual`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelArch {
    pub features: FeatureSet,
    pub residual: bool,
}

impl Architecture for ModelArch {
    const FORM: &'static [Field] = &[
        Field::Word { name: "features", words: TAGS },
        Field::Text("-"),
        Field::Width { name: "hidden", min: MODEL_HIDDEN, max: MODEL_HIDDEN },
        Field::Text("-"),
        Field::Word { name: "outputs", words: TAGS },
        // Nothing (files made before it existed read as they did) or `+x`.
        Field::Word { name: "residual", words: &["", "+x"] },
    ];

    fn values(&self) -> Vec<FieldValue> {
        let skip = if self.residual { "+x" } else { "" };
        vec![FieldValue::Word(self.features.tag()), FieldValue::Width(MODEL_HIDDEN), FieldValue::Word(self.features.tag()), FieldValue::Word(skip)]
    }

    fn from_values(mut v: Values) -> std::result::Result<ModelArch, String> {
        let (inputs, _, outputs, skip) = (v.word(), v.width(), v.word(), v.word());
        if inputs != outputs {
            return Err(format!("M predicts the features it reads: {outputs} is not {inputs}"));
        }
        Ok(ModelArch { features: FeatureSet::from_tag(inputs).expect("a tag of TAGS"), residual: skip == "+x" })
    }

    /// `m.w1`, `m.b1` (F × 165), `m.w2`, `m.b2` (165 × F).
    fn layers(&self) -> Vec<Layer> {
        let n = self.features.width();
        vec![Layer::Named { weight: "m.w1", bias: "m.b1", inputs: n, outputs: MODEL_HIDDEN }, Layer::Named { weight: "m.w2", bias: "m.b2", inputs: MODEL_HIDDEN, outputs: n }]
    }
}

/// The chess model M: the features of the board two half-moves later.
pub struct Model {
    /// The board features it reads and predicts.
    pub features: FeatureSet,
    /// M predicts the change: `M(x) = x + f(x)`, f the two layers (beyond the seed, issue 82:
    /// the identity's Jacobian is then built in, so a feature that persists keeps its slope).
    pub residual: bool,
    pub params: Params,
    pub w1: ParamId,
    pub b1: ParamId,
    pub w2: ParamId,
    pub b2: ParamId,
}

impl Model {
    /// M on our 175 features.
    pub fn new(rng: &mut Rng) -> Model {
        Model::with_features(FeatureSet::Ours, rng)
    }

    pub fn with_features(features: FeatureSet, rng: &mut Rng) -> Model {
        let n = features.width();
        let mut params = Params::new();
        let w1 = params.add("m.w1", Init::XavierUniform.matrix(n, MODEL_HIDDEN, rng)).expect("new name");
        let b1 = params.add("m.b1", Matrix::zeros(1, MODEL_HIDDEN)).expect("new name");
        let w2 = params.add("m.w2", Init::XavierUniform.matrix(MODEL_HIDDEN, n, rng)).expect("new name");
        let b2 = params.add("m.b2", Matrix::zeros(1, n)).expect("new name");
        Model { features, residual: false, params, w1, b1, w2, b2 }
    }

    /// The same M predicting the change, `M(x) = x + f(x)` (`residual`).
    pub fn residual(mut self, residual: bool) -> Model {
        self.residual = residual;
        self
    }

    /// Inputs (and outputs) per board.
    pub fn width(&self) -> usize {
        self.features.width()
    }

    /// `175-165-175` (`gnu58-165-gnu58` on GNU Chess's terms).
    pub fn describe(&self) -> String {
        self.arch().describe()
    }

    /// M(x) on a batch on the tape, and the squared-error loss against `target`.
    pub fn loss_on_tape(&self, tape: &mut crate::tensor::Tape, x: &Matrix, target: &Matrix) -> Result<(crate::tensor::Var, crate::tensor::Var)> {
        let xv = tape.input(x);
        let z = tape.affine(&self.params, xv, self.w1, self.b1)?;
        let h = tape.tanh(z)?;
        let mut y = tape.affine(&self.params, h, self.w2, self.b2)?;
        if self.residual {
            y = tape.add(y, xv)?;
        }
        let t = tape.input(target);
        Ok((tape.mse(y, t)?, y))
    }

    /// M(x) for one board, into `y` (F), the hidden activations into `h` (165).
    pub fn forward(&self, x: &[f32], h: &mut Vec<f32>, y: &mut [f32]) {
        let (w1, b1) = (self.params.value(self.w1).data(), self.params.value(self.b1).data());
        let (w2, b2) = (self.params.value(self.w2).data(), self.params.value(self.b2).data());
        h.clear();
        h.extend_from_slice(b1);
        for (i, &xi) in x.iter().enumerate() {
            if xi != 0.0 {
                for (a, w) in h.iter_mut().zip(&w1[i * MODEL_HIDDEN..(i + 1) * MODEL_HIDDEN]) {
                    *a += xi * w;
                }
            }
        }
        h.iter_mut().for_each(|a| *a = a.tanh());
        y.copy_from_slice(b2);
        let n = self.width();
        for (j, &hj) in h.iter().enumerate() {
            for (o, w) in y.iter_mut().zip(&w2[j * n..(j + 1) * n]) {
                *o += hj * w;
            }
        }
        if self.residual {
            y.iter_mut().zip(x).for_each(|(o, xi)| *o += xi);
        }
    }

    /// `vᵀ·∂M(x)/∂x` (F): how the features of `x` move `v · M(x)`. EBNN's target slope is
    /// `γ · vjp(x_t, ∇V(x_{t+2}))`.
    pub fn vjp(&self, x: &[f32], v: &[f32], out: &mut [f32]) {
        let mut h = Vec::with_capacity(MODEL_HIDDEN);
        let mut y = vec![0.0f32; self.width()];
        self.forward(x, &mut h, &mut y);
        self.vjp_at(&h, v, out);
    }

    /// [`Model::vjp`] at a board whose hidden activations `h` [`Model::forward`] has made.
    pub fn vjp_at(&self, h: &[f32], v: &[f32], out: &mut [f32]) {
        let n = self.width();
        let (w1, w2) = (self.params.value(self.w1).data(), self.params.value(self.w2).data());
        // d = (W2 v) ⊙ (1 − h²), then out = W1 d.
        let d: Vec<f32> = (0..MODEL_HIDDEN)
            .map(|j| w2[j * n..(j + 1) * n].iter().zip(v).map(|(w, vi)| w * vi).sum::<f32>() * (1.0 - h[j] * h[j]))
            .collect();
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = w1[i * MODEL_HIDDEN..(i + 1) * MODEL_HIDDEN].iter().zip(&d).map(|(w, dj)| w * dj).sum();
            // The identity's part of the Jacobian: vᵀ·I.
            if self.residual {
                *o += v[i];
            }
        }
    }
}

impl NetFile for Model {
    const KIND: &'static str = "neurochess-m";
    const WHAT: &'static str = "a NeuroChess chess model";
    type Arch = ModelArch;

    fn arch(&self) -> ModelArch {
        ModelArch { features: self.features, residual: self.residual }
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: ModelArch, tensors: Vec<(String, Matrix)>) -> Result<Model> {
        let (params, ids) = params_of(tensors)?;
        Ok(Model { features: arch.features, residual: arch.residual, params, w1: ids[0], b1: ids[1], w2: ids[2], b2: ids[3] })
    }
}
