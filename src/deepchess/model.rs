//! The networks of the paper (section 3), defined once: parameters, the forward pass on a
//! training tape, and net files. The search's fast inference (`infer/`) is built from a
//! loaded [`Net`]; batches without a tape (`compare`, `accuracy`) run the tape's forward.
//! - **Pos2Vec**: the feature tower 773-600-400-200-100 (ReLU), first layer sparse.
//! - **DeepChess**: two towers with tied weights, their outputs concatenated, then
//!   400-200-100-2 and a softmax: output 0 is "the first position is the better one for White".
//! - **Distilled**: tower 773-100-100-100 and head 100-100-2.
//!
//! Parameter names: `tower.K.w` (in × out, one row per input feature), `tower.K.b`,
//! `head.K.w`, `head.K.b`.

use super::features::INPUTS;
use crate::tensor::{Architecture, Field, Init, Layer, Matrix, ParamId, Params, Result, Rng, SparseBatch, Tape, TensorError, Value, Values, Var};

/// The largest width a header may give a layer (the paper's widest is 773).
const MAX_WIDTH: usize = 1 << 16;

/// Layer sizes: `tower[0]` is the 773 inputs; the head's input is `2 × tower.last()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arch {
    pub tower: Vec<usize>,
    pub head: Vec<usize>,
}

impl Arch {
    /// The paper's DeepChess: 773-600-400-200-100 towers, 400-200-100-2 head.
    pub fn big() -> Arch {
        Arch { tower: vec![INPUTS, 600, 400, 200, 100], head: vec![400, 200, 100, 2] }
    }

    /// The paper's distilled network: 773-100-100-100 towers, 100-100-2 head.
    pub fn small() -> Arch {
        Arch { tower: vec![INPUTS, 100, 100, 100], head: vec![100, 100, 2] }
    }

    /// Beyond the paper: a narrower student for the engine, 773-32-32 towers and a 32-2
    /// head (one hidden layer, so a comparison is a 32-wide sum, ReLU and dot product).
    /// Distilled from DeepChess like the paper's, as accurate on held-out games and faster
    /// in the search (docs/results.md).
    pub fn compact() -> Arch {
        Arch { tower: vec![INPUTS, 32, 32], head: vec![32, 2] }
    }

    pub fn features(&self) -> usize {
        *self.tower.last().unwrap()
    }
}

/// `773-600-400-200-100/400-200-100-2`: the tower's widths from its 773 inputs, then the
/// head's, from the two towers' features side by side to its 2 logits.
impl Architecture for Arch {
    const FORM: &'static [Field] = &[
        Field::Widths { name: "tower", len: (2, 64), min: 1, max: MAX_WIDTH },
        Field::Text("/"),
        Field::Widths { name: "head", len: (1, 64), min: 1, max: MAX_WIDTH },
    ];

    fn values(&self) -> Vec<Value> {
        vec![Value::Widths(self.tower.clone()), Value::Widths(self.head.clone())]
    }

    fn from_values(mut v: Values) -> std::result::Result<Arch, String> {
        let arch = Arch { tower: v.widths(), head: v.widths() };
        if arch.tower[0] != INPUTS {
            return Err(format!("the tower starts at the {INPUTS} inputs, not {}", arch.tower[0]));
        }
        match arch.head.last() {
            Some(2) => Ok(arch),
            last => Err(format!("the head ends in 2 logits, not {}", last.copied().unwrap_or(0))),
        }
    }

    /// Per tower layer then per head layer (`tower.K`, `head.K`), in the order [`Net::new`]
    /// creates them; the head reads both towers' features.
    fn layers(&self) -> Vec<Layer> {
        let mut out: Vec<Layer> = self.tower.windows(2).enumerate().map(|(i, w)| Layer::dense(format!("tower.{i}"), w[0], w[1])).collect();
        let mut n_in = 2 * self.features();
        for (i, &n_out) in self.head.iter().enumerate() {
            out.push(Layer::dense(format!("head.{i}"), n_in, n_out));
            n_in = n_out;
        }
        out
    }
}

