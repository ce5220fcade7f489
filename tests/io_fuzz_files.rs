//! Byte-level fuzzing of the files the crate reads: net files, dataset files, datagen's
//! output (as a resumed run inspects it) and labelled sets (text CSV). Real samples made with the crate's API
//! are flipped, inserted into, cut, truncated and spliced, half of the time with the
//! checksum recomputed so that the checks behind it are reached too. Every input must load
//! or be refused with an error naming the file and what is wrong, quickly; a panic fails.
//!
//! `DEEPCHESS_FUZZ_CASES` sets the inputs per surface (default 200; `make test-full` runs
//! 5000). Each test prints how many inputs were accepted and refused (`--nocapture`).

use deepchess::tensor::Architecture as _;

mod common;

use deepchess::tensor::NetFile;
use deepchess::arena::datagen_file::{inspect, OWN_EVENT};
use deepchess::chess::Position;
use deepchess::data::build::{build, BuildSettings};
use deepchess::data::dataset::Dataset;
use deepchess::io::fnv1a64 as fnv1a;
use deepchess::data::labels::{EngineScore, LabelSet, Labelled, Wdl};
use deepchess::deepchess::features::Features;
use deepchess::deepchess::infer::load_searcher;
use deepchess::search::PlayerSettings;
use deepchess::deepchess::model::{Arch, Net};
use deepchess::tensor::Rng;
use proptest::prelude::*;
use std::path::Path;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn cases() -> u32 {
    std::env::var("DEEPCHESS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
}

/// Longest a single load may take: the samples are kilobytes, so anything near this means
/// work out of proportion to the input (a huge allocation, a quadratic scan).
const SLOW: Duration = Duration::from_secs(2);

/// A fresh folder for one test (tests run in parallel, each writes its own files).
fn tmp(name: &str) -> common::TempDir {
    common::TempDir::new(&format!("fuzz-files-{name}"))
}

/// Runs `check` on `cases()` generated inputs; a panic or failed assertion is shrunk to a
/// small input and reported with it.
fn fuzz<S: Strategy>(strategy: S, check: impl Fn(S::Value)) {
    let config = ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, |v| {
        check(v);
        Ok(())
    }) {
        panic!("{e}");
    }
}

/// One byte-level change; positions are taken modulo the current length.
#[derive(Clone, Debug)]
enum Op {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    /// Copies `len` bytes from one place of the input over another (lengths and names
    /// moved to where other fields are read).
    Splice { from: usize, len: usize, to: usize },
    /// A length-like value written over four or eight bytes: 0, all ones, huge, small.
    Number(usize, u64, bool),
}

/// A position: anywhere, or (as often) within the first bytes, where the headers, lengths,
/// names and the architecture are: a few hundred bytes of a file of kilobytes.
fn at() -> impl Strategy<Value = usize> {
    prop_oneof![any::<usize>(), 0usize..160]
}

fn op() -> impl Strategy<Value = Op> {
    let interesting = prop_oneof![Just(0u64), Just(u64::MAX), Just(u32::MAX as u64), Just(1 << 31), Just(1 << 40), 0u64..64, any::<u64>()];
    prop_oneof![
        4 => (at(), 1u8..=255).prop_map(|(i, m)| Op::Flip(i, m)),
        1 => (at(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, b)| Op::Insert(i, b)),
        1 => (at(), 1usize..64).prop_map(|(i, n)| Op::Delete(i, n)),
        1 => any::<usize>().prop_map(Op::Truncate),
        1 => (at(), 1usize..64, at()).prop_map(|(from, len, to)| Op::Splice { from, len, to }),
        2 => (at(), interesting, any::<bool>()).prop_map(|(i, v, wide)| Op::Number(i, v, wide)),
    ]
}

fn apply(b: &mut Vec<u8>, op: &Op) {
    let n = b.len().max(1);
    match op {
        Op::Flip(i, m) if !b.is_empty() => b[i % n] ^= m,
        Op::Insert(i, bytes) => {
            let at = i % (b.len() + 1);
            b.splice(at..at, bytes.iter().copied());
        }
        Op::Delete(i, len) if !b.is_empty() => {
            let at = i % n;
            b.drain(at..(at + len).min(b.len()));
        }
        Op::Truncate(len) => b.truncate(len % (b.len() + 1)),
        Op::Splice { from, len, to } if !b.is_empty() => {
            let from = from % n;
            let chunk: Vec<u8> = b[from..(from + len).min(b.len())].to_vec();
            let to = to % n;
            let end = (to + chunk.len()).min(b.len());
            b[to..end].copy_from_slice(&chunk[..end - to]);
        }
        Op::Number(i, v, wide) => {
            let bytes = if *wide { v.to_le_bytes().to_vec() } else { (*v as u32).to_le_bytes().to_vec() };
            if b.len() >= bytes.len() {
                let at = i % (b.len() - bytes.len() + 1);
                b[at..at + bytes.len()].copy_from_slice(&bytes);
            }
        }
        _ => {}
    }
}

