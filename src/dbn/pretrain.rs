//! Greedy layer-wise pretraining (section II.B): each hidden layer is trained as a
//! restricted Boltzmann machine by contrastive divergence on the representation the layers
//! below give the data, "starting with the input layer and the subsequent hidden layer";
//! "once a layer has completed the pre-training … this layer takes over the task of being
//! the visible layer" of the next.
//!
//! The layers above the input see the hidden probabilities of the RBMs below (the usual
//! deterministic up-pass of a DBN). The seed fine-tunes with ReLU units on weights pretrained
//! as Bernoulli RBMs; so do we: the RBM's weights and hidden biases become the layer's.
//!
//! Logged per epoch: the reconstruction error (the loss column) and the free-energy gap,
//! mean F(held-out) − mean F(training sample), which rises when the RBM starts to fit its
//! training positions rather than positions in general (Hinton's practical guide, §6).

use super::data::{EpochOrder, Samples};
use crate::dbn::rbm::Rbm;
use crate::tensor::{Matrix, Params, Rng, WeightFile};
use crate::train::checkpoint::OptCfg;
use crate::train::stage::{Ctx, EpochStats, StageCfg};
use std::path::Path;

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
    let mut stack: Stack = load_stack(file, widths)?;
    if !stack.is_empty() {
        eprintln!("[rbm] {} of {} layers already pretrained in {}", stack.len(), widths.len() - 1, file.display());
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
        let stage = StageCfg { epochs: cfg.epochs, samples: train.len(), batch: cfg.batch, opt: OptCfg::Sgd { lr: cfg.lr, decay: cfg.decay, momentum: 0.0 } };
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
            Ok(EpochStats { loss: err / batches.max(1) as f64, train_acc: f64::NAN, val_acc: f64::NAN, samples: order.len(), aux: Some(("fe_gap", gap)), aux_val: None })
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
fn load_stack(file: &Path, widths: &[usize]) -> Result<Stack, String> {
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
