//! The training steps of the phases, data-parallel: each batch is cut into [`SHARDS`]
//! shards run on their own threads ([`Shards`]), the same bits whatever the thread count,
//! their products in the precision of the thread that calls them (the stage's: `train
//! --precision`). `deepchess bench-train` times these steps.

use super::features::INPUTS;
use super::model::{stack_pairs, stacked_logits, value_on_tape, Net, ValueNet};
use crate::tensor::optim::shards::{split_rows, Shards};
use crate::tensor::{Matrix, Optimizer, ParamId, Params, SparseBatch};

/// Shards per batch: one per core of the 2-core machines this is made on. Fixed, not the
/// thread count, so a run gives the same net on any machine.
pub const SHARDS: usize = 2;

fn te(e: crate::tensor::TensorError) -> String {
    e.to_string()
}

/// The comparator's step (the Siamese phase and distillation): buffers kept between steps.
pub struct PairStep {
    shards: Shards,
    /// Per shard: its pairs stacked (first positions, then second ones) and its targets.
    parts: Vec<(SparseBatch, Matrix)>,
}

impl Default for PairStep {
    fn default() -> Self {
        PairStep::new()
    }
}

impl PairStep {
    pub fn new() -> PairStep {
        PairStep { shards: Shards::new(SHARDS), parts: (0..SHARDS).map(|_| (SparseBatch::new(INPUTS), Matrix::default())).collect() }
    }

    /// The workers' waiting time at the ends of the steps since the last call (the join;
    /// [`Shards::take_idle`]).
    pub fn take_idle(&mut self) -> std::time::Duration {
        self.shards.take_idle()
    }

    /// One optimizer step on the pairs `(xa[i], xb[i])` with softmax targets `target`
    /// (`batch × 2`): the batch's mean loss, and how many pairs the net ordered as `labels`
    /// says before the step.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        net: &mut Net,
        xa: &SparseBatch,
        xb: &SparseBatch,
        target: &Matrix,
        labels: &[usize],
        opt: &mut dyn Optimizer,
    ) -> Result<(f32, usize), String> {
        let n = xa.rows();
        if xb.rows() != n || target.rows() != n || labels.len() != n {
            return Err(format!("pair step: {n} first positions, {} second, {} targets, {} labels", xb.rows(), target.rows(), labels.len()));
        }
        // More shards than pairs would leave a shard empty (a mean over no rows).
        let split = split_rows(n, SHARDS.min(n).max(1));
        for ((rows, _), (both, t)) in split.iter().zip(self.parts.iter_mut()) {
            stack_pairs(xa, xb, rows.clone(), both);
            t.resize(rows.len(), target.cols());
            for (i, r) in rows.clone().enumerate() {
                t.row_mut(i).copy_from_slice(target.row(r));
            }
        }
        let weights: Vec<f32> = split.iter().map(|p| p.1).collect();
        if self.shards.len() != split.len() {
            self.shards = Shards::new(split.len());
        }
        let (tower, head) = (&net.tower, &net.head);
        let parts = &self.parts;
        let out = self.shards.train_step(&mut net.params, &weights, opt, |s, tape, params| {
            let logits = stacked_logits(tape, params, tower, head, &parts[s].0)?;
            let t = tape.input(&parts[s].1);
            let loss = tape.softmax_cross_entropy(logits, t)?;
            Ok((loss, logits))
        });
        let out = out.map_err(te)?;
        let mut right = 0;
        let mut loss = 0.0;
        for (s, ((rows, w), (l, logits))) in split.iter().zip(&out).enumerate() {
            loss += w * l;
            let z = self.shards.tape(s).value(*logits);
            right += rows.clone().enumerate().filter(|&(i, r)| usize::from(z.get(i, 1) > z.get(i, 0)) == labels[r]).count();
        }
        Ok((loss, right))
    }
}

/// Pos2Vec's first autoencoder step (sparse 773 → 600 ReLU → 773 sigmoid, binary
/// cross-entropy against the input bits, as one stable op on the logits): buffers kept
/// between steps.
pub struct FirstLayerStep {
    shards: Shards,
    /// Per shard: its positions and their bits as dense targets.
    parts: Vec<(SparseBatch, Matrix)>,
}

