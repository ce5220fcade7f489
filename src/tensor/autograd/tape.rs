//! Reverse-mode autograd on a tape (as micrograd / candle do it): every op appends a
//! node (an `Op` over earlier node indices, its value, its gradient), and
//! [`Tape::backward`] walks the nodes in reverse with one `match` arm per op.
//!
//! Buffers are reused: [`Tape::reset`] forgets the graph but keeps every node's
//! matrices, so a training loop that builds the same graph each step stops allocating
//! after the first one. Parameters live in [`Params`] and are referred to by
//! [`ParamId`]; their gradients accumulate there (so tied weights get the sum).

use crate::tensor::error::{Result, TensorError};
use crate::tensor::layers;
use crate::tensor::matrix::Matrix;
use crate::tensor::autograd::params::{ParamId, Params};
use crate::tensor::rng::Rng;
use crate::tensor::layers::conv::{self, Conv2d};
use crate::tensor::layers::pool::{self, MaxPool2d};
use crate::tensor::kernels::simd::active_kernel;
use crate::tensor::layers::sparse::{self, SparseBatch};
use crate::tensor::kernels::vecops;

/// A value on the tape (index of its node).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Var(pub(crate) usize);

/// The operations the tape records.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// A constant (data, labels): gets no gradient.
    Input,
    /// A leaf whose gradient the caller wants to read ([`Tape::variable`]).
    Variable,
    /// A copy of a parameter's value; its gradient goes to the parameter.
    Param(ParamId),
    /// `X·W + b` with binary sparse `X` (index into the tape's sparse inputs).
    /// With `relu`, the output is `max(·, 0)` (one node instead of two: no copy, no mask pass).
    SparseAffine { x: usize, w: ParamId, b: ParamId, relu: bool },
    /// `x·W + b`.
    Affine { x: Var, w: ParamId, b: ParamId, relu: bool },
    Add(Var, Var),
    Relu(Var),
    Sigmoid(Var),
    Tanh(Var),
    /// Inverted dropout; `aux` keeps the mask already scaled (`0` or `1/(1-rate)`), so the
    /// backward pass multiplies by exactly what the forward pass did.
    Dropout(Var),
    /// Columns of the first then the second.
    Concat(Var, Var),
    PairHalves(Var),
    /// Mean over rows of `-Σ t·log softmax(z)`; `aux` keeps the probabilities.
    SoftmaxCrossEntropy { logits: Var, targets: Var },
    /// Mean over elements of `-(t·ln p + (1-t)·ln(1-p))`, `p` clamped to `[EPS, 1-EPS]`.
    BinaryCrossEntropy { p: Var, targets: Var },
    /// Binary cross-entropy of `σ(logits)`; `aux` keeps `σ(logits)`.
    BceWithLogits { logits: Var, targets: Var },
    /// Mean over elements of `(y - t)²`.
    Mse { pred: Var, target: Var },
    /// Mean over elements of Huber(`y - t`): quadratic within `delta`, linear outside.
    Huber { pred: Var, target: Var, delta: f32 },
    Sum(Var),
    Mean(Var),
    /// 2-D convolution of NHWC rows (im2col + GEMM, [`conv`]); with `relu`, the output is
    /// `max(·, 0)` (one node instead of two, as [`Op::Affine`]'s).
    Conv2d { x: Var, w: ParamId, b: ParamId, s: Conv2d, relu: bool },
    /// 2-D max pooling of NHWC rows; `argmax` indexes the tape's saved argmax lists.
    MaxPool2d { x: Var, s: MaxPool2d, argmax: usize },
}

