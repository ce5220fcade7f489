//! Optimizers over a [`Params`] store: SGD with the paper's per-epoch multiplicative
//! learning-rate decay (`lr · decay^epoch`), SGD with momentum, and Adam / AdamW.
//! A step skips frozen parameters and **clears** the gradients it consumed.

use super::matrix::Matrix;
use super::params::{ParamId, Params};

/// What every optimizer offers to a training loop.
pub trait Optimizer {
    /// Updates every trainable parameter from its gradient, then zeroes the gradients.
    fn step(&mut self, params: &mut Params);
    /// Current learning rate.
    fn lr(&self) -> f32;
    fn set_lr(&mut self, lr: f32);
    /// Called once at the end of each epoch: applies the multiplicative decay.
    fn end_epoch(&mut self);
    /// Everything a resumed run needs to continue bit for bit (lr, step count, moments).
    fn state(&self) -> Vec<(String, Matrix)>;
    /// Restores [`Optimizer::state`]; tensors it does not know are ignored.
    fn set_state(&mut self, state: &[(String, Matrix)]);
}

fn scalar(v: f32) -> Matrix {
    Matrix::filled(1, 1, v)
}

fn find<'a>(state: &'a [(String, Matrix)], name: &str) -> Option<&'a Matrix> {
    state.iter().find(|(n, _)| n == name).map(|(_, m)| m)
}

/// Collects `prefix.0`, `prefix.1`, … from a saved state.
fn indexed(state: &[(String, Matrix)], prefix: &str) -> Vec<Matrix> {
    (0..).map_while(|i| find(state, &format!("{prefix}.{i}")).cloned()).collect()
}

/// Lazily sized per-parameter state (momentum, Adam moments).
fn state_for(state: &mut Vec<Matrix>, params: &Params) {
    while state.len() < params.len() {
        let v = params.value(ParamId(state.len()));
        state.push(Matrix::zeros(v.rows(), v.cols()));
    }
}

/// Stochastic gradient descent, optionally with momentum and L2 weight decay.
/// The paper: `Sgd::new(0.005).with_decay(0.98)` (Pos2Vec), `Sgd::new(0.01).with_decay(0.99)` (DeepChess).
#[derive(Clone, Debug)]
pub struct Sgd {
    pub lr: f32,
    /// Learning rate multiplier applied by [`Optimizer::end_epoch`].
    pub decay: f32,
    pub momentum: f32,
    /// L2 penalty coefficient added to the gradient.
    pub weight_decay: f32,
    velocity: Vec<Matrix>,
}

impl Sgd {
    pub fn new(lr: f32) -> Self {
        Sgd { lr, decay: 1.0, momentum: 0.0, weight_decay: 0.0, velocity: Vec::new() }
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

impl Optimizer for Sgd {
    fn step(&mut self, params: &mut Params) {
        if self.momentum != 0.0 {
            state_for(&mut self.velocity, params);
        }
        let (lr, mu, wd) = (self.lr, self.momentum, self.weight_decay);
        for id in (0..params.len()).map(ParamId) {
            if params.is_frozen(id) {
                continue;
            }
            let (w, g) = params.value_and_grad_mut(id);
            if mu == 0.0 {
                for (x, gv) in w.data_mut().iter_mut().zip(g.data_mut().iter_mut()) {
                    *x -= lr * (*gv + wd * *x);
                    *gv = 0.0;
                }
            } else {
                let v = &mut self.velocity[id.index()];
                for ((x, gv), vv) in w.data_mut().iter_mut().zip(g.data_mut().iter_mut()).zip(v.data_mut()) {
                    *vv = mu * *vv + *gv + wd * *x;
                    *x -= lr * *vv;
                    *gv = 0.0;
                }
            }
        }
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
    fn set_state(&mut self, state: &[(String, Matrix)]) {
        if let Some(m) = find(state, "lr") {
            self.lr = m.get(0, 0);
        }
        self.velocity = indexed(state, "velocity");
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

impl Optimizer for Adam {
    fn step(&mut self, params: &mut Params) {
        state_for(&mut self.m, params);
        state_for(&mut self.v, params);
        self.t = self.t.saturating_add(1);
        let (b1, b2) = (self.beta1, self.beta2);
        // Bias corrections folded into the step size.
        let c1 = 1.0 - b1.powi(self.t);
        let c2 = 1.0 - b2.powi(self.t);
        let step = self.lr * c2.sqrt() / c1;
        let eps = self.eps * c2.sqrt();
        let wd = self.lr * self.weight_decay;
        for id in (0..params.len()).map(ParamId) {
            if params.is_frozen(id) {
                continue;
            }
            let (w, g) = params.value_and_grad_mut(id);
            let (m, v) = (&mut self.m[id.index()], &mut self.v[id.index()]);
            for (((x, gv), mv), vv) in w.data_mut().iter_mut().zip(g.data_mut().iter_mut()).zip(m.data_mut()).zip(v.data_mut()) {
                *mv = b1 * *mv + (1.0 - b1) * *gv;
                *vv = b2 * *vv + (1.0 - b2) * *gv * *gv;
                *x -= wd * *x + step * *mv / (vv.sqrt() + eps);
                *gv = 0.0;
            }
        }
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
    fn set_state(&mut self, state: &[(String, Matrix)]) {
        if let Some(m) = find(state, "lr") {
            self.lr = m.get(0, 0);
        }
        if let Some(t) = find(state, "t").filter(|t| t.len() == 2) {
            self.t = ((t.get(0, 0) as i32) << 16) | t.get(0, 1) as i32;
        }
        self.m = indexed(state, "m");
        self.v = indexed(state, "v");
    }
}
