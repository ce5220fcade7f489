//! The seed's experiment (section III): three hidden-layer configurations × three heads,
//! each pretrained layer by layer then fine-tuned, judged under the seed's protocol (folds
//! over positions) and on whole held-out games, side by side; and the 773-bit variant of the
//! best head, for what the missing side-to-move bit costs.
//!
//! Run folder layout: `SPLIT/LAYERS/` per split and configuration (e.g.
//! `games-100pm/772-100-100-100/`), holding `pretrained.dcw` (the RBM stack, shared by the
//! three heads), `HEAD.dcw`, `log.csv`, `curves.svg` and the stage checkpoint. A finished
//! net is never trained again, so `--resume` continues where a run stopped.

use super::data::{Samples, Split};
use super::features::Encoding;
use super::finetune::{evaluate, finetune, load_stack, FineCfg, Metrics};
use super::model::{Arch, Dbn, Head};
use super::pretrain::{pretrain, RbmCfg};
use crate::tensor::Rng;
use crate::train::log::Log;
use crate::train::stage::Ctx;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub rbm: RbmCfg,
    pub fine: FineCfg,
    /// Folds of the position split that are run (of ten; the seed ran all ten).
    pub folds: usize,
}

impl Profile {
    /// The seed's schedule (section III.B): lr 0.005 × 0.98^epoch, batch 32, 50 epochs of
    /// pretraining per layer, 200 of fine-tuning, dropout 0.5, all ten folds.
    pub fn paper() -> Profile {
        Profile {
            name: "paper",
            rbm: RbmCfg { epochs: 50, batch: 32, lr: 0.005, decay: 0.98, k: 1 },
            fine: FineCfg { epochs: 200, batch: 32, lr: 0.005, decay: 0.98, momentum: 0.0, dropout: 0.5 },
            folds: 10,
        }
    }

    /// All nine nets under both protocols in about half an hour on two cores: fewer epochs
    /// at a larger rate (and momentum) to reach what the long schedule reaches, one fold.
    pub fn quick() -> Profile {
        Profile {
            name: "quick",
            rbm: RbmCfg { epochs: 2, batch: 32, lr: 0.05, decay: 0.9, k: 1 },
            fine: FineCfg { epochs: 6, batch: 32, lr: 0.01, decay: 0.85, momentum: 0.9, dropout: 0.5 },
            folds: 1,
        }
    }

    /// Seconds: for tests.
    pub fn tiny() -> Profile {
        Profile {
            name: "tiny",
            rbm: RbmCfg { epochs: 1, batch: 32, lr: 0.05, decay: 1.0, k: 1 },
            fine: FineCfg { epochs: 2, batch: 32, lr: 0.02, decay: 1.0, momentum: 0.9, dropout: 0.5 },
            folds: 1,
        }
    }

    pub fn by_name(name: &str) -> Option<Profile> {
        match name {
            "paper" => Some(Profile::paper()),
            "quick" => Some(Profile::quick()),
            "tiny" => Some(Profile::tiny()),
            _ => None,
        }
    }
}

/// What to train.
#[derive(Clone, Debug)]
pub struct Plan {
    pub configs: Vec<Vec<usize>>,
    pub heads: Vec<Head>,
    pub splits: Vec<Split>,
    /// Also train the 773-bit variant of this head on the first configuration.
    pub side_bit: Option<Head>,
}

/// One trained net's figures.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub arch: Arch,
    pub split: Split,
    pub train: Metrics,
    pub valid: Metrics,
    pub file: PathBuf,
}

fn ctx_for(dir: &Path, seed: u64, resume: bool, meta: &[(String, String)]) -> Result<Ctx, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(Ctx { dir: dir.to_path_buf(), seed, resume, log: Log::open(dir)?, meta: meta.to_vec(), bf16_products: false })
}

