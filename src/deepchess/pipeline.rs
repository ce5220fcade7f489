//! The whole pipeline: Pos2Vec → DeepChess → distilled, and the small net trained from
//! scratch (with pretraining), i.e. the three rows of the paper's table 1; beyond the
//! paper, a compact student distilled from the same teacher for the engine, its value
//! learned by one tower (the value student, phase `value`) and that student taught by its
//! own search (phase `searched`, not among the defaults). Finished phases
//! leave their net in the run folder and are skipped on `--resume`; the phase in progress
//! continues from `checkpoint.dcw`.

use super::model::{Arch, Net, ValueNet};
pub use super::profile::{Profile, PROFILES};
use super::profile::overrides;
use super::pairs::{dataset_file, load_pools, pair_accuracy, value_pair_accuracy, AuxPairs, Pools, Validation};
use super::bootstrap::{search_values_kept, with_results};
use super::features::Features;
use super::train::{distill_tower, distill_value, fit_examples, pos2vec_layer, random_position_won, siamese};
use crate::data::build::VALID_POSITIONS;
use crate::data::dataset::Dataset;
use crate::data::build::{build_sets, save_sets, BuildSettings};
use crate::io::args::{CliError, Flag};
use crate::tensor::{Precision, Rng};
use crate::train::settings::{Kind, RunSettings};
use crate::train::stage::{Ctx, StageCfg};
use crate::train::driver;
use crate::train::run::{Run, Threads, TrainCli};
use crate::train::system::System;
use std::path::{Path, PathBuf};
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// Which phases to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    pub pos2vec: bool,
    pub siamese: bool,
    pub distill: bool,
    pub compact: bool,
    pub value: bool,
    /// The value student taught by its own search: about 11 minutes of searches on 2 cores,
    /// so not among the default phases (`--phases searched`).
    pub searched: bool,
    pub scratch: bool,
}

impl Phases {
    /// Every phase but `searched` (what `make train` runs).
    pub const ALL: Phases = Phases { pos2vec: true, siamese: true, distill: true, compact: true, value: true, searched: false, scratch: true };

