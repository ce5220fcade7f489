//! The whole pipeline: Pos2Vec → DeepChess → distilled, and the small net trained from
//! scratch (with pretraining), i.e. the three rows of the paper's table 1; beyond the
//! paper, a compact student distilled from the same teacher for the engine, and its value
//! learned by one tower (the value student, phase `value`). Finished phases
//! leave their net in the run folder and are skipped on `--resume`; the phase in progress
//! continues from `checkpoint.dcw`.

use super::model::{Arch, Net, ValueArch, ValueNet};
use super::pairs::{dataset_file, load_pools, pair_accuracy, value_pair_accuracy, AuxPairs, Pools, Validation};
use super::train::{distill_tower, distill_value, pos2vec_layer, siamese};
use crate::data::build::VALID_POSITIONS;
use crate::data::dataset::Dataset;
use crate::io::args::{CliError, Flag, Parsed};
use crate::tensor::{Precision, Rng};
use crate::train::checkpoint::OptCfg;
use crate::train::settings::{Kind, RunSettings};
use crate::train::stage::{Ctx, StageCfg};
use crate::train::run::{Run, TrainCli};
use crate::train::system::System;
use std::path::{Path, PathBuf};
use crate::tensor::NetFile;

/// Hyper-parameters of a whole run.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: &'static str,
    /// Add each position's colour-mirrored twin to the other class.
    pub mirror: bool,
    /// Validation pairs per epoch (fixed seed).
    pub val_pairs: usize,
    /// Per autoencoder layer.
    pub pos2vec: StageCfg,
    pub siamese: StageCfg,
    pub distill_tower: StageCfg,
    pub distill_full: StageCfg,
    /// The student's layers (the paper's distilled shape unless `--distill-arch`).
    pub distill_arch: Arch,
    /// The compact student (Arch::compact), soft targets only: it has no tower phase.
    pub compact: StageCfg,
    /// Beyond the paper: same-game and material pairs mixed into the compact phase (none by
    /// default; `--compact-aux`).
    pub compact_aux: AuxPairs,
    /// Beyond the paper: the value student (ValueArch::compact), taught by the compact net's
    /// draw-referenced value; it starts from the compact net's tower.
    pub value: StageCfg,
    /// Pos2Vec's positions: `Some(n)`, a fixed subset of n won-game and n lost-game positions
    /// drawn once (the paper's 1M + 1M); `None`, fresh draws from both pools each epoch, in
    /// proportion to their sizes.
    pub pos2vec_subset: Option<usize>,
    pub scratch_pos2vec: StageCfg,
    pub scratch_siamese: StageCfg,
}

/// The profiles `--profile` takes, in the order help lists them.
pub const PROFILES: &[(&str, fn() -> Profile)] = &[("quick", Profile::quick), ("paper", Profile::paper), ("memorise", Profile::memorise), ("curve", Profile::curve), ("tiny", Profile::tiny)];

impl Profile {
    /// The paper's hyper-parameters (section 3). Batch size is not given in the paper: 256.
    /// Distillation schedules are not given either: the Siamese phase's, shorter.
    pub fn paper() -> Profile {
        let p2v = StageCfg { epochs: 200, samples: 2_000_000, batch: 256, opt: OptCfg::Sgd { lr: 0.005, decay: 0.98, momentum: 0.0 }, precision: Precision::F32 };
        let sia = StageCfg { epochs: 1000, samples: 1_000_000, batch: 256, opt: OptCfg::Sgd { lr: 0.01, decay: 0.99, momentum: 0.0 }, precision: Precision::F32 };
        Profile {
            name: "paper",
            mirror: false,
            val_pairs: 100_000,
            pos2vec: p2v,
            siamese: sia,
            distill_tower: StageCfg { epochs: 100, ..p2v },
            distill_full: StageCfg { epochs: 300, ..sia },
            distill_arch: Arch::small(),
            compact: StageCfg { epochs: 300, ..sia },
            compact_aux: AuxPairs::NONE,
            value: Profile::quick().value,
            pos2vec_subset: Some(1_000_000),
            scratch_pos2vec: p2v,
            scratch_siamese: sia,
        }
    }

