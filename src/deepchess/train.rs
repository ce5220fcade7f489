//! The paper's three phases (section 3) on top of [`Ctx::run_stage`]:
//! - `pos2vec_layer`: one layer of the stacked autoencoder (773-600-773, then 600-400-600 on
//!   the frozen codes, …). The first decoder ends in a sigmoid with binary cross-entropy (the
//!   input is bits); deeper ones are linear with squared error (codes are real).
//! - `siamese`: the DeepChess comparator on random (W, L) pairs, random order, tied towers;
//!   with a teacher, the targets are the teacher's soft outputs (distillation, phase 3b).
//! - `distill_tower`: a small tower regressing the big tower's features (phase 3a).
//! - `distill_value` (beyond the paper): one tower learning the value a comparator gives each
//!   position against its colour mirror.

use super::features::{Features, INPUTS};
use super::model::{batch_of, draw_values, prob_first, Net, ValueNet};
use super::pairs::{aux_pair_batch, pair_accuracy, pair_batch, value_pair_accuracy, AuxPairs, Pools, Validation};
use super::step::{FirstLayerStep, PairStep, ValueStep};
use crate::tensor::{with_precision, Init, Matrix, Params, Precision, Rng, SparseBatch, Tape};
use crate::train::log::Progress;
use crate::train::stage::{Ctx, EpochStats, StageCfg};

fn te(e: crate::tensor::TensorError) -> String {
    e.to_string()
}

/// A position drawn uniformly from both pools.
pub fn random_position<'a>(pools: &'a Pools, rng: &mut Rng) -> &'a Features {
    random_position_won(pools, rng).0
}

/// [`random_position`] (the same draw) and whether White won its game.
pub fn random_position_won<'a>(pools: &'a Pools, rng: &mut Rng) -> (&'a Features, bool) {
    let i = rng.below(pools.len() as u64) as usize;
    if i < pools.w.len() {
        (&pools.w[i], true)
    } else {
        (&pools.l[i - pools.w.len()], false)
    }
}

/// A random sample of positions from both pools.
fn position_batch<'a>(pools: &'a Pools, rng: &mut Rng, n: usize, rows: &mut Vec<&'a [u16]>) {
    rows.clear();
    for _ in 0..n {
        rows.push(random_position(pools, rng).as_slice());
    }
}

/// One epoch of `cfg.samples` random positions in batches: `step` trains on a batch (in
/// `x`) and returns its loss. Progress on stderr; the epoch's mean loss.
fn position_epoch(
    name: &str,
    epoch: usize,
    pools: &Pools,
    rng: &mut Rng,
    cfg: &StageCfg,
    x: &mut SparseBatch,
    mut step: impl FnMut(&SparseBatch) -> Result<f32, String>,
) -> Result<EpochStats, String> {
    let batches = cfg.samples.div_ceil(cfg.batch);
    let mut prog = Progress::new(format!("[{name}] epoch {}", epoch + 1), batches * cfg.batch);
    let mut rows = Vec::new();
    let mut loss_sum = 0.0;
    for bi in 0..batches {
        position_batch(pools, rng, cfg.batch, &mut rows);
        batch_of(&rows, x);
        loss_sum += step(x)? as f64;
        prog.update((bi + 1) * cfg.batch, loss_sum / (bi + 1) as f64, None, "pos");
    }
    prog.finish();
    Ok(EpochStats::new(loss_sum / batches.max(1) as f64, f64::NAN, f64::NAN, batches * cfg.batch))
}

