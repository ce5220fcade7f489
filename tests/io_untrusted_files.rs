//! Files the user points the commands at are untrusted: a net header declaring a huge
//! architecture, a NaN weight, a FIFO, `/dev/zero` or a directory where a file is expected,
//! a PGN without a single game. Each fails promptly, non-zero, with a message naming the
//! file and what is wrong; nothing aborts, blocks or fills memory.

use deepchess::tensor::Architecture as _;

mod common;

use deepchess::tensor::NetFile;
use deepchess::deepchess::model::{Arch, Net};
use deepchess::tensor::{Rng, WeightFile};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fresh folder removed when the guard drops, also when an assertion fails.
fn tmp_dir(name: &str) -> common::TempDir {
    common::TempDir::new(&format!("untrusted-{name}"))
}

/// Runs the binary with `stdin`, failing the test if it takes longer than `secs` (the child
/// is killed first, so a blocked command cannot hang the suite).
fn run_timed(args: &[&str], stdin: &str, secs: u64) -> Output {
    let mut child = common::command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_string();
    std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("deepchess {args:?} still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Runs, expects exit code 1 (a failure, not a crash) and returns stderr.
fn fails(args: &[&str]) -> String {
    let o = run_timed(args, "", 30);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "deepchess {args:?}: {err}");
    err
}

const A: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const B: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

fn compare(net: &Path) -> Vec<String> {
    vec!["compare".into(), "--net".into(), net.to_str().unwrap().into(), A.into(), B.into()]
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success())
}

#[test]
fn a_header_declaring_a_huge_architecture_is_refused_before_allocating() {
    let d = tmp_dir("huge");
    // Valid checksum, no tensors: before the fix the loader allocated every declared shape
    // (tens of gigabytes) and the process aborted.
    let huge = d.join("huge.dcw");
    let arch = "773-65536-65536-65536/65536-65536-2";
    let meta = vec![("kind".to_string(), "deepchess-net".to_string()), ("arch".to_string(), arch.to_string())];
    WeightFile { meta: meta.clone(), tensors: Vec::new() }.save(&huge).unwrap();
    let e = fails(&args(&compare(&huge)));
    assert!(e.contains("huge.dcw") && e.contains(arch) && e.contains("'tower.0.w' is missing"), "{e}");
    // The first tensor present but small: its shape is checked against the header.
    let small = Net::new(Arch::compact(), &mut Rng::new(1));
    let tensors = small.params.ids().map(|id| (small.params.name(id).to_string(), small.params.value(id).clone())).collect();
    let lying = d.join("lying.dcw");
    WeightFile { meta, tensors }.save(&lying).unwrap();
    let e = fails(&args(&compare(&lying)));
    assert!(e.contains("lying.dcw") && e.contains("'tower.0.w' should be 773×65536, but it is 773×32"), "{e}");
    // accuracy loads its nets the same way (before any dataset is read).
    let e = fails(&["accuracy", "--net", huge.to_str().unwrap(), "--data", d.to_str().unwrap()]);
    assert!(e.contains("huge.dcw") && e.contains("missing"), "{e}");
    // The UCI engine explains and falls back to the handcrafted evaluator.
    let o = run_timed(&["uci"], &format!("uci\nsetoption name EvalFile value {}\nisready\nquit\n", huge.display()), 30);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("no net loaded") && out.contains("missing") && out.contains("readyok"), "{out}");
}