    /// The default: `make train` finishes in about eight minutes on 2 cores with a net that plays.
    /// AdamW, colour-mirror augmentation, short schedules.
    pub fn quick() -> Profile {
        let adam = |lr: f32| OptCfg::Adam { lr, decay: 0.9, weight_decay: 1e-4 };
        Profile {
            name: "quick",
            mirror: true,
            val_pairs: 20_000,
            pos2vec: StageCfg { epochs: 2, samples: 100_000, batch: 256, opt: adam(1e-3), precision: Precision::F32 },
            // Epochs chosen where held-out accuracy stopped rising on the shipped corpus
            // (docs/results.md, table 1).
            siamese: StageCfg { epochs: 16, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            distill_tower: StageCfg { epochs: 4, samples: 200_000, batch: 256, opt: adam(1e-3), precision: Precision::F32 },
            distill_full: StageCfg { epochs: 12, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            distill_arch: Arch::small(),
            // Compact students keep improving long after the paper-sized one has settled
            // (docs/results.md, table 1).
            compact: StageCfg { epochs: 30, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            compact_aux: AuxPairs::NONE,
            value: StageCfg { epochs: 20, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            pos2vec_subset: None,
            scratch_pos2vec: StageCfg { epochs: 2, samples: 100_000, batch: 256, opt: adam(1e-3), precision: Precision::F32 },
            scratch_siamese: StageCfg { epochs: 12, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
        }
    }

    /// A seconds-long run for tests and smoke checks.
    pub fn tiny() -> Profile {
        let s = |epochs, samples| StageCfg { epochs, samples, batch: 64, opt: OptCfg::Adam { lr: 1e-3, decay: 1.0, weight_decay: 0.0 }, precision: Precision::F32 };
        Profile {
            name: "tiny",
            mirror: true,
            val_pairs: 2_000,
            pos2vec: s(1, 2_000),
            siamese: s(3, 4_000),
            distill_tower: s(1, 2_000),
            distill_full: s(2, 4_000),
            distill_arch: Arch::small(),
            compact: s(2, 4_000),
            compact_aux: AuxPairs::NONE,
            value: s(2, 4_000),
            pos2vec_subset: None,
            scratch_pos2vec: s(1, 2_000),
            scratch_siamese: s(2, 4_000),
        }
    }

    /// The DeepChess phase alone, short, for accuracy-against-data-size curves
    /// (`--phases siamese --max-positions N`).
    pub fn curve() -> Profile {
        let mut p = Profile::quick();
        p.name = "curve";
        p.siamese = StageCfg { epochs: 6, samples: 100_000, ..p.siamese };
        p
    }

    /// The paper's regime on a small corpus (docs/results.md, "The paper's 98 %"): no
    /// mirroring, and a Siamese phase long enough that training accuracy passes 97 %
    /// (the paper's 98.2 %), to see where the two validation protocols part.
    pub fn memorise() -> Profile {
        let adam = |lr: f32| OptCfg::Adam { lr, decay: 0.98, weight_decay: 1e-4 };
        let mut p = Profile::quick();
        p.name = "memorise";
        p.mirror = false;
        p.siamese = StageCfg { epochs: 100, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 };
        p.distill_full = StageCfg { epochs: 40, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 };
        p
    }

    /// The profile with `precision` for the products of every stage that trains a comparator
    /// or an autoencoder layer (`--precision`). The tower's distillation keeps f32: it ran in
    /// f32 before the setting was a stage's, and its nets stay as they were.
    pub fn with_precision(mut self, precision: Precision) -> Profile {
        for c in [&mut self.pos2vec, &mut self.siamese, &mut self.distill_full, &mut self.compact, &mut self.scratch_pos2vec, &mut self.scratch_siamese] {
            c.precision = precision;
        }
        self
    }
}

/// Which phases to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    pub pos2vec: bool,
    pub siamese: bool,
    pub distill: bool,
    pub compact: bool,
    pub value: bool,
    pub scratch: bool,
}

impl Phases {
    pub const ALL: Phases = Phases { pos2vec: true, siamese: true, distill: true, compact: true, value: true, scratch: true };

    pub fn parse(s: &str) -> Option<Phases> {
        let mut p = Phases { pos2vec: false, siamese: false, distill: false, compact: false, value: false, scratch: false };
        for part in s.split(',') {
            match part.trim() {
                "pos2vec" => p.pos2vec = true,
                "siamese" | "deepchess" => p.siamese = true,
                "distill" => p.distill = true,
                "compact" => p.compact = true,
                "value" => p.value = true,
                "scratch" => p.scratch = true,
                "all" => p = Phases::ALL,
                _ => return None,
            }
        }
        Some(p)
    }
}

/// One trained net's figures (a row of the paper's table 1).
#[derive(Clone, Debug)]
pub struct Trained {
    pub name: String,
    pub arch: String,
    /// On valid.dcds.
    pub valid: f64,
    /// On valid-positions.dcds, when the dataset has one (`--split both`).
    pub positions: Option<f64>,
    /// On the training positions (the paper's "training" column).
    pub train: f64,
}

fn load_if(path: &Path) -> Result<Option<(Net, Vec<(String, String)>)>, String> {
    if path.exists() {
        Net::load(path).map(Some).map_err(|e| e.to_string())
    } else {
        Ok(None)
    }
}

fn save(net: &Net, path: &Path, ctx: &Ctx, extra: &[(&str, String)]) -> Result<(), String> {
    save_file(net, path, ctx, extra)
}

fn save_value(net: &ValueNet, path: &Path, ctx: &Ctx, extra: &[(&str, String)]) -> Result<(), String> {
    save_file(net, path, ctx, extra)
}

fn save_file<N: NetFile>(net: &N, path: &Path, ctx: &Ctx, extra: &[(&str, String)]) -> Result<(), String> {
    let mut meta = ctx.meta.clone();
    meta.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    net.save(path, &meta).map_err(|e| format!("{}: {e}", path.display()))
}

/// Pretrains `net`'s tower layer by layer unless `file` already holds all layers; on the
/// paper's fixed balanced subset of `subset` positions a class when given (drawn from the
/// run's seed, so a resumed run draws it again).
fn pretrain(ctx: &mut Ctx, prefix: &str, net: &mut Net, file: &Path, pools: &Pools, cfg: &StageCfg, subset: Option<usize>) -> Result<(), String> {
    let fixed;
    let pools = match subset {
        Some(n) => {
            fixed = pools.balanced_subset(n, &mut crate::tensor::Rng::new(ctx.seed ^ 0x2B1A_5E75));
            eprintln!("[{prefix}] the paper's fixed subset: {} positions of won games, {} of lost ones", fixed.w.len(), fixed.l.len());
            &fixed
        }
        None => pools,
    };
    let layers = net.tower.len();
    let mut done = 0;
    if let Some((n, meta)) = load_if(file)? {
        if n.arch == net.arch {
            done = meta.iter().find(|(k, _)| k == "layers_done").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
            *net = n;
        }
    }
    for k in done..layers {
        pos2vec_layer(ctx, &format!("{prefix}.{k}"), net, k, pools, cfg)?;
        save(net, file, ctx, &[("layers_done", (k + 1).to_string()), ("phase", prefix.to_string())])?;
    }
    Ok(())
}

/// Runs the selected phases in `ctx.dir`.
pub fn run(ctx: &mut Ctx, prof: &Profile, phases: Phases, train: &Pools, valid: &Pools, positions: Option<&Pools>) -> Result<Vec<Trained>, String> {
    let dir = ctx.dir.clone();
    let mut rng = Rng::new(ctx.seed);
    let mut trained = Vec::new();
    let final_pairs = prof.val_pairs.max(10_000);
    let acc = |net: &Net| pair_accuracy(net, valid, final_pairs, 0x5EED_ACC);
    let row = |name: &str, net: &Net| Trained {
        name: name.to_string(),
        arch: net.arch.describe(),
        valid: acc(net),
        positions: positions.map(|p| pair_accuracy(net, p, final_pairs, 0x5EED_ACC)),
        train: pair_accuracy(net, train, final_pairs, 0x5EED_ACC),
    };
    let val = Validation { valid, positions, pairs: prof.val_pairs };
    let valid = &val;

    let mut big = Net::new(Arch::big(), &mut rng);
    if phases.pos2vec {
        pretrain(ctx, "pos2vec", &mut big, &dir.join("pos2vec.dcw"), train, &prof.pos2vec, prof.pos2vec_subset)?;
    }
    let deepchess_path = dir.join("deepchess.dcw");
    if phases.siamese && !deepchess_path.exists() {
        if let Some((n, _)) = load_if(&dir.join("pos2vec.dcw"))? {
            big = n;
        }
        siamese(ctx, "deepchess", &mut big, None, train, valid, &prof.siamese, &AuxPairs::NONE)?;
        let a = acc(&big);
        save(&big, &deepchess_path, ctx, &[("phase", "deepchess".into()), ("val_pair_acc", format!("{a:.4}"))])?;
    }
    let teacher = load_if(&deepchess_path)?.map(|(n, _)| n);
    if let Some(t) = &teacher {
        trained.push(row("DeepChess (uncompressed)", t));
    }

    let distilled_path = dir.join("distilled.dcw");
    if phases.distill {
        let Some(t) = &teacher else {
            return Err(format!("distillation needs the big net {} (run the siamese phase first)", deepchess_path.display()));
        };
        if !distilled_path.exists() {
            let tower_path = dir.join("distilled-tower.dcw");
            let mut small = match load_if(&tower_path)? {
                Some((n, _)) => n,
                // A student with as many features as the teacher first learns its tower
                // (paper §3.3); a narrower one has no target there and starts from scratch.
                None if prof.distill_arch.features() != t.arch.features() => {
                    eprintln!("distill: student {} has {} features, the teacher {}: no tower phase", prof.distill_arch.describe(), prof.distill_arch.features(), t.arch.features());
                    Net::new(prof.distill_arch.clone(), &mut rng)
                }
                None => {
                    let mut s = Net::new(prof.distill_arch.clone(), &mut rng);
                    distill_tower(ctx, "distill.tower", &mut s, t, train, &prof.distill_tower)?;
                    save(&s, &tower_path, ctx, &[("phase", "distill.tower".into())])?;
                    s
                }
            };
            siamese(ctx, "distill.full", &mut small, Some(t), train, valid, &prof.distill_full, &AuxPairs::NONE)?;
            let a = acc(&small);
            save(&small, &distilled_path, ctx, &[("phase", "distilled".into()), ("val_pair_acc", format!("{a:.4}"))])?;
        }
    }
    if let Some((n, _)) = load_if(&distilled_path)? {
        trained.push(row("Distilled", &n));
    }

    let compact_path = dir.join("compact.dcw");
    if phases.compact && !compact_path.exists() {
        let Some(t) = &teacher else {
            return Err(format!("the compact student needs the big net {} (run the siamese phase first)", deepchess_path.display()));
        };
        let mut s = Net::new(Arch::compact(), &mut Rng::new(ctx.seed ^ 0xC0A7AC7));
        siamese(ctx, "compact", &mut s, Some(t), train, valid, &prof.compact, &prof.compact_aux)?;
        let a = acc(&s);
        save(&s, &compact_path, ctx, &[("phase", "compact".into()), ("val_pair_acc", format!("{a:.4}"))])?;
    }
    let compact = load_if(&compact_path)?.map(|(n, _)| n);
    if let Some(n) = &compact {
        trained.push(row("Distilled, compact (the engine's default)", n));
    }

    let value_path = dir.join("value-student.dcw");
    if phases.value && !value_path.exists() {
        let Some(t) = &compact else {
            return Err(format!("the value student needs the compact net {} (run the compact phase first)", compact_path.display()));
        };
        let mut s = ValueNet::from_tower(ValueArch::compact(), t, &mut Rng::new(ctx.seed ^ 0x5CA1A4));
        distill_value(ctx, "value", &mut s, t, train, valid, &prof.value)?;
        let a = value_pair_accuracy(&s, valid.valid, final_pairs, 0x5EED_ACC);
        save_value(&s, &value_path, ctx, &[("phase", "value".into()), ("val_pair_acc", format!("{a:.4}"))])?;
    }
    if value_path.exists() {
        let (n, _) = ValueNet::load(&value_path).map_err(|e| e.to_string())?;
        let acc = |p: &Pools| value_pair_accuracy(&n, p, final_pairs, 0x5EED_ACC);
        trained.push(Trained {
            name: "Value student of the compact net (beyond the paper)".into(),
            arch: n.arch.describe(),
            valid: acc(valid.valid),
            positions: valid.positions.map(acc),
            train: acc(train),
        });
    }

    let scratch_path = dir.join("scratch.dcw");
    if phases.scratch && !scratch_path.exists() {
        let mut small = Net::new(Arch::small(), &mut Rng::new(ctx.seed ^ 0x5C4A7C4));
        pretrain(ctx, "scratch.pos2vec", &mut small, &dir.join("scratch-pos2vec.dcw"), train, &prof.scratch_pos2vec, prof.pos2vec_subset)?;
        siamese(ctx, "scratch.siamese", &mut small, None, train, valid, &prof.scratch_siamese, &AuxPairs::NONE)?;
        let a = acc(&small);
        save(&small, &scratch_path, ctx, &[("phase", "scratch".into()), ("val_pair_acc", format!("{a:.4}"))])?;
    }
    if let Some((n, _)) = load_if(&scratch_path)? {
        trained.push(row("Small net from scratch (pretrained)", &n));
    }
    Ok(trained)
}

// ---------------------------------------------------------------- the command line

/// `deepchess train` (`--system deepchess`, the default; src/players.rs, `SYSTEMS`).
pub const SYSTEM: System = System {
    name: "deepchess",
    seed: "seed 000: DeepChess (David, Netanyahu & Wolf, ICANN 2016)",
    about: "Pos2Vec, the Siamese comparator, its distilled students (the paper's and the compact one), the compact one's value student, the small net from scratch",
    colour: "#1f77b4",
    commands: &[super::accuracy::COMMAND, super::compare::COMMAND, super::bench::COMMAND],
    bench_tensor: &[],
    synopsis: "[--profile quick|paper|tiny] [--data DIR] [--out DIR] [--resume] [options]",
    help: "Trains Pos2Vec (stacked autoencoders), the DeepChess Siamese comparator, the distilled\n\
         nets (the paper's and the compact one), the compact net's value student (beyond the\n\
         paper) and the small net from scratch, checkpointing every epoch. Writes log.csv,\n\
         curves.svg and results.md (accuracy on held-out games) into the run folder.\n\
         \n\
         The run's settings are recorded in its folder (run.txt). --resume refuses to continue\n\
         with a different profile, dataset content, seed, --max-positions, --no-mirror,\n\
         --siamese-epochs, --distill-epochs, --distill-arch, --compact-aux or --precision. --threads and\n\
         --phases may change between invocations, and --data may name a moved copy of the\n\
         same dataset files.",
    flags: FLAGS,
    run: train_cli,
};

const FLAGS: &[Flag] = &[
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, ~8 min on 2 cores) | paper (the paper's schedule) | memorise (the paper's regime on a small corpus: training accuracy past 97 %) | curve | tiny (seconds)" },
    Flag { name: "data", value: Some("DIR"), help: "dataset folder with train.dcds and valid.dcds (default runs/dataset)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder: nets, checkpoint, log.csv, curves.svg (default runs/PROFILE)" },
    Flag { name: "phases", value: Some("LIST"), help: "comma list of pos2vec,siamese,distill,compact,value,scratch (default all; value: the compact net's value student, beyond the paper)" },
    Flag { name: "seed", value: Some("N"), help: "seed of initialisation and sampling (default 1)" },
    Flag { name: "resume", value: None, help: "continue an interrupted run in --out from its last checkpoint (same settings; see above)" },
    Flag { name: "threads", value: Some("N"), help: "threads for the numeric kernels (default 2)" },
    Flag { name: "max-positions", value: Some("N"), help: "use at most N training positions per class (data-size curves)" },
    Flag { name: "no-mirror", value: None, help: "no colour-mirror augmentation even if the profile uses it" },
    Flag { name: "siamese-epochs", value: Some("N"), help: "epochs of the DeepChess (Siamese) phase instead of the profile's" },
    Flag { name: "distill-arch", value: Some("ARCH"), help: "the distilled net's layers, e.g. 773-32-32-32/32-32-2 (default the paper's 773-100-100-100/100-100-2)" },
    Flag { name: "compact-aux", value: Some("SPEC"), help: "beyond the paper: mix same-game and material pairs into the compact phase, e.g. progress=0.3,gap=8,material=0.1 (default none)" },
    Flag { name: "pos2vec-subset", value: Some("N"), help: "Pos2Vec on a fixed subset of N won-game and N lost-game positions drawn once (the paper's, N = 1,000,000: the paper profile's default); 0: fresh draws each epoch in proportion to the pools (the other profiles')" },
    Flag { name: "distill-epochs", value: Some("N"), help: "epochs of the distillation's pair phase instead of the profile's" },
    Flag { name: "precision", value: Some("P"), help: "f32 (default) or bf16: the training products' operands in bf16, sums and weights in f32 (mixed precision; about 1.5x faster with AVX-512 BF16, docs/benchmarks.md)" },
];

/// The profile the flags name, with their overrides.
fn profile_of(cli: &TrainCli) -> Result<Profile, CliError> {
    let p = cli.p;
    let (_, mut prof) = cli.profile("quick", PROFILES)?;
    if p.has("no-mirror") {
        prof.mirror = false;
    }
    cli.set("siamese-epochs", &mut prof.siamese.epochs, |&e| e >= 1, "must be at least 1")?;
    if let Some(a) = p.get("distill-arch") {
        prof.distill_arch = crate::deepchess::model::Arch::parse(a)
            .ok_or_else(|| cli.usage(format!("bad --distill-arch '{a}' (want 773-W-...-F/H-...-2, e.g. 773-32-32-32/32-32-2)")))?;
        // A student the search could not play is refused before hours of training.
        crate::deepchess::infer::playable(&prof.distill_arch).map_err(|e| cli.usage(format!("--distill-arch '{a}' cannot play: {e}")))?;
    }
    cli.set("distill-epochs", &mut prof.distill_full.epochs, |&e| e >= 1, "must be at least 1")?;
    if p.get("pos2vec-subset").is_some() {
        let n: usize = p.get_or("train", "pos2vec-subset", 0)?;
        prof.pos2vec_subset = (n > 0).then_some(n);
    }
    if let Some(a) = p.get("compact-aux") {
        prof.compact_aux = AuxPairs::parse(a).map_err(|e| cli.usage(format!("bad --compact-aux '{a}': {e}")))?;
    }
    Ok(prof)
}

fn train_cli(p: &Parsed) -> Result<(), CliError> {
    let cli = TrainCli::new(p, "deepchess", true);
    let pname = p.get("profile").unwrap_or("quick");
    let prof = profile_of(&cli)?;
    let phases = match p.get("phases") {
        Some(s) => Phases::parse(s).ok_or_else(|| cli.usage(format!("bad --phases '{s}'")))?,
        None => Phases::ALL,
    };
    cli.tensor_threads(2, 1)?;
    let seed = cli.seed()?;
    let max_positions = cli.max_positions()?;
    let data = PathBuf::from(p.get("data").unwrap_or("runs/dataset"));
    let out = cli.out(format!("runs/{pname}"));
    let resume = cli.resume();
    let name = p.get("precision").unwrap_or("f32");
    let precision = Precision::parse(name).ok_or_else(|| cli.usage(format!("--precision takes f32 or bf16, not '{name}'")))?;
    let prof = prof.with_precision(precision);

    // The settings are checked before the data is loaded: a refusal should not wait for it.
    let run_ = Run::admit(out.clone(), resume, run_settings(&prof, seed, &data, max_positions, precision)?)?;

    let (mut train, tds) = load_pools(&data, "train.dcds", prof.mirror).map_err(CliError::Failed)?;
    if let Some(n) = max_positions {
        train.truncate(n);
    }
    let (valid, vds) = load_pools(&data, "valid.dcds", false).map_err(CliError::Failed)?;
    if let (Some(a), Some(b)) = (tds.meta("pair"), vds.meta("pair")) {
        if a != b {
            return Err(CliError::Failed(format!(
                "{}: train.dcds and valid.dcds come from different 'deepchess data' runs (pair {a} and {b}; one write of a run was cut short?): build them again",
                data.display()
            )));
        }
    }
    // `deepchess data --split both`: single positions of training games, the other protocol.
    let positions = if data.join(VALID_POSITIONS).exists() {
        let pds = Dataset::load(&data.join(VALID_POSITIONS)).map_err(|e| CliError::Failed(e.to_string()))?;
        let pools = Pools::from_dataset(&pds, false);
        if pds.meta("pair") != tds.meta("pair") {
            return Err(CliError::Failed(format!(
                "{}: {VALID_POSITIONS} does not come from the 'deepchess data' run of train.dcds (pair {:?} and {:?}): build them again",
                data.display(),
                pds.meta("pair"),
                tds.meta("pair")
            )));
        }
        if pools.is_empty() {
            // Few games can leave one class without a held-out position: judge on valid.dcds alone.
            eprintln!("warning: {VALID_POSITIONS} has {} W and {} L positions (both are needed): judged on valid.dcds only", pools.w.len(), pools.l.len());
            None
        } else {
            eprintln!("second validation set {VALID_POSITIONS}: {} W + {} L held-out positions of training games", pools.w.len(), pools.l.len());
            Some(pools)
        }
    } else {
        None
    };
    let split = vds.meta("split").unwrap_or("unknown split").to_string();
    eprintln!(
        "profile {pname}: {} W + {} L training positions{}, {} W + {} L validation positions (held-out games)",
        train.w.len(),
        train.l.len(),
        if prof.mirror { " (with mirrored twins)" } else { "" },
        valid.w.len(),
        valid.l.len()
    );
    let mut meta = vec![
        ("profile".to_string(), pname.to_string()),
        ("data".to_string(), data.display().to_string()),
        ("data_source".to_string(), tds.meta("source").unwrap_or("?").to_string()),
        ("split".to_string(), split.clone()),
        ("mirror".to_string(), prof.mirror.to_string()),
        ("train_positions".to_string(), format!("{} W + {} L", train.w.len(), train.l.len())),
    ];
    if !prof.compact_aux.is_none() {
        let a = prof.compact_aux;
        meta.push(("compact_aux".to_string(), format!("progress={},gap={},material={}", a.progress, a.gap, a.material)));
    }
    run_.begin()?;
    let mut ctx = Ctx::new(&out, seed, resume, meta).map_err(CliError::Failed)?;
    let trained = run(&mut ctx, &prof, phases, &train, &valid, positions.as_ref()).map_err(CliError::Failed)?;
    let mut md = format!(
        "# Training run `{}`\n\nProfile `{pname}`, seed {seed}{}, data `{}` ({} W + {} L training positions{}).\n\
         Accuracy = fraction of random (W, L) pairs of the **validation set** ordered correctly;\n\
         validation = {split}; {} W + {} L validation positions.\n\n",
        out.display(),
        if precision == Precision::Bf16 { ", products in bf16 (f32 sums and weights)" } else { "" },
        data.display(),
        train.w.len(),
        train.l.len(),
        if prof.mirror { ", with mirrored twins" } else { "" },
        valid.w.len(),
        valid.l.len()
    );
    // Every accuracy column names its protocol.
    let protocol = match vds.meta("protocol") {
        Some("positions") => "position split",
        _ => "game split",
    };
    let pct = |x: f64| format!("{:.2} %", 100.0 * x);
    if positions.is_some() {
        md.push_str(&format!("| network | layers | validation [{protocol}] | validation [position split] ({VALID_POSITIONS}) | training positions |\n|---|---|---|---|---|\n"));
    } else {
        md.push_str(&format!("| network | layers | validation pair accuracy [{protocol}] | training positions |\n|---|---|---|---|\n"));
    }
    for r in &trained {
        let pos = r.positions.map_or(String::new(), |p| format!(" {} |", pct(p)));
        md.push_str(&format!("| {} | {} | {} |{pos} {} |\n", r.name, r.arch, pct(r.valid), pct(r.train)));
    }
    md.push_str(&format!("\nWall time of this invocation: {:.1} min.\n", run_.minutes()));
    run_.finish(&md)
}

/// What defines a run, written to `run.txt` when it starts and compared on `--resume`.
/// Left out on purpose, because they may change between invocations: `--threads` (it does
/// not change what is computed), `--phases` (each phase's net depends only on earlier ones)
/// and `--out` (the run folder itself).
fn run_settings(prof: &Profile, seed: u64, data: &Path, max_positions: Option<usize>, precision: Precision) -> Result<RunSettings, CliError> {
    let mut s = RunSettings { profile_key: Some("profile".into()), ..Default::default() };
    s.add("profile", prof.name, "--profile", Kind::Defining);
    s.add("seed", seed, "--seed", Kind::Defining);
    for file in ["train.dcds", "valid.dcds"] {
        let print = Dataset::fingerprint(&dataset_file(data, file).map_err(CliError::Failed)?).map_err(|e| CliError::Failed(e.to_string()))?;
        s.add(&format!("data.{file}"), print, &format!("--data ({file})"), Kind::Defining);
    }
    if data.join(VALID_POSITIONS).exists() {
        let print = Dataset::fingerprint(&data.join(VALID_POSITIONS)).map_err(|e| CliError::Failed(e.to_string()))?;
        s.add(&format!("data.{VALID_POSITIONS}"), print, &format!("--data ({VALID_POSITIONS})"), Kind::Defining);
    }
    // A moved or differently spelled folder holding the same files is the same data.
    let path = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
    s.add("data.path", path.display(), "--data", Kind::Note);
    s.add("max_positions", max_positions.map_or("all".to_string(), |n| n.to_string()), "--max-positions", Kind::Defining);
    s.add("mirror", prof.mirror, "--no-mirror (or the profile)", Kind::FromProfile);
    s.add("precision", precision.name(), "--precision", Kind::Defining);
    s.add("val_pairs", prof.val_pairs, "validation pairs (the profile)", Kind::FromProfile);
    let stages: [(&str, &StageCfg, &str); 8] = [
        ("pos2vec", &prof.pos2vec, ""),
        ("siamese", &prof.siamese, "--siamese-epochs or "),
        ("distill_tower", &prof.distill_tower, ""),
        ("distill_full", &prof.distill_full, "--distill-epochs or "),
        ("compact", &prof.compact, ""),
        ("value", &prof.value, ""),
        ("scratch_pos2vec", &prof.scratch_pos2vec, ""),
        ("scratch_siamese", &prof.scratch_siamese, ""),
    ];
    for (name, c, flag) in stages {
        s.add(&format!("{name}.epochs"), c.epochs, &format!("{name} epochs ({flag}the profile)"), Kind::FromProfile);
        let rest = format!("samples {}, batch {}, {}", c.samples, c.batch, c.opt.describe());
        s.add(name, rest, &format!("{name} schedule (the profile)"), Kind::FromProfile);
    }
    s.add("distill_arch", prof.distill_arch.describe(), "--distill-arch", Kind::FromProfile);
    let a = prof.compact_aux;
    let aux = if a.is_none() { "none".to_string() } else { format!("progress={},gap={},material={}", a.progress, a.gap, a.material) };
    s.add("compact_aux", aux, "--compact-aux", Kind::FromProfile);
    s.add("pos2vec_subset", prof.pos2vec_subset.map_or("fresh draws".to_string(), |n| format!("{n} a class, fixed")), "--pos2vec-subset", Kind::FromProfile);
    Ok(s)
}
