//! `deepchess match`: two players (built-in or external UCI engines) over an opening suite.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::arena::adjudication::Adjudication;
use crate::arena::elo::{Sprt, SprtModel};
use crate::arena::match_runner::{report, run, GameSettings, MatchConfig, PlayerSpec, Termination};
use crate::arena::openings;
use std::path::PathBuf;
use std::time::Duration;

const FLAGS: &[Flag] = &[
    Flag { name: "engine", value: Some("KEY=VALUE..."), help: "a player (give exactly two; the first is A, whose Elo is reported)" },
    Flag { name: "each", value: Some("KEY=VALUE..."), help: "keys applied to both players (each may override them)" },
    Flag { name: "games", value: Some("N"), help: "games to play (default 100; pairs share an opening)" },
    Flag { name: "concurrency", value: Some("N"), help: "games at once (default 2)" },
    Flag { name: "openings", value: Some("FILE"), help: "EPD/FEN or PGN suite, 'startpos', or 'random:PLIES:SEED' (the start position and PLIES random moves, 10,000 distinct openings; default data/openings-balanced-1000.epd)" },
    Flag { name: "opening-start", value: Some("N"), help: "first opening of the suite to use, 1-based (default 1)" },
    Flag { name: "exclude-starts", value: Some("PGN"), help: "leave out the suite's openings where a game of PGN (.xz allowed) began, e.g. a net's training corpus (repeatable); --opening-start still counts in the whole suite" },
    Flag { name: "shuffle", value: Some("SEED"), help: "use the suite in a shuffled order" },
    Flag { name: "pgn", value: Some("FILE"), help: "append every game here (default runs/match.pgn): a plain PGN file, new or holding games; a compressed or other file is refused" },
    Flag { name: "event", value: Some("NAME"), help: "PGN Event tag (default 'deepchess match')" },
    Flag { name: "sprt", value: Some("E0,E1[,A,B]"), help: "stop early by SPRT of elo0 vs elo1 (alpha, beta default 0.05)" },
    Flag { name: "sprt-model", value: Some("MODEL"), help: "'normalized' (default, as fishtest) or 'logistic' Elo bounds" },
    Flag { name: "no-adjudication", value: None, help: "play every game out to mate or a rules draw" },
    Flag { name: "resign", value: Some("MOVES,CP"), help: "win adjudication (default 3,600: both engines ≥ CP for MOVES)" },
    Flag { name: "draw", value: Some("FROM,MOVES,CP"), help: "draw adjudication (default 34,8,20)" },
    Flag { name: "time-tolerance", value: Some("MS"), help: "a move may arrive this late and still count (default 50)" },
    Flag { name: "hang-margin", value: Some("MS"), help: "after clock + this, a silent engine is killed (default 1000)" },
    Flag { name: "move-timeout", value: Some("SECONDS"), help: "longest nodes/depth search (default 60)" },
    Flag { name: "start-timeout", value: Some("SECONDS"), help: "longest engine start-up, net loading included (default 30)" },
    Flag { name: "curve", value: Some("FILE"), help: "a learning curve: the first player with each net of FILE ('SERIES GAMES NET' lines, a relative NET from FILE's folder, as train --system neurochess writes) against the second" },
    Flag { name: "curve-out", value: Some("DIR"), help: "the curve's folder: points.tsv, curve.md, curve.svg, games.pgn (default: FILE's folder/curve-A-vs-B)" },
    Flag { name: "test-share", value: Some("X"), help: "a curve point's test games per training game of its interval (default 1, seed 004's protocol)" },
    Flag { name: "resume", value: None, help: "continue the match whose games --pgn holds (each checked to be this match's), or the curve in --curve-out (its finished points are kept)" },
    Flag { name: "exe", value: Some("PATH"), help: "program run as 'PATH uci' for builtin= players (default: this one)" },
];

const ABOUT: &str = "\
Plays a match between two UCI players and reports Elo with 95 % error bars over game pairs.

