//! `deepchess compare --net FILE FEN_A FEN_B`, and `deepchess compare --suite`: DeepChess's
//! §5.1 pairs and Fig. 2 sacrifices asked of the shipped comparator nets (or the `--net`s
//! given), as the Markdown tables of docs/results.md.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::chess::Position;
use crate::deepchess::features::Features;
use crate::deepchess::model::Net;
use crate::train::system::Command;
use std::path::PathBuf;
use crate::tensor::NetFile;

const FLAGS: &[Flag] = &[
    Flag { name: "net", value: Some("FILE"), help: "network file (.dcw); with --suite, repeatable (default: the shipped deepchess, distilled and compact nets)" },
    Flag { name: "suite", value: None, help: "the paper's §5.1 static pairs and Fig. 2 sacrifices as tables, instead of two FENs" },
];

/// The depth of the Fig. 2 searches (the shipped players' moves).
pub const SEARCH_DEPTH: u32 = 8;

/// The §5.1 tables for `nets` (name, net): each pair's P(A better) per net beside the
/// handcrafted evaluator's A − B, and each Fig. 2 sacrifice's rank among its position's moves.
pub fn suite_tables(nets: &[(String, Net)]) -> Result<String, String> {
    use crate::deepchess::understanding::{prefers, rank_of_move, PAIRS, SACRIFICES};
    let pos = |f: &str| Position::from_fen(f).map_err(|e| format!("{f}: {e}"));
    let mut s = String::from("| concept | handcrafted A − B (cp) |");
    for (n, _) in nets {
        s += &format!(" {n}: P(A better) |");
    }
    s += "\n|---|---:|";
    s += &"---:|".repeat(nets.len());
    s.push('\n');
    for p in PAIRS {
        let (a, b) = (pos(p.better)?, pos(p.worse)?);
        s += &format!("| {}: {} | {:+} |", p.group, p.concept, crate::eval::handcrafted::evaluate(&a) - crate::eval::handcrafted::evaluate(&b));
        for (_, net) in nets {
            let v = prefers(net, &a, &b)?;
            s += &format!(" {:.3}{} |", v, if v > 0.5 { "" } else { " ✗" });
        }
        s.push('\n');
    }
    if !SACRIFICES.is_empty() {
        s += "\n| Fig. 2 position | the sacrifice |";
        for (n, _) in nets {
            s += &format!(" {n}: its rank / moves (the net's first choice) |");
        }
        s += "\n|---|---|";
        s += &"---|".repeat(nets.len());
        s.push('\n');
        for f in SACRIFICES {
            let p = pos(f.fen)?;
            let mv = p.parse_uci(f.uci).map_err(|e| format!("{}: {}: {e}", f.game, f.uci))?;
            s += &format!("| {} | {} |", f.game, p.san(mv));
            for (_, net) in nets {
                let (rank, of, best) = rank_of_move(net, &p, mv)?;
                s += &format!(" {rank} / {of} ({}) |", p.san(best));
            }
            s.push('\n');
        }
    }
    Ok(s)
}