/// Tensors of `shapes` (weights in × out, biases 1 × out), He-initialised for ReLU layers,
/// biases zero; a sparse first layer's weights scaled for its effective fan-in (about 32 set
/// bits, not 773), so activations start at unit scale. Every DeepChess net starts here.
fn he_initialised(shapes: Vec<(String, usize, usize)>, rng: &mut Rng) -> Vec<(String, Matrix)> {
    shapes
            .into_iter()
            .map(|(name, n_in, n_out)| {
                if name.ends_with(".b") {
                    return (name, Matrix::zeros(1, n_out));
                }
                let mut m = Init::HeNormal.matrix(n_in, n_out, rng);
                if n_in == INPUTS {
                    let s = (INPUTS as f32 / 32.0).sqrt();
                    m.data_mut().iter_mut().for_each(|x| *x *= s);
                }
                (name, m)
            })
            .collect()
}

/// A DeepChess network: parameters and the ids of each layer.
pub struct Net {
    pub arch: Arch,
    pub params: Params,
    pub tower: Vec<(ParamId, ParamId)>,
    pub head: Vec<(ParamId, ParamId)>,
}

impl Net {
    /// He-initialised network ([`he_initialised`]).
    pub fn new(arch: Arch, rng: &mut Rng) -> Net {
        let tensors = he_initialised(arch.shapes(), rng);
        Net::assemble(arch, tensors)
    }

    /// A net from its tensors, given in the order of [`Arch::shapes`] with those shapes.
    fn assemble(arch: Arch, tensors: Vec<(String, Matrix)>) -> Net {
        let mut params = Params::new();
        let ids: Vec<ParamId> = tensors.into_iter().map(|(name, m)| params.add(&name, m).expect("names of Arch::shapes are distinct")).collect();
        let layers = |from: usize, n: usize| (0..n).map(|i| (ids[2 * (from + i)], ids[2 * (from + i) + 1])).collect::<Vec<_>>();
        let n_tower = arch.tower.len() - 1;
        let (tower, head) = (layers(0, n_tower), layers(n_tower, arch.head.len()));
        Net { arch, params, tower, head }
    }

    /// The tower on a tape: ReLU after every layer (the first one sparse).
    pub fn tower_on_tape(&self, tape: &mut Tape, x: &SparseBatch) -> Result<Var> {
        self.tower_on_tape_to(tape, x, self.tower.len())
    }

    /// The first `layers` layers of the tower on a tape.
    pub fn tower_on_tape_to(&self, tape: &mut Tape, x: &SparseBatch, layers: usize) -> Result<Var> {
        tower(tape, &self.params, &self.tower[..layers.max(1)], x)
    }

    /// Logits for pairs (a, b), both towers sharing (tying) the same parameters.
    pub fn pair_logits_on_tape(&self, tape: &mut Tape, xa: &SparseBatch, xb: &SparseBatch) -> Result<Var> {
        let mut both = SparseBatch::new(INPUTS);
        stack_pairs(xa, xb, 0..xa.rows(), &mut both);
        self.pair_logits_stacked(tape, &both)
    }

    /// Logits for the pairs of a stacked batch ([`stack_pairs`]: the first positions, then
    /// the second ones): both towers run as one batch of twice the rows (tied weights make
    /// them one tower), and the head reads the two halves side by side.
    pub fn pair_logits_stacked(&self, tape: &mut Tape, both: &SparseBatch) -> Result<Var> {
        stacked_logits(tape, &self.params, &self.tower, &self.head, both)
    }

