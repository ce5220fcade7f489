//! Training on a tiny dataset (the 30-game sample in tests/data): losses fall, tied towers
//! both receive gradient, resume reproduces the uninterrupted run bit for bit, the distilled
//! net agrees with its teacher, a corrupt checkpoint is rejected with a clear error.

use deepchess::data::build::{build, BuildSettings};
use deepchess::deepchess::features::{Features, INPUTS};
use deepchess::deepchess::model::{batch_of, draw_values, Arch, Net, ValueArch, ValueNet};
use deepchess::tensor::{Params, Precision, Rng, SparseBatch, Tape};
use deepchess::deepchess::pairs::{AuxPairs, Pools, Validation};
use deepchess::deepchess::train::{distill_tower, distill_value, siamese};
use deepchess::train::checkpoint::OptCfg;
use deepchess::train::log::Log;
use deepchess::train::stage::{Ctx, StageCfg};
use std::path::PathBuf;
use deepchess::tensor::Architecture as _;

mod common;
use common::TempDir;

fn pools() -> (Pools, Pools) {
    let src = format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let mut s = BuildSettings::default();
    s.sampling.per_game = 0; // every eligible position: more data from 30 games
    s.valid_per_mille = 200;
    let (train, valid, _) = build(&[src], &s, |_| {}, |_| {}).unwrap();
    (Pools::from_dataset(&train, true), Pools::from_dataset(&valid, false))
}

fn tiny_arch() -> Arch {
    Arch { tower: vec![INPUTS, 32, 16], head: vec![16, 2] }
}

fn ctx(dir: &TempDir, resume: bool) -> Ctx {
    Ctx::new(dir.path(), 7, resume, vec![]).unwrap()
}

fn cfg(epochs: usize) -> StageCfg {
    StageCfg { epochs, samples: 2048, batch: 64, opt: OptCfg::Adam { lr: 2e-3, decay: 0.95, weight_decay: 0.0 }, precision: Precision::F32 }
}

#[test]
fn siamese_loss_falls_and_validation_is_reported() {
    deepchess::tensor::set_threads(1);
    let (train, valid) = pools();
    assert!(train.w.len() > 50 && train.l.len() > 50 && !valid.is_empty());
    let dir = TempDir::new("train-falls");
    let mut c = ctx(&dir, false);
    let mut net = Net::new(tiny_arch(), &mut Rng::new(1));
    siamese(&mut c, "s", &mut net, None, &train, &Validation { valid: &valid, positions: None, pairs: 500 }, &cfg(6), &AuxPairs::NONE).unwrap();
    let rows = &c.log.rows;
    assert_eq!(rows.len(), 6);
    assert!(rows[5].loss < rows[0].loss * 0.8, "{} -> {}", rows[0].loss, rows[5].loss);
    assert!(rows[5].train_acc > 0.7, "{}", rows[5].train_acc);
    assert!(rows.iter().all(|r| r.val_acc.is_finite()));
    assert!(std::fs::read_to_string(c.dir.join("curves.svg")).unwrap().contains("<polyline"));
}

