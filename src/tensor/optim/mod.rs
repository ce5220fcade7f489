//! Optimizers over a [`Params`] store: SGD with the paper's per-epoch multiplicative
//! learning-rate decay (`lr · decay^epoch`), SGD with momentum (either form: the learning
//! rate outside the velocity, or inside it as Caffe and Mocha have it), and Adam / AdamW;
//! and [`LrPolicy`], per-iteration learning-rate schedules (Caffe's `fixed` and `inv`).
//! A step skips frozen parameters and **clears** the gradients it consumed.
//!
//! [`shards`]: the data-parallel training step, a batch cut into shards whose gradients the
//! optimizer sums as it reads them ([`Optimizer::step_sharded`]).

use crate::tensor::matrix::Matrix;
use crate::tensor::autograd::params::{ParamId, Params};
use crate::tensor::kernels::simd::active_kernel;
use crate::tensor::kernels::update::{adam_sum2_with, adam_with, sgd_sum2_with, AdamStep};
use crate::tensor::kernels::vecops::add_assign_with;

pub mod shards;

/// What every optimizer offers to a training loop.
pub trait Optimizer {
    /// Updates every trainable parameter from its gradient, then zeroes the gradients.
    fn step(&mut self, params: &mut Params);
    /// [`Optimizer::step`] with each parameter's gradient taken as `params.grads` plus, in
    /// order, `others[0]`, `others[1]`… (the other shards' gradients of a data-parallel step,
    /// one matrix per parameter), the same bits as summing them into `params.grads` first.
    /// The default does exactly that; an optimizer may read the sum as it goes instead.
    fn step_sharded(&mut self, params: &mut Params, others: &[Vec<Matrix>]) {
        sum_grads(params, others);
        self.step(params);
    }
    /// Current learning rate.
    fn lr(&self) -> f32;
    fn set_lr(&mut self, lr: f32);
    /// Called once at the end of each epoch: applies the multiplicative decay.
    fn end_epoch(&mut self);
    /// Everything a resumed run needs to continue bit for bit (lr, step count, moments).
    fn state(&self) -> Vec<(String, Matrix)>;
    /// Restores [`Optimizer::state`] for `params`, checked as a net is: every tensor this
    /// optimizer keeps is there with its parameter's shape (all of them once it has taken a
    /// step, `stepped`; none or all before), the learning rate is a finite number `>= 0`, and
    /// there is nothing it does not know. A refusal names the tensor; nothing is changed then.
    fn set_state(&mut self, state: &[(String, Matrix)], params: &Params, stepped: bool) -> Result<(), String>;
}

/// The saved learning rate: a finite number `>= 0`.
fn saved_lr(state: &[(String, Matrix)]) -> Result<f32, String> {
    let lr = find(state, "lr").ok_or("optimizer tensor 'lr' is missing")?;
    match (lr.shape(), lr.data().first()) {
        ((1, 1), Some(&v)) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("optimizer tensor 'lr' is not one learning rate >= 0 ({}x{})", lr.rows(), lr.cols())),
    }
}

/// The per-parameter tensors `prefix.0 … prefix.{n-1}` of a saved state, one per parameter
/// with its shape: all of them, or (unless `required`) none.
fn per_param(state: &[(String, Matrix)], prefix: &str, params: &Params, required: bool) -> Result<Vec<Matrix>, String> {
    let n = params.len();
    let present = (0..n).filter(|i| find(state, &format!("{prefix}.{i}")).is_some()).count();
    if present == 0 && !required {
        return Ok(Vec::new());
    }
    (0..n)
        .map(|i| {
            let name = format!("{prefix}.{i}");
            let want = params.value(ParamId(i)).shape();
            match find(state, &name) {
                None => Err(format!("optimizer tensor '{name}' is missing (state of parameter '{}')", params.name(ParamId(i)))),
                Some(m) if m.shape() != want => {
                    Err(format!("optimizer tensor '{name}' has shape {}x{}, parameter '{}' is {}x{}", m.rows(), m.cols(), params.name(ParamId(i)), want.0, want.1))
                }
                Some(m) => Ok(m.clone()),
            }
        })
        .collect()
}