/// Trains tower layer `k` of `net` as an autoencoder on the frozen codes of layers `< k`.
pub fn pos2vec_layer(ctx: &mut Ctx, name: &str, net: &mut Net, k: usize, pools: &Pools, cfg: &StageCfg) -> Result<(), String> {
    let (n_in, n_out) = (net.arch.tower[k], net.arch.tower[k + 1]);
    let mut ae = Params::new();
    let (tw, tb) = net.tower[k];
    let enc_w = ae.add("enc.w", net.params.value(tw).clone()).map_err(te)?;
    let enc_b = ae.add("enc.b", net.params.value(tb).clone()).map_err(te)?;
    let mut init = Rng::new(ctx.seed ^ 0xAE ^ k as u64);
    let dec_w = ae.add("dec.w", Init::XavierUniform.matrix(n_out, n_in, &mut init)).map_err(te)?;
    let dec_b = ae.add("dec.b", Matrix::zeros(1, n_in)).map_err(te)?;
    let (mut tape, mut codes_tape, mut first) = (Tape::new(), Tape::new(), FirstLayerStep::new());
    let mut x = SparseBatch::new(INPUTS);
    let frozen: &Net = net;
    ctx.run_stage(name, &mut ae, cfg, |ae, opt, epoch, rng| {
        position_epoch(name, epoch, pools, rng, cfg, &mut x, |x| {
            tape.reset();
            if k == 0 {
                return first.step(ae, [enc_w, enc_b, dec_w, dec_b], x, opt);
            }
            // Every product of the step in the stage's precision (the frozen layers' codes too).
            codes_tape.reset();
            let c = frozen.tower_on_tape_to(&mut codes_tape, x, k).map_err(te)?;
            let codes = tape.input(codes_tape.value(c));
            let h = tape.affine(ae, codes, enc_w, enc_b).map_err(te)?;
            let h = tape.relu(h).map_err(te)?;
            let y = tape.affine(ae, h, dec_w, dec_b).map_err(te)?;
            let loss = tape.mse(y, codes).map_err(te)?;
            tape.backward(loss, ae).map_err(te)?;
            opt.step(ae);
            Ok(tape.scalar(loss))
        })
    })?;
    net.params.value_mut(tw).copy_from(ae.value(enc_w));
    net.params.value_mut(tb).copy_from(ae.value(enc_b));
    Ok(())
}

/// Trains the whole comparator on pairs. With `teacher`, the targets are its softmax outputs.
/// `aux` mixes in beyond-the-paper pairs (same-game, material), each with its own target
/// (`AuxPairs::NONE`: the paper's (W, L) pairs only).
#[allow(clippy::too_many_arguments)]
pub fn siamese(
    ctx: &mut Ctx,
    name: &str,
    net: &mut Net,
    teacher: Option<&Net>,
    pools: &Pools,
    val: &Validation,
    cfg: &StageCfg,
    aux: &AuxPairs,
) -> Result<(), String> {
    let (mut stepper, mut teacher_tape) = (PairStep::new(), Tape::new());
    let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    let mut labels = Vec::new();
    let mut aux_target = Vec::new();
    let mut target = Matrix::zeros(cfg.batch, 2);
    let arch = net.arch.clone();
    let (tower, head) = (net.tower.clone(), net.head.clone());
    ctx.run_stage(name, &mut net.params, cfg, |params, opt, epoch, rng| {
        // The closure owns the parameters; view them as a net for the tape.
        let view = Net { arch: arch.clone(), params: std::mem::take(params), tower: tower.clone(), head: head.clone() };
        let batches = cfg.samples.div_ceil(cfg.batch);
        let mut prog = Progress::new(format!("[{name}] epoch {}", epoch + 1), batches * cfg.batch);
        let (mut loss_sum, mut right) = (0.0, 0usize);
        let mut view = view;
        for bi in 0..batches {
            // Without aux pairs, the paper's draw exactly (runs stay reproducible).
            if aux.is_none() {
                pair_batch(pools, rng, cfg.batch, &mut xa, &mut xb, &mut labels);
                aux_target.clear();
            } else {
                aux_pair_batch(pools, aux, rng, cfg.batch, &mut xa, &mut xb, &mut labels, &mut aux_target);
            }
            target.resize_zeroed(cfg.batch, 2);
            match teacher {
                None => {
                    for (i, &l) in labels.iter().enumerate() {
                        target.set(i, l, 1.0);
                    }
                }
                Some(t) => {
                    // The teacher's targets in f32 whatever the stage's precision: they are
                    // data for the student, not products of its step.
                    teacher_tape.reset();
                    let z = with_precision(Precision::F32, || t.pair_logits_on_tape(&mut teacher_tape, &xa, &xb)).map_err(te)?;
                    let z = teacher_tape.value(z);
                    for i in 0..cfg.batch {
                        let p0 = prob_first(z, i);
                        target.set(i, 0, p0);
                        target.set(i, 1, 1.0 - p0);
                    }
                }
            }
            // Auxiliary pairs carry their own targets (the teacher was not trained on them).
            for (i, t) in aux_target.iter().enumerate() {
                if let Some(p0) = *t {
                    target.set(i, 0, p0);
                    target.set(i, 1, 1.0 - p0);
                }
            }
            let (loss, r) = stepper.step(&mut view, &xa, &xb, &target, &labels, opt)?;
            right += r;
            loss_sum += loss as f64;
            let done = (bi + 1) * cfg.batch;
            prog.update(done, loss_sum / (bi + 1) as f64, Some(right as f64 / done as f64), "pairs");
        }
        prog.finish();
        // Measured in f32 whatever the stage's precision, as the nets are measured after it.
        let (val_acc, positions) = with_precision(Precision::F32, || {
            (pair_accuracy(&view, val.valid, val.pairs, 0x7A11_DA7E), val.positions.map(|p| pair_accuracy(&view, p, val.pairs, 0x7A11_DA7E)))
        });
        *params = view.params;
        let n = batches * cfg.batch;
        let stats = EpochStats::new(loss_sum / batches.max(1) as f64, right as f64 / n as f64, val_acc, n);
        Ok(match positions {
            Some(p) => stats.with_accuracy("valid_positions", p),
            None => stats,
        })
    })
}