#[test]
fn tied_towers_both_get_gradient() {
    let net = Net::new(tiny_arch(), &mut Rng::new(3));
    let mut params: Params = net.params;
    let net = Net { params: Params::new(), ..Net::new(tiny_arch(), &mut Rng::new(3)) };
    // Two positions with disjoint piece bits: gradient rows of either can only come from
    // its own tower copy.
    let a = Features::from_position(&deepchess::chess::Position::from_fen("4k3/8/8/8/8/8/8/QQ2K3 w - - 0 1").unwrap());
    let b = Features::from_position(&deepchess::chess::Position::from_fen("4k3/8/8/8/8/8/rr6/4K3 b - - 0 1").unwrap());
    let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    batch_of(&[a.as_slice()], &mut xa);
    batch_of(&[b.as_slice()], &mut xb);
    let view = Net { params: std::mem::take(&mut params), ..net };
    let mut tape = Tape::new();
    let z = view.pair_logits_on_tape(&mut tape, &xa, &xb).unwrap();
    let t = tape.input(&deepchess::tensor::Matrix::from_vec(1, 2, vec![1.0, 0.0]).unwrap());
    let loss = tape.softmax_cross_entropy(z, t).unwrap();
    let mut params = view.params;
    tape.backward(loss, &mut params).unwrap();
    let g = params.grad(view.tower[0].0);
    let row_norm = |i: u16| g.row(i as usize).iter().map(|x| x.abs()).sum::<f32>();
    let only_a: Vec<u16> = a.as_slice().iter().copied().filter(|i| !b.as_slice().contains(i)).collect();
    let only_b: Vec<u16> = b.as_slice().iter().copied().filter(|i| !a.as_slice().contains(i)).collect();
    assert!(!only_a.is_empty() && !only_b.is_empty());
    assert!(only_a.iter().any(|&i| row_norm(i) > 0.0), "no gradient reached tower A");
    assert!(only_b.iter().any(|&i| row_norm(i) > 0.0), "no gradient reached tower B");
    // Rows of features in neither position get nothing (sparse backward).
    let unused = (0..INPUTS as u16).find(|i| !a.as_slice().contains(i) && !b.as_slice().contains(i)).unwrap();
    assert_eq!(row_norm(unused), 0.0);
}

#[test]
fn resume_reproduces_the_uninterrupted_run() {
    deepchess::tensor::set_threads(1);
    let (train, valid) = pools();
    let (whole_dir, part_dir) = (TempDir::new("train-whole"), TempDir::new("train-part"));
    let mut whole = ctx(&whole_dir, false);
    let mut a = Net::new(tiny_arch(), &mut Rng::new(5));
    siamese(&mut whole, "s", &mut a, None, &train, &Validation { valid: &valid, positions: None, pairs: 200 }, &cfg(3), &AuxPairs::NONE).unwrap();

    // "Killed" after epoch 2: a fresh process resumes from the checkpoint with fresh
    // (differently initialised) weights and must end exactly where the whole run ended.
    let mut part = ctx(&part_dir, false);
    let mut b = Net::new(tiny_arch(), &mut Rng::new(5));
    siamese(&mut part, "s", &mut b, None, &train, &Validation { valid: &valid, positions: None, pairs: 200 }, &cfg(2), &AuxPairs::NONE).unwrap();
    let mut resumed = ctx(&part_dir, true);
    let mut c = Net::new(tiny_arch(), &mut Rng::new(999));
    siamese(&mut resumed, "s", &mut c, None, &train, &Validation { valid: &valid, positions: None, pairs: 200 }, &cfg(3), &AuxPairs::NONE).unwrap();
    for id in a.params.ids() {
        assert_eq!(a.params.value(id).data(), c.params.value(id).data(), "{}", a.params.name(id));
    }
    assert_eq!(resumed.log.rows.len(), 3);
    assert_eq!(resumed.log.rows[2].loss, whole.log.rows[2].loss);
}

