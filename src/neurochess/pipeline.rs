//! The seed's experiment, training side: the chess model M on expert games, then V from the
//! same seed twice, by plain back-propagation (`bp/`) and by EBNN (`ebnn/`), each saving a
//! snapshot after every batch of games: the points of Table 1's learning curves, which
//! `deepchess match --curve` plays against GNU Chess and our handcrafted evaluator
//! (`make train-neurochess` runs both halves).
//!
//! Run folder: `model/` (M's `m.dcw`, log, curves), `bp/` and `ebnn/` (each `v.dcw`, `log.csv`,
//! `curves.svg`, `snapshots/v-GAMES.dcw`, the checkpoint), `snapshots.txt` (one line per
//! snapshot there: variant, games, file), `results.md`. A finished net is loaded, not trained
//! again, so `--resume` continues where a run stopped; [`super::resume`] checks every part it
//! takes up against the run first.

use super::data::{pairs, read_games, split, Expert, Line, Pairs, HELD_OUT_PER_MILLE};
use super::model::{FeatureSet, Model, Value, MAX_HIDDEN};
use super::resume::{self, Parts};
use super::train::{group_errors, model_error, train_model, ModelCfg, Td, TdCfg, GAMMA};
pub use super::train::Variant;
use crate::io::args::{CliError, Flag};
use crate::tensor::Rng;
use crate::train::checkpoint::OptCfg;
use crate::train::episode::{EpisodeCfg, Exploration, Opening};
use crate::train::settings::{Kind, RunSettings};
use crate::train::stage::Ctx;
use crate::train::driver;
use crate::train::run::{Run, Threads, TrainCli};
use crate::train::system::System;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use crate::tensor::NetFile;

/// A schedule and the nets' sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    /// The board features V and M see (ours, or GNU Chess's terms).
    pub features: FeatureSet,
    /// M's training pairs (a seeded sample of the expert games' boards) and schedule.
    pub model_pairs: usize,
    pub model: ModelCfg,
    /// M predicts the change, `M(x) = x + f(x)` (beyond the seed: `--model residual`).
    pub residual_model: bool,
    /// The share of M's pairs also taken with one piece that neither move touches off both
    /// boards (beyond the seed: `--model-counterfactual`, [`super::data::pairs_with`]).
    pub model_counterfactual: f64,
    /// Feature groups whose features get no EBNN slope (`--slopes-off`, beyond the seed).
    pub slopes_off: Vec<&'static str>,
    /// V's hidden units (the seed's Table 1: 80).
    pub hidden: usize,
    pub td: TdCfg,
    /// Batches of games, games per batch (a snapshot after each batch).
    pub batches: usize,
    pub games_per_batch: usize,
    pub max_plies: usize,
    /// The expert prefix is at least this share of its game (uniform from there to the end).
    pub expert_low: f64,
    pub lr: f32,
}

/// The profiles `--profile` takes, in the order help lists them.
pub const PROFILES: &[(&str, fn() -> Profile)] = &[("quick", Profile::quick), ("paper", Profile::paper), ("tiny", Profile::tiny)];

impl Profile {
    /// Table 1's horizon (2,400 training games in batches of 100), V with 80 hidden units,
    /// self-play at depth 2; M on 600,000 pairs.
    pub fn quick() -> Profile {
        Profile {
            name: "quick",
            // The seed's Table 1: "both learners used the original GNU-Chess features".
            features: FeatureSet::Gnu,
            model_pairs: 600_000,
            model: ModelCfg { epochs: 6, batch: 256, lr: 1e-3 },
            residual_model: false,
            model_counterfactual: 0.0,
            slopes_off: Vec::new(),
            hidden: MAX_HIDDEN,
            td: TdCfg { gamma: GAMMA, final_weight: 20.0, final_both: false, quiet_both: false, slope_weight: 0.1, reliability: false, slope_logit: false, batch: 32, passes: 4, depth: 2 },
            batches: 24,
            games_per_batch: 100,
            max_plies: 400,
            expert_low: 0.8,
            lr: 0.01,
        }
    }

    /// As quick, M on 2,000,000 pairs for 10 epochs.
    pub fn paper() -> Profile {
        Profile { name: "paper", model_pairs: 2_000_000, model: ModelCfg { epochs: 10, batch: 256, lr: 1e-3 }, ..Profile::quick() }
    }