    pub fn parse(s: &str) -> Option<Phases> {
        let mut p = Phases { pos2vec: false, siamese: false, distill: false, compact: false, value: false, searched: false, scratch: false };
        for part in s.split(',') {
            match part.trim() {
                "pos2vec" => p.pos2vec = true,
                "siamese" | "deepchess" => p.siamese = true,
                "distill" => p.distill = true,
                "compact" => p.compact = true,
                "value" => p.value = true,
                "searched" => p.searched = true,
                "scratch" => p.scratch = true,
                "all" => p = Phases { searched: p.searched, ..Phases::ALL },
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

/// Runs the selected phases in `ctx.dir`. `games` holds the training positions as played
/// (`train` without its mirrored twins, when the profile adds them): what the searched phase
/// searches, since it learns each position's mirror from its value anyway.
pub fn run(ctx: &mut Ctx, prof: &Profile, phases: Phases, train: &Pools, games: &Pools, valid: &Pools, positions: Option<&Pools>) -> Result<Vec<Trained>, String> {
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
        let mut s = ValueNet::from_tower(prof.value_arch.clone(), t, &mut Rng::new(ctx.seed ^ 0x5CA1A4));
        distill_value(ctx, "value", &mut s, t, train, valid, &prof.value)?;
        let a = value_pair_accuracy(&s, valid.valid, final_pairs, 0x5EED_ACC);
        save_value(&s, &value_path, ctx, &[("phase", "value".into()), ("val_pair_acc", format!("{a:.4}"))])?;
    }
    if value_path.exists() {
        trained.push(value_row("Value student of the compact net (beyond the paper)", &value_path, train, valid, final_pairs)?);
    }

    // Round k learns the searches of round k - 1's net (round 1: the value student's).
    let mut labeller = value_path.clone();
    for round in 1.. {
        let (net_path, labels_path, name) = searched_files(&dir, round);
        if phases.searched && round <= prof.searched_rounds && !net_path.exists() {
            let Ok((mut s, _)) = ValueNet::load(&labeller) else {
                return Err(format!("searched round {round} needs the net {} (run the value phase first)", labeller.display()));
            };
            let examples = searched_examples(ctx, &s, games, prof, round, &labels_path, &name)?;
            fit_examples(ctx, &name, &mut s, &examples, valid, &prof.searched)?;
            let a = value_pair_accuracy(&s, valid.valid, final_pairs, 0x5EED_ACC);
            let extra = [
                ("phase", name.clone()),
                ("searched_round", round.to_string()),
                ("searched_by", labeller.file_name().unwrap_or_default().to_string_lossy().into_owned()),
                ("searched_depth", prof.searched_depth.to_string()),
                ("searched_positions", examples.len().to_string()),
                ("val_pair_acc", format!("{a:.4}")),
            ];
            save_value(&s, &net_path, ctx, &extra)?;
        }
        if !net_path.exists() {
            break;
        }
        let what = match round {
            1 => "Value student taught by its own search (beyond the paper)".to_string(),
            k => format!("The same, round {k}: taught by round {}'s search", k - 1),
        };
        trained.push(value_row(&what, &net_path, train, valid, final_pairs)?);
        labeller = net_path;
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

/// A value net's row of the summary: its pair accuracy as numbers on each set.
fn value_row(name: &str, path: &Path, train: &Pools, valid: &Validation, pairs: usize) -> Result<Trained, String> {
    let (n, _) = ValueNet::load(path).map_err(|e| e.to_string())?;
    let acc = |p: &Pools| value_pair_accuracy(&n, p, pairs, 0x5EED_ACC);
    Ok(Trained { name: name.into(), arch: n.arch.describe(), valid: acc(valid.valid), positions: valid.positions.map(acc), train: acc(train) })
}

/// Round `round`'s net and labels of the searched phase, and its stage name: round 1
/// `value-searched.dcw`, `searched-labels.dcsl` (`searched`), round k `value-searched-k.dcw`,
/// `searched-labels-k.dcsl` (`searched.k`).
fn searched_files(dir: &Path, round: u32) -> (PathBuf, PathBuf, String) {
    match round {
        1 => (dir.join("value-searched.dcw"), dir.join("searched-labels.dcsl"), "searched".into()),
        k => (dir.join(format!("value-searched-{k}.dcw")), dir.join(format!("searched-labels-{k}.dcsl")), format!("searched.{k}")),
    }
}

/// Round `round`'s examples: `prof.searched_positions` positions of the training games drawn
/// from the run's seed and the round, each with the value of a `prof.searched_depth`-ply
/// search by `labeller`. Kept in `path` as they are searched: an interrupted run continues
/// them, a resumed one does not search again.
fn searched_examples(ctx: &Ctx, labeller: &ValueNet, games: &Pools, prof: &Profile, round: u32, path: &Path, label: &str) -> Result<Vec<(Features, f32)>, String> {
    // The constant makes seed 1's round 1 draw the positions of the shipped net's run (0xB007).
    let mut rng = Rng::new(ctx.seed ^ 0xB006 ^ (u64::from(round - 1) << 32));
    let drawn: Vec<(Features, bool)> = (0..prof.searched_positions).map(|_| random_position_won(games, &mut rng)).map(|(f, won)| (*f, won)).collect();
    let positions: Vec<Features> = drawn.iter().map(|d| d.0).collect();
    let searched = search_values_kept(labeller, &positions, prof.searched_depth, crate::tensor::threads(), label, path)?;
    with_results(searched, &drawn, prof.searched_lambda)
}

// ---------------------------------------------------------------- the command line

/// `deepchess train` (`--system deepchess`, the default; src/players.rs, `SYSTEMS`).
pub const SYSTEM: System = System {
    name: "deepchess",
    seed: "seed 000: DeepChess (David, Netanyahu & Wolf, ICANN 2016)",
    about: "Pos2Vec, the Siamese comparator, its distilled students (the paper's and the compact one), the compact one's value student, the small net from scratch",
    colour: "#1f77b4",
    commands: &[super::accuracy::COMMAND, super::compare::COMMAND, super::bench::COMMAND],
    bench_tensor: &[super::bench_tensor::SPARSE],
    gemm_layers: super::bench_tensor::GEMM_LAYERS,
    checkpoint_variants: &[&["--precision", "bf16"], &["--phases", "pos2vec,siamese,distill,compact,value,searched", "--value-arch", "773-16-8-1"]],
    synopsis: "[--profile quick|paper|tiny] [--data DIR] [--out DIR] [--resume] [options]",
    help: "Trains Pos2Vec (stacked autoencoders), the DeepChess Siamese comparator, the distilled\n\
         nets (the paper's and the compact one), the compact net's value student (beyond the\n\
         paper) and the small net from scratch, checkpointing every epoch. Phase searched (not\n\
         among the defaults; --phases searched) teaches the value student its own depth-8\n\
         search's values (about 11 min of searches on 2 cores, kept in searched-labels.dcsl as\n\
         they are searched); --searched-rounds N repeats it with each round's net searching.\n\
         Writes log.csv, curves.svg and results.md (accuracy on held-out games) into the run\n\
         folder.\n\
         \n\
         The run's settings are recorded in its folder (run.txt). --resume refuses to continue\n\
         with a different profile, dataset content, seed, --max-positions, --no-mirror,\n\
         --siamese-epochs, --distill-epochs, --epochs-cap, --distill-arch, --value-arch, --compact-aux or --precision. --threads and\n\
         --phases may change between invocations, and --data may name a moved copy of the\n\
         same dataset files.",
    flags: FLAGS,
    run: driver::run::<Recipe>,
    smoke: driver::smoke::<Recipe>,
};

const FLAGS: &[Flag] = &[
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, ~8 min on 2 cores) | paper (the paper's schedule) | memorise (the paper's regime on a small corpus: training accuracy past 97 %) | curve | tiny (seconds)" },
    Flag { name: "data", value: Some("DIR"), help: "dataset folder with train.dcds and valid.dcds (default runs/dataset)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder: nets, checkpoint, log.csv, curves.svg (default runs/PROFILE)" },
    Flag { name: "phases", value: Some("LIST"), help: "comma list of pos2vec,siamese,distill,compact,value,searched,scratch (default all but searched; value: the compact net's value student, searched: that student taught by its own depth-8 search, about 11 min more; both beyond the paper)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of initialisation and sampling (default 1)" },
    Flag { name: "resume", value: None, help: "continue an interrupted run in --out from its last checkpoint (same settings; see above)" },
    Flag { name: "threads", value: Some("N"), help: "threads for the numeric kernels (default 2)" },
    Flag { name: "max-positions", value: Some("N"), help: "use at most N training positions per class (data-size curves)" },
    Flag { name: "no-mirror", value: None, help: "no colour-mirror augmentation even if the profile uses it" },
    Flag { name: "siamese-epochs", value: Some("N"), help: "epochs of the DeepChess (Siamese) phase instead of the profile's" },
    Flag { name: "distill-arch", value: Some("ARCH"), help: "the distilled net's layers, e.g. 773-32-32-32/32-32-2 (default the paper's 773-100-100-100/100-100-2)" },
    Flag { name: "compact-aux", value: Some("SPEC"), help: "beyond the paper: mix same-game and material pairs into the compact phase, e.g. progress=0.3,gap=8,material=0.1 (default none)" },
    Flag { name: "pos2vec-subset", value: Some("N"), help: "Pos2Vec on a fixed subset of N won-game and N lost-game positions drawn once (the paper's, N = 1,000,000: the paper profile's default); 0: fresh draws each epoch in proportion to the pools (the other profiles')" },
    Flag { name: "epochs-cap", value: Some("N"), help: "at most N epochs in every stage (a timing run: --profile paper --epochs-cap 1 measures an epoch of each phase)" },
    Flag { name: "distill-epochs", value: Some("N"), help: "epochs of the distillation's pair phase instead of the profile's" },
    Flag { name: "value-arch", value: Some("ARCH"), help: "the value student's layers, kept by the searched rounds, e.g. 773-64-32-1 (default 773-32-32-1, the compact net's tower, which it starts from)" },
    Flag { name: "searched-rounds", value: Some("N"), help: "rounds of the searched phase (default 1): round k learns the searches of round k-1's net, value-searched-k.dcw; more rounds continue a run" },
    Flag { name: "searched-depth", value: Some("N"), help: "plies of each searched phase's search (default 8; tiny 2)" },
    Flag { name: "searched-lambda", value: Some("L"), help: "weight of the search's value in each searched target, the rest the game's result (default 1: the search alone; 0 < L <= 1)" },
    Flag { name: "searched-positions", value: Some("N"), help: "positions each round of the searched phase searches (default 200000; tiny 64)" },
    Flag { name: "precision", value: Some("P"), help: "f32 (default) or bf16: the training products' operands in bf16, sums and weights in f32 (mixed precision; faster than f32 on AMX tiles and on Zen 4's AVX-512 BF16, slower with AVX-512 BF16 alone on Intel: docs/benchmarks.md)" },
];

/// DeepChess's part of `deepchess train` (the steps are `train::driver`'s).
pub struct Recipe;

/// The profile with the flags' overrides, and what else the flags chose.
pub struct Setup {
    pub prof: Profile,
    pub phases: Phases,
    pub max_positions: Option<usize>,
    pub data: PathBuf,
    pub precision: Precision,
}

/// The dataset's pools: training (and, for the searched phase, as played), validation, and
/// the position split's second validation set when the dataset has one.
pub struct Inputs {
    train: Pools,
    unmirrored: Option<Pools>,
    valid: Pools,
    positions: Option<Pools>,
    split: String,
    /// The protocol valid.dcds records, and the training set's source.
    protocol: Option<String>,
    source: String,
}

impl driver::Recipe for Recipe {
    const NAME: &'static str = "deepchess";
    const DEFAULT_PROFILE: &'static str = "quick";
    const OUT_PREFIX: &'static str = "runs/";
    const THREADS: Threads = Threads::Kernels { default: 2, min: 1 };
    const SMOKE: &'static [&'static str] = &["--profile", "tiny", "--threads", "1"];
    type Profile = Profile;
    type Setup = Setup;
    type Inputs = Inputs;
    type Outcome = Vec<Trained>;

    const PROFILES: &'static [(&'static str, fn() -> Profile)] = PROFILES;

    fn setup(cli: &TrainCli, prof: Profile) -> Result<Setup, CliError> {
        let p = cli.p;
        let prof = overrides(cli, prof)?;
        let phases = match p.get("phases") {
            Some(s) => Phases::parse(s).ok_or_else(|| cli.usage(format!("bad --phases '{s}'")))?,
            None => Phases::ALL,
        };
        let max_positions = cli.max_positions()?;
        let data = PathBuf::from(p.get("data").unwrap_or("runs/dataset"));
        let name = p.get("precision").unwrap_or("f32");
        let precision = Precision::parse(name).ok_or_else(|| cli.usage(format!("--precision takes f32 or bf16, not '{name}'")))?;
        Ok(Setup { prof: prof.with_precision(precision), phases, max_positions, data, precision })
    }

    fn settings(setup: &Setup, s: &mut RunSettings) -> Result<(), CliError> {
        run_settings(s, &setup.prof, &setup.data, setup.max_positions, setup.precision)
    }

    fn load(setup: &Setup, run: &Run) -> Result<Inputs, CliError> {
        let (prof, data, max_positions) = (&setup.prof, &setup.data, setup.max_positions);
        let (mut train, tds) = load_pools(data, "train.dcds", prof.mirror).map_err(CliError::Failed)?;
        if let Some(n) = max_positions {
            train.truncate(n);
        }
        // The searched phase searches positions as played, without the mirrored twins.
        let unmirrored = if prof.mirror && setup.phases.searched {
            let (mut g, _) = load_pools(data, "train.dcds", false).map_err(CliError::Failed)?;
            if let Some(n) = max_positions {
                g.truncate(n);
            }
            Some(g)
        } else {
            None
        };
        let (valid, vds) = load_pools(data, "valid.dcds", false).map_err(CliError::Failed)?;
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
            "profile {}: {} W + {} L training positions{}, {} W + {} L validation positions (held-out games)",
            run.profile,
            train.w.len(),
            train.l.len(),
            if prof.mirror { " (with mirrored twins)" } else { "" },
            valid.w.len(),
            valid.l.len()
        );
        let protocol = vds.meta("protocol").map(String::from);
        let source = tds.meta("source").unwrap_or("?").to_string();
        Ok(Inputs { train, unmirrored, valid, positions, split, protocol, source })
    }

