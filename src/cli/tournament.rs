//! `deepchess tournament`: every registered player, Stockfish's levels as anchors and GNU Chess
//! when installed, and any UCI engine given, in one event per condition, rated on one scale.

use crate::arena::match_runner::{GameSettings, PlayerSpec};
use crate::arena::openings;
use crate::arena::tournament::{self, report, Condition, Entrant, TournamentConfig};
use crate::io::args::{parse, usage, CliError, Flag};
use std::path::{Path, PathBuf};
use std::time::Duration;

const FLAGS: &[Flag] = &[
    Flag { name: "out", value: Some("DIR"), help: "the run folder (default runs/tournament); a folder holding a tournament continues it" },
    Flag { name: "conditions", value: Some("LIST"), help: "'time', 'depth' or 'time,depth' (default both)" },
    Flag { name: "tc", value: Some("S+INC"), help: "the clock of the time condition (default 2+0.02, as make match)" },
    Flag { name: "depth", value: Some("N"), help: "the fixed depth of the depth condition (default 3)" },
    Flag { name: "rounds", value: Some("N"), help: "ladder rounds after the round robin, per condition (default 10; raise it to lengthen a tournament)" },
    Flag { name: "long", value: None, help: "the night setting: 140 ladder rounds (about 9-10 h on 2 cores with 21 players; the default, 10, takes about an hour)" },
    Flag { name: "neighbours", value: Some("K"), help: "opponents below each player in a ladder round (default 2)" },
    Flag { name: "players", value: Some("LIST"), help: "built-in players, comma-separated, or 'none' (default: every player of the registry)" },
    Flag { name: "stockfish", value: Some("PATH|none"), help: "Stockfish for the anchors (default /usr/games/stockfish when installed)" },
    Flag { name: "sf-elo", value: Some("LIST"), help: "the anchors' UCI_Elo levels (default 1350,1700,2050,2400; Stockfish 15.1 allows 1350-2850)" },
    Flag { name: "gnuchess", value: Some("PATH|none"), help: "GNU Chess, run as 'PATH -u' (default /usr/games/gnuchess when installed)" },
    Flag { name: "engine", value: Some("KEY=VALUE..."), help: "another UCI player, as in 'match' (e.g. name=toga cmd=/usr/games/toga2); without a limit it plays each condition's" },
    Flag { name: "concurrency", value: Some("N"), help: "games at once (default 2)" },
    Flag { name: "openings", value: Some("FILE"), help: "opening suite (default data/openings-balanced-1000.epd); each opening is played twice, colours swapped" },
    Flag { name: "hash", value: Some("MB"), help: "transposition table of our engines and Stockfish (default 16)" },
    Flag { name: "bootstrap", value: Some("N"), help: "bootstrap replicates for the intervals (default 1000)" },
    Flag { name: "event", value: Some("NAME"), help: "the event's name in tables and PGN (default 'deepchess tournament')" },
    Flag { name: "exe", value: Some("PATH"), help: "program run as 'PATH uci' for built-in players (default: this one)" },
];

const ABOUT: &str = "\
Plays every learned system of the seeds against each other and against anchors, under two
conditions (an equal clock; an equal fixed depth), and rates them on one Elo scale.

Schedule: a round robin (one game pair per pairing), then ladder rounds in which each player
meets its nearest neighbours of the current fit; games between players of similar strength
inform the ratings most. Ratings: one Bradley-Terry fit over all games of a condition (draws
as half points), 95 % intervals by bootstrap over game pairs, Stockfish's levels fixed at their
UCI_Elo (without Stockfish: handcrafted at 0). Stockfish's levels play by the clock in both
conditions: UCI_Elo is calibrated on time, not depth.

Everything is journalled: a killed tournament continues where it stopped when run again with
the same --out. Outputs in --out: journal.tsv, results.md, and per condition table.md,
ladder.svg and games.pgn.";

fn usage_err(msg: String) -> CliError {
    CliError::Usage(format!("deepchess tournament: {msg}"))
}

