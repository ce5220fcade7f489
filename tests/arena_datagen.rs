//! datagen end to end against the scripted fake engine: legal, readable PGN with engine
//! comments; concurrency; resume after a kill (a partial last game is cut, none duplicated);
//! an existing file that is not datagen's output is refused untouched.

mod common;

use deepchess::chess::pgn::{PgnReader, EngineEval};
use deepchess::chess::{Color, Outcome};
use std::process::Command;

fn bin() -> &'static str {
    common::exe()
}

fn read(path: &std::path::Path) -> Vec<deepchess::chess::pgn::PgnGame> {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut r = PgnReader::new(f);
    let games: Vec<_> = r.by_ref().collect();
    assert_eq!(r.summary().skipped(), 0, "{}", r.summary());
    games
}

#[test]
fn datagen_writes_legal_pgn_and_resumes() {
    let dir = common::TempDir::new("datagen");
    let out = dir.join("games.pgn");
    let fake = format!("{}/tests/fakes/scripted.sh", env!("CARGO_MANIFEST_DIR"));
    let run = |games: u32| {
        let o = Command::new(bin())
            .args(["datagen", "--engine", &fake, "--out", out.to_str().unwrap(), "--games", &games.to_string(), "--concurrency", "2", "--timeout", "5", "--option", "Hash=8"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let msg = run(4);
    assert!(msg.contains("4 games"), "{msg}");
    let games = read(&out);
    assert_eq!(games.len(), 4);
    for g in &games {
        // The scripted game is Scholar's mate: White wins by the rules.
        assert_eq!(g.result, Some(Outcome::Win(Color::White)));
        assert_eq!(g.tag("Termination"), Some("rules"));
        assert!(g.to_game().position().is_checkmate());
        // Engine moves carry {score/depth}; opening plies carry none.
        let evals = (0..g.moves.len()).filter_map(|i| g.eval(i)).collect::<Vec<EngineEval>>();
        assert!(evals.iter().all(|e| e.depth == 3));
        assert!(g.moves.len() == 7);
    }
    let mut rounds: Vec<_> = games.iter().map(|g| g.tag("Round").unwrap().to_string()).collect();
    rounds.sort();
    assert_eq!(rounds, ["0", "1", "2", "3"]);

    // A kill in the middle of an append leaves a partial game: resume cuts it (saying so)
    // and goes on.
    let mut text = std::fs::read(&out).unwrap();
    let partial = b"[Event \"deepchess datagen\"]\n[Round \"99\"]\n\n1. e4 { +0.1";
    text.extend_from_slice(partial);
    std::fs::write(&out, &text).unwrap();
    let o = Command::new(bin())
        .args(["datagen", "--engine", &fake, "--out", out.to_str().unwrap(), "--games", "6", "--concurrency", "2", "--timeout", "5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("cut {} bytes of an unfinished game at the end of {}", partial.len(), out.display())), "{err}");
    assert!(std::fs::read(&out).unwrap().starts_with(&text[..text.len() - partial.len()]));
    let games = read(&out);
    assert_eq!(games.len(), 6);
    assert!(games.iter().all(|g| g.tag("Round") != Some("99")));
    // Asking for fewer games than present changes nothing.
    let before = std::fs::read(&out).unwrap();
    run(3);
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn datagen_reports_a_broken_engine_and_bad_flags() {
    let dir = common::TempDir::new("datagen-bad");
    let out = dir.join("g.pgn");
    let crash = format!("{}/tests/fakes/crash.sh", env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(bin())
        .args(["datagen", "--engine", &crash, "--out", out.to_str().unwrap(), "--games", "2", "--concurrency", "1", "--timeout", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("engine"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(bin()).args(["datagen", "--engine", "x", "--out", "y", "--nodes", "9:1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// Our own engine as the data source (`make datagen SOURCE=handcrafted`): the binary itself
/// over UCI, openings from the balanced suite; games are legal, finished and differ.
#[test]
fn datagen_with_our_own_engine() {
    let dir = common::TempDir::new("datagen-own");
    let out = dir.join("games.pgn");
    let suite = format!("{}/data/openings-balanced-1000.epd", env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(bin())
        .args(["datagen", "--engine", bin(), "--option", "Eval=handcrafted", "--option", "Hash=4"])
        .args(["--openings", &suite, "--opening-plies", "0:0", "--nodes", "200:800"])
        .args(["--out", out.to_str().unwrap(), "--games", "4", "--concurrency", "2", "--seed", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let games = read(&out);
    assert_eq!(games.len(), 4);
    for g in &games {
        assert!(g.result.is_some(), "unfinished game");
        assert!(g.tag("FEN").is_some(), "games start from the suite");
        assert!(g.moves.len() > 10);
        assert!((0..g.moves.len()).filter_map(|i| g.eval(i)).count() == g.moves.len());
    }
    let mut starts: Vec<_> = games.iter().map(|g| (g.tag("FEN").unwrap().to_string(), g.moves.clone())).collect();
    starts.dedup();
    assert_eq!(starts.len(), 4, "four different games");
}

/// `--book`: start positions after the first plies of a game corpus, distinct, and never from
/// a game the default dataset split holds out; conflicting or empty books are errors.
#[test]
fn datagen_book_openings() {
    use deepchess::data::sample::{game_key, is_validation};
    let dir = common::TempDir::new("datagen-book");
    let book = dir.join("book.pgn");
    let lines = [
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *",
        "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O *",
        "1. c4 e5 2. Nc3 Nf6 3. Nf3 Nc6 4. g3 d5 5. cxd5 Nxd5 *",
        "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 *",
        "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 g6 *", // same 8-ply position as above
        "1. e4 e6 *",                                             // too short
    ];
    let text: String = lines.iter().map(|m| format!("[Event \"b\"]\n[Result \"*\"]\n\n{m}\n\n")).collect();
    std::fs::write(&book, text).unwrap();
    let games = read(&book);
    let expect: std::collections::HashSet<String> = games
        .iter()
        .filter(|g| g.moves.len() > 8 && !is_validation(game_key(&g.start, &g.moves), 50, 0))
        .map(|g| {
            let mut p = g.start;
            g.moves[..8].iter().for_each(|&m| p.play(m));
            p.fen().split(' ').take(4).collect::<Vec<_>>().join(" ")
        })
        .collect();
    let out = dir.join("games.pgn");
    let run = |extra: &[&str], out: &std::path::Path| {
        Command::new(bin())
            .args(["datagen", "--engine", bin(), "--option", "Eval=handcrafted", "--nodes", "200:600", "--opening-plies", "0:0"])
            .args(["--out", out.to_str().unwrap(), "--games", "6", "--concurrency", "2"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--book", book.to_str().unwrap()], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("book: {} distinct start positions", expect.len())));
    for g in read(&out) {
        let fen = g.tag("FEN").expect("starts from the book");
        let fen4 = fen.split(' ').take(4).collect::<Vec<_>>().join(" ");
        assert!(expect.contains(&fen4), "{fen} is not a book position");
    }
    let o = run(&["--book", book.to_str().unwrap(), "--openings", "startpos"], &dir.join("x.pgn"));
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--book", book.to_str().unwrap(), "--book-plies", "40"], &dir.join("y.pgn"));
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Datagen never removes a byte it did not write: a file that is not its output is refused
/// untouched (non-zero exit, the file named), a last game without its blank line counts as
/// finished, and with enough games nothing at all is changed.
#[test]
fn datagen_never_removes_what_it_did_not_write() {
    let dir = common::TempDir::new("datagen-keep");
    let fake = format!("{}/tests/fakes/scripted.sh", env!("CARGO_MANIFEST_DIR"));
    let datagen = |out: &std::path::Path, games: u32| {
        Command::new(bin())
            .args(["datagen", "--engine", &fake, "--out", out.to_str().unwrap(), "--games", &games.to_string(), "--concurrency", "1", "--timeout", "5"])
            .output()
            .unwrap()
    };
    let good = dir.join("good.pgn");
    assert!(datagen(&good, 2).status.success());
    let two = std::fs::read(&good).unwrap();
    assert!(two.ends_with(b"1-0\n\n"));

    // Foreign files: another program's PGN, an .xz corpus, a binary, UTF-16 text.
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(String::from_utf8_lossy(&two).encode_utf16().flat_map(u16::to_le_bytes));
    let foreign: Vec<(&str, Vec<u8>)> = vec![
        ("foreign.pgn", b"[Event \"Rated blitz\"]\n[Result \"0-1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n".to_vec()),
        ("corpus.pgn.xz", std::fs::read(format!("{}/data/datagen/sf15-datagen-1.pgn.xz", env!("CARGO_MANIFEST_DIR"))).unwrap()),
        ("binary.pgn", std::fs::read(bin()).unwrap()[..4096].to_vec()),
        ("utf16.pgn", utf16),
    ];
    for (name, bytes) in &foreign {
        let f = dir.join(name);
        std::fs::write(&f, bytes).unwrap();
        for games in [1, 100] {
            let o = datagen(&f, games);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name}: {err}");
            assert!(err.contains(&f.display().to_string()) && err.contains("not datagen's output, left untouched"), "{name}: {err}");
            assert!(std::fs::read(&f).unwrap() == *bytes, "{name} was changed");
        }
    }

    // The last game finished but its blank line missing: counted, never cut; the separator
    // is added only when a game follows.
    let f = dir.join("no-blank.pgn");
    let cut = &two[..two.len() - 1];
    std::fs::write(&f, cut).unwrap();
    let o = datagen(&f, 2);
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 already there, 0 new"), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(std::fs::read(&f).unwrap(), cut);
    assert!(datagen(&f, 3).status.success());
    let three = std::fs::read(&f).unwrap();
    assert!(three.starts_with(&two), "the separator was not restored before the new game");
    assert_eq!(read(&f).len(), 3);

    // An unfinished game of datagen's own, but games enough: the file is left as it is.
    let f = dir.join("enough.pgn");
    let mut text = two.clone();
    text.extend_from_slice(b"[Event \"deepchess datagen\"]\n[Site \"local\"]\n[Da");
    std::fs::write(&f, &text).unwrap();
    for games in [1, 2] {
        let o = datagen(&f, games);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!String::from_utf8_lossy(&o.stderr).contains("cut"));
        assert_eq!(std::fs::read(&f).unwrap(), text);
    }
}
