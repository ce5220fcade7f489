//! `deepchess data`: PGN games → train and validation W/L datasets.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::data::build::{build_sets, describe_empty, save_sets, BuildSettings, SplitBy, VALID_POSITIONS};
use crate::data::dataset::Dataset;
use std::path::PathBuf;
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "pgn", value: Some("FILE"), help: "PGN input; repeatable; '-' is stdin, *.xz is decompressed, a FIFO is streamed (a directory or a device is refused)" },
    Flag { name: "out", value: Some("DIR"), help: "output folder for train.dcds and valid.dcds" },
    Flag { name: "per-game", value: Some("N"), help: "positions sampled per game, 0 = all (paper: 10)" },
    Flag { name: "skip-plies", value: Some("N"), help: "plies never sampled at the start (paper: 10 = 5 moves)" },
    Flag { name: "keep-captures", value: None, help: "also sample positions whose played move is a capture" },
    Flag { name: "valid-per-mille", value: Some("N"), help: "games (or positions, with --split positions) per 1000 held out for validation (default 50)" },
    Flag { name: "split", value: Some("games|positions|both"), help: "hold out whole games (default), single positions (their games on both sides), or both: games in valid.dcds and, of the other games, positions in valid-positions.dcds" },
    Flag { name: "mate-only", value: None, help: "keep only games whose last move mates (seed 003's filter)" },
    Flag { name: "min-elo", value: Some("N"), help: "keep only games with WhiteElo and BlackElo tags both >= N (seed 003: 2000)" },
    Flag { name: "split-salt", value: Some("SALT"), help: "draws a different game split (default 0)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of the position sampling (default 1)" },
    Flag { name: "max-games", value: Some("N"), help: "stop after N games read" },
    Flag { name: "show", value: Some("FILE"), help: "print a dataset's header and counts instead of building" },
    Flag { name: "quiet", value: None, help: "no per-game warnings" },
];

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "data",
        "--pgn FILE [--pgn FILE ...] --out DIR [options]",
        "Samples positions from decisive games (paper's rules by default) into train and\n\
         validation datasets. Validation holds out whole games, chosen by a hash of their moves\n\
         (--split positions: single positions, by a hash of their game and ply; --show names\n\
         the protocol). A source without a single readable game is named in a warning; when\n\
         no source has one, the command fails and writes nothing.",
        FLAGS,
    );
    let p = parse("data", args, FLAGS, &help)?;
    if let Some(path) = p.get("show") {
        let d = Dataset::load(&PathBuf::from(path)).map_err(|e| CliError::Failed(e.to_string()))?;
        for (k, v) in &d.meta {
            println!("{k}: {v}");
        }
        if d.meta("protocol").is_none() {
            println!("protocol: games (not recorded: datasets made before the position split existed hold out whole games)");
        }
        println!("records: {} ({} W, {} L)", d.records.len(), d.wins().count(), d.losses().count());
        return Ok(());
    }
    let sources: Vec<String> = p.get_all("pgn").into_iter().map(String::from).collect();
    if sources.is_empty() {
        return Err(CliError::Usage("deepchess data: at least one --pgn FILE is needed".into()));
    }
    let Some(out) = p.get("out") else {
        return Err(CliError::Usage("deepchess data: --out DIR is needed".into()));
    };
    let mut s = BuildSettings::default();
    s.sampling.per_game = p.get_or("data", "per-game", s.sampling.per_game)?;
    s.sampling.skip_plies = p.get_or("data", "skip-plies", s.sampling.skip_plies)?;
    s.sampling.exclude_captures = !p.has("keep-captures");
    s.valid_per_mille = p.get_or("data", "valid-per-mille", s.valid_per_mille)?;
    if s.valid_per_mille > 1000 {
        return Err(CliError::Usage("deepchess data: --valid-per-mille must be at most 1000".into()));
    }
    if let Some(v) = p.get("split") {
        s.split_by = SplitBy::from_name(v)
            .ok_or_else(|| CliError::Usage(format!("deepchess data: --split must be 'games', 'positions' or 'both', not '{v}'")))?;
    }
    s.filter.mate_only = p.has("mate-only");
    if p.get("min-elo").is_some() {
        s.filter.min_elo = Some(p.get_or("data", "min-elo", 0u32)?);
    }
    s.split_salt = p.get_or("data", "split-salt", s.split_salt)?;
    s.seed = p.get_or("data", "seed", s.seed)?;
    if p.get("max-games").is_some() {
        let n = p.get_or("data", "max-games", 0u64)?;
        if n == 0 {
            return Err(CliError::Usage("deepchess data: --max-games must be at least 1".into()));
        }
        s.max_games = Some(n);
    }
    let out = PathBuf::from(out);
    let quiet = p.has("quiet");
    let t = Instant::now();
    let built = build_sets(
        &sources,
        &s,
        |w| {
            if !quiet {
                eprintln!("warning: {w}");
            }
        },
        |st| {
            let secs = t.elapsed().as_secs_f64().max(1e-9);
            eprint!("\r{} games, {} decisive, {:.0} games/s   ", st.games_read, st.decisive, st.games_read as f64 / secs);
        },
    );
    eprintln!();
    // Without a single game nothing is written: earlier datasets in DIR stay as they were.
    let built = built.map_err(CliError::Failed)?;
    let st = built.stats.clone();
    for (src, skipped) in &st.empty_sources {
        eprintln!("warning: no game found in {}", describe_empty(src, *skipped));
    }
    if st.decisive == 0 {
        eprintln!("warning: no decisive game: the datasets are empty");
    }
    save_sets(&out, built).map_err(CliError::Failed)?;
    let pos_path = out.join(VALID_POSITIONS);
    println!("{st}");
    println!(
        "wrote {} and {}{} in {:.1} s",
        out.join("train.dcds").display(),
        out.join("valid.dcds").display(),
        if pos_path.exists() { format!(" and {}", pos_path.display()) } else { String::new() },
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