    /// P(a better than b for White) for each pair `(a[i], b[i])` of input-bit lists: the
    /// tape's forward pass (as in training), a batch at a time.
    pub fn prob_better(&self, a: &[&[u16]], b: &[&[u16]]) -> Result<Vec<f32>> {
        if a.len() != b.len() {
            return Err(TensorError::shape("prob_better", format!("{} first positions, {} second", a.len(), b.len())));
        }
        let mut tape = Tape::new();
        let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
        let mut out = Vec::with_capacity(a.len());
        for (ca, cb) in a.chunks(1024).zip(b.chunks(1024)) {
            batch_of(ca, &mut xa);
            batch_of(cb, &mut xb);
            tape.reset();
            let z = self.pair_logits_on_tape(&mut tape, &xa, &xb)?;
            let z = tape.value(z);
            out.extend((0..ca.len()).map(|i| prob_first(z, i)));
        }
        Ok(out)
    }
}

/// P(output 0) of row `i` of a batch of head logits: the probability that the pair's first
/// position is the better one for White (softmax over two logits, written as training has
/// always computed it, so distillation targets and accuracies keep their exact rounding).
pub(super) fn prob_first(z: &Matrix, i: usize) -> f32 {
    1.0 / (1.0 + (z.get(i, 1) - z.get(i, 0)).exp())
}

/// Tower layers `layers` (the first one sparse) on a tape, ReLU after each: a function of
/// borrowed parameters, so that shards of a batch can run it at once.
fn tower(tape: &mut Tape, params: &Params, layers: &[(ParamId, ParamId)], x: &SparseBatch) -> Result<Var> {
    let (w, b) = layers[0];
    let mut h = tape.sparse_affine_relu(params, x, w, b)?;
    for &(w, b) in &layers[1..] {
        h = tape.affine_relu(params, h, w, b)?;
    }
    Ok(h)
}

/// [`Net::pair_logits_stacked`] on borrowed parameters: the tower on the stacked batch, its
/// two halves side by side, the head (ReLU between layers, none after the last).
pub(super) fn stacked_logits(tape: &mut Tape, params: &Params, tower_layers: &[(ParamId, ParamId)], head: &[(ParamId, ParamId)], both: &SparseBatch) -> Result<Var> {
    let f = tower(tape, params, tower_layers, both)?;
    let mut h = tape.pair_halves(f)?;
    for (i, &(w, b)) in head.iter().enumerate() {
        h = if i + 1 < head.len() { tape.affine_relu(params, h, w, b)? } else { tape.affine(params, h, w, b)? };
    }
    Ok(h)
}

/// Rows `rows` of `xa`, then the same rows of `xb`, into `out`: a stacked pair batch.
pub fn stack_pairs(xa: &SparseBatch, xb: &SparseBatch, rows: std::ops::Range<usize>, out: &mut SparseBatch) {
    out.clear();
    for x in [xa, xb] {
        for r in rows.clone() {
            out.push_row(x.row(r)).expect("rows of a batch of the same width");
        }
    }
}

/// A sparse batch from feature lists.
pub fn batch_of(rows: &[&[u16]], out: &mut SparseBatch) {
    out.clear();
    let mut buf: Vec<u32> = Vec::with_capacity(40);
    for r in rows {
        buf.clear();
        buf.extend(r.iter().map(|&i| i as u32));
        out.push_row(&buf).expect("feature index within 773");
    }
}

impl crate::tensor::NetFile for Net {
    const KIND: &'static str = "deepchess-net";
    const WHAT: &'static str = "a DeepChess net";
    /// Nets written before headers carried a kind are still read.
    const KIND_MAY_BE_MISSING: bool = true;
    type Arch = Arch;

    fn arch(&self) -> Arch {
        self.arch.clone()
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: Arch, tensors: Vec<(String, Matrix)>) -> Result<Net> {
        Ok(Net::assemble(arch, tensors))
    }
}

/// Beyond the paper: the value student's layers, `773-…-1`. One tower read as one number,
/// the value of [`draw_values`] in its logit units (ReLU between layers, none after the last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueArch {
    pub layers: Vec<usize>,
}