/// Trains (or, for nets already in `out`, loads) every net of the plan and returns their
/// figures, in plan order.
pub fn run(out: &Path, prof: &Profile, plan: &Plan, s772: &Samples, s773: Option<&Samples>, seed: u64, resume: bool, meta: &[(String, String)]) -> Result<Vec<Outcome>, String> {
    let mut outcomes = Vec::new();
    let mut jobs: Vec<(Arch, Split)> = Vec::new();
    for split in &plan.splits {
        for hidden in &plan.configs {
            for &head in &plan.heads {
                jobs.push((Arch::new(Encoding::Bits772, hidden.clone(), head), *split));
            }
        }
    }
    if let (Some(head), Some(hidden)) = (plan.side_bit, plan.configs.first()) {
        for split in &plan.splits {
            jobs.push((Arch::new(Encoding::Bits773, hidden.clone(), head), *split));
        }
    }
    for (arch, split) in jobs {
        let samples = match arch.encoding {
            Encoding::Bits772 => s772,
            Encoding::Bits773 => s773.ok_or("the 773-bit variant needs its encoding")?,
        };
        let (train, valid) = split.apply(samples, seed);
        let dir = out.join(split.name()).join(arch.layers());
        let file = dir.join(format!("{}.dcw", arch.head.name()));
        let net = if file.exists() {
            Dbn::load(&file).map_err(|e| e.to_string())?.0
        } else {
            let mut ctx = ctx_for(&dir, seed, resume, meta)?;
            eprintln!("== {} on {} ({} training, {} held-out positions)", arch.describe(), split.describe(), train.len(), valid.len());
            let mut net = Dbn::new(arch.clone(), &mut Rng::new(seed ^ 0xDB));
            if prof.rbm.epochs > 0 {
                let stack = pretrain(&mut ctx, samples, &train, &valid, &arch.widths(), &prof.rbm, &dir.join("pretrained.dcw"))?;
                load_stack(&mut net, &stack);
            }
            finetune(&mut ctx, &mut net, samples, &train, &valid, &prof.fine)?;
            let mut m = meta.to_vec();
            m.push(("split".into(), split.describe()));
            net.save(&file, &m).map_err(|e| e.to_string())?;
            net
        };
        let o = Outcome { train: evaluate(&net, samples, &train), valid: evaluate(&net, samples, &valid), arch, split, file };
        eprintln!("   {} {}: held-out {:.2} % (train {:.2} %)", o.arch.describe(), o.split.name(), 100.0 * o.valid.accuracy, 100.0 * o.train.accuracy);
        outcomes.push(o);
    }
    Ok(outcomes)
}

/// The results table (markdown): per net, the seed's protocol (mean over the folds run)
/// beside the game split; regression also as MAE in centipawns.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut t = String::from(
        "| net | head | seed protocol: position split (folds) | held-out games | train (game split) | MAE cp (positions / games) |\n|---|---|---|---|---|---|\n",
    );
    let mut seen: Vec<Arch> = Vec::new();
    for o in outcomes {
        if seen.contains(&o.arch) {
            continue;
        }
        seen.push(o.arch.clone());
        let same: Vec<&Outcome> = outcomes.iter().filter(|x| x.arch == o.arch).collect();
        let pos: Vec<&&Outcome> = same.iter().filter(|x| matches!(x.split, Split::Positions { .. })).collect();
        let games = same.iter().find(|x| matches!(x.split, Split::Games { .. }));
        let mean = |v: &[&&Outcome], f: fn(&Metrics) -> f64| v.iter().map(|x| f(&x.valid)).sum::<f64>() / v.len().max(1) as f64;
        let pct = |x: f64| if x.is_finite() { format!("{:.2} %", 100.0 * x) } else { "–".into() };
        let cp = |x: f64| if x.is_finite() { format!("{x:.0}") } else { "–".into() };
        let _ = writeln!(
            t,
            "| {} | {} | {} ({}) | {} | {} | {} |",
            o.arch.layers(),
            o.arch.head.name(),
            if pos.is_empty() { "–".into() } else { pct(mean(&pos, |m| m.accuracy)) },
            pos.len(),
            games.map(|g| pct(g.valid.accuracy)).unwrap_or("–".into()),
            games.map(|g| pct(g.train.accuracy)).unwrap_or("–".into()),
            if o.arch.head == Head::Regress {
                format!("{} / {}", cp(mean(&pos, |m| m.mae_cp)), games.map(|g| cp(g.valid.mae_cp)).unwrap_or("–".into()))
            } else {
                "–".into()
            },
        );
    }
    t
}
