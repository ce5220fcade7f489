//! Training a DBN, the seed's two steps:
//!
//! **Pre-training** (section II.B): greedy, layer-wise. Each hidden layer is trained as a
//! restricted Boltzmann machine ([`super::rbm`]) by contrastive divergence on the
//! representation the layers below give the data, "starting with the input layer and the
//! subsequent hidden layer"; "once a layer has completed the pre-training … this layer takes
//! over the task of being the visible layer" of the next. The layers above the input see the
//! hidden probabilities of the RBMs below (the usual deterministic up-pass of a DBN). The seed
//! fine-tunes with ReLU units on weights pretrained as Bernoulli RBMs; so do we: the RBM's
//! weights and hidden biases become the layer's. Logged per epoch: the reconstruction error
//! (the loss column) and the free-energy gap, mean F(held-out) − mean F(training sample),
//! which rises when the RBM starts to fit its training positions rather than positions in
//! general (Hinton's practical guide, §6).
//!
//! **Fine-tuning** (sections II.C, III.B): an output layer on the pretrained stack, then the
//! whole net trained by SGD with dropout 0.5 on every hidden layer; and the figures each head
//! is judged by.

use crate::dbn::rbm::Rbm;
use crate::tensor::{Matrix, Params, Precision, Rng, SparseBatch, Tape, WeightFile};
use crate::train::checkpoint::OptCfg;
use crate::train::stage::{Ctx, EpochStats, StageCfg};
use std::path::Path;
use super::data::{EpochOrder, Samples};
use super::model::{Dbn, Head};
use super::targets::CLIP_CP;

/// Schedule of each layer's RBM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RbmCfg {
    pub epochs: usize,
    pub batch: usize,
    pub lr: f32,
    /// Per-epoch multiplier of the learning rate.
    pub decay: f32,
    /// Gibbs steps of CD-k.
    pub k: usize,
}

/// Positions whose free energy is compared (training sample and held-out).
const GAP_SAMPLE: usize = 2000;

/// A pretrained stack: each layer's (weights `in × out`, hidden bias `1 × out`).
pub type Stack = Vec<(Matrix, Matrix)>;

/// The representation of rows `idx` after the layers of `stack`: 0/1 bits, then each
/// layer's hidden probabilities.
fn represent(samples: &Samples, idx: &[usize], stack: &[(Matrix, Matrix)], bufs: &mut [Matrix; 2]) -> usize {
    samples.dense(idx, &mut bufs[0]);
    let mut cur = 0;
    for (w, hb) in stack {
        let (a, b) = bufs.split_at_mut(1);
        let (src, dst) = if cur == 0 { (&a[0], &mut b[0]) } else { (&b[0], &mut a[0]) };
        dst.resize(src.rows(), w.cols());
        crate::tensor::layers::affine(src, w, hb, dst).expect("shapes of one stack");
        crate::tensor::layers::sigmoid_inplace(dst);
        cur = 1 - cur;
    }
    cur
}

/// Pretrains the hidden layers `widths[1..]` over `widths[0]` inputs, one RBM each, in the
/// run folder of `ctx`. Finished layers are kept in `file` after each one, so a resumed run
/// continues with the first unfinished layer (and inside it from its last epoch).
pub fn pretrain(ctx: &mut Ctx, samples: &Samples, train: &[usize], valid: &[usize], widths: &[usize], cfg: &RbmCfg, file: &Path) -> Result<Stack, String> {
    let mut stack: Stack = read_stack(file, widths)?;
    if !stack.is_empty() {
        eprintln!("[{}rbm] {} of {} layers already pretrained in {}", ctx.label, stack.len(), widths.len() - 1, file.display());
    }
    let gap_train: Vec<usize> = train.iter().step_by((train.len() / GAP_SAMPLE).max(1)).copied().take(GAP_SAMPLE).collect();
    let gap_valid: Vec<usize> = valid.iter().step_by((valid.len() / GAP_SAMPLE).max(1)).copied().take(GAP_SAMPLE).collect();
    for layer in stack.len()..widths.len() - 1 {
        let (nv, nh) = (widths[layer], widths[layer + 1]);
        let mut init = Rbm::new(nv, nh, &mut Rng::new(ctx.seed ^ (layer as u64 + 1)));
        let mut params = Params::new();
        let w = params.add("rbm.w", std::mem::replace(&mut init.w, Matrix::zeros(0, 0))).map_err(|e| e.to_string())?;
        let vb = params.add("rbm.vb", std::mem::replace(&mut init.vbias, Matrix::zeros(0, 0))).map_err(|e| e.to_string())?;
        let hb = params.add("rbm.hb", std::mem::replace(&mut init.hbias, Matrix::zeros(0, 0))).map_err(|e| e.to_string())?;
        let stage = StageCfg { epochs: cfg.epochs, samples: train.len(), batch: cfg.batch, opt: OptCfg::Sgd { lr: cfg.lr, decay: cfg.decay, momentum: 0.0 }, precision: Precision::F32 };
        let mut rbm = init;
        let mut bufs = [Matrix::zeros(0, 0), Matrix::zeros(0, 0)];
        let name = format!("rbm.{layer}");
        let mut orders = EpochOrder::new(train, ctx.seed, &name);
        let below = stack.clone();
        ctx.run_stage(&name, &mut params, &stage, |params, opt, epoch, rng| {
            rbm.w = params.value(w).clone();
            rbm.vbias = params.value(vb).clone();
            rbm.hbias = params.value(hb).clone();
            let order = orders.epoch(epoch, rng);
            let (mut err, mut batches) = (0.0, 0usize);
            for chunk in order.chunks(cfg.batch) {
                let cur = represent(samples, chunk, &below, &mut bufs);
                let st = rbm.cd_k(&bufs[cur], cfg.k, opt.lr(), rng).map_err(|e| e.to_string())?;
                err += st.recon_error;
                batches += 1;
            }
            let fe = |idx: &[usize], bufs: &mut [Matrix; 2]| {
                let cur = represent(samples, idx, &below, bufs);
                let f = rbm.free_energy(&bufs[cur]).expect("shapes of one stack");
                f.iter().sum::<f64>() / f.len().max(1) as f64
            };
            let gap = if gap_valid.is_empty() { f64::NAN } else { fe(&gap_valid, &mut bufs) - fe(&gap_train, &mut bufs) };
            *params.value_mut(w) = rbm.w.clone();
            *params.value_mut(vb) = rbm.vbias.clone();
            *params.value_mut(hb) = rbm.hbias.clone();
            Ok(EpochStats::new(err / batches.max(1) as f64, f64::NAN, f64::NAN, order.len()).with_figure("fe_gap", gap))
        })?;
        stack.push((params.value(w).clone(), params.value(hb).clone()));
        save_stack(file, &stack, &ctx.meta)?;
    }
    Ok(stack)
}

