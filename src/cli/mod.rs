//! Command line: `deepchess SUBCOMMAND [FLAGS]`. One file per generic subcommand; the
//! subcommands a system brings (`accuracy`, `bench-dbn`, ...) live in its folder and are
//! found, run and listed through the registry's `SYSTEMS` (`System::commands`).


mod bench;
mod bench_perft;
mod bench_conv;
mod bench_tensor;
mod bench_pgn;
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

/// The top-level help up to the generic subcommands; the systems' own follow, then [`TOP_HELP_END`].
const TOP_HELP: &str = "\
deepchess: learned chess systems reproduced on one set of rules, one numeric engine, one
search and one arena (the systems and players are listed below).

Usage: deepchess [SUBCOMMAND] [FLAGS]    (no arguments: a UCI engine on stdin/stdout)

Subcommands:
  uci                                  the UCI engine (what no arguments runs)
  bench [--depth N] [--eval NAME]      fixed-depth search speed; 'Nodes searched: N'
  perft DEPTH [--fen FEN] [--divide]   count leaf nodes of the legal move tree
  data --pgn FILE --out DIR            sample W/L positions from games into datasets
  train [--system NAME] [--profile P]  train a system (below; DeepChess by default), checkpointed
  show FILE                            a net's or dataset's header and the command that made it
  datagen --engine CMD --out FILE     play engine games (UCI) to grow the corpus
  label --pgn FILE --out FILE          positions with game result + engine score (seed 001)
  match --engine SPEC --engine SPEC   play a match, report Elo with error bars
  tournament [--out DIR]               every player and the anchors in one event, one Elo scale
  escape --player NAME[=NET]...        seed 002's escape milestone: how often a player saves a hanging piece
  gauntlet-fit LEVEL:W-D-L|FILE ...    rating on an opponent's scale from several levels
  bench-perft [--runs N]               perft speed against Stockfish's 'go perft'
  bench-pgn --pgn FILE                 PGN ingest speed against pgn-extract
  bench-tensor [--reps N] [--quick]    numeric kernels, RBM training, conv (vs numpy, sklearn, torch if present)
";

const TOP_HELP_END: &str = "  help                                 print this help
  version                              print the version

Run 'deepchess SUBCOMMAND --help' for the flags of each subcommand.
";

/// Every subcommand a system brings, in the order of `SYSTEMS`.
fn system_commands() -> impl Iterator<Item = &'static Command> {
    crate::players::SYSTEMS.iter().flat_map(|s| s.commands.iter())
}

/// [`TOP_HELP`], the systems' subcommands, the systems and the players of the registry.
fn top_help() -> String {
    let mut s = TOP_HELP.to_string();
    for c in system_commands() {
        s.push_str(&format!("  {:<36} {}\n", format!("{} {}", c.name, c.synopsis), c.about));
    }
    s.push_str(TOP_HELP_END);
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

type Run = fn(&[String]) -> Result<(), CliError>;

/// The generic subcommand called `cmd`, if there is one (a system's own come after).
fn generic(cmd: &str) -> Option<Run> {
    Some(match cmd {
        "bench-tensor" => bench_tensor::run,
        "uci" => uci::run,
        "bench" => bench::run,
        "perft" => perft::run,
        "escape" => escape::run,
        "bench-perft" => bench_perft::run,
        "bench-pgn" => bench_pgn::run,
        "data" => data::run,
        "train" => train::run_cli,
        "show" => show::run,
        "datagen" => datagen::run_cli,
        "match" => match_cmd::run_cli,
        "tournament" => tournament::run_cli,
        "gauntlet-fit" => gauntlet_fit::run,
        "label" => label::run_cli,
        "help" | "-h" | "--help" => |_| Err(CliError::Help(top_help())),
        "version" | "--version" | "-V" => |_| {
            println!("deepchess {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        },
        _ => return None,
    })
}

/// Runs the CLI and returns the process exit code (0 ok, 1 failure, 2 usage error).
pub fn run(args: &[String]) -> i32 {
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("uci", &[][..]), // no arguments: a UCI engine
    };
    // Every file this process saves records this command (io::provenance).
    crate::io::provenance::record(args, crate::tensor::active_kernel().name());
    let result = match generic(cmd).or_else(|| system_commands().find(|c| c.name == cmd).map(|c| c.run)) {
        Some(run) => run(rest),
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

    /// Each system's subcommand is reached: no generic one and no other system's takes its
    /// name, and its `--help` is its own; the top-level help lists it.
    #[test]
    fn the_systems_subcommands_are_found_and_listed() {
        let names: Vec<&str> = system_commands().map(|c| c.name).collect();
        let help = top_help();
        for (i, c) in system_commands().enumerate() {
            assert!(generic(c.name).is_none(), "{}: a generic subcommand has its name", c.name);
            assert!(!names[i + 1..].contains(&c.name), "{}: two systems' subcommands", c.name);
            assert!(help.contains(&format!("\n  {} {}", c.name, c.synopsis)), "{} not in the help:\n{help}", c.name);
            match (c.run)(&["--help".to_string()]) {
                Err(CliError::Help(text)) => assert!(text.contains(&format!("deepchess {}", c.name)), "{}: {text}", c.name),
                other => panic!("{}: --help gave {other:?}", c.name),
            }
        }
    }
}