/// A program given by flag, or found at its usual place; `none` leaves it out.
fn program(flag: Option<&str>, default: &str) -> Option<String> {
    match flag {
        Some("none") => None,
        Some(p) => Some(p.to_string()),
        None => Path::new(default).is_file().then(|| default.to_string()),
    }
}

pub fn config(args: &[String]) -> Result<TournamentConfig, CliError> {
    let help = format!("{ABOUT}\n\n{}", usage("tournament", "[options]", "", FLAGS).trim_start());
    let p = parse("tournament", &super::match_cmd::group_specs(args), FLAGS, &help)?;
    if let Some(a) = p.positional.first() {
        return Err(usage_err(format!("unexpected argument '{a}'")));
    }
    let tc = p.get("tc").unwrap_or("2+0.02");
    let depth: u32 = p.get_or("tournament", "depth", 3)?;
    if !(1..=64).contains(&depth) {
        return Err(usage_err("--depth wants 1 to 64".into()));
    }
    let time_limit = format!("tc={tc}");
    PlayerSpec::parse("", &format!("cmd=x {time_limit}")).map_err(|e| usage_err(format!("--tc: {e}")))?;
    let hash: u32 = p.get_or("tournament", "hash", 16)?;
    let conds: Vec<&str> = p.get("conditions").unwrap_or("time,depth").split(',').map(str::trim).collect();
    for c in &conds {
        if !["time", "depth"].contains(c) {
            return Err(usage_err(format!("--conditions: '{c}' is neither 'time' nor 'depth'")));
        }
    }
    if conds.is_empty() || (conds.len() == 2 && conds[0] == conds[1]) || conds.len() > 2 {
        return Err(usage_err("--conditions wants 'time', 'depth' or both".into()));
    }
    let limit_of = |c: &str| if c == "time" { time_limit.clone() } else { format!("depth={depth}") };

    // (entrant, own words, plays by the clock in every condition)
    let mut players: Vec<(Entrant, String, bool)> = Vec::new();
    let builtin: Vec<String> = match p.get("players") {
        Some("none") => Vec::new(),
        Some(list) => list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        None => crate::players::offered_names().iter().map(|s| s.to_string()).collect(),
    };
    for name in &builtin {
        let e = crate::players::find_offered(name).ok_or_else(|| usage_err(format!("--players: '{name}' is not one of {}", crate::players::offered_names().join(", "))))?;
        let entrant = Entrant { name: e.name.to_string(), system: e.system.to_string(), anchor: None };
        players.push((entrant, format!("name={} builtin={} option.Hash={hash}", e.name, e.name), false));
    }
    if let Some(sf) = program(p.get("stockfish"), "/usr/games/stockfish") {
        let levels = p.get("sf-elo").unwrap_or("1350,1700,2050,2400");
        for l in levels.split(',') {
            let elo: u32 = l.trim().parse().ok().filter(|e| (1350..=2850).contains(e)).ok_or_else(|| usage_err(format!("--sf-elo: '{l}' is not a level from 1350 to 2850")))?;
            let entrant = Entrant { name: format!("stockfish-{elo}"), system: "stockfish".into(), anchor: Some(f64::from(elo)) };
            let words = format!("name=stockfish-{elo} cmd={sf} option.UCI_LimitStrength=true option.UCI_Elo={elo} option.Hash={hash} option.Threads=1");
            players.push((entrant, words, true));
        }
    }
    if let Some(gc) = program(p.get("gnuchess"), "/usr/games/gnuchess") {
        players.push((Entrant { name: "gnuchess".into(), system: "gnuchess".into(), anchor: None }, format!("name=gnuchess cmd={gc} -u option.OwnBook=false"), false));
    }
    for (i, s) in p.get_all("engine").iter().enumerate() {
        let probe = PlayerSpec::parse("depth=1", s).map_err(|e| usage_err(format!("--engine #{}: {e}", i + 1)))?;
        players.push((Entrant { name: probe.name.clone(), system: "external".into(), anchor: None }, s.to_string(), false));
    }
    if players.len() < 2 {
        return Err(usage_err("a tournament needs at least two players".into()));
    }
    for (i, (a, ..)) in players.iter().enumerate() {
        if players[..i].iter().any(|(b, ..)| b.name == a.name) {
            return Err(usage_err(format!("two players are called '{}' (give one another name=)", a.name)));
        }
    }
    // Without Stockfish the scale is tied to the handcrafted player (or the first player).
    if !players.iter().any(|(e, ..)| e.anchor.is_some()) {
        let k = players.iter().position(|(e, ..)| e.name == "handcrafted").unwrap_or(0);
        players[k].0.anchor = Some(0.0);
    }
    let mut conditions = Vec::new();
    for c in &conds {
        let mut specs = Vec::new();
        for (e, words, clock) in &players {
            let shared = if *clock { time_limit.clone() } else { limit_of(c) };
            specs.push(PlayerSpec::parse(&shared, words).map_err(|err| usage_err(format!("player {}: {err}", e.name)))?);
        }
        let label = if *c == "time" { format!("equal time, {tc} per game") } else { format!("equal depth, {depth} plies (Stockfish's anchors on the {tc} clock)") };
        conditions.push(Condition { name: c.to_string(), label, specs });
    }
    let rounds: usize = if p.has("long") { p.get_or("tournament", "rounds", 140)? } else { p.get_or("tournament", "rounds", 10)? };
    let neighbours: usize = p.get_or("tournament", "neighbours", 2)?;
    let concurrency: usize = p.get_or("tournament", "concurrency", 2)?;
    if neighbours == 0 || concurrency == 0 {
        return Err(usage_err("--neighbours and --concurrency must be at least 1".into()));
    }
    let suite = p.get("openings").unwrap_or("data/openings-balanced-1000.epd");
    let openings = openings::load(suite).map_err(|e| CliError::Failed(format!("openings: {e}")))?;
    let exe = match p.get("exe") {
        Some(e) => PathBuf::from(e),
        None => std::env::current_exe().map_err(|e| CliError::Failed(format!("cannot find this executable: {e}")))?,
    };
    Ok(TournamentConfig {
        entrants: players.into_iter().map(|(e, ..)| e).collect(),
        conditions,
        rounds,
        neighbours,
        concurrency,
        openings,
        openings_name: suite.to_string(),
        settings: GameSettings::default(),
        exe,
        start_timeout: Duration::from_secs(30),
        out: PathBuf::from(p.get("out").unwrap_or("runs/tournament")),
        bootstrap: p.get_or("tournament", "bootstrap", 1000)?,
        event: p.get("event").unwrap_or("deepchess tournament").to_string(),
    })
}

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    let cfg = config(args)?;
    let names: Vec<String> = cfg.entrants.iter().map(|e| if let Some(a) = e.anchor { format!("{} (anchor {a})", e.name) } else { e.name.clone() }).collect();
    eprintln!("tournament: {} players: {}", names.len(), names.join(", "));
    eprintln!("conditions: {}; a round robin then {} ladder rounds each; results in {}", cfg.conditions.iter().map(|c| c.label.clone()).collect::<Vec<_>>().join("; "), cfg.rounds, cfg.out.display());
    let j = tournament::run(&cfg, |p| {
        let per_game = p.elapsed.as_secs_f64() / p.played_now.max(1) as f64;
        let left = p.planned.saturating_sub(p.finished);
        eprint!(
            "\r[{}] round {}/{}  games {}/{} of the rounds so far  {:.1} s/game  round ends in ~{:.0} s   ",
            p.cond,
            p.round,
            p.rounds,
            p.finished,
            p.planned,
            per_game,
            per_game * left as f64
        );
        if let Some(last) = &p.last {
            if last.contains("lost on time") || last.contains("illegal") || last.contains("crash") || last.contains("did not answer") {
                eprintln!("\n  {last}");
            }
        }
    })
    .map_err(CliError::Failed)?;
    eprintln!();
    for cond in &cfg.conditions {
        let (f, rows) = report::standings(&cfg, &j, &cond.name);
        println!("## {}\n\n{}", cond.label, report::table(&cfg, cond, &f, &rows));
    }
    println!("Tables, ladders and games: {}/results.md, {}/<condition>/{{table.md,ladder.svg,games.pgn}}", cfg.out.display(), cfg.out.display());
    Ok(())
}
