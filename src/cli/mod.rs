//! Command line: `deepchess SUBCOMMAND [FLAGS]`. One file per subcommand.


mod accuracy;
mod bench;
mod bench_dbn;
mod bench_neurochess;
mod bench_selfplay;
mod bench_perft;
mod bench_conv;
mod bench_tensor;
mod bench_train;
mod bench_pgn;
mod compare;
mod data;
mod datagen;
mod gauntlet_fit;
mod label;
mod match_cmd;
mod tournament;
mod perft;
mod show;
mod train;
mod uci;


use crate::io::args::CliError;

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
  accuracy --net FILE [--data DIR]     pair accuracy on held-out games
  compare --net FILE FEN_A FEN_B       probability that A is better for White
  datagen --engine CMD --out FILE     play engine games (UCI) to grow the corpus
  label --pgn FILE --out FILE          positions with game result + engine score (seed 001)
  match --engine SPEC --engine SPEC   play a match, report Elo with error bars
  tournament [--out DIR]               every player and the anchors in one event, one Elo scale
  gauntlet-fit LEVEL:W-D-L|FILE ...    rating on an opponent's scale from several levels
  bench-perft [--runs N]               perft speed against Stockfish's 'go perft'
  bench-pgn --pgn FILE                 PGN ingest speed against pgn-extract
  bench-tensor [--reps N] [--quick]    numeric kernels, RBM training, conv (vs numpy, sklearn, torch if present)
  bench-dbn [--seconds S]              DBN fine-tuning positions/s beside the GEMM's GFLOPS
  bench-train [--rounds N]             DeepChess training pairs/s beside JAX (if present) and the FMA peak
  bench-neurochess [--rounds N]        seed 004's features, V evaluations, Tangent-Prop steps beside their anchors
  bench-selfplay [--batch N]           seed 002's training update beside PyTorch, self-play speed
  help                                 print this help
  version                              print the version

Run 'deepchess SUBCOMMAND --help' for the flags of each subcommand.
";

/// [`TOP_HELP`], the systems and the players of the registry.
fn top_help() -> String {
    let mut s = TOP_HELP.to_string();
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
    let result = match cmd {
        "bench-tensor" => bench_tensor::run(rest),
        "bench-dbn" => bench_dbn::run(rest),
        "bench-neurochess" => bench_neurochess::run(rest),
        "bench-selfplay" => bench_selfplay::run(rest),
        "bench-train" => bench_train::run(rest),

        "uci" => uci::run(rest),
        "bench" => bench::run(rest),
        "perft" => perft::run(rest),
        "bench-perft" => bench_perft::run(rest),
        "bench-pgn" => bench_pgn::run(rest),
        "data" => data::run(rest),
        "train" => train::run_cli(rest),
        "show" => show::run(rest),
        "accuracy" => accuracy::run(rest),
        "compare" => compare::run(rest),
        "datagen" => datagen::run_cli(rest),
        "match" => match_cmd::run_cli(rest),
        "tournament" => tournament::run_cli(rest),
        "gauntlet-fit" => gauntlet_fit::run(rest),
        "label" => label::run_cli(rest),
        "help" | "-h" | "--help" => Err(CliError::Help(top_help())),
        "version" | "--version" | "-V" => {
            println!("deepchess {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        other => Err(CliError::Usage(format!(
            "deepchess: unknown subcommand '{other}' (see 'deepchess help')"
        ))),
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
