//! [`Tape::backward`]: reverse pass, one `match` arm per op.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::gemm::{Fuse, Trans};
use crate::tensor::matrix::{gemm, gemm_fused};
use crate::tensor::layers::add_col_sums;
use crate::tensor::matrix::Matrix;
use crate::tensor::autograd::params::Params;
use crate::tensor::kernels::simd::active_kernel;
use crate::tensor::layers::sparse;
use crate::tensor::kernels::vecops;
use crate::tensor::{layers::conv, layers::pool};
use crate::tensor::autograd::tape::{Op, Tape, Var, BCE_EPS};

/// `scratch` made a copy of `m` (to read beside a mutable borrow of `m`'s node).
fn scratch_copy<'a>(scratch: &'a mut Matrix, m: &Matrix) -> &'a Matrix {
    scratch.copy_from(m);
    scratch
}

/// `dst += scale * src` elementwise.
fn acc(dst: &mut Matrix, src: &Matrix, scale: f32) {
    dst.data_mut().iter_mut().zip(src.data()).for_each(|(d, s)| *d += scale * *s);
}

impl Tape {
    /// Backpropagates from the `1×1` node `loss`: every node's gradient is recomputed
    /// (read with [`Tape::grad`]) and parameter gradients are **added** to `params`
    /// (an optimizer step consumes and clears them). Frozen parameters get nothing.
    pub fn backward(&mut self, loss: Var, params: &mut Params) -> Result<()> {
        let mut grads = std::mem::take(&mut params.grads);
        let r = self.backward_into(loss, params, &mut grads, 1.0);
        params.grads = grads;
        r
    }

    /// [`Tape::backward`] with the parameter gradients added to `grads` (one matrix per
    /// parameter of `params`, shaped like its value) instead of `params`' own, and the
    /// loss's gradient seeded with `seed` instead of 1: what lets several tapes
    /// backpropagate at once against one set of values, each into its own gradients, each
    /// weighted by its share of the batch (`tensor::optim::shards`).
    pub fn backward_into(&mut self, loss: Var, params: &Params, grads: &mut [Matrix], seed: f32) -> Result<()> {
        self.backward_impl(loss, params, grads, seed, false)
    }

    /// [`Tape::backward_into`] with the gradients **set**, not added: whatever `grads`
    /// held, each trainable parameter's matrix ends as this tape's gradient (zero where
    /// none flowed); frozen parameters' matrices are left alone. A weight whose last use
    /// on the tape is a layer gets its gradient written by that layer's product directly,
    /// with no zeroing pass before it (`tensor::optim::shards`' per-shard buffers).
    pub fn backward_set(&mut self, loss: Var, params: &Params, grads: &mut [Matrix], seed: f32) -> Result<()> {
        self.backward_impl(loss, params, grads, seed, true)
    }