    /// Seconds: for tests.
    pub fn tiny() -> Profile {
        Profile {
            name: "tiny",
            model_pairs: 3000,
            model: ModelCfg { epochs: 1, batch: 64, lr: 1e-3 },
            hidden: 8,
            td: TdCfg { depth: 1, ..Profile::quick().td },
            batches: 2,
            games_per_batch: 4,
            max_plies: 120,
            ..Profile::quick()
        }
    }

    /// Per feature, its slope's weight: 0 in the groups of `slopes_off`, else 1 (`None` when
    /// no group is named, so the constant-λ run is the same arithmetic as before).
    pub fn slope_features(&self) -> Option<Vec<f32>> {
        if self.slopes_off.is_empty() {
            return None;
        }
        let mut w = vec![1.0f32; self.features.width()];
        for (name, idx) in self.features.groups() {
            if self.slopes_off.contains(&name) {
                idx.into_iter().for_each(|i| w[i] = 0.0);
            }
        }
        Some(w)
    }

    /// One line for results (and `run.txt`'s schedule): M's schedule, then V's.
    pub fn describe(&self) -> String {
        format!("{}; {}", self.describe_model(), self.describe_value())
    }

    /// What M's training is a function of, beside the seed and the expert games.
    pub fn describe_model(&self) -> String {
        let on = if self.features == FeatureSet::Ours { String::new() } else { format!(", on the {} features", self.features.name()) };
        let change = if self.residual_model { ", predicting the change (M(x) = x + f(x))" } else { "" };
        let cf = if self.model_counterfactual > 0.0 { format!(", each with probability {} also with one untouched piece off both boards", self.model_counterfactual) } else { String::new() };
        format!("M on {} pairs ({} epochs, batch {}, Adam {}){on}{change}{cf}", self.model_pairs, self.model.epochs, self.model.batch, self.model.lr)
    }

    /// What V's training is, beside the seed, the expert games, the variant and (EBNN) M.
    pub fn describe_value(&self) -> String {
        format!(
            "V {}-{}-1, {} games ({} batches of {}), self-play depth {}, γ {}, final boards ×{}, slope weight λ {}, SGD lr {} momentum 0.9 on batches of {} boards ({} passes a batch), expert prefix ≥ {:.0} % of its game, games cut at {} plies",
            self.features.tag(),
            self.hidden,
            self.batches * self.games_per_batch,
            self.batches,
            self.games_per_batch,
            self.td.depth,
            self.td.gamma,
            self.td.final_weight,
            self.td.slope_weight,
            self.lr,
            self.td.batch,
            self.td.passes,
            100.0 * self.expert_low,
            self.max_plies
        ) + if self.td.reliability { ", each slope weighted by M's reliability on its transition" } else { "" }
            + if self.td.final_both { ", the result also on the board before the final one" } else { "" }
            + if self.td.quiet_both { ", boards quiescent for both sides" } else { "" }
            + if self.td.slope_logit { ", slopes carried in V's logit" } else { "" }
            + &if self.slopes_off.is_empty() { String::new() } else { format!(", no slopes on {}", self.slopes_off.join(", ")) }
    }
}

/// What one run produced.
pub struct Trained {
    pub model_file: PathBuf,
    /// M's mean squared error per feature on held-out games, and the copy prediction's.
    pub model_error: (f64, f64),
    pub groups: Vec<super::train::GroupError>,
    pub valid_pairs: usize,
    pub variants: Vec<(Variant, PathBuf)>,
    /// Snapshots not in `snapshots.txt`: missing, or not loading.
    pub left_out: Vec<PathBuf>,
    /// V's material sense per snapshot: (variant, training games, figures), on
    /// [`MATERIAL_PAIRS`] pairs of the held-out games.
    pub material: Vec<(Variant, usize, super::material::Sense)>,
}

/// The material pairs of the figures: how many, and their seed (fixed, so every run is read on
/// the same pairs of the same held-out games).
pub const MATERIAL_PAIRS: (usize, u64) = (500, 0x4D41);

