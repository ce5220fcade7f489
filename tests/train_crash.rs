//! Crash safety of `deepchess train`: a tiny-profile run killed again and again and resumed
//! with `--resume` each time ends with the same nets, curves and log as a run never
//! interrupted, and leaves no temporary file behind. Kills come two ways: the failpoint
//! (`DEEPCHESS_FAILPOINT=before-rename:N`, an abort just before the N-th atomic rename, the
//! temporary written and synced) aimed at chosen writes of the run, and SIGKILL in every
//! phase, which lands wherever the run happens to be (inside an epoch, inside a write).

#![cfg(unix)]

mod common;

use common::crash::{self, stderr};
use common::TempDir;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

fn train(ds: &Path, out: &Path, resume: bool) -> Command {
    let args = ["--profile", "tiny", "--threads", "1", "--data", ds.to_str().unwrap()];
    crash::train(&args.map(String::from), out, resume)
}

/// The sample dataset and an uninterrupted run on it, shared by the tests that run at the
/// same time (the run takes as long as the rest of a test), removed when the last drops it.
struct Reference {
    _dir: TempDir,
    ds: PathBuf,
    run: PathBuf,
    seconds: Duration,
}

fn reference() -> Arc<Reference> {
    static SHARED: Mutex<Weak<Reference>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = shared.upgrade() {
        return r;
    }
    let dir = TempDir::new("train-crash-reference");
    let ds = common::sample_dataset(dir.path());
    let run = dir.join("run");
    let t = Instant::now();
    let o = train(&ds, &run, false).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = Arc::new(Reference { seconds: t.elapsed(), _dir: dir, ds, run });
    *shared = Arc::downgrade(&r);
    r
}

fn assert_same_outputs(reference: &Path, dir: &Path) {
    crash::assert_same_outputs(reference, dir, "deepchess");
    let got = crash::outputs(dir);
    assert!(got.contains_key("log.csv") && got.contains_key("compact.dcw") && got.contains_key("results.md"));
}

/// The file whose write a failpoint abort of process `pid` interrupted: its temporary
/// `.NAME.PID.NONCE.tmp` is still there.
fn interrupted_write(dir: &Path, pid: u32) -> String {
    let suffix = format!(".{pid}.");
    let hits: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && n.contains(&suffix))
        .map(|n| n[1..n.find(&suffix).unwrap()].to_string())
        .collect();
    assert_eq!(hits.len(), 1, "one temporary of process {pid}: {hits:?}");
    hits[0].clone()
}

/// The atomic writes of an uninterrupted tiny run, in order, read off its log: the record of
/// settings; log.csv, curves.svg and checkpoint.dcw after every epoch; each phase's net after
/// its last epoch (a pretrained tower after each of its layers); the summary.
fn expected_writes(log: &str) -> Vec<String> {
    let phases: Vec<&str> = log.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    let mut w = vec!["run.txt"];
    for (i, phase) in phases.iter().enumerate() {
        w.extend(["log.csv", "curves.svg", "checkpoint.dcw"]);
        if phases.get(i + 1) != Some(phase) {
            w.push(match *phase {
                p if p.starts_with("pos2vec.") => "pos2vec.dcw",
                "deepchess" => "deepchess.dcw",
                "distill.tower" => "distilled-tower.dcw",
                "distill.full" => "distilled.dcw",
                "compact" => "compact.dcw",
                "value" => "value-student.dcw",
                p if p.starts_with("scratch.pos2vec.") => "scratch-pos2vec.dcw",
                "scratch.siamese" => "scratch.dcw",
                p => panic!("a phase this test does not know: {p}"),
            });
        }
    }
    w.push("results.md");
    w.into_iter().map(String::from).collect()
}