/// Refuses a saved tensor that is not `lr`, one of `scalars` or `prefix.i` for a parameter.
fn only_known(state: &[(String, Matrix)], scalars: &[&str], prefixes: &[&str], params: &Params) -> Result<(), String> {
    let known = |name: &str| {
        name == "lr"
            || scalars.contains(&name)
            || prefixes.iter().any(|p| {
                name.strip_prefix(p).and_then(|r| r.strip_prefix('.')).and_then(|i| i.parse::<usize>().ok()).is_some_and(|i| i < params.len())
            })
    };
    match state.iter().find(|(n, _)| !known(n)) {
        Some((n, _)) => Err(format!("optimizer tensor '{n}' does not belong to this optimizer and net")),
        None => Ok(()),
    }
}

fn scalar(v: f32) -> Matrix {
    Matrix::filled(1, 1, v)
}

fn find<'a>(state: &'a [(String, Matrix)], name: &str) -> Option<&'a Matrix> {
    state.iter().find(|(n, _)| n == name).map(|(_, m)| m)
}

/// One parameter as an elementwise update sees it: value, gradient and up to two state
/// tensors (empty slices when the optimizer keeps none).
struct Slot<'a> {
    id: ParamId,
    w: &'a mut [f32],
    g: &'a mut [f32],
    s1: &'a mut [f32],
    s2: &'a mut [f32],
    /// Gradients still to be added to `g` (other shards'), in order.
    others: Vec<&'a [f32]>,
}

impl Slot<'_> {
    /// Adds the other shards' gradients into `g`, in order.
    fn fold_others(&mut self) {
        let k = active_kernel();
        for o in &self.others {
            add_assign_with(k, self.g, o);
        }
    }
}

/// Adds `others[s][i]` into parameter `i`'s gradient for each `s` in order, for every
/// parameter that is not frozen (theirs are left alone); shared out over two threads when
/// large (each element is summed in the same order either way).
pub(crate) fn sum_grads(params: &mut Params, others: &[Vec<Matrix>]) {
    if others.is_empty() {
        return;
    }
    for_each_slot(params, &mut [], &mut [], others, |s| s.fold_others());
}

/// Elements below which an update stays on one thread (a thread start costs more).
const PAR_MIN_ELEMENTS: usize = 1 << 17;

/// Runs `update` on every parameter that is not frozen. When the whole is large, the
/// parameters are shared out over two threads (each to the lighter side, in order); every
/// update is elementwise, so the result is the same bits either way.
/// `others` are gradients still to be added ([`Slot::fold_others`]), one list per shard.
fn for_each_slot(params: &mut Params, s1: &mut [Matrix], s2: &mut [Matrix], others: &[Vec<Matrix>], update: impl Fn(&mut Slot) + Sync) {
    let (values, grads, frozen) = params.parts_mut();
    let mut s1 = s1.iter_mut().map(|m| m.data_mut());
    let mut s2 = s2.iter_mut().map(|m| m.data_mut());
    let mut slots: Vec<Slot> = Vec::with_capacity(values.len());
    for (i, (w, g)) in values.iter_mut().zip(grads.iter_mut()).enumerate() {
        let (a, b) = (s1.next().unwrap_or_default(), s2.next().unwrap_or_default());
        if !frozen[i] {
            let others = others.iter().map(|o| o[i].data()).collect();
            slots.push(Slot { id: ParamId(i), w: w.data_mut(), g: g.data_mut(), s1: a, s2: b, others });
        }
    }
    crate::tensor::runtime::threads::for_each_in_two(slots, |s| s.w.len(), PAR_MIN_ELEMENTS, |mut s| update(&mut s));
}

/// Lazily sized per-parameter state (momentum, Adam moments).
fn state_for(state: &mut Vec<Matrix>, params: &Params) {
    while state.len() < params.len() {
        let v = params.value(ParamId(state.len()));
        state.push(Matrix::zeros(v.rows(), v.cols()));
    }
}

