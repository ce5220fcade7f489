//! Profiles, the run and its results, and the command line (`train --system selfplay`).
//!
//! A run is one episode stage, `q`: batches of games the two agents play each other from the
//! start position (ε-greedy, ε from 1 to 0.05 over the first 1,000 games: the seed's "in the
//! first 1,000 games, the moves made by the agents were completely random"), each batch learnt
//! by Q-learning, a checkpoint after each; every 1,000 games the agents also play a random
//! mover and a one-ply greedy capturer. The agents are written to `agents.dcw`; `results.md`
//! holds the milestone table (per 1,000 games) read back from `log.csv`.

use super::model::{Agents, Arch, Init, Layout};
use super::policy::Compose;
use super::recipe::{Loss, QCfg, Targets, Update};
use super::train::Learner;
use crate::io::args::{CliError, Flag};
use crate::tensor::Rng;
use crate::train::checkpoint::OptCfg;
use crate::train::episode::{EpisodeCfg, Exploration, Opening};
use crate::train::settings::{Kind, RunSettings};
use crate::train::stage::Ctx;
use crate::train::driver;
use crate::train::run::{Run, Threads, TrainCli};
use crate::train::system::System;
use std::path::Path;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// A schedule and the nets' widths.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub arch: Arch,
    pub batches: usize,
    pub games_per_batch: usize,
    /// The seed's code cuts a game at 100 plies, scored a draw.
    pub max_plies: usize,
    /// Exploration falls from 1 to `epsilon` over this many games.
    pub explore_games: usize,
    /// ε of ε-greedy self-play after `explore_games` (0.05).
    pub epsilon: f64,
    pub lr: f32,
    pub init: Init,
    pub q: QCfg,
}

/// The profiles `--profile` takes, in the order help lists them.
pub const PROFILES: &[(&str, fn() -> Profile)] = &[("quick", Profile::quick), ("paper", Profile::paper), ("tiny", Profile::tiny)];

impl Profile {
    /// 10,000 games (the seed's "1,000 – 10,000 games: both agents occasionally try to capture").
    pub fn quick() -> Profile {
        Profile {
            name: "quick",
            arch: Arch::SEED,
            batches: 100,
            games_per_batch: 100,
            max_plies: 100,
            explore_games: 1000,
            epsilon: 0.05,
            lr: 3e-4,
            init: Init::Lecun,
            q: QCfg::seed(),
        }
    }

    /// The seed's 100,000 games.
    pub fn paper() -> Profile {
        Profile { name: "paper", batches: 1000, ..Profile::quick() }
    }

    /// Seconds: for tests.
    pub fn tiny() -> Profile {
        Profile {
            name: "tiny",
            arch: Arch { c1: 4, c2: 8, c3: 4, fc: 8 },
            batches: 3,
            games_per_batch: 4,
            max_plies: 40,
            explore_games: 8,
            q: QCfg { batch: 32, eval_every: 1, eval_games: 4, eval_plies: 40, ..Profile::quick().q },
            ..Profile::quick()
        }
    }

    /// The seed author's published code instead of our recipe: one update per move in the
    /// order the games played them, each by a fresh Adam of rate 0.01, masked targets on all
    /// seven nets; 20 games a batch played by the batch's nets (its 16 workers played at once
    /// on shared nets; 20 divides the 1,000 games between evaluations).
    pub fn author_recipe(&mut self) {
        let (games, period) = (self.games(), self.q.eval_every * self.games_per_batch);
        self.lr = 0.01;
        self.init = Init::Seed;
        self.q.update = Update::PerMove { lr: 0.01 };
        self.q.targets = Targets::Masked;
        self.q.loss = Loss::Squared;
        if self.games_per_batch > 20 {
            self.games_per_batch = 20;
            self.batches = games.div_ceil(20);
            self.q.eval_every = period.div_ceil(20).max(1);
        }
    }

    pub fn games(&self) -> usize {
        self.batches * self.games_per_batch
    }

