//! DeepChess §5.1 (src/deepchess/understanding.rs): every shipped comparator net orders every
//! material and imbalance pair the right way, and docs/results.md holds the tables that
//! `deepchess compare --suite` prints for the shipped nets today (a changed net or pair makes
//! this fail until the docs are regenerated).

mod common;

use deepchess::tensor::NetFile;
use deepchess::chess::Position;
use deepchess::deepchess::model::Net;
use deepchess::deepchess::understanding::{prefers, PAIRS, SACRIFICES};

#[test]
fn shipped_nets_know_the_piece_values_and_imbalances() {
    for file in ["deepchess.dcw", "distilled.dcw", "compact.dcw"] {
        let path = deepchess::players::default_net_path(file).unwrap();
        let (net, _) = Net::load(&path).unwrap();
        for p in PAIRS.iter().filter(|p| p.group == "piece values" || p.group == "imbalances") {
            let (a, b) = (Position::from_fen(p.better).unwrap(), Position::from_fen(p.worse).unwrap());
            let v = prefers(&net, &a, &b).unwrap();
            assert!(v > 0.55, "{file}: {} gives {v}", p.concept);
            // And the reverse question the other way round (the average is symmetric).
            assert!((prefers(&net, &b, &a).unwrap() - (1.0 - v)).abs() < 1e-5, "{file}: {}", p.concept);
        }
    }
    // Every pair differs, and every sacrifice is legal where it is played.
    for p in PAIRS {
        assert_ne!(p.better, p.worse, "{}", p.concept);
    }
    for s in SACRIFICES {
        let pos = Position::from_fen(s.fen).unwrap();
        assert!(pos.legal_moves().as_slice().contains(&pos.parse_uci(s.uci).unwrap()), "{}", s.game);
    }
}

#[test]
fn the_docs_hold_what_the_suite_prints() {
    let o = common::command().args(["compare", "--suite"]).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert!(printed.matches('\n').count() > PAIRS.len() + 2 * SACRIFICES.len(), "{printed}");
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results.md")).unwrap();
    assert!(docs.contains(&printed), "docs/results.md, section 5.1, is stale: regenerate it with `deepchess compare --suite`:\n{printed}");
}