    /// Which gradients the backward pass need not zero first: a node whose last reader is
    /// an `Affine` (that reader's `G·Wᵀ` is the first write, with β = 0), and with `set`,
    /// a weight whose last user is an `Affine` or `SparseAffine` (likewise). The others are
    /// zeroed here. The first write of a fresh gradient overwrites it: the same bits as
    /// adding to zero, without a pass over memory that is about to be written anyway.
    fn plan_gradients(&mut self, loss: usize, params: &Params, grads: &mut [Matrix], set: bool) {
        let len = loss + 1;
        let nodes = &mut self.nodes[..len];
        let (last, readers) = (&mut self.last_reader, &mut self.readers);
        last.clear();
        last.resize(len, usize::MAX);
        readers.clear();
        readers.resize(len, 0);
        for (i, n) in nodes.iter().enumerate() {
            for v in n.op.inputs().into_iter().flatten() {
                last[v.0] = i;
                readers[v.0] += 1;
            }
        }
        let fresh = &mut self.node_fresh;
        fresh.clear();
        fresh.extend((0..len).map(|i| {
            i != loss && nodes[i].needs_grad && last[i] != usize::MAX && matches!(nodes[last[i]].op, Op::Affine { x, .. } if x.0 == i)
        }));
        // A fused ReLU read by one layer only: that layer's `G·Wᵀ` writes the node's whole
        // gradient, so it can mask it as it stores it.
        let masked = &mut self.node_masked;
        masked.clear();
        masked.extend((0..len).map(|i| {
            fresh[i] && readers[i] == 1 && matches!(nodes[i].op, Op::Affine { relu: true, .. } | Op::SparseAffine { relu: true, .. } | Op::Conv2d { relu: true, .. })
        }));
        for (n, &f) in nodes.iter_mut().zip(fresh.iter()) {
            let (r, c) = n.value.shape();
            match (n.needs_grad, f) {
                (false, _) => n.grad.resize(0, 0),
                (true, true) => n.grad.resize(r, c),
                (true, false) => n.grad.resize_zeroed(r, c),
            }
        }
        let pf = &mut self.param_fresh;
        pf.clear();
        pf.resize(params.len(), false);
        if !set {
            return;
        }
        // The last user of each parameter's gradient, in node order.
        let last_user = &mut self.last_user;
        last_user.clear();
        last_user.resize(params.len(), (usize::MAX, false));
        for (i, n) in nodes.iter().enumerate() {
            match n.op {
                Op::Param(id) => last_user[id.0] = (i, false),
                Op::Affine { w, b, .. } | Op::SparseAffine { w, b, .. } | Op::Conv2d { w, b, .. } => {
                    last_user[w.0] = (i, !matches!(n.op, Op::Conv2d { .. }));
                    last_user[b.0] = (i, false);
                }
                _ => {}
            }
        }
        for (id, g) in grads.iter_mut().enumerate() {
            if params.is_frozen(crate::tensor::autograd::params::ParamId(id)) {
                continue;
            }
            // Written first by a layer's weight product: that product overwrites it.
            if last_user[id].0 != usize::MAX && last_user[id].1 && nodes[last_user[id].0].needs_grad {
                pf[id] = true;
            } else {
                g.fill(0.0);
            }
        }
    }