impl Op {
    /// The tape values this op reads (at most two). Exhaustive on purpose: the backward
    /// pass's plan of which gradients need zeroing trusts this list, so a new op must say.
    pub(crate) fn inputs(&self) -> [Option<Var>; 2] {
        match *self {
            Op::Input | Op::Variable | Op::Param(_) | Op::SparseAffine { .. } => [None, None],
            Op::Affine { x, .. }
            | Op::Relu(x)
            | Op::Sigmoid(x)
            | Op::Tanh(x)
            | Op::Dropout(x)
            | Op::PairHalves(x)
            | Op::Sum(x)
            | Op::Mean(x)
            | Op::Conv2d { x, .. }
            | Op::MaxPool2d { x, .. } => [Some(x), None],
            Op::Add(a, b) | Op::Concat(a, b) => [Some(a), Some(b)],
            Op::SoftmaxCrossEntropy { logits: a, targets: b }
            | Op::BinaryCrossEntropy { p: a, targets: b }
            | Op::BceWithLogits { logits: a, targets: b }
            | Op::Mse { pred: a, target: b }
            | Op::Huber { pred: a, target: b, .. } => [Some(a), Some(b)],
        }
    }
}

/// Probability clamp of [`Tape::binary_cross_entropy`] (keeps logs finite).
pub const BCE_EPS: f32 = 1e-7;

pub(crate) struct Node {
    pub op: Op,
    pub value: Matrix,
    pub grad: Matrix,
    /// Op-specific saved data (softmax probabilities, the dropout mask).
    pub aux: Matrix,
    /// Whether any gradient must flow through this node.
    pub needs_grad: bool,
}

/// The autograd tape. See the module documentation.
#[derive(Default)]
pub struct Tape {
    pub(crate) nodes: Vec<Node>,
    pub(crate) len: usize,
    pub(crate) sparse: Vec<SparseBatch>,
    pub(crate) sparse_len: usize,
    /// Per max-pooling node, the input index each output took (reused like `sparse`).
    pub(crate) argmax: Vec<Vec<u32>>,
    pub(crate) argmax_len: usize,
    /// Throw-away gradient buffer (e.g. the bias gradient of a frozen bias).
    pub(crate) scratch: Matrix,
    /// The backward pass's plan (kept to reuse their buffers): per node, the last node
    /// that reads it; per node and per parameter, whether the first write of its gradient
    /// overwrites it (so it was not zeroed).
    pub(crate) last_reader: Vec<usize>,
    pub(crate) node_fresh: Vec<bool>,
    /// Per node: how many inputs of later nodes it is; whether its fused ReLU's backward
    /// is done by the product of its one reader (and so not again on its own).
    pub(crate) readers: Vec<u32>,
    pub(crate) node_masked: Vec<bool>,
    pub(crate) param_fresh: Vec<bool>,
    /// Per parameter: the last node that writes its gradient, and whether that is a layer's
    /// weight product.
    pub(crate) last_user: Vec<(usize, bool)>,
}

impl Tape {
    pub fn new() -> Self {
        Tape::default()
    }

    /// Forgets the recorded graph, keeping all buffers for the next one.
    pub fn reset(&mut self) {
        self.len = 0;
        self.sparse_len = 0;
        self.argmax_len = 0;
    }

    /// Number of nodes recorded since the last reset.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a node (reusing a buffer if one exists) and returns it with its index.
    fn push(&mut self, op: Op, needs_grad: bool) -> (usize, &mut Matrix) {
        if self.len == self.nodes.len() {
            self.nodes.push(Node { op, value: Matrix::default(), grad: Matrix::default(), aux: Matrix::default(), needs_grad });
        } else {
            let n = &mut self.nodes[self.len];
            n.op = op;
            n.needs_grad = needs_grad;
        }
        self.len += 1;
        (self.len - 1, &mut self.nodes[self.len - 1].value)
    }

    fn check_var(&self, v: Var, what: &str) -> Result<()> {
        if v.0 >= self.len {
            return Err(TensorError::Index { what: what.into(), detail: format!("variable {} not on this tape ({} nodes)", v.0, self.len) });
        }
        Ok(())
    }

    fn needs(&self, v: Var) -> bool {
        self.nodes[v.0].needs_grad
    }

    /// The value of a variable.
    pub fn value(&self, v: Var) -> &Matrix {
        &self.nodes[v.0].value
    }

    /// The gradient of a variable after [`Tape::backward`] (empty if none flowed).
    pub fn grad(&self, v: Var) -> &Matrix {
        &self.nodes[v.0].grad
    }