    /// One line for results.
    pub fn describe(&self) -> String {
        let q = &self.q;
        format!(
            "agents {} ×7 ×2 ({} initialisation); {} games ({} batches of {}), cut at {} plies{}; ε 1 → {} over {} games; {}; {} targets, {}; γ {}, {} for a move that captures nothing, {} for a mate, {} composition; {} games against each baseline every {} games",
            self.arch.describe(),
            self.init.name(),
            self.games(),
            self.batches,
            self.games_per_batch,
            self.max_plies,
            match (q.king_capture, q.rule_draws) {
                (true, _) => ", the seed's environment in self-play (no check: a king left attacked may be taken, 255; no mate, no repetition or fifty-move draws)",
                (false, true) => ", repetition and fifty-move draws",
                (false, false) => ", no repetition or fifty-move draws (as the seed's environment)",
            },
            self.epsilon,
            self.explore_games,
            match q.update {
                Update::Batches => format!("Adam {} on batches of {} moves ({} pass a batch)", self.lr, q.batch, q.passes),
                Update::PerMove { lr } => format!("a fresh Adam {lr} per move, in the order played (the author's code)"),
            },
            q.targets.name(),
            q.loss.name(),
            q.gamma,
            q.no_capture,
            q.mate,
            q.compose.name(),
            q.eval_games,
            q.eval_every * self.games_per_batch
        )
    }

    fn episodes(&self) -> EpisodeCfg {
        EpisodeCfg {
            batches: self.batches,
            games_per_batch: self.games_per_batch,
            max_plies: self.max_plies,
            opening: Opening::Start,
            exploration: Exploration { start: 1.0, end: self.epsilon, over: self.explore_games.div_ceil(self.games_per_batch) },
            opt: OptCfg::Adam { lr: self.lr, decay: 1.0, weight_decay: 0.0 },
            rule_draws: self.q.rule_draws,
            king_capture: self.q.king_capture,
        }
    }
}

/// Trains the agents in `out` (resuming when asked); returns the agents.
pub fn run(out: &Path, prof: &Profile, seed: u64, resume: bool, threads: usize, meta: &[(String, String)]) -> Result<Agents, String> {
    let mut ctx = Ctx::new(out, seed, resume, meta.to_vec())?;
    let init = Agents::with_init(prof.arch, prof.init, &mut Rng::new(seed ^ 0x5E1F_A6E5));
    let mut params = init.params;
    let layout = Layout::of(&params, prof.arch).map_err(|e| e.to_string())?;
    let mut learner = Learner { cfg: prof.q, layout, seed, batch: 0, threads };
    eprintln!("== two agents, 14 nets of {} ({:.2} MFLOP a net and position), {} self-play games", prof.arch.describe(), prof.arch.flops() / 1e6, prof.games());
    ctx.run_episodes("q", &mut params, &prof.episodes(), threads, &mut learner)?;
    let agents = Agents { layout, params };
    let mut m = meta.to_vec();
    m.push(("compose".into(), prof.q.compose.name().into()));
    m.push(("games".into(), prof.games().to_string()));
    agents.save(&out.join("agents.dcw"), &m).map_err(|e| format!("writing agents.dcw: {e}"))?;
    Ok(agents)
}

/// The milestone figures: (name in the log, label, a share?, drawn in the SVG?).
const COLS: [(&str, &str, bool, bool); 15] = [
    ("captures_per_game", "captures / game", false, false),
    ("material_per_game", "material taken / game", false, false),
    ("en_prise_share", "moves leaving a piece en prise", true, true),
    ("mate_share", "games ending in mate (or a king taken)", true, true),
    ("limit_share", "games cut at the limit", true, false),
    ("plies_per_game", "plies / game", false, false),
    ("escape_selfplay", "escapes in self-play", true, true),
    ("escape_selfplay_random", "a random mover there", true, true),
    ("escape_suite", "escapes on the suite", true, true),
    ("vs_random", "score vs random", true, false),
    ("vs_greedy", "score vs greedy capturer", true, false),
    ("material_vs_random", "material won vs random / game", false, false),
    ("material_vs_greedy", "material won vs greedy / game", false, false),
    ("health_min_alive", "smallest live share of a layer", false, false),
    ("health_blind_nets", "position-blind nets", false, false),
];

