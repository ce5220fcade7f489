//! `deepchess bench-perft`: our perft against Stockfish's `go perft` on the same positions,
//! in the same run, interleaved, reporting medians and the speed ratio.

use crate::io::args::{median, parse, usage, CliError, Flag};
use crate::chess::{perft, Position};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "runs", value: Some("N"), help: "repetitions per position, median reported (default 5)" },
    Flag { name: "stockfish", value: Some("PATH"), help: "Stockfish binary (default: stockfish on PATH, then /usr/games/stockfish)" },
];

const POSITIONS: &[(&str, &str, u32)] = &[
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5),
];

struct Stockfish {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Stockfish {
    fn start(path: &str) -> Option<Stockfish> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let out = BufReader::new(child.stdout.take()?);
        let mut sf = Stockfish { child, out };
        sf.send("uci\nsetoption name Threads value 1\nisready");
        sf.wait_for("readyok")?;
        Some(sf)
    }

    fn send(&mut self, cmd: &str) {
        if let Some(stdin) = self.child.stdin.as_mut() {
            let _ = writeln!(stdin, "{cmd}");
            let _ = stdin.flush();
        }
    }

    fn wait_for(&mut self, prefix: &str) -> Option<String> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.out.read_line(&mut line).ok()? == 0 {
                return None;
            }
            if line.starts_with(prefix) {
                return Some(line.trim().to_string());
            }
        }
    }

    /// Returns (nodes, seconds) of one `go perft`.
    fn perft(&mut self, fen: &str, depth: u32) -> Option<(u64, f64)> {
        self.send(&format!("position fen {fen}\nisready"));
        self.wait_for("readyok")?;
        let t = Instant::now();
        self.send(&format!("go perft {depth}"));
        let line = self.wait_for("Nodes searched")?;
        let secs = t.elapsed().as_secs_f64();
        Some((line.rsplit(' ').next()?.parse().ok()?, secs))
    }
}

impl Drop for Stockfish {
    fn drop(&mut self) {
        self.send("quit");
        let _ = self.child.wait();
    }
}

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "bench-perft",
        "[--runs N] [--stockfish PATH]",
        "Perft speed (single thread) against Stockfish's 'go perft' in the same run.\n\
         Without Stockfish only our figures are printed (install it: make install-stockfish).",
        FLAGS,
    );
    let p = parse("bench-perft", args, FLAGS, &help)?;
    let runs: usize = p.get_or("bench-perft", "runs", 5)?;
    if runs == 0 {
        return Err(CliError::Usage("deepchess bench-perft: --runs must be at least 1".into()));
    }
    // Debian installs Stockfish in /usr/games, which is not always on PATH.
    let candidates: Vec<&str> = match p.get("stockfish") {
        Some(path) => vec![path],
        None => vec!["stockfish", "/usr/games/stockfish"],
    };
    let sf_path = candidates[0];
    let mut sf = candidates.iter().find_map(|c| Stockfish::start(c));
    if sf.is_none() {
        println!("stockfish not found ('{sf_path}'): printing our figures only; 'make install-stockfish' installs it (apt)");
    }
    crate::chess::attacks::init();
    println!("{:<10} {:>5} {:>12} {:>12} {:>12} {:>7}", "position", "depth", "nodes", "ours Mnps", "sf Mnps", "ratio");
    for &(name, fen, depth) in POSITIONS {
        let pos = Position::from_fen(fen).expect("built-in FEN");
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let mut nodes = 0;
        for _ in 0..runs {
            let t = Instant::now();
            nodes = perft::perft(&pos, depth);
            ours.push(nodes as f64 / t.elapsed().as_secs_f64() / 1e6);
            if let Some(s) = sf.as_mut() {
                match s.perft(fen, depth) {
                    Some((n, secs)) if n == nodes => theirs.push(n as f64 / secs / 1e6),
                    Some((n, _)) => {
                        return Err(CliError::Failed(format!("{name}: Stockfish counts {n}, we count {nodes}")))
                    }
                    None => return Err(CliError::Failed("Stockfish stopped answering".into())),
                }
            }
        }
        let o = median(&mut ours);
        if theirs.is_empty() {
            println!("{name:<10} {depth:>5} {nodes:>12} {o:>12.1} {:>12} {:>7}", "-", "-");
        } else {
            let t = median(&mut theirs);
            println!("{name:<10} {depth:>5} {nodes:>12} {o:>12.1} {t:>12.1} {:>6.2}x", o / t);
        }
    }
    Ok(())
}
