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
use super::model::{Arch, Dbn, Head};
use super::train::{evaluate, finetune, load_stack, pretrain, FineCfg, Metrics, RbmCfg, MAX_GRAD_NORM};
use crate::data::labels::LabelSet;
use crate::io::args::{CliError, Flag};
use crate::tensor::Rng;
use crate::train::settings::{Kind, RunSettings};
use crate::train::stage::Ctx;
use crate::train::driver;
use crate::train::run::{Run, Threads, TrainCli};
use crate::train::system::System;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// A schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub rbm: RbmCfg,
    pub fine: FineCfg,
    /// Folds of the position split that are run (of ten; the seed ran all ten).
    pub folds: usize,
}

/// The profiles `--profile` takes, in the order help lists them.
pub const PROFILES: &[(&str, fn() -> Profile)] = &[("quick", Profile::quick), ("paper", Profile::paper), ("tiny", Profile::tiny)];

impl Profile {
    /// The seed's schedule (section III.B): lr 0.005 × 0.98^epoch, batch 32, 50 epochs of
    /// pretraining per layer, 200 of fine-tuning, dropout 0.5, no gradient clipping, all ten
    /// folds.
    pub fn paper() -> Profile {
        Profile {
            name: "paper",
            rbm: RbmCfg { epochs: 50, batch: 32, lr: 0.005, decay: 0.98, k: 1 },
            fine: FineCfg { epochs: 200, batch: 32, lr: 0.005, decay: 0.98, momentum: 0.0, dropout: 0.5, clip: None },
            folds: 10,
        }
    }

    /// All nine nets under both protocols in about half an hour on two cores: fewer epochs
    /// at a larger rate (and momentum) to reach what the long schedule reaches, one fold.
    pub fn quick() -> Profile {
        Profile {
            name: "quick",
            rbm: RbmCfg { epochs: 2, batch: 32, lr: 0.05, decay: 0.9, k: 1 },
            fine: FineCfg { epochs: 6, batch: 32, lr: 0.01, decay: 0.85, momentum: 0.9, dropout: 0.5, clip: Some(MAX_GRAD_NORM) },
            folds: 1,
        }
    }

