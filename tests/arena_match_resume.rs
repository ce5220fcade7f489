//! `deepchess match --resume` (a match stopped part way continues from the games its PGN file
//! holds, each checked to be this match's) and `--exclude-starts` (openings where a corpus's
//! games began are never played).

mod common;

use deepchess::chess::pgn::{PgnGame, PgnReader};
use deepchess::chess::Position;
use std::path::Path;
use std::process::Output;

fn games(pgn: &Path) -> Vec<PgnGame> {
    let Ok(f) = std::fs::File::open(pgn) else { return Vec::new() };
    let mut r = PgnReader::new(std::io::BufReader::new(f));
    let g: Vec<PgnGame> = r.by_ref().collect();
    assert_eq!(r.summary().skipped(), 0, "{}", r.summary());
    g
}

fn rounds(pgn: &Path) -> Vec<u64> {
    let mut r: Vec<u64> = games(pgn).iter().map(|g| g.tag("Round").unwrap().parse().unwrap()).collect();
    r.sort();
    r
}

/// Two handcrafted players at depth 1 (B named `b`), `games` games, into `pgn`.
fn handcrafted(pgn: &Path, b: &str, games: u32, extra: &[&str]) -> std::process::Command {
    let mut c = common::command();
    c.arg("match").args(["--engine", "name=a", "builtin=handcrafted", "--engine", &format!("name={b}"), "builtin=handcrafted"]);
    c.args(["--each", "depth=1", "--games", &games.to_string(), "--concurrency", "1", "--pgn", pgn.to_str().unwrap()]);
    c.args(extra).current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn text(o: &Output) -> String {
    format!("status {:?}\nstdout:\n{}\nstderr:\n{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn a_resumed_match_plays_only_the_games_its_file_lacks_and_refuses_another_matchs_file() {
    let dir = common::TempDir::new("match-resume");
    let pgn = dir.join("m.pgn");
    let o = handcrafted(&pgn, "b", 4, &[]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // Continued to 8 games: games 5 to 8 are played, each number once, and the table counts all.
    let o = handcrafted(&pgn, "b", 8, &["--resume"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("8 games played of 8") && out.contains("and 4 games resumed"), "{}", text(&o));
    assert_eq!(rounds(&pgn), (1..=8).collect::<Vec<_>>());
    // Each pair's two games share an opening, in the suite's order.
    let suite = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/openings-balanced-1000.epd")).unwrap();
    let fens: Vec<&str> = suite.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    for g in games(&pgn) {
        let n: usize = g.tag("Round").unwrap().parse().unwrap();
        assert_eq!(g.start, Position::from_fen(fens[(n - 1) / 2]).unwrap(), "game {n}");
    }
    // A finished match resumed again plays nothing and writes nothing.
    let before = std::fs::read(&pgn).unwrap();
    let o = handcrafted(&pgn, "b", 8, &["--resume"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let after = std::fs::read(&pgn).unwrap();
    assert!(after.starts_with(&before) && after[before.len()..].iter().all(|b| b.is_ascii_whitespace()), "only a separator may be added");
    // Another match's file (another player in B's seat, another clock, fewer games) is refused untouched.
    let before = std::fs::read(&pgn).unwrap();
    for (b, extra, says) in [("c", &[][..], "where this match seats"), ("b", &["--each", "depth=2"][..], "played at"), ("b", &["--games", "6"][..], "games 1 to 6")] {
        let mut c = handcrafted(&pgn, b, 8, &["--resume"]);
        c.args(extra);
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{}", text(&o));
        assert_eq!(std::fs::read(&pgn).unwrap(), before);
    }
}

#[test]
fn a_match_killed_between_games_resumes_to_the_whole_match() {
    let dir = common::TempDir::new("match-kill");
    let pgn = dir.join("m.pgn");
    let mut child = handcrafted(&pgn, "b", 8, &["--each", "depth=3"]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    // Killed once two games are in the file (or let finish, if it is quicker than the polls).
    loop {
        if child.try_wait().unwrap().is_some() || rounds(&pgn).len() >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let o = handcrafted(&pgn, "b", 8, &["--each", "depth=3", "--resume"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rounds(&pgn), (1..=8).collect::<Vec<_>>());
    assert!(String::from_utf8_lossy(&o.stdout).contains("8 games played of 8"), "{}", text(&o));
}

#[test]
fn openings_where_a_corpus_began_are_never_played_and_the_first_keeps_its_meaning() {
    let dir = common::TempDir::new("match-exclude");
    let fens = ["4k3/8/8/8/8/8/8/R3K3 w - -", "4k3/8/8/8/8/8/8/1R2K3 w - -", "4k3/8/8/8/8/8/8/2R1K3 w - -", "4k3/8/8/8/8/8/8/3RK3 w - -"];
    let suite = dir.join("suite.epd");
    std::fs::write(&suite, fens.join("\n")).unwrap();
    // A corpus whose one game began at the third opening and went on.
    let corpus = dir.join("corpus.pgn");
    std::fs::write(&corpus, format!("[Event \"c\"]\n[SetUp \"1\"]\n[FEN \"{} 0 1\"]\n\n1. Kd1 Kd8 *\n", fens[2])).unwrap();
    let pgn = dir.join("m.pgn");
    let flags = ["--openings", suite.to_str().unwrap(), "--opening-start", "2", "--exclude-starts", corpus.to_str().unwrap()];
    let o = handcrafted(&pgn, "b", 6, &flags).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 openings of"), "{}", text(&o));
    let starts: Vec<Position> = by_round(games(&pgn)).iter().map(|g| g.start).collect();
    let want: Vec<Position> = [1, 1, 3, 3, 0, 0].iter().map(|&i| Position::from_fen(fens[i]).unwrap()).collect();
    assert_eq!(starts, want);
    assert!(!starts.contains(&Position::from_fen(fens[2]).unwrap()));
    // A corpus that is not there, or that holds no game, is an error naming it; nothing is played.
    let empty = dir.join("empty.pgn");
    std::fs::write(&empty, "").unwrap();
    for bad in [dir.join("missing.pgn"), empty] {
        let pgn = dir.join("none.pgn");
        let o = handcrafted(&pgn, "b", 2, &["--exclude-starts", bad.to_str().unwrap()]).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains(bad.file_name().unwrap().to_str().unwrap()), "{}", text(&o));
        assert!(!pgn.exists());
    }
}

fn by_round(mut g: Vec<PgnGame>) -> Vec<PgnGame> {
    g.sort_by_key(|g| g.tag("Round").unwrap().parse::<u32>().unwrap());
    g
}
