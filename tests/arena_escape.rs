//! `deepchess escape`: a suite built from games reads back, players are measured on it beside
//! the exact baselines, and bad input is refused with where it is.

mod common;

use common::{deepchess, text, TempDir};

/// Built from a small game file, the suite has the one case the games have; measured, the
/// handcrafted search saves the piece; the shipped suite measures too.
#[test]
fn a_suite_is_built_measured_and_checked() {
    let dir = TempDir::new("escape");
    let pgn = dir.join("g.pgn");
    // After 3...a6 White's knight on b5 is attacked by a pawn: the game's one escape case.
    std::fs::write(&pgn, "[Event \"t\"]\n[Result \"*\"]\n\n1. e4 d5 2. Nc3 e6 3. Nb5 a6 4. Nc3 Nf6 *\n\n").unwrap();
    let suite = dir.join("suite.epd");
    let b = deepchess(&["escape", "--build", "--pgn", pgn.to_str().unwrap(), "--out", suite.to_str().unwrap()]);
    assert!(b.status.success(), "{}", text(&b.stderr));
    let s = std::fs::read_to_string(&suite).unwrap();
    let cases: Vec<&str> = s.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(cases.len(), 1, "{s}");
    assert!(cases[0].contains("; hanging b5 ;"), "{s}");
    assert!(s.contains("# Made by: deepchess escape --build --pgn"), "{s}");

    let m = deepchess(&["escape", "--suite", suite.to_str().unwrap(), "--player", "handcrafted", "--depth", "2"]);
    assert!(m.status.success(), "{}", text(&m.stderr));
    let out = text(&m.stdout);
    assert!(out.starts_with("1 positions; a random mover saves"), "{out}");
    assert!(out.contains("handcrafted at depth 2: saves 100.0 % [20.7, 100.0] (1 of 1)"), "{out}");

    // The shipped suite, with the shipped agents beside the handcrafted evaluator.
    let m = deepchess(&["escape", "--player", "handcrafted"]);
    assert!(m.status.success(), "{}", text(&m.stderr));
    assert!(text(&m.stdout).contains("positions; a random mover saves"), "{}", text(&m.stdout));
}

#[test]
fn bad_input_is_refused_with_where_it_is() {
    let dir = TempDir::new("escape-bad");
    let suite = dir.join("bad.epd");
    std::fs::write(&suite, "# a comment\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n").unwrap();
    let r = deepchess(&["escape", "--suite", suite.to_str().unwrap(), "--player", "handcrafted"]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
    assert!(text(&r.stderr).contains("bad.epd, line 2: not an escape case"), "{}", text(&r.stderr));
    std::fs::write(&suite, "4k3/8/4p3/3N4/8/8/8/4K3 w - - 0 1 ; hanging d5 ; saves 3 of 13\n").unwrap();
    let r = deepchess(&["escape", "--suite", suite.to_str().unwrap()]);
    assert!(text(&r.stderr).contains("line 1: the file says"), "{}", text(&r.stderr));
    let r = deepchess(&["escape", "--player", "nobody"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r.stderr));
    let r = deepchess(&["escape", "--build", "--out", dir.join("x").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r.stderr));
    let r = deepchess(&["escape", "--depth", "0", "--player", "handcrafted"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r.stderr));
    let r = deepchess(&["escape", "--suite", dir.join("missing.epd").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
}
