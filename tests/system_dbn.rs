//! Seed 001's deep belief networks end to end: a labelled set (engine scores stood in for by
//! material, so the test needs no engine) through `train --system dbn`, resume, refusals,
//! and the trained nets playing through the registry.

use deepchess::tensor::Architecture as _;

mod common;

use deepchess::tensor::NetFile;
use common::TempDir;
use std::path::Path;

fn train(args: &[&str]) -> std::process::Output {
    common::command().arg("train").args(args).output().unwrap()
}

#[test]
fn tiny_run_trains_every_head_resumes_and_plays() {
    let dir = TempDir::new("dbn-train");
    let labels = common::sample_labels(dir.path());
    let out = dir.join("run");
    let (l, o) = (labels.to_str().unwrap(), out.to_str().unwrap());
    let base = ["--system", "dbn", "--profile", "tiny", "--labels", l, "--out", o, "--configs", "small", "--max-positions", "1500"];
    let r = train(&base);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    for row in ["| 772-100-100-100 | classify |", "| 772-100-100-100 | regress |", "| 772-100-100-100 | quantized |", "| 773-100-100-100 | quantized |"] {
        assert!(md.contains(row), "{row} missing:\n{md}");
    }
    let net = out.join("games-100pm/772-100-100-100/quantized.dcw");
    for f in [&net, &out.join("positions-f0of10/772-100-100-100/regress.dcw"), &out.join("games-100pm/772-100-100-100/log.csv")] {
        assert!(f.is_file(), "{} missing", f.display());
    }
    let log = std::fs::read_to_string(out.join("games-100pm/772-100-100-100/log.csv")).unwrap();
    assert!(log.contains("rbm.0,1,") && log.contains("rbm.0.fe_gap,1,") && log.contains("finetune.regress,2,"), "{log}");
    // Each fine-tuning epoch logs the share of clipped steps and the mean norm before clipping.
    let norm = log.lines().find(|l| l.starts_with("finetune.regress.grad_norm,1,")).expect("grad_norm logged");
    let norm: f64 = norm.split(',').nth(3).unwrap().parse().unwrap();
    assert!(norm.is_finite() && norm > 0.0, "{norm}");
    assert!(log.contains("finetune.regress.clipped,1,"), "{log}");
    // The schedule keeps the form runs made before the clip setting recorded (they resume).
    let txt = std::fs::read_to_string(out.join("run.txt")).unwrap();
    assert!(txt.contains("fine=FineCfg { epochs: 2, batch: 32, lr: 0.02, decay: 1.0, momentum: 0.9, dropout: 0.5 }\n") && txt.contains("clip_norm=5.0\n"), "{txt}");

    // A finished run resumes to the same table without training again.
    let before = std::fs::metadata(&net).unwrap().modified().unwrap();
    let mut again = base.to_vec();
    again.push("--resume");
    let r = train(&again);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(std::fs::metadata(&net).unwrap().modified().unwrap(), before, "a finished net was trained again");
    let md2 = std::fs::read_to_string(out.join("results.md")).unwrap();
    // The resumed invocation trained nothing, but the run's time is still there, from the logs.
    let logged = |s: &str| -> f64 { s.split("every invocation of the run: ").nth(1).and_then(|x| x.split(' ').next()).unwrap().parse().unwrap() };
    assert_eq!(logged(&md), logged(&md2));
    let table = |s: &str| s.lines().filter(|l| l.starts_with("| 77")).map(String::from).collect::<Vec<_>>();
    assert_eq!(table(&md), table(&md2));

    // Another profile or seed on resume is refused, naming the setting.
    let mut other = again.clone();
    other.extend(["--seed", "2"]);
    let r = train(&other);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("--seed"), "{err}");
    // So is another plan (issue 45: a resume with other heads, splits, folds or side bit
    // rewrote results.md without the earlier rows), naming both values; the table is kept.
    for (extra, flag, was) in [
        (vec!["--heads", "classify"], "--heads", "classify,regress,quantized"),
        (vec!["--splits", "games"], "--splits / --folds", "positions-f0of10,games-100pm"),
        (vec!["--folds", "2"], "--splits / --folds", "positions-f0of10,games-100pm"),
        (vec!["--side-bit", "none"], "--side-bit", "quantized"),
        (vec!["--configs", "small,medium"], "--configs", "[100, 100, 100]"),
        (vec!["--clip-norm", "none"], "--clip-norm", "5.0"),
    ] {
        let mut a = again.clone();
        a.extend(extra.iter().copied());
        let r = train(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success() && err.contains(&format!("{flag}: this run was made with '{was}'")), "{extra:?}: {err}");
        assert_eq!(table(&std::fs::read_to_string(out.join("results.md")).unwrap()), table(&md));
    }
    // A net that diverges stops with the epoch and a way out instead of training on NaN.
    let wild = dir.join("wild");
    let mut w: Vec<&str> = base.iter().map(|&a| if a == o { wild.to_str().unwrap() } else { a }).collect();
    w.extend(["--heads", "classify", "--splits", "games", "--side-bit", "none", "--rbm-epochs", "0", "--lr", "1e30", "--clip-norm", "none"]);
    let r = train(&w);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("diverged in epoch 1") && err.contains("--clip-norm 5"), "{err}");
    // Without --resume the folder is not overwritten.
    let r = train(&base);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("--resume"));

    // The net plays in the shared search behind the scalar-evaluator adapter.
    let (dbn, _) = deepchess::dbn::model::Dbn::load(&net).unwrap();
    let comparator = deepchess::dbn::infer::comparator(&dbn, "dbn-quantized", deepchess::tensor::Kernel::best());
    let mut searcher = deepchess::search::Searcher::new(comparator, 1);
    let r = searcher.search(
        &deepchess::chess::Game::default(),
        &deepchess::search::Limits::depth(3),
        std::time::Duration::ZERO,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        &mut |_| {},
    );
    assert!(r.best.is_some());
    // Through the registry: the player takes a file of its own head, and names the other.
    use deepchess::players::find;
    use deepchess::search::PlayerSettings;
    let mut s = PlayerSettings::new(1);
    s.net = Some(net.clone());
    assert!(find("dbn-quantized").unwrap().build(&s).is_ok());
    let e = find("dbn-classify").unwrap().build(&s).err().expect("a quantized net is not a classify one").to_string();
    assert!(e.contains("a quantized net, not a classify one"), "{e}");
}