#[test]
fn distilled_net_agrees_with_its_teacher() {
    deepchess::tensor::set_threads(1);
    let (train, valid) = pools();
    let dir = TempDir::new("train-distill");
    let mut c = ctx(&dir, false);
    let mut teacher = Net::new(Arch { tower: vec![INPUTS, 48, 16], head: vec![32, 2] }, &mut Rng::new(11));
    siamese(&mut c, "teacher", &mut teacher, None, &train, &Validation { valid: &valid, positions: None, pairs: 200 }, &cfg(6), &AuxPairs::NONE).unwrap();
    let mut student = Net::new(tiny_arch(), &mut Rng::new(12));
    distill_tower(&mut c, "tower", &mut student, &teacher, &train, &cfg(4)).unwrap();
    assert!(c.log.rows.last().unwrap().loss < c.log.rows.iter().find(|r| r.phase == "tower").unwrap().loss);
    siamese(&mut c, "full", &mut student, Some(&teacher), &train, &Validation { valid: &valid, positions: None, pairs: 200 }, &cfg(25), &AuxPairs::NONE).unwrap();
    // Agreement on random pairs: on the positions distillation saw, and on held-out ones.
    let agreement = |pools: &Pools| {
        let mut rng = Rng::new(1);
        let n = 2000;
        let mut agree = 0;
        for _ in 0..n {
            let w = &pools.w[rng.below(pools.w.len() as u64) as usize];
            let l = &pools.l[rng.below(pools.l.len() as u64) as usize];
            let p = |net: &Net| net.prob_better(&[w.as_slice()], &[l.as_slice()]).unwrap()[0] > 0.5;
            agree += usize::from(p(&teacher) == p(&student));
        }
        agree as f64 / n as f64
    };
    let (on_train, on_valid) = (agreement(&train), agreement(&valid));
    eprintln!("agreement: train pairs {on_train:.3}, validation pairs {on_valid:.3}");
    assert!(on_train > 0.85, "train agreement {on_train}");
    assert!(on_valid > 0.6, "validation agreement {on_valid}");
}

/// The value student learns its teacher's draw-referenced values: after distillation its
/// values order random pairs as the teacher's do, on the positions it saw and on held-out
/// ones, and far better than the same student before training.
#[test]
fn value_student_learns_its_teachers_values() {
    deepchess::tensor::set_threads(1);
    let (train, valid) = pools();
    let dir = TempDir::new("train-value");
    let mut c = ctx(&dir, false);
    let mut teacher = Net::new(Arch { tower: vec![INPUTS, 32, 16], head: vec![16, 2] }, &mut Rng::new(31));
    let val = Validation { valid: &valid, positions: None, pairs: 200 };
    siamese(&mut c, "teacher", &mut teacher, None, &train, &val, &cfg(6), &AuxPairs::NONE).unwrap();
    let teacher_values = |pools: &Pools| {
        let all: Vec<&Features> = pools.w.iter().chain(&pools.l).collect();
        let mirrors: Vec<Features> = all.iter().map(|f| f.mirrored()).collect();
        let (mut x, mut xm) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
        batch_of(&all.iter().map(|f| f.as_slice()).collect::<Vec<_>>(), &mut x);
        batch_of(&mirrors.iter().map(|f| f.as_slice()).collect::<Vec<_>>(), &mut xm);
        draw_values(&teacher, &mut Tape::new(), &x, &xm).unwrap()
    };
    let agreement = |student: &ValueNet, pools: &Pools, want: &[f32]| {
        let rows: Vec<&[u16]> = pools.w.iter().chain(&pools.l).map(|f| f.as_slice()).collect();
        let got = student.values(&rows).unwrap();
        let mut rng = Rng::new(2);
        let n = 2000;
        let agree = (0..n)
            .filter(|_| {
                let (i, j) = (rng.below(rows.len() as u64) as usize, rng.below(rows.len() as u64) as usize);
                (got[i] > got[j]) == (want[i] > want[j])
            })
            .count();
        agree as f64 / n as f64
    };
    let (on_train, on_valid) = (teacher_values(&train), teacher_values(&valid));
    let mut student = ValueNet::new(ValueArch { layers: vec![INPUTS, 32, 16, 1] }, &mut Rng::new(32));
    let before = agreement(&student, &valid, &on_valid);
    distill_value(&mut c, "value", &mut student, &teacher, &train, &val, &cfg(25)).unwrap();
    let rows = c.log.rows.iter().filter(|r| r.phase == "value").collect::<Vec<_>>();
    assert!(rows.last().unwrap().loss < rows[0].loss, "the loss falls");
    let (a_train, a_valid) = (agreement(&student, &train, &on_train), agreement(&student, &valid, &on_valid));
    eprintln!("value student agreement with its teacher: before {before:.3}; after: train {a_train:.3}, validation {a_valid:.3}");
    assert!(a_train > 0.85, "train agreement {a_train}");
    assert!(a_valid > 0.65 && a_valid > before + 0.1, "validation agreement {a_valid} (before training {before})");
}