/// Per evaluation point read from the run's `log.csv`: the games played, and each figure's
/// mean over the batches since the previous point (the scores: at the point).
fn milestone_rows(log: &str, games_per_batch: usize) -> Vec<(usize, [f64; COLS.len()])> {
    let mut rows = Vec::new();
    let mut acc = ([0.0f64; COLS.len()], [0usize; COLS.len()]);
    for line in log.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 4 {
            continue;
        }
        let Some(name) = f[0].strip_prefix("q.") else { continue };
        let (Ok(b), Ok(v)) = (f[1].parse::<usize>(), f[3].parse::<f64>()) else { continue };
        if let Some(k) = COLS.iter().position(|c| c.0 == name) {
            acc.0[k] += v;
            acc.1[k] += 1;
            if name == "vs_greedy" {
                let mut mean = [0.0; COLS.len()];
                for k in 0..COLS.len() {
                    // A figure the run did not log (an older run) is NaN: printed as "–".
                    mean[k] = if acc.1[k] == 0 { f64::NAN } else { acc.0[k] / acc.1[k] as f64 };
                }
                rows.push((b * games_per_batch, mean));
                acc = ([0.0; COLS.len()], [0; COLS.len()]);
            }
        }
    }
    rows
}

/// Whether figure `k` is a share (printed and drawn as a percentage).
fn is_share(k: usize) -> bool {
    COLS[k].2
}

/// The milestone table (Markdown), one row per evaluation point.
pub fn milestones(log: &str, games_per_batch: usize) -> String {
    let mut s = String::from("| games |");
    for (_, label, _, _) in COLS {
        s += &format!(" {label} |");
    }
    s += "\n|---:|";
    s += &"---:|".repeat(COLS.len());
    s.push('\n');
    for (games, v) in milestone_rows(log, games_per_batch) {
        s += &format!("| {games} |");
        for (k, x) in v.iter().enumerate() {
            s += &if x.is_nan() {
                " – |".to_string()
            } else if is_share(k) {
                format!(" {:.1} % |", 100.0 * x)
            } else {
                format!(" {x:.2} |")
            };
        }
        s.push('\n');
    }
    s
}

/// The shares of the milestone table against games played, as an SVG (0–100 %).
pub fn milestones_svg(log: &str, games_per_batch: usize, title: &str) -> String {
    let rows = milestone_rows(log, games_per_batch);
    let (w, h, x0, y0, pw, ph) = (780.0, 380.0, 60.0, 50.0, 480.0, 280.0);
    let max_games = rows.last().map_or(1, |r| r.0).max(1) as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"18\" font-size=\"13\">{}</text>\n<rect x=\"{x0}\" y=\"{y0}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#999\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"end\">100 %</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text><text x=\"{x0}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{max_games} games</text>\n",
        title.replace('&', "&amp;").replace('<', "&lt;"),
        x0 - 4.0,
        y0 + 8.0,
        x0 - 4.0,
        y0 + ph,
        y0 + ph + 14.0,
        x0 + pw,
        y0 + ph + 14.0
    );
    let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
    for (c, k) in (0..COLS.len()).filter(|&k| COLS[k].3).enumerate() {
        let pts: Vec<String> = rows.iter().filter(|(_, v)| !v[k].is_nan()).map(|(g, v)| format!("{:.1},{:.1}", x0 + pw * *g as f64 / max_games, y0 + ph * (1.0 - v[k].clamp(0.0, 1.0)))).collect();
        s += &format!("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", colours[c % colours.len()], pts.join(" "));
        s += &format!("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", x0 + pw + 8.0, y0 + 14.0 * (c as f64 + 1.0), colours[c % colours.len()], COLS[k].1);
    }
    s += "</svg>\n";
    s
}