/// Both formats end in an FNV-1a 64 of every byte before it.
fn fix_checksum(b: &mut [u8]) {
    if b.len() >= 8 {
        let n = b.len() - 8;
        let h = fnv1a(&b[..n]);
        b[n..].copy_from_slice(&h.to_le_bytes());
    }
}

fn mutated(sample: &[u8], ops: &[Op], fix: bool) -> Vec<u8> {
    let mut b = sample.to_vec();
    for op in ops {
        apply(&mut b, op);
    }
    if fix {
        fix_checksum(&mut b);
    }
    b
}

/// Counts per surface, printed when the test ends: accepted, refused by which check.
struct Tally {
    accepted: AtomicU64,
    refused: Mutex<BTreeMap<&'static str, u64>>,
    slowest_us: AtomicU64,
}

impl Tally {
    const fn new() -> Tally {
        Tally { accepted: AtomicU64::new(0), refused: Mutex::new(BTreeMap::new()), slowest_us: AtomicU64::new(0) }
    }
    /// `refused`: the part of the file the error named (`None`: accepted).
    fn count(&self, refused: Option<&'static str>, took: Duration) {
        match refused {
            None => drop(self.accepted.fetch_add(1, Ordering::Relaxed)),
            Some(part) => *self.refused.lock().unwrap().entry(part).or_default() += 1,
        }
        self.slowest_us.fetch_max(took.as_micros() as u64, Ordering::Relaxed);
    }
    fn report(&self, what: &str) {
        let a = self.accepted.load(Ordering::Relaxed);
        let by = self.refused.lock().unwrap();
        let r: u64 = by.values().sum();
        let parts: Vec<String> = by.iter().map(|(k, n)| format!("{k} {n}")).collect();
        eprintln!(
            "{what}: {} inputs, {a} accepted, {r} refused ({}), slowest {} µs",
            a + r,
            parts.join(", "),
            self.slowest_us.load(Ordering::Relaxed)
        );
    }
}

/// The first of `parts` that `e` mentions; the test fails when it mentions none.
fn part_named(e: &str, parts: &[&'static str]) -> &'static str {
    parts.iter().find(|p| e.contains(*p)).copied().unwrap_or_else(|| panic!("the error names no part of the file: {e}"))
}

// --- net files ---------------------------------------------------------------------------

/// A small real net: the full format (metadata, several tensors) in a few kilobytes.
fn net_sample(dir: &Path) -> Vec<u8> {
    let net = Net::new(Arch::parse("773-2-2/2-2").unwrap(), &mut Rng::new(5));
    let p = dir.join("sample.dcw");
    net.save(&p, &[("phase".to_string(), "fuzz".to_string())]).unwrap();
    std::fs::read(&p).unwrap()
}

static NETS: Tally = Tally::new();

/// Every refusal names the file and the part that is wrong.
const NET_PARTS: &[&str] = &["checksum", "magic", "version", "truncated", "corrupt", "holds", "arch", "declares", "tensor '", "kind '"];

fn check_net(dir: &Path, bytes: &[u8]) {
    let path = dir.join("fuzz.dcw");
    std::fs::write(&path, bytes).unwrap();
    let t = Instant::now();
    let loaded = Net::load(&path);
    let took = t.elapsed();
    assert!(took < SLOW, "loading took {took:?}");
    match loaded {
        Ok((net, _)) => {
            NETS.count(None, took);
            // A net that loads is consistent: it evaluates, and the search's builds either
            // take it or say why.
            let f = Features::from_position(&Position::startpos());
            let p = net.prob_better(&[f.as_slice()], &[f.as_slice()]).unwrap();
            assert_eq!(p.len(), 1);
            if let Err(e) = load_searcher(&path, &PlayerSettings::new(1), 1) {
                assert!(e.contains("fuzz.dcw"), "{e}");
            }
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("fuzz.dcw"), "{e}");
            NETS.count(Some(part_named(&e, NET_PARTS)), took);
        }
    }
}

#[test]
fn fuzz_net_files() {
    let dir = tmp("net");
    let sample = net_sample(&dir);
    check_net(&dir, &sample);
    assert_eq!(NETS.accepted.load(Ordering::Relaxed), 1, "the sample itself loads");
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_net(&dir, &mutated(&sample, &ops, fix)));
    NETS.report("net files");
}

