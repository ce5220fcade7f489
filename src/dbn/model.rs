//! The deep belief network of section III.B, defined once: hidden ReLU layers (each first
//! pretrained as an RBM, see [`super::rbm`] and [`super::train::pretrain`]) and one of three output layers, the
//! forward pass on a training tape (dropout on every hidden layer while fine-tuning), the
//! loss of each head, and net files. The search's inference ([`super::player`]) is built
//! from a loaded [`Dbn`].
//!
//! Parameter names: `hidden.K.w` (in × out, one row per input bit), `hidden.K.b`, `out.w`,
//! `out.b`.

use super::features::Encoding;
use crate::tensor::{Architecture, Field, Init, Layer, Matrix, ParamId, Params, Result, Rng, SparseBatch, Tape, Value, Values, Var};

/// The three approaches of section III.A.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Head {
    /// Win / draw / loss: softmax and categorical cross-entropy.
    Classify,
    /// The normalised engine score: tanh and Huber loss.
    Regress,
    /// The engine score in seven classes: softmax and categorical cross-entropy.
    Quantized,
}

impl Head {
    pub const ALL: [Head; 3] = [Head::Classify, Head::Regress, Head::Quantized];
    /// Their names, in the order of [`Head::ALL`].
    const NAMES: &'static [&'static str] = &["classify", "regress", "quantized"];

    pub fn outputs(self) -> usize {
        match self {
            Head::Classify => 3,
            Head::Regress => 1,
            Head::Quantized => super::targets::CLASSES,
        }
    }

    pub fn name(self) -> &'static str {
        Head::NAMES[self as usize]
    }

    pub fn parse(s: &str) -> Option<Head> {
        Head::ALL.into_iter().find(|h| h.name() == s)
    }
}

/// Huber's threshold on the normalised score (Keras' default; the seed names no value).
/// With targets in [−1, 1] it is quadratic for errors under 300 cp.
pub const HUBER_DELTA: f32 = 1.0;

/// Input, hidden layer sizes and head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arch {
    pub encoding: Encoding,
    pub hidden: Vec<usize>,
    pub head: Head,
}

impl Arch {
    /// The seed's three configurations (section III.B): [772, 100, 100, 100],
    /// [772, 400, 200, 100], [772, 600, 400, 200, 100].
    pub fn configs() -> [Vec<usize>; 3] {
        [vec![100, 100, 100], vec![400, 200, 100], vec![600, 400, 200, 100]]
    }

    pub fn new(encoding: Encoding, hidden: Vec<usize>, head: Head) -> Arch {
        Arch { encoding, hidden, head }
    }

    /// Layer widths from the input to the last hidden layer.
    pub fn widths(&self) -> Vec<usize> {
        std::iter::once(self.encoding.inputs()).chain(self.hidden.iter().copied()).collect()
    }

    /// The hidden layers alone, `772-100-100-100`: names a configuration (the text of
    /// the header without its head; not [`Architecture::layers`], the layers' tensors).
    pub fn layers(&self) -> String {
        self.widths().iter().map(usize::to_string).collect::<Vec<_>>().join("-")
    }
}

/// `772-100-100-100/quantized`: the input bits and the hidden widths (one to eight layers of
/// at most 4,096 units), then the head.
impl Architecture for Arch {
    const FORM: &'static [Field] = &[
        Field::Widths { name: "layers", len: (2, 9), min: 1, max: 4096 },
        Field::Text("/"),
        Field::Word { name: "head", words: Head::NAMES },
    ];

    fn values(&self) -> Vec<Value> {
        vec![Value::Widths(self.widths()), Value::Word(self.head.name())]
    }

    fn from_values(mut v: Values) -> std::result::Result<Arch, String> {
        let w = v.widths();
        let encoding = Encoding::from_inputs(w[0]).ok_or_else(|| format!("the input is 772 or 773 bits, not {}", w[0]))?;
        let head = Head::parse(v.word()).expect("a word of Head::NAMES");
        Ok(Arch { encoding, hidden: w[1..].to_vec(), head })
    }

    /// `hidden.K` per hidden layer, then `out`, in the order [`Dbn::new`] creates them.
    fn layers(&self) -> Vec<Layer> {
        let w = self.widths();
        let mut out: Vec<Layer> = w.windows(2).enumerate().map(|(i, p)| Layer::dense(format!("hidden.{i}"), p[0], p[1])).collect();
        out.push(Layer::dense("out", *w.last().expect("at least the input"), self.head.outputs()));
        out
    }
}

