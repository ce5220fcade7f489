//! Perft against published counts (tests/data/perft_suite.epd, every count verified with
//! Stockfish 15.1 `go perft`). The fast test stops each position at a node cap; the
//! ignored test runs every depth in the file.

mod common;

use deepchess::chess::perft::perft;
use deepchess::chess::Position;

struct Entry {
    line: usize,
    fen: String,
    counts: Vec<(u32, u64)>,
}

fn suite() -> Vec<Entry> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/perft_suite.epd");
    let text = std::fs::read_to_string(path).expect("tests/data/perft_suite.epd is missing");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(';');
        let fen = parts.next().unwrap().trim().to_string();
        let counts = parts
            .map(|p| {
                let mut it = p.split_whitespace();
                let d = it.next().and_then(|d| d.strip_prefix('D')).and_then(|d| d.parse().ok());
                let n = it.next().and_then(|n| n.parse().ok());
                match (d, n) {
                    (Some(d), Some(n)) => (d, n),
                    _ => panic!("perft_suite.epd line {}: bad field '{p}'", i + 1),
                }
            })
            .collect();
        out.push(Entry { line: i + 1, fen, counts });
    }
    out
}

fn check(max_nodes: u64) -> (usize, u64) {
    let entries = suite();
    assert!(entries.len() >= 100, "suite has only {} positions", entries.len());
    let (mut checked, mut nodes) = (0, 0);
    for e in &entries {
        let pos = Position::from_fen(&e.fen).unwrap_or_else(|err| panic!("line {}: {err}", e.line));
        for &(d, want) in &e.counts {
            if want > max_nodes {
                continue;
            }
            assert_eq!(perft(&pos, d), want, "line {}: {} depth {d}", e.line, e.fen);
            // The colour-mirrored position has the same tree.
            if want <= max_nodes / 4 {
                assert_eq!(perft(&pos.mirror(), d), want, "mirror of line {}: {}", e.line, e.fen);
            }
            checked += 1;
            nodes += want;
        }
    }
    (checked, nodes)
}

#[test]
fn perft_suite_fast() {
    let (checked, nodes) = check(3_000_000);
    assert!(checked >= 300, "only {checked} counts checked");
    eprintln!("checked {checked} counts, {nodes} nodes");
}

#[test]
#[ignore = "slow: every depth in the suite (run with make test-full)"]
fn perft_suite_full() {
    let (checked, nodes) = check(u64::MAX);
    eprintln!("checked {checked} counts, {nodes} nodes");
}

/// A closed stdout (`deepchess perft 5 --divide | head -1`) ends the command quietly, as
/// SIGPIPE ends a Unix tool (status 141), without a panic's message (issue 45).
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_quietly() {
    // A pipe whose reader is gone before the command starts: every write fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = common::command().args(["perft", "4", "--divide"]).stdout(writer).output().unwrap();
    assert_eq!(o.status.code(), Some(141), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}
