//! The seed's network ("Network architecture"), defined once: conv 400@4×4 → max pool 2×2
//! stride 2 (ceil: 5×5 → 3×3) → conv 200@2×2 → inner product 70, sigmoid, dropout 0.2 →
//! inner product 1, sigmoid; binary cross-entropy against "White won". Mocha's layers have no
//! activation unless one is named and the seed names none for the convolutions, so they are
//! linear ([`ConvAct::Linear`]); [`ConvAct::Relu`] is our variant.
//!
//! Parameter names: `conv1.w` ((4·4·7) × 400, rows `(ky·4 + kx)·7 + plane`), `conv1.b`,
//! `conv2.w`, `conv2.b`, `ip1.w`, `ip1.b`, `out.w`, `out.b`. Initialisation as Mocha's
//! defaults: weights uniform in ±√(3 / fan_in) (its "Xavier"), biases 0.

use super::features::{INPUTS, PLANES};
use crate::tensor::{Architecture, Conv2d, Field, Layer, Matrix, MaxPool2d, ParamId, Params, Result, Rng, Tape, TensorError, Value, Values, Var};

/// What follows each convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvAct {
    /// The seed's (Mocha's default identity neuron).
    Linear,
    /// Our variant.
    Relu,
}

impl ConvAct {
    /// Their names, in the order of the variants.
    const NAMES: &'static [&'static str] = &["linear", "relu"];

    pub fn name(self) -> &'static str {
        ConvAct::NAMES[self as usize]
    }

    pub fn parse(s: &str) -> Option<ConvAct> {
        [ConvAct::Linear, ConvAct::Relu].into_iter().find(|a| a.name() == s)
    }
}

/// Filter counts, hidden width and convolution activation. The kernel sizes, the pooling and
/// the 8×8×7 input are the seed's and fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arch {
    pub conv1: usize,
    pub conv2: usize,
    pub hidden: usize,
    pub act: ConvAct,
}

impl Arch {
    /// The seed's network.
    pub const SEED: Arch = Arch { conv1: 400, conv2: 200, hidden: 70, act: ConvAct::Linear };

    pub fn with_act(self, act: ConvAct) -> Arch {
        Arch { act, ..self }
    }

    /// First convolution: 8×8×7 → 5×5×conv1.
    pub fn conv1_shape(&self) -> Conv2d {
        Conv2d { in_h: 8, in_w: 8, in_c: PLANES, out_c: self.conv1, kh: 4, kw: 4, stride: 1, pad: 0 }
    }

    /// Max pooling 2×2, stride 2, ceil mode: 5×5 → 3×3.
    pub fn pool_shape(&self) -> MaxPool2d {
        MaxPool2d { in_h: 5, in_w: 5, c: self.conv1, k: 2, stride: 2, ceil: true }
    }

    /// Second convolution: 3×3×conv1 → 2×2×conv2.
    pub fn conv2_shape(&self) -> Conv2d {
        Conv2d { in_h: 3, in_w: 3, in_c: self.conv1, out_c: self.conv2, kh: 2, kw: 2, stride: 1, pad: 0 }
    }

    /// Multiply-adds × 2 of one forward pass.
    pub fn flops(&self) -> f64 {
        self.conv1_shape().flops() + self.conv2_shape().flops() + 2.0 * (self.conv2_shape().out_len() * self.hidden + self.hidden) as f64
    }
}

/// `8x8x7-c400k4-p2s2-c200k2-ip70-1/linear`: the filter counts and the hidden width (1 to
/// 4,096 each) between the seed's fixed input, kernels, pooling and output, then the
/// convolutions' activation.
impl Architecture for Arch {
    const FORM: &'static [Field] = &[
        Field::Text("8x8x7-c"),
        Field::Width { name: "conv1", min: 1, max: 4096 },
        Field::Text("k4-p2s2-c"),
        Field::Width { name: "conv2", min: 1, max: 4096 },
        Field::Text("k2-ip"),
        Field::Width { name: "hidden", min: 1, max: 4096 },
        Field::Text("-1/"),
        Field::Word { name: "activation", words: ConvAct::NAMES },
    ];

    fn values(&self) -> Vec<Value> {
        vec![Value::Width(self.conv1), Value::Width(self.conv2), Value::Width(self.hidden), Value::Word(self.act.name())]
    }

    fn from_values(mut v: Values) -> std::result::Result<Arch, String> {
        let (conv1, conv2, hidden) = (v.width(), v.width(), v.width());
        Ok(Arch { conv1, conv2, hidden, act: ConvAct::parse(v.word()).expect("a word of ConvAct::NAMES") })
    }

    /// conv1, conv2 (the pool between them has no tensors), ip1 and out, in creation order.
    fn layers(&self) -> Vec<Layer> {
        let c2 = self.conv2_shape();
        debug_assert_eq!(self.pool_shape().out_len(), c2.in_len());
        vec![Layer::conv("conv1", self.conv1_shape()), Layer::conv("conv2", c2), Layer::dense("ip1", c2.out_len(), self.hidden), Layer::dense("out", self.hidden, 1)]
    }
}

