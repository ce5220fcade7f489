//! `deepchess label`: positions of PGN games labelled with the game's result and an engine
//! score at a fixed depth (seed 001's data); `--show FILE` describes a labelled set.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::arena::labeller::{default_engine, run, LabelConfig};
use crate::data::labels::{EngineScore, LabelSet, Wdl};
use std::path::{Path, PathBuf};
use std::time::Duration;

const FLAGS: &[Flag] = &[
    Flag { name: "pgn", value: Some("FILE"), help: "PGN input; repeatable, read in order; *.xz is decompressed" },
    Flag { name: "out", value: Some("FILE"), help: "labelled set to write (CSV; *.xz is compressed)" },
    Flag { name: "engine", value: Some("CMD"), help: "UCI engine (default: stockfish on PATH, else /usr/games/stockfish)" },
    Flag { name: "depth", value: Some("D"), help: "search depth of every position (default 10)" },
    Flag { name: "positions", value: Some("N"), help: "stop once N positions are sampled (default: every game)" },
    Flag { name: "per-game", value: Some("K"), help: "random positions per game at most (default 4)" },
    Flag { name: "skip-plies", value: Some("N"), help: "plies never sampled at the start of a game (default 10)" },
    Flag { name: "seed", value: Some("S"), help: "seed of the sampling (default 1)" },
    Flag { name: "jobs", value: Some("J"), help: "engines searching at once (default 1); the labels do not depend on it" },
    Flag { name: "resume", value: None, help: "continue an interrupted run from FILE.partial" },
    Flag { name: "timeout", value: Some("SECONDS"), help: "longest wait for one engine answer (default 60)" },
    Flag { name: "quiet", value: None, help: "no progress line and no per-game warnings" },
    Flag { name: "show", value: Some("FILE"), help: "print a labelled set's provenance and counts instead" },
];

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "label",
        "--pgn FILE [--pgn FILE ...] --out FILE [options]\n       deepchess label --show FILE",
        "Labels positions of games for the deep belief network evaluators (seed 001): per game up to\n\
         K random positions after the opening plies (draws included, never checkmate or stalemate,\n\
         never a position twice), each with the game's result and the engine's score at a fixed\n\
         depth, both from White's side. Each position is searched alone (ucinewgame, Threads 1,\n\
         Hash 16), so the labels do not depend on --jobs. Scored rows go to FILE.partial as they\n\
         finish; after a kill, rerun with --resume. Progress (rate, ETA) on stderr.",
        FLAGS,
    );
    let p = parse("label", args, FLAGS, &help)?;
    if let Some(file) = p.get("show") {
        let set = LabelSet::load(Path::new(file)).map_err(CliError::Failed)?;
        print!("{}", describe(file, &set));
        return Ok(());
    }
    let sources: Vec<String> = p.get_all("pgn").into_iter().map(String::from).collect();
    if sources.is_empty() {
        return Err(CliError::Usage("deepchess label: at least one --pgn FILE is needed (or --show FILE)".into()));
    }
    let out = p.get("out").ok_or_else(|| CliError::Usage("deepchess label: --out FILE is needed".into()))?;
    let engine = match p.get("engine") {
        Some(e) if e.trim().is_empty() => return Err(CliError::Usage("deepchess label: --engine CMD is empty".into())),
        Some(e) => Some(e.to_string()),
        None => None,
    };
    // The default engine is looked for only once every flag is known good, so that a
    // mistyped flag is reported as such on a machine without Stockfish too.
    let mut cfg = LabelConfig::new(sources, PathBuf::from(out), String::new());
    let at_least_1 = |name: &str, v: u64| -> Result<u64, CliError> {
        if v == 0 {
            return Err(CliError::Usage(format!("deepchess label: --{name} must be at least 1")));
        }
        Ok(v)
    };
    cfg.depth = at_least_1("depth", p.get_or("label", "depth", cfg.depth as u64)?)? as u32;
    if cfg.depth > 100 {
        return Err(CliError::Usage("deepchess label: --depth must be at most 100".into()));
    }
    if p.get("positions").is_some() {
        cfg.positions = Some(at_least_1("positions", p.get_or("label", "positions", 0u64)?)? as usize);
    }
    cfg.per_game = at_least_1("per-game", p.get_or("label", "per-game", cfg.per_game as u64)?)? as usize;
    cfg.skip_plies = p.get_or("label", "skip-plies", cfg.skip_plies)?;
    cfg.seed = p.get_or("label", "seed", cfg.seed)?;
    cfg.jobs = at_least_1("jobs", p.get_or("label", "jobs", cfg.jobs as u64)?)? as usize;
    if cfg.jobs > 256 {
        return Err(CliError::Usage("deepchess label: --jobs must be at most 256".into()));
    }
    cfg.resume = p.has("resume");
    let secs: f64 = p.get_or("label", "timeout", 60.0)?;
    if !(secs > 0.0 && secs < 1e6) {
        return Err(CliError::Usage("deepchess label: --timeout must be a positive number of seconds".into()));
    }
    cfg.timeout = Duration::from_secs_f64(secs);
    cfg.engine = match engine {
        Some(e) => e,
        None => default_engine().map_err(CliError::Failed)?,
    };
    let quiet = p.has("quiet");
    let summary = run(
        &cfg,
        |w| {
            if !quiet {
                eprintln!("warning: {w}");
            }
        },
        |pr| {
            if quiet {
                return;
            }
            let secs = pr.elapsed.as_secs_f64().max(1e-9);
            let rate = (pr.done - pr.resumed) as f64 / secs;
            let eta = if rate > 0.0 { clock((pr.total - pr.done) as f64 / rate) } else { "?".into() };
            let resumed = if pr.resumed > 0 { format!(" ({} resumed)", pr.resumed) } else { String::new() };
            eprint!("\r{}/{} positions{resumed}  {rate:.1} positions/s  elapsed {}  ETA {eta}   ", pr.done, pr.total, clock(secs));
        },
    );
    if !quiet {
        eprintln!();
    }
    let s = summary.map_err(CliError::Failed)?;
    let [l, d, w] = s.set.wdl_counts();
    if s.scored == 0 && s.resumed == s.set.items.len() && !crate::arena::labeller::partial_path(&cfg.out).exists() {
        println!("{} already holds this run's {} positions ({w} 1-0, {d} 1/2-1/2, {l} 0-1); nothing to score", cfg.out.display(), s.set.items.len());
        return Ok(());
    }
    println!(
        "wrote {} positions to {} ({w} 1-0, {d} 1/2-1/2, {l} 0-1; {} scored in {:.1} s, {} resumed); games: {}",
        s.set.items.len(),
        cfg.out.display(),
        s.scored,
        s.elapsed.as_secs_f64(),
        s.resumed,
        s.stats
    );
    Ok(())
}

