//! `deepchess perft DEPTH [--fen FEN] [--divide]`

use crate::io::args::{parse, parse_value, usage, CliError, Flag};
use crate::chess::{perft, Position};
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "fen", value: Some("FEN"), help: "start from this position (default: the initial position)" },
    Flag { name: "divide", value: None, help: "print the leaf count under each root move ('e2e4: 20')" },
];

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "perft",
        "DEPTH [--fen FEN] [--divide]",
        "Counts the leaf nodes of the legal move tree (bulk counting at the last ply).\n\
         Ends with 'Nodes searched: N'; time and speed follow on stderr.",
        FLAGS,
    );
    let p = parse("perft", args, FLAGS, &help)?;
    let depth: u32 = match p.positional.as_slice() {
        [d] => parse_value("perft", "DEPTH", d)?,
        [] => return Err(CliError::Usage("deepchess perft: missing DEPTH (see 'deepchess perft --help')".into())),
        more => return Err(CliError::Usage(format!("deepchess perft: unexpected argument '{}'", more[1]))),
    };
    if depth > 20 {
        return Err(CliError::Usage(format!("deepchess perft: DEPTH {depth} is too deep (max 20)")));
    }
    let pos = match p.get("fen") {
        Some(f) => Position::from_fen(f).map_err(|e| CliError::Usage(format!("deepchess perft: {e}")))?,
        None => Position::startpos(),
    };
    crate::chess::attacks::init();
    let t = Instant::now();
    let nodes = if p.has("divide") && depth > 0 {
        let mut total = 0;
        for (m, n) in perft::divide(&pos, depth) {
            println!("{m}: {n}");
            total += n;
        }
        println!();
        total
    } else {
        perft::perft(&pos, depth)
    };
    let secs = t.elapsed().as_secs_f64();
    println!("Nodes searched: {nodes}");
    eprintln!("Time: {:.3} s, {:.1} Mnps", secs, nodes as f64 / secs.max(1e-9) / 1e6);
    Ok(())
}