/// The network: parameters and the ids of its layers.
pub struct Cnn {
    pub arch: Arch,
    pub params: Params,
    pub conv1: (ParamId, ParamId),
    pub conv2: (ParamId, ParamId),
    pub ip1: (ParamId, ParamId),
    pub out: (ParamId, ParamId),
}

impl Cnn {
    /// Mocha's initialisation (see the module documentation).
    pub fn new(arch: Arch, rng: &mut Rng) -> Cnn {
        let tensors = arch
            .shapes()
            .into_iter()
            .map(|(name, rows, cols)| {
                let mut m = Matrix::zeros(rows, cols);
                if name.ends_with(".w") {
                    let scale = (3.0 / rows as f32).sqrt();
                    m.data_mut().iter_mut().for_each(|x| *x = rng.uniform(-scale, scale));
                }
                (name, m)
            })
            .collect();
        Cnn::assemble(arch, tensors)
    }

    fn assemble(arch: Arch, tensors: Vec<(String, Matrix)>) -> Cnn {
        let mut params = Params::new();
        let ids: Vec<ParamId> = tensors.into_iter().map(|(n, m)| params.add(&n, m).expect("distinct names")).collect();
        Cnn { arch, params, conv1: (ids[0], ids[1]), conv2: (ids[2], ids[3]), ip1: (ids[4], ids[5]), out: (ids[6], ids[7]) }
    }

    /// The weights (not the biases): what Mocha's default L2 regularisation applies to.
    pub fn weights(&self) -> [ParamId; 4] {
        [self.conv1.0, self.conv2.0, self.ip1.0, self.out.0]
    }

    /// The output logit (before the last sigmoid) for a batch `x` of encoded positions
    /// (`batch × 448`), with dropout after the hidden layer when `dropout` is given.
    pub fn logit_on_tape(&self, tape: &mut Tape, x: Var, dropout: Option<(f32, &mut Rng)>) -> Result<Var> {
        if tape.value(x).cols() != INPUTS {
            return Err(TensorError::Argument { what: "CNN input".into(), detail: format!("{} columns, not {INPUTS}", tape.value(x).cols()) });
        }
        let a = &self.arch;
        let relu = a.act == ConvAct::Relu;
        let conv = if relu { Tape::conv2d_relu } else { Tape::conv2d };
        let mut h = conv(tape, &self.params, x, self.conv1.0, self.conv1.1, a.conv1_shape())?;
        h = tape.max_pool2d(h, a.pool_shape())?;
        h = conv(tape, &self.params, h, self.conv2.0, self.conv2.1, a.conv2_shape())?;
        h = tape.affine(&self.params, h, self.ip1.0, self.ip1.1)?;
        h = tape.sigmoid(h)?;
        if let Some((rate, rng)) = dropout {
            h = tape.dropout(h, rate, rng)?;
        }
        tape.affine(&self.params, h, self.out.0, self.out.1)
    }

    /// P(White wins) and the binary cross-entropy against `labels` (`batch × 1`, 1 = White
    /// won): `(loss, probabilities)`.
    pub fn loss_on_tape(&self, tape: &mut Tape, logit: Var, labels: &Matrix) -> Result<(Var, Var)> {
        let p = tape.sigmoid(logit)?;
        let t = tape.input(labels);
        Ok((tape.binary_cross_entropy(p, t)?, p))
    }
}

impl crate::tensor::NetFile for Cnn {
    const KIND: &'static str = "cnn-net";
    const WHAT: &'static str = "a CNN net";
    type Arch = Arch;

    fn arch(&self) -> Arch {
        self.arch
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: Arch, tensors: Vec<(String, Matrix)>) -> Result<Cnn> {
        Ok(Cnn::assemble(arch, tensors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_shapes() {
        let a = Arch::SEED;
        assert_eq!((a.conv1_shape().out_h(), a.conv1_shape().out_w()), (5, 5));
        assert_eq!((a.pool_shape().out_h(), a.pool_shape().out_w()), (3, 3));
        assert_eq!((a.conv2_shape().out_h(), a.conv2_shape().out_w()), (2, 2));
        let n: usize = a.shapes().iter().map(|(_, r, c)| r * c).sum();
        // 112·400+400 + 1600·200+200 + 800·70+70 + 70+1
        assert_eq!(n, 44_800 + 400 + 320_000 + 200 + 56_000 + 70 + 71);
        assert_eq!(a.describe(), "8x8x7-c400k4-p2s2-c200k2-ip70-1/linear");
        for arch in [a, a.with_act(ConvAct::Relu), Arch { conv1: 8, conv2: 4, hidden: 3, act: ConvAct::Linear }] {
            assert_eq!(Arch::parse(&arch.describe()), Some(arch));
        }
        for bad in ["8x8x7-c400k4-p2s2-c200k2-ip70-1", "8x8x7-c0k4-p2s2-c200k2-ip70-1/linear", "8x8x6-c400k4-p2s2-c200k2-ip70-1/relu", "x/linear"] {
            assert!(Arch::parse(bad).is_none(), "{bad}");
        }
    }
}
