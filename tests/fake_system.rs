//! The platform's promise: a new system joins by its own folder, one `PLAYERS` line and one
//! `SYSTEMS` line (and the `pub mod` Rust needs), nothing else. A fake system
//! (tests/fixtures/fake_system: a policy without search over piece values learned by
//! self-play on the episode stage) is added so to a scratch copy of the crate, which is
//! built; then the fake system trains from the command line, plays through the UCI engine
//! and plays a match as a built-in player.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// `text` with `line` inserted before the first line after `after` that is exactly `before`.
fn insert(text: &str, after: &str, before: &str, line: &str) -> String {
    let start = text.find(after).unwrap_or_else(|| panic!("{after:?} not found"));
    let at = start + text[start..].find(&format!("\n{before}\n")).unwrap_or_else(|| panic!("{before:?} not found")) + 1;
    format!("{}{line}\n{}", &text[..at], &text[at..])
}

/// Lines of `new` that are not in `old` (both with their order), for the size of a change.
fn added_lines(old: &str, new: &str) -> Vec<String> {
    let old: Vec<&str> = old.lines().collect();
    let mut i = 0;
    let mut added = Vec::new();
    for l in new.lines() {
        if i < old.len() && old[i] == l {
            i += 1;
        } else {
            added.push(l.to_string());
        }
    }
    assert_eq!(i, old.len(), "lines were changed or removed, not only added");
    added
}

fn run(exe: &Path, args: &[&str]) -> (bool, String, String) {
    let o = Command::new(exe).args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn a_fake_system_joins_by_its_folder_and_two_registry_lines_then_trains_and_plays() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = common::TempDir::new("fake-system");
    let krate = dir.join("crate");
    copy_dir(&root.join("src"), &krate.join("src"));
    for f in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(root.join(f), krate.join(f)).unwrap();
    }
    copy_dir(&root.join("tests/fixtures/fake_system"), &krate.join("src/fake"));
    let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    let lib2 = lib.replacen("pub mod eval;\n", "pub mod eval;\npub mod fake;\n", 1);
    let players = std::fs::read_to_string(krate.join("src/players.rs")).unwrap();
    let entry = "    Entry { name: \"fake\", description: \"the platform test's fake system\", system: \"fake\", default_net: Some(\"fake.dcw\"), offered: true, memory_mb: crate::fake::player::memory_mb, build: crate::fake::player::build },";
    let players2 = insert(&players, "pub const PLAYERS: &[Entry] = &[", "];", entry);
    let players2 = insert(&players2, "pub const SYSTEMS: &[&System] = &[", "];", "    &crate::fake::pipeline::SYSTEM,");
    assert_eq!(added_lines(&lib, &lib2), ["pub mod fake;"]);
    assert_eq!(added_lines(&players, &players2).len(), 2, "one PLAYERS line and one SYSTEMS line");
    std::fs::write(krate.join("src/lib.rs"), lib2).unwrap();
    std::fs::write(krate.join("src/players.rs"), players2).unwrap();

    let t = Instant::now();
    let target = dir.join("target");
    let o = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--offline", "--quiet", "--bin", "deepchess"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(o.status.success(), "the copy with the fake system does not build:\n{}", String::from_utf8_lossy(&o.stderr));
    eprintln!("built the copy in {:.0} s", t.elapsed().as_secs_f64());
    let exe: PathBuf = target.join("debug/deepchess");

    // The help texts come from the tables.
    let (ok, help, _) = run(&exe, &["help"]);
    assert!(ok && help.contains("fake") && help.contains("no seed: the platform test's fake system"), "{help}");
    let (ok, help, _) = run(&exe, &["train", "--system", "fake", "--help"]);
    assert!(ok && help.contains("--profile") && help.contains("Systems (--system NAME)"), "{help}");

    // It trains on the episode stage, and resumes a finished run without playing again.
    let out = dir.join("run");
    let (ok, md, err) = run(&exe, &["train", "--system", "fake", "--profile", "tiny", "--out", out.to_str().unwrap()]);
    assert!(ok && md.contains("| queen |"), "{md}{err}");
    assert!(err.contains("[values] batch 3/3") && err.contains("games/s"), "{err}");
    let log = std::fs::read_to_string(out.join("log.csv")).unwrap();
    assert!(log.contains("\nvalues,3,") && log.contains("\nvalues.captures_per_game,3,"), "{log}");
    let net = out.join("values.dcw");
    let (ok, _, err) = run(&exe, &["train", "--system", "fake", "--profile", "tiny", "--out", out.to_str().unwrap()]);
    assert!(!ok && err.contains("--resume"), "{err}");
    // Killed before the write after its first batch's checkpoint (the failpoint aborts as
    // `kill -9` would), then resumed: the same values, log and checkpoint as the run above.
    let killed = dir.join("killed");
    let o = Command::new(&exe)
        .args(["train", "--system", "fake", "--profile", "tiny", "--out", killed.to_str().unwrap()])
        .env("DEEPCHESS_FAILPOINT", "before-rename:7")
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("aborting before the rename"), "{}", String::from_utf8_lossy(&o.stderr));
    let (ok, _, err) = run(&exe, &["train", "--system", "fake", "--profile", "tiny", "--out", killed.to_str().unwrap(), "--resume"]);
    assert!(ok && err.contains("resuming after batch 1"), "{err}");
    common::crash::assert_same_outputs(&out, &killed, "the fake system killed after its first batch");

    // Through the UCI engine.
    let mut child = Command::new(&exe).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut expect = |prefix: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(Instant::now() < deadline, "no {prefix}");
            let l = lines.next().expect("engine output").unwrap();
            if l.starts_with(prefix) {
                return l;
            }
        }
    };
    writeln!(stdin, "uci").unwrap();
    assert!(expect("option name Eval type combo").contains("var fake"));
    writeln!(stdin, "setoption name EvalFile value {}", net.display()).unwrap();
    writeln!(stdin, "setoption name Eval value fake\nisready").unwrap();
    let loaded = expect("info string Eval fake");
    assert!(loaded.contains("values.dcw"), "{loaded}");
    expect("readyok");
    writeln!(stdin, "position startpos moves e2e4 e7e5\ngo depth 12").unwrap();
    let info = expect("info depth");
    assert!(info.contains("depth 1 ") && info.contains(" pv "), "{info}");
    let best = expect("bestmove");
    assert!(best.len() >= 13 && best != "bestmove 0000", "{best}");
    writeln!(stdin, "go infinite\nstop\nquit").unwrap();
    expect("bestmove");
    assert!(child.wait().unwrap().success());

    // As a built-in player of a match.
    let pgn = dir.join("games.pgn");
    let net_arg = format!("net={}", net.display());
    let (ok, out, err) = run(
        &exe,
        &["match", "--engine", "builtin=fake", &net_arg, "--engine", "builtin=handcrafted", "--each", "depth=1", "--games", "2", "--openings", "startpos", "--pgn", pgn.to_str().unwrap()],
    );
    assert!(ok, "{out}{err}");
    let games = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(games.matches("[White \"fake\"]").count() + games.matches("[Black \"fake\"]").count(), 2, "{games}");
}
