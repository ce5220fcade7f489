//! `deepchess bench [--depth N] [--eval NAME] [--vs-net]`

use crate::arena::openings;
use crate::chess::Game;
use crate::io::args::{parse, usage, CliError, Flag};
use crate::players::{self, BuildError, Entry};
use crate::search::bench::{self, BenchReport};
use crate::search::{Player, PlayerSettings};
use crate::tensor::Kernel;

/// Positions whose children `--tree` compares: each bench position and its first 8
/// children (the sets of siblings a node at ply 0 and at ply 1 compares).
fn sibling_parents(games: &[Game]) -> Vec<crate::chess::Position> {
    let mut out = Vec::new();
    for g in games {
        let pos = *g.position();
        out.push(pos);
        for &m in pos.legal_moves().iter().take(8) {
            let mut child = pos;
            child.play(m);
            out.push(child);
        }
    }
    out
}

fn run_one(mut p: Box<dyn Player>, depth: u32, games: &[Game], verbose: bool, tree: bool) -> BenchReport {
    let r = bench::run(p.as_mut(), depth, games, |i, game, nodes| {
        if verbose {
            eprintln!("position {:>2}: {nodes:>10} nodes  {}", i + 1, game.position().fen());
        }
    });
    eprintln!(
        "eval {} depth {depth}: {} positions, {} nodes, {:.3} s, {} nodes/s, {}",
        p.name(),
        r.positions,
        r.nodes,
        r.time.as_secs_f64(),
        r.nps(),
        r.counters_line()
    );
    if tree {
        let counts: Vec<String> = r.counters.0.iter().map(|c| format!("{} {}", c.name, c.count)).collect();
        eprintln!("eval {} counts: {}", p.name(), counts.join(", "));
        if let Some(t) = p.transitivity(&sibling_parents(games), 24) {
            eprintln!("eval {}: {}", p.name(), t.line());
        }
    }
    r
}

const FLAGS: &[Flag] = &[
    Flag { name: "depth", value: Some("N"), help: "search depth per position (default 10)" },
    Flag { name: "hash", value: Some("MB"), help: "transposition table size (default 16)" },
    Flag { name: "tt-entries", value: Some("N"), help: "a transposition table of N entries instead of --hash's MB (trees of two entry sizes compared at an equal count)" },
    Flag { name: "eval", value: Some("NAME"), help: "a player of the registry, listed below (default handcrafted)" },
    Flag { name: "net", value: Some("FILE"), help: "net file for a net player (with --vs-net or --vs, the compared players'; default: its file in data/nets/)" },
    Flag { name: "vs-net", value: None, help: "" }, // help: vs_net_help()
    Flag { name: "vs", value: Some("LIST"), help: "then the same bench with each listed player (comma list, e.g. dbn-classify,dbn-regress), nodes/s ratios to handcrafted" },
    Flag { name: "rounds", value: Some("N"), help: "with --vs-net: rounds of handcrafted and net benches, interleaved; the median ratio is reported (default 5)" },
    Flag { name: "no-incremental", value: None, help: "evaluators that keep work incremental along the line (a net's first layer): recompute it per position" },
    Flag { name: "kernel", value: Some("NAME"), help: "net layers: scalar (the portable loop), avx2 or avx512 (default: the best this CPU has)" },
    Flag { name: "option", value: Some("NAME=VALUE"), help: "" }, // help: option_help()
    Flag { name: "openings", value: Some("N"), help: "the first N positions of the match's opening suite instead of the built-in ones (what games start from)" },
    Flag { name: "suite", value: Some("FILE"), help: "with --openings: the suite (EPD/FEN or PGN; default data/openings-balanced-1000.epd)" },
    Flag { name: "verbose", value: None, help: "print the node count of each position" },
    Flag { name: "tree", value: None, help: "then what shaped each player's tree (its counts, not rates: cut-offs, first-move cut-offs, re-searches, pruning) and, for a player that compares positions, how often it contradicts itself on siblings (cyclic triples)" },
];

/// [`FLAGS`] with the helps that list what the registry declares: `--vs-net`'s players
/// (`players::BENCH_NETS`) and the players' own options.
fn flags() -> Vec<Flag> {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let nets = players::BENCH_NETS;
    let vs_net = match nets.split_last() {
        Some((last, firsts)) if !firsts.is_empty() => format!("{} and {last}", firsts.join(", ")),
        _ => nets.join(""),
    };
    let options: Vec<String> = players::player_options().iter().map(|o| format!("{}={} ({})", o.name, o.values.join("|"), o.about)).collect();
    FLAGS
        .iter()
        .map(|f| {
            let help = match f.name {
                "vs-net" => leak(format!("then the same bench with the {vs_net} nets: nodes/s ratios")),
                "option" => leak(format!("a player's own option, as UCI's setoption gives it (repeatable; {}; 'deepchess help' lists the players)", options.join("; "))),
                _ => f.help,
            };
            Flag { name: f.name, value: f.value, help }
        })
        .collect()
}