A player is a list of KEY=VALUE words after --engine (quote a value that has spaces):
  name=NAME                 shown in tables and PGN (default: builtin kind or program name)
  cmd=COMMAND               an external UCI engine, e.g. cmd=/usr/games/stockfish
  builtin=KIND              our engine (this program's 'uci') with Eval=KIND:
                            {KINDS}
  net=FILE                  UCI option EvalFile (the net of a builtin player)
  option.NAME=VALUE         any UCI option, e.g. option.UCI_LimitStrength=true option.UCI_Elo=1400
  tc=SECONDS[+INC]          game clock, e.g. tc=10+0.1 (we measure think time ourselves)
  nodes=N | depth=N | movetime=MS   per-move limits instead of a clock

Each opening is played twice with colours swapped. Engines that play an illegal move, crash,
stay silent or overstep the clock (beyond --time-tolerance) lose the game, with the reason in
the PGN tag TerminationDetails; a crashed or silent engine is restarted for the next game.

With --resume, a match stopped part way continues: the games --pgn holds are counted (each
must be this match's game of its number: event, players, limits, opening) and the others
played; a long clock's match may so be played over several sittings.

With --curve FILE, the first player plays each net of FILE in turn (a learning curve: its
snapshots as it trained), each point's test games as many as the training games since the
series' previous point (times --test-share), the same openings for every series at the same
point; the table gives each interval's W-D-L and Elo and the cumulative wins (seed 004's
Table 1), the SVG the cumulative wins per series.

Example:
  deepchess match --engine name=dc builtin=handcrafted --engine name=sf cmd=/usr/games/stockfish \\
      option.UCI_LimitStrength=true option.UCI_Elo=1400 --each tc=10+0.1 --games 200";

/// Joins the words after `--engine`/`--each` into one value, so that a player can be written
/// cutechess-style as separate `key=value` arguments (`match` and `tournament`).
pub(super) fn group_specs(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--engine" || a == "--each" {
            let mut words = Vec::new();
            while i + 1 < args.len() && !args[i + 1].starts_with("--") {
                i += 1;
                words.push(args[i].clone());
            }
            out.push(a.clone());
            out.push(words.join(" "));
        } else {
            out.push(a.clone());
        }
        i += 1;
    }
    out
}

fn usage_err(msg: String) -> CliError {
    CliError::Usage(format!("deepchess match: {msg}"))
}

/// `a,b,...` as exactly `n` numbers (or between `min` and `n`).
fn numbers(flag: &str, v: &str, min: usize, n: usize) -> Result<Vec<f64>, CliError> {
    let xs: Result<Vec<f64>, _> = v.split(',').map(|x| x.trim().parse::<f64>()).collect();
    match xs {
        Ok(xs) if (min..=n).contains(&xs.len()) && xs.iter().all(|x| x.is_finite()) => Ok(xs),
        _ => Err(usage_err(format!("--{flag} wants {n} comma-separated numbers, got '{v}'"))),
    }
}

fn millis(p: &crate::io::args::Parsed, name: &str, default: u64) -> Result<Duration, CliError> {
    Ok(Duration::from_millis(p.get_or("match", name, default)?))
}

fn seconds(p: &crate::io::args::Parsed, name: &str, default: f64) -> Result<Duration, CliError> {
    let s: f64 = p.get_or("match", name, default)?;
    if !(s > 0.0 && s < 1e6) {
        return Err(usage_err(format!("--{name} must be a positive number of seconds")));
    }
    Ok(Duration::from_secs_f64(s))
}