/// A learning rate as a function of the iteration (optimizer step) count, as Caffe and
/// Mocha name them. A training loop calls `opt.set_lr(policy.at(iter))` before each step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LrPolicy {
    /// The same rate throughout.
    Fixed(f32),
    /// `base · (1 + gamma·iter)^(-power)`: Caffe's and Mocha's `inv`.
    Inv { base: f32, gamma: f32, power: f32 },
}

impl LrPolicy {
    /// The rate at iteration `iter` (0 for the first step).
    pub fn at(&self, iter: u64) -> f32 {
        match *self {
            LrPolicy::Fixed(lr) => lr,
            // In f64: 1 + gamma·iter loses the iteration's low bits in f32 past 2^24 steps.
            LrPolicy::Inv { base, gamma, power } => (base as f64 * (1.0 + gamma as f64 * iter as f64).powf(-(power as f64))) as f32,
        }
    }
}

/// Stochastic gradient descent, optionally with momentum and L2 weight decay.
/// The paper: `Sgd::new(0.005).with_decay(0.98)` (Pos2Vec), `Sgd::new(0.01).with_decay(0.99)` (DeepChess).
///
/// With momentum μ, the default form keeps the learning rate outside the velocity
/// (`v ← μ·v + g + λ·w; w ← w − lr·v`); [`Sgd::with_lr_in_velocity`] selects Caffe's and
/// Mocha's (`v ← μ·v − lr·(g + λ·w); w ← w + v`). The two agree at a constant rate; they
/// differ when the rate changes ([`LrPolicy::Inv`]): Caffe's velocity keeps the rates it
/// was built with. Parameters listed by [`Sgd::with_decay_exempt`] get no weight decay
/// (Mocha regularises weights, not biases).
#[derive(Clone, Debug)]
pub struct Sgd {
    pub lr: f32,
    /// Learning rate multiplier applied by [`Optimizer::end_epoch`].
    pub decay: f32,
    pub momentum: f32,
    /// L2 penalty coefficient added to the gradient.
    pub weight_decay: f32,
    /// Caffe's momentum form (see the type's documentation).
    pub lr_in_velocity: bool,
    /// Parameters the weight decay skips.
    pub decay_exempt: Vec<ParamId>,
    velocity: Vec<Matrix>,
}

impl Sgd {
    pub fn new(lr: f32) -> Self {
        Sgd { lr, decay: 1.0, momentum: 0.0, weight_decay: 0.0, lr_in_velocity: false, decay_exempt: Vec::new(), velocity: Vec::new() }
    }
    /// Caffe's and Mocha's momentum form, `v ← μ·v − lr·(g + λ·w); w ← w + v`, when `on`.
    pub fn with_lr_in_velocity(mut self, on: bool) -> Self {
        self.lr_in_velocity = on;
        self
    }
    /// Exempts `ids` from the weight decay (typically the biases).
    pub fn with_decay_exempt(mut self, ids: Vec<ParamId>) -> Self {
        self.decay_exempt = ids;
        self
    }
    pub fn with_decay(mut self, decay: f32) -> Self {
        self.decay = decay;
        self
    }
    pub fn with_momentum(mut self, momentum: f32) -> Self {
        self.momentum = momentum;
        self
    }
    pub fn with_weight_decay(mut self, wd: f32) -> Self {
        self.weight_decay = wd;
        self
    }
}

impl Sgd {
    fn update(&mut self, params: &mut Params, others: &[Vec<Matrix>]) {
        if self.momentum != 0.0 {
            state_for(&mut self.velocity, params);
        }
        let (lr, mu, lr_in_velocity) = (self.lr, self.momentum, self.lr_in_velocity);
        let (exempt, weight_decay) = (&self.decay_exempt, self.weight_decay);
        for_each_slot(params, &mut self.velocity, &mut [], others, |s| {
            let wd = if exempt.contains(&s.id) { 0.0 } else { weight_decay };
            if mu == 0.0 && s.others.len() == 1 {
                // Two shards' gradients summed as they are read: one pass instead of two.
                sgd_sum2_with(active_kernel(), s.w, s.g, s.others[0], lr, wd);
                return;
            }
            s.fold_others();
            if mu == 0.0 {
                for (x, gv) in s.w.iter_mut().zip(s.g.iter_mut()) {
                    *x -= lr * (*gv + wd * *x);
                    *gv = 0.0;
                }
            } else if lr_in_velocity {
                for ((x, gv), vv) in s.w.iter_mut().zip(s.g.iter_mut()).zip(s.s1.iter_mut()) {
                    *vv = mu * *vv - lr * (*gv + wd * *x);
                    *x += *vv;
                    *gv = 0.0;
                }
            } else {
                for ((x, gv), vv) in s.w.iter_mut().zip(s.g.iter_mut()).zip(s.s1.iter_mut()) {
                    *vv = mu * *vv + *gv + wd * *x;
                    *x -= lr * *vv;
                    *gv = 0.0;
                }
            }
        });
    }
}