/// Material pairs (`--compact-aux`) teach what (W, L) pairs of 30 games barely can: a
/// position is better with its queens than without them, judged on held-out positions.
#[test]
fn material_pairs_teach_the_queens_worth() {
    deepchess::tensor::set_threads(1);
    let (train, valid) = pools();
    assert!(train.games.len() > 30, "{} game runs", train.games.len());
    let queenless = |f: &Features, white: bool| {
        let q = if white { 4 * 64..5 * 64 } else { 384 + 4 * 64..384 + 5 * 64 };
        let kept: Vec<u16> = f.as_slice().iter().copied().filter(|i| !q.contains(&(*i as usize))).collect();
        (kept.len() < f.as_slice().len()).then_some(kept)
    };
    let rate = |net: &Net| {
        let (mut right, mut n) = (0, 0);
        for (i, f) in valid.w.iter().chain(valid.l.iter()).enumerate() {
            let white = i % 2 == 0;
            if let Some(less) = queenless(f, white) {
                let p = net.prob_better(&[f.as_slice()], &[&less]).unwrap()[0];
                right += usize::from((p > 0.5) == white);
                n += 1;
            }
        }
        assert!(n > 100, "{n} positions with a queen");
        right as f64 / n as f64
    };
    let train_net = |aux: AuxPairs, name: &str| {
        let dir = TempDir::new(name);
        let mut c = ctx(&dir, false);
        let mut net = Net::new(tiny_arch(), &mut Rng::new(21));
        siamese(&mut c, "s", &mut net, None, &train, &Validation { valid: &valid, positions: None, pairs: 200 }, &cfg(20), &aux).unwrap();
        net
    };
    let plain = rate(&train_net(AuxPairs::NONE, "train-aux-none"));
    let taught = rate(&train_net(AuxPairs { progress: 0.0, gap: 4, material: 0.9 }, "train-aux-material"));
    eprintln!("queen kept over removed: plain {plain:.3}, with aux pairs {taught:.3}");
    assert!(taught > 0.7 && taught > plain + 0.2, "plain {plain}, with aux pairs {taught}");
}

#[test]
fn corrupt_checkpoint_is_rejected() {
    let (train, valid) = pools();
    let dir = TempDir::new("train-corrupt");
    let mut c = ctx(&dir, false);
    let mut net = Net::new(tiny_arch(), &mut Rng::new(5));
    siamese(&mut c, "s", &mut net, None, &train, &Validation { valid: &valid, positions: None, pairs: 100 }, &cfg(1), &AuxPairs::NONE).unwrap();
    let ck: PathBuf = c.dir.join("checkpoint.dcw");
    let mut bytes = std::fs::read(&ck).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xFF;
    std::fs::write(&ck, &bytes).unwrap();
    let mut r = ctx(&dir, true);
    let err = siamese(&mut r, "s", &mut net, None, &train, &Validation { valid: &valid, positions: None, pairs: 100 }, &cfg(2), &AuxPairs::NONE).unwrap_err();
    assert!(err.contains("checkpoint.dcw"), "{err}");
    std::fs::write(&ck, &bytes[..n / 3]).unwrap();
    let err = siamese(&mut r, "s", &mut net, None, &train, &Validation { valid: &valid, positions: None, pairs: 100 }, &cfg(2), &AuxPairs::NONE).unwrap_err();
    assert!(err.contains("checkpoint.dcw"), "{err}");
}

