//! The epoch loop every phase runs in: per-epoch random streams, a checkpoint after each
//! epoch (atomic), `--resume` from the last one, the CSV/SVG log and the progress line.

use super::checkpoint::OptCfg;
use super::log::{Log, Row};
use crate::tensor::{with_precision, Optimizer, Params, Precision, Rng};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Per-epoch random stream: depends only on (seed, what, epoch), so a resumed run draws
/// exactly what the uninterrupted run drew.
pub fn epoch_rng(seed: u64, what: &str, epoch: usize) -> Rng {
    let mut h = seed ^ 0x5DEE_CE66_D1CE_4E5B;
    for b in what.bytes().chain((epoch as u64).to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    Rng::new(h)
}

/// Run-wide context.
pub struct Ctx {
    pub dir: PathBuf,
    pub seed: u64,
    pub resume: bool,
    pub log: Log,
    /// Extra header entries for checkpoints (profile, data folder …).
    pub meta: Vec<(String, String)>,
    /// Printed before the stage's name on the console (`[LABEL STAGE] epoch …`): which net
    /// a line is about when several train at once. Empty by default.
    pub label: String,
}

impl Ctx {
    /// The context of a run in `dir` (created if missing), its log opened (a resumed run
    /// appends to it).
    pub fn new(dir: &Path, seed: u64, resume: bool, meta: Vec<(String, String)>) -> Result<Ctx, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Ctx { dir: dir.to_path_buf(), seed, resume, log: Log::open(dir)?, meta, label: String::new() })
    }
}

/// A figure of an epoch beside the loss and the accuracies, named by the phase that
/// measured it and logged as a curve of its own (phase `NAME.LABEL`): an RBM's free-energy
/// gap, the share of clipped steps, a second validation protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extra {
    pub label: &'static str,
    pub value: f64,
    /// `true`: an accuracy (the log's validation column, shown in %); `false`: a loss-like
    /// figure (the loss column).
    pub accuracy: bool,
}

/// Figures of one epoch, returned by the phase's epoch function.
#[derive(Clone, Debug, Default)]
pub struct EpochStats {
    pub loss: f64,
    pub train_acc: f64,
    pub val_acc: f64,
    pub samples: usize,
    /// Further named figures, each its own curve.
    pub extra: Vec<Extra>,
}

impl EpochStats {
    /// An epoch's loss, accuracies (NaN where not measured) and samples seen.
    pub fn new(loss: f64, train_acc: f64, val_acc: f64, samples: usize) -> EpochStats {
        EpochStats { loss, train_acc, val_acc, samples, extra: Vec::new() }
    }

    /// With a loss-like figure called `label`.
    pub fn with_figure(mut self, label: &'static str, value: f64) -> EpochStats {
        self.extra.push(Extra { label, value, accuracy: false });
        self
    }

    /// With an accuracy called `label` (another validation set or protocol).
    pub fn with_accuracy(mut self, label: &'static str, value: f64) -> EpochStats {
        self.extra.push(Extra { label, value, accuracy: true });
        self
    }
}

/// Epochs and samples per epoch, batch size, optimizer and products' precision of one stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageCfg {
    pub epochs: usize,
    /// Positions or pairs per epoch.
    pub samples: usize,
    pub batch: usize,
    pub opt: OptCfg,
    /// The precision of the numeric engine's products in the stage's epochs: the stage sets
    /// it once around each epoch, for its thread and the threads of the data-parallel steps
    /// it calls (`tensor::with_precision`). F32 unless a system offers another (DeepChess's
    /// `--precision bf16`).
    pub precision: Precision,
}

impl Ctx {
    /// Runs `epoch_fn` for each remaining epoch of stage `name`, checkpointing after each.
    pub fn run_stage(
        &mut self,
        name: &str,
        params: &mut Params,
        cfg: &StageCfg,
        mut epoch_fn: impl FnMut(&mut Params, &mut dyn Optimizer, usize, &mut Rng) -> Result<EpochStats, String>,
    ) -> Result<(), String> {
        let mut opt = cfg.opt.build();
        let start = self.resume_stage(name, params, opt.as_mut(), cfg.epochs, ("epochs_done", "epoch", "epochs"), cfg.samples > 0)?;
        for epoch in start..cfg.epochs {
            let t = Instant::now();
            let mut rng = epoch_rng(self.seed, name, epoch);
            let lr = opt.lr();
            let st = with_precision(cfg.precision, || epoch_fn(params, opt.as_mut(), epoch, &mut rng))?;
            opt.end_epoch();
            let secs = t.elapsed().as_secs_f64();
            eprintln!(
                "[{}{name}] epoch {}/{} loss {:.5}{}{} lr {lr:.5} {:.1}s",
                self.label,
                epoch + 1,
                cfg.epochs,
                st.loss,
                if st.train_acc.is_finite() { format!(" train {:.2}%", 100.0 * st.train_acc) } else { String::new() },
                if st.val_acc.is_finite() { format!(" val {:.2}%", 100.0 * st.val_acc) } else { String::new() },
                secs
            );
            self.log
                .push(Row {
                    phase: name.to_string(),
                    epoch: epoch + 1,
                    lr,
                    loss: st.loss,
                    train_acc: st.train_acc,
                    val_acc: st.val_acc,
                    seconds: secs,
                    rate: st.samples as f64 / secs.max(1e-9),
                })
                .map_err(|e| format!("writing the log in {}: {e}", self.dir.display()))?;
            self.log_extras(name, ("epoch", epoch), lr, secs, &st)?;
            self.save_checkpoint(name, ("epochs_done", epoch + 1), &st, params, opt.as_ref())?;
        }
        Ok(())
    }

    /// Logs the named figures of `unit` `k` (0-based: an epoch, a batch) of stage `name`,
    /// each as its own curve.
    pub(super) fn log_extras(&mut self, name: &str, (unit, k): (&str, usize), lr: f32, secs: f64, st: &EpochStats) -> Result<(), String> {
        for x in &st.extra {
            let phase = format!("{name}.{}", x.label);
            let row = if x.accuracy {
                eprintln!("[{}{name}] {unit} {} {} {:.2}%", self.label, k + 1, x.label, 100.0 * x.value);
                Row { phase, epoch: k + 1, lr, loss: f64::NAN, train_acc: f64::NAN, val_acc: x.value, seconds: secs, rate: f64::NAN }
            } else {
                eprintln!("[{}{name}] {unit} {} {} {:.5}", self.label, k + 1, x.label, x.value);
                Row { phase, epoch: k + 1, lr, loss: x.value, train_acc: f64::NAN, val_acc: f64::NAN, seconds: secs, rate: f64::NAN }
            };
            self.log.push(row).map_err(|e| format!("writing the log in {}: {e}", self.dir.display()))?;
        }
        Ok(())
    }
}
