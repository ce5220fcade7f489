//! `deepchess uci` (and `deepchess` with no arguments): the UCI engine on stdin/stdout.

use super::args::{parse, usage, CliError};

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "uci",
        "",
        "Speaks UCI on stdin/stdout (what 'deepchess' with no arguments runs). Options: Hash,\n\
         Threads, Move Overhead, EvalFile, Eval (deepchess | distilled | handcrafted).",
        &[],
    );
    let p = parse("uci", args, &[], &help)?;
    if let Some(x) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess uci: unexpected argument '{x}'")));
    }
    crate::play::engine::run_stdio();
    Ok(())
}