/// The whole pipeline as a user runs it, at the tiny profile: dataset, every phase, the
/// summary with one row per net, and the compact net searched by `bench`.
#[test]
fn cli_tiny_profile_makes_every_net_and_the_compact_one_searches() {
    let exe = common::exe();
    let dir = TempDir::new("cli-train");
    let (ds, run) = (common::sample_dataset(dir.path()), dir.join("run"));
    let ok = |args: &[&str]| {
        let out = std::process::Command::new(exe).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let summary = ok(&["train", "--profile", "tiny", "--threads", "1", "--data", ds.to_str().unwrap(), "--out", run.to_str().unwrap()]);
    for (file, shape) in [("deepchess.dcw", "773-600-400-200-100/400-200-100-2"), ("distilled.dcw", "773-100-100-100/100-100-2"), ("compact.dcw", "773-32-32/32-2"), ("value-student.dcw", "773-32-32-1"), ("scratch.dcw", "773-100-100-100/100-100-2")] {
        assert!(run.join(file).is_file(), "{file} missing");
        assert!(summary.contains(shape), "{shape} not in\n{summary}");
    }
    assert_eq!(summary.lines().filter(|l| l.starts_with("| ") && l.ends_with(" % |")).count(), 5, "{summary}");
    let compact = run.join("compact.dcw");
    let bench = std::process::Command::new(exe).args(["bench", "--depth", "3", "--eval", "compact", "--net", compact.to_str().unwrap()]).output().unwrap();
    assert!(bench.status.success(), "{}", String::from_utf8_lossy(&bench.stderr));
    assert!(String::from_utf8_lossy(&bench.stderr).contains("773-32-32/32-2"));
    assert!(String::from_utf8_lossy(&bench.stdout).contains("Nodes searched: "));

    // The searched phase (not among the defaults) continues the run: the value student's
    // positions searched and kept, then learned; a second run reads the kept searches.
    let searched_args = ["train", "--resume", "--profile", "tiny", "--threads", "1", "--phases", "searched", "--data", ds.to_str().unwrap(), "--out", run.to_str().unwrap()];
    let summary = ok(&searched_args);
    assert!(run.join("value-searched.dcw").is_file() && run.join("searched-labels.dcsl").is_file());
    assert!(summary.contains("taught by its own search"), "{summary}");
    let student = std::fs::read(run.join("value-student.dcw")).unwrap();
    assert_ne!(std::fs::read(run.join("value-searched.dcw")).unwrap(), student, "the searched net is the student trained further");
    std::fs::remove_file(run.join("value-searched.dcw")).unwrap();
    let again = std::process::Command::new(exe).args(searched_args).output().unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("searched to depth 2, from"), "{}", String::from_utf8_lossy(&again.stderr));
    let searched = run.join("value-searched.dcw");
    let bench = std::process::Command::new(exe).args(["bench", "--depth", "3", "--eval", "value-searched", "--net", searched.to_str().unwrap()]).output().unwrap();
    assert!(bench.status.success(), "{}", String::from_utf8_lossy(&bench.stderr));
    assert!(String::from_utf8_lossy(&bench.stdout).contains("Nodes searched: "));

    // A second round continues the run: round 1's net searches new positions and learns them.
    let mut two = searched_args.to_vec();
    two.extend(["--searched-rounds", "2"]);
    let summary = ok(&two);
    assert!(run.join("value-searched-2.dcw").is_file() && run.join("searched-labels-2.dcsl").is_file());
    assert!(summary.contains("round 2: taught by round 1's search"), "{summary}");
    assert_ne!(std::fs::read(run.join("value-searched-2.dcw")).unwrap(), std::fs::read(&searched).unwrap(), "round 2 trains round 1's net further");
    assert_ne!(std::fs::read(run.join("searched-labels-2.dcsl")).unwrap(), std::fs::read(run.join("searched-labels.dcsl")).unwrap(), "round 2 searches other positions");
}