/// Trains (or loads) M, then V for each of `variants`, in `out`. `meta` goes into every
/// file's header (the profile, the seed, the expert games as `run.txt` records them), with
/// what each part belongs to ([`Parts`]); every part already in `out` is checked first.
pub fn run(out: &Path, prof: &Profile, expert: &Expert, variants: &[Variant], seed: u64, resume: bool, threads: usize, meta: &[(String, String)]) -> Result<Trained, String> {
    let expert_key = meta.iter().find(|(k, _)| k == "expert").map(|(_, v)| v.as_str());
    let schedule = resume::Schedule { batches: prof.batches, games_per_batch: prof.games_per_batch, model: prof.describe_model(), value: prof.describe_value() };
    let parts = Parts::new(&schedule, seed, expert_key, variants);
    let found = resume::survey(out, &schedule, variants, &parts, resume)?;
    let valid_refs: Vec<&Line> = expert.valid.iter().collect();
    let valid = pairs(prof.features, &valid_refs, (prof.model_pairs / 10).max(1000), seed ^ 2);
    let model_dir = out.join("model");
    let model_file = model_dir.join("m.dcw");
    let model = match found.model {
        Some(m) => m,
        None => {
            let mmeta = parts.model.header(meta);
            let train_refs: Vec<&Line> = expert.train.iter().collect();
            let t = Instant::now();
            let train: Pairs = super::data::pairs_with(prof.features, &train_refs, prof.model_pairs, seed ^ 1, prof.model_counterfactual);
            let mut m = Model::with_features(prof.features, &mut Rng::new(seed ^ 0x40DE1)).residual(prof.residual_model);
            eprintln!("== chess model M {} on {} pairs of {} expert games ({} held-out pairs, {:.1}s to build)", m.describe(), train.len(), train.games, valid.len(), t.elapsed().as_secs_f64());
            let mut ctx = Ctx::new(&model_dir, seed, resume, mmeta.clone())?;
            train_model(&mut ctx, &mut m, &train, &valid, &prof.model)?;
            m.save(&model_file, &mmeta).map_err(|e| e.to_string())?;
            m
        }
    };
    let model_error = model_error(&model, &valid);
    let groups = group_errors(&model, &valid);
    eprintln!("   M on held-out games: {:.5} mean squared error per feature (copying s_t: {:.5})", model_error.0, model_error.1);
    let model = Arc::new(model);
    let lines: Arc<Vec<Line>> = Arc::new(expert.train.clone());
    let mut done = Vec::new();
    for &variant in variants {
        let dir = out.join(variant.name());
        let file = dir.join("v.dcw");
        if !found.done.contains(&variant) {
            let snaps = dir.join("snapshots");
            std::fs::create_dir_all(&snaps).map_err(|e| format!("cannot create {}: {e}", snaps.display()))?;
            let vmeta = parts.value(variant).header(meta);
            let mut ctx = Ctx::new(&dir, seed, resume, vmeta.clone())?;
            eprintln!("== V {} by {} over {} games", Value::with_features(prof.features, prof.hidden, &mut Rng::new(0)).describe(), if variant == Variant::Ebnn { "TD(0) + EBNN slopes (Tangent-Prop)" } else { "TD(0), plain back-propagation" }, prof.batches * prof.games_per_batch);
            // The same initial V and the same game streams for both variants.
            let v = Value::with_features(prof.features, prof.hidden, &mut Rng::new(seed ^ 0x7D0));
            let mut params = v.params.clone();
            let mut td = Td {
                cfg: prof.td,
                template: v,
                model: (variant == Variant::Ebnn).then(|| model.clone()),
                model_error: model_error.0 as f32,
                slope_features: prof.slope_features(),
                snapshots: Some((snaps, prof.games_per_batch, vmeta.clone())),
            };
            let cfg = EpisodeCfg {
                batches: prof.batches,
                games_per_batch: prof.games_per_batch,
                max_plies: prof.max_plies,
                opening: Opening::Lines(lines.clone(), prof.expert_low),
                exploration: Exploration { start: 0.0, end: 0.0, over: 0 },
                opt: OptCfg::Sgd { lr: prof.lr, decay: 1.0, momentum: 0.9 },
                rule_draws: true,
                king_capture: false,
            };
            ctx.run_episodes("v", &mut params, &cfg, threads, &mut td)?;
            let trained = Value { params, ..td.template };
            trained.save(&file, &vmeta).map_err(|e| e.to_string())?;
        }
        done.push((variant, file));
    }
    // The curve's points, for `deepchess match --curve`.
    let (list, left_out) = resume::snapshot_list(out, &schedule, variants);
    crate::io::write_atomic(&out.join("snapshots.txt"), list.as_bytes()).map_err(|e| format!("writing snapshots.txt: {e}"))?;
    let pairs = super::material::pairs(&expert.valid, MATERIAL_PAIRS.0, MATERIAL_PAIRS.1);
    let mut material = Vec::new();
    for &variant in variants {
        for b in 1..=prof.batches {
            let games = b * prof.games_per_batch;
            let file = out.join(variant.name()).join("snapshots").join(super::train::snapshot_name(games));
            if let Ok((v, _)) = Value::load(&file) {
                material.push((variant, games, super::material::sense(&v, &pairs)));
            }
        }
    }
    Ok(Trained { model_file, model_error, groups, valid_pairs: valid.len(), variants: done, left_out, material })
}

