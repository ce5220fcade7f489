//! Crash safety of `deepchess train` for every trainable system the program lists (`train
//! --help`; each system's smoke run, its inputs written by the program itself, so a new
//! system is covered by its registry line alone): a run killed and resumed with `--resume`
//! ends with the same files, in every folder, as a run never interrupted (nets, checkpoints,
//! stacks, curves and run records byte for byte, `log.csv` less its wall-clock columns, the
//! tables of `results.md`), and no temporary.
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
use common::systems::{self, Smoke};
use common::TempDir;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A system's smoke run (its arguments and its inputs' folder).
type System = Smoke;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Runs `f` on every system at once (each on a thread of its own: the runs are small
/// processes), failing when any fails.
fn on_every_system(f: impl Fn(System) + Sync) {
    let names = systems::names();
    std::thread::scope(|scope| {
        for name in &names {
            let f = &f;
            scope.spawn(move || f(systems::smoke(name)));
        }
    });
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

/// The first write of every file, and the write after checkpoints (a kill between two
/// epochs, so the next one starts from the checkpoint: where an epoch that depends on the
/// earlier ones must be drawn again as the uninterrupted run drew it), at most [`MAX_KILLS`]
/// in all: every first write, then kills after checkpoints spread evenly over the run.
fn kinds_and_epochs(writes: &[String]) -> Vec<usize> {
    let mut seen = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    let mut epochs = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        if seen.insert(w.clone()) {
            kinds.insert(i + 1);
        }
        if i > 0 && writes[i - 1].ends_with("checkpoint.dcw") && !kinds.contains(&(i + 1)) {
            epochs.push(i + 1);
        }
    }
    let room = MAX_KILLS.saturating_sub(kinds.len()).min(epochs.len());
    let mut t = kinds;
    t.extend((0..room).map(|k| epochs[k * epochs.len() / room]));
    t.into_iter().collect()
}

/// The kills of one system's run in [`kinds_and_epochs`]: each costs about a run, and the
/// test covers every system.
const MAX_KILLS: usize = 16;

/// Each of the targets' kills (independent runs) on two threads: a run of many writes is
/// the longest part of the test, and its kills need not wait for each other.
fn killed_at(sys: System, targets: impl Fn(&[String]) -> Vec<usize>) -> usize {
    let r = reference(&sys);
    let targets = targets(&r.writes);
    let t = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(&target) = targets.get(next.fetch_add(1, std::sync::atomic::Ordering::SeqCst)) {
                    killed_once_and_resumed(&sys, &r, target);
                }
            });
        }
    });
    eprintln!("{}: {} failpoint kills of {} writes survived ({:.1} s)", sys.name, targets.len(), r.writes.len(), t.elapsed().as_secs_f64());
    targets.len()
}

/// Every system, killed before the first write of each file and after each checkpoint.
#[test]
fn every_system_killed_before_each_kind_of_write_and_after_each_epoch_resumes_identical() {
    on_every_system(|sys| {
        let name = sys.name.clone();
        let n = killed_at(sys, kinds_and_epochs);
        assert!(n >= 3, "{name}: only {n} kills");
    });
}

/// Issue 79: a self-play run with `--recipe author` could not be resumed (its stage's
/// optimizer never steps, and the checkpoint's step count 0 was refused). Every flag set a
/// system declares as changing what its checkpoints hold (`System::checkpoint_variants`,
/// beside its flags) is killed after its first checkpoint and after its last and resumed to
/// the uninterrupted run's files, so a recipe added there is tested without an edit here.
#[test]
fn every_checkpoint_variant_of_every_system_resumes_identical() {
    let (names, mut runs) = (systems::names(), 0);
    for sys in deepchess::players::SYSTEMS.iter().filter(|s| names.iter().any(|n| n == s.name)) {
        for variant in sys.checkpoint_variants {
            let mut s = systems::smoke(sys.name);
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
    assert!(runs >= 4 || systems::narrowed(), "only {runs} variants declared");
}

/// Every write of every system's run, one kill each.
#[test]
#[ignore = "minutes: two processes per write of every system's run"]
fn every_system_killed_before_every_write_resumes_identical() {
    for name in systems::names() {
        killed_at(systems::smoke(&name), |w| (1..=w.len()).collect());
    }
}

/// SIGKILLs: each process is killed `delay` after its `step`-th write (so kills land inside
/// epochs and inside writes, wherever timing puts them), resumed, killed again, until a
/// process finishes or `processes` have run; then one resume to the end and the files are
/// compared. Returns the kills that landed.
fn sigkilled(sys: &System, r: &Reference, step: usize, delays_us: &[u64], processes: usize) -> usize {
    let dir = TempDir::new(&format!("crash-sigkill-{}", sys.name));
    let run = dir.join("run");
    let mut kills = 0;
    for (i, &delay) in delays_us.iter().cycle().enumerate().take(processes) {
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

/// Every system, a SIGKILL after about every tenth of its run's writes (at most 20 kills: a
/// resumed run that writes much before its next unit of work would be killed again and again).
#[test]
fn every_system_sigkilled_again_and_again_resumes_identical() {
    on_every_system(|sys| {
        let r = reference(&sys);
        let step = (r.writes.len() / 10).max(3);
        let kills = sigkilled(&sys, &r, step, &[0, 300, 1500, 4000, 50, 800], 20);
        eprintln!("{}: {kills} SIGKILLs survived ({} writes in the run)", sys.name, r.writes.len());
        assert!(kills >= r.writes.len() / step / 3, "{}: only {kills} kills landed", sys.name);
    });
}

/// A checkpoint is checked against its run as a net is (issue 45: one without an optimizer
/// tensor resumed silently, and `epochs_done=999999` wrote a "finished" net after one
/// epoch): every crafted checkpoint below, its checksum valid, is refused by `--resume` with
/// the part named and nothing written; the true one then resumes to the uninterrupted run.
/// On every system whose run has an epoch stage with such an optimizer.
#[test]
fn crafted_checkpoints_are_refused_for_every_system() {
    use deepchess::tensor::{Matrix, WeightFile};
    on_every_system(|sys| {
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
            if wf.meta("epochs_done").is_some() && wf.tensors.iter().any(|(n, _)| n.starts_with("opt.") && n.ends_with(".0") && n != "opt.lr") {
                found = Some((dir, run, ck, wf));
                break;
            }
        }
        let Some((_dir, run, ck, good)) = found else {
            eprintln!("{}: no epoch stage with optimizer state: no checkpoint to craft", sys.name);
            return;
        };
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
    });
}

/// Issue 61: a `log.csv` cut inside its last line (a copy cut short, a full disk) lost that
/// row on resume: the rows of the epoch or batch a checkpoint closes are logged before it, so
/// the resume started after them and never wrote them again. The checkpoint now carries its
/// unit's rows (less the wall clock): the torn line is dropped with a note and the rows come
/// back, the log equal to the uninterrupted run's. Cut after the first checkpoint (for
/// NeuroChess M's last epoch: a stage finished) and after the run's last one; every system.
#[test]
fn a_log_cut_mid_line_is_made_whole_on_resume_for_every_system() {
    on_every_system(|sys| {
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
    });
}
