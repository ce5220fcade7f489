//! The seed's experiment: the network trained on one corpus, judged on validation built two
//! ways (held-out games; held-out positions of trained games) and on test sets of games the
//! training never saw, with the calibration buckets; the seed's linear convolutions and our
//! ReLU variant side by side.
//!
//! Run folder: `ACT/` per variant (`linear/`, `relu/`), holding `cnn.dcw`, `log.csv`,
//! `curves.svg` and the checkpoint; `results.md` beside them. A finished net is loaded, not
//! trained again, so `--resume` continues where a run stopped.

use super::data::{games, split, Sets};
use super::metrics::Report;
use super::model::{Arch, Cnn, ConvAct};
use super::train::{evaluate, train, TrainCfg};
use crate::data::dataset::{Dataset, Record};
use crate::data::build::{build_sets, save_sets, BuildSettings};
use crate::io::args::{CliError, Flag};
use crate::tensor::optim::LrPolicy;
use crate::tensor::Rng;
use crate::train::settings::{Kind, RunSettings};
use crate::train::driver;
use crate::train::run::{Run, Threads, TrainCli};
use crate::train::stage::Ctx;
use crate::train::system::System;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

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

/// The profiles `--profile` takes, in the order help lists them.
pub const PROFILES: &[(&str, fn() -> Profile)] = &[("quick", Profile::quick), ("paper", Profile::paper), ("tiny", Profile::tiny)];

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
}

/// A named set the net is judged on.
pub struct Judged {
    pub name: String,
    pub what: String,
    pub games: usize,
    pub report: Report,
}

/// One trained variant's figures.
pub struct Trained {
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
pub fn run(out: &Path, prof: &Profile, acts: &[ConvAct], sets: &Sets, tests: &[(String, Vec<Record>)], seed: u64, resume: bool, meta: &[(String, String)]) -> Result<Vec<Trained>, String> {
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
            let mut ctx = Ctx::new(&dir, seed, resume, meta.to_vec())?;
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
        outcomes.push(Trained { arch, file, sets: judged });
    }
    Ok(outcomes)
}