/// `--value-arch` shapes the value student (and the searched rounds, which train it
/// further); a shape no build plays, or that is not a value net's, is refused up front.
#[test]
fn cli_value_arch_shapes_the_value_student_and_its_searched_rounds() {
    let exe = common::exe();
    for (arch, wanted) in [("773-300-1", "cannot play"), ("773-32-32-2", "bad --value-arch"), ("770-32-1", "bad --value-arch"), ("773-1", "bad --value-arch")] {
        let out = std::process::Command::new(exe).args(["train", "--value-arch", arch, "--data", "/nonexistent"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{arch} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--value-arch") && err.contains(wanted), "{arch}: {err}");
    }
    let dir = TempDir::new("cli-value-arch");
    let (ds, run) = (common::sample_dataset(dir.path()), dir.join("run"));
    let args = ["train", "--profile", "tiny", "--threads", "1", "--value-arch", "773-48-16-1", "--phases", "siamese,compact,value,searched", "--data", ds.to_str().unwrap(), "--out", run.to_str().unwrap()];
    let out = std::process::Command::new(exe).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stdout);
    for file in ["value-student.dcw", "value-searched.dcw"] {
        let (net, _) = <deepchess::deepchess::model::ValueNet as deepchess::tensor::NetFile>::load(&run.join(file)).unwrap();
        assert_eq!(net.arch.describe(), "773-48-16-1", "{file}");
    }
    assert_eq!(summary.matches("773-48-16-1").count(), 2, "{summary}");
    assert!(std::fs::read_to_string(run.join("run.txt")).unwrap().contains("value_arch=773-48-16-1"));
    let searched = run.join("value-searched.dcw");
    let bench = std::process::Command::new(exe).args(["bench", "--depth", "3", "--eval", "value-searched", "--net", searched.to_str().unwrap()]).output().unwrap();
    assert!(bench.status.success(), "{}", String::from_utf8_lossy(&bench.stderr));
    assert!(String::from_utf8_lossy(&bench.stdout).contains("Nodes searched: "));
}

#[test]
fn cli_rejects_bad_aux_pair_specs_before_loading_data() {
    let exe = common::exe();
    for spec in ["progress=2", "gap=0", "material=0.7,progress=0.7", "cheese=1"] {
        let out = std::process::Command::new(exe).args(["train", "--compact-aux", spec, "--data", "/nonexistent"]).output().unwrap();
        assert!(!out.status.success(), "{spec} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--compact-aux") && err.contains(spec), "{spec}: {err}");
    }
}

