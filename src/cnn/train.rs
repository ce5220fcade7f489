//! Solving the network ("Solving the problem"): SGD with momentum 0.9 (Mocha's form, the
//! rate inside the velocity), L2 regularisation 0.0005 on the weights (Mocha's default
//! applies it to filters and weights, not biases), the "inv" learning-rate policy
//! lr = 0.01 × (1 + 0.0001·iter)^−0.75 per iteration, batch 1024, shuffled every epoch,
//! dropout 0.2 on the hidden layer; both validation sets judged after every epoch.

use super::data::{batch, Sets};
use super::metrics::Report;
use super::model::Cnn;
use crate::data::dataset::Record;
use crate::tensor::optim::LrPolicy;
use crate::tensor::{Matrix, Precision, Rng, Tape};
use crate::train::checkpoint::OptCfg;
use crate::train::stage::{Ctx, EpochStats, StageCfg};
use std::time::Instant;

/// The schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainCfg {
    pub epochs: usize,
    pub batch: usize,
    pub lr: LrPolicy,
    pub momentum: f32,
    /// L2 coefficient on the weights (gradient += coefficient × weight).
    pub weight_decay: f32,
    /// Dropout rate after the hidden layer.
    pub dropout: f32,
}

impl TrainCfg {
    /// One line for results: `5 epochs, batch 1024, lr inv(0.01, 0.0001, 0.75), …`.
    pub fn describe(&self) -> String {
        let lr = match self.lr {
            LrPolicy::Inv { base, gamma, power } => format!("lr {base} x (1 + {gamma} iter)^-{power}"),
            LrPolicy::Fixed(lr) => format!("lr {lr}"),
        };
        format!(
            "{} epochs, batch {}, {lr}, momentum {}, L2 {} on weights, dropout {}",
            self.epochs, self.batch, self.momentum, self.weight_decay, self.dropout
        )
    }

    /// The seed's solver (its Mocha script): ~5 epochs.
    pub fn seed() -> TrainCfg {
        TrainCfg { epochs: 5, batch: 1024, lr: LrPolicy::Inv { base: 0.01, gamma: 1e-4, power: 0.75 }, momentum: 0.9, weight_decay: 5e-4, dropout: 0.2 }
    }
}

/// The net's figures on `records` (no dropout: the inference network).
pub fn evaluate(net: &Cnn, records: &[Record]) -> Report {
    let mut tape = Tape::new();
    let (mut x, mut y) = (Matrix::zeros(0, 0), Matrix::zeros(0, 0));
    let mut report = Report::default();
    let idx: Vec<usize> = (0..records.len()).collect();
    for chunk in idx.chunks(1024) {
        batch(records, chunk, &mut x, &mut y);
        tape.reset();
        let xv = tape.input(&x);
        let z = net.logit_on_tape(&mut tape, xv, None).expect("shapes of the net");
        let p = tape.sigmoid(z).expect("shapes of the net");
        for (r, &pv) in tape.value(p).data().iter().enumerate() {
            report.add(pv, y.get(r, 0) > 0.5);
        }
    }
    report
}

/// Trains `net` on `sets.train` as stage `cnn` of the run in `ctx`. The validation on held-out
/// games is the epoch's `val` figure; the position split is logged beside it as
/// `cnn.valid_positions`.
pub fn train(ctx: &mut Ctx, net: &mut Cnn, sets: &Sets, cfg: &TrainCfg) -> Result<(), String> {
    let stage = StageCfg {
        epochs: cfg.epochs,
        samples: sets.train.len(),
        batch: cfg.batch,
        opt: OptCfg::SgdMocha { lr: cfg.lr.at(0), momentum: cfg.momentum },
        precision: Precision::F32,
    };
    let per_epoch = sets.train.len().div_ceil(cfg.batch.max(1)) as u64;
    let mut order: Vec<usize> = (0..sets.train.len()).collect();
    let mut tape = Tape::new();
    let (mut x, mut y) = (Matrix::zeros(0, 0), Matrix::zeros(0, 0));
    let weights = net.weights();
    let mut params = std::mem::take(&mut net.params);
    let result = ctx.run_stage("cnn", &mut params, &stage, |params, opt, epoch, rng| {
        net.params = std::mem::take(params);
        order.sort_unstable();
        rng.shuffle(&mut order);
        let mut drop_rng = Rng::new(rng.next_u64());
        let (mut loss, mut right, mut seen) = (0.0f64, 0usize, 0usize);
        let t = Instant::now();
        for (b, chunk) in order.chunks(cfg.batch).enumerate() {
            opt.set_lr(cfg.lr.at(epoch as u64 * per_epoch + b as u64));
            batch(&sets.train, chunk, &mut x, &mut y);
            tape.reset();
            let xv = tape.input(&x);
            let z = net.logit_on_tape(&mut tape, xv, Some((cfg.dropout, &mut drop_rng))).map_err(|e| e.to_string())?;
            let (l, p) = net.loss_on_tape(&mut tape, z, &y).map_err(|e| e.to_string())?;
            let lv = tape.scalar(l);
            if !lv.is_finite() {
                return Err(format!("epoch {} batch {b}: the loss is {lv}: training diverged (lower the learning rate)", epoch + 1));
            }
            loss += lv as f64 * chunk.len() as f64;
            right += tape.value(p).data().iter().zip(y.data()).filter(|(p, t)| (**p > 0.5) == (**t > 0.5)).count();
            seen += chunk.len();
            tape.backward(l, &mut net.params).map_err(|e| e.to_string())?;
            if cfg.weight_decay != 0.0 {
                for id in weights {
                    let (w, g) = net.params.value_and_grad_mut(id);
                    for (gv, wv) in g.data_mut().iter_mut().zip(w.data()) {
                        *gv += cfg.weight_decay * wv;
                    }
                }
            }
            opt.step(&mut net.params);
            if b % 50 == 49 {
                let secs = t.elapsed().as_secs_f64();
                eprint!(
                    "\r[cnn] epoch {} batch {}/{per_epoch} loss {:.4} train {:.2}% {:.0} pos/s   ",
                    epoch + 1,
                    b + 1,
                    loss / seen as f64,
                    100.0 * right as f64 / seen as f64,
                    seen as f64 / secs.max(1e-9)
                );
            }
        }
        eprintln!();
        let games = if sets.valid_games.is_empty() { f64::NAN } else { evaluate(net, &sets.valid_games).accuracy() };
        let positions = if sets.valid_positions.is_empty() { f64::NAN } else { evaluate(net, &sets.valid_positions).accuracy() };
        *params = std::mem::take(&mut net.params);
        Ok(EpochStats::new(loss / seen.max(1) as f64, right as f64 / seen.max(1) as f64, games, seen).with_accuracy("valid_positions", positions))
    });
    net.params = params;
    result
}
