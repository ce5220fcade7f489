//! What every phase shares: W/L pools, pair batches, pair accuracy, optimizer settings,
//! checkpoints.

use crate::data::dataset::Dataset;
use crate::data::encode::{Features, INPUTS};
use crate::net::{batch_of, Net};
use crate::tensor::{Adam, Matrix, Optimizer, Params, Rng, Sgd, SparseBatch, Tape, WeightFile};
use std::path::Path;

/// W positions (from games White won) and L positions, as feature lists.
#[derive(Clone, Default)]
pub struct Pools {
    pub w: Vec<Features>,
    pub l: Vec<Features>,
}

impl Pools {
    /// From a dataset; with `mirror`, each position's colour-mirrored twin joins the
    /// other pool (a W position mirrored is an L position), doubling the data.
    pub fn from_dataset(d: &Dataset, mirror: bool) -> Pools {
        let mut p = Pools::default();
        for r in &d.records {
            let f = r.features();
            let (own, other) = if r.label == 1 { (&mut p.w, &mut p.l) } else { (&mut p.l, &mut p.w) };
            own.push(f);
            if mirror {
                other.push(f.mirrored());
            }
        }
        p
    }

    pub fn len(&self) -> usize {
        self.w.len() + self.l.len()
    }

    pub fn is_empty(&self) -> bool {
        self.w.is_empty() || self.l.is_empty()
    }

    /// Keeps at most `n` positions of each class (the first ones: datasets are in game
    /// order, so this is a subset of games, used for accuracy-vs-data curves).
    pub fn truncate(&mut self, n: usize) {
        self.w.truncate(n);
        self.l.truncate(n);
    }
}

/// Per-epoch random stream: depends only on (seed, what, epoch), so a resumed run draws
/// exactly what the uninterrupted run drew.
pub fn epoch_rng(seed: u64, what: &str, epoch: usize) -> Rng {
    let mut h = seed ^ 0x5DEE_CE66_D1CE_4E5B;
    for b in what.bytes().chain((epoch as u64).to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    Rng::new(h)
}

/// Fills a batch of `n` random (W, L) pairs, each ordered at random; label 0 when the first
/// position is the W one (the paper's output (1, 0)).
pub fn pair_batch(pools: &Pools, rng: &mut Rng, n: usize, xa: &mut SparseBatch, xb: &mut SparseBatch, labels: &mut Vec<usize>) {
    let mut a: Vec<&[u16]> = Vec::with_capacity(n);
    let mut b: Vec<&[u16]> = Vec::with_capacity(n);
    labels.clear();
    for _ in 0..n {
        let w = pools.w[rng.below(pools.w.len() as u64) as usize].as_slice();
        let l = pools.l[rng.below(pools.l.len() as u64) as usize].as_slice();
        if rng.next_u64() & 1 == 0 {
            a.push(w);
            b.push(l);
            labels.push(0);
        } else {
            a.push(l);
            b.push(w);
            labels.push(1);
        }
    }
    batch_of(&a, xa);
    batch_of(&b, xb);
}

/// Fraction of `pairs` random (W, L) pairs (fixed `seed`) that the net orders correctly.
/// (Training's per-epoch check: one forward pass per pair.)
pub fn pair_accuracy(net: &Net, pools: &Pools, pairs: usize, seed: u64) -> f64 {
    accuracies(&[net], pools, pairs, seed, false).0
}

/// Pair accuracy of the nets' averaged probability (one net: [`pair_accuracy`]), and with
/// both orders of each pair averaged as well (`(P(a, b) + 1 − P(b, a)) / 2` against ½:
/// the antisymmetric reading the engine uses).
pub fn pair_accuracies(nets: &[&Net], pools: &Pools, pairs: usize, seed: u64) -> (f64, f64) {
    accuracies(nets, pools, pairs, seed, true)
}

/// Both of the above; the swapped order is only evaluated `with_swapped` (else NaN).
fn accuracies(nets: &[&Net], pools: &Pools, pairs: usize, seed: u64, with_swapped: bool) -> (f64, f64) {
    if pools.is_empty() || pairs == 0 || nets.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = Rng::new(seed);
    let mut tape = Tape::new();
    let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    let mut labels = Vec::new();
    let (mut right, mut right_both, mut done) = (0usize, 0usize, 0usize);
    // P(output 0) = P(the first position is the winner): label 0.
    let p0 = |z: &crate::tensor::Matrix, i: usize| 1.0 / (1.0 + (z.get(i, 1) - z.get(i, 0)).exp());
    let (mut one, mut both) = (Vec::new(), Vec::new());
    while done < pairs {
        let n = (pairs - done).min(1024);
        pair_batch(pools, &mut rng, n, &mut xa, &mut xb, &mut labels);
        one.clear();
        one.resize(n, 0.0f32);
        both.clear();
        both.resize(n, 0.0f32);
        for net in nets {
            tape.reset();
            let logits = net.pair_logits_on_tape(&mut tape, &xa, &xb).expect("shapes are the net's own");
            let z = tape.value(logits);
            for i in 0..n {
                one[i] += p0(z, i);
            }
            if with_swapped {
                let swapped = net.pair_logits_on_tape(&mut tape, &xb, &xa).expect("shapes are the net's own");
                let (z, zs) = (tape.value(logits), tape.value(swapped));
                for i in 0..n {
                    both[i] += 0.5 * (p0(z, i) + 1.0 - p0(zs, i));
                }
            }
        }
        let half = 0.5 * nets.len() as f32;
        for (i, &lab) in labels.iter().enumerate() {
            right += usize::from(usize::from(one[i] < half) == lab);
            right_both += usize::from(usize::from(both[i] < half) == lab);
        }
        done += n;
    }
    (right as f64 / pairs as f64, if with_swapped { right_both as f64 / pairs as f64 } else { f64::NAN })
}

/// Which optimizer a phase uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptCfg {
    /// SGD with the paper's per-epoch multiplicative decay, optional momentum.
    Sgd { lr: f32, decay: f32, momentum: f32 },
    /// Adam / AdamW (weight decay decoupled), with per-epoch decay.
    Adam { lr: f32, decay: f32, weight_decay: f32 },
}