/// A student shape no search build fits is refused before the data is read (issue 45: a
/// net the crate trains must play), naming the limit; the shapes the builds take pass.
#[test]
fn cli_refuses_a_student_the_search_cannot_play() {
    let exe = common::exe();
    for arch in ["773-64-64/64-2", "773-32-32/600-2", "773-200-32/32-2"] {
        let out = std::process::Command::new(exe).args(["train", "--distill-arch", arch, "--data", "/nonexistent"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{arch} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--distill-arch") && err.contains("cannot play") && err.contains("head"), "{arch}: {err}");
    }
    for arch in ["773-32-32-32/32-32-2", "773-100-100-100/100-100-2", "773-128-20/20-2"] {
        let a = deepchess::deepchess::model::Arch::parse(arch).unwrap();
        assert!(deepchess::deepchess::infer::playable(&a).is_ok(), "{arch}");
        let net = deepchess::deepchess::model::Net::new(a, &mut deepchess::tensor::Rng::new(1));
        let fits = [
            deepchess::deepchess::infer::Distilled::from_net(&net).is_ok(),
            deepchess::deepchess::infer::Compact::from_net(&net).is_ok(),
            deepchess::deepchess::infer::Big::from_net(&net).is_ok(),
        ];
        assert!(fits.iter().any(|&f| f), "{arch}: playable says yes, no build takes it");
    }
}

/// `--precision bf16` trains end to end, and the run says so (run.txt, results.md).
#[test]
fn cli_trains_with_bf16_products_and_records_it() {
    let exe = common::exe();
    let dir = TempDir::new("cli-bf16");
    let (ds, run) = (common::sample_dataset(dir.path()), dir.join("run"));
    let out = std::process::Command::new(exe)
        .args(["train", "--profile", "tiny", "--phases", "pos2vec,siamese", "--precision", "bf16", "--threads", "2"])
        .args(["--data", ds.to_str().unwrap(), "--out", run.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(run.join("deepchess.dcw").is_file());
    assert!(std::fs::read_to_string(run.join("run.txt")).unwrap().contains("precision=bf16\n"));
    assert!(std::fs::read_to_string(run.join("results.md")).unwrap().contains("products in bf16"));
    // The net's header says so too (`deepchess show` prints it).
    let wf = deepchess::tensor::WeightFile::load(&run.join("deepchess.dcw")).unwrap();
    assert_eq!(wf.meta("made.precision"), Some("bf16"), "{:?}", wf.meta);
    assert!(wf.meta("made.settings").is_some_and(|s| s.split("; ").any(|kv| kv == "precision=bf16")), "{:?}", wf.meta);
}

#[test]
fn cli_rejects_an_unknown_precision_before_loading_data() {
    let exe = common::exe();
    let out = std::process::Command::new(exe).args(["train", "--precision", "fp8", "--data", "/nonexistent"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "accepted");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--precision") && err.contains("fp8"), "{err}");
}

/// `--resume` continues a run only with the settings that made it (run.txt): another
/// profile, seed, dataset or schedule is refused, naming the setting and both values, before
/// anything is written; the thread count and the phase list may change.
#[test]
fn cli_resume_refuses_other_settings() {
    let exe = common::exe();
    let dir = TempDir::new("cli-resume");
    let ds = common::sample_dataset(dir.path());
    let run = dir.join("run");
    let train = |extra: &[&str]| {
        let mut args = vec!["train", "--threads", "1", "--data", ds.to_str().unwrap(), "--out", run.to_str().unwrap()];
        args.extend_from_slice(extra);
        std::process::Command::new(exe).args(&args).output().unwrap()
    };
    let o = train(&["--profile", "tiny", "--phases", "pos2vec"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recorded = std::fs::read_to_string(run.join("run.txt")).unwrap();
    assert!(recorded.contains("profile=tiny\n") && recorded.contains("seed=1\n"), "{recorded}");
    let files = || {
        let mut v: Vec<_> = std::fs::read_dir(&run).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    };
    let before = files();
    let log = std::fs::read(run.join("log.csv")).unwrap();

    let refused = |extra: &[&str], wanted: &str| {
        let o = train(extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?} accepted: {err}");
        assert!(err.contains(wanted), "{extra:?}: {err}");
    };
    refused(&["--resume", "--profile", "quick"], "--profile: this run was made with 'tiny', resumed with 'quick'");
    refused(&["--resume", "--profile", "tiny", "--seed", "2"], "--seed: this run was made with '1', resumed with '2'");
    refused(&["--resume", "--profile", "tiny", "--no-mirror"], "this run was made with 'true', resumed with 'false'");
    refused(&["--resume", "--profile", "tiny", "--siamese-epochs", "5"], "siamese epochs (--siamese-epochs, --epochs-cap or the profile): this run was made with '3', resumed with '5'");
    refused(&["--resume", "--profile", "tiny", "--max-positions", "100"], "--max-positions: this run was made with 'all', resumed with '100'");
    refused(&["--resume", "--profile", "tiny", "--distill-arch", "773-32-32-32/32-32-2"], "--distill-arch");
    refused(&["--resume", "--profile", "tiny", "--compact-aux", "material=0.5"], "--compact-aux");
    refused(&["--resume", "--profile", "tiny", "--value-arch", "773-64-32-1"], "--value-arch: this run was made with '773-32-32-1', resumed with '773-64-32-1'");
    refused(&["--resume", "--profile", "tiny", "--precision", "bf16"], "--precision: this run was made with 'f32', resumed with 'bf16'");
    // --epochs-cap caps every stage (tiny's Siamese phase has 3), so a capped resume is refused.
    refused(&["--resume", "--profile", "tiny", "--epochs-cap", "1"], "siamese epochs (--siamese-epochs, --epochs-cap or the profile): this run was made with '3', resumed with '1'");
    let o = train(&["--resume", "--profile", "tiny", "--epochs-cap", "0"]);
    assert!(o.status.code() == Some(2) && String::from_utf8_lossy(&o.stderr).contains("--epochs-cap must be at least 1"), "{}", String::from_utf8_lossy(&o.stderr));
    // Without --resume the folder is never reused.
    refused(&["--profile", "tiny", "--phases", "pos2vec"], "already holds a training run");
    // Other data: a dataset built with another split has other files.
    let other = dir.join("other");
    let src = format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new(exe)
        .args(["data", "--pgn", &src, "--out", other.to_str().unwrap(), "--per-game", "0", "--valid-per-mille", "300", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = std::process::Command::new(exe)
        .args(["train", "--resume", "--profile", "tiny", "--data", other.to_str().unwrap(), "--out", run.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--data (train.dcds): this run was made with '"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files(), before, "a refused resume wrote into the run folder");
    assert_eq!(std::fs::read(run.join("log.csv")).unwrap(), log);

    // The same data moved elsewhere, another thread count, the same phases: accepted.
    let moved = dir.join("moved");
    std::fs::rename(&ds, &moved).unwrap();
    let o = std::process::Command::new(exe)
        .args(["train", "--resume", "--profile", "tiny", "--threads", "2", "--phases", "pos2vec"])
        .args(["--data", moved.to_str().unwrap(), "--out", run.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("note: --data"));
    assert_eq!(std::fs::read_to_string(run.join("run.txt")).unwrap(), recorded, "run.txt keeps the first record");
}

/// Only a missing log starts afresh: one that cannot be read (here a folder in its place)
/// is an error, since the next epoch would replace it.
#[test]
fn an_unreadable_log_is_an_error_not_a_fresh_start() {
    let dir = TempDir::new("train-badlog");
    assert!(Log::open(dir.path()).unwrap().rows.is_empty());
    std::fs::create_dir(dir.join("log.csv")).unwrap();
    let e = Log::open(dir.path()).err().expect("a folder as log.csv is refused");
    assert!(e.contains("log.csv") && e.contains("directory"), "{e}");
}

/// A train/validation pair from two different `data` runs (as a kill between the two writes
/// of a rebuild leaves) is refused, naming the folder; the pair of one run trains.
#[test]
fn cli_train_refuses_a_mismatched_dataset_pair() {
    let exe = common::exe();
    let dir = TempDir::new("cli-pair");
    let ds = common::sample_dataset(dir.path());
    let other = dir.join("other");
    let src = format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new(exe)
        .args(["data", "--pgn", &src, "--out", other.to_str().unwrap(), "--per-game", "0", "--valid-per-mille", "300", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::copy(other.join("valid.dcds"), ds.join("valid.dcds")).unwrap();
    let o = std::process::Command::new(exe)
        .args(["train", "--profile", "tiny", "--phases", "pos2vec", "--threads", "1", "--data", ds.to_str().unwrap(), "--out"])
        .arg(dir.join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("different 'deepchess data' runs") && err.contains(ds.to_str().unwrap()), "{err}");
    let o = std::process::Command::new(exe)
        .args(["train", "--profile", "tiny", "--phases", "pos2vec", "--threads", "1", "--data", other.to_str().unwrap(), "--out"])
        .arg(dir.join("run2"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A closed stderr (its reader gone) does not stop a run (issue 45: the first progress line
/// panicked and `train` exited with 101): the run finishes with every net.
#[cfg(unix)]
#[test]
fn a_closed_stderr_does_not_stop_training() {
    let dir = TempDir::new("cli-closed-stderr");
    let (ds, run) = (common::sample_dataset(dir.path()), dir.join("run"));
    // A pipe whose reader is gone before the run starts: every write to stderr fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = common::command()
        .args(["train", "--profile", "tiny", "--phases", "pos2vec,siamese", "--data", ds.to_str().unwrap(), "--out", run.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(writer)
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(run.join("deepchess.dcw").is_file() && run.join("results.md").is_file());
}