    fn train(setup: &Setup, inputs: &Inputs, r: &Run) -> Result<Vec<Trained>, CliError> {
        let (prof, train) = (&setup.prof, &inputs.train);
        let mut meta = vec![
            ("profile".to_string(), r.profile.clone()),
            ("data".to_string(), setup.data.display().to_string()),
            ("data_source".to_string(), inputs.source.clone()),
            ("split".to_string(), inputs.split.clone()),
            ("mirror".to_string(), prof.mirror.to_string()),
            ("train_positions".to_string(), format!("{} W + {} L", train.w.len(), train.l.len())),
        ];
        if !prof.compact_aux.is_none() {
            let a = prof.compact_aux;
            meta.push(("compact_aux".to_string(), format!("progress={},gap={},material={}", a.progress, a.gap, a.material)));
        }
        let mut ctx = Ctx::new(&r.out, r.seed, r.resume, meta).map_err(CliError::Failed)?;
        run(&mut ctx, prof, setup.phases, train, inputs.unmirrored.as_ref().unwrap_or(train), &inputs.valid, inputs.positions.as_ref()).map_err(CliError::Failed)
    }

    fn results(setup: &Setup, inputs: &Inputs, trained: &Vec<Trained>, run: &Run) -> Result<String, CliError> {
        let (prof, train, valid) = (&setup.prof, &inputs.train, &inputs.valid);
        let mut md = format!(
            "# Training run `{}`\n\nProfile `{}`, seed {}{}, data `{}` ({} W + {} L training positions{}).\n\
             Accuracy = fraction of random (W, L) pairs of the **validation set** ordered correctly;\n\
             validation = {}; {} W + {} L validation positions.\n\n",
            run.out.display(),
            run.profile,
            run.seed,
            if setup.precision == Precision::Bf16 {
                format!(", products in bf16 (f32 sums and weights; {})", crate::tensor::kernels::gemm::bf16_path(crate::tensor::active_kernel()))
            } else {
                String::new()
            },
            setup.data.display(),
            train.w.len(),
            train.l.len(),
            if prof.mirror { ", with mirrored twins" } else { "" },
            inputs.split,
            valid.w.len(),
            valid.l.len()
        );
        // Every accuracy column names its protocol.
        let protocol = match inputs.protocol.as_deref() {
            Some("positions") => "position split",
            _ => "game split",
        };
        let pct = |x: f64| format!("{:.2} %", 100.0 * x);
        if inputs.positions.is_some() {
            md.push_str(&format!("| network | layers | validation [{protocol}] | validation [position split] ({VALID_POSITIONS}) | training positions |\n|---|---|---|---|---|\n"));
        } else {
            md.push_str(&format!("| network | layers | validation pair accuracy [{protocol}] | training positions |\n|---|---|---|---|\n"));
        }
        for r in trained {
            let pos = r.positions.map_or(String::new(), |p| format!(" {} |", pct(p)));
            md.push_str(&format!("| {} | {} | {} |{pos} {} |\n", r.name, r.arch, pct(r.valid), pct(r.train)));
        }
        md.push_str(&format!("\nWall time of this invocation: {:.1} min.\n", run.minutes()));
        Ok(md)
    }