const FLAGS: &[Flag] = &[
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, 10,000 games) | paper (the seed's 100,000) | tiny (seconds)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder (default runs/selfplay-PROFILE)" },
    Flag { name: "games", value: Some("N"), help: "self-play games instead of the profile's (a multiple of --per-batch)" },
    Flag { name: "per-batch", value: Some("N"), help: "games per batch (default 100)" },
    Flag { name: "recipe", value: Some("NAME"), help: "ours (default: Adam on batches of 256 moves, the chosen outputs taught) | author (the seed author's code: a fresh Adam 0.01 per move in play order, masked targets on all seven nets, 20 games a batch); later flags override" },
    Flag { name: "batch", value: Some("N"), help: "moves per Adam step (default 256)" },
    Flag { name: "passes", value: Some("N"), help: "passes over a batch's moves (default 1)" },
    Flag { name: "loss", value: Some("NAME"), help: "huber (default: the squared error within 10 of the target, linear beyond, so a mate's 255 pulls like 10) | squared (the seed's MSE; the author recipe's) | huber:D (another δ)" },
    Flag { name: "targets", value: Some("RULE"), help: "chosen (ours: the chosen outputs only) | masked (the author's: also every square a net may not choose pulled to 0, on all seven nets)" },
    Flag { name: "lr", value: Some("X"), help: "Adam's learning rate (default 0.0003; the author recipe's 0.01)" },
    Flag { name: "compose", value: Some("RULE"), help: "signed (default, the author's code) | product (the text's)" },
    Flag { name: "init", value: Some("RULE"), help: "lecun (default: every weight U(±1/√fan_in)) | seed (the seed's: convolutions U(±1e-7), U(±1e-6); the author recipe's)" },
    Flag { name: "mate", value: Some("X"), help: "the reward of a mate (default 255, the seed's king)" },
    Flag { name: "epsilon", value: Some("X"), help: "ε of ε-greedy self-play once it has fallen from 1 over the first 1,000 games (default 0.05)" },
    Flag { name: "env", value: Some("NAME"), help: "legal (default: legal chess, a mate worth the king's 255) | seed (the seed's environment in self-play: no check, a king left attacked may be taken, 255; the evaluations stay in legal chess)" },
    Flag { name: "rule-draws", value: None, help: "threefold repetition and the fifty-move rule end games (legal chess; the seed's environment has neither)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of initialisation and play (default 1)" },
    Flag { name: "resume", value: None, help: "continue the run in --out (same settings)" },
    Flag { name: "threads", value: Some("N"), help: "self-play games at once (default: all cores)" },
];

pub const SYSTEM: System = System {
    name: "selfplay",
    seed: "002 (two self-play Q-learning agents)",
    about: "two agents, a piece selector and six move selector CNNs each, learning by Q-learning from games against each other",
    colour: "#9467bd",
    commands: &[super::bench::COMMAND],
    bench_tensor: &[],
    gemm_layers: &[],
    checkpoint_variants: &[&["--recipe", "author", "--env", "seed"]],
    synopsis: "[--profile quick|paper|tiny] [--games N] [--out DIR] [--resume]",
    help: "Trains seed 002's two agents by self-play and Q-learning on the episode stage; reports captures, material, pieces left en prise, how games end and the score against a random mover and a greedy capturer every 1,000 games. The agents play as `qagent`.",
    flags: FLAGS,
    run: driver::run::<Recipe>,
    smoke: driver::smoke::<Recipe>,
};

/// The self-play agents' part of `deepchess train` (the steps are `train::driver`'s).
pub struct Recipe;