/// Parses the command line into a match configuration (no engine is started).
pub fn config(args: &[String]) -> Result<MatchConfig, CliError> {
    // The kinds come from the registry, so a new player is listed without an edit here.
    let about = ABOUT.replace("{KINDS}", &crate::players::offered_names().join(" | "));
    let help = format!("{}\n\n{}", about, usage("match", "--engine SPEC --engine SPEC [options]", "", FLAGS).trim_start());
    let p = parse("match", &group_specs(args), FLAGS, &help)?;
    if !p.positional.is_empty() {
        return Err(usage_err(format!("unexpected argument '{}'", p.positional[0])));
    }
    let specs = p.get_all("engine");
    if specs.len() != 2 {
        return Err(usage_err(format!("give exactly two --engine players (got {})", specs.len())));
    }
    let each = p.get_all("each").join(" ");
    let mut players = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let spec = PlayerSpec::parse(&each, s).map_err(|e| usage_err(format!("--engine #{}: {e}", i + 1)))?;
        players.push(spec);
    }
    if players[0].name == players[1].name {
        players[1].name.push_str("-2");
    }
    let mut settings = GameSettings::default();
    if p.has("no-adjudication") {
        settings.adjudication = None;
    } else {
        // The flags count moves of each engine (cutechess's terms); the rule counts plies.
        let mut a = Adjudication::MATCH;
        if let Some(v) = p.get("resign") {
            let x = numbers("resign", v, 2, 2)?;
            (a.win_plies, a.win_cp) = (2 * x[0].max(1.0) as usize, x[1] as i32);
        }
        if let Some(v) = p.get("draw") {
            let x = numbers("draw", v, 3, 3)?;
            (a.draw_from_ply, a.draw_plies, a.draw_cp) = (2 * x[0].max(0.0) as usize, 2 * x[1].max(1.0) as usize, x[2] as i32);
        }
        settings.adjudication = Some(a);
    }
    settings.time_tolerance = millis(&p, "time-tolerance", 50)?;
    settings.hang_margin = millis(&p, "hang-margin", 1000)?;
    settings.move_timeout = seconds(&p, "move-timeout", 60.0)?;
    let sprt = match p.get("sprt") {
        None => None,
        Some(v) => {
            let x = numbers("sprt", v, 2, 4)?;
            let model = match p.get("sprt-model").unwrap_or("normalized") {
                "normalized" => SprtModel::Normalized,
                "logistic" => SprtModel::Logistic,
                m => return Err(usage_err(format!("--sprt-model wants 'normalized' or 'logistic', got '{m}'"))),
            };
            let (alpha, beta) = (x.get(2).copied().unwrap_or(0.05), x.get(3).copied().unwrap_or(0.05));
            Some(Sprt::new(x[0], x[1], alpha, beta, model).map_err(usage_err)?)
        }
    };
    let games: u64 = p.get_or("match", "games", 100)?;
    let concurrency: usize = p.get_or("match", "concurrency", 2)?;
    if games == 0 || concurrency == 0 {
        return Err(usage_err("--games and --concurrency must be at least 1".into()));
    }
    let first: usize = p.get_or("match", "opening-start", 1)?;
    if first == 0 {
        return Err(usage_err("--opening-start is 1-based".into()));
    }
    let suite = p.get("openings").unwrap_or("data/openings-balanced-1000.epd");
    let mut openings = openings::load(suite).map_err(|e| CliError::Failed(format!("openings: {e}")))?;
    let mut first = first - 1;
    for corpus in p.get_all("exclude-starts") {
        let starts = openings::game_starts(corpus).map_err(|e| CliError::Failed(format!("--exclude-starts: {e}")))?;
        let (kept, new_first, left) = openings::exclude(openings, first, &starts);
        if kept.is_empty() {
            return Err(CliError::Failed(format!("--exclude-starts {corpus}: every opening of {suite} begins a game there")));
        }
        eprintln!("{left} openings of {suite} left out: games of {corpus} began there");
        (openings, first) = (kept, new_first);
    }
    let pgn_out = PathBuf::from(p.get("pgn").unwrap_or("runs/match.pgn"));
    refuse_input_as_output(suite, &pgn_out)?;
    let exe = match p.get("exe") {
        Some(e) => PathBuf::from(e),
        None => std::env::current_exe().map_err(|e| CliError::Failed(format!("cannot find this executable: {e}")))?,
    };
    let [a, b]: [PlayerSpec; 2] = players.try_into().map_err(|_| usage_err("two players".into()))?;
    Ok(MatchConfig {
        players: [a, b],
        games,
        concurrency,
        openings,
        opening_first: first,
        shuffle: p.get("shuffle").map(|s| crate::io::args::parse_value("match", "--shuffle", s)).transpose()?,
        pgn_out: Some(pgn_out),
        resume: p.has("resume"),
        settings,
        sprt,
        exe,
        start_timeout: seconds(&p, "start-timeout", 30.0)?,
        event: p.get("event").unwrap_or("deepchess match").to_string(),
    })
}