impl Optimizer for Sgd {
    fn step(&mut self, params: &mut Params) {
        self.update(params, &[]);
    }
    fn step_sharded(&mut self, params: &mut Params, others: &[Vec<Matrix>]) {
        self.update(params, others);
    }
    fn lr(&self) -> f32 {
        self.lr
    }
    fn set_lr(&mut self, lr: f32) {
        self.lr = lr;
    }
    fn end_epoch(&mut self) {
        self.lr *= self.decay;
    }
    fn state(&self) -> Vec<(String, Matrix)> {
        let mut s = vec![("lr".to_string(), scalar(self.lr))];
        s.extend(self.velocity.iter().enumerate().map(|(i, m)| (format!("velocity.{i}"), m.clone())));
        s
    }
    fn set_state(&mut self, state: &[(String, Matrix)], params: &Params, stepped: bool) -> Result<(), String> {
        let lr = saved_lr(state)?;
        let prefixes: &[&str] = if self.momentum != 0.0 { &["velocity"] } else { &[] };
        only_known(state, &[], prefixes, params)?;
        let velocity = per_param(state, "velocity", params, stepped && self.momentum != 0.0)?;
        (self.lr, self.velocity) = (lr, velocity);
        Ok(())
    }
}

/// Adam (Kingma & Ba), with decoupled weight decay when `weight_decay > 0` (AdamW).
#[derive(Clone, Debug)]
pub struct Adam {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    /// Decoupled weight decay (AdamW): `w -= lr · wd · w` each step.
    pub weight_decay: f32,
    /// Learning rate multiplier applied by [`Optimizer::end_epoch`].
    pub decay: f32,
    t: i32,
    m: Vec<Matrix>,
    v: Vec<Matrix>,
}

impl Adam {
    /// Adam with the usual defaults (β1 0.9, β2 0.999, ε 1e-8).
    pub fn new(lr: f32) -> Self {
        Adam { lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0, decay: 1.0, t: 0, m: Vec::new(), v: Vec::new() }
    }
    /// AdamW: Adam with decoupled weight decay `wd`.
    pub fn adamw(lr: f32, wd: f32) -> Self {
        Adam { weight_decay: wd, ..Adam::new(lr) }
    }
    pub fn with_decay(mut self, decay: f32) -> Self {
        self.decay = decay;
        self
    }
}

impl Adam {
    fn update(&mut self, params: &mut Params, others: &[Vec<Matrix>]) {
        state_for(&mut self.m, params);
        state_for(&mut self.v, params);
        self.t = self.t.saturating_add(1);
        let (b1, b2) = (self.beta1, self.beta2);
        // Bias corrections folded into the step size.
        let c1 = 1.0 - b1.powi(self.t);
        let c2 = 1.0 - b2.powi(self.t);
        let step = self.lr * c2.sqrt() / c1;
        let eps = self.eps * c2.sqrt();
        let c = AdamStep { b1, b2, step, eps, wd: self.lr * self.weight_decay };
        for_each_slot(params, &mut self.m, &mut self.v, others, |s| {
            let k = active_kernel();
            if s.others.len() == 1 {
                // Two shards' gradients summed as they are read: one pass instead of two.
                adam_sum2_with(k, s.w, s.g, s.others[0], s.s1, s.s2, c);
            } else {
                s.fold_others();
                adam_with(k, s.w, s.g, s.s1, s.s2, c);
            }
        });
    }
}