impl driver::Recipe for Recipe {
    const NAME: &'static str = "selfplay";
    const DEFAULT_PROFILE: &'static str = "quick";
    const OUT_PREFIX: &'static str = "runs/selfplay-";
    const THREADS: Threads = Threads::Games;
    const SMOKE: &'static [&'static str] = &["--profile", "tiny", "--threads", "2"];
    type Profile = Profile;
    type Setup = Profile;
    /// The agents play from the start position: nothing to load.
    type Inputs = ();
    type Outcome = ();

    const PROFILES: &'static [(&'static str, fn() -> Profile)] = PROFILES;

    fn setup(cli: &TrainCli, mut prof: Profile) -> Result<Profile, CliError> {
        let p = cli.p;
        match p.get("recipe") {
            None | Some("ours") => {}
            Some("author") => prof.author_recipe(),
            Some(r) => return Err(cli.usage(format!("unknown --recipe '{r}' (ours, author)"))),
        }
        cli.episodes(&mut prof.games_per_batch, &mut prof.batches)?;
        cli.set("lr", &mut prof.lr, |&lr| lr > 0.0 && lr < 10.0, "must be in (0, 10)")?;
        if let Update::PerMove { lr } = &mut prof.q.update {
            *lr = prof.lr;
        }
        cli.set("batch", &mut prof.q.batch, |&b| (1..=1 << 20).contains(&b), "must be in 1..=1048576")?;
        cli.set("passes", &mut prof.q.passes, |&n| (1..=100).contains(&n), "must be in 1..=100")?;
        match p.get("loss") {
            None => {}
            Some("squared") => prof.q.loss = Loss::Squared,
            Some("huber") => prof.q.loss = Loss::Huber(10.0),
            Some(l) => match l.strip_prefix("huber:").and_then(|d| d.parse::<f32>().ok()).filter(|d| d.is_finite() && *d > 0.0) {
                Some(d) => prof.q.loss = Loss::Huber(d),
                None => return Err(cli.usage(format!("unknown --loss '{l}' (squared, huber, huber:D with D > 0)"))),
            },
        }
        if let Some(t) = p.get("targets") {
            prof.q.targets = Targets::parse(t).ok_or_else(|| cli.usage(format!("unknown --targets '{t}' (chosen, masked)")))?;
        }
        if let Some(c) = p.get("compose") {
            prof.q.compose = Compose::parse(c).ok_or_else(|| cli.usage(format!("unknown --compose '{c}' (signed, product)")))?;
        }
        if let Some(i) = p.get("init") {
            prof.init = Init::parse(i).ok_or_else(|| cli.usage(format!("unknown --init '{i}' (seed, lecun)")))?;
        }
        cli.set("mate", &mut prof.q.mate, |m| m.is_finite() && (0.0..=1000.0).contains(m), "must be in [0, 1000]")?;
        cli.set("epsilon", &mut prof.epsilon, |e| (0.0..=1.0).contains(e), "must be in [0, 1]")?;
        match p.get("env") {
            None | Some("legal") => {}
            Some("seed") => prof.q.king_capture = true,
            Some(e) => return Err(cli.usage(format!("unknown --env '{e}' (legal, seed)"))),
        }
        if p.has("rule-draws") {
            prof.q.rule_draws = true;
        }
        Ok(prof)
    }

    fn settings(prof: &Profile, s: &mut RunSettings) -> Result<(), CliError> {
        s.add("schedule", prof.describe(), "schedule (--profile and its flags)", Kind::FromProfile);
        Ok(())
    }

    fn load(_: &Profile, _: &Run) -> Result<(), CliError> {
        Ok(())
    }

    fn train(prof: &Profile, _: &(), r: &Run) -> Result<(), CliError> {
        let meta = vec![("profile".to_string(), r.profile.clone()), ("seed".to_string(), r.seed.to_string())];
        run(&r.out, prof, r.seed, r.resume, r.threads, &meta).map_err(CliError::Failed)?;
        Ok(())
    }

    /// The milestone table and the agents' health; the milestones' curves written beside.
    fn results(prof: &Profile, _: &(), _: &(), run: &Run) -> Result<String, CliError> {
        let out = &run.out;
        let log = crate::io::files::read_regular(&out.join("log.csv"), 1 << 30, "training log").map_err(|e| CliError::Failed(format!("{}: {e}", out.join("log.csv").display())))?;
        let health = agents_health(&out.join("agents.dcw"))?;
        let md = format!(
            "# Self-play agents run `{}`\n\nProfile `{}`, seed {}: {}.\n\nAgents: `{}` (play them as `qagent`: `deepchess match --engine builtin=qagent net=FILE …`).\n\n## What the seed saw, measured every {} games\n\nEach row: the means over the batches since the row before (the games the agents played each other, exploring), and the greedy agents' score in {} games against each baseline (half with each colour, cut at {} plies as a draw).\n\n{}\nWall time of this invocation: {:.1} min.\n",
            out.display(),
            run.profile,
            run.seed,
            prof.describe(),
            out.join("agents.dcw").display(),
            prof.q.eval_every * prof.games_per_batch,
            prof.q.eval_games,
            prof.q.eval_plies,
            milestones(&String::from_utf8_lossy(&log), prof.games_per_batch),
            run.minutes()
        ) + &health;
        // results.md last: a run is finished when it is there.
        let svg = milestones_svg(&String::from_utf8_lossy(&log), prof.games_per_batch, &format!("seed 002's agents, profile {}: shares per 1,000 games", run.profile));
        crate::io::write_atomic(&out.join("milestones.svg"), svg.as_bytes()).map_err(|e| CliError::Failed(format!("writing milestones.svg: {e}")))?;
        Ok(md)
    }

    /// Nothing: the agents play from the start position.
    fn smoke_inputs(_: &Path) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
}

