//! `deepchess curves`: several runs of one learning curve (`match --curve`, one run per
//! training seed) summed up: each series' mean with its 95 % interval per point, and two
//! series compared per run and over the runs, with the comparison's power.

use crate::arena::curve_seeds::{read_runs, summary};
use crate::io::args::{parse, usage, CliError, Flag};
use std::path::PathBuf;

const FLAGS: &[Flag] = &[
    Flag { name: "diff", value: Some("A:B"), help: "compare series A with series B (A minus B) per run and over the runs, e.g. ebnn:bp" },
    Flag { name: "out", value: Some("FILE"), help: "also write the summary (Markdown) to FILE, atomically" },
];

const ABOUT: &str = "\
Sums up several runs of one learning curve: each DIR is a curve's folder (what 'deepchess
match --curve ... --curve-out DIR' writes; its points.tsv is read, never changed), typically
one per training seed. Per number of training games: how many runs reached it, and each
series' cumulative wins as the mean over those runs with a 95 % interval (Student's t). With
--diff A:B, each run's A − B at the last point every run reached, their mean, interval and
verdict, and the power of the comparison (the gap found 4 times in 5 with this many runs,
and the runs a gap as large as the one seen would take). Runs whose match settings differ
(players, limits, openings, test share) are refused: their mean would mix two protocols.

Example:
  deepchess curves runs/neurochess-gnu-seed*/table1-gnu-eval-d2 --diff ebnn:bp";

fn help() -> String {
    usage("curves", "[--diff A:B] [--out FILE] DIR...", ABOUT, FLAGS)
}

pub fn run(args: &[String]) -> Result<(), CliError> {
    let p = parse("curves", args, FLAGS, &help())?;
    if p.positional.is_empty() {
        return Err(CliError::Usage(format!("deepchess curves: give at least one curve folder\n\n{}", help())));
    }
    let diff = match p.get("diff") {
        None => None,
        Some(d) => match d.split_once(':') {
            Some((a, b)) if !a.is_empty() && !b.is_empty() && a != b => Some((a, b)),
            _ => return Err(CliError::Usage(format!("deepchess curves: --diff wants two series as A:B (e.g. ebnn:bp), got '{d}'"))),
        },
    };
    let dirs: Vec<PathBuf> = p.positional.iter().map(PathBuf::from).collect();
    let runs = read_runs(&dirs).map_err(CliError::Failed)?;
    let text = summary(&runs, diff).map_err(CliError::Failed)?;
    print!("{text}");
    if let Some(out) = p.get("out") {
        crate::io::write_atomic(std::path::Path::new(out), text.as_bytes()).map_err(|e| CliError::Failed(format!("writing {out}: {e}")))?;
    }
    Ok(())
}