    /// Seconds: for tests.
    pub fn tiny() -> Profile {
        Profile {
            name: "tiny",
            rbm: RbmCfg { epochs: 1, batch: 32, lr: 0.05, decay: 1.0, k: 1 },
            fine: FineCfg { epochs: 2, batch: 32, lr: 0.02, decay: 1.0, momentum: 0.9, dropout: 0.5, clip: Some(MAX_GRAD_NORM) },
            folds: 1,
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
pub struct Trained {
    pub arch: Arch,
    pub split: Split,
    pub train: Metrics,
    pub valid: Metrics,
    pub file: PathBuf,
}


/// Trains (or, for nets already in `out`, loads) every net of the plan and returns their
/// figures, in plan order. With `jobs` > 1 that many net folders (a split and a
/// configuration: its pretrained stack, then its heads in turn) train at once, each on one
/// thread; every net's tensors are the same, bit for bit, as when they train one after
/// another (its header records the command, `--jobs` included).
#[allow(clippy::too_many_arguments)]
pub fn run(out: &Path, prof: &Profile, plan: &Plan, s772: &Samples, s773: Option<&Samples>, seed: u64, resume: bool, meta: &[(String, String)], jobs: usize) -> Result<Vec<Trained>, String> {
    let mut nets: Vec<(Arch, Split)> = Vec::new();
    for split in &plan.splits {
        for hidden in &plan.configs {
            for &head in &plan.heads {
                nets.push((Arch::new(Encoding::Bits772, hidden.clone(), head), *split));
            }
        }
    }
    if let (Some(head), Some(hidden)) = (plan.side_bit, plan.configs.first()) {
        for split in &plan.splits {
            nets.push((Arch::new(Encoding::Bits773, hidden.clone(), head), *split));
        }
    }
    if s773.is_none() && nets.iter().any(|(a, _)| a.encoding == Encoding::Bits773) {
        return Err("the 773-bit variant needs its encoding".into());
    }
    let samples = |arch: &Arch| if arch.encoding == Encoding::Bits773 { s773.expect("checked above") } else { s772 };
    // Progress over the nets this invocation trains (a resumed run's finished ones load).
    let todo = nets.iter().filter(|(a, s)| !net_file(out, a, *s).exists()).count();
    // The estimate: the nets' mean time each (on its own thread) × those left / threads.
    let (trained, net_ms, t0) = (AtomicUsize::new(0), AtomicU64::new(0), Instant::now());
    let train = |n @ (arch, split): &(Arch, Split), label: &str| {
        let (fresh, t) = (!net_file(out, arch, *split).exists(), Instant::now());
        let r = train_net(out, prof, arch, *split, samples(arch), seed, resume, meta, label);
        if fresh && r.is_ok() {
            let took = t.elapsed().as_millis() as u64;
            let ms = net_ms.fetch_add(took, Relaxed) + took;
            let k = trained.fetch_add(1, Relaxed) + 1;
            let left = ms as f64 / 1000.0 / k as f64 * (todo - k) as f64 / jobs.clamp(1, (todo - k).max(1)) as f64;
            eprintln!("-- {k} of {todo} nets to train done ({} {}), {:.1} h so far, about {:.1} h left", n.0.describe(), n.1.name(), t0.elapsed().as_secs_f64() / 3600.0, left / 3600.0);
        }
        r
    };
    if jobs <= 1 {
        return nets.iter().map(|n| train(n, "")).collect();
    }
    // The units of work: the nets of one folder share its pretrained stack, so they stay
    // together, in plan order.
    let mut units: Vec<Vec<usize>> = Vec::new();
    for (i, (arch, split)) in nets.iter().enumerate() {
        match units.iter_mut().find(|u| nets[u[0]].0.layers() == arch.layers() && nets[u[0]].1 == *split) {
            Some(u) => u.push(i),
            None => units.push(vec![i]),
        }
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut done: Vec<Option<Result<Trained, String>>> = (0..nets.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.min(units.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    while !failed.load(Relaxed) {
                        let Some(unit) = units.get(next.fetch_add(1, Relaxed)) else { break };
                        for &i in unit {
                            let (arch, split) = &nets[i];
                            let label = format!("{} {} ", split.name(), arch.layers());
                            // A panic is this net's failure: the other threads stop taking
                            // new folders instead of training the rest of the plan first.
                            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::tensor::runtime::threads::serial(|| train(&nets[i], &label))))
                                .unwrap_or_else(|p| Err(format!("{} on {}: panicked: {}", arch.describe(), split.describe(), p.downcast_ref::<String>().map(String::as_str).or(p.downcast_ref::<&str>().copied()).unwrap_or("(no message)"))));
                            let bad = r.as_ref().err().cloned();
                            mine.push((i, r));
                            if let Some(e) = bad {
                                eprintln!("[{label}] failed: {e}; the nets in training finish their folders, no new one starts");
                                failed.store(true, Relaxed);
                                break;
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        for w in workers {
            for (i, r) in w.join().expect("panics are caught inside the thread") {
                done[i] = Some(r);
            }
        }
    });
    // Plan order; the first failure in it, if any (nets after a failure were not started).
    let mut outcomes = Vec::new();
    for r in done.into_iter().flatten() {
        outcomes.push(r?);
    }
    if outcomes.len() < nets.len() {
        return Err("training stopped before every net was trained".into());
    }
    Ok(outcomes)
}

/// Where the net of `arch` on `split` is saved: `SPLIT/LAYERS/HEAD.dcw`.
fn net_file(out: &Path, arch: &Arch, split: Split) -> PathBuf {
    out.join(split.name()).join(arch.layers()).join(format!("{}.dcw", arch.head.name()))
}

/// Trains one net in its folder (or loads it when it is already there) and judges it.
#[allow(clippy::too_many_arguments)]
fn train_net(out: &Path, prof: &Profile, arch: &Arch, split: Split, samples: &Samples, seed: u64, resume: bool, meta: &[(String, String)], label: &str) -> Result<Trained, String> {
    let (train, valid) = split.apply(samples, seed);
    let file = net_file(out, arch, split);
    let dir = file.parent().expect("a net file is in its folder").to_path_buf();
    let net = if file.exists() {
        Dbn::load(&file).map_err(|e| e.to_string())?.0
    } else {
        let mut ctx = Ctx::new(&dir, seed, resume, meta.to_vec())?;
        ctx.label = label.to_string();
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
    let o = Trained { train: evaluate(&net, samples, &train), valid: evaluate(&net, samples, &valid), arch: arch.clone(), split, file };
    eprintln!("   {} {}: held-out {:.2} % (train {:.2} %)", o.arch.describe(), o.split.name(), 100.0 * o.valid.accuracy, 100.0 * o.train.accuracy);
    Ok(o)
}

/// Seconds of training the nets' folders logged, over every invocation (a resumed run's
/// own wall time leaves out what the earlier ones trained). Epoch rows only: the named
/// figures beside them (no rate) repeat their epoch's time.
fn logged_seconds(outcomes: &[Trained]) -> Result<f64, CliError> {
    let mut dirs: Vec<&Path> = outcomes.iter().filter_map(|o| o.file.parent()).collect();
    dirs.sort();
    dirs.dedup();
    let mut secs = 0.0;
    for d in dirs {
        let log = crate::train::log::Log::open(d).map_err(CliError::Failed)?;
        secs += log.rows.iter().filter(|r| r.rate.is_finite() && r.seconds.is_finite()).map(|r| r.seconds).sum::<f64>();
    }
    Ok(secs)
}

/// The results table (markdown): per net, the seed's protocol (mean over the folds run, and
/// their range when more than one) beside the game split; regression also as MAE in centipawns.
pub fn table(outcomes: &[Trained]) -> String {
    let mut t = String::from(
        "| net | head | seed protocol: position split, mean [min, max] (folds) | held-out games | train (game split) | MAE cp (positions / games) |\n|---|---|---|---|---|---|\n",
    );
    let mut seen: Vec<Arch> = Vec::new();
    for o in outcomes {
        if seen.contains(&o.arch) {
            continue;
        }
        seen.push(o.arch.clone());
        let same: Vec<&Trained> = outcomes.iter().filter(|x| x.arch == o.arch).collect();
        let pos: Vec<&&Trained> = same.iter().filter(|x| matches!(x.split, Split::Positions { .. })).collect();
        let games = same.iter().find(|x| matches!(x.split, Split::Games { .. }));
        let mean = |v: &[&&Trained], f: fn(&Metrics) -> f64| v.iter().map(|x| f(&x.valid)).sum::<f64>() / v.len().max(1) as f64;
        let pct = |x: f64| if x.is_finite() { format!("{:.2} %", 100.0 * x) } else { "–".into() };
        let cp = |x: f64| if x.is_finite() { format!("{x:.0}") } else { "–".into() };
        // Over several folds, their range beside the mean, as the seed's cross-validation is read.
        let spread = |v: &[&&Trained]| {
            let acc = v.iter().map(|x| 100.0 * x.valid.accuracy);
            let (lo, hi) = acc.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| (lo.min(a), hi.max(a)));
            if v.len() > 1 { format!(" [{lo:.2}, {hi:.2}]") } else { String::new() }
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} ({}) | {} | {} | {} |",
            o.arch.layers(),
            o.arch.head.name(),
            if pos.is_empty() { "–".into() } else { pct(mean(&pos, |m| m.accuracy)) + &spread(&pos) },
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

// ---------------------------------------------------------------- the command line

/// `deepchess train --system dbn` (src/players.rs, `SYSTEMS`).
pub const SYSTEM: System = System {
    name: "dbn",
    seed: "seed 001: deep belief networks (IJCTE 10(5), 2018)",
    about: "three configurations x three heads (classify, regress, quantized), RBM pretraining then fine-tuning, two protocols",
    colour: "#ff7f0e",
    commands: &[super::bench::COMMAND],
    bench_tensor: &[super::rbm::bench::PART],
    gemm_layers: &[],
    checkpoint_variants: &[&["--splits", "positions", "--folds", "2", "--heads", "regress"]],
    synopsis: "[--profile quick|paper|tiny] [--labels FILE] [--out DIR] [--resume] [options]",
    help: "Trains the deep belief networks of seed 001: for each hidden-layer configuration, the\n\
         layers pretrained as RBMs (CD-1), then one net per head (classify W/D/L, regress the\n\
         engine score, quantized score) fine-tuned with dropout 0.5. Each is judged under the\n\
         seed's protocol (folds over positions) and on whole held-out games. Writes the nets,\n\
         log.csv and curves.svg per net folder, and results.md with the table.",
    flags: FLAGS,
    run: driver::run::<Recipe>,
    smoke: driver::smoke::<Recipe>,
};

/// The committed labelled set.
pub const DEFAULT_LABELS: &str = "data/dbn/labels-100k.csv.xz";

const FLAGS: &[Flag] = &[
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, ~30 min on 2 cores) | paper (the seed's schedule, 10 folds) | tiny (seconds)" },
    Flag { name: "labels", value: Some("FILE"), help: "labelled positions from 'deepchess label' (default data/dbn/labels-100k.csv.xz)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder (default runs/dbn-PROFILE)" },
    Flag { name: "configs", value: Some("LIST"), help: "hidden layers, comma list of small (100-100-100), medium (400-200-100), large (600-400-200-100) or W-W-… (default all three)" },
    Flag { name: "heads", value: Some("LIST"), help: "comma list of classify, regress, quantized (default all)" },
    Flag { name: "splits", value: Some("LIST"), help: "comma list of positions (the seed's folds), games (whole games held out) (default both)" },
    Flag { name: "folds", value: Some("N"), help: "folds of the position split to run, of ten (default: the profile's; paper 10, quick 1)" },
    Flag { name: "side-bit", value: Some("HEAD"), help: "also train the 773-bit variant of HEAD on the first config, or 'none' (default quantized)" },
    Flag { name: "rbm-epochs", value: Some("N"), help: "pretraining epochs per layer instead of the profile's (0: no pretraining, He-initialised layers)" },
    Flag { name: "fine-epochs", value: Some("N"), help: "fine-tuning epochs instead of the profile's" },
    Flag { name: "lr", value: Some("X"), help: "fine-tuning learning rate instead of the profile's" },
    Flag { name: "momentum", value: Some("X"), help: "fine-tuning momentum instead of the profile's" },
    Flag { name: "dropout", value: Some("X"), help: "dropout rate of the hidden layers in fine-tuning instead of the seed's 0.5" },
    Flag { name: "clip-norm", value: Some("X|none"), help: "joint gradient norm a fine-tuning step may take, or none (default: the profile's; quick 5, paper none as in the seed)" },
    Flag { name: "max-positions", value: Some("N"), help: "use only the first N labelled positions" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of initialisation, sampling and folds (default 1)" },
    Flag { name: "resume", value: None, help: "continue the run in --out (same settings)" },
    Flag { name: "threads", value: Some("N"), help: "threads for the numeric kernels (default 1: batch 32 is too small to share)" },
    Flag { name: "jobs", value: Some("N"), help: "net folders (a split and a configuration) trained at once, one thread each (default 1); the same tensors as one at a time" },
];

fn list<T>(flag: &str, s: &str, f: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|x| f(x.trim()).ok_or_else(|| CliError::Usage(format!("deepchess train --system dbn: bad --{flag} entry '{x}'"))))
        .collect()
}

fn config(s: &str) -> Option<Vec<usize>> {
    let [small, medium, large] = Arch::configs();
    match s {
        "small" => Some(small),
        "medium" => Some(medium),
        "large" => Some(large),
        _ => Arch::parse(&format!("772-{s}/classify")).map(|a| a.hidden),
    }
}

/// The DBN's part of `deepchess train` (the steps are `train::driver`'s).
pub struct Recipe;

/// The profile with the flags' overrides, and what else the flags chose.
pub struct Setup {
    pub prof: Profile,
    pub plan: Plan,
    pub labels: PathBuf,
    pub max_positions: Option<usize>,
    /// Net folders trained at once (`--jobs`).
    pub jobs: usize,
}

/// The labelled positions, in each encoding the plan trains.
pub struct Inputs {
    s772: Samples,
    s773: Option<Samples>,
}

impl driver::Recipe for Recipe {
    const NAME: &'static str = "dbn";
    const DEFAULT_PROFILE: &'static str = "quick";
    const OUT_PREFIX: &'static str = "runs/dbn-";
    const THREADS: Threads = Threads::Kernels { default: 1, min: 1 };
    /// Every head, the game split, the 773-bit variant, two RBM epochs per layer (so a
    /// resumed layer replays an epoch's shuffle).
    const SMOKE: &'static [&'static str] = &["--profile", "tiny", "--threads", "1", "--configs", "small", "--rbm-epochs", "2", "--max-positions", "800", "--splits", "games"];
    type Profile = Profile;
    type Setup = Setup;
    type Inputs = Inputs;
    type Outcome = Vec<Trained>;

    const PROFILES: &'static [(&'static str, fn() -> Profile)] = PROFILES;

    fn setup(cli: &TrainCli, mut prof: Profile) -> Result<Setup, CliError> {
        let p = cli.p;
        cli.set("folds", &mut prof.folds, |f| (1..=10).contains(f), "must be 1 to 10")?;
        cli.set_any("rbm-epochs", &mut prof.rbm.epochs)?;
        cli.set_any("fine-epochs", &mut prof.fine.epochs)?;
        cli.set_any("lr", &mut prof.fine.lr)?;
        cli.set_any("momentum", &mut prof.fine.momentum)?;
        cli.set("dropout", &mut prof.fine.dropout, |d| (0.0..1.0).contains(d), "must be in [0, 1)")?;
        if p.get("clip-norm") == Some("none") {
            prof.fine.clip = None;
        } else {
            let mut c = prof.fine.clip.unwrap_or(MAX_GRAD_NORM);
            cli.set("clip-norm", &mut c, |c: &f64| *c > 0.0 && c.is_finite(), "must be a positive number or 'none'")?;
            if p.get("clip-norm").is_some() {
                prof.fine.clip = Some(c);
            }
        }
        let configs = match p.get("configs") {
            Some(s) => list("configs", s, config)?,
            None => Arch::configs().to_vec(),
        };
        let heads = match p.get("heads") {
            Some(s) => list("heads", s, Head::parse)?,
            None => Head::ALL.to_vec(),
        };
        let mut splits = Vec::new();
        for s in list("splits", p.get("splits").unwrap_or("positions,games"), |s| ["positions", "games"].contains(&s).then(|| s.to_string()))? {
            match s.as_str() {
                "positions" => splits.extend((0..prof.folds).map(|fold| Split::Positions { fold, folds: 10 })),
                _ => splits.push(Split::Games { per_mille: 100 }),
            }
        }
        let side_bit = match p.get("side-bit").unwrap_or("quantized") {
            "none" => None,
            h => Some(Head::parse(h).ok_or_else(|| cli.usage(format!("bad --side-bit '{h}'")))?),
        };
        let max_positions = cli.max_positions()?;
        let labels = PathBuf::from(p.get("labels").unwrap_or(DEFAULT_LABELS));
        Ok(Setup { prof, plan: Plan { configs, heads, splits, side_bit }, labels, max_positions, jobs: 1 })
    }

    fn threads_chosen(cli: &TrainCli, setup: &mut Setup, threads: usize) -> Result<(), CliError> {
        cli.set("jobs", &mut setup.jobs, |j| (1..=64).contains(j), "must be 1 to 64")?;
        if setup.jobs > 1 && threads > 1 {
            return Err(cli.usage("--jobs and --threads both split the cores: give one of them"));
        }
        Ok(())
    }

    fn settings(setup: &Setup, s: &mut RunSettings) -> Result<(), CliError> {
        run_settings(s, &setup.prof, &setup.plan, &setup.labels, setup.max_positions)
    }

    fn load(setup: &Setup, run: &Run) -> Result<Inputs, CliError> {
        let labels = &setup.labels;
        if !labels.is_file() {
            return Err(CliError::Failed(format!("{} not found: make a labelled set with 'deepchess label' (see 'make labels-dbn')", labels.display())));
        }
        let t = Instant::now();
        let mut set = LabelSet::load(labels).map_err(CliError::Failed)?;
        if let Some(n) = setup.max_positions {
            set.items.truncate(n);
        }
        if set.items.is_empty() {
            return Err(CliError::Failed(format!("{}: no labelled positions", labels.display())));
        }
        let s772 = Samples::from_labels(&set, Encoding::Bits772);
        let s773 = setup.plan.side_bit.map(|_| Samples::from_labels(&set, Encoding::Bits773));
        eprintln!("profile {}: {} labelled positions from {} ({:.1}s to load)", run.profile, s772.items.len(), labels.display(), t.elapsed().as_secs_f64());
        Ok(Inputs { s772, s773 })
    }

    fn train(setup: &Setup, inputs: &Inputs, run: &Run) -> Result<Vec<Trained>, CliError> {
        let meta = vec![("profile".to_string(), run.profile.clone()), ("labels".to_string(), setup.labels.display().to_string())];
        self::run(&run.out, &setup.prof, &setup.plan, &inputs.s772, inputs.s773.as_ref(), run.seed, run.resume, &meta, setup.jobs).map_err(CliError::Failed)
    }

    fn results(setup: &Setup, inputs: &Inputs, outcomes: &Vec<Trained>, run: &Run) -> Result<String, CliError> {
        Ok(format!(
            "# DBN run `{}`\n\nProfile `{}`, seed {}, {} labelled positions from `{}`.\n\
             Accuracy: classify and quantized = argmax equals the class; regress = output within 0.1\n\
             of the normalised target (±30 cp). Seed protocol = fold(s) of a 10-fold split over\n\
             positions (positions of one game on both sides); held-out games = 10 % of games held\n\
             out whole.\n\n{}\nWall time of this invocation: {:.1} min; the epochs' time in the nets' logs, over\n\
             every invocation of the run: {:.1} min.\n",
            run.out.display(),
            run.profile,
            run.seed,
            inputs.s772.items.len(),
            setup.labels.display(),
            table(outcomes),
            run.minutes(),
            logged_seconds(outcomes)? / 60.0
        ))
    }

    /// Seed 001's labelled set for tests, as `labels.csv`: every position after ply 10 of
    /// the smoke games (draws included), scored by material (an engine's scores stood in for).
    fn smoke_inputs(dir: &Path) -> Result<Vec<String>, String> {
        let path = dir.join("labels.csv");
        super::data::smoke_labels(&driver::smoke_games(), &path)?;
        Ok(vec!["--labels".into(), path.display().to_string()])
    }
}

/// What defines a run beside its system, profile and seed (see `train::settings`).
fn run_settings(s: &mut RunSettings, prof: &Profile, plan: &Plan, labels: &Path, max_positions: Option<usize>) -> Result<(), CliError> {
    // The file's bytes as stored: the same set compressed otherwise is another run.
    let bytes = crate::io::files::read_regular(labels, 1 << 30, "labelled set").map_err(|e| CliError::Failed(format!("{}: {e}", labels.display())))?;
    let fnv = crate::io::fnv1a64(&bytes);
    crate::io::provenance::input_hashed(labels, bytes.len() as u64, fnv);
    let print = format!("{fnv:016x}");
    s.add("labels", print, "--labels", Kind::Defining);
    s.add("max_positions", max_positions.map_or("all".to_string(), |n| n.to_string()), "--max-positions", Kind::Defining);
    s.add("rbm", format!("{:?}", prof.rbm), "pretraining schedule (the profile)", Kind::FromProfile);
    s.add("fine", prof.fine.schedule(), "fine-tuning schedule (the profile)", Kind::FromProfile);
    s.add("clip_norm", prof.fine.clip.map_or("none".to_string(), |c| format!("{c:?}")), "--clip-norm", Kind::FromProfile);
    // The plan defines the run too: results.md is the table of this plan's nets, so a resume
    // with another plan would write a table without the earlier nets' rows.
    let describe = |v: &[String]| v.join(",");
    s.add("configs", describe(&plan.configs.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>()), "--configs", Kind::Defining);
    s.add("heads", describe(&plan.heads.iter().map(|h| h.name().to_string()).collect::<Vec<_>>()), "--heads", Kind::Defining);
    s.add("splits", describe(&plan.splits.iter().map(|x| x.name()).collect::<Vec<_>>()), "--splits / --folds", Kind::Defining);
    s.add("side_bit", plan.side_bit.map_or("none", |h| h.name()), "--side-bit", Kind::Defining);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_the_folds_mean_and_range_beside_held_out_games() {
        let arch = Arch::parse("772-8/quantized").unwrap();
        let m = |accuracy| Metrics { accuracy, mae_cp: f64::NAN, positions: 10 };
        let t = |split, a| Trained { arch: arch.clone(), split, train: m(0.5), valid: m(a), file: PathBuf::new() };
        let three = [0.30, 0.25, 0.29].iter().enumerate().map(|(fold, &a)| t(Split::Positions { fold, folds: 10 }, a));
        let mut runs: Vec<Trained> = three.collect();
        runs.push(t(Split::Games { per_mille: 100 }, 0.27));
        let row = table(&runs).lines().find(|l| l.starts_with("| 772-8 |")).unwrap().to_string();
        assert_eq!(row, "| 772-8 | quantized | 28.00 % [25.00, 30.00] (3) | 27.00 % | 50.00 % | – |");
        // The run's time comes from every net folder's log, each once, epoch rows only.
        let dir = std::env::temp_dir().join(format!("dbn-logged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = "phase,epoch,lr,loss,train_acc,val_acc,seconds,rate\n\
                   rbm.0,1,0.005,0.02,NaN,NaN,30.5,1000\nrbm.0.fe_gap,1,0.005,0.3,NaN,NaN,30.5,NaN\n\
                   finetune.classify,1,0.005,1.1,0.3,0.3,29.5,1000\nfinetune.classify.grad_norm,1,0.005,4,NaN,NaN,29.5,NaN\n";
        std::fs::write(dir.join("log.csv"), csv).unwrap();
        let mut here = runs.clone();
        here.iter_mut().for_each(|o| o.file = dir.join("net.dcw"));
        assert_eq!(logged_seconds(&here).unwrap(), 60.0);
        std::fs::remove_dir_all(&dir).unwrap();
        // One fold: no range.
        let row = table(&runs[..1]).lines().find(|l| l.starts_with("| 772-8 |")).unwrap().to_string();
        assert_eq!(row, "| 772-8 | quantized | 30.00 % (1) | – | – | – |");
    }
}