/// The final agents' health (`selfplay::health`) as a section of results.md: per net, each
/// layer's share of live units and the output's spread across 200 probe positions.
fn agents_health(file: &Path) -> Result<String, CliError> {
    use super::health::{alive_text, measure, probes, verdict};
    let (agents, _) = Agents::load(file).map_err(|e| CliError::Failed(e.to_string()))?;
    let h = measure(&agents, &probes(200, 1), crate::tensor::active_kernel());
    let mut md = String::from("\n## Do the nets see the board?\n\nOn 200 probe positions (random legal play from the start, fixed): the share of each hidden layer's units (conv1 conv2 conv3 dense) active on some position, and the output's spread across positions beside its spread across squares. A net with a dead layer or no spread across positions cannot tell positions apart.\n\n| net | alive (conv1 conv2 conv3 dense) | spread across positions | across squares |\n|---|---|---:|---:|\n");
    for n in &h {
        md += &format!("| {} | {} | {:.2e} | {:.2e} |\n", n.name(), alive_text(n), n.spread_positions, n.spread_squares);
    }
    md += &match verdict(&h) {
        Ok(()) => "\nEvery net sees the board.\n".to_string(),
        Err(e) => {
            eprintln!("warning: {e}");
            format!("\n**{}**\n", e.split(':').next().unwrap_or("some nets do not see the board"))
        }
    };
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milestones_average_the_batches_between_evaluations() {
        let log = "phase,epoch,lr,loss,train_acc,val_acc,seconds,rate\n\
                   q.captures_per_game,1,0.001,2.0,NaN,NaN,1,NaN\nq.captures_per_game,2,0.001,4.0,NaN,NaN,1,NaN\n\
                   q.escape_suite,2,0.001,0.125,NaN,NaN,1,NaN\n\
                   q.vs_random,2,0.001,0.5,NaN,NaN,1,NaN\nq.vs_greedy,2,0.001,0.25,NaN,NaN,1,NaN\n\
                   q.captures_per_game,3,0.001,1.0,NaN,NaN,1,NaN\n";
        let t = milestones(log, 100);
        assert!(t.contains("| 200 | 3.00 |"), "{t}");
        assert!(t.contains("| 12.5 % | 50.0 % | 25.0 % | – | – | – | – |"), "{t}");
        assert_eq!(t.lines().count(), 3, "{t}");
        // The drawn curves: pieces left en prise, mates, escapes in self-play beside a random
        // mover there, escapes on the suite.
        let svg = milestones_svg(log, 100, "x");
        assert_eq!(svg.matches("<polyline").count(), 5, "{svg}");
        assert!(svg.contains("escapes on the suite") && !svg.contains("score vs greedy capturer"));
        assert_eq!(Profile::tiny().episodes().exploration.over, 2);
    }
}
