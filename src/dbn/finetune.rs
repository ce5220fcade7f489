//! Supervised fine-tuning (section II.C, III.B): an output layer on the pretrained stack,
//! then the whole net trained by SGD with dropout 0.5 on every hidden layer, and the
//! figures each head is judged by.

use super::data::{EpochOrder, Samples};
use super::model::{Dbn, Head};
use super::pretrain::Stack;
use super::targets::CLIP_CP;
use crate::tensor::{Matrix, Rng, SparseBatch, Tape};
use crate::train::checkpoint::OptCfg;
use crate::train::stage::{Ctx, EpochStats, StageCfg};

/// Schedule of fine-tuning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FineCfg {
    pub epochs: usize,
    pub batch: usize,
    pub lr: f32,
    pub decay: f32,
    pub momentum: f32,
    /// Dropout rate on hidden layers (the seed: 0.5).
    pub dropout: f32,
}

/// Joint gradient norm a step may take (beyond the seed): the ReLU net over RBM-pretrained
/// weights of the 772-600-400-200-100 configuration diverged to NaN in its first epoch at
/// batch 32 without it (docs/results.md). Steps that hit it are logged per epoch.
pub const MAX_GRAD_NORM: f64 = 5.0;

/// A regression output within this distance of its target (normalised units: 0.1 = 30 cp)
/// counts as right: the seed reports an "accuracy" for regression without defining it.
pub const REGRESS_TOLERANCE: f32 = 0.1;

/// How a net does on a set of positions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Classify, quantized: argmax equals the class. Regress: within [`REGRESS_TOLERANCE`].
    pub accuracy: f64,
    /// Regress: mean absolute error in centipawns (of the clipped score); others NaN.
    pub mae_cp: f64,
    pub positions: usize,
}

/// Copies a pretrained stack into the net's hidden layers.
pub fn load_stack(net: &mut Dbn, stack: &Stack) {
    for (&(w, b), (sw, sb)) in net.hidden.iter().zip(stack) {
        *net.params.value_mut(w) = sw.clone();
        *net.params.value_mut(b) = sb.clone();
    }
}

fn targets(net: &Dbn, samples: &Samples, idx: &[usize], classes: &mut Vec<usize>, scores: &mut Matrix) {
    classes.clear();
    scores.resize(idx.len(), 1);
    for (r, &i) in idx.iter().enumerate() {
        let s = &samples.items[i];
        classes.push(match net.arch.head {
            Head::Classify => s.wdl as usize,
            _ => s.qclass as usize,
        });
        scores.set(r, 0, s.target);
    }
}

/// Whether row `r` of the head's output is right, and its absolute error (regress).
fn judge(head: Head, out: &Matrix, r: usize, class: usize, target: f32) -> (bool, f32) {
    match head {
        Head::Regress => {
            let e = (out.get(r, 0) - target).abs();
            (e <= REGRESS_TOLERANCE, e)
        }
        _ => {
            let row = out.row(r);
            let best = (0..row.len()).fold(0, |b, c| if row[c] > row[b] { c } else { b });
            (best == class, 0.0)
        }
    }
}

/// The net's figures on positions `idx` (no dropout: the inference network).
pub fn evaluate(net: &Dbn, samples: &Samples, idx: &[usize]) -> Metrics {
    let mut tape = Tape::new();
    let mut x = SparseBatch::new(samples.encoding.inputs());
    let (mut classes, mut scores) = (Vec::new(), Matrix::zeros(0, 0));
    let (mut right, mut abs) = (0usize, 0.0f64);
    for chunk in idx.chunks(1024) {
        samples.sparse(chunk, &mut x);
        targets(net, samples, chunk, &mut classes, &mut scores);
        tape.reset();
        let z = net.logits_on_tape(&mut tape, &x, None).expect("shapes of the net");
        let (_, y) = net.loss_on_tape(&mut tape, z, &classes, &scores).expect("shapes of the net");
        let out = tape.value(y);
        for r in 0..chunk.len() {
            let (ok, e) = judge(net.arch.head, out, r, classes[r], scores.get(r, 0));
            right += ok as usize;
            abs += e as f64;
        }
    }
    let n = idx.len().max(1) as f64;
    Metrics {
        accuracy: right as f64 / n,
        mae_cp: if net.arch.head == Head::Regress { abs / n * CLIP_CP as f64 } else { f64::NAN },
        positions: idx.len(),
    }
}

/// Fine-tunes `net` (its hidden layers already pretrained) as stage `finetune.HEAD` of the
/// run in `ctx`; the validation figure of every epoch is logged.
pub fn finetune(ctx: &mut Ctx, net: &mut Dbn, samples: &Samples, train: &[usize], valid: &[usize], cfg: &FineCfg) -> Result<(), String> {
    let stage = StageCfg {
        epochs: cfg.epochs,
        samples: train.len(),
        batch: cfg.batch,
        opt: OptCfg::Sgd { lr: cfg.lr, decay: cfg.decay, momentum: cfg.momentum },
    };
    let name = format!("finetune.{}", net.arch.head.name());
    let mut orders = EpochOrder::new(train, ctx.seed, &name);
    let mut tape = Tape::new();
    let mut x = SparseBatch::new(samples.encoding.inputs());
    let (mut classes, mut scores) = (Vec::new(), Matrix::zeros(0, 0));
    let mut params = std::mem::take(&mut net.params);
    let result = ctx.run_stage(&name, &mut params, &stage, |params, opt, epoch, rng| {
        net.params = std::mem::take(params);
        let order = orders.epoch(epoch, rng);
        let (mut loss, mut batches, mut right, mut clipped) = (0.0, 0usize, 0usize, 0usize);
        let mut drop_rng = Rng::new(rng.next_u64());
        for chunk in order.chunks(cfg.batch) {
            samples.sparse(chunk, &mut x);
            targets(net, samples, chunk, &mut classes, &mut scores);
            tape.reset();
            let z = net.logits_on_tape(&mut tape, &x, Some((cfg.dropout, &mut drop_rng))).map_err(|e| e.to_string())?;
            let (l, y) = net.loss_on_tape(&mut tape, z, &classes, &scores).map_err(|e| e.to_string())?;
            loss += tape.scalar(l) as f64;
            let out = tape.value(y);
            right += (0..chunk.len()).filter(|&r| judge(net.arch.head, out, r, classes[r], scores.get(r, 0)).0).count();
            tape.backward(l, &mut net.params).map_err(|e| e.to_string())?;
            clipped += net.params.clip_grad_norm(MAX_GRAD_NORM) as usize;
            opt.step(&mut net.params);
            batches += 1;
        }
        let val = if valid.is_empty() { f64::NAN } else { evaluate(net, samples, valid).accuracy };
        *params = std::mem::take(&mut net.params);
        Ok(EpochStats { loss: loss / batches.max(1) as f64, train_acc: right as f64 / order.len().max(1) as f64, val_acc: val, samples: order.len(), aux: Some(("clipped", clipped as f64 / batches.max(1) as f64)), aux_val: None })
    });
    net.params = params;
    result
}
