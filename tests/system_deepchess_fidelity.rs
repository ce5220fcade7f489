//! The DeepChess fidelity experiment's machinery (docs/results.md, "The paper's 98 %"):
//! `data --split both` (held-out games and held-out positions of trained games on one
//! training set), a training run judged under both protocols, every figure labelled, and
//! the data-parallel training step against the plain tape.

use deepchess::tensor::Architecture as _;

mod common;

use common::{deepchess, TempDir};
use deepchess::deepchess::features::INPUTS;
use deepchess::deepchess::model::{batch_of, Arch, Net};
use deepchess::deepchess::step::PairStep;
use deepchess::tensor::{Matrix, Rng, Sgd, SparseBatch, Tape};
use std::collections::HashSet;
use std::path::Path;


fn sample_pgn() -> String {
    format!("{}/tests/data/pgn/sf15-sample.pgn", env!("CARGO_MANIFEST_DIR"))
}

fn games(f: &Path) -> HashSet<u32> {
    deepchess::data::dataset::Dataset::load(f).unwrap().records.iter().map(|r| r.game).collect()
}

#[test]
fn split_both_holds_out_games_and_positions_and_training_names_both_protocols() {
    let dir = TempDir::new("fidelity");
    let out = dir.join("both");
    let r = deepchess(&["data", "--pgn", &sample_pgn(), "--split", "both", "--valid-per-mille", "200", "--per-game", "0", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("position validation"), "{}", String::from_utf8_lossy(&r.stdout));
    let show = |f: &str| String::from_utf8_lossy(&deepchess(&["data", "--show", out.join(f).to_str().unwrap()]).stdout).to_string();
    assert!(show("valid.dcds").contains("protocol: games"), "{}", show("valid.dcds"));
    assert!(show("valid-positions.dcds").contains("protocol: positions"), "{}", show("valid-positions.dcds"));
    assert!(show("train.dcds").contains("protocol: both"));
    // Held-out games share no game with training; held-out positions all come from trained games.
    let (t, v, p) = (games(&out.join("train.dcds")), games(&out.join("valid.dcds")), games(&out.join("valid-positions.dcds")));
    assert!(!v.is_empty() && v.is_disjoint(&t), "a validation game is trained on");
    assert!(!p.is_empty() && p.iter().all(|g| t.contains(g)), "a held-out position's game is not trained on");

    // `accuracy` labels each set with its own protocol.
    let compact = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
    for (set, label) in [("valid", "[game split]"), ("valid-positions", "[position split]"), ("train", "[training positions]")] {
        let r = deepchess(&["accuracy", "--net", &compact, "--data", out.to_str().unwrap(), "--set", set, "--pairs", "200"]);
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && text.matches(label).count() == 4, "{set}: {text}{}", String::from_utf8_lossy(&r.stderr));
    }

    // A tiny run judges every epoch on both sets and tabulates both, labelled.
    let run = dir.join("run");
    let r = deepchess(&["train", "--profile", "tiny", "--threads", "2", "--phases", "siamese", "--data", out.to_str().unwrap(), "--out", run.to_str().unwrap()]);
    let (so, se) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(r.status.success(), "{so}{se}");
    assert!(so.contains("validation [game split]") && so.contains("validation [position split]") && so.contains("training positions"), "{so}");
    let log = std::fs::read_to_string(run.join("log.csv")).unwrap();
    assert_eq!(log.lines().filter(|l| l.starts_with("deepchess.valid_positions,")).count(), 3, "{log}");

    // A dataset rebuilt without the position split does not keep the older one beside it.
    let r = deepchess(&["data", "--pgn", &sample_pgn(), "--valid-per-mille", "200", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(r.status.success() && !out.join("valid-positions.dcds").exists());
}

/// The sharded, stacked step gives the gradients of the plain tape on the whole batch
/// (to rounding): one SGD step from the same net lands on the same weights.
#[test]
fn the_data_parallel_step_matches_the_plain_tape() {
    let mut rng = Rng::new(11);
    let rows: Vec<Vec<u16>> = (0..2 * 37)
        .map(|_| {
            let mut r: Vec<u16> = (0..30).map(|_| rng.below(INPUTS as u64) as u16).collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    let (a, b): (Vec<&[u16]>, Vec<&[u16]>) = (rows[..37].iter().map(|r| r.as_slice()).collect(), rows[37..].iter().map(|r| r.as_slice()).collect());
    let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    batch_of(&a, &mut xa);
    batch_of(&b, &mut xb);
    let labels: Vec<usize> = (0..37).map(|i| i % 2).collect();
    let mut target = Matrix::zeros(37, 2);
    for (i, &l) in labels.iter().enumerate() {
        target.set(i, l, 1.0);
    }
    let arch = Arch::parse("773-24-16/16-2").unwrap();
    let mut plain = Net::new(arch.clone(), &mut Rng::new(5));
    let mut sharded = Net::new(arch, &mut Rng::new(5));
    let mut tape = Tape::new();
    let z = plain.pair_logits_on_tape(&mut tape, &xa, &xb).unwrap();
    let t = tape.input(&target);
    let loss = tape.softmax_cross_entropy(z, t).unwrap();
    let want_loss = tape.scalar(loss);
    tape.backward(loss, &mut plain.params).unwrap();
    use deepchess::tensor::Optimizer;
    Sgd::new(0.5).step(&mut plain.params);
    let (got_loss, _) = PairStep::new().step(&mut sharded, &xa, &xb, &target, &labels, &mut Sgd::new(0.5)).unwrap();
    assert!((got_loss - want_loss).abs() < 1e-5, "loss {got_loss} vs {want_loss}");
    for id in plain.params.ids() {
        for (x, y) in plain.params.value(id).data().iter().zip(sharded.params.value(id).data()) {
            assert!((x - y).abs() <= 1e-5 * (1.0 + x.abs()), "{}: {x} vs {y}", plain.params.name(id));
        }
    }
}

/// `bench-train` runs both phases and prints its table; without JAX (or with --no-jax) the
/// anchor is skipped with a message, never an error. Bad flags are named.
#[test]
fn bench_train_prints_its_table_and_names_bad_flags() {
    let r = deepchess(&["bench-train", "--seconds", "0.05", "--rounds", "1", "--no-jax", "--batch", "32", "--breakdown"]);
    let (so, se) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(r.status.success(), "{so}{se}");
    for want in ["FMA peak", "JAX: anchor skipped (--no-jax)", "2: DeepChess pairs", "1: Pos2Vec", "quiet stretches", "whole step on 1 thread", "sparse layer 773-600"] {
        assert!(so.contains(want), "no '{want}' in:\n{so}");
    }
    for bad in [["--phase", "3"], ["--rounds", "0"], ["--seconds", "x"]] {
        let r = deepchess(&["bench-train", bad[0], bad[1], "--no-jax"]);
        assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains(bad[0]), "{bad:?}: {}", String::from_utf8_lossy(&r.stderr));
    }
}