impl OptCfg {
    pub fn build(self) -> Box<dyn Optimizer> {
        match self {
            OptCfg::Sgd { lr, decay, momentum } => Box::new(Sgd::new(lr).with_decay(decay).with_momentum(momentum)),
            OptCfg::Adam { lr, decay, weight_decay } => Box::new(Adam::adamw(lr, weight_decay).with_decay(decay)),
        }
    }

    pub fn describe(self) -> String {
        match self {
            OptCfg::Sgd { lr, decay, momentum } => format!("SGD lr {lr} x {decay}^epoch momentum {momentum}"),
            OptCfg::Adam { lr, decay, weight_decay } => format!("AdamW lr {lr} x {decay}^epoch wd {weight_decay}"),
        }
    }
}

/// A checkpoint: parameters, optimizer state and where the schedule stands.
pub struct Checkpoint {
    pub meta: Vec<(String, String)>,
    pub params: Vec<(String, Matrix)>,
    pub opt: Vec<(String, Matrix)>,
}

impl Checkpoint {
    pub fn save(path: &Path, meta: &[(String, String)], params: &Params, opt: &dyn Optimizer) -> crate::tensor::Result<()> {
        let mut tensors: Vec<(String, Matrix)> =
            params.ids().map(|id| (format!("net.{}", params.name(id)), params.value(id).clone())).collect();
        tensors.extend(opt.state().into_iter().map(|(n, m)| (format!("opt.{n}"), m)));
        let mut m = vec![("kind".to_string(), "deepchess-checkpoint".to_string())];
        m.extend_from_slice(meta);
        WeightFile { meta: m, tensors }.save(path)
    }

    pub fn load(path: &Path) -> crate::tensor::Result<Checkpoint> {
        let wf = WeightFile::load(path)?;
        if wf.meta("kind") != Some("deepchess-checkpoint") {
            return Err(crate::tensor::TensorError::format(&path.display().to_string(), "not a deepchess training checkpoint"));
        }
        let (mut params, mut opt) = (Vec::new(), Vec::new());
        for (n, m) in wf.tensors {
            if let Some(p) = n.strip_prefix("net.") {
                params.push((p.to_string(), m));
            } else if let Some(o) = n.strip_prefix("opt.") {
                opt.push((o.to_string(), m));
            }
        }
        Ok(Checkpoint { meta: wf.meta, params, opt })
    }

    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Copies the parameters into `params` (names and shapes checked).
    pub fn restore(&self, params: &mut Params, opt: &mut dyn Optimizer, origin: &str) -> crate::tensor::Result<()> {
        let wf = WeightFile { meta: Vec::new(), tensors: self.params.clone() };
        params.assign_from(&wf, origin)?;
        opt.set_state(&self.opt);
        Ok(())
    }
}