// --- the other systems' nets and every system's checkpoints -------------------------------

/// Parts a refusal of a DBN or CNN net, or of a checkpoint, may name.
const MODEL_PARTS: &[&str] = &[
    "checksum", "magic", "version", "truncated", "corrupt", "holds", "arch", "declares", "tensor '", "kind '", "not a", "optimizer tensor",
    "is missing", "unexpected tensor",
];

static DBN_NETS: Tally = Tally::new();
static CNN_NETS: Tally = Tally::new();
static NEUROCHESS_NETS: Tally = Tally::new();
static SELFPLAY_AGENTS: Tally = Tally::new();
static CHECKPOINTS: Tally = Tally::new();

/// Loads `bytes` as a file with `load`; an accepted file must `play` (a finite value), a
/// refused one be named with a part.
fn check_model<M>(dir: &Path, bytes: &[u8], tally: &Tally, load: impl Fn(&Path) -> Result<M, String>, play: impl Fn(M)) {
    let path = dir.join("fuzz.dcw");
    std::fs::write(&path, bytes).unwrap();
    let t = Instant::now();
    let loaded = load(&path);
    let took = t.elapsed();
    assert!(took < SLOW, "loading took {took:?}");
    match loaded {
        Ok(m) => {
            tally.count(None, took);
            play(m);
        }
        Err(e) => {
            assert!(e.contains("fuzz.dcw"), "{e}");
            tally.count(Some(part_named(&e, MODEL_PARTS)), took);
        }
    }
}

#[test]
fn fuzz_dbn_net_files() {
    use deepchess::dbn::infer::DbnEval;
    use deepchess::dbn::model::{Arch, Dbn};
    let dir = tmp("dbn-net");
    let sample = {
        let p = dir.join("sample.dcw");
        Dbn::new(Arch::parse("772-6-3/quantized").unwrap(), &mut Rng::new(5)).save(&p, &[("phase".into(), "fuzz".into())]).unwrap();
        std::fs::read(&p).unwrap()
    };
    let load = |p: &Path| Dbn::load(p).map(|(n, _)| n).map_err(|e| e.to_string());
    let play = |net: Dbn| {
        let v = DbnEval::new(&net, "fuzz", deepchess::tensor::Kernel::best()).value(&Position::startpos());
        assert!(v.is_finite() && v.abs() <= 1.0 + 1e-6, "{v}");
    };
    check_model(&dir, &sample, &DBN_NETS, load, play);
    assert_eq!(DBN_NETS.accepted.load(Ordering::Relaxed), 1, "the sample itself loads");
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_model(&dir, &mutated(&sample, &ops, fix), &DBN_NETS, load, play));
    DBN_NETS.report("DBN net files");
}

#[test]
fn fuzz_cnn_net_files() {
    use deepchess::cnn::infer::CnnEval;
    use deepchess::cnn::model::{Arch, Cnn};
    use deepchess::eval::scalar::Evaluator;
    let dir = tmp("cnn-net");
    let sample = {
        let p = dir.join("sample.dcw");
        Cnn::new(Arch::parse("8x8x7-c3k4-p2s2-c2k2-ip3-1/relu").unwrap(), &mut Rng::new(5)).save(&p, &[("phase".into(), "fuzz".into())]).unwrap();
        std::fs::read(&p).unwrap()
    };
    let load = |p: &Path| Cnn::load(p).map(|(n, _)| n).map_err(|e| e.to_string());
    let play = |net: Cnn| {
        let v = CnnEval::new(net, deepchess::tensor::Kernel::best()).evaluate(&Position::startpos());
        assert!(v.is_finite(), "{v}");
    };
    check_model(&dir, &sample, &CNN_NETS, load, play);
    assert_eq!(CNN_NETS.accepted.load(Ordering::Relaxed), 1, "the sample itself loads");
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_model(&dir, &mutated(&sample, &ops, fix), &CNN_NETS, load, play));
    CNN_NETS.report("CNN net files");
}