fn save_stack(file: &Path, stack: &Stack, meta: &[(String, String)]) -> Result<(), String> {
    let mut tensors = Vec::new();
    for (i, (w, b)) in stack.iter().enumerate() {
        tensors.push((format!("hidden.{i}.w"), w.clone()));
        tensors.push((format!("hidden.{i}.b"), b.clone()));
    }
    let mut m = vec![("kind".to_string(), "dbn-pretrained".to_string()), ("layers".to_string(), stack.len().to_string())];
    m.extend(meta.iter().cloned());
    WeightFile { meta: m, tensors }.save(file).map_err(|e| e.to_string())
}

/// The layers pretrained so far (none when `file` does not exist), checked against `widths`.
fn read_stack(file: &Path, widths: &[usize]) -> Result<Stack, String> {
    if !file.exists() {
        return Ok(Vec::new());
    }
    let wf = WeightFile::load(file).map_err(|e| e.to_string())?;
    let origin = file.display().to_string();
    let n: usize = wf.meta("layers").and_then(|v| v.parse().ok()).ok_or_else(|| format!("{origin}: no layer count: not a pretrained DBN stack"))?;
    if wf.meta("kind") != Some("dbn-pretrained") || n >= widths.len() {
        return Err(format!("{origin}: not a pretrained stack of {} layers", widths.len() - 1));
    }
    let mut stack = Vec::new();
    for i in 0..n {
        let w = wf.get_shaped(&format!("hidden.{i}.w"), widths[i], widths[i + 1], &origin).map_err(|e| e.to_string())?;
        let b = wf.get_shaped(&format!("hidden.{i}.b"), 1, widths[i + 1], &origin).map_err(|e| e.to_string())?;
        stack.push((w.clone(), b.clone()));
    }
    Ok(stack)
}

// ---------------------------------------------------------------- fine-tuning

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
    /// Joint gradient norm a step may take, or none (the seed clips nothing).
    pub clip: Option<f64>,
}

impl FineCfg {
    /// The schedule as run.txt records it; the clip is a setting of its own, so that runs
    /// recorded before it existed still resume.
    pub fn schedule(&self) -> String {
        let FineCfg { epochs, batch, lr, decay, momentum, dropout, clip: _ } = self;
        format!("FineCfg {{ epochs: {epochs}, batch: {batch}, lr: {lr:?}, decay: {decay:?}, momentum: {momentum:?}, dropout: {dropout:?} }}")
    }
}

/// The default joint gradient norm a step may take (beyond the seed): the ReLU net over
/// RBM-pretrained weights of the 772-600-400-200-100 configuration diverged to NaN in its
/// first epoch at batch 32 under the quick profile without it (docs/notebook/results.md).
/// The share of steps that hit it and the mean norm before clipping are logged per epoch.
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
        precision: Precision::F32,
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
        let (mut loss, mut batches, mut right, mut clipped, mut norms) = (0.0, 0usize, 0usize, 0usize, 0.0);
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
            norms += match cfg.clip {
                Some(max) => {
                    let n = net.params.clip_grad_norm(max);
                    clipped += (n > max) as usize;
                    n
                }
                None => net.params.grad_norm(),
            };
            opt.step(&mut net.params);
            batches += 1;
        }
        // A non-finite loss or gradient: the weights that follow are not numbers.
        if !(loss.is_finite() && norms.is_finite()) {
            let hint = if cfg.clip.is_none() { "--clip-norm 5 bounds each step" } else { "a lower --lr or --clip-norm may help" };
            return Err(format!("{name}: fine-tuning diverged in epoch {} (loss {loss}, mean gradient norm {})\n{hint}", epoch + 1, norms / batches.max(1) as f64));
        }
        let val = if valid.is_empty() { f64::NAN } else { evaluate(net, samples, valid).accuracy };
        *params = std::mem::take(&mut net.params);
        let stats = EpochStats::new(loss / batches.max(1) as f64, right as f64 / order.len().max(1) as f64, val, order.len());
        let per_batch = |x: f64| x / batches.max(1) as f64;
        let stats = stats.with_figure("grad_norm", per_batch(norms));
        Ok(if cfg.clip.is_some() { stats.with_figure("clipped", per_batch(clipped as f64)) } else { stats })
    });
    net.params = params;
    result
}
