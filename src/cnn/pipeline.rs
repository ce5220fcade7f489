//! The seed's experiment: the network trained on one corpus, judged on validation built two
//! ways (held-out games; held-out positions of trained games) and on test sets of games the
//! training never saw, with the calibration buckets; the seed's linear convolutions and our
//! ReLU variant side by side.
//!
//! Run folder: `ACT/` per variant (`linear/`, `relu/`), holding `cnn.dcw`, `log.csv`,
//! `curves.svg` and the checkpoint; `results.md` beside them. A finished net is loaded, not
//! trained again, so `--resume` continues where a run stopped.

use super::data::{games, Sets};
use super::metrics::Report;
use super::model::{Arch, Cnn, ConvAct};
use super::train::{evaluate, train, TrainCfg};
use crate::data::dataset::Record;
use crate::tensor::optim::LrPolicy;
use crate::tensor::Rng;
use crate::train::log::Log;
use crate::train::stage::Ctx;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A schedule and the network's size.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub arch: Arch,
    pub train: TrainCfg,
    /// Training positions used (a seeded subsample), `None`: all.
    pub max_train: Option<usize>,
    /// Positions of each test set judged (a seeded subsample), `None`: all.
    pub max_test: Option<usize>,
}

impl Profile {
    /// The seed's network and solver, 5 epochs over every training position.
    pub fn paper() -> Profile {
        Profile { name: "paper", arch: Arch::SEED, train: TrainCfg::seed(), max_train: None, max_test: None }
    }

    /// The seed's network and solver for two epochs, both variants within about half an
    /// hour on two cores; test sets judged on 200,000 of their positions.
    pub fn quick() -> Profile {
        Profile { name: "quick", arch: Arch::SEED, train: TrainCfg { epochs: 2, ..TrainCfg::seed() }, max_train: None, max_test: Some(200_000) }
    }

    /// Seconds: for tests.
    pub fn tiny() -> Profile {
        Profile {
            name: "tiny",
            arch: Arch { conv1: 16, conv2: 8, hidden: 8, act: ConvAct::Linear },
            train: TrainCfg { epochs: 2, batch: 64, lr: LrPolicy::Inv { base: 0.05, gamma: 1e-4, power: 0.75 }, ..TrainCfg::seed() },
            max_train: Some(4000),
            max_test: Some(2000),
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

/// A named set the net is judged on.
pub struct Judged {
    pub name: String,
    pub what: String,
    pub games: usize,
    pub report: Report,
}

/// One trained variant's figures.
pub struct Outcome {
    pub arch: Arch,
    pub file: PathBuf,
    pub sets: Vec<Judged>,
}

/// A seeded sample of `n` of `records` (in their original order), or all of them when there
/// are not more than `n`.
pub fn sample(records: &[Record], n: usize, seed: u64) -> Vec<Record> {
    if records.len() <= n {
        return records.to_vec();
    }
    let mut idx: Vec<usize> = (0..records.len()).collect();
    Rng::new(seed ^ 0x5AB5).shuffle(&mut idx);
    idx.truncate(n);
    idx.sort_unstable();
    idx.into_iter().map(|i| records[i]).collect()
}

/// Trains (or loads) each variant of `acts` on `sets`, then judges it on the training set
/// (up to 200,000 positions of it), both validation sets and every test set.
pub fn run(out: &Path, prof: &Profile, acts: &[ConvAct], sets: &Sets, tests: &[(String, Vec<Record>)], seed: u64, resume: bool, meta: &[(String, String)]) -> Result<Vec<Outcome>, String> {
    let mut outcomes = Vec::new();
    const TRAIN_JUDGED: usize = 200_000;
    let train_sample = sample(&sets.train, TRAIN_JUDGED, seed ^ 1);
    let train_what = if sets.train.len() > TRAIN_JUDGED { "training positions (a 200k sample)" } else { "training positions (all)" };
    for &act in acts {
        let arch = prof.arch.with_act(act);
        let dir = out.join(act.name());
        let file = dir.join("cnn.dcw");
        let net = if file.exists() {
            Cnn::load(&file).map_err(|e| e.to_string())?.0
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let mut ctx = Ctx { dir: dir.clone(), seed, resume, log: Log::open(&dir)?, meta: meta.to_vec(), bf16_products: false };
            eprintln!("== {} on {} training positions", arch.describe(), sets.train.len());
            let mut net = Cnn::new(arch, &mut Rng::new(seed ^ 0xC33));
            train(&mut ctx, &mut net, sets, &prof.train)?;
            net.save(&file, meta).map_err(|e| e.to_string())?;
            net
        };
        let mut judged = Vec::new();
        let mut judge = |name: &str, what: &str, records: &[Record]| {
            let report = evaluate(&net, records);
            eprintln!("   {} {name}: {:.2} % of {} positions", act.name(), 100.0 * report.accuracy(), report.positions);
            judged.push(Judged { name: name.into(), what: what.into(), games: games(records), report });
        };
        judge("train", train_what, &train_sample);
        judge("valid-positions", "validation, position split: held-out positions of trained games (the seed's likely protocol)", &sets.valid_positions);
        judge("valid-games", "validation, game split: every position of held-out games", &sets.valid_games);
        for (name, recs) in tests {
            match prof.max_test {
                Some(n) if recs.len() > n => judge(name, "test: games from a source the training never saw", &sample(recs, n, seed ^ 2)),
                _ => judge(name, "test: games from a source the training never saw", recs),
            }
        }
        outcomes.push(Outcome { arch, file, sets: judged });
    }
    Ok(outcomes)
}

/// The results (markdown): accuracy per set and variant beside the seed's figures, then
/// each variant's calibration buckets on the held-out games and on the first test set.
pub fn results(outcomes: &[Outcome]) -> String {
    let mut t = String::from("| set | games | positions | always the majority side | seed | ");
    for o in outcomes {
        let _ = write!(t, "{} accuracy (BCE) | ", o.arch.act.name());
    }
    t.push_str("\n|---|---:|---:|---:|---:|");
    for _ in outcomes {
        t.push_str("---:|");
    }
    t.push('\n');
    let seed_figure = |name: &str| match name {
        "valid-positions" => "73.5 %",
        "valid-games" => "–",
        "train" => "–",
        _ => "71.8 % (test)",
    };
    if let Some(first) = outcomes.first() {
        for (i, s) in first.sets.iter().enumerate() {
            let w = s.report.white_share();
            let _ = write!(t, "| {} | {} | {} | {:.1} % | {} | ", s.name, s.games, s.report.positions, 100.0 * w.max(1.0 - w), seed_figure(&s.name));
            for o in outcomes {
                let r = &o.sets[i].report;
                let _ = write!(t, "{:.2} % ({:.4}) | ", 100.0 * r.accuracy(), r.mean_bce());
            }
            t.push('\n');
        }
        t.push('\n');
        for s in &first.sets {
            let _ = writeln!(t, "- {}: {}", s.name, s.what);
        }
    }
    for o in outcomes {
        for s in o.sets.iter().filter(|s| s.name != "train" && s.name != "valid-positions").take(2) {
            let _ = writeln!(t, "\nCalibration, {} ({}), {}:\n", o.arch.act.name(), o.arch.describe(), s.name);
            t.push_str("| output bucket | positions | accuracy | mean output | White won |\n|---|---:|---:|---:|---:|\n");
            t.push_str(&s.report.calibration_rows());
        }
    }
    t
}