/// Seed 004's two nets: V (a 175-H-1 evaluator, as the search loads it) and the chess model
/// M; an accepted file must evaluate to a finite value.
#[test]
fn fuzz_neurochess_net_files() {
    use deepchess::eval::scalar::Evaluator;
    use deepchess::neurochess::features::{features, FEATURES};
    use deepchess::neurochess::model::{Model, Value};
    use deepchess::neurochess::infer::VEval;
    let dir = tmp("neurochess-net");
    let v_sample = {
        let p = dir.join("v.dcw");
        Value::new(5, &mut Rng::new(5)).save(&p, &[("variant".into(), "ebnn".into())]).unwrap();
        std::fs::read(&p).unwrap()
    };
    let m_sample = {
        let p = dir.join("m.dcw");
        Model::new(&mut Rng::new(6)).save(&p, &[]).unwrap();
        std::fs::read(&p).unwrap()
    };
    let load_v = |p: &Path| Value::load(p).map(|(v, _)| v).map_err(|e| e.to_string());
    let play_v = |v: Value| {
        let e = VEval::new(v).evaluate(&Position::startpos());
        assert!(e.is_finite(), "{e}");
    };
    let load_m = |p: &Path| Model::load(p).map(|(m, _)| m).map_err(|e| e.to_string());
    let play_m = |m: Model| {
        let (mut h, mut y) = (Vec::new(), vec![0.0; FEATURES]);
        m.forward(&features(&Position::startpos()), &mut h, &mut y);
        assert!(y.iter().all(|v| v.is_finite()));
    };
    check_model(&dir, &v_sample, &NEUROCHESS_NETS, load_v, play_v);
    check_model(&dir, &m_sample, &NEUROCHESS_NETS, load_m, play_m);
    assert_eq!(NEUROCHESS_NETS.accepted.load(Ordering::Relaxed), 2, "the samples themselves load");
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_model(&dir, &mutated(&v_sample, &ops, fix), &NEUROCHESS_NETS, load_v, play_v));
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_model(&dir, &mutated(&m_sample, &ops, fix), &NEUROCHESS_NETS, load_m, play_m));
    NEUROCHESS_NETS.report("NeuroChess net files (V and M)");
}

/// Seed 002's agents files (fourteen nets): an accepted file must give a legal move at the
/// start position and after 1. e4, as the `qagent` player would play it.
#[test]
fn fuzz_selfplay_agents_files() {
    use deepchess::selfplay::infer::{evaluate, Infer};
    use deepchess::selfplay::policy::Values;
    use deepchess::selfplay::model::{Agents, Arch};
    use deepchess::selfplay::policy::{choose, Compose};
    let dir = tmp("selfplay-agents");
    let sample = {
        let p = dir.join("a.dcw");
        Agents::new(Arch { c1: 2, c2: 3, c3: 2, fc: 3 }, &mut Rng::new(7)).save(&p, &[("compose".into(), "signed".into())]).unwrap();
        std::fs::read(&p).unwrap()
    };
    let load = |p: &Path| Agents::load(p).map(|(a, _)| a).map_err(|e| e.to_string());
    let play = |a: Agents| {
        let mut infer = Infer::new(deepchess::tensor::Kernel::Scalar);
        let mut v = Values::default();
        let mut pos = Position::startpos();
        for _ in 0..2 {
            evaluate(&mut infer, &a, &pos, &mut v).unwrap();
            let m = choose(&pos, &v, Compose::Signed).mv;
            assert!(pos.is_legal(m), "{m} in {}", pos.fen());
            pos.play(m);
        }
    };
    check_model(&dir, &sample, &SELFPLAY_AGENTS, load, play);
    assert_eq!(SELFPLAY_AGENTS.accepted.load(Ordering::Relaxed), 1, "the sample itself loads");
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_model(&dir, &mutated(&sample, &ops, fix), &SELFPLAY_AGENTS, load, play));
    SELFPLAY_AGENTS.report("self-play agents files");
}