    // One long body on purpose: the pass is one `match` with an arm per op, read top to
    // bottom beside the forward ops it mirrors (as micrograd's and candle's are).
    fn backward_impl(&mut self, loss: Var, params: &Params, grads: &mut [Matrix], seed: f32, set: bool) -> Result<()> {
        if grads.len() != params.len() {
            return Err(TensorError::shape("backward", format!("{} gradient matrices for {} parameters", grads.len(), params.len())));
        }
        if loss.0 >= self.len {
            return Err(TensorError::Index { what: "backward".into(), detail: format!("variable {} not on this tape", loss.0) });
        }
        if self.nodes[loss.0].value.shape() != (1, 1) {
            let (r, c) = self.nodes[loss.0].value.shape();
            return Err(TensorError::shape("backward", format!("loss must be 1×1, got {r}×{c}")));
        }
        self.plan_gradients(loss.0, params, grads, set);
        if !self.nodes[loss.0].needs_grad {
            // Nothing flows: what `set` promises is zero for every trainable parameter.
            for (id, g) in grads.iter_mut().enumerate() {
                if self.param_fresh[id] {
                    g.fill(0.0);
                }
            }
            return Ok(());
        }
        self.nodes[loss.0].grad.set(0, 0, seed);
        let nodes = &mut self.nodes;
        let sparse_inputs = &self.sparse;
        let argmaxes = &self.argmax;
        let scratch = &mut self.scratch;
        let (node_fresh, param_fresh) = (&mut self.node_fresh, &mut self.param_fresh);
        let node_masked = &self.node_masked;
        // β of a product into a gradient: 0 for its first write when planned so (and then
        // no longer fresh), 1 otherwise.
        let beta = |fresh: &mut bool| if std::mem::take(fresh) { 0.0 } else { 1.0 };
        for i in (0..=loss.0).rev() {
            let (before, rest) = nodes.split_at_mut(i);
            if !rest[0].needs_grad {
                continue;
            }
            // A fused ReLU: the gradient through it is the node's own, masked where the
            // output is zero (this node's gradient is read by nothing else).
            if let Op::Affine { relu: true, .. } | Op::SparseAffine { relu: true, .. } | Op::Conv2d { relu: true, .. } = rest[0].op {
                if !node_masked[i] {
                    let n = &mut rest[0];
                    vecops::relu_mask_with(active_kernel(), n.grad.data_mut(), n.value.data());
                }
            }
            let node = &rest[0];
            let g = &node.grad;
            let y = &node.value;
            match node.op {
                Op::Input | Op::Variable => {}
                Op::Param(id) => {
                    if !params.is_frozen(id) {
                        acc(&mut grads[id.0], g, 1.0);
                    }
                }
                Op::SparseAffine { x, w, b, .. } => {
                    let xs = &sparse_inputs[x];
                    let ow = beta(&mut param_fresh[w.0]) == 0.0;
                    let back = if ow { sparse::backward_overwrite_with } else { sparse::backward_with };
                    let (kern, nt) = (active_kernel(), crate::tensor::runtime::threads::threads());
                    match (params.is_frozen(w), params.is_frozen(b)) {
                        (false, false) => {
                            let (dw, db) = two_grads(grads, w.0, b.0);
                            back(kern, nt, xs, g, dw, db)?;
                        }
                        (false, true) => {
                            scratch.resize_zeroed(1, g.cols());
                            back(kern, nt, xs, g, &mut grads[w.0], scratch)?;
                        }
                        (true, false) => add_col_sums(g, &mut grads[b.0]),
                        (true, true) => {}
                    }
                }
                Op::Affine { x, w, b, .. } => {
                    if !params.is_frozen(w) {
                        let bw = beta(&mut param_fresh[w.0]);
                        gemm(Trans::T, Trans::N, 1.0, &before[x.0].value, g, bw, &mut grads[w.0])?;
                    }
                    if !params.is_frozen(b) {
                        add_col_sums(g, &mut grads[b.0]);
                    }
                    if before[x.0].needs_grad {
                        let bx = beta(&mut node_fresh[x.0]);
                        let xn = &mut before[x.0];
                        if node_masked[x.0] {
                            let fuse = Fuse { mask: Some(xn.value.data()), ..Fuse::default() };
                            gemm_fused(Trans::N, Trans::T, g, params.value(w), bx, &mut xn.grad, &fuse)?;
                        } else {
                            gemm(Trans::N, Trans::T, 1.0, g, params.value(w), bx, &mut xn.grad)?;
                        }
                    }
                }
                Op::Add(a, b) => {
                    for v in [a, b] {
                        if before[v.0].needs_grad {
                            acc(&mut before[v.0].grad, g, 1.0);
                        }
                    }
                }
                Op::Relu(x) => {
                    if before[x.0].needs_grad {
                        vecops::relu_backward_with(active_kernel(), before[x.0].grad.data_mut(), g.data(), y.data());
                    }
                }
                Op::Sigmoid(x) => {
                    if before[x.0].needs_grad {
                        let dx = before[x.0].grad.data_mut();
                        for ((d, &gv), &yv) in dx.iter_mut().zip(g.data()).zip(y.data()) {
                            *d += gv * yv * (1.0 - yv);
                        }
                    }
                }
                Op::Tanh(x) => {
                    if before[x.0].needs_grad {
                        let dx = before[x.0].grad.data_mut();
                        for ((d, &gv), &yv) in dx.iter_mut().zip(g.data()).zip(y.data()) {
                            *d += gv * (1.0 - yv * yv);
                        }
                    }
                }
                Op::Dropout(x) => {
                    if before[x.0].needs_grad {
                        let dx = before[x.0].grad.data_mut();
                        for ((d, &gv), &m) in dx.iter_mut().zip(g.data()).zip(node.aux.data()) {
                            *d += gv * m;
                        }
                    }
                }
                Op::Concat(a, b) => {
                    let ca = before[a.0].value.cols();
                    for (v, lo) in [(a, 0), (b, ca)] {
                        if before[v.0].needs_grad {
                            let d = &mut before[v.0].grad;
                            let w = d.cols();
                            for r in 0..g.rows() {
                                d.row_mut(r).iter_mut().zip(&g.row(r)[lo..lo + w]).for_each(|(o, s)| *o += *s);
                            }
                        }
                    }
                }
                Op::PairHalves(x) if before[x.0].needs_grad => {
                    let d = &mut before[x.0].grad;
                    let (n, c) = (g.rows(), d.cols());
                    for r in 0..n {
                        d.row_mut(r).iter_mut().zip(&g.row(r)[..c]).for_each(|(o, s)| *o += *s);
                        d.row_mut(n + r).iter_mut().zip(&g.row(r)[c..]).for_each(|(o, s)| *o += *s);
                    }
                }
                Op::PairHalves(_) => {}
                Op::SoftmaxCrossEntropy { logits, targets } => {
                    let gs = g.get(0, 0) / y_rows(&before[logits.0].value);
                    let p = &node.aux;
                    if before[targets.0].needs_grad {
                        // d/dt = -log softmax(z), from z directly (p may underflow to 0).
                        let z = &before[logits.0].value;
                        scratch.resize(z.rows(), z.cols());
                        for r in 0..z.rows() {
                            let row = z.row(r);
                            let mx = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                            let lse = mx + row.iter().map(|v| (v - mx).exp()).sum::<f32>().ln();
                            for (o, &v) in scratch.row_mut(r).iter_mut().zip(row) {
                                *o = v - lse;
                            }
                        }
                        acc(&mut before[targets.0].grad, scratch, -gs);
                    }
                    if before[logits.0].needs_grad {
                        let (lo, hi) = before.split_at_mut(logits.0.max(targets.0));
                        let (zn, tn) = if logits.0 < targets.0 { (&mut lo[logits.0], &hi[0]) } else { (&mut hi[0], &lo[targets.0]) };
                        if logits.0 == targets.0 {
                            return Err(TensorError::shape("softmax_cross_entropy backward", "logits and targets are the same variable"));
                        }
                        let t = &tn.value;
                        let dz = &mut zn.grad;
                        for r in 0..t.rows() {
                            let ts: f32 = t.row(r).iter().sum();
                            for c in 0..t.cols() {
                                let o = dz.get(r, c);
                                dz.set(r, c, o + gs * (p.get(r, c) * ts - t.get(r, c)));
                            }
                        }
                    }
                }
                Op::BceWithLogits { logits, targets } => {
                    let gs = g.get(0, 0) / before[logits.0].value.len().max(1) as f32;
                    if before[logits.0].needs_grad {
                        // One pass: what `acc` of a scratch holding σ − t gives, bit for bit.
                        let (l, t) = (logits.0, targets.0);
                        let (lg, tv) = if l == t {
                            let n = &mut before[l];
                            (&mut n.grad, &*scratch_copy(scratch, &n.value))
                        } else if l < t {
                            let (lo, hi) = before.split_at_mut(t);
                            (&mut lo[l].grad, &hi[0].value)
                        } else {
                            let (lo, hi) = before.split_at_mut(l);
                            (&mut hi[0].grad, &lo[t].value)
                        };
                        for ((d, &p), &t) in lg.data_mut().iter_mut().zip(node.aux.data()).zip(tv.data()) {
                            *d += gs * (p - t);
                        }
                    }
                    if before[targets.0].needs_grad {
                        scratch.copy_from(&before[logits.0].value);
                        acc(&mut before[targets.0].grad, scratch, -gs);
                    }
                }
                Op::BinaryCrossEntropy { p, targets } => {
                    let gs = g.get(0, 0) / before[p.0].value.len().max(1) as f32;
                    for (v, wrt_p) in [(p, true), (targets, false)] {
                        if !before[v.0].needs_grad {
                            continue;
                        }
                        let (pv, tv) = (&before[p.0].value, &before[targets.0].value);
                        scratch.resize(pv.rows(), pv.cols());
                        for ((o, &yv), &t) in scratch.data_mut().iter_mut().zip(pv.data()).zip(tv.data()) {
                            *o = if wrt_p {
                                // The clamp's derivative is 0 outside [EPS, 1-EPS].
                                if (BCE_EPS..=1.0 - BCE_EPS).contains(&yv) { (yv - t) / (yv * (1.0 - yv)) } else { 0.0 }
                            } else {
                                let yc = yv.clamp(BCE_EPS, 1.0 - BCE_EPS);
                                (1.0 - yc).ln() - yc.ln()
                            };
                        }
                        acc(&mut before[v.0].grad, scratch, gs);
                    }
                }
                Op::Mse { pred, target } => {
                    let n = before[pred.0].value.len().max(1) as f32;
                    let gs = 2.0 * g.get(0, 0) / n;
                    let (yv, tv) = (&before[pred.0].value, &before[target.0].value);
                    scratch.resize(yv.rows(), yv.cols());
                    for ((o, a), b) in scratch.data_mut().iter_mut().zip(yv.data()).zip(tv.data()) {
                        *o = a - b;
                    }
                    for (v, sign) in [(pred, 1.0f32), (target, -1.0)] {
                        if before[v.0].needs_grad {
                            acc(&mut before[v.0].grad, scratch, sign * gs);
                        }
                    }
                }
                Op::Huber { pred, target, delta } => {
                    // d/dy = clamp(y - t, -delta, delta) / n (the kinks at ±delta are C¹).
                    let gs = g.get(0, 0) / before[pred.0].value.len().max(1) as f32;
                    let (yv, tv) = (&before[pred.0].value, &before[target.0].value);
                    scratch.resize(yv.rows(), yv.cols());
                    for ((o, a), b) in scratch.data_mut().iter_mut().zip(yv.data()).zip(tv.data()) {
                        *o = (a - b).clamp(-delta, delta);
                    }
                    for (v, sign) in [(pred, 1.0f32), (target, -1.0)] {
                        if before[v.0].needs_grad {
                            acc(&mut before[v.0].grad, scratch, sign * gs);
                        }
                    }
                }
                Op::Conv2d { x, w, b, s, .. } => {
                    if w == b {
                        return Err(TensorError::shape("conv2d backward", "weights and bias are the same parameter"));
                    }
                    let xn = &mut before[x.0];
                    let dx = if xn.needs_grad { Some(&mut xn.grad) } else { None };
                    let (wf, bf) = (params.is_frozen(w), params.is_frozen(b));
                    let wv = params.value(w);
                    let (dw, db) = two_grads(grads, w.0, b.0);
                    // A frozen weight or bias gets its gradient computed into a spare buffer
                    // and dropped (rare; the other two gradients still need the pass).
                    let mut spare = Matrix::default();
                    let dw = if wf {
                        spare.resize_zeroed(dw.rows(), dw.cols());
                        &mut spare
                    } else {
                        dw
                    };
                    let db = if bf {
                        scratch.resize_zeroed(1, db.cols());
                        &mut *scratch
                    } else {
                        db
                    };
                    conv::backward(&s, &xn.value, wv, g, dw, db, dx)?;
                }
                Op::MaxPool2d { x, s, argmax } => {
                    if before[x.0].needs_grad {
                        pool::backward(&s, &argmaxes[argmax], g, &mut before[x.0].grad)?;
                    }
                }
                Op::Sum(x) | Op::Mean(x) => {
                    if before[x.0].needs_grad {
                        let mut gs = g.get(0, 0);
                        if matches!(node.op, Op::Mean(_)) {
                            gs /= before[x.0].value.len().max(1) as f32;
                        }
                        before[x.0].grad.data_mut().iter_mut().for_each(|d| *d += gs);
                    }
                }
            }
        }
        Ok(())
    }
}

fn y_rows(m: &Matrix) -> f32 {
    m.rows().max(1) as f32
}

/// Mutable gradients of two different parameters at once.
/// Gradients of two distinct parameters (by index) at once.
fn two_grads(grads: &mut [Matrix], a: usize, b: usize) -> (&mut Matrix, &mut Matrix) {
    assert_ne!(a, b, "two_grads: same parameter twice");
    if a < b {
        let (lo, hi) = grads.split_at_mut(b);
        (&mut lo[a], &mut hi[0])
    } else {
        let (lo, hi) = grads.split_at_mut(a);
        (&mut hi[0], &mut lo[b])
    }
}