    /// The smoke games as `deepchess data --per-game 0 --valid-per-mille 200` makes them:
    /// every quiet position, a fifth of the games held out.
    fn smoke_inputs(dir: &Path) -> Result<Vec<String>, String> {
        let mut s = BuildSettings::default();
        s.sampling.per_game = 0;
        s.valid_per_mille = 200;
        let built = build_sets(&[driver::smoke_games().display().to_string()], &s, |_| {}, |_| {})?;
        let ds = dir.join("ds");
        save_sets(&ds, built)?;
        Ok(vec!["--data".into(), ds.display().to_string()])
    }
}

/// What defines a run, written to `run.txt` when it starts and compared on `--resume`.
/// Left out on purpose, because they may change between invocations: `--threads` (it does
/// not change what is computed), `--phases` (each phase's net depends only on earlier ones)
/// and `--out` (the run folder itself).
fn run_settings(s: &mut RunSettings, prof: &Profile, data: &Path, max_positions: Option<usize>, precision: Precision) -> Result<(), CliError> {
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
    let stages: [(&str, &StageCfg, &str); 9] = [
        ("pos2vec", &prof.pos2vec, ""),
        ("siamese", &prof.siamese, "--siamese-epochs, "),
        ("distill_tower", &prof.distill_tower, ""),
        ("distill_full", &prof.distill_full, "--distill-epochs, "),
        ("compact", &prof.compact, ""),
        ("value", &prof.value, ""),
        ("searched", &prof.searched, ""),
        ("scratch_pos2vec", &prof.scratch_pos2vec, ""),
        ("scratch_siamese", &prof.scratch_siamese, ""),
    ];
    for (name, c, flag) in stages {
        s.add(&format!("{name}.epochs"), c.epochs, &format!("{name} epochs ({flag}--epochs-cap or the profile)"), Kind::FromProfile);
        let rest = format!("samples {}, batch {}, {}", c.samples, c.batch, c.opt.describe());
        s.add(name, rest, &format!("{name} schedule (the profile)"), Kind::FromProfile);
    }
    s.add("searched_positions", prof.searched_positions, "--searched-positions (or the profile)", Kind::FromProfile);
    s.add("searched_depth", prof.searched_depth, "--searched-depth (or the profile)", Kind::FromProfile);
    s.add("searched_lambda", prof.searched_lambda, "--searched-lambda (or the profile)", Kind::FromProfile);
    // More rounds continue a run: each round's net depends only on the earlier ones.
    s.add("searched_rounds", prof.searched_rounds, "--searched-rounds", Kind::Note);
    s.add("distill_arch", prof.distill_arch.describe(), "--distill-arch", Kind::FromProfile);
    s.add("value_arch", prof.value_arch.describe(), "--value-arch", Kind::FromProfile);
    let a = prof.compact_aux;
    let aux = if a.is_none() { "none".to_string() } else { format!("progress={},gap={},material={}", a.progress, a.gap, a.material) };
    s.add("compact_aux", aux, "--compact-aux", Kind::FromProfile);
    s.add("pos2vec_subset", prof.pos2vec_subset.map_or("fresh draws".to_string(), |n| format!("{n} a class, fixed")), "--pos2vec-subset", Kind::FromProfile);
    Ok(())
}