impl ValueArch {
    /// The compact net's tower, 773-32-32, and one output: the student starts from the
    /// teacher's tower ([`ValueNet::from_tower`]) and learns the output on top.
    pub fn compact() -> ValueArch {
        ValueArch { layers: vec![INPUTS, 32, 32, 1] }
    }

}

/// `773-32-32-1`: the widths from the 773 inputs to the one value.
impl Architecture for ValueArch {
    const FORM: &'static [Field] = &[Field::Widths { name: "layers", len: (3, 64), min: 1, max: MAX_WIDTH }];

    fn values(&self) -> Vec<Value> {
        vec![Value::Widths(self.layers.clone())]
    }

    fn from_values(mut v: Values) -> std::result::Result<ValueArch, String> {
        let layers = v.widths();
        if layers[0] != INPUTS {
            return Err(format!("the value student starts at the {INPUTS} inputs, not {}", layers[0]));
        }
        match layers.last() {
            Some(1) => Ok(ValueArch { layers }),
            last => Err(format!("the value student ends in 1 value, not {}", last.copied().unwrap_or(0))),
        }
    }

    /// `layer.K`: the weights (in × out) and the bias of each layer.
    fn layers(&self) -> Vec<Layer> {
        self.layers.windows(2).enumerate().map(|(i, w)| Layer::dense(format!("layer.{i}"), w[0], w[1])).collect()
    }
}

/// The value student (beyond the paper): one tower and a linear output, trained to give
/// each position the value its teacher gives it against its colour mirror ([`draw_values`]).
pub struct ValueNet {
    pub arch: ValueArch,
    pub params: Params,
    pub layers: Vec<(ParamId, ParamId)>,
}

impl ValueNet {
    /// He-initialised ([`he_initialised`]).
    pub fn new(arch: ValueArch, rng: &mut Rng) -> ValueNet {
        let tensors = he_initialised(arch.shapes(), rng);
        ValueNet::assemble(arch, tensors)
    }

    /// A new student whose leading layers are `teacher`'s tower layers, where their shapes
    /// agree (the compact student takes the compact net's whole tower); the rest as [`ValueNet::new`].
    pub fn from_tower(arch: ValueArch, teacher: &Net, rng: &mut Rng) -> ValueNet {
        let mut net = ValueNet::new(arch, rng);
        for (k, &(tw, tb)) in teacher.tower.iter().enumerate() {
            let Some(&(w, b)) = net.layers.get(k) else { break };
            if net.params.value(w).rows() != teacher.params.value(tw).rows() || net.params.value(w).cols() != teacher.params.value(tw).cols() {
                break;
            }
            net.params.value_mut(w).copy_from(teacher.params.value(tw));
            net.params.value_mut(b).copy_from(teacher.params.value(tb));
        }
        net
    }

    fn assemble(arch: ValueArch, tensors: Vec<(String, Matrix)>) -> ValueNet {
        let mut params = Params::new();
        let ids: Vec<ParamId> = tensors.into_iter().map(|(name, m)| params.add(&name, m).expect("names of ValueArch::shapes are distinct")).collect();
        let layers = ids.chunks(2).map(|c| (c[0], c[1])).collect();
        ValueNet { arch, params, layers }
    }

    /// Each position's value (logit units) for input-bit lists: the tape's forward pass.
    pub fn values(&self, rows: &[&[u16]]) -> Result<Vec<f32>> {
        let mut tape = Tape::new();
        let mut x = SparseBatch::new(INPUTS);
        let mut out = Vec::with_capacity(rows.len());
        for chunk in rows.chunks(1024) {
            batch_of(chunk, &mut x);
            tape.reset();
            let v = value_on_tape(&mut tape, &self.params, &self.layers, &x)?;
            out.extend_from_slice(tape.value(v).data());
        }
        Ok(out)
    }
}