/// The results (markdown): accuracy per set and variant beside the seed's figures, then
/// each variant's calibration buckets on the held-out games and on the first test set.
pub fn results(outcomes: &[Trained]) -> String {
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

// ---------------------------------------------------------------- the command line

/// `deepchess train --system cnn` (src/players.rs, `SYSTEMS`).
pub const SYSTEM: System = System {
    name: "cnn",
    seed: "seed 003: a convolutional win/loss classifier (Mocha.jl blog post)",
    about: "the seed's linear convolutions and a ReLU variant, judged on held-out games, held-out positions and later games",
    colour: "#2ca02c",
    commands: &[],
    bench_tensor: &[super::bench::CONV],
    gemm_layers: &[],
    checkpoint_variants: &[],
    synopsis: "[--profile quick|paper|tiny] [--corpus FILE] [--test NAME=FILE ...] [--out DIR] [--resume] [options]",
    help: "Trains seed 003's network (conv 400@4x4, max pool 2x2/2, conv 200@2x2, ip 70 sigmoid with\n\
         dropout 0.2, ip 1 sigmoid; SGD momentum 0.9, L2 0.0005, inv lr policy, batch 1024) on\n\
         every position of the corpus's decisive games, labelled by the winner. Validation is\n\
         built two ways on the same net: whole held-out games, and held-out positions of trained\n\
         games. Writes per variant (linear, relu) the net, log.csv and curves.svg, and\n\
         results.md with accuracy per set and the calibration buckets.",
    flags: FLAGS,
    run: driver::run::<Recipe>,
    smoke: driver::smoke::<Recipe>,
};

/// Where `make train-cnn` builds the corpus.
pub const DEFAULT_CORPUS: &str = "runs/cnn-data/corpus/train.dcds";

const FLAGS: &[Flag] = &[
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, ~30 min on 2 cores: 2 epochs) | paper (the seed's: every position, 5 epochs) | tiny (seconds)" },
    Flag { name: "corpus", value: Some("FILE"), help: "dataset of every position of the training games (default runs/cnn-data/corpus/train.dcds, made by make train-cnn)" },
    Flag { name: "test", value: Some("NAME=FILE"), help: "a test dataset from games the training never saw; repeatable" },
    Flag { name: "out", value: Some("DIR"), help: "run folder (default runs/cnn-PROFILE)" },
    Flag { name: "acts", value: Some("LIST"), help: "convolution activations to train, comma list of linear (the seed's), relu (default linear,relu)" },
    Flag { name: "epochs", value: Some("N"), help: "epochs instead of the profile's" },
    Flag { name: "max-positions", value: Some("N"), help: "training positions used (a seeded subsample; 0 = all) instead of the profile's" },
    Flag { name: "lr", value: Some("X"), help: "base learning rate of the inv policy instead of the seed's 0.01" },
    Flag { name: "valid-per-mille", value: Some("N"), help: "games per 1000 held out, and positions per 1000 of the other games held out (default 80, the seed's 1.5M of 18.5M)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of initialisation, sampling and shuffling (default 1)" },
    Flag { name: "resume", value: None, help: "continue the run in --out (same settings)" },
    Flag { name: "threads", value: Some("N"), help: "threads for the numeric kernels (default: all cores)" },
];

fn load(path: &Path, what: &str) -> Result<Vec<Record>, CliError> {
    if !path.is_file() {
        return Err(CliError::Failed(format!(
            "{} not found: build the {what} with 'deepchess data --per-game 0 --skip-plies 0 --keep-captures --valid-per-mille 0' (see 'make train-cnn')",
            path.display()
        )));
    }
    let d = Dataset::load(path).map_err(|e| CliError::Failed(e.to_string()))?;
    if d.records.is_empty() {
        return Err(CliError::Failed(format!("{}: no positions", path.display())));
    }
    Ok(d.records)
}

/// The CNN's part of `deepchess train` (the steps are `train::driver`'s).
pub struct Recipe;

/// The profile with the flags' overrides, and what else the flags chose.
pub struct Setup {
    pub prof: Profile,
    pub acts: Vec<ConvAct>,
    pub per_mille: u32,
    pub tests: Vec<(String, PathBuf)>,
    pub corpus: PathBuf,
}

/// The corpus split into training and validation sets, and the test sets.
pub struct Inputs {
    n_corpus: usize,
    sets: Sets,
    tests: Vec<(String, Vec<Record>)>,
}

impl driver::Recipe for Recipe {
    const NAME: &'static str = "cnn";
    const DEFAULT_PROFILE: &'static str = "quick";
    const OUT_PREFIX: &'static str = "runs/cnn-";
    const THREADS: Threads = Threads::Kernels { default: 0, min: 0 };
    const SMOKE: &'static [&'static str] = &["--profile", "tiny", "--threads", "1", "--valid-per-mille", "150"];
    type Profile = Profile;
    type Setup = Setup;
    type Inputs = Inputs;
    type Outcome = Vec<Trained>;

    const PROFILES: &'static [(&'static str, fn() -> Profile)] = PROFILES;

    fn setup(cli: &TrainCli, mut prof: Profile) -> Result<Setup, CliError> {
        let p = cli.p;
        cli.set("epochs", &mut prof.train.epochs, |&e| e >= 1, "must be at least 1")?;
        if let Some(n) = cli.max_positions()? {
            prof.max_train = (n > 0).then_some(n);
        }
        if let LrPolicy::Inv { mut base, gamma, power } = prof.train.lr {
            cli.set("lr", &mut base, |&b| b > 0.0 && b < 10.0, "must be in (0, 10)")?;
            prof.train.lr = LrPolicy::Inv { base, gamma, power };
        }
        let acts = p
            .get("acts")
            .unwrap_or("linear,relu")
            .split(',')
            .map(|s| ConvAct::parse(s.trim()).ok_or_else(|| cli.usage(format!("bad --acts entry '{s}' (linear, relu)"))))
            .collect::<Result<Vec<_>, _>>()?;
        let mut per_mille: u32 = 80;
        cli.set("valid-per-mille", &mut per_mille, |n| (1..=300).contains(n), "must be 1 to 300")?;
        let mut tests = Vec::new();
        for t in p.get_all("test") {
            let (name, file) = t.split_once('=').ok_or_else(|| cli.usage(format!("--test wants NAME=FILE, not '{t}'")))?;
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(cli.usage(format!("--test name '{name}': use letters, digits, '-' or '_'")));
            }
            tests.push((name.to_string(), PathBuf::from(file)));
        }
        let corpus = PathBuf::from(p.get("corpus").unwrap_or(DEFAULT_CORPUS));
        Ok(Setup { prof, acts, per_mille, tests, corpus })
    }

    fn settings(setup: &Setup, s: &mut RunSettings) -> Result<(), CliError> {
        run_settings(s, &setup.prof, &setup.corpus, setup.per_mille, &setup.acts, &setup.tests)
    }

    fn load(setup: &Setup, run: &Run) -> Result<Inputs, CliError> {
        let (corpus, seed) = (&setup.corpus, run.seed);
        let t = Instant::now();
        let records = load(corpus, "corpus")?;
        let n_corpus = records.len();
        let mut sets = split(records, setup.per_mille);
        if let Some(n) = setup.prof.max_train {
            if sets.train.len() > n {
                sets.train = sample(&sets.train, n, seed);
            }
        }
        if sets.train.is_empty() {
            return Err(CliError::Failed(format!("{}: no training positions left after the split", corpus.display())));
        }
        let mut tests = Vec::new();
        for (name, file) in &setup.tests {
            tests.push((name.clone(), load(file, &format!("test set '{name}'"))?));
        }
        eprintln!(
            "profile {}: {} positions in {}: training {} ({} games), validation {} of held-out games ({} games) and {} of trained games ({:.1}s to load)",
            run.profile,
            n_corpus,
            corpus.display(),
            sets.train.len(),
            games(&sets.train),
            sets.valid_games.len(),
            games(&sets.valid_games),
            sets.valid_positions.len(),
            t.elapsed().as_secs_f64()
        );
        Ok(Inputs { n_corpus, sets, tests })
    }

    fn train(setup: &Setup, inputs: &Inputs, run: &Run) -> Result<Vec<Trained>, CliError> {
        let meta = vec![("profile".to_string(), run.profile.clone()), ("corpus".to_string(), setup.corpus.display().to_string())];
        self::run(&run.out, &setup.prof, &setup.acts, &inputs.sets, &inputs.tests, run.seed, run.resume, &meta).map_err(CliError::Failed)
    }

    fn results(setup: &Setup, inputs: &Inputs, outcomes: &Vec<Trained>, run: &Run) -> Result<String, CliError> {
        let test_list: Vec<String> = setup.tests.iter().map(|(n, f)| format!("`{n}` = `{}`", f.display())).collect();
        Ok(format!(
            "# CNN run `{}`\n\nProfile `{}`, seed {}: {}; {} training positions (of {} in `{}`).\n\
             Tests: {}.\nAccuracy: the predicted winner (output above 0.5 = White) is the game's winner.\n\n{}\n\
             Wall time of this invocation: {:.1} min.\n",
            run.out.display(),
            run.profile,
            run.seed,
            setup.prof.train.describe(),
            inputs.sets.train.len(),
            inputs.n_corpus,
            setup.corpus.display(),
            if test_list.is_empty() { "none".to_string() } else { test_list.join(", ") },
            results(outcomes),
            run.minutes()
        ))
    }

    /// Every position of the smoke games' decisive games, as `all/train.dcds` (what `deepchess
    /// data --per-game 0 --skip-plies 0 --keep-captures --valid-per-mille 0` makes).
    fn smoke_inputs(dir: &Path) -> Result<Vec<String>, String> {
        let mut s = BuildSettings::default();
        s.sampling.per_game = 0;
        s.sampling.skip_plies = 0;
        s.sampling.exclude_captures = false;
        s.valid_per_mille = 0;
        let built = build_sets(&[driver::smoke_games().display().to_string()], &s, |_| {}, |_| {})?;
        let out = dir.join("all");
        save_sets(&out, built)?;
        Ok(vec!["--corpus".into(), out.join("train.dcds").display().to_string()])
    }
}