/// Checkpoints of each system's model with the optimizer its training uses (DeepChess's
/// AdamW, the DBN's SGD with momentum, the CNN's SGD in Mocha's form, NeuroChess V's SGD), after one step: a
/// checkpoint that loads must restore into the run's parameters and optimizer or be refused
/// naming the part, and what it restores is finite and bounded.
#[test]
fn fuzz_checkpoint_files() {
    use deepchess::tensor::{Optimizer, Params};
    use deepchess::train::checkpoint::{Checkpoint, OptCfg};
    let dir = tmp("checkpoint");
    let models: Vec<(&str, Params, OptCfg)> = vec![
        ("deepchess", Net::new(Arch::parse("773-3-2/2-2").unwrap(), &mut Rng::new(1)).params, OptCfg::Adam { lr: 0.01, decay: 0.99, weight_decay: 0.01 }),
        (
            "dbn",
            deepchess::dbn::model::Dbn::new(deepchess::dbn::model::Arch::parse("772-4-3/classify").unwrap(), &mut Rng::new(1)).params,
            OptCfg::Sgd { lr: 0.01, decay: 0.9, momentum: 0.9 },
        ),
        (
            "cnn",
            deepchess::cnn::model::Cnn::new(deepchess::cnn::model::Arch::parse("8x8x7-c2k4-p2s2-c2k2-ip2-1/linear").unwrap(), &mut Rng::new(1)).params,
            OptCfg::SgdMocha { lr: 0.01, momentum: 0.9 },
        ),
        ("neurochess", deepchess::neurochess::model::Value::new(4, &mut Rng::new(1)).params, OptCfg::Sgd { lr: 0.01, decay: 1.0, momentum: 0.9 }),
    ];
    for (name, params, cfg) in models {
        let mut stepped = params.clone();
        let mut opt = cfg.build();
        opt.step(&mut stepped);
        let p = dir.join(format!("{name}.dcw"));
        let meta = [("stage".to_string(), "fuzz".to_string()), ("epochs_done".to_string(), "1".to_string())];
        Checkpoint::save(&p, &meta, &stepped, opt.as_ref()).unwrap();
        let sample = std::fs::read(&p).unwrap();
        let load = |p: &Path| -> Result<(Params, Box<dyn Optimizer>), String> {
            let c = Checkpoint::load(p).map_err(|e| e.to_string())?;
            let (mut into, mut opt) = (params.clone(), cfg.build());
            c.restore(&mut into, opt.as_mut(), true, &p.display().to_string())?;
            Ok((into, opt))
        };
        let play = |(restored, opt): (Params, Box<dyn Optimizer>)| {
            assert!(restored.ids().all(|id| restored.value(id).data().iter().all(|v| v.is_finite() && v.abs() <= 1e4)));
            assert!(opt.lr().is_finite() && opt.lr() >= 0.0);
            assert!(opt.state().iter().all(|(_, m)| m.data().iter().all(|v| v.is_finite())));
        };
        check_model(&dir, &sample, &CHECKPOINTS, load, play);
        fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_model(&dir, &mutated(&sample, &ops, fix), &CHECKPOINTS, load, play));
    }
    assert!(CHECKPOINTS.accepted.load(Ordering::Relaxed) >= 4, "the samples themselves restore");
    CHECKPOINTS.report("checkpoints (DeepChess, DBN, CNN, NeuroChess)");
}

// --- dataset files -------------------------------------------------------------------------

/// A small real dataset, built from PGN by the crate's own `data` path.
fn dataset_sample(dir: &Path) -> Vec<u8> {
    let pgn = dir.join("games.pgn");
    let games = [
        ("1-0", "1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. Ng5 d5 5. exd5 Na5 6. Bb5+ c6 7. dxc6 bxc6 8. Be2 h6 9. Nf3 e4 10. Ne5 Bd6 11. d4 exd3 12. Nxd3 Qc7 1-0"),
        ("0-1", "1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 6. Nf3 c5 7. O-O Nc6 8. a3 Bxc3 9. bxc3 dxc4 10. Bxc4 Qc7 11. Bd3 e5 12. Qc2 Re8 0-1"),
    ];
    let text: String = games.iter().map(|(r, m)| format!("[Event \"fuzz\"]\n[Result \"{r}\"]\n\n{m}\n\n")).collect();
    std::fs::write(&pgn, text).unwrap();
    let mut s = BuildSettings::default();
    s.sampling.per_game = 0;
    s.valid_per_mille = 0;
    let (train, _, _) = build(&[pgn.to_str().unwrap().to_string()], &s, |_| {}, |_| {}).unwrap();
    assert!(train.records.len() >= 10);
    train.to_bytes()
}

static DATASETS: Tally = Tally::new();

const DATASET_PARTS: &[&str] = &["magic", "version", "truncated", "metadata", "bytes", "checksum", "record"];