/// Another system's net given where a DeepChess comparator is expected is refused by its
/// kind, with the file named, by every loader of comparators (the CLI's and the engine's).
#[test]
fn another_systems_net_is_refused_by_its_kind() {
    let nets = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets");
    for (file, kind) in [("dbn-classify.dcw", "dbn-net"), ("cnn.dcw", "cnn-net")] {
        let path = nets.join(file);
        let e = fails(&args(&compare(&path)));
        assert!(e.contains(file) && e.contains(&format!("kind '{kind}'")) && e.contains("not a DeepChess net"), "{e}");
        let e = fails(&["accuracy", "--net", path.to_str().unwrap(), "--data", nets.to_str().unwrap()]);
        assert!(e.contains(file) && e.contains("not a DeepChess net"), "{e}");
        let o = run_timed(&["uci"], &format!("uci\nsetoption name EvalFile value {}\nisready\nquit\n", path.display()), 30);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && out.contains("not a DeepChess net") && out.contains("readyok"), "{out}");
    }
    // A DeepChess net whose header has no kind (written by hand) is still read.
    let d = tmp_dir("nokind");
    let net = Net::new(Arch::compact(), &mut Rng::new(2));
    let tensors = net.params.ids().map(|id| (net.params.name(id).to_string(), net.params.value(id).clone())).collect();
    let plain = d.join("plain.dcw");
    WeightFile { meta: vec![("arch".to_string(), Arch::compact().describe())], tensors }.save(&plain).unwrap();
    let o = run_timed(&args(&compare(&plain)), "", 30);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn non_finite_weights_are_refused_naming_the_tensor_and_index() {
    let d = tmp_dir("nan");
    let net = Net::new(Arch::compact(), &mut Rng::new(2));
    let good = d.join("good.dcw");
    net.save(&good, &[]).unwrap();
    let ok = run_timed(&args(&compare(&good)), "", 30);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    for (value, shown) in [(f32::NAN, "NaN"), (f32::INFINITY, "inf"), (f32::NEG_INFINITY, "-inf")] {
        let mut wf = WeightFile::load(&good).unwrap();
        let m = &mut wf.tensors.iter_mut().find(|(n, _)| n == "tower.1.w").unwrap().1;
        m.data_mut()[37] = value; // row 1, column 5 of a 32-wide layer
        let bad = d.join("bad.dcw");
        std::fs::write(&bad, wf.to_bytes()).unwrap(); // a valid checksum over the bad value (save refuses it)
        let e = fails(&args(&compare(&bad)));
        assert!(e.contains("bad.dcw") && e.contains("'tower.1.w'") && e.contains(shown) && e.contains("index 37 (row 1, column 5)"), "{e}");
    }
}

#[test]
fn special_files_are_refused_promptly() {
    let d = tmp_dir("special");
    // A directory where a net file is expected.
    let e = fails(&args(&compare(&d)));
    assert!(e.contains("a directory, not a regular file"), "{e}");
    // A device that never ends.
    if Path::new("/dev/zero").exists() {
        let e = fails(&args(&compare(Path::new("/dev/zero"))));
        assert!(e.contains("/dev/zero") && e.contains("character device"), "{e}");
    }
    // A FIFO nobody writes to: opening it would block forever.
    let fifo = d.join("net.dcw");
    if mkfifo(&fifo) {
        let e = fails(&args(&compare(&fifo)));
        assert!(e.contains("net.dcw") && e.contains("FIFO"), "{e}");
        // The same for a dataset and an opening suite.
        let data = d.join("data");
        std::fs::create_dir_all(&data).unwrap();
        assert!(mkfifo(&data.join("valid.dcds")));
        let shipped = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
        let e = fails(&["accuracy", "--net", &shipped, "--data", data.to_str().unwrap()]);
        assert!(e.contains("valid.dcds") && e.contains("FIFO"), "{e}");
        let o = run_timed(&["datagen", "--engine", "none", "--out", d.join("g.pgn").to_str().unwrap(), "--openings", fifo.to_str().unwrap()], "", 30);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("FIFO"), "{e}");
    } else {
        eprintln!("mkfifo unavailable: FIFO cases skipped");
    }
    // A folder or a device as PGN input.
    let e = fails(&["data", "--pgn", d.to_str().unwrap(), "--out", d.join("out").to_str().unwrap()]);
    assert!(e.contains("a directory, not a PGN file"), "{e}");
    if Path::new("/dev/zero").exists() {
        let e = fails(&["data", "--pgn", "/dev/zero", "--out", d.join("out").to_str().unwrap()]);
        assert!(e.contains("/dev/zero") && e.contains("device"), "{e}");
    }
}

