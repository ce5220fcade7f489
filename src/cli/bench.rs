//! `deepchess bench [--depth N] [--eval handcrafted]`

use super::args::{parse, usage, CliError, Flag};
use crate::search::{bench, Comparator, Handcrafted, Searcher};

const FLAGS: &[Flag] = &[
    Flag { name: "depth", value: Some("N"), help: "search depth per position (default 7)" },
    Flag { name: "hash", value: Some("MB"), help: "transposition table size (default 16)" },
    Flag { name: "eval", value: Some("NAME"), help: "comparator: handcrafted (nets: not yet available)" },
    Flag { name: "verbose", value: None, help: "print the node count of each position" },
];

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "bench",
        "[--depth N] [--hash MB] [--eval NAME] [--verbose]",
        "Fixed-depth search over the built-in positions (single thread, table cleared between\n\
         positions). Prints 'Nodes searched: N' (the same on every run) and 'Nodes/second: N'.",
        FLAGS,
    );
    let p = parse("bench", args, FLAGS, &help)?;
    if let Some(x) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess bench: unexpected argument '{x}'")));
    }
    let depth: u32 = p.get_or("bench", "depth", bench::DEFAULT_DEPTH)?;
    if !(1..=60).contains(&depth) {
        return Err(CliError::Usage(format!("deepchess bench: --depth {depth} out of range 1..60")));
    }
    let hash: usize = p.get_or("bench", "hash", 16)?;
    match p.get("eval").unwrap_or("handcrafted") {
        "handcrafted" => {}
        e @ ("deepchess" | "distilled") => {
            return Err(CliError::Failed(format!("bench: --eval {e} needs a trained net, and none can be loaded yet (src/net pending)")))
        }
        e => return Err(CliError::Usage(format!("deepchess bench: unknown --eval '{e}' (handcrafted, deepchess, distilled)"))),
    }
    let verbose = p.has("verbose");
    let mut s = Searcher::new(Handcrafted::new(), hash);
    let r = bench::run(&mut s, depth, |i, fen, nodes| {
        if verbose {
            eprintln!("position {:>2}: {nodes:>10} nodes  {fen}", i + 1);
        }
    });
    eprintln!(
        "eval {} depth {depth}: {} positions, {:.3} s, {} comparisons/s",
        s.comp.name(),
        r.positions,
        r.time.as_secs_f64(),
        r.comparisons_per_sec()
    );
    println!("Nodes searched: {}", r.nodes);
    println!("Nodes/second: {}", r.nps());
    Ok(())
}