fn check_dataset(dir: &Path, bytes: &[u8]) {
    let path = dir.join("fuzz.dcds");
    std::fs::write(&path, bytes).unwrap();
    let t = Instant::now();
    let loaded = Dataset::load(&path);
    let took = t.elapsed();
    assert!(took < SLOW, "loading took {took:?}");
    match loaded {
        // Records that load are positions every encoding can take, mirrored too.
        Ok(d) => {
            DATASETS.count(None, took);
            for r in &d.records {
                let f = Features::from_record(r);
                let _ = f.mirrored();
                let _ = f.to_position();
            }
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("fuzz.dcds"), "{e}");
            DATASETS.count(Some(part_named(&e, DATASET_PARTS)), took);
        }
    }
}

#[test]
fn fuzz_dataset_files() {
    let dir = tmp("dataset");
    let sample = dataset_sample(&dir);
    check_dataset(&dir, &sample);
    assert_eq!(DATASETS.accepted.load(Ordering::Relaxed), 1, "the sample itself loads");
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, fix)| check_dataset(&dir, &mutated(&sample, &ops, fix)));
    DATASETS.report("dataset files");
}

// --- datagen's output ----------------------------------------------------------------------

/// Two games as datagen writes them (engine comments, a FEN start).
const DATAGEN_SAMPLE: &str = "[Event \"deepchess datagen\"]\n[Site \"local\"]\n[Date \"????.??.??\"]\n[Round \"0\"]\n\
[White \"E nodes=2802\"]\n[Black \"E nodes=5501\"]\n[Result \"1-0\"]\n[Termination \"rules\"]\n[PlyCount \"7\"]\n\n\
1. e4 e5 2. Bc4 Nc6 3. Qh5 { +4.00/3 } 3... Nf6 { -5.00/3 } 4. Qxf7# { +6.00/3 }\n1-0\n\n\
[Event \"deepchess datagen\"]\n[Site \"local\"]\n[Date \"????.??.??\"]\n[Round \"1\"]\n[White \"E nodes=9\"]\n\
[Black \"E nodes=9\"]\n[Result \"0-1\"]\n[SetUp \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/5P2/PPPPP1PP/RNBQKBNR b KQkq - 0 1\"]\n\
[Termination \"rules\"]\n[PlyCount \"3\"]\n\n1... e5 { +0.10/5 } 2. g4 { -0.50/5 } 2... Qh4# { +99.00/5 }\n0-1\n\n";

static DATAGEN: Tally = Tally::new();

const DATAGEN_PARTS: &[&str] = &["does not begin", "not a PGN tag", "unfinished", "after its moves", "without a result", "UTF-8", "skipped", "games by their headers"];

fn check_datagen(bytes: &[u8]) {
    let t = Instant::now();
    let found = inspect(bytes);
    let took = t.elapsed();
    assert!(took < SLOW, "inspecting took {took:?}");
    DATAGEN.count(found.as_ref().err().map(|e| part_named(e, DATAGEN_PARTS)), took);
    if let Ok(f) = found {
        // Only an unfinished game of datagen's own is ever cut.
        assert!(f.keep <= bytes.len());
        let cut = &bytes[f.keep..];
        assert!(cut.is_empty() || cut.starts_with(OWN_EVENT) || OWN_EVENT.starts_with(cut), "would cut {:?}", String::from_utf8_lossy(cut));
        assert!(f.games <= 2 + bytes.len() as u64 / OWN_EVENT.len() as u64);
    }
}

#[test]
fn fuzz_datagen_output() {
    let sample = DATAGEN_SAMPLE.as_bytes();
    assert!(inspect(sample).is_ok_and(|f| f.games == 2 && f.keep == sample.len()), "the sample itself is datagen's");
    fuzz(prop::collection::vec(op(), 1..5), |ops| check_datagen(&mutated(sample, &ops, false)));
    DATAGEN.report("datagen output");
}

// --- labelled sets ---------------------------------------------------------------------------