/// A deep belief network: parameters and each layer's ids.
pub struct Dbn {
    pub arch: Arch,
    pub params: Params,
    pub hidden: Vec<(ParamId, ParamId)>,
    pub out: (ParamId, ParamId),
}

impl Dbn {
    /// He-initialised hidden layers (replaced by pretraining) and a Xavier output layer. The
    /// sparse first layer is scaled for its effective fan-in (about 34 set bits, not 772).
    pub fn new(arch: Arch, rng: &mut Rng) -> Dbn {
        let inputs = arch.encoding.inputs();
        let tensors = arch
            .shapes()
            .into_iter()
            .map(|(name, n_in, n_out)| {
                let m = if name.ends_with(".b") {
                    Matrix::zeros(1, n_out)
                } else if name == "out.w" {
                    Init::XavierUniform.matrix(n_in, n_out, rng)
                } else {
                    let mut m = Init::HeNormal.matrix(n_in, n_out, rng);
                    if n_in == inputs {
                        let s = (inputs as f32 / 34.0).sqrt();
                        m.data_mut().iter_mut().for_each(|x| *x *= s);
                    }
                    m
                };
                (name, m)
            })
            .collect();
        Dbn::assemble(arch, tensors)
    }

    fn assemble(arch: Arch, tensors: Vec<(String, Matrix)>) -> Dbn {
        let mut params = Params::new();
        let ids: Vec<ParamId> = tensors.into_iter().map(|(n, m)| params.add(&n, m).expect("distinct names")).collect();
        let n = arch.hidden.len();
        let hidden = (0..n).map(|i| (ids[2 * i], ids[2 * i + 1])).collect();
        Dbn { arch, params, hidden, out: (ids[2 * n], ids[2 * n + 1]) }
    }

    /// The output layer's pre-activation on a tape (logits; for regression, before tanh),
    /// with dropout of `rate` after every hidden layer when `dropout` is given.
    pub fn logits_on_tape(&self, tape: &mut Tape, x: &SparseBatch, mut dropout: Option<(f32, &mut Rng)>) -> Result<Var> {
        let (w, b) = self.hidden[0];
        let mut h = tape.sparse_affine(&self.params, x, w, b)?;
        for (i, _) in self.hidden.iter().enumerate() {
            if i > 0 {
                let (w, b) = self.hidden[i];
                h = tape.affine(&self.params, h, w, b)?;
            }
            h = tape.relu(h)?;
            if let Some((rate, rng)) = dropout.as_mut() {
                h = tape.dropout(h, *rate, rng)?;
            }
        }
        tape.affine(&self.params, h, self.out.0, self.out.1)
    }

    /// The head's loss on a tape: cross-entropy against `classes` (classify, quantized) or
    /// Huber against `scores` (regress), and the head's output (probabilities' logits or
    /// the tanh value).
    pub fn loss_on_tape(&self, tape: &mut Tape, z: Var, classes: &[usize], scores: &Matrix) -> Result<(Var, Var)> {
        match self.arch.head {
            Head::Classify | Head::Quantized => {
                let t = tape.one_hot(classes, self.arch.head.outputs())?;
                Ok((tape.softmax_cross_entropy(z, t)?, z))
            }
            Head::Regress => {
                let y = tape.tanh(z)?;
                let t = tape.input(scores);
                Ok((tape.huber(y, t, HUBER_DELTA)?, y))
            }
        }
    }
}

impl crate::tensor::NetFile for Dbn {
    const KIND: &'static str = "dbn-net";
    const WHAT: &'static str = "a DBN net";
    type Arch = Arch;

    fn arch(&self) -> Arch {
        self.arch.clone()
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: Arch, tensors: Vec<(String, Matrix)>) -> Result<Dbn> {
        Ok(Dbn::assemble(arch, tensors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_describe_and_parse_back() {
        for hidden in Arch::configs() {
            for head in Head::ALL {
                for enc in [Encoding::Bits772, Encoding::Bits773] {
                    let a = Arch::new(enc, hidden.clone(), head);
                    assert_eq!(Arch::parse(&a.describe()), Some(a.clone()), "{}", a.describe());
                }
            }
        }
        assert_eq!(Arch::new(Encoding::Bits772, vec![100, 100, 100], Head::Quantized).describe(), "772-100-100-100/quantized");
        for bad in ["772/classify", "771-100/classify", "772-100/other", "772-0/regress", "772-100", "772-99999/regress"] {
            assert!(Arch::parse(bad).is_none(), "{bad}");
        }
    }
}
