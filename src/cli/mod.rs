//! Command line: `deepchess SUBCOMMAND [FLAGS]`. One file per generic subcommand; the
//! subcommands a system brings (`accuracy`, `bench-dbn`, ...) live in its folder and are
//! found, run and listed through the registry's `SYSTEMS` (`System::commands`).


mod bench;
mod bench_perft;
mod bench_tensor;
mod bench_pgn;
mod clock_fit;
mod curves;
mod data;
mod datagen;
mod escape;
mod gauntlet_fit;
mod label;
mod match_cmd;
mod tournament;
mod perft;
mod show;
mod train;
mod uci;


use crate::io::args::CliError;
use crate::train::system::Command;

/// The top-level help above the subcommands; they follow, then the systems and players.
const TOP_HELP: &str = "\
deepchess: learned chess systems reproduced on one set of rules, one numeric engine, one
search and one arena (the systems and players are listed below).

Usage: deepchess [SUBCOMMAND] [FLAGS]    (no arguments: a UCI engine on stdin/stdout)

Subcommands:
";

/// Each generic subcommand, once: the help lists them in this order (the systems' own after
/// them, `help` and `version` last) and the dispatch finds them here.
const GENERIC: &[Command] = &[
    Command { name: "uci", synopsis: "", about: "the UCI engine (what no arguments runs)", run: uci::run },
    Command { name: "bench", synopsis: "[--depth N] [--eval NAME]", about: "fixed-depth search speed; 'Nodes searched: N'", run: bench::run },
    Command { name: "perft", synopsis: "DEPTH [--fen FEN] [--divide]", about: "count leaf nodes of the legal move tree", run: perft::run },
    Command { name: "data", synopsis: "--pgn FILE --out DIR", about: "sample W/L positions from games into datasets", run: data::run },
    Command { name: "train", synopsis: "[--system NAME] [--profile P]", about: "train a system (below; DeepChess by default), checkpointed", run: train::run_cli },
    Command { name: "show", synopsis: "FILE", about: "a net's or dataset's header and the command that made it", run: show::run },
    Command { name: "datagen", synopsis: "--engine CMD --out FILE", about: "play engine games (UCI) to grow the corpus", run: datagen::run_cli },
    Command { name: "label", synopsis: "--pgn FILE --out FILE", about: "positions with game result + engine score (seed 001)", run: label::run_cli },
    Command { name: "match", synopsis: "--engine SPEC --engine SPEC", about: "play a match, report Elo with error bars", run: match_cmd::run_cli },
    Command { name: "tournament", synopsis: "[--out DIR]", about: "every player and the anchors in one event, one Elo scale", run: tournament::run_cli },
    Command { name: "escape", synopsis: "--player NAME[=NET]...", about: "seed 002's escape milestone: how often a player saves a hanging piece", run: escape::run },
    Command { name: "curves", synopsis: "DIR... [--diff A:B]", about: "several runs (seeds) of one learning curve: means, intervals, power", run: curves::run },
    Command { name: "gauntlet-fit", synopsis: "LEVEL:W-D-L|FILE ...", about: "rating on an opponent's scale from several levels", run: gauntlet_fit::run },
    Command { name: "clock-fit", synopsis: "TC:ELO:BAR|TC:FILE ...", about: "a time-control curve as a line; the clock where it reaches level", run: clock_fit::run },
    Command { name: "bench-perft", synopsis: "[--runs N]", about: "perft speed against Stockfish's 'go perft'", run: bench_perft::run },
    Command { name: "bench-pgn", synopsis: "--pgn FILE", about: "PGN ingest speed against pgn-extract", run: bench_pgn::run },
    Command { name: "bench-tensor", synopsis: "[--reps N] [--quick]", about: "numeric kernels, RBM training, conv (vs numpy, sklearn, torch if present)", run: bench_tensor::run },
];

/// Listed after the systems' subcommands.
const LAST: &[Command] = &[
    Command { name: "help", synopsis: "", about: "print this help", run: |_| Err(CliError::Help(top_help())) },
    Command {
        name: "version",
        synopsis: "",
        about: "print the version",
        run: |_| {
            println!("deepchess {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        },
    },
];

/// Every subcommand, in the order the help lists them.
fn commands() -> impl Iterator<Item = &'static Command> {
    GENERIC.iter().chain(crate::players::SYSTEMS.iter().flat_map(|s| s.commands.iter())).chain(LAST.iter())
}

/// The help's lines of subcommands, the systems and the players of the registry.
fn top_help() -> String {
    let mut s = TOP_HELP.to_string();
    for c in commands() {
        let left = if c.synopsis.is_empty() { c.name.to_string() } else { format!("{} {}", c.name, c.synopsis) };
        s.push_str(&format!("  {left:<36} {}\n", c.about));
    }
    s.push_str("\nRun 'deepchess SUBCOMMAND --help' for the flags of each subcommand.\n");
    s.push_str("\nSystems (train --system NAME; 'deepchess train --system NAME --help'):\n");
    for sys in crate::players::SYSTEMS {
        s.push_str(&format!("  {:<18} {}: {}\n", sys.name, sys.seed, sys.about));
    }
    s.push_str("\nPlayers (UCI option Eval, match builtin=NAME, bench --eval NAME):\n");
    for p in crate::players::PLAYERS {
        let note = if p.name == crate::players::DEFAULT { " (the engine's default)" } else if !p.offered { " (bench only)" } else { "" };
        s.push_str(&format!("  {:<18} {}{note}\n", p.name, p.description));
    }
    s
}

/// Runs the CLI and returns the process exit code (0 ok, 1 failure, 2 usage error).
pub fn run(args: &[String]) -> i32 {
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("uci", &[][..]), // no arguments: a UCI engine
    };
    // Every file this process saves records this command (io::provenance).
    crate::io::provenance::record(args, crate::tensor::active_kernel().name());
    let name = match cmd {
        "-h" | "--help" => "help",
        "--version" | "-V" => "version",
        other => other,
    };
    let result = match commands().find(|c| c.name == name) {
        Some(c) => (c.run)(rest),
        None => Err(CliError::Usage(format!("deepchess: unknown subcommand '{cmd}' (see 'deepchess help')"))),
    };
    match result {
        Ok(()) => 0,
        Err(CliError::Help(text)) => {
            print!("{text}");
            0
        }
        Err(CliError::Usage(msg)) => {
            eprintln!("{msg}");
            2
        }
        Err(CliError::Failed(msg)) => {
            eprintln!("error: {msg}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand is reached by its name alone (no two share one) and listed once in the
    /// top-level help; a system's subcommand's `--help` is its own.
    #[test]
    fn every_subcommand_is_found_and_listed_once() {
        let names: Vec<&str> = commands().map(|c| c.name).collect();
        let help = top_help();
        for (i, c) in commands().enumerate() {
            assert!(!names[i + 1..].contains(&c.name), "{}: two subcommands of one name", c.name);
            assert_eq!(help.matches(&format!("\n  {} ", c.name)).count(), 1, "{} not once in the help:\n{help}", c.name);
        }
        for c in crate::players::SYSTEMS.iter().flat_map(|s| s.commands.iter()) {
            match (c.run)(&["--help".to_string()]) {
                Err(CliError::Help(text)) => assert!(text.contains(&format!("deepchess {}", c.name)), "{}: {text}", c.name),
                other => panic!("{}: --help gave {other:?}", c.name),
            }
        }
    }
}