impl Optimizer for Adam {
    fn step(&mut self, params: &mut Params) {
        self.update(params, &[]);
    }
    fn step_sharded(&mut self, params: &mut Params, others: &[Vec<Matrix>]) {
        self.update(params, others);
    }
    fn lr(&self) -> f32 {
        self.lr
    }
    fn set_lr(&mut self, lr: f32) {
        self.lr = lr;
    }
    fn end_epoch(&mut self) {
        self.lr *= self.decay;
    }
    fn state(&self) -> Vec<(String, Matrix)> {
        // The step count is stored as two f32 halves so it stays exact past 2^24.
        let mut s = vec![
            ("lr".to_string(), scalar(self.lr)),
            ("t".to_string(), Matrix::from_vec(1, 2, vec![(self.t >> 16) as f32, (self.t & 0xFFFF) as f32]).unwrap()),
        ];
        s.extend(self.m.iter().enumerate().map(|(i, m)| (format!("m.{i}"), m.clone())));
        s.extend(self.v.iter().enumerate().map(|(i, m)| (format!("v.{i}"), m.clone())));
        s
    }
    fn set_state(&mut self, state: &[(String, Matrix)], params: &Params, stepped: bool) -> Result<(), String> {
        let lr = saved_lr(state)?;
        only_known(state, &["t"], &["m", "v"], params)?;
        let t = match find(state, "t") {
            None if !stepped => 0,
            None => return Err("optimizer tensor 't' (Adam's step count) is missing".into()),
            Some(t) => {
                let (hi, lo) = (t.data().first().copied().unwrap_or(-1.0), t.data().get(1).copied().unwrap_or(-1.0));
                let whole = |x: f32| x.fract() == 0.0 && (0.0..65536.0).contains(&x);
                if t.shape() != (1, 2) || !whole(hi) || !whole(lo) || hi >= 32768.0 {
                    return Err("optimizer tensor 't' is not a step count".into());
                }
                ((hi as i32) << 16) | lo as i32
            }
        };
        if stepped && t == 0 {
            return Err("optimizer tensor 't' counts no step in a checkpoint written after one".into());
        }
        let (m, v) = (per_param(state, "m", params, stepped)?, per_param(state, "v", params, stepped)?);
        if m.len() != v.len() {
            return Err("optimizer tensors 'm.*' and 'v.*' are not both there".into());
        }
        (self.lr, self.t, self.m, self.v) = (lr, t, m, v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::runtime::threads::serial;
    use crate::tensor::{Init, Rng};

    /// Large enough to be shared out over two threads; the bits must not change.
    #[test]
    fn threaded_updates_give_the_serial_bits() {
        let mut rng = Rng::new(4);
        let mut a = Params::new();
        for (i, (r, c)) in [(400, 400), (1, 400), (300, 200), (7, 3)].into_iter().enumerate() {
            a.add(&format!("p{i}"), Init::HeNormal.matrix(r, c, &mut rng)).unwrap();
        }
        a.set_frozen(ParamId(3), true);
        let fill = |p: &mut Params, seed: u64| {
            let mut rng = Rng::new(seed);
            for id in p.ids().collect::<Vec<_>>() {
                p.grad_mut(id).data_mut().iter_mut().for_each(|g| *g = rng.uniform(-1.0, 1.0));
            }
        };
        let mut b = a.clone();
        let opts = || -> Vec<Box<dyn Optimizer>> { vec![Box::new(Adam::adamw(1e-3, 0.01)), Box::new(Sgd::new(0.1).with_momentum(0.9).with_weight_decay(1e-3)), Box::new(Sgd::new(0.1))] };
        for (mut oa, mut ob) in opts().into_iter().zip(opts()) {
            for step in 0..3 {
                fill(&mut a, step);
                fill(&mut b, step);
                oa.step(&mut a);
                serial(|| ob.step(&mut b));
            }
        }
        for id in a.ids() {
            assert_eq!(a.value(id).data(), b.value(id).data(), "{}", a.name(id));
            assert!(a.grad(id).data().iter().all(|&g| g == 0.0) || a.is_frozen(id));
        }
    }
}