/// A small real set: provenance, every result, centipawns and mates of both signs.
fn labels_sample() -> Vec<u8> {
    let rows = [
        (1, 10, Wdl::Win, EngineScore::Cp(34), "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
        (1, 23, Wdl::Win, EngineScore::Mate(4), "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 12"),
        (2, 40, Wdl::Draw, EngineScore::Cp(-120), "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 41"),
        (3, 61, Wdl::Loss, EngineScore::Mate(-2), "6k1/5ppp/8/8/8/8/r4PPP/6K1 w - - 0 31"),
        (3, 12, Wdl::Loss, EngineScore::Cp(0), "rnbqkb1r/pp3ppp/4pn2/2pp4/3P4/2P1PN2/PP3PPP/RNBQKB1R w KQkq c6 0 5"),
    ];
    let mut set = LabelSet::default();
    for (k, v) in [("format", "deepchess labelled positions 1"), ("engine", "Stockfish 15.1"), ("search", "go depth 9")] {
        set.set_meta(k, v);
    }
    set.items = rows
        .iter()
        .map(|&(game, ply, result, score, fen)| Labelled { game, ply, result, score, pos: Position::from_fen(fen).unwrap() })
        .collect();
    set.set_meta("count", set.items.len().to_string());
    set.to_csv().into_bytes()
}

static LABELS: Tally = Tally::new();

/// Errors read `FILE:LINE: FIELD: ...`.
const LABEL_PARTS: &[&str] = &[": game:", ": ply:", ": result:", ": score:", ": fen:", ": row:", ": header:", ": count:", ": line:"];

fn check_labels(dir: &Path, bytes: &[u8]) {
    let path = dir.join("fuzz.csv");
    std::fs::write(&path, bytes).unwrap();
    let t = Instant::now();
    let loaded = LabelSet::load(&path);
    let took = t.elapsed();
    assert!(took < SLOW, "loading took {took:?}");
    match loaded {
        // What loads is usable: legal positions with a move, encodable, and written back
        // the same.
        Ok(set) => {
            LABELS.count(None, took);
            for it in &set.items {
                assert!(it.pos.has_legal_move());
                assert_ne!(it.score, EngineScore::Mate(0));
                let _ = Features::from_record(&it.record());
            }
            let again = LabelSet::from_csv(set.to_csv().as_bytes()).unwrap();
            assert_eq!(again.items, set.items);
        }
        Err(e) => {
            assert!(e.contains("fuzz.csv:"), "{e}");
            LABELS.count(Some(part_named(&e, LABEL_PARTS)), took);
        }
    }
}

#[test]
fn fuzz_label_files() {
    let dir = tmp("labels");
    let sample = labels_sample();
    check_labels(&dir, &sample);
    assert_eq!(LABELS.accepted.load(Ordering::Relaxed), 1, "the sample itself loads");
    // Half of the inputs are kept ASCII, so that most reach the fields rather than stop at
    // the UTF-8 check.
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, ascii)| {
        let mut b = mutated(&sample, &ops, false);
        if ascii {
            b.iter_mut().for_each(|c| *c &= 0x7f);
        }
        check_labels(&dir, &b)
    });
    LABELS.report("labelled sets");
}

// --- the tournament's journal and a curve's points (files a resume reads back) -------------

/// A journal made by the tournament's own writer: settings, a round, three games (one with
/// escapes in its PGN and termination).
fn journal_sample(dir: &Path) -> Vec<u8> {
    use deepchess::arena::match_runner::Searched;
    use deepchess::arena::tournament::journal::{GameLine, Journal, Pair};
    use deepchess::chess::{Color, Outcome};
    let p = dir.join("sample.tsv");
    let mut j = Journal::open(&p).unwrap();
    j.write_settings(&[("players".into(), "compact,handcrafted".into()), ("cond.time.limit".into(), "tc=2+0.02".into())]).unwrap();
    j.write_round("time", 0, &[Pair { a: 0, b: 1, opening: 3 }, Pair { a: 1, b: 0, opening: 4 }]).unwrap();
    let s = Searched { moves: 30, depth_sum: 210, depth_moves: 30, nodes: 91_000, nodes_ms: 1_200, nodes_moves: 30 };
    for (pair, game, outcome) in [(0, 0, Outcome::Win(Color::White)), (0, 1, Outcome::Draw), (1, 0, Outcome::Win(Color::Black))] {
        let pgn = "[Event \"t\\\"x\"]\n[Result \"1-0\"]\n\n1. e4 {+0.20/7\t0.05s} e5 1-0\n".to_string();
        j.write_game(GameLine { cond: "time".into(), round: 0, pair, game, outcome, termination: "adjudication\tby score".into(), plies: 61, searched: [s, s], pgn }).unwrap();
    }
    std::fs::read(&p).unwrap()
}

static JOURNAL: Tally = Tally::new();
const JOURNAL_PARTS: &[&str] = &[
    "not a deepchess tournament journal",
    "not UTF-8",
    "unreadable record",
    "bad round",
    "bad pairs",
    "is not a number",
    "bad result",
    "bad search figures",
    "bad escape",
    "a game of no pair",
    "the same game recorded twice",
    "corrupt",
];