impl Default for FirstLayerStep {
    fn default() -> Self {
        FirstLayerStep::new()
    }
}

impl FirstLayerStep {
    pub fn new() -> FirstLayerStep {
        FirstLayerStep { shards: Shards::new(SHARDS), parts: (0..SHARDS).map(|_| (SparseBatch::new(INPUTS), Matrix::default())).collect() }
    }

    /// One optimizer step on the positions `x`; `ids` are the encoder's weights and bias,
    /// then the decoder's. Returns the batch's mean loss.
    pub fn step(&mut self, ae: &mut Params, ids: [ParamId; 4], x: &SparseBatch, opt: &mut dyn Optimizer) -> Result<f32, String> {
        let [enc_w, enc_b, dec_w, dec_b] = ids;
        let split = split_rows(x.rows(), SHARDS.min(x.rows()).max(1));
        for ((rows, _), (part, dense)) in split.iter().zip(self.parts.iter_mut()) {
            part.clear();
            for r in rows.clone() {
                part.push_row(x.row(r)).map_err(te)?;
            }
            part.to_dense_into(dense);
        }
        if self.shards.len() != split.len() {
            self.shards = Shards::new(split.len());
        }
        let weights: Vec<f32> = split.iter().map(|p| p.1).collect();
        let parts = &self.parts;
        let out = self
            .shards
            .train_step(ae, &weights, opt, |s, tape, ae| {
                let h = tape.sparse_affine_relu(ae, &parts[s].0, enc_w, enc_b)?;
                let y = tape.affine(ae, h, dec_w, dec_b)?;
                let target = tape.input(&parts[s].1);
                Ok((tape.bce_with_logits(y, target)?, ()))
            })
            .map_err(te)?;
        Ok(split.iter().zip(&out).map(|((_, w), (l, _))| w * l).sum())
    }
}

/// The value student's step (beyond the paper): its output against soft targets, binary
/// cross-entropy on the logit (the teacher's value through the same sigmoid), the way the
/// comparator's distillation matches softmax outputs. Buffers kept between steps.
pub struct ValueStep {
    shards: Shards,
    /// Per shard: its positions and their targets (`rows × 1`).
    parts: Vec<(SparseBatch, Matrix)>,
}

impl Default for ValueStep {
    fn default() -> Self {
        ValueStep::new()
    }
}

impl ValueStep {
    pub fn new() -> ValueStep {
        ValueStep { shards: Shards::new(SHARDS), parts: (0..SHARDS).map(|_| (SparseBatch::new(INPUTS), Matrix::default())).collect() }
    }

    /// One optimizer step on positions `x` with targets `target` (one probability each):
    /// the batch's mean loss.
    pub fn step(&mut self, net: &mut ValueNet, x: &SparseBatch, target: &[f32], opt: &mut dyn Optimizer) -> Result<f32, String> {
        if target.len() != x.rows() {
            return Err(format!("value step: {} positions, {} targets", x.rows(), target.len()));
        }
        let split = split_rows(x.rows(), SHARDS.min(x.rows()).max(1));
        for ((rows, _), (part, t)) in split.iter().zip(self.parts.iter_mut()) {
            part.clear();
            t.resize(rows.len(), 1);
            for (i, r) in rows.clone().enumerate() {
                part.push_row(x.row(r)).map_err(te)?;
                t.set(i, 0, target[r]);
            }
        }
        if self.shards.len() != split.len() {
            self.shards = Shards::new(split.len());
        }
        let weights: Vec<f32> = split.iter().map(|p| p.1).collect();
        let (layers, parts) = (&net.layers, &self.parts);
        let out = self
            .shards
            .train_step(&mut net.params, &weights, opt, |s, tape, params| {
                let v = value_on_tape(tape, params, layers, &parts[s].0)?;
                let t = tape.input(&parts[s].1);
                Ok((tape.bce_with_logits(v, t)?, ()))
            })
            .map_err(te)?;
        Ok(split.iter().zip(&out).map(|((_, w), (l, _))| w * l).sum())
    }
}