/// `--jobs N` trains N net folders at once and gives the same nets, bit for bit, and the same
/// table as one at a time; its console lines say which net they are about; a run made with
/// one `--jobs` resumes with another.
#[test]
fn parallel_jobs_train_the_same_nets() {
    let dir = TempDir::new("dbn-jobs");
    let labels = common::sample_labels(dir.path());
    let l = labels.to_str().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let mut a = vec!["--system", "dbn", "--profile", "tiny", "--labels", l, "--out", out.to_str().unwrap(), "--configs", "small,8-8", "--max-positions", "1200"];
        a.extend(extra);
        let r = train(&a);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        (out, String::from_utf8_lossy(&r.stderr).into_owned())
    };
    let (one, log1) = run("one", &[]);
    // Progress over the nets to train, with an estimate of the time left.
    assert!(log1.contains("-- 1 of 14 nets to train done (772-100-100-100/classify positions-f0of10)") && log1.contains("-- 14 of 14 nets to train done") && log1.contains("h left"), "{log1}");
    let (three, log) = run("three", &["--jobs", "3"]);
    assert!(log.contains("[positions-f0of10 772-8-8 finetune.classify] epoch 2/2") && log.contains("[games-100pm 773-100-100-100 rbm.0] epoch 1/1"), "{log}");
    let tensors = |f: &Path| {
        let o = common::command().arg("show").arg(f).output().unwrap();
        let t = String::from_utf8_lossy(&o.stdout).into_owned();
        t.split("tensors fnv64=").nth(1).map(|x| x[..16].to_string()).unwrap_or_else(|| panic!("{t}"))
    };
    let mut nets = 0;
    for split in ["positions-f0of10", "games-100pm"] {
        for (layers, heads) in [("772-100-100-100", &["classify", "regress", "quantized"][..]), ("772-8-8", &["classify", "regress", "quantized"][..]), ("773-100-100-100", &["quantized"][..])] {
            for head in heads {
                let f = format!("{split}/{layers}/{head}.dcw");
                assert_eq!(tensors(&one.join(&f)), tensors(&three.join(&f)), "{f} differs with --jobs 3");
                nets += 1;
            }
        }
    }
    assert_eq!(nets, 14);
    let table = |o: &Path| std::fs::read_to_string(o.join("results.md")).unwrap().lines().filter(|l| l.starts_with("| 77")).map(String::from).collect::<Vec<_>>();
    assert_eq!(table(&one), table(&three));
    assert_eq!(table(&one).len(), 7);
    // --jobs is not part of the run: the finished run resumes one at a time.
    let (_, again) = run("three", &["--resume"]);
    assert!(!again.contains("epoch"), "a finished net was trained again: {again}");
    // A net that fails in one thread fails the run, named, without waiting for the plan.
    let bad = three.join("positions-f0of10/772-8-8/classify.dcw");
    let bytes = std::fs::read(&bad).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let r = train(&["--system", "dbn", "--profile", "tiny", "--labels", l, "--out", three.to_str().unwrap(), "--configs", "small,8-8", "--max-positions", "1200", "--resume", "--jobs", "2"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains("failed:") && err.contains("classify.dcw"), "{err}");
    // Both ways of splitting the cores at once is refused.
    let r = train(&["--system", "dbn", "--labels", l, "--out", dir.join("x").to_str().unwrap(), "--jobs", "2", "--threads", "2"]);
    assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("--jobs and --threads"));
}

