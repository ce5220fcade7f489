//! Command line: `deepchess SUBCOMMAND [FLAGS]`. One file per subcommand.

pub mod args;
pub mod bench_tensor;


use args::CliError;

const TOP_HELP: &str = "\
deepchess: the DeepChess paper reproduced: a learned comparator inside alpha-beta.

Usage: deepchess [SUBCOMMAND] [FLAGS]

Subcommands:
  perft DEPTH [--fen FEN] [--divide]   count leaf nodes of the legal move tree
  bench-tensor [--reps N] [--quick]    GFLOPS of the numeric kernels (vs numpy if present)
  help                                 print this help
  version                              print the version

Run 'deepchess SUBCOMMAND --help' for the flags of each subcommand.
";

/// Runs the CLI and returns the process exit code (0 ok, 1 failure, 2 usage error).
pub fn run(args: &[String]) -> i32 {
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("help", &[][..]),
    };
    let result = match cmd {
        "bench-tensor" => bench_tensor::run(rest),

        "help" | "-h" | "--help" => Err(CliError::Help(TOP_HELP.to_string())),
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