/// The results (markdown): M's error per feature group against copying the board, and the
/// nets written.
pub fn results(t: &Trained) -> String {
    let mut s = format!(
        "## The chess model M\n\n`{}`: on {} pairs of held-out expert games, {:.5} mean squared error per feature, against {:.5} for copying s_t ({:.1} % of it).\n\n\
         | feature group | features | M | copying s_t | M / copy |\n|---|---:|---:|---:|---:|\n",
        t.model_file.display(),
        t.valid_pairs,
        t.model_error.0,
        t.model_error.1,
        100.0 * t.model_error.0 / t.model_error.1.max(1e-12)
    );
    for g in &t.groups {
        let _ = writeln!(s, "| {} | {} | {:.5} | {:.5} | {:.2} |", g.name, g.features, g.model, g.copy, g.model / g.copy.max(1e-12));
    }
    s.push_str("\n## V\n\n");
    for (v, f) in &t.variants {
        let _ = writeln!(s, "- {}: `{}` (curves: `{}`)", v.name(), f.display(), f.with_file_name("curves.svg").display());
    }
    if !t.material.is_empty() {
        s.push_str("\n## V's material sense\n\nV's static value in centipawns (the search's scale) on the start and on the start with White a piece up or down (that piece taken from the other side, or from White), and the share of 500 material pairs of held-out expert games (a board beside itself with one piece of a side taken off) in which V prefers the side keeping its piece; the move's worth is the mean over those pairs' full boards of V with White to move minus V with Black to move (White's view; a value that counts the move against its owner makes the search's stand-pats pessimistic).\n\n| variant | games | start | queen up / down | rook up / down | knight up / down | pawn up / down | pairs ordered right | the move's worth |\n|---|---:|---:|---|---|---|---|---:|---:|\n");
        for (v, games, m) in &t.material {
            let ud: Vec<String> = m.up_down.iter().map(|(u, d)| format!("{u:.0} / {d:.0}")).collect();
            let _ = writeln!(s, "| {} | {} | {:.0} | {} | {:.1} % | {:.0} |", v.name(), games, m.start, ud.join(" | "), 100.0 * m.ordered, m.tempo);
        }
    }
    if !t.left_out.is_empty() {
        let files: Vec<String> = t.left_out.iter().map(|f| format!("`{}`", f.display())).collect();
        let _ = writeln!(s, "\nLeft out of `snapshots.txt` (missing, or not loading): {}.", files.join(", "));
    }
    s
}

// ---------------------------------------------------------------- the command line

/// `deepchess train --system neurochess` (src/players.rs, `SYSTEMS`).
pub const SYSTEM: System = System {
    name: "neurochess",
    seed: "seed 004: NeuroChess, TD(0) with explanation-based slopes (NIPS 7, 1995)",
    about: "the chess model M on expert games, then V by TD(0) with and without EBNN slopes, a snapshot per batch for Table 1",
    colour: "#d62728",
    commands: &[super::bench::COMMAND, super::slopes::COMMAND],
    bench_tensor: &[],
    gemm_layers: &[],
    checkpoint_variants: &[&["--features", "ours", "--slopes", "reliability"], &["--hidden", "0", "--variants", "bp"]],
    synopsis: "[--profile quick|paper|tiny] [--expert FILE ...] [--out DIR] [--resume] [options]",
    help: "Trains seed 004's chess model M (gnu58-165-gnu58: GNU Chess's evaluation terms of the\n\
         board two plies later, the seed's features; 175-165-175 on ours with --features ours) on\n\
         expert games, then the evaluation net V (gnu58-H-1 or 175-H-1, tanh) by TD(0) over games that\n\
         start from a random-length prefix of an expert game and are completed by self-play\n\
         with V in our search: targets gamma*V(s_t+2), the result on final boards (weighted x20),\n\
         quiescent boards only; once by plain back-propagation (bp/) and once with EBNN's slopes\n\
         gamma*dV(s_t+2)/ds_t+2 * dM(s_t)/ds_t fitted by Tangent-Prop (ebnn/), from the same seed.\n\
         Writes M, each V with a snapshot after every batch (snapshots.txt lists them for\n\
         'deepchess match --curve'), log.csv and curves.svg per net, and results.md.",
    flags: FLAGS,
    run: driver::run::<Recipe>,
    smoke: driver::smoke::<Recipe>,
};