/// What defines a run beside its system, profile and seed (see `train::settings`).
fn run_settings(s: &mut RunSettings, prof: &Profile, corpus: &Path, per_mille: u32, acts: &[ConvAct], tests: &[(String, PathBuf)]) -> Result<(), CliError> {
    let print = if corpus.is_file() { Dataset::fingerprint(corpus).map_err(|e| CliError::Failed(e.to_string()))? } else { "missing".into() };
    s.add("corpus", print, "--corpus", Kind::Defining);
    s.add("valid_per_mille", per_mille, "--valid-per-mille", Kind::Defining);
    s.add("max_positions", prof.max_train.map_or("all".to_string(), |n| n.to_string()), "--max-positions", Kind::FromProfile);
    s.add("schedule", format!("{:?}", prof.train), "schedule (--profile, --epochs, --lr)", Kind::FromProfile);
    s.add("arch", prof.arch.describe(), "network (the profile)", Kind::FromProfile);
    // What results.md holds a row for: a resume with other variants or test sets would
    // write a table without the earlier ones.
    s.add("acts", acts.iter().map(|a| a.name()).collect::<Vec<_>>().join(","), "--acts", Kind::Defining);
    let mut test_prints = Vec::new();
    for (name, file) in tests {
        let print = if file.is_file() { Dataset::fingerprint(file).map_err(|e| CliError::Failed(e.to_string()))? } else { "missing".into() };
        test_prints.push(format!("{name}={print}"));
    }
    s.add("tests", if test_prints.is_empty() { "none".to_string() } else { test_prints.join(",") }, "--test", Kind::Defining);
    Ok(())
}
