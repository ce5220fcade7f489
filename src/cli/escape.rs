//! `deepchess escape`: build an escape suite from games, or measure players on one.

use crate::arena::escape::{greedy_rate, player_rate, random_rate};
use crate::data::escape::{build, read, shipped, Case};
use crate::io::args::{parse, usage, CliError, Flag};
use crate::players::{find, BuildError};
use crate::search::{Limits, PlayerSettings};
use std::path::{Path, PathBuf};

const FLAGS: &[Flag] = &[
    Flag { name: "build", value: None, help: "build a suite from --pgn files into --out instead of measuring" },
    Flag { name: "pgn", value: Some("FILE"), help: "(build) games to draw positions from (.pgn or .pgn.xz; repeatable)" },
    Flag { name: "out", value: Some("FILE"), help: "(build) the suite file to write" },
    Flag { name: "positions", value: Some("N"), help: "(build) cases to keep, one per game at most (default 500)" },
    Flag { name: "seed", value: Some("SEED"), help: "(build) draws the ply of each game's case (default 1)" },
    Flag { name: "suite", value: Some("FILE"), help: "the suite to measure on (default: the shipped data/escape/suite.epd)" },
    Flag { name: "player", value: Some("NAME[=NET]"), help: "a player of the registry, with its net file (repeatable)" },
    Flag { name: "depth", value: Some("N"), help: "search depth of players that search (default 1)" },
];

const ABOUT: &str = "Seed 002's \"escape\" milestone as a number. Each suite position has exactly one of the mover's knights, bishops, rooks or queens en prise (attacked by a cheaper piece, or attacked and undefended), no capture worth as much, and at least one move that saves it. Prints, per player, the share of positions where its move saves the piece (95 % interval), beside a uniformly random mover and a one-ply greedy capturer (both exact).\n\nExamples:\n  deepchess escape --player qagent --player handcrafted --depth 1\n  deepchess escape --player qagent=runs/selfplay-paper/agents.dcw\n  deepchess escape --build --pgn data/datagen-next/sf15-datagen-4.pgn.xz --out data/escape/suite.epd";

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage("escape", "[--suite FILE] --player NAME[=NET]... [--depth N] | --build --pgn FILE... --out FILE", ABOUT, FLAGS);
    let p = parse("escape", args, FLAGS, &help)?;
    if let Some(extra) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess escape: unexpected argument '{extra}'")));
    }
    if p.has("build") {
        return build_cmd(&p);
    }
    let suite: Vec<Case> = match p.get("suite") {
        None => shipped(),
        Some(f) => {
            let text = crate::io::files::read_text(Path::new(f), 64 << 20, "escape suite").map_err(|e| CliError::Failed(format!("{f}: {e}")))?;
            read(&text, f).map_err(CliError::Failed)?
        }
    };
    if suite.is_empty() {
        return Err(CliError::Failed("the suite has no positions".into()));
    }
    let depth: u32 = p.get_or("escape", "depth", 1)?;
    if !(1..=64).contains(&depth) {
        return Err(CliError::Usage(format!("deepchess escape: --depth {depth} must be in 1..=64")));
    }
    println!("{} positions; a random mover saves {}, a greedy capturer {}", suite.len(), random_rate(&suite).text(), greedy_rate(&suite).text());
    for spec in p.get_all("player") {
        let (name, net) = spec.split_once('=').map_or((spec, None), |(n, f)| (n, Some(PathBuf::from(f))));
        let entry = find(name).ok_or_else(|| CliError::Usage(format!("deepchess escape: unknown player '{name}' ({})", crate::players::names().join(", "))))?;
        let settings = PlayerSettings { net, ..PlayerSettings::new(16) };
        let mut built = entry.build(&settings).map_err(|e| match e {
            BuildError::TakesNoNet { .. } => CliError::Usage(format!("deepchess escape: --player {}: {e}", crate::io::text::printable(spec))),
            e => CliError::Failed(format!("player {name}: {e}")),
        })?;
        let r = player_rate(built.player.as_mut(), &suite, &Limits::depth(depth));
        let what = built.loaded.map_or(String::new(), |l| format!(" ({l})"));
        println!("{name}{what} at depth {depth}: saves {}", r.text());
    }
    Ok(())
}

fn build_cmd(p: &crate::io::args::Parsed) -> Result<(), CliError> {
    let pgns = p.get_all("pgn");
    let out = p.get("out").ok_or_else(|| CliError::Usage("deepchess escape --build: --out FILE is required".into()))?;
    if pgns.is_empty() {
        return Err(CliError::Usage("deepchess escape --build: at least one --pgn FILE is required".into()));
    }
    let want: usize = p.get_or("escape", "positions", 500)?;
    let seed: u64 = p.get_or("escape", "seed", 1)?;
    let mut readers = Vec::new();
    for f in &pgns {
        readers.push(crate::chess::pgn::open_pgn(f).map_err(|e| CliError::Failed(format!("{f}: {e}")))?);
    }
    let (cases, st) = build(readers, want, seed);
    let mut text = format!(
        "# Escape suite: {} positions from {} games ({} with a case, {} cases in all), one per game at a ply drawn with seed {seed}.\n# Made by: deepchess escape --build{} --out {out} --positions {want} --seed {seed}\n# Each line: FEN ; hanging SQUARE ; saves N of M (the moves that save the piece, the legal moves).\n",
        cases.len(),
        st.games,
        st.games_with_a_case,
        st.cases_seen,
        pgns.iter().map(|f| format!(" --pgn {f}")).collect::<String>()
    );
    for c in &cases {
        text += &c.line();
        text.push('\n');
    }
    crate::io::atomic::write_atomic(Path::new(out), text.as_bytes()).map_err(|e| CliError::Failed(format!("{out}: {e}")))?;
    eprintln!("{} positions written to {out}; a random mover saves {}", cases.len(), random_rate(&cases).text());
    Ok(())
}