/// `--option NAME=VALUE`, each checked against the option a player declares.
fn player_options(p: &crate::io::args::Parsed) -> Result<Vec<(String, String)>, CliError> {
    let mut out = Vec::new();
    for spec in p.get_all("option") {
        let (name, value) = spec.split_once('=').ok_or_else(|| CliError::Usage(format!("deepchess bench: --option takes NAME=VALUE, not '{}'", crate::io::text::cut(spec, 40))))?;
        let o = players::find_option(name).ok_or_else(|| {
            let known: Vec<&str> = players::player_options().iter().map(|o| o.name).collect();
            CliError::Usage(format!("deepchess bench: no player has an option '{}' (options: {})", crate::io::text::cut(name, 40), known.join(", ")))
        })?;
        let v = o.check(value).map_err(|e| CliError::Usage(format!("deepchess bench: --option {e}")))?;
        out.push((o.name.to_string(), v.to_string()));
    }
    Ok(out)
}

pub fn run(args: &[String]) -> Result<(), CliError> {
    let flags = flags();
    let mut help = usage(
        "bench",
        "[--depth N] [--hash MB] [--eval NAME] [--vs-net [--rounds N]] [--openings N] [--verbose]",
        "Fixed-depth search over the built-in positions, or the match's openings (single thread,\n\
         table cleared between positions). Prints 'Nodes searched: N' (the same on every run) and\n\
         'Nodes/second: N'; with --vs-net or --vs, each player's nodes/s, nodes to depth and time\n\
         to depth beside handcrafted's.",
        &flags,
    );
    help.push_str("\nPlayers (--eval):\n");
    for pl in players::PLAYERS {
        help.push_str(&format!("  {:<18} {}\n", pl.name, pl.description));
    }
    let p = parse("bench", args, &flags, &help)?;
    if let Some(x) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess bench: unexpected argument '{x}'")));
    }
    let depth: u32 = p.get_or("bench", "depth", bench::DEFAULT_DEPTH)?;
    if !(1..=60).contains(&depth) {
        return Err(CliError::Usage(format!("deepchess bench: --depth {depth} out of range 1..60")));
    }
    let rounds: usize = p.get_or("bench", "rounds", 5)?;
    if !(1..=100).contains(&rounds) {
        return Err(CliError::Usage(format!("deepchess bench: --rounds {rounds} out of range 1..100")));
    }
    let eval = p.get("eval").unwrap_or("handcrafted");
    let player = players::find(eval)
        .ok_or_else(|| CliError::Usage(format!("deepchess bench: unknown --eval '{eval}' ({})", players::names().join(", "))))?;
    let mut others: Vec<&Entry> = Vec::new();
    if let Some(list) = p.get("vs") {
        for name in list.split(',') {
            others.push(players::find(name).ok_or_else(|| {
                CliError::Usage(format!("deepchess bench: unknown --vs player '{name}' ({})", players::names().join(", ")))
            })?);
        }
    }
    let vs_net = (p.has("vs-net") || !others.is_empty()) && player.name == "handcrafted";
    if (p.get("rounds").is_some() || !others.is_empty()) && !vs_net {
        return Err(CliError::Usage("deepchess bench: --rounds goes with --vs-net or --vs (and --vs with the handcrafted --eval)".into()));
    }
    let kernel = match p.get("kernel") {
        None => None,
        Some(k) => match Kernel::from_name(k) {
            Some(x) if x.available() => Some(x.name()),
            Some(_) => return Err(CliError::Failed(format!("deepchess bench: this CPU cannot run the {k} kernel"))),
            None => return Err(CliError::Usage(format!("deepchess bench: unknown --kernel '{k}' (scalar, avx2, avx512)"))),
        },
    };
    let settings = PlayerSettings {
        hash_mb: p.get_or("bench", "hash", 16)?,
        net: p.get("net").map(Into::into),
        kernel,
        incremental: !p.has("no-incremental"),
        options: player_options(&p)?,
    };
    let verbose = p.has("verbose");
    let tree = p.has("tree");
    let tt_entries: Option<usize> = match p.get("tt-entries") {
        None => None,
        Some(_) => Some(p.get_or("bench", "tt-entries", 0)?),
    };
    let games: Vec<Game> = match p.get("openings") {
        None if p.get("suite").is_some() => return Err(CliError::Usage("deepchess bench: --suite goes with --openings N".into())),
        None => bench::builtin(),
        Some(_) => {
            let n: usize = p.get_or("bench", "openings", 0)?;
            if !(1..=100_000).contains(&n) {
                return Err(CliError::Usage(format!("deepchess bench: --openings {n} out of range 1..100000")));
            }
            let suite = p.get("suite").unwrap_or("data/openings-balanced-1000.epd");
            let all = openings::load(suite).map_err(|e| CliError::Failed(format!("bench: {e}")))?;
            if all.len() < n {
                return Err(CliError::Failed(format!("bench: {suite} holds {} openings, --openings asks for {n}", all.len())));
            }
            all.into_iter()
                .take(n)
                .map(|o| {
                    let mut g = Game::new(o.start);
                    o.moves.iter().for_each(|&m| g.play_unchecked(m));
                    g
                })
                .collect()
        }
    };
    let games = std::sync::Arc::new(games);
    // A player's bench on a thread with a big stack (searches recurse deeply, each frame
    // holding a node's moves and positions).
    let bench_of = |player: &Entry, s: &PlayerSettings| -> Result<BenchReport, CliError> {
        let built = player.build(s).map_err(|e| match e {
            BuildError::NoNet { .. } => CliError::Failed(format!("bench: {e} (give --net FILE)")),
            BuildError::Load(e) => CliError::Failed(e),
            BuildError::TakesNoNet { .. } => CliError::Usage(format!("bench: {e}: --net is for a net player")),
        })?;
        if let Some(what) = &built.loaded {
            eprintln!("net {what}");
        }
        let mut player = built.player;
        if let Some(n) = tt_entries {
            player.set_hash_entries(n).map_err(|e| CliError::Failed(format!("bench: {e}")))?;
        }
        if !s.incremental && !player.set_incremental(false) {
            eprintln!("note: {} keeps nothing incremental: --no-incremental changes nothing", player.name());
        }
        let games = games.clone();
        let run = std::thread::Builder::new().stack_size(256 << 20).spawn(move || run_one(player, depth, &games, verbose, tree));
        Ok(run.expect("bench thread").join().expect("bench thread panicked"))
    };
    // With --vs-net or --vs, --net FILE is the compared players' net, not handcrafted's.
    let base = if vs_net { PlayerSettings { net: None, ..settings.clone() } } else { settings.clone() };
    let first = bench_of(player, &base)?;
    println!("Nodes searched: {}", first.nodes);
    println!("Nodes/second: {}", first.nps());
    if vs_net {
        // The registry's reference nets (players::BENCH_NETS), or just the first on --net.
        let net_player = |name| players::find(name).expect("a registered player");
        let nets: Vec<(&Entry, String)> = if !others.is_empty() {
            others.iter().map(|&pl| (pl, pl.name.to_string())).collect()
        } else if settings.net.is_some() {
            players::BENCH_NETS.iter().take(1).map(|&n| (net_player(n), "net".to_string())).collect()
        } else {
            players::BENCH_NETS.iter().map(|&n| (net_player(n), format!("{n} net"))).collect()
        };
        // The machine's speed drifts within seconds: rounds of handcrafted then each net, a
        // ratio per round, the median of the rounds.
        // Per net: nodes/s ratios and time-to-depth ratios by round; the tree-size ratio
        // (nodes to depth) is the same every round.
        let mut ratios = vec![(Vec::new(), Vec::new(), 0.0); nets.len()];
        for round in 0..rounds {
            let hc = if round == 0 { first.clone() } else { bench_of(player, &base)? };
            for (k, &(net_player, _)) in nets.iter().enumerate() {
                let net = bench_of(net_player, &settings)?;
                ratios[k].0.push(hc.nps() as f64 / net.nps().max(1) as f64);
                ratios[k].1.push(net.time.as_secs_f64() / hc.time.as_secs_f64().max(1e-9));
                ratios[k].2 = net.nodes as f64 / hc.nodes.max(1) as f64;
            }
        }
        let median = |r: &mut Vec<f64>| {
            r.sort_by(f64::total_cmp);
            ((r[(r.len() - 1) / 2] + r[r.len() / 2]) / 2.0, r[0], r[r.len() - 1])
        };
        let which = if p.get("openings").is_some() { "openings" } else { "positions" };
        for ((nps, time, tree), (_, label)) in ratios.iter_mut().zip(&nets) {
            let (m, lo, hi) = median(nps);
            eprintln!(
                "{label} vs handcrafted, same {which}, same run: {m:.2}x slower in nodes/s (median of {rounds} interleaved rounds, {lo:.2}-{hi:.2})"
            );
            let (m, lo, hi) = median(time);
            eprintln!("{label} vs handcrafted, depth {depth}: {tree:.2}x the nodes, {m:.2}x the time to depth (median, {lo:.2}-{hi:.2})");
        }
    }
    Ok(())
}
