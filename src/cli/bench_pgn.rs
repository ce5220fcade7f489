//! `deepchess bench-pgn`: PGN ingest (parse + SAN + legality + sampling) against
//! `pgn-extract` validating the same file, in the same run, medians and ratio.

use crate::io::args::{median, parse, usage, CliError, Flag};
use crate::data::build::{build, BuildSettings};
use std::process::{Command, Stdio};
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "pgn", value: Some("FILE"), help: "uncompressed PGN file to ingest" },
    Flag { name: "runs", value: Some("N"), help: "repetitions, median reported (default 3)" },
];

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "bench-pgn",
        "--pgn FILE [--runs N]",
        "Times our PGN ingest against 'pgn-extract -s -o /dev/null FILE' (when installed:\n\
         Debian package pgn-extract, in /usr/games).",
        FLAGS,
    );
    let p = parse("bench-pgn", args, FLAGS, &help)?;
    let file = p.get("pgn").ok_or_else(|| CliError::Usage("deepchess bench-pgn: --pgn FILE is needed".into()))?;
    let runs: usize = p.get_or("bench-pgn", "runs", 3)?;
    let runs = runs.max(1);
    let pe = ["pgn-extract", "/usr/games/pgn-extract"]
        .into_iter()
        .find(|c| Command::new(c).arg("-h").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok());
    if pe.is_none() {
        println!("pgn-extract not found: printing our figures only (apt-get install pgn-extract)");
    }
    let sources = vec![file.to_string()];
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut games = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let (_, _, st) = build(&sources, &BuildSettings::default(), |_| {}, |_| {}).map_err(CliError::Failed)?;
        ours.push(t.elapsed().as_secs_f64());
        games = st.games_read;
        if let Some(pe) = pe {
            let t = Instant::now();
            let ok = Command::new(pe)
                .args(["-s", "-o", "/dev/null", file])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| CliError::Failed(format!("pgn-extract: {e}")))?;
            if !ok.success() {
                return Err(CliError::Failed(format!("pgn-extract failed on {file}: {ok}")));
            }
            theirs.push(t.elapsed().as_secs_f64());
        }
    }
    let o = median(&mut ours);
    print!("pgn ingest: {games} games, ours {:.0} games/s", games as f64 / o);
    if theirs.is_empty() {
        println!();
    } else {
        let t = median(&mut theirs);
        println!(", pgn-extract {:.0} games/s, ratio {:.2}x", games as f64 / t, t / o);
    }
    Ok(())
}