/// The expert games read when none are given: the shipped Stockfish 15.1 games.
pub const DEFAULT_EXPERT: &[&str] = &[
    "data/sf15-selfplay-1.pgn.xz",
    "data/sf15-selfplay-2.pgn.xz",
    "data/datagen/sf15-datagen-1.pgn.xz",
    "data/datagen/sf15-datagen-2.pgn.xz",
    "data/datagen/sf15-datagen-3.pgn.xz",
];

const FLAGS: &[Flag] = &[
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, Table 1's 2,400 games per variant) | paper (M on 2M pairs) | tiny (seconds)" },
    Flag { name: "expert", value: Some("FILE"), help: "PGN of expert games (.xz read through xz); repeatable (default: the shipped Stockfish 15.1 games)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder (default runs/neurochess-PROFILE)" },
    Flag { name: "variants", value: Some("LIST"), help: "comma list of bp (plain back-propagation), ebnn (default bp,ebnn)" },
    Flag { name: "games", value: Some("N"), help: "training games per variant instead of the profile's (a multiple of --per-batch)" },
    Flag { name: "per-batch", value: Some("N"), help: "games per batch, one snapshot each (default 100)" },
    Flag { name: "hidden", value: Some("N"), help: "V's hidden units, 0 to 80 (default 80, Table 1's)" },
    Flag { name: "depth", value: Some("N"), help: "self-play search depth (default 2)" },
    Flag { name: "slope-weight", value: Some("X"), help: "Tangent-Prop's weight λ of the slope term (default 0.1; the seed gives none)" },
    Flag { name: "features", value: Some("SET"), help: "the board features V and M see: gnu (GNU Chess's evaluation terms, eval::gnu: the seed's 'original GNU-Chess features', the default) or ours (175)" },
    Flag { name: "model", value: Some("FORM"), help: "M's form: plain (the seed's, the default) or residual (M predicts the change, M(x) = x + f(x): its Jacobian holds the identity, so a feature that persists keeps its slope; beyond the seed)" },
    Flag { name: "model-counterfactual", value: Some("SHARE"), help: "0 to 1: that share of M's pairs is also taken with one piece that neither move touches off both boards, so M sees material change while the rest of the board stays (default 0, the seed's; beyond the seed)" },
    Flag { name: "slopes-off", value: Some("GROUP"), help: "no EBNN slope on this feature group's features (a name of M's error table, e.g. material; repeatable; beyond the seed)" },
    Flag { name: "slopes", value: Some("W"), help: "constant (λ for every slope, the default) or reliability (λ times M's reliability on the slope's own transition, as the seed cites)" },
    Flag { name: "slope-space", value: Some("S"), help: "value (the seed's: EBNN's slope is V's own, γ·∇V(s_t+2)·∂M/∂s_t) or logit (the slope of V's logit before its tanh, through M, taken at V(s_t)'s level: a slope taken nearer a result no longer asks for a flatter V; beyond the seed)" },
    Flag { name: "expert-low", value: Some("X"), help: "the expert prefix is at least this share of its game, 0 to 1 (default 0.8)" },
    Flag { name: "lr", value: Some("X"), help: "V's learning rate (default 0.01)" },
    Flag { name: "passes", value: Some("N"), help: "passes over each batch's boards (default 4)" },
    Flag { name: "final-weight", value: Some("X"), help: "weight of a game's final board, trained on the result (default 20)" },
    Flag { name: "final-boards", value: Some("WHICH"), help: "last (the seed's: the final board alone, always the loser to move in a decisive game) or both (the board before it too, the winner to move; beyond the seed)" },
    Flag { name: "quiescent", value: Some("WHOM"), help: "mover (V trains on boards where the side to move cannot win material by a capture) or both (nor could the other side: the seed's quiescence \"detects material threats\"; beyond our first reading)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of initialisation and sampling (default 1)" },
    Flag { name: "resume", value: None, help: "continue the run in --out (same settings)" },
    Flag { name: "threads", value: Some("N"), help: "self-play games at once (default: all cores)" },
];

