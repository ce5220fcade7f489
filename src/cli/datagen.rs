//! `deepchess datagen`: engine-vs-engine games through UCI, appended to a PGN file.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::chess::Position;
use crate::arena::datagen::{run, GenSettings, RunConfig};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const FLAGS: &[Flag] = &[
    Flag { name: "engine", value: Some("CMD"), help: "UCI engine command, e.g. /usr/games/stockfish" },
    Flag { name: "option", value: Some("NAME=VALUE"), help: "engine option; repeatable (e.g. Hash=16)" },
    Flag { name: "out", value: Some("FILE"), help: "PGN file to append to; an interrupted run resumes (an unfinished last game of its own is cut); a file that is not datagen's output is refused untouched" },
    Flag { name: "games", value: Some("N"), help: "total games wanted in FILE (default 100)" },
    Flag { name: "concurrency", value: Some("N"), help: "engines playing at once (default 2)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed for openings and node budgets (default 1)" },
    Flag { name: "nodes", value: Some("MIN:MAX"), help: "per-side node budget, log-uniform (default 300:6000)" },
    Flag { name: "opening-plies", value: Some("MIN:MAX"), help: "random near-best opening plies (default 4:10)" },
    Flag { name: "openings", value: Some("FILE"), help: "start from an opening suite (EPD/FEN lines or PGN games)" },
    Flag { name: "book", value: Some("FILE"), help: "start after the first --book-plies plies of each game of a PGN corpus (repeatable, *.xz ok, a FIFO is streamed); games the default dataset split holds out are skipped" },
    Flag { name: "book-plies", value: Some("N"), help: "plies of each --book game kept (default 8)" },
    Flag { name: "timeout", value: Some("SECONDS"), help: "longest wait for one engine answer (default 30)" },
];

fn range(name: &str, v: Option<&str>, default: (u64, u64)) -> Result<(u64, u64), CliError> {
    let Some(v) = v else { return Ok(default) };
    let bad = || CliError::Usage(format!("deepchess datagen: --{name} wants MIN:MAX, got '{v}'"));
    let (a, b) = v.split_once(':').ok_or_else(bad)?;
    let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// Start positions of an opening suite (EPD/FEN lines or PGN games, moves played out).
fn read_positions(path: &str) -> Result<Vec<Position>, CliError> {
    let suite = crate::arena::openings::load(path).map_err(CliError::Failed)?;
    Ok(suite
        .into_iter()
        .map(|o| {
            let mut p = o.start;
            for m in o.moves {
                p.play(m);
            }
            p
        })
        .collect())
}

/// Start positions from a game corpus: the position after the first `plies` plies of each
/// game, distinct, leaving out games that the default dataset split (5 %, salt 0) holds out
/// for validation, so that no held-out game's opening becomes training data.
fn read_book(paths: &[&str], plies: usize) -> Result<Vec<Position>, CliError> {
    use crate::chess::pgn::{open_pgn, PgnReader};
    use crate::data::sample::{game_key, is_validation};
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let (mut games, mut held_out) = (0u64, 0u64);
    for path in paths {
        let src = open_pgn(path).map_err(|e| CliError::Failed(format!("{path}: {e}")))?;
        let mut reader = PgnReader::new(src);
        for g in reader.by_ref() {
            games += 1;
            if g.moves.len() <= plies {
                continue;
            }
            if is_validation(game_key(&g.start, &g.moves), 50, 0) {
                held_out += 1;
                continue;
            }
            let mut game = crate::chess::Game::new(g.start);
            for &m in &g.moves[..plies] {
                game.play_unchecked(m);
            }
            let p = *game.position();
            if game.outcome().is_none() && seen.insert(p.hash()) {
                out.push(p);
            }
        }
    }
    if out.is_empty() {
        return Err(CliError::Failed(format!("--book: no start positions after {plies} plies in {}", paths.join(", "))));
    }
    eprintln!("book: {} distinct start positions after {plies} plies from {games} games ({held_out} held-out games skipped)", out.len());
    Ok(out)
}

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "datagen",
        "--engine CMD --out FILE [options]",
        "Plays engine-vs-engine games to grow the training corpus: openings drawn among near-best\n\
         MultiPV moves, per-side node budgets, rating-list adjudication, {score/depth} comments.\n\
         Each game is appended with fsync; rerunning the same command resumes after a kill.",
        FLAGS,
    );
    let p = parse("datagen", args, FLAGS, &help)?;
    let engine = p.get("engine").ok_or_else(|| CliError::Usage("deepchess datagen: --engine CMD is needed".into()))?;
    let out = p.get("out").ok_or_else(|| CliError::Usage("deepchess datagen: --out FILE is needed".into()))?;
    let mut options = Vec::new();
    for o in p.get_all("option") {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("deepchess datagen: --option wants NAME=VALUE, got '{o}'")))?;
        options.push((k.to_string(), v.to_string()));
    }
    let mut s = GenSettings::default();
    (s.nodes_min, s.nodes_max) = range("nodes", p.get("nodes"), (s.nodes_min, s.nodes_max))?;
    let (a, b) = range("opening-plies", p.get("opening-plies"), (s.opening_plies.0 as u64, s.opening_plies.1 as u64))?;
    s.opening_plies = (a as usize, b as usize);
    let secs: f64 = p.get_or("datagen", "timeout", 30.0)?;
    if !(secs > 0.0 && secs < 1e6) {
        return Err(CliError::Usage("deepchess datagen: --timeout must be a positive number of seconds".into()));
    }
    s.move_timeout = Duration::from_secs_f64(secs);
    let books = p.get_all("book");
    let starts = match p.get("openings") {
        Some(_) if !books.is_empty() => {
            return Err(CliError::Usage("deepchess datagen: give --openings or --book, not both".into()));
        }
        Some(path) => read_positions(path)?,
        None if !books.is_empty() => read_book(&books, p.get_or("datagen", "book-plies", 8)?)?,
        None => Vec::new(),
    };
    let cfg = RunConfig {
        engine: engine.to_string(),
        options,
        out: PathBuf::from(out),
        games: p.get_or("datagen", "games", 100)?,
        concurrency: p.get_or("datagen", "concurrency", 2)?,
        seed: p.get_or("datagen", "seed", 1)?,
        starts,
        settings: s,
    };
    let t = Instant::now();
    let total = cfg.games;
    let stats = run(&cfg, |st| {
        let done = st.existing + st.written;
        let rate = st.written as f64 / t.elapsed().as_secs_f64().max(1e-9);
        let eta = total.saturating_sub(done) as f64 / rate.max(1e-9);
        eprint!(
            "\r{done}/{total} games  +{} ={} -{}  {:.0} games/h  ETA {:.0} min   ",
            st.white, st.draws, st.black, rate * 3600.0, eta / 60.0
        );
    })
    .map_err(CliError::Failed)?;
    eprintln!();
    println!(
        "{} games in {out} ({} already there, {} new: {} white wins, {} draws, {} black wins; {} failed attempts retried)",
        stats.existing + stats.written, stats.existing, stats.written, stats.white, stats.draws, stats.black, stats.failures
    );
    Ok(())
}