/// The move each player's search picks in each Fig. 2 position at fixed `depth`: the
/// player of each net (name, file), as the registry builds it, then the handcrafted
/// evaluator's (`handcrafted`).
pub fn sacrifice_searches(nets: &[(String, PathBuf)], depth: u32) -> Result<String, String> {
    use crate::chess::Game;
    use crate::deepchess::understanding::SACRIFICES;
    use crate::search::{Limits, PlayerSettings, Player, Searcher};
    let players: Vec<&str> = nets.iter().map(|(n, _)| n.as_str()).chain(["handcrafted"]).collect();
    let mut s = String::from("| Fig. 2 position | the sacrifice |");
    for p in &players {
        s += &format!(" {p}, depth {depth} |");
    }
    s += "\n|---|---|";
    s += &"---|".repeat(players.len());
    s.push('\n');
    let settings = PlayerSettings::new(16);
    let mut built: Vec<Box<dyn Player>> = Vec::new();
    for (name, file) in nets {
        built.push(super::player::build(&settings, Some(file)).map_err(|e| format!("{name}: {e}"))?.player);
    }
    built.push(Box::new(Searcher::new(crate::eval::handcrafted(), settings.hash_mb)));
    for f in SACRIFICES {
        let pos = Position::from_fen(f.fen).map_err(|e| format!("{}: {e}", f.game))?;
        let mv = pos.parse_uci(f.uci).map_err(|e| format!("{}: {e}", f.game))?;
        s += &format!("| {} | {} |", f.game, pos.san(mv));
        for player in built.iter_mut() {
            player.new_game();
            let game = Game::new(pos);
            let limits = Limits { depth: Some(depth), ..Default::default() };
            let r = player.choose(&game, &limits, std::time::Duration::ZERO, Default::default(), &mut |_| {});
            let best = r.best.ok_or_else(|| format!("{}: no move", f.game))?;
            s += &format!(" {}{} |", pos.san(best), if best == mv { " ✓" } else { "" });
        }
        s.push('\n');
    }
    Ok(s)
}

/// `deepchess compare`, a subcommand of DeepChess (`SYSTEM.commands`).
pub const COMMAND: Command = Command {
    name: "compare",
    synopsis: "--net FILE FEN_A FEN_B",
    about: "probability that A is better for White",
    run,
};

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "compare",
        "--net FILE FEN_A FEN_B | --suite [--net FILE ...]",
        "Prints the network's probability that position A is better for White than B; with --suite, the paper's section 5.1 tables (pairs of positions differing by one concept, Fig. 2's sacrifices).",
        FLAGS,
    );
    let p = parse("compare", args, FLAGS, &help)?;
    if p.has("suite") {
        if let Some(extra) = p.positional.first() {
            return Err(CliError::Usage(format!("deepchess compare --suite takes no positions (its pairs are built in), got '{}'; nets are given with --net FILE", crate::io::text::cut(extra, 60))));
        }
        let mut files: Vec<PathBuf> = p.get_all("net").into_iter().map(PathBuf::from).collect();
        if files.is_empty() {
            for f in ["deepchess.dcw", "distilled.dcw", "compact.dcw"] {
                files.push(crate::io::files::default_net_path(f).ok_or_else(|| CliError::Failed(format!("data/nets/{f} not found")))?);
            }
        }
        let mut nets = Vec::new();
        let mut named = Vec::new();
        for f in files {
            let (net, _) = Net::load(&f).map_err(|e| CliError::Failed(e.to_string()))?;
            let name = f.file_stem().map_or("net".into(), |s| s.to_string_lossy().into_owned());
            nets.push((name.clone(), net));
            named.push((name, f));
        }
        print!("{}", suite_tables(&nets).map_err(CliError::Failed)?);
        if p.get_all("net").is_empty() {
            // The shipped nets are the players deepchess, distilled and compact.
            println!();
            print!("{}", sacrifice_searches(&named, SEARCH_DEPTH).map_err(CliError::Failed)?);
        }
        return Ok(());
    }
    let net_path = p.get("net").ok_or_else(|| CliError::Usage("deepchess compare: --net FILE is needed".into()))?;
    let [a, b] = p.positional.as_slice() else {
        return Err(CliError::Usage("deepchess compare: expected two FENs (quote each)".into()));
    };
    let pa = Position::from_fen(a).map_err(|e| CliError::Usage(format!("deepchess compare: FEN_A: {e}")))?;
    let pb = Position::from_fen(b).map_err(|e| CliError::Usage(format!("deepchess compare: FEN_B: {e}")))?;
    let (net, _) = Net::load(&PathBuf::from(net_path)).map_err(|e| CliError::Failed(e.to_string()))?;
    let (fa, fb) = (Features::from_position(&pa), Features::from_position(&pb));
    let p = net.prob_better(&[fa.as_slice()], &[fb.as_slice()]).map_err(|e| CliError::Failed(format!("{net_path}: {e}")))?;
    println!("{:.6}", p[0]);
    Ok(())
}