/// The uninterrupted run, then the same run killed just before each of the writes at
/// `targets` (1-based positions in `expected_writes`, ascending), resumed after each kill
/// and finally to the end. A resumed process first redoes what the kill cut short: the
/// epoch whose log.csv, curves.svg or checkpoint.dcw was hit (from its log.csv on), or else
/// the very write that was hit; the failpoint's count is aimed from there. Returns the
/// number of kills, each checked to have hit the write it aimed at.
fn killed_before_writes(name: &str, targets: impl Fn(&[String]) -> Vec<usize>) -> usize {
    let shared = reference();
    let (ds, reference) = (&shared.ds, &shared.run);
    let dir = TempDir::new(name);
    let run = dir.join("run");
    let writes = expected_writes(&std::fs::read_to_string(reference.join("log.csv")).unwrap());
    let targets = targets(&writes);
    assert!(targets.windows(2).all(|w| w[0] < w[1]) && targets.iter().all(|&t| (1..=writes.len()).contains(&t)));

    // Where the previous process's renames started, in `writes` (0 for the first process).
    let mut redo_start = 0;
    for (i, &target) in targets.iter().enumerate() {
        let k = target - redo_start;
        let child = train(ds, &run, i > 0)
            .env("DEEPCHESS_FAILPOINT", format!("before-rename:{k}"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let o = child.wait_with_output().unwrap();
        assert!(!o.status.success() && stderr(&o).contains(&format!("failpoint before-rename:{k}: aborting")), "not killed: {}", stderr(&o));
        let hit = interrupted_write(&run, pid);
        assert_eq!(hit, writes[target - 1], "kill {} aimed at write {target}", i + 1);
        let redone = match hit.as_str() {
            "curves.svg" => 1,
            "checkpoint.dcw" => 2,
            _ => 0,
        };
        redo_start = target - 1 - redone;
    }
    let o = train(ds, &run, true).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_outputs(reference, &run);
    targets.len()
}

/// A kill before the first write of every kind of file (the record, the log, the curves, the
/// checkpoint, every phase's net, the summary), and one in a stage's second epoch, which
/// resumes from the stage's own checkpoint.
#[test]
fn killed_before_each_kind_of_write_and_resumed_the_run_ends_identical() {
    let kills = killed_before_writes("train-crash-kinds", |writes| {
        let mut t: Vec<usize> = (0..writes.len()).filter(|&i| !writes[..i].contains(&writes[i])).map(|i| i + 1).collect();
        // Two checkpoints three writes apart belong to one stage: aim at the log between.
        let checkpoints: Vec<usize> = (0..writes.len()).filter(|&i| writes[i] == "checkpoint.dcw").collect();
        t.push(checkpoints.windows(2).find(|w| w[1] == w[0] + 3).map(|w| w[0] + 2).unwrap());
        t.sort();
        t.dedup();
        t
    });
    eprintln!("{kills} failpoint kills survived");
    assert!(kills >= 12, "{kills}");
}

/// Every write of the run, one kill each.
#[test]
#[ignore = "a minute or more: one process per write of the run"]
fn killed_before_every_write_and_resumed_the_run_ends_identical() {
    let kills = killed_before_writes("train-crash-every", |writes| (1..=writes.len()).collect());
    eprintln!("{kills} failpoint kills survived");
}

/// The phases of the rows of a run's log so far.
fn logged(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("log.csv")).unwrap_or_default();
    text.lines().skip(1).map(|l| l.split(',').next().unwrap().to_string()).collect()
}

/// SIGKILL a few milliseconds after the process has logged an epoch of each phase in turn, so
/// that the kills spread over every phase whatever the machine's speed and load; where in
/// the phase they land (inside an epoch, inside a write) is left to timing. Then one resume
/// to the end.
#[test]
fn sigkilled_in_every_phase_and_resumed_the_run_ends_identical() {
    let shared = reference();
    let (ds, reference) = (&shared.ds, &shared.run);
    let dir = TempDir::new("train-crash-sigkill");
    let run = dir.join("run");
    let points = [
        ("", 60),
        ("pos2vec.1", 40),
        ("deepchess", 150),
        ("distill.tower", 20),
        ("distill.full", 90),
        ("compact", 60),
        ("scratch.pos2vec.1", 10),
        ("scratch.siamese", 30),
    ];
    let mut kills = Vec::new();
    'points: for (i, (phase, ms)) in points.into_iter().enumerate() {
        let mut child: Child = train(ds, &run, i > 0).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        while !phase.is_empty() && !logged(&run).iter().any(|p| p == phase) {
            if child.try_wait().unwrap().is_some() {
                break 'points; // finished before the point
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(ms));
        child.kill().unwrap();
        if child.wait().unwrap().signal() != Some(9) {
            break; // finished before the kill
        }
        let rows = logged(&run);
        kills.push(format!("{ms} ms after {}: {} epochs logged, the last of {}", if phase.is_empty() { "the start" } else { phase }, rows.len(), rows.last().map_or("none", String::as_str)));
    }
    let o = train(ds, &run, true).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!("{} SIGKILLs survived (uninterrupted run {:.1} s): {kills:#?}", kills.len(), shared.seconds.as_secs_f64());
    assert!(kills.len() >= 6, "too few kills landed: {kills:?}");
    assert_same_outputs(reference, &run);
}