/// The games are appended to `pgn`; when that is the opening suite itself (by device and
/// inode, so a link or `./` counts), the games would be added to the openings it reads.
fn refuse_input_as_output(suite: &str, pgn: &std::path::Path) -> Result<(), CliError> {
    if crate::io::same_file(std::path::Path::new(suite), pgn) {
        return Err(CliError::Failed(format!("--pgn {} is the opening suite --openings {suite}: games are never appended to an input; give another --pgn", pgn.display())));
    }
    Ok(())
}

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    if args.iter().any(|a| a == "--curve") {
        return curve_cli(args);
    }
    let cfg = config(args)?;
    if let Some(dir) = cfg.pgn_out.as_ref().and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| CliError::Failed(format!("{}: {e}", dir.display())))?;
    }
    let stats = run(&cfg, |s, g| {
        if !matches!(g.termination, Termination::Rules(_) | Termination::Adjudicated) {
            eprintln!("\rgame {}: {} ({})                ", g.number, g.detail, g.termination.tag());
        }
        eprint!("\r{}   ", report::progress_line(&cfg, s));
    })
    .map_err(CliError::Failed)?;
    eprintln!();
    print!("{}", report::final_table(&cfg, &stats));
    if let Some(p) = &cfg.pgn_out {
        println!("Games appended to {}", p.display());
    }
    Ok(())
}

/// `deepchess match --curve FILE ...`: the first player's snapshots against the second.
fn curve_cli(args: &[String]) -> Result<(), CliError> {
    use crate::arena::curve::{parse_points, run_curve, CurveConfig};
    let about = ABOUT.replace("{KINDS}", &crate::players::offered_names().join(" | "));
    let help = format!("{}\n\n{}", about, usage("match", "--engine SPEC --engine SPEC [options]", "", FLAGS).trim_start());
    let p = parse("match", &group_specs(args), FLAGS, &help)?;
    if p.get("games").is_some() || p.get("sprt").is_some() {
        return Err(usage_err("--curve decides the games of each point (--test-share); --games and --sprt do not apply".into()));
    }
    let file = PathBuf::from(p.get("curve").unwrap_or_default());
    let text = crate::io::files::read_regular(&file, 1 << 24, "curve list")
        .map_err(|e| CliError::Failed(format!("--curve {}: {e}", file.display())))
        .and_then(|b| String::from_utf8(b).map_err(|_| CliError::Failed(format!("--curve {}: not UTF-8 text", file.display()))))?;
    let mut points = parse_points(&text, &file.display().to_string()).map_err(CliError::Failed)?;
    // A relative net is relative to the list's folder (a run folder can be moved).
    let base_dir = file.parent().unwrap_or(std::path::Path::new(""));
    for q in &mut points {
        if std::path::Path::new(&q.net).is_relative() {
            q.net = base_dir.join(&q.net).display().to_string();
        }
    }
    let share: f64 = p.get_or("match", "test-share", 1.0)?;
    if !(share > 0.0 && share <= 100.0) {
        return Err(usage_err("--test-share must be in (0, 100]".into()));
    }
    // The base match: the parsed flags with one game (each point sets its own).
    let mut base_args: Vec<String> = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if ["--curve", "--curve-out", "--test-share"].contains(&a.as_str()) {
            skip = true;
            continue;
        }
        if a == "--resume" {
            continue;
        }
        base_args.push(a.clone());
    }
    let mut base = config(&base_args)?;
    let names = format!("{}-vs-{}", base.players[0].name, base.players[1].name);
    let out = match p.get("curve-out") {
        Some(d) => PathBuf::from(d),
        None => file.parent().unwrap_or(std::path::Path::new(".")).join(format!("curve-{names}")),
    };
    if p.get("pgn").is_none() {
        base.pgn_out = Some(out.join("games.pgn"));
        refuse_input_as_output(p.get("openings").unwrap_or("data/openings-balanced-1000.epd"), &out.join("games.pgn"))?;
    }
    for q in &points {
        let why = match std::fs::metadata(&q.net) {
            Ok(m) if m.is_file() => continue,
            Ok(m) => format!("is {}, not a regular file (a net is read from a regular file only)", crate::io::files::kind_of(&m.file_type())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "not found".to_string(),
            Err(e) => e.to_string(),
        };
        return Err(CliError::Failed(format!("--curve {}: {} at {} games: {} {why}", file.display(), q.series, q.trained, q.net)));
    }
    let cfg = CurveConfig { base, points, share, out: out.clone(), resume: p.has("resume") };
    let done = run_curve(&cfg, |pt, m, s| eprint!("\r{} {}: {}   ", pt.series, pt.trained, report::progress_line(m, s))).map_err(CliError::Failed)?;
    eprintln!();
    print!("{}", crate::arena::curve::table(&done, &format!("Curve {names}")));
    println!("Table: {}, plot: {}", out.join("curve.md").display(), out.join("curve.svg").display());
    Ok(())
}