    /// The scalar value of a loss node.
    pub fn scalar(&self, v: Var) -> f32 {
        self.nodes[v.0].value.data().first().copied().unwrap_or(f32::NAN)
    }

    /// Softmax probabilities saved by [`Tape::softmax_cross_entropy`] (`batch × classes`).
    pub fn probs(&self, loss: Var) -> &Matrix {
        &self.nodes[loss.0].aux
    }

    /// A constant input (copied into a reused buffer).
    pub fn input(&mut self, m: &Matrix) -> Var {
        let (i, v) = self.push(Op::Input, false);
        v.copy_from(m);
        Var(i)
    }

    /// A constant one-hot matrix from class labels (`labels.len() × classes`).
    pub fn one_hot(&mut self, labels: &[usize], classes: usize) -> Result<Var> {
        if let Some((r, &l)) = labels.iter().enumerate().find(|(_, &l)| l >= classes) {
            return Err(TensorError::Index { what: "one_hot".into(), detail: format!("label {l} of row {r} >= {classes} classes") });
        }
        let (i, v) = self.push(Op::Input, false);
        v.resize_zeroed(labels.len(), classes);
        for (r, &l) in labels.iter().enumerate() {
            v.set(r, l, 1.0);
        }
        Ok(Var(i))
    }

    /// A leaf that receives a gradient (read it with [`Tape::grad`]).
    pub fn variable(&mut self, m: &Matrix) -> Var {
        let (i, v) = self.push(Op::Variable, true);
        v.copy_from(m);
        Var(i)
    }

    /// A parameter as a tape value (copied); its gradient accumulates into `params`.
    pub fn param(&mut self, params: &Params, id: ParamId) -> Var {
        let needs = !params.is_frozen(id);
        let (i, v) = self.push(Op::Param(id), needs);
        v.copy_from(params.value(id));
        Var(i)
    }

    /// `X·W + b` for a batch of binary sparse inputs: the sum of the W rows of each
    /// row's set bits (the 773-bit input layer). Gradients reach only those rows.
    pub fn sparse_affine(&mut self, params: &Params, x: &SparseBatch, w: ParamId, b: ParamId) -> Result<Var> {
        self.sparse_affine_act(params, x, w, b, false)
    }

    /// `max(sparse_affine, 0)` as one op: what `relu(sparse_affine(…))` computes, bit for
    /// bit, without the second node's copy and passes.
    pub fn sparse_affine_relu(&mut self, params: &Params, x: &SparseBatch, w: ParamId, b: ParamId) -> Result<Var> {
        self.sparse_affine_act(params, x, w, b, true)
    }

    fn sparse_affine_act(&mut self, params: &Params, x: &SparseBatch, w: ParamId, b: ParamId, relu: bool) -> Result<Var> {
        if self.sparse_len == self.sparse.len() {
            self.sparse.push(SparseBatch::new(0));
        }
        let xi = self.sparse_len;
        self.sparse[xi].copy_from(x);
        self.sparse_len += 1;
        let needs = !params.is_frozen(w) || !params.is_frozen(b);
        let (i, _) = self.push(Op::SparseAffine { x: xi, w, b, relu }, needs);
        let node = &mut self.nodes[i];
        if relu {
            sparse::forward_relu(&self.sparse[xi], params.value(w), params.value(b), &mut node.value)?;
        } else {
            sparse::forward(&self.sparse[xi], params.value(w), params.value(b), &mut node.value)?;
        }
        Ok(Var(i))
    }

    /// `x·W + b` (dense affine; `W` is `in × out`, `b` is `1 × out`).
    pub fn affine(&mut self, params: &Params, x: Var, w: ParamId, b: ParamId) -> Result<Var> {
        self.affine_act(params, x, w, b, false)
    }

    /// `max(x·W + b, 0)` as one op: what `relu(affine(…))` computes, bit for bit, without
    /// the second node's copy and passes.
    pub fn affine_relu(&mut self, params: &Params, x: Var, w: ParamId, b: ParamId) -> Result<Var> {
        self.affine_act(params, x, w, b, true)
    }