/// A FIFO is a legitimate PGN source: `data` streams it while a producer writes.
#[test]
fn data_streams_pgn_from_a_fifo() {
    let d = tmp_dir("fifo-pgn");
    let fifo = d.join("games.pgn");
    if !mkfifo(&fifo) {
        eprintln!("mkfifo unavailable: skipped");
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            for _ in 0..3 {
                f.write_all(b"[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n").unwrap();
            }
        })
    };
    let out = d.join("ds");
    let o = run_timed(&["data", "--pgn", fifo.to_str().unwrap(), "--out", out.to_str().unwrap(), "--skip-plies", "0", "--keep-captures"], "", 30);
    // On failure the writer may still wait for a reader: the assertion ends the test first.
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    writer.join().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("3 games read"));
}

/// `data` on input without a single game (empty, binary, UTF-16) fails naming the file and
/// writes nothing, so earlier datasets survive; a mix warns about the empty source.
#[test]
fn data_without_any_game_fails_and_writes_nothing() {
    let d = tmp_dir("no-games");
    let game = "[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n";
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(game.encode_utf16().flat_map(u16::to_le_bytes));
    let inputs: [(&str, Vec<u8>); 3] = [
        ("empty.pgn", Vec::new()),
        ("binary.pgn", std::fs::read(common::exe()).unwrap()[..4096].to_vec()),
        ("utf16.pgn", utf16),
    ];
    let out = d.join("ds");
    let good = d.join("good.pgn");
    std::fs::write(&good, game.repeat(2)).unwrap();
    for (name, bytes) in &inputs {
        let f = d.join(name);
        std::fs::write(&f, bytes).unwrap();
        let e = fails(&["data", "--pgn", f.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]);
        assert!(e.contains(&format!("no game found in {}", f.display())) && e.contains("nothing written"), "{e}");
        assert!(!out.exists(), "{name}: an output folder was created");
    }
    // Earlier datasets stay as they were.
    let ok = run_timed(&["data", "--pgn", good.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"], "", 30);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let before = std::fs::read(out.join("train.dcds")).unwrap();
    let empty = d.join("empty.pgn");
    fails(&["data", "--pgn", empty.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(std::fs::read(out.join("train.dcds")).unwrap(), before);
    // Some games in one source, none in another: built, the empty one named even when quiet.
    let o = run_timed(&["data", "--pgn", good.to_str().unwrap(), "--pgn", empty.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"], "", 30);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(e.contains(&format!("warning: no game found in {} (empty", empty.display())), "{e}");
}

/// A copy of the shipped net `file` with header key `key` set to `value` (the checksum is
/// the writer's, so the file is valid).
fn with_header(dir: &Path, file: &str, key: &str, value: &str) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets").join(file);
    let mut wf = WeightFile::load(&src).unwrap();
    wf.meta.retain(|(k, _)| k != key);
    wf.meta.push((key.to_string(), value.to_string()));
    let out = dir.join(format!("{key}.dcw"));
    wf.save(&out).unwrap();
    out
}

fn has_raw_control(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| (b < 0x20 && b != b'\n' && b != b'\t' && b != b'\r') || b == 0x7f)
}

/// Strings a file carries never reach the UCI stream or the terminal raw: a header's line
/// feed cannot add a `bestmove` or `readyok` line, and ESC, BEL and NUL are escaped in
/// `show`, in errors and in `info string`.
#[test]
fn strings_from_files_are_escaped_before_they_are_printed() {
    let d = tmp_dir("inject");
    // A variant that ends its line and says bestmove: the engine loads the net (it is valid).
    let net = with_header(&d, "neurochess.dcw", "variant", "ebnn\nbestmove h2h4\x1b[2J\x07");
    let o = run_timed(&["uci"], &format!("uci\nsetoption name Eval value neurochess\nsetoption name EvalFile value {}\nisready\nquit\n", net.display()), 30);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("bestmove")), "a header made a bestmove line:\n{out}");
    assert!(!has_raw_control(&o.stdout), "raw control bytes on the UCI stream:\n{out}");
    // A refused net's architecture cannot answer isready for the engine.
    let arch = with_header(&d, "compact.dcw", "arch", "773-32\nreadyok\x00");
    let o = run_timed(&["uci"], &format!("uci\nsetoption name EvalFile value {}\nisready\nquit\n", arch.display()), 30);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().filter(|l| l.trim() == "readyok").count(), 1, "{out}");
    assert!(!has_raw_control(&o.stdout), "{out}");
    // show prints the header escaped, one line per key.
    let o = run_timed(&["show", net.to_str().unwrap()], "", 30);
    assert!(o.status.success() && !has_raw_control(&o.stdout), "{}", String::from_utf8_lossy(&o.stdout));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("variant: ebnn\\x0abestmove h2h4\\x1b[2J\\x07") && !out.lines().any(|l| l.starts_with("bestmove")), "{out}");
    // An error quoting a tensor name from the file.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/compact.dcw");
    let mut wf = WeightFile::load(&src).unwrap();
    wf.tensors[0].0 = format!("{}\x1b]0;pwned\x07\0", wf.tensors[0].0);
    let bad = d.join("tensor.dcw");
    wf.save(&bad).unwrap();
    let o = run_timed(&args(&compare(&bad)), "", 30);
    assert!(!o.status.success() && !has_raw_control(&o.stderr), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run_timed(&["show", bad.to_str().unwrap()], "", 30);
    assert!(!has_raw_control(&o.stdout) && !has_raw_control(&o.stderr), "{}", String::from_utf8_lossy(&o.stdout));
}

/// Every file the program reads whole, streams or appends to is opened by the io floor
/// (`io::files`: regular files only, a bound named in the error; streams refuse devices;
/// appends refuse special files and, for the program's own files, links). A direct
/// `std::fs::read`, `read_to_string`, `File::open` or `OpenOptions` elsewhere in the crate's
/// code (tests aside) is how the journal and the curve's points came to read `/dev/zero`
/// until the OOM killer came.
#[test]
fn every_reader_goes_through_the_io_floor() {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(src.join("io")) && !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        // Unit tests make their fixtures as they like.
        let code = text.split("\n#[cfg(test)]\nmod tests").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap();
            for bad in ["fs::read(", "fs::read_to_string(", "File::open(", "OpenOptions::new(", "File::create("] {
                if line.contains(bad) {
                    found.push(format!("{}:{}: {bad}", f.strip_prefix(&src).unwrap().display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "files opened outside the io floor (use io::read_regular, open_stream, open_append or write_atomic):\n{}", found.join("\n"));
}

/// The walk of every command that reads a file the user names or the program keeps: a FIFO
/// in the file's place is refused at once (its `open` would block forever), and so is a
/// link to `/dev/zero` (it never ends), each naming the file.
#[cfg(unix)]
#[test]
fn every_reader_refuses_fifos_and_devices_promptly() {
    let d = tmp_dir("walk");
    let fifo = d.join("fifo");
    if !mkfifo(&fifo) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let zero = d.join("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let nets = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets");
    let net = nets.join("neurochess.dcw");
    let list = d.join("list.txt");
    std::fs::write(&list, format!("nc 1 {}\n", net.display())).unwrap();
    let hc = ["--engine", "builtin=handcrafted", "depth=1", "--engine", "builtin=handcrafted", "depth=1", "--games", "2"];
    for special in [&fifo, &zero] {
        let s = special.to_str().unwrap();
        let case = |name: &str| d.join(format!("{name}-{}", special.file_name().unwrap().to_str().unwrap()));
        // Folders whose own file (journal, points) is the special file.
        let tourn = case("tourn");
        std::fs::create_dir_all(&tourn).unwrap();
        std::os::unix::fs::symlink(special, tourn.join("journal.tsv")).unwrap();
        let curve = case("curve");
        std::fs::create_dir_all(&curve).unwrap();
        std::os::unix::fs::symlink(special, curve.join("points.tsv")).unwrap();
        let pgn = case("games.pgn");
        let mut commands: Vec<Vec<String>> = vec![
            vec!["compare".into(), "--net".into(), s.into(), "8/8/8/8/8/8/8/K6k w - - 0 1".into(), "8/8/8/8/8/8/8/K6k w - - 0 1".into()],
            vec!["show".into(), s.into()],
            vec!["tournament".into(), "--out".into(), tourn.display().to_string(), "--players".into(), "handcrafted,compact".into(), "--stockfish".into(), "none".into(), "--gnuchess".into(), "none".into()],
            vec!["match".into(), "--curve".into(), s.into(), "--engine".into(), "builtin=neurochess".into(), "depth=1".into(), "--engine".into(), "builtin=handcrafted".into(), "depth=1".into()],
            vec!["match".into(), "--curve".into(), list.display().to_string(), "--curve-out".into(), curve.display().to_string(), "--resume".into(), "--engine".into(), "builtin=neurochess".into(), "depth=1".into(), "--engine".into(), "builtin=handcrafted".into(), "depth=1".into()],
        ];
        // A curve point's net that is the special file.
        let list2 = case("list.txt");
        std::fs::write(&list2, format!("nc 1 {s}\n")).unwrap();
        commands.push(["match", "--curve", list2.to_str().unwrap(), "--engine", "builtin=neurochess", "depth=1", "--engine", "builtin=handcrafted", "depth=1"].iter().map(|x| x.to_string()).collect());
        let mut m: Vec<String> = ["match", "--openings", s, "--pgn", pgn.to_str().unwrap()].iter().map(|x| x.to_string()).collect();
        m.extend(hc.iter().map(|x| x.to_string()));
        commands.push(m);
        let mut m: Vec<String> = ["match", "--pgn", s].iter().map(|x| x.to_string()).collect();
        m.extend(hc.iter().map(|x| x.to_string()));
        commands.push(m);
        for c in &commands {
            let args: Vec<&str> = c.iter().map(String::as_str).collect();
            let t = Instant::now();
            let o = run_timed(&args, "", 30);
            let e = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{c:?} accepted {s}:\n{e}");
            assert!(e.contains("FIFO") || e.contains("character device") || e.contains("symbolic link"), "{c:?}: the error does not say what the file is:\n{e}");
            assert!(t.elapsed() < Duration::from_secs(20), "{c:?} took {:?}", t.elapsed());
        }
    }
}

/// `compare --suite` takes no positions: a stray word is a usage error (exit 2), not
/// silently ignored with exit 0.
#[test]
fn compare_suite_refuses_stray_arguments() {
    let o = run_timed(&["compare", "--suite", "bogus"], "", 30);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("'bogus'"), "{e}");
}

/// The subcommands `deepchess help` lists, and the systems `train --system` takes.
fn subcommands_and_systems() -> (Vec<String>, Vec<String>) {
    let o = run_timed(&["help"], "", 30);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let section = |title: &str| -> Vec<String> {
        let body = text.split(title).nth(1).unwrap_or("");
        body.lines().skip(1).take_while(|l| l.starts_with("  ")).filter_map(|l| l.split_whitespace().next().map(str::to_string)).collect()
    };
    (section("Subcommands:"), section("Systems ("))
}

/// The flags of a `--help` text whose value is a count (`--NAME N`, `K`, `J` or `D`).
fn count_flags(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (flag, value) = (w.next()?, w.next()?);
            (flag.starts_with("--") && ["N", "K", "J", "D"].contains(&value)).then(|| flag.to_string())
        })
        .collect()
}

/// Issue 79: `--searched-positions 1000000000000` ran the earlier phases, then aborted on a
/// 78 TB allocation and left a folder no resume could continue. Every count any flag of any
/// subcommand or system sets is now bounded before any work starts: a count beyond the bound
/// exits 2, naming the flag, and writes nothing; a count that fits the bound but not the
/// memory (the searched positions) is refused the same way.
#[test]
fn every_count_a_flag_sets_is_bounded_before_any_work_starts() {
    let d = tmp_dir("counts");
    let (commands, systems) = subcommands_and_systems();
    assert!(commands.len() >= 20 && systems.len() >= 5, "{commands:?} {systems:?}");
    let mut runs: Vec<Vec<String>> = Vec::new();
    for cmd in commands.iter().filter(|c| !["uci", "help", "version"].contains(&c.as_str())) {
        let help = String::from_utf8_lossy(&run_timed(&[cmd.as_str(), "--help"], "", 30).stdout).into_owned();
        for flag in count_flags(&help) {
            runs.push(vec![cmd.clone(), flag]);
        }
    }
    for sys in &systems {
        let help = String::from_utf8_lossy(&run_timed(&["train", "--system", sys, "--help"], "", 30).stdout).into_owned();
        let flags = count_flags(&help);
        assert!(!flags.is_empty(), "{sys}: no count flags in its help");
        for flag in flags {
            runs.push(vec!["train".into(), "--system".into(), sys.clone(), flag]);
        }
    }
    assert!(runs.len() >= 40, "only {} count flags found", runs.len());
    for (i, run) in runs.iter().enumerate() {
        let out = d.join(format!("out{i}"));
        let mut args = run.clone();
        args.push("1000000000000".into());
        if args[0] == "train" {
            args.extend(["--out".into(), out.to_str().unwrap().into()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_timed(&args, "", 30);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("{} 1000000000000: a count above", args[args.len() - if args[0] == "train" { 4 } else { 2 }])), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}: wrote {}", out.display());
    }
    // Within the bound but beyond the memory (about 300 GB of positions and searches):
    // refused, nothing written.
    let avail_gb = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| t.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse::<u64>().ok()).map(|kb| kb >> 20);
    if avail_gb.is_none_or(|g| g > 200) {
        return;
    }
    let out = d.join("searched");
    let o = run_timed(&["train", "--searched-positions", "999999999", "--profile", "tiny", "--out", out.to_str().unwrap()], "", 30);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--searched-positions 999999999 needs about") && err.contains("MB this machine has available"), "{err}");
    assert!(!out.exists());
}

/// Issue 79: the command line's own messages escape what a file says, as the UCI stream
/// does (a net header's line feeds put `readyok` and `bestmove a2a3` lines on stderr from
/// `escape` and `match`); a net given to a player that takes none is refused, not ignored.
#[test]
fn cli_messages_escape_headers_and_a_net_for_a_player_without_one_is_refused() {
    let d = tmp_dir("inject-cli");
    let shown = |o: &Output| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let injected = |o: &Output| shown(o).lines().any(|l| l.trim() == "readyok" || l.starts_with("bestmove a2a3"));
    let variant = with_header(&d, "neurochess.dcw", "variant", "ebnn\nreadyok\nbestmove a2a3");
    let arch = with_header(&d, "neurochess.dcw", "arch", "175-80-1\nreadyok\nbestmove a2a3");
    for (net, loads) in [(&variant, true), (&arch, false)] {
        let o = run_timed(&["escape", "--player", &format!("neurochess={}", net.display()), "--depth", "1"], "", 120);
        assert!(o.status.success() == loads && !injected(&o), "{}", shown(&o));
        let spec = format!("net={}", net.display());
        let o = run_timed(&["match", "--engine", "name=a", "builtin=neurochess", &spec, "depth=1", "--engine", "name=b", "builtin=handcrafted", "depth=1", "--games", "2"], "", 120);
        assert!(o.status.success() == loads && !injected(&o), "{}", shown(&o));
    }
    let compact = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/compact.dcw");
    for player in ["handcrafted", "gnu"] {
        let o = run_timed(&["escape", "--player", &format!("{player}={}", compact.display())], "", 60);
        assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
        assert!(shown(&o).contains(&format!("player {player} takes no net file")), "{}", shown(&o));
        let o = run_timed(&["bench", "--eval", player, "--net", compact.to_str().unwrap(), "--depth", "1"], "", 60);
        assert_eq!(o.status.code(), Some(2), "{}", shown(&o));
    }
}