/// The value student's forward pass on borrowed parameters (`rows × 1`): the sparse first
/// layer, ReLU after every layer but the last.
pub(super) fn value_on_tape(tape: &mut Tape, params: &Params, layers: &[(ParamId, ParamId)], x: &SparseBatch) -> Result<Var> {
    let (w, b) = layers[0];
    let mut h = tape.sparse_affine_relu(params, x, w, b)?;
    for (i, &(w, b)) in layers.iter().enumerate().skip(1) {
        h = if i + 1 < layers.len() { tape.affine_relu(params, h, w, b)? } else { tape.affine(params, h, w, b)? };
    }
    Ok(h)
}

/// The draw-referenced value of each position of `x`, whose colour mirrors are the rows of
/// `mirrors`: a quarter of the margin l(a, ā) − l(ā, a) of `net`'s logit differences, as the
/// search's value reading computes it (`infer::DrawValue`, before it rounds to centipawns).
pub fn draw_values(net: &Net, tape: &mut Tape, x: &SparseBatch, mirrors: &SparseBatch) -> Result<Vec<f32>> {
    tape.reset();
    let am = net.pair_logits_on_tape(tape, x, mirrors)?;
    let ma = net.pair_logits_on_tape(tape, mirrors, x)?;
    let (am, ma) = (tape.value(am), tape.value(ma));
    Ok((0..x.rows()).map(|i| 0.25 * ((am.get(i, 0) - am.get(i, 1)) - (ma.get(i, 0) - ma.get(i, 1)))).collect())
}

impl crate::tensor::NetFile for ValueNet {
    const KIND: &'static str = "deepchess-value-net";
    const WHAT: &'static str = "a DeepChess value student";
    type Arch = ValueArch;

    fn arch(&self) -> ValueArch {
        self.arch.clone()
    }

    fn params(&self) -> &Params {
        &self.params
    }

    fn from_tensors(arch: ValueArch, tensors: Vec<(String, Matrix)>) -> Result<ValueNet> {
        Ok(ValueNet::assemble(arch, tensors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped shapes write the headers they always had and read them back; a header off
    /// the form is refused with what is wrong (the fields' own refusals: `tensor::net_arch`).
    #[test]
    fn architectures_describe_and_parse_back() {
        for (a, text) in [(Arch::big(), "773-600-400-200-100/400-200-100-2"), (Arch::small(), "773-100-100-100/100-100-2"), (Arch::compact(), "773-32-32/32-2")] {
            assert_eq!(a.describe(), text);
            assert_eq!(Arch::parse(text), Some(a));
        }
        assert_eq!(Arch::parse("773-300-32/2").map(|a| a.head), Some(vec![2]), "a head of one layer");
        assert_eq!(ValueArch::compact().describe(), "773-32-32-1");
        assert_eq!(ValueArch::parse("773-32-32-1"), Some(ValueArch::compact()));
        for (bad, why) in [
            ("772-32/32-2", "the tower starts at the 773 inputs, not 772"),
            ("773-32/32-3", "the head ends in 2 logits, not 3"),
            ("773/32-2", "tower: 1 widths, not 2 to 64"),
            ("773-32-32-2", "'/' expected at ''"),
            ("773-0/2", "tower: 0 is not within 1 to 65536"),
        ] {
            assert_eq!(Arch::read(bad).unwrap_err(), format!("bad architecture '{bad}': {why}"));
        }
        assert_eq!(ValueArch::read("773-32-2").unwrap_err(), "bad architecture '773-32-2': the value student ends in 1 value, not 2");
        let shapes = Arch::compact().shapes();
        let want = [("tower.0.w", 773, 32), ("tower.0.b", 1, 32), ("tower.1.w", 32, 32), ("tower.1.b", 1, 32), ("head.0.w", 64, 32), ("head.0.b", 1, 32), ("head.1.w", 32, 2), ("head.1.b", 1, 2)];
        assert_eq!(shapes, want.map(|(n, r, c)| (n.to_string(), r, c)));
    }
}
