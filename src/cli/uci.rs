//! `deepchess uci` (and `deepchess` with no arguments): the UCI engine on stdin/stdout.

use crate::io::args::{parse, usage, CliError};

pub fn run(args: &[String]) -> Result<(), CliError> {
    let about = format!(
        "Speaks UCI on stdin/stdout (what 'deepchess' with no arguments runs). Options: Hash,\n\
         Threads, Move Overhead, EvalFile, Selective, Quiescence, Eval ({}; default {}).",
        crate::players::offered_names().join(" | "),
        crate::players::DEFAULT
    );
    let help = usage("uci", "", &about, &[]);
    let p = parse("uci", args, &[], &help)?;
    if let Some(x) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess uci: unexpected argument '{x}'")));
    }
    crate::uci::run_stdio();
    Ok(())
}