/// NeuroChess's part of `deepchess train` (the steps are `train::driver`'s).
pub struct Recipe;

/// The profile with the flags' overrides, and what else the flags chose.
pub struct Setup {
    pub prof: Profile,
    pub variants: Vec<Variant>,
    /// The expert games' files.
    pub files: Vec<PathBuf>,
}

/// The expert games, and how many were read.
pub struct Inputs {
    n_games: usize,
    expert: Expert,
}

impl driver::Recipe for Recipe {
    const NAME: &'static str = "neurochess";
    const DEFAULT_PROFILE: &'static str = "quick";
    const OUT_PREFIX: &'static str = "runs/neurochess-";
    const THREADS: Threads = Threads::Games;
    /// M, then V by both variants over two batches of self-play games (an episode stage, its
    /// snapshots written after each batch).
    const SMOKE: &'static [&'static str] = &["--profile", "tiny", "--threads", "2"];
    type Profile = Profile;
    type Setup = Setup;
    type Inputs = Inputs;
    type Outcome = Trained;

    const PROFILES: &'static [(&'static str, fn() -> Profile)] = PROFILES;

    fn setup(cli: &TrainCli, mut prof: Profile) -> Result<Setup, CliError> {
        let p = cli.p;
        cli.episodes(&mut prof.games_per_batch, &mut prof.batches)?;
        cli.set("hidden", &mut prof.hidden, |&h| h <= MAX_HIDDEN, &format!("must be 0 to {MAX_HIDDEN}"))?;
        cli.set("depth", &mut prof.td.depth, |d| (1..=8).contains(d), "must be 1 to 8")?;
        cli.set("slope-weight", &mut prof.td.slope_weight, |&w| (0.0..=1e4).contains(&w), "must be 0 to 10000")?;
        if let Some(f) = p.get("model") {
            prof.residual_model = match f {
                "plain" => false,
                "residual" => true,
                _ => return Err(cli.usage(format!("bad --model '{f}' (plain, residual)"))),
            };
        }
        cli.set("model-counterfactual", &mut prof.model_counterfactual, |x| (0.0..=1.0).contains(x), "must be 0 to 1")?;
        if let Some(f) = p.get("features") {
            prof.features = FeatureSet::parse(f).ok_or_else(|| cli.usage(format!("bad --features '{f}' (ours, gnu)")))?;
        }
        let groups: Vec<&'static str> = prof.features.groups().into_iter().map(|g| g.0).collect();
        for g in p.get_all("slopes-off") {
            let name = groups.iter().find(|n| **n == g).ok_or_else(|| cli.usage(format!("bad --slopes-off '{g}': the {} features' groups are {}", prof.features.name(), groups.join(", "))))?;
            if !prof.slopes_off.contains(name) {
                prof.slopes_off.push(name);
            }
        }
        match p.get("slopes") {
            None | Some("constant") => {}
            Some("reliability") => prof.td.reliability = true,
            Some(w) => return Err(cli.usage(format!("bad --slopes '{w}' (constant, reliability)"))),
        }
        match p.get("slope-space") {
            None | Some("value") => {}
            Some("logit") => prof.td.slope_logit = true,
            Some(w) => return Err(cli.usage(format!("bad --slope-space '{w}' (value, logit)"))),
        }
        cli.set("expert-low", &mut prof.expert_low, |x| (0.0..=1.0).contains(x), "must be 0 to 1")?;
        cli.set("lr", &mut prof.lr, |&lr| lr > 0.0 && lr < 10.0, "must be in (0, 10)")?;
        cli.set("passes", &mut prof.td.passes, |n| (1..=100).contains(n), "must be 1 to 100")?;
        cli.set("final-weight", &mut prof.td.final_weight, |&w| (0.0..=1e4).contains(&w), "must be 0 to 10000")?;
        match p.get("final-boards") {
            None | Some("last") => {}
            Some("both") => prof.td.final_both = true,
            Some(w) => return Err(cli.usage(format!("bad --final-boards '{w}' (last, both)"))),
        }
        match p.get("quiescent") {
            None | Some("mover") => {}
            Some("both") => prof.td.quiet_both = true,
            Some(w) => return Err(cli.usage(format!("bad --quiescent '{w}' (mover, both)"))),
        }
        let variants = p
            .get("variants")
            .unwrap_or("bp,ebnn")
            .split(',')
            .map(|s| Variant::parse(s.trim()).ok_or_else(|| cli.usage(format!("bad --variants entry '{s}' (bp, ebnn)"))))
            .collect::<Result<Vec<_>, _>>()?;
        let given = p.get_all("expert");
        let files: Vec<PathBuf> = if given.is_empty() { DEFAULT_EXPERT.iter().map(PathBuf::from).collect() } else { given.iter().map(PathBuf::from).collect() };
        for f in &files {
            if !f.is_file() {
                return Err(CliError::Failed(format!("{}: expert games not found (give --expert FILE)", f.display())));
            }
        }
        Ok(Setup { prof, variants, files })
    }

    fn settings(setup: &Setup, s: &mut RunSettings) -> Result<(), CliError> {
        run_settings(s, &setup.prof, &setup.files, &setup.variants)
    }

    fn load(setup: &Setup, run: &Run) -> Result<Inputs, CliError> {
        let t = Instant::now();
        let refs: Vec<&Path> = setup.files.iter().map(PathBuf::as_path).collect();
        let games = read_games(&refs).map_err(CliError::Failed)?;
        let n_games = games.len();
        let expert = split(games, HELD_OUT_PER_MILLE, run.seed);
        eprintln!(
            "profile {}: {n_games} expert games in {} file(s): {} for M and V's prefixes, {} held out to measure M ({:.1}s to read)",
            run.profile,
            setup.files.len(),
            expert.train.len(),
            expert.valid.len(),
            t.elapsed().as_secs_f64()
        );
        Ok(Inputs { n_games, expert })
    }

    fn train(setup: &Setup, inputs: &Inputs, r: &Run) -> Result<Trained, CliError> {
        // The expert games as run.txt records them: every part of the run is a function of them.
        let prints = r.setting("expert").unwrap_or_default().to_string();
        let meta = vec![("profile".to_string(), r.profile.clone()), ("seed".to_string(), r.seed.to_string()), ("expert".to_string(), prints)];
        run(&r.out, &setup.prof, &inputs.expert, &setup.variants, r.seed, r.resume, r.threads, &meta).map_err(CliError::Failed)
    }

    fn results(setup: &Setup, inputs: &Inputs, trained: &Trained, run: &Run) -> Result<String, CliError> {
        Ok(format!(
            "# NeuroChess run `{}`\n\nProfile `{}`, seed {}: {}.\nExpert games: {} of {} ({} held out for M's error).\n\n{}\n\
             Table 1 (the snapshots against GNU Chess's evaluation in the same search, the handcrafted validation opponent and GNU Chess 6.2.7): `make neurochess-table1 RUN={}`.\n\n\
             Wall time of this invocation: {:.1} min.\n",
            run.out.display(),
            run.profile,
            run.seed,
            setup.prof.describe(),
            inputs.n_games,
            setup.files.iter().map(|f| format!("`{}`", f.display())).collect::<Vec<_>>().join(", "),
            inputs.expert.valid.len(),
            results(trained),
            run.out.display(),
            run.minutes()
        ))
    }

    /// The smoke games, copied in as the expert games.
    fn smoke_inputs(dir: &Path) -> Result<Vec<String>, String> {
        let path = dir.join("expert.pgn");
        std::fs::copy(driver::smoke_games(), &path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(vec!["--expert".into(), path.display().to_string()])
    }
}

/// What defines a run beside its system, profile and seed (see `train::settings`).
fn run_settings(s: &mut RunSettings, prof: &Profile, files: &[PathBuf], variants: &[Variant]) -> Result<(), CliError> {
    let mut prints = Vec::new();
    for f in files {
        let bytes = crate::io::files::read_regular(f, 1 << 32, "expert games").map_err(|e| CliError::Failed(format!("{}: {e}", f.display())))?;
        let fnv = crate::io::checksum::fnv1a64(&bytes);
        crate::io::provenance::input_hashed(f, bytes.len() as u64, fnv);
        prints.push(format!("{}:{fnv:016x}", f.display()));
    }
    s.add("expert", prints.join(","), "--expert", Kind::Defining);
    s.add("schedule", prof.describe(), "schedule (--profile and its flags)", Kind::FromProfile);
    s.add("variants", variants.iter().map(|v| v.name()).collect::<Vec<_>>().join(","), "--variants", Kind::Defining);
    Ok(())
}
