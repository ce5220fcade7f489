//! The platform's promise: a new system joins by its own folder, one `PLAYERS` line and one
//! `SYSTEMS` line (and the `pub mod` Rust needs), nothing else. A fake system
//! (tests/fixtures/fake_system: a policy without search over piece values learned by
//! self-play on the episode stage) is added so to a scratch copy of the crate, which is
//! built and passes the layering check as it stands; the tests that cover every system
//! (kill/resume, provenance), copied unedited, cover it; then the fake system trains from the
//! command line, runs its own benchmarks (a subcommand and a part of bench-tensor, both
//! listed in the help), plays through the UCI engine, plays a match as a built-in player and
//! takes its place in a tournament's ladder in its own colour.

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
    // The data the crate compiles in (the escape suite, the openings quantised nets are
    // calibrated on).
    copy_dir(&root.join("data/escape"), &krate.join("data/escape"));
    std::fs::copy(root.join("data/openings-balanced-1000.epd"), krate.join("data/openings-balanced-1000.epd")).unwrap();
    for f in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(root.join(f), krate.join(f)).unwrap();
    }
    std::fs::create_dir_all(krate.join("tests")).unwrap();
    std::fs::copy(root.join("tests/house_layering.rs"), krate.join("tests/house_layering.rs")).unwrap();
    copy_dir(&root.join("tests/fixtures/fake_system"), &krate.join("src/fake"));
    let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    let lib2 = lib.replacen("pub mod eval;\n", "pub mod eval;\npub mod fake;\n", 1);
    let players = std::fs::read_to_string(krate.join("src/players.rs")).unwrap();
    let entry = "    Entry { name: \"fake\", description: \"the platform test's fake system\", system: \"fake\", default_net: Some(\"fake.dcw\"), offered: true, memory_mb: crate::fake::player::memory_mb, build: crate::fake::player::build, options: &[] },";
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

    // The layering check, unedited, puts the fake system on the systems' floor.
    let o = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["test", "--offline", "--quiet", "--test", "house_layering"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(o.status.success(), "the layering check fails on the copy:\n{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));

    // The tests that cover every system cover it, unedited: the kill/resume and provenance
    // tests, copied with the helpers they share, run on the copy's program for the fake
    // system alone (they find it in `train --help`, and its smoke run through the program).
    copy_dir(&root.join("tests/common"), &krate.join("tests/common"));
    for t in ["train_crash_systems.rs", "io_provenance.rs"] {
        std::fs::copy(root.join("tests").join(t), krate.join("tests").join(t)).unwrap();
    }
    let t = Instant::now();
    let o = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["test", "--offline", "--quiet", "--test", "train_crash_systems", "--test", "io_provenance", "every_system", "--", "--nocapture"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", &target)
        .env("DEEPCHESS_TEST_SYSTEMS", "fake")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "the tests of every system fail on the fake one:\n{out}{err}");
    let passed: Vec<&str> = out.lines().filter(|l| l.starts_with("test result: ok.")).collect();
    assert!(passed.len() == 2 && passed.iter().all(|l| !l.contains(" 0 passed")), "{out}");
    assert!(err.contains("fake: ") && err.contains("failpoint kills of") && err.contains("SIGKILLs survived"), "the fake system was not killed:\n{err}");
    eprintln!("ran the tests of every system on the fake one in {:.0} s", t.elapsed().as_secs_f64());

    // The help texts come from the tables.
    let (ok, help, _) = run(&exe, &["help"]);
    assert!(ok && help.contains("fake") && help.contains("no seed: the platform test's fake system"), "{help}");
    assert!(help.contains("\n  bench-fake [--rounds N]   ") && help.contains("the fake system's values of positions per second"), "{help}");
    let (ok, help, _) = run(&exe, &["train", "--system", "fake", "--help"]);
    assert!(ok && help.contains("--profile") && help.contains("Systems (--system NAME)"), "{help}");

    // Its own benchmarks: a subcommand with its flags and errors, and a part of bench-tensor.
    let (ok, out, err) = run(&exe, &["bench-fake", "--rounds", "3"]);
    assert!(ok && out.contains("fake values: ") && out.contains(" 3 rounds, ") && out.contains("positions/s"), "{out}{err}");
    let (ok, help, _) = run(&exe, &["bench-fake", "--help"]);
    assert!(ok && help.contains("Usage: deepchess bench-fake [--rounds N]"), "{help}");
    let o = Command::new(&exe).args(["bench-fake", "--rounds", "0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "a usage error");
    let (ok, help, _) = run(&exe, &["bench-tensor", "--help"]);
    assert!(ok && help.contains("--only gemm|sparse|rbm|conv|fake") && help.contains("--fake-rows N") && help.contains("the fake system's value update"), "{help}");
    let (ok, out, err) = run(&exe, &["bench-tensor", "--only", "fake", "--quick", "--fake-rows", "16"]);
    assert!(ok && out.starts_with("Fake value update, 16 rows: ") && !out.contains("GFLOPS"), "{out}{err}");

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

    // In a tournament, with its trained net as its default one: its row of the table, and
    // its line, point and legend in its own colour (SYSTEM.colour) on the ladder.
    std::fs::create_dir_all(krate.join("data/nets")).unwrap();
    std::fs::copy(&net, krate.join("data/nets/fake.dcw")).unwrap();
    let tour = dir.join("tournament");
    let (ok, out, err) = run(
        &exe,
        &[
            "tournament", "--out", tour.to_str().unwrap(), "--players", "fake,handcrafted", "--stockfish", "none", "--gnuchess", "none",
            "--conditions", "depth", "--depth", "1", "--rounds", "0", "--bootstrap", "20", "--openings", "startpos",
        ],
    );
    assert!(ok && out.contains("| fake | fake |"), "{out}{err}");
    let svg = std::fs::read_to_string(tour.join("depth/ladder.svg")).unwrap();
    let colour = "#bcbd22";
    let lines: Vec<&str> = svg.lines().collect();
    let row = lines.iter().position(|l| l.contains(r#"text-anchor="end">fake</text>"#)).unwrap_or_else(|| panic!("no row of fake: {svg}"));
    assert!(lines[row + 1].contains(&format!(r#"stroke="{colour}""#)), "its interval: {svg}");
    assert!(lines[row + 2..].iter().take(3).any(|l| l.starts_with("<circle") && l.contains(&format!(r#"fill="{colour}""#))), "its rating: {svg}");
    assert!(svg.contains(&format!(r#"fill="{colour}"/><text"#)) && svg.contains(">fake</text>"), "the legend: {svg}");
    assert!(!svg.contains("#000000"), "a player without a colour: {svg}");
}