/// Trains `student`'s tower to reproduce `teacher`'s tower features (squared error).
pub fn distill_tower(ctx: &mut Ctx, name: &str, student: &mut Net, teacher: &Net, pools: &Pools, cfg: &StageCfg) -> Result<(), String> {
    if student.arch.features() != teacher.arch.features() {
        return Err(format!("distill: student has {} features, teacher {}", student.arch.features(), teacher.arch.features()));
    }
    let (mut tape, mut teacher_tape) = (Tape::new(), Tape::new());
    let mut x = SparseBatch::new(INPUTS);
    let arch = student.arch.clone();
    let (tower, head) = (student.tower.clone(), student.head.clone());
    ctx.run_stage(name, &mut student.params, cfg, |params, opt, epoch, rng| {
        let mut view = Net { arch: arch.clone(), params: std::mem::take(params), tower: tower.clone(), head: head.clone() };
        let stats = position_epoch(name, epoch, pools, rng, cfg, &mut x, |x| {
            teacher_tape.reset();
            let tf = teacher.tower_on_tape(&mut teacher_tape, x).map_err(te)?;
            tape.reset();
            let target = tape.input(teacher_tape.value(tf));
            let f = view.tower_on_tape(&mut tape, x).map_err(te)?;
            let loss = tape.mse(f, target).map_err(te)?;
            tape.backward(loss, &mut view.params).map_err(te)?;
            opt.step(&mut view.params);
            Ok(tape.scalar(loss))
        });
        *params = view.params;
        stats
    })
}

/// Trains the value student on `teacher`'s draw-referenced values ([`draw_values`]): each
/// batch is `cfg.batch` random positions and their colour mirrors (whose values are the
/// negated ones), the targets the values through a sigmoid, the loss binary cross-entropy
/// on the student's output. Judged each epoch by its pair accuracy on held-out games.
pub fn distill_value(ctx: &mut Ctx, name: &str, student: &mut ValueNet, teacher: &Net, pools: &Pools, val: &Validation, cfg: &StageCfg) -> Result<(), String> {
    let mut teacher_tape = Tape::new();
    let mut bits: Vec<u32> = Vec::with_capacity(40);
    fit_value(ctx, name, student, val, cfg, |rng, x, mirrors| {
        for _ in 0..cfg.batch {
            push_with_mirror(random_position(pools, rng), x, mirrors, &mut bits)?;
        }
        // The teacher's values in f32 whatever the stage's precision: data, not products.
        with_precision(Precision::F32, || draw_values(teacher, &mut teacher_tape, x, mirrors)).map_err(te)
    })
}

