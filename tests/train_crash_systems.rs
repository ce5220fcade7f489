//! Crash safety of `deepchess train` for every trainable system (DeepChess, the DBNs of seed
//! 001, the CNN of seed 003, NeuroChess of seed 004; a new system joins by adding its tiny
//! run here): a run
//! killed and resumed with `--resume` ends with the same files, in every folder, as a run
//! never interrupted (nets, checkpoints, stacks, curves and run records byte for byte,
//! `log.csv` less its wall-clock columns, the tables of `results.md`), and no temporary.
//!
//! The writes of a run are learnt from the run itself (`DEEPCHESS_FAILPOINT=trace` names
//! each atomic rename), so the test knows no system's layout. Kills come two ways: the
//! failpoint (`before-rename:N`, an abort after the N-th write's temporary is synced and
//! before its rename, as `kill -9` there would leave it), one kill and one resume a run; and
//! SIGKILLs a few milliseconds after a process's k-th write, resumed again and again.
//! tests/train_crash.rs adds DeepChess's chains of failpoint kills aimed by phase.

#![cfg(unix)]

mod common;

use common::crash::{self, outputs, stderr};
use common::TempDir;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A system's tiny run: the arguments after `deepchess train`, `--out` and `--resume` aside.
struct System {
    name: String,
    args: Vec<String>,
    /// Its inputs' folder, kept while the test runs.
    _inputs: TempDir,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn deepchess_system() -> System {
    let dir = TempDir::new("crash-inputs-deepchess");
    let ds = common::sample_dataset(dir.path());
    System { name: "deepchess".into(), args: strings(&["--profile", "tiny", "--threads", "1", "--data", ds.to_str().unwrap()]), _inputs: dir }
}

/// Every head, both protocols, the 773-bit variant, two RBM epochs per layer (so a resumed
/// layer replays an epoch's shuffle).
fn dbn_system(splits: &str) -> System {
    let dir = TempDir::new("crash-inputs-dbn");
    let labels = common::sample_labels(dir.path());
    let args = ["--system", "dbn", "--profile", "tiny", "--threads", "1", "--labels", labels.to_str().unwrap(), "--configs", "small"];
    let mut args = strings(&args);
    args.extend(strings(&["--rbm-epochs", "2", "--max-positions", "800", "--splits", splits]));
    System { name: "dbn".into(), args, _inputs: dir }
}

fn cnn_system() -> System {
    let dir = TempDir::new("crash-inputs-cnn");
    let corpus = common::sample_corpus(dir.path());
    let args = ["--system", "cnn", "--profile", "tiny", "--threads", "1", "--corpus", corpus.to_str().unwrap(), "--valid-per-mille", "150"];
    System { name: "cnn".into(), args: strings(&args), _inputs: dir }
}

/// M, then V by both variants over two batches of self-play games (an episode stage, its
/// snapshots written after each batch).
fn neurochess_system() -> System {
    let dir = TempDir::new("crash-inputs-neurochess");
    let src = format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let args = ["--system", "neurochess", "--profile", "tiny", "--threads", "2", "--expert", &src];
    System { name: "neurochess".into(), args: strings(&args), _inputs: dir }
}

fn selfplay_system() -> System {
    let args = ["--system", "selfplay", "--profile", "tiny", "--threads", "2"];
    System { name: "selfplay".into(), args: strings(&args), _inputs: TempDir::new("crash-inputs-selfplay") }
}

fn train(sys: &System, out: &Path, resume: bool) -> Command {
    crash::train(&sys.args, out, resume)
}

/// An uninterrupted run and its writes in order (paths relative to its folder).
struct Reference {
    _dir: TempDir,
    run: PathBuf,
    writes: Vec<String>,
}

fn reference(sys: &System) -> Reference {
    let dir = TempDir::new(&format!("crash-reference-{}", sys.name));
    let run = dir.join("run");
    let o = train(sys, &run, false).env("DEEPCHESS_FAILPOINT", "trace").output().unwrap();
    assert!(o.status.success(), "{}: {}", sys.name, stderr(&o));
    let prefix = format!("{}/", run.display());
    let writes: Vec<String> = stderr(&o)
        .lines()
        // A progress line left open (no line end yet) may carry the trace after it.
        .filter_map(|l| l.split_once("failpoint rename ").map(|(_, w)| w))
        .map(|l| l.split_once(' ').unwrap().1.strip_prefix(&prefix).unwrap_or_else(|| panic!("a write outside the run folder: {l}")).to_string())
        .collect();
    assert!(writes.len() > 10 && writes.last().map(String::as_str) == Some("results.md"), "{}: {writes:?}", sys.name);
    Reference { _dir: dir, run, writes }
}

fn assert_same_outputs(sys: &System, reference: &Path, dir: &Path, what: &str) {
    crash::assert_same_outputs(reference, dir, &format!("{} {what}", sys.name));
}

/// The run killed just before its `target`-th write (1-based), then resumed to the end.
fn killed_once_and_resumed(sys: &System, r: &Reference, target: usize) {
    let dir = TempDir::new(&format!("crash-{}-{target}", sys.name));
    let run = dir.join("run");
    let o = train(sys, &run, false).env("DEEPCHESS_FAILPOINT", format!("before-rename:{target}")).output().unwrap();
    let want = format!("failpoint before-rename:{target}: aborting before the rename of {}/{}", run.display(), r.writes[target - 1]);
    assert!(!o.status.success() && stderr(&o).contains(&want), "{} kill at write {target} ({}): {}", sys.name, r.writes[target - 1], stderr(&o));
    let o = train(sys, &run, true).output().unwrap();
    assert!(o.status.success(), "{} resumed after a kill at write {target}: {}", sys.name, stderr(&o));
    assert_same_outputs(sys, &r.run, &run, &format!("killed before write {target} ({})", r.writes[target - 1]));
}

/// The first write of every file, and the write after every checkpoint (a kill between
/// two epochs, so the next one starts from the checkpoint: where an epoch that depends on
/// the earlier ones must be drawn again as the uninterrupted run drew it).
fn kinds_and_epochs(writes: &[String]) -> Vec<usize> {
    let mut seen = BTreeSet::new();
    let mut t = BTreeSet::new();
    for (i, w) in writes.iter().enumerate() {
        if seen.insert(w.clone()) {
            t.insert(i + 1);
        }
        if i > 0 && writes[i - 1].ends_with("checkpoint.dcw") {
            t.insert(i + 1);
        }
    }
    t.into_iter().collect()
}

fn killed_at(sys: System, targets: impl Fn(&[String]) -> Vec<usize>) -> usize {
    let r = reference(&sys);
    let targets = targets(&r.writes);
    let t = Instant::now();
    for &target in &targets {
        killed_once_and_resumed(&sys, &r, target);
    }
    eprintln!("{}: {} failpoint kills of {} writes survived ({:.1} s)", sys.name, targets.len(), r.writes.len(), t.elapsed().as_secs_f64());
    targets.len()
}

#[test]
fn dbn_killed_before_each_kind_of_write_and_after_each_epoch_resumes_identical() {
    let n = killed_at(dbn_system("games"), kinds_and_epochs);
    assert!(n >= 25, "{n}");
}

#[test]
fn neurochess_killed_before_each_kind_of_write_and_after_each_batch_resumes_identical() {
    let n = killed_at(neurochess_system(), kinds_and_epochs);
    assert!(n >= 10, "{n}");
}

#[test]
fn selfplay_killed_before_each_kind_of_write_and_after_each_batch_resumes_identical() {
    let n = killed_at(selfplay_system(), kinds_and_epochs);
    assert!(n >= 5, "{n}");
}

#[test]
fn cnn_killed_before_each_kind_of_write_and_after_each_epoch_resumes_identical() {
    let n = killed_at(cnn_system(), kinds_and_epochs);
    assert!(n >= 12, "{n}");
}

/// A system's tiny run by its name (the inputs each system trains on are made here).
fn tiny_system(name: &str) -> System {
    match name {
        "deepchess" => deepchess_system(),
        "dbn" => dbn_system("games"),
        "cnn" => cnn_system(),
        "neurochess" => neurochess_system(),
        "selfplay" => selfplay_system(),
        other => panic!("system {other} has no tiny run in tests/train_crash_systems.rs"),
    }
}

/// Issue 79: a self-play run with `--recipe author` could not be resumed (its stage's
/// optimizer never steps, and the checkpoint's step count 0 was refused). Every flag set a
/// system declares as changing what its checkpoints hold (`System::checkpoint_variants`,
/// beside its flags) is killed after its first checkpoint and after its last and resumed to
/// the uninterrupted run's files, so a recipe added there is tested without an edit here.
#[test]
fn every_checkpoint_variant_of_every_system_resumes_identical() {
    let mut runs = 0;
    for sys in deepchess::players::SYSTEMS {
        for variant in sys.checkpoint_variants {
            let mut s = tiny_system(sys.name);
            s.args.extend(strings(variant));
            s.name = format!("{}{}", sys.name, variant.join("_").replace([',', '/'], "+"));
            let n = killed_at(s, |w| {
                let after: Vec<usize> = (2..=w.len()).filter(|&i| w[i - 2].ends_with("checkpoint.dcw")).collect();
                vec![after[0], after[after.len() - 1]]
            });
            assert!(n >= 1, "{}: no kill after a checkpoint", sys.name);
            runs += 1;
        }
    }
    assert!(runs >= 4, "only {runs} variants declared");
}

/// Every write of every system's run, one kill each.
#[test]
#[ignore = "minutes: two processes per write of every system's run"]
fn every_system_killed_before_every_write_resumes_identical() {
    for sys in [dbn_system("positions,games"), cnn_system(), deepchess_system(), neurochess_system(), selfplay_system()] {
        killed_at(sys, |w| (1..=w.len()).collect());
    }
}

/// SIGKILLs: each process is killed `delay` after its `step`-th write (so kills land inside
/// epochs and inside writes, wherever timing puts them), resumed, killed again, until a
/// process finishes; then the files are compared. Returns the kills that landed.
fn sigkilled(sys: &System, r: &Reference, step: usize, delays_us: &[u64]) -> usize {
    let dir = TempDir::new(&format!("crash-sigkill-{}", sys.name));
    let run = dir.join("run");
    let mut kills = 0;
    for (i, &delay) in delays_us.iter().cycle().enumerate().take(200) {
        let mut child = train(sys, &run, i > 0).env("DEEPCHESS_FAILPOINT", "trace").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let err = BufReader::new(child.stderr.take().unwrap());
        let mut renames = 0;
        for line in err.lines().map_while(Result::ok) {
            renames += line.contains("failpoint rename ") as usize;
            if renames == step {
                std::thread::sleep(Duration::from_micros(delay));
                let _ = child.kill();
                break;
            }
        }
        let status = child.wait().unwrap();
        if status.signal() != Some(9) {
            assert!(status.success(), "{} process {i} failed", sys.name);
            break;
        }
        kills += 1;
    }
    let o = train(sys, &run, true).output().unwrap();
    assert!(o.status.success(), "{}: {}", sys.name, stderr(&o));
    assert_same_outputs(sys, &r.run, &run, &format!("after {kills} SIGKILLs"));
    kills
}

#[test]
fn dbn_cnn_and_neurochess_sigkilled_again_and_again_resume_identical() {
    for (sys, step) in [(dbn_system("positions,games"), 7), (cnn_system(), 3), (neurochess_system(), 5)] {
        let r = reference(&sys);
        let kills = sigkilled(&sys, &r, step, &[0, 300, 1500, 4000, 50, 800]);
        eprintln!("{}: {kills} SIGKILLs survived ({} writes in the run)", sys.name, r.writes.len());
        assert!(kills >= r.writes.len() / step / 3, "{}: only {kills} kills landed", sys.name);
    }
}

/// A checkpoint is checked against its run as a net is (issue 45: one without an optimizer
/// tensor resumed silently, and `epochs_done=999999` wrote a "finished" net after one
/// epoch): every crafted checkpoint below, its checksum valid, is refused by `--resume` with
/// the part named and nothing written; the true one then resumes to the uninterrupted run.
#[test]
fn crafted_checkpoints_are_refused_for_every_system() {
    use deepchess::tensor::{Matrix, WeightFile};
    for sys in [dbn_system("games"), cnn_system(), deepchess_system()] {
        let r = reference(&sys);
        // A kill between two epochs of a stage whose optimizer keeps per-parameter state.
        let after_checkpoint: Vec<usize> = (1..r.writes.len()).filter(|&i| r.writes[i - 1].ends_with("checkpoint.dcw")).map(|i| i + 1).collect();
        let mut found = None;
        for &target in &after_checkpoint {
            let dir = TempDir::new(&format!("crash-crafted-{}", sys.name));
            let run = dir.join("run");
            let o = train(&sys, &run, false).env("DEEPCHESS_FAILPOINT", format!("before-rename:{target}")).output().unwrap();
            assert!(!o.status.success());
            let ck = run.join(&r.writes[target - 2]);
            let wf = WeightFile::load(&ck).unwrap();
            if wf.tensors.iter().any(|(n, _)| n.starts_with("opt.") && n.ends_with(".0") && n != "opt.lr") {
                found = Some((dir, run, ck, wf));
                break;
            }
        }
        let (_dir, run, ck, good) = found.unwrap_or_else(|| panic!("{}: no checkpoint with optimizer state", sys.name));
        let stage = good.meta("stage").unwrap().to_string();
        let per_param = good.tensors.iter().find(|(n, _)| n.starts_with("opt.") && n.ends_with(".1")).unwrap().0.clone();
        let net_tensor = good.tensors.iter().find(|(n, _)| n.starts_with("net.")).unwrap().0.clone();
        let before = outputs(&run);
        type Craft = Box<dyn Fn(&mut WeightFile)>;
        let set_meta = |k: &'static str, v: &'static str| -> Craft { Box::new(move |w: &mut WeightFile| w.meta.iter_mut().filter(|(m, _)| m == k).for_each(|(_, x)| *x = v.into())) };
        let p = per_param.clone();
        let p2 = per_param.clone();
        let nt = net_tensor.clone();
        let cases: Vec<(&str, Craft, String)> = vec![
            ("epochs_done beyond the schedule", set_meta("epochs_done", "999999"), "epochs_done '999999'".into()),
            ("epochs_done 0", set_meta("epochs_done", "0"), "epochs_done '0'".into()),
            ("epochs_done not a number", set_meta("epochs_done", "two"), "epochs_done 'two'".into()),
            ("an optimizer tensor removed", Box::new(move |w: &mut WeightFile| w.tensors.retain(|(n, _)| *n != p)), format!("'{}' is missing", &per_param[4..])),
            (
                "an optimizer tensor of another shape",
                Box::new(move |w: &mut WeightFile| w.tensors.iter_mut().filter(|(n, _)| *n == p2).for_each(|(_, m)| *m = Matrix::zeros(1, 3))),
                "has shape 1x3".into(),
            ),
            ("an optimizer tensor too many", Box::new(|w: &mut WeightFile| w.tensors.push(("opt.extra.0".into(), Matrix::zeros(1, 1)))), "'extra.0' does not belong".into()),
            ("the learning rate removed", Box::new(|w: &mut WeightFile| w.tensors.retain(|(n, _)| n != "opt.lr")), "'lr' is missing".into()),
            (
                "a negative learning rate",
                Box::new(|w: &mut WeightFile| w.tensors.iter_mut().filter(|(n, _)| n == "opt.lr").for_each(|(_, m)| *m = Matrix::filled(1, 1, -1.0))),
                "learning rate >= 0".into(),
            ),
            ("a net tensor removed", Box::new(move |w: &mut WeightFile| w.tensors.retain(|(n, _)| *n != nt)), "is missing".into()),
        ];
        for (what, craft, needle) in cases {
            let mut wf = WeightFile { meta: good.meta.clone(), tensors: good.tensors.clone() };
            craft(&mut wf);
            wf.save(&ck).unwrap();
            let crafted = std::fs::read(&ck).unwrap();
            let o = train(&sys, &run, true).output().unwrap();
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{} ({stage}), {what}: accepted\n{err}", sys.name);
            assert!(err.contains(&needle) && err.contains("checkpoint.dcw"), "{} ({stage}), {what}: {err}", sys.name);
            let after = outputs(&run);
            let changed: Vec<&String> = after.keys().filter(|k| !k.ends_with("checkpoint.dcw") && before.get(*k) != after.get(*k)).collect();
            assert!(changed.is_empty(), "{} ({stage}), {what}: wrote {changed:?}", sys.name);
            assert_eq!(std::fs::read(&ck).unwrap(), crafted, "{}: the refused checkpoint was rewritten", sys.name);
        }
        WeightFile { meta: good.meta.clone(), tensors: good.tensors.clone() }.save(&ck).unwrap();
        let o = train(&sys, &run, true).output().unwrap();
        assert!(o.status.success(), "{}: {}", sys.name, stderr(&o));
        assert_same_outputs(&sys, &r.run, &run, "resumed from the true checkpoint after the crafted ones");
    }
}

/// Issue 61: a `log.csv` cut inside its last line (a copy cut short, a full disk) lost that
/// row on resume: the rows of the epoch or batch a checkpoint closes are logged before it, so
/// the resume started after them and never wrote them again. The checkpoint now carries its
/// unit's rows (less the wall clock): the torn line is dropped with a note and the rows come
/// back, the log equal to the uninterrupted run's. Cut after the first checkpoint (for
/// NeuroChess M's last epoch: a stage finished) and after the run's last one.
#[test]
fn a_log_cut_mid_line_is_made_whole_on_resume() {
    for sys in [neurochess_system(), cnn_system(), dbn_system("games")] {
        let r = reference(&sys);
        let after: Vec<usize> = (2..=r.writes.len()).filter(|&i| r.writes[i - 2].ends_with("checkpoint.dcw")).collect();
        for target in [after[0], after[after.len() - 1]] {
            let dir = TempDir::new(&format!("crash-log-cut-{}", sys.name));
            let run = dir.join("run");
            let o = train(&sys, &run, false).env("DEEPCHESS_FAILPOINT", format!("before-rename:{target}")).output().unwrap();
            assert!(!o.status.success(), "{}: not killed at write {target}", sys.name);
            let log = run.join(&r.writes[target - 2]).with_file_name("log.csv");
            let text = std::fs::read_to_string(&log).unwrap();
            let body = text.trim_end_matches('\n');
            let last = body.rfind('\n').unwrap() + 1;
            std::fs::write(&log, &text[..last + (body.len() - last) / 2]).unwrap();
            let o = train(&sys, &run, true).output().unwrap();
            let err = stderr(&o);
            assert!(o.status.success(), "{}: {err}", sys.name);
            assert!(err.contains(&format!("{}: its last line is cut short", log.display())), "{}: no note of the cut line\n{err}", sys.name);
            assert_same_outputs(&sys, &r.run, &run, &format!("log.csv cut after {}", r.writes[target - 2]));
        }
    }
}