#[test]
fn bad_flags_and_files_are_named() {
    let dir = TempDir::new("dbn-flags");
    let o = dir.join("run");
    let o = o.to_str().unwrap();
    for (args, want) in [
        (vec!["--heads", "classify,nope"], "--heads"),
        (vec!["--configs", "huge"], "--configs"),
        (vec!["--splits", "random"], "--splits"),
        (vec!["--folds", "11"], "--folds"),
        (vec!["--profile", "fast"], "fast"),
        (vec!["--side-bit", "x"], "--side-bit"),
        (vec!["--clip-norm", "0"], "--clip-norm"),
        (vec!["--clip-norm", "inf"], "--clip-norm"),
        (vec!["--jobs", "0"], "--jobs"),
        (vec!["--labels", "/nonexistent/labels.csv"], "/nonexistent/labels.csv"),
    ] {
        let mut a = vec!["--system", "dbn", "--out", o];
        a.extend(args.iter().copied());
        let r = train(&a);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success() && err.contains(want), "{args:?}: {err}");
    }
    // Nets: another system's net, a truncated file and a header whose architecture does not
    // match the tensors are refused by name.
    let compact = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
    let e = deepchess::dbn::model::Dbn::load(Path::new(&compact)).err().expect("a DeepChess net is not a DBN").to_string();
    assert!(e.contains("not a DBN net") && e.contains("compact.dcw"), "{e}");
    let net = deepchess::dbn::model::Dbn::new(
        deepchess::dbn::model::Arch::parse("772-16-8/regress").unwrap(),
        &mut deepchess::tensor::Rng::new(1),
    );
    let good = dir.join("net.dcw");
    net.save(&good, &[]).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.join("cut.dcw");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(deepchess::dbn::model::Dbn::load(&cut).is_err());
    let mut wf = deepchess::tensor::WeightFile::load(&good).unwrap();
    wf.meta.iter_mut().filter(|(k, _)| k == "arch").for_each(|(_, v)| *v = "772-16-9/regress".into());
    wf.save(&good).unwrap();
    let e = deepchess::dbn::model::Dbn::load(&good).err().expect("arch and tensors disagree").to_string();
    assert!(e.contains("772-16-9/regress") && e.contains("hidden.1.w"), "{e}");
    let r = train(&["--system", "alphazero"]);
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown --system 'alphazero'"));
    // A labels file with a bad row is refused with its line.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "game,ply,result,score,fen\n1,12,1-0,abc,8/8/8/8/8/8/8/K6k w - - 0 1\n").unwrap();
    let r = train(&["--system", "dbn", "--out", o, "--labels", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains(":2") && err.contains("score"), "{err}");
}

/// A net as wide as the trainer accepts plays (issue 45: `--configs 1100-100-100` wrote a
/// net whose second layer the inference kernels refused with a panic, so `go` never
/// answered): through the engine's `EvalFile`, every kernel, and the registry.
#[test]
fn a_net_wider_than_the_kernels_stack_mask_plays() {
    use common::session::{Session, SEC};
    let dir = TempDir::new("dbn-wide");
    let net = deepchess::dbn::model::Dbn::new(
        deepchess::dbn::model::Arch::parse("772-1100-100-100/classify").unwrap(),
        &mut deepchess::tensor::Rng::new(3),
    );
    let path = dir.join("wide.dcw");
    net.save(&path, &[]).unwrap();
    let mut s = Session::start(&["uci"]);
    s.send("uci");
    s.expect("uciok", 10 * SEC);
    s.send("setoption name Eval value dbn-classify");
    s.send(&format!("setoption name EvalFile value {}", path.display()));
    s.send("isready");
    s.expect("readyok", 30 * SEC);
    for _ in 0..2 {
        s.send("position startpos moves e2e4 e7e5");
        s.send("go depth 3");
        let best = s.expect("bestmove", 60 * SEC);
        assert!(!best.contains("0000"), "{best}");
    }
    assert!(s.seen.iter().any(|l| l.contains("772-1100-100-100")), "the wide net was not the one loaded: {:?}", s.seen);
    s.quit();
    for k in [deepchess::tensor::Kernel::Scalar, deepchess::tensor::Kernel::Avx2, deepchess::tensor::Kernel::Avx512] {
        let mut e = deepchess::dbn::infer::DbnEval::new(&net, "wide", k);
        let v = e.value(&deepchess::chess::Position::default());
        assert!(v.is_finite() && v.abs() <= 1.0, "{k:?}: {v}");
    }
}