/// Trains the value student on fixed values (`examples`: a position and its value, White's
/// logit, as [`super::bootstrap::search_values`] gives them), drawn at random with their
/// colour mirrors, as [`distill_value`] does with a teacher's.
pub fn fit_examples(ctx: &mut Ctx, name: &str, student: &mut ValueNet, examples: &[(Features, f32)], val: &Validation, cfg: &StageCfg) -> Result<(), String> {
    if examples.is_empty() {
        return Err(format!("{name}: no positions to learn from"));
    }
    let mut bits: Vec<u32> = Vec::with_capacity(40);
    fit_value(ctx, name, student, val, cfg, |rng, x, mirrors| {
        let mut v = Vec::with_capacity(cfg.batch);
        for _ in 0..cfg.batch {
            let (f, value) = &examples[rng.below(examples.len() as u64) as usize];
            push_with_mirror(f, x, mirrors, &mut bits)?;
            v.push(*value);
        }
        Ok(v)
    })
}

/// `f` as a row of `x` and its colour mirror as a row of `mirrors`.
fn push_with_mirror(f: &Features, x: &mut SparseBatch, mirrors: &mut SparseBatch, bits: &mut Vec<u32>) -> Result<(), String> {
    for (batch, f) in [(x, *f), (mirrors, f.mirrored())] {
        bits.clear();
        bits.extend(f.as_slice().iter().map(|&i| i as u32));
        batch.push_row(bits).map_err(te)?;
    }
    Ok(())
}

/// The value student's stage: each batch, `draw` fills `x` with `cfg.batch` positions and
/// `mirrors` with their colour mirrors (both cleared first) and returns the values of `x`
/// (White's logits; a mirror's is the negation). The targets are the values through a
/// sigmoid, the loss binary cross-entropy; each epoch is judged by the student's pair
/// accuracy on held-out games.
fn fit_value(
    ctx: &mut Ctx,
    name: &str,
    student: &mut ValueNet,
    val: &Validation,
    cfg: &StageCfg,
    mut draw: impl FnMut(&mut Rng, &mut SparseBatch, &mut SparseBatch) -> Result<Vec<f32>, String>,
) -> Result<(), String> {
    let mut stepper = ValueStep::new();
    let (mut x, mut mirrors, mut both) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    let mut target = Vec::new();
    let (arch, layers) = (student.arch.clone(), student.layers.clone());
    ctx.run_stage(name, &mut student.params, cfg, |params, opt, epoch, rng| {
        let mut view = ValueNet { arch: arch.clone(), params: std::mem::take(params), layers: layers.clone() };
        let batches = cfg.samples.div_ceil(cfg.batch);
        let mut prog = Progress::new(format!("[{name}] epoch {}", epoch + 1), batches * cfg.batch);
        let mut loss_sum = 0.0;
        for bi in 0..batches {
            x.clear();
            mirrors.clear();
            let v = draw(rng, &mut x, &mut mirrors)?;
            both.clear();
            target.clear();
            for (batch, sign) in [(&x, 1.0f32), (&mirrors, -1.0)] {
                for (r, &vi) in v.iter().enumerate() {
                    both.push_row(batch.row(r)).map_err(te)?;
                    target.push(crate::tensor::layers::sigmoid(sign * vi));
                }
            }
            loss_sum += stepper.step(&mut view, &both, &target, opt)? as f64;
            prog.update((bi + 1) * cfg.batch, loss_sum / (bi + 1) as f64, None, "pos");
        }
        prog.finish();
        let (val_acc, positions) = with_precision(Precision::F32, || {
            (value_pair_accuracy(&view, val.valid, val.pairs, 0x7A11_DA7E), val.positions.map(|p| value_pair_accuracy(&view, p, val.pairs, 0x7A11_DA7E)))
        });
        *params = view.params;
        let stats = EpochStats::new(loss_sum / batches.max(1) as f64, f64::NAN, val_acc, batches * cfg.batch);
        Ok(match positions {
            Some(p) => stats.with_accuracy("valid_positions", p),
            None => stats,
        })
    })
}