    fn affine_act(&mut self, params: &Params, x: Var, w: ParamId, b: ParamId, relu: bool) -> Result<Var> {
        self.check_var(x, "affine")?;
        let needs = self.needs(x) || !params.is_frozen(w) || !params.is_frozen(b);
        let (i, _) = self.push(Op::Affine { x, w, b, relu }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        layers::affine_act(&before[x.0].value, params.value(w), params.value(b), relu, &mut rest[0].value)?;
        Ok(Var(i))
    }

    /// Elementwise `a + b` (same shapes).
    pub fn add(&mut self, a: Var, b: Var) -> Result<Var> {
        self.check_var(a, "add")?;
        self.check_var(b, "add")?;
        if self.value(a).shape() != self.value(b).shape() {
            let (x, y) = (self.value(a).shape(), self.value(b).shape());
            return Err(TensorError::shape("add", format!("{}×{} + {}×{}", x.0, x.1, y.0, y.1)));
        }
        let needs = self.needs(a) || self.needs(b);
        let (i, _) = self.push(Op::Add(a, b), needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let out = &mut rest[0].value;
        out.copy_from(&before[a.0].value);
        out.data_mut().iter_mut().zip(before[b.0].value.data()).for_each(|(o, y)| *o += *y);
        Ok(Var(i))
    }

    fn unary(&mut self, x: Var, op: Op, what: &str, f: fn(&mut Matrix)) -> Result<Var> {
        self.check_var(x, what)?;
        let needs = self.needs(x);
        let (i, _) = self.push(op, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        rest[0].value.copy_from(&before[x.0].value);
        f(&mut rest[0].value);
        Ok(Var(i))
    }

    /// `max(x, 0)`.
    pub fn relu(&mut self, x: Var) -> Result<Var> {
        self.unary(x, Op::Relu(x), "relu", layers::relu_inplace)
    }

    /// `1 / (1 + e^-x)`.
    pub fn sigmoid(&mut self, x: Var) -> Result<Var> {
        self.unary(x, Op::Sigmoid(x), "sigmoid", layers::sigmoid_inplace)
    }

    /// `tanh(x)`.
    pub fn tanh(&mut self, x: Var) -> Result<Var> {
        self.unary(x, Op::Tanh(x), "tanh", layers::tanh_inplace)
    }

    /// Inverted dropout: each element is zeroed with probability `rate` and the kept ones
    /// are scaled by `1/(1-rate)`, so the expected value of every element is unchanged and
    /// inference simply does not call this. The mask comes from `rng` (one draw per element,
    /// row-major), so a seed gives the same mask. `rate == 0` returns `x` itself and draws
    /// nothing; a rate outside `[0, 1)` is an error (1 would drop everything and scale by ∞).
    pub fn dropout(&mut self, x: Var, rate: f32, rng: &mut Rng) -> Result<Var> {
        self.check_var(x, "dropout")?;
        if !(0.0..1.0).contains(&rate) {
            return Err(TensorError::argument("dropout", format!("rate {rate} is not in [0, 1)")));
        }
        if rate == 0.0 {
            return Ok(x);
        }
        let needs = self.needs(x);
        let (i, _) = self.push(Op::Dropout(x), needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (xv, node) = (&before[x.0].value, &mut rest[0]);
        let scale = 1.0 / (1.0 - rate);
        node.aux.resize(xv.rows(), xv.cols());
        node.value.resize(xv.rows(), xv.cols());
        for ((m, y), &v) in node.aux.data_mut().iter_mut().zip(node.value.data_mut()).zip(xv.data()) {
            *m = if rng.next_f32() < rate { 0.0 } else { scale };
            *y = v * *m;
        }
        Ok(Var(i))
    }

    /// The scaled dropout mask of a [`Tape::dropout`] node (`0` or `1/(1-rate)` per element).
    pub fn dropout_mask(&self, v: Var) -> &Matrix {
        &self.nodes[v.0].aux
    }

    /// `[a | b]` along the feature axis (the Siamese head's input: two 100-feature codes).
    pub fn concat(&mut self, a: Var, b: Var) -> Result<Var> {
        self.check_var(a, "concat")?;
        self.check_var(b, "concat")?;
        let needs = self.needs(a) || self.needs(b);
        let (i, _) = self.push(Op::Concat(a, b), needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        layers::concat_cols(&before[a.0].value, &before[b.0].value, &mut rest[0].value)?;
        Ok(Var(i))
    }

    /// The two halves of `x`'s rows side by side: row `i` of the result is row `i` followed
    /// by row `n + i` of `x` (`2n × c` → `n × 2c`). A Siamese net runs both towers as one
    /// batch (one product per layer, twice the rows) and meets its head this way, which is
    /// `concat` of the two towers' outputs.
    pub fn pair_halves(&mut self, x: Var) -> Result<Var> {
        self.check_var(x, "pair_halves")?;
        let (r, c) = self.value(x).shape();
        if r % 2 != 0 {
            return Err(TensorError::shape("pair_halves", format!("{r} rows: not two halves")));
        }
        let needs = self.needs(x);
        let (i, _) = self.push(Op::PairHalves(x), needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (xv, out) = (&before[x.0].value, &mut rest[0].value);
        let n = r / 2;
        out.resize(n, 2 * c);
        for row in 0..n {
            let o = out.row_mut(row);
            o[..c].copy_from_slice(xv.row(row));
            o[c..].copy_from_slice(xv.row(n + row));
        }
        Ok(Var(i))
    }

    fn same_shape(&self, a: Var, b: Var, what: &str) -> Result<()> {
        self.check_var(a, what)?;
        self.check_var(b, what)?;
        let (x, y) = (self.value(a).shape(), self.value(b).shape());
        if x != y {
            return Err(TensorError::shape(what, format!("prediction {}×{} vs target {}×{}", x.0, x.1, y.0, y.1)));
        }
        Ok(())
    }

    /// Softmax over each row of `logits` then cross-entropy with `targets` (one-hot labels
    /// or soft probabilities, as distillation uses), averaged over rows. A `1×1` loss.
    pub fn softmax_cross_entropy(&mut self, logits: Var, targets: Var) -> Result<Var> {
        self.same_shape(logits, targets, "softmax_cross_entropy")?;
        let needs = self.needs(logits) || self.needs(targets);
        let (i, _) = self.push(Op::SoftmaxCrossEntropy { logits, targets }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (z, t) = (&before[logits.0].value, &before[targets.0].value);
        let node = &mut rest[0];
        node.aux.copy_from(z);
        let mut loss = 0.0f64;
        for r in 0..z.rows() {
            let row = z.row(r);
            let mx = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let lse = mx + row.iter().map(|v| (v - mx).exp()).sum::<f32>().ln();
            for (c, &v) in row.iter().enumerate() {
                let tv = t.get(r, c);
                if tv != 0.0 {
                    loss -= (tv * (v - lse)) as f64;
                }
            }
        }
        layers::softmax_rows_inplace(&mut node.aux);
        node.value.resize(1, 1);
        node.value.set(0, 0, (loss / z.rows().max(1) as f64) as f32);
        Ok(Var(i))
    }

    /// Binary cross-entropy of probabilities `p` (e.g. a sigmoid output) against
    /// targets in `[0, 1]`, averaged over all elements. A `1×1` loss.
    pub fn binary_cross_entropy(&mut self, p: Var, targets: Var) -> Result<Var> {
        self.same_shape(p, targets, "binary_cross_entropy")?;
        let needs = self.needs(p) || self.needs(targets);
        let (i, _) = self.push(Op::BinaryCrossEntropy { p, targets }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (pv, tv) = (&before[p.0].value, &before[targets.0].value);
        let mut loss = 0.0f64;
        for (&y, &t) in pv.data().iter().zip(tv.data()) {
            let y = y.clamp(BCE_EPS, 1.0 - BCE_EPS) as f64;
            loss -= t as f64 * y.ln() + (1.0 - t as f64) * (1.0 - y).ln();
        }
        rest[0].value.resize(1, 1);
        rest[0].value.set(0, 0, (loss / pv.len().max(1) as f64) as f32);
        Ok(Var(i))
    }

    /// `binary_cross_entropy(sigmoid(logits), targets)` as one op, in the stable form
    /// `max(z, 0) − z·t + ln(1 + e^−|z|)` averaged over all elements, with the gradient
    /// `(σ(z) − t) / n`: no clamp, no division by `p(1 − p)`, and the exponentials and
    /// logarithms vectorised (the two-op form spends most of an autoencoder's output layer
    /// in scalar `exp` and `ln`). A `1×1` loss.
    pub fn bce_with_logits(&mut self, logits: Var, targets: Var) -> Result<Var> {
        self.same_shape(logits, targets, "bce_with_logits")?;
        let needs = self.needs(logits) || self.needs(targets);
        let (i, _) = self.push(Op::BceWithLogits { logits, targets }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (z, t) = (&before[logits.0].value, &before[targets.0].value);
        let node = &mut rest[0];
        node.aux.resize(z.rows(), z.cols());
        self.scratch.resize(z.rows(), z.cols());
        vecops::sigmoid_and_softplus_with(active_kernel(), z.data(), node.aux.data_mut(), self.scratch.data_mut());
        // Eight running sums: one f64 sum over every output was a chain of dependent adds
        // (4 cycles each). Only the reported loss comes from it; the gradient does not.
        let term = |zv: f32, tv: f32, sp: f32| (zv.max(0.0) - zv * tv) as f64 + sp as f64;
        let (zs, ts, sps) = (z.data(), t.data(), self.scratch.data());
        let mut sums = [0.0f64; 8];
        let whole = zs.len() - zs.len() % 8;
        for ((zc, tc), sc) in zs[..whole].chunks_exact(8).zip(ts[..whole].chunks_exact(8)).zip(sps[..whole].chunks_exact(8)) {
            for j in 0..8 {
                sums[j] += term(zc[j], tc[j], sc[j]);
            }
        }
        let mut loss: f64 = sums.iter().sum();
        for i in whole..zs.len() {
            loss += term(zs[i], ts[i], sps[i]);
        }
        node.value.resize(1, 1);
        node.value.set(0, 0, (loss / z.len().max(1) as f64) as f32);
        Ok(Var(i))
    }

    /// Mean squared error over all elements. A `1×1` loss.
    pub fn mse(&mut self, pred: Var, target: Var) -> Result<Var> {
        self.same_shape(pred, target, "mse")?;
        let needs = self.needs(pred) || self.needs(target);
        let (i, _) = self.push(Op::Mse { pred, target }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (y, t) = (&before[pred.0].value, &before[target.0].value);
        let s: f64 = y.data().iter().zip(t.data()).map(|(&a, &b)| ((a - b) as f64).powi(2)).sum();
        rest[0].value.resize(1, 1);
        rest[0].value.set(0, 0, (s / y.len().max(1) as f64) as f32);
        Ok(Var(i))
    }

    /// Huber loss of `d = pred - target`, averaged over all elements: `0.5·d²` where
    /// `|d| ≤ delta`, `delta·(|d| - 0.5·delta)` elsewhere. Quadratic near the target (half
    /// the squared error), linear far from it, so an outlier label pulls with a gradient of
    /// at most `delta`. `delta` must be positive and finite. A `1×1` loss.
    pub fn huber(&mut self, pred: Var, target: Var, delta: f32) -> Result<Var> {
        self.same_shape(pred, target, "huber")?;
        if !(delta > 0.0 && delta.is_finite()) {
            return Err(TensorError::argument("huber", format!("delta {delta} must be positive and finite")));
        }
        let needs = self.needs(pred) || self.needs(target);
        let (i, _) = self.push(Op::Huber { pred, target, delta }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let (y, t) = (&before[pred.0].value, &before[target.0].value);
        let dl = delta as f64;
        let s: f64 = y
            .data()
            .iter()
            .zip(t.data())
            .map(|(&a, &b)| {
                let d = (a - b).abs() as f64;
                if d <= dl { 0.5 * d * d } else { dl * (d - 0.5 * dl) }
            })
            .sum();
        rest[0].value.resize(1, 1);
        rest[0].value.set(0, 0, (s / y.len().max(1) as f64) as f32);
        Ok(Var(i))
    }

    /// Sum of all elements (`1×1`).
    pub fn sum(&mut self, x: Var) -> Result<Var> {
        self.check_var(x, "sum")?;
        let needs = self.needs(x);
        let (i, _) = self.push(Op::Sum(x), needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let s = before[x.0].value.sum() as f32;
        rest[0].value.resize(1, 1);
        rest[0].value.set(0, 0, s);
        Ok(Var(i))
    }

    /// Mean of all elements (`1×1`).
    pub fn mean(&mut self, x: Var) -> Result<Var> {
        self.check_var(x, "mean")?;
        let needs = self.needs(x);
        let (i, _) = self.push(Op::Mean(x), needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        let v = &before[x.0].value;
        let s = (v.sum() / v.len().max(1) as f64) as f32;
        rest[0].value.resize(1, 1);
        rest[0].value.set(0, 0, s);
        Ok(Var(i))
    }

    /// 2-D convolution of `x` (rows NHWC, `s.in_len()` values) with weights `w`
    /// (`s.weight_shape()`, row `(ky·kw + kx)·in_c + c`) and bias `b` (`1 × out_c`); no
    /// activation. Rows of the result are NHWC, `s.out_len()` values.
    pub fn conv2d(&mut self, params: &Params, x: Var, w: ParamId, b: ParamId, s: Conv2d) -> Result<Var> {
        self.conv2d_act(params, x, w, b, s, false)
    }

    /// `max(conv2d(…), 0)` as one op: what `relu(conv2d(…))` computes, bit for bit, with the
    /// ReLU in the product's epilogue and its backward a mask on this node's gradient.
    pub fn conv2d_relu(&mut self, params: &Params, x: Var, w: ParamId, b: ParamId, s: Conv2d) -> Result<Var> {
        self.conv2d_act(params, x, w, b, s, true)
    }

    fn conv2d_act(&mut self, params: &Params, x: Var, w: ParamId, b: ParamId, s: Conv2d, relu: bool) -> Result<Var> {
        self.check_var(x, "conv2d")?;
        let (wv, bv) = (params.value(w), params.value(b));
        // Checked before the node is pushed, so a bad call leaves the tape as it was.
        conv::check_operands("conv2d", &s, self.value(x), wv, bv)?;
        let needs = self.needs(x) || !params.is_frozen(w) || !params.is_frozen(b);
        let (i, _) = self.push(Op::Conv2d { x, w, b, s, relu }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        conv::forward_act(&s, &before[x.0].value, wv, bv, relu, &mut rest[0].value)?;
        Ok(Var(i))
    }

    /// 2-D max pooling of `x` (rows NHWC, `s.in_len()` values); see [`pool`] for ceil mode
    /// and ties. The gradient goes to the input element each output took.
    pub fn max_pool2d(&mut self, x: Var, s: MaxPool2d) -> Result<Var> {
        self.check_var(x, "max_pool2d")?;
        s.check()?;
        if self.value(x).cols() != s.in_len() {
            let c = self.value(x).cols();
            return Err(TensorError::shape("max_pool2d", format!("input rows have {c} values, {}×{}×{} needs {}", s.in_h, s.in_w, s.c, s.in_len())));
        }
        if self.argmax_len == self.argmax.len() {
            self.argmax.push(Vec::new());
        }
        let ai = self.argmax_len;
        self.argmax_len += 1;
        let needs = self.needs(x);
        let (i, _) = self.push(Op::MaxPool2d { x, s, argmax: ai }, needs);
        let (before, rest) = self.nodes.split_at_mut(i);
        pool::forward_argmax(&s, &before[x.0].value, &mut rest[0].value, &mut self.argmax[ai])?;
        Ok(Var(i))
    }
}