/// `1:02:03` or `2:03`.
fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The `--show` report: provenance, results, sides to move, a score histogram, mates.
pub fn describe(file: &str, set: &LabelSet) -> String {
    let mut s = format!("{file}\n");
    for (k, v) in &set.meta {
        s.push_str(&format!("  {k}: {v}\n"));
    }
    let n = set.items.len();
    let pct = |k: usize| if n == 0 { 0.0 } else { 100.0 * k as f64 / n as f64 };
    let games: std::collections::HashSet<u32> = set.items.iter().map(|it| it.game).collect();
    s.push_str(&format!("positions: {n} from {} games\n", games.len()));
    let [l, d, w] = set.wdl_counts();
    s.push_str(&format!(
        "results (White's side): {} {w} ({:.1} %), {} {d} ({:.1} %), {} {l} ({:.1} %)\n",
        Wdl::Win.pgn(),
        pct(w),
        Wdl::Draw.pgn(),
        pct(d),
        Wdl::Loss.pgn(),
        pct(l)
    ));
    let white = set.items.iter().filter(|it| it.pos.turn() == crate::chess::Color::White).count();
    s.push_str(&format!("side to move: White {white}, Black {}\n", n - white));
    // Bins of the score from White's side, mates at the ends.
    let mut bins = [0usize; 11];
    let (mut mates, mut big) = (0, 0);
    for it in &set.items {
        let b = match it.score {
            EngineScore::Mate(m) if m < 0 => 0,
            EngineScore::Mate(_) => 10,
            EngineScore::Cp(c) => match c {
                i32::MIN..=-1001 => 1,
                -1000..=-301 => 2,
                -300..=-101 => 3,
                -100..=-31 => 4,
                -30..=30 => 5,
                31..=100 => 6,
                101..=300 => 7,
                301..=1000 => 8,
                _ => 9,
            },
        };
        bins[b] += 1;
        mates += usize::from(matches!(it.score, EngineScore::Mate(_)));
        big += usize::from(it.score.clipped(301).abs() > 300);
    }
    let labels = [
        "mate for Black", "< -1000", "-1000 .. -301", "-300 .. -101", "-100 .. -31", "-30 .. 30", "31 .. 100", "101 .. 300",
        "301 .. 1000", "> 1000", "mate for White",
    ];
    s.push_str("score (White's side, centipawns):\n");
    for (label, k) in labels.iter().zip(bins) {
        s.push_str(&format!("  {label:<15} {k:>8} {:>6.1} %\n", pct(k)));
    }
    s.push_str(&format!("|score| > 300, mates included: {big} ({:.1} %); mates: {mates} ({:.2} %)\n", pct(big), pct(mates)));
    s
}