#[test]
fn fuzz_tournament_journals() {
    use deepchess::arena::tournament::journal::Journal;
    let dir = tmp("journal");
    let sample = journal_sample(&dir);
    // The same records as a version-1 journal (no checksums), so that mutations reach the
    // records' parser and not only the checksums.
    let text = String::from_utf8(sample.clone()).unwrap().replacen("version 2", "version 1", 1);
    let legacy: String = text.lines().map(|l| format!("{}\n", if l.starts_with('#') { l } else { l.rsplit_once("\t#").unwrap().0 })).collect();
    let n = AtomicU64::new(0);
    // Half of the inputs kept ASCII, as for labelled sets.
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>(), any::<bool>()), |(ops, ascii, old)| {
        let mut bytes = mutated(if old { legacy.as_bytes() } else { &sample }, &ops, false);
        if ascii {
            bytes.iter_mut().for_each(|c| *c &= 0x7f);
        }
        let p = dir.join(format!("j{}.tsv", n.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&p, &bytes).unwrap();
        let t = Instant::now();
        let opened = Journal::open(&p);
        let took = t.elapsed();
        assert!(took < SLOW, "opening took {took:?}");
        match opened {
            Ok(j) => {
                JOURNAL.count(None, took);
                // Only a cut last line is ever dropped, and what is left reads the same again.
                let left = std::fs::read(&p).unwrap();
                assert!(bytes.starts_with(&left) && (left.is_empty() || left.ends_with(b"\n")));
                let again = Journal::open(&p).unwrap();
                assert_eq!((again.settings, again.rounds.len(), again.games.len()), (j.settings, j.rounds.len(), j.games.len()));
                for (cond, round, pair, game) in j.games.keys() {
                    assert!(j.rounds[&(cond.clone(), *round)].len() > *pair && *game < 2);
                }
            }
            Err(e) => {
                assert!(e.contains(&p.display().to_string()), "the error names no file: {e}");
                JOURNAL.count(Some(part_named(&e, JOURNAL_PARTS)), took);
                let left = std::fs::read(&p).unwrap();
                let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                assert!(left == bytes || left == bytes[..whole], "a refused journal is left as it was, or cut at its last line end");
            }
        }
        let _ = std::fs::remove_file(&p);
    });
    JOURNAL.report("tournament journals");
}

static POINTS: Tally = Tally::new();
const POINTS_PARTS: &[&str] = &["records no match settings", "other settings", "not a finished point", "not UTF-8", "repeats the point", "contradict each other", "corrupt"];

#[test]
fn fuzz_curve_points_files() {
    use deepchess::arena::curve::read_points;
    let dir = tmp("points");
    let header = "# match A name=nc program=Builtin(\"neurochess\") limit=depth=1\n# match B name=hc program=Builtin(\"handcrafted\") limit=depth=1 net=(its own)\n# match test-share 1\n";
    let sample = format!("{header}nc\t6\t/x/v-00006.dcw\t1\t2\t3\t0\t1\t1\t1\t0\t1234\nnc\t12\t/x/v-00012.dcw\t2\t2\t2\t1\t0\t1\t0\t1\t2468\n").into_bytes();
    let n = AtomicU64::new(0);
    // Half of the inputs kept ASCII, as for labelled sets.
    fuzz((prop::collection::vec(op(), 1..5), any::<bool>()), |(ops, ascii)| {
        let mut bytes = mutated(&sample, &ops, false);
        if ascii {
            bytes.iter_mut().for_each(|c| *c &= 0x7f);
        }
        let p = dir.join(format!("p{}.tsv", n.fetch_add(1, Ordering::Relaxed)));
        std::fs::write(&p, &bytes).unwrap();
        let t = Instant::now();
        let read = read_points(&p, header);
        let took = t.elapsed();
        assert!(took < SLOW, "reading took {took:?}");
        match read {
            Ok(done) => {
                POINTS.count(None, took);
                let left = std::fs::read(&p).unwrap();
                assert!(bytes.starts_with(&left) && (left.is_empty() || left.ends_with(b"\n")), "only a cut last line is dropped");
                for d in &done {
                    assert_eq!(d.wdl.wins + d.wdl.draws + d.wdl.losses, 2 * d.penta.0.iter().sum::<u64>());
                }
            }
            Err(e) => {
                assert!(e.contains(&p.display().to_string()), "the error names no file: {e}");
                POINTS.count(Some(part_named(&e, POINTS_PARTS)), took);
                assert_eq!(std::fs::read(&p).unwrap(), bytes, "a refused points file is left as it was");
            }
        }
        let _ = std::fs::remove_file(&p);
    });
    POINTS.report("curve points files");
}
