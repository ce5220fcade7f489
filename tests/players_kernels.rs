//! `PlayerSettings.kernel` (what `bench --kernel` sets) reaches every player of the registry:
//! each kernel this CPU has, forced on each player, is the one its `loaded` string names, and
//! it plays as the scalar kernel does within float tolerance (the same move, or a score
//! within a few centipawns where two moves are that close). A player that ignored the
//! setting would make a kernel A/B silently impossible.

mod common;

use deepchess::chess::{Game, Position};
use deepchess::players::PLAYERS;
use deepchess::search::bench::POSITIONS;
use deepchess::search::{Limits, PlayerSettings, Score, SearchResult};
use deepchess::tensor::Kernel;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Positions of the bench, searched at this depth without selectivity or quiescence: a
/// full-width tree, so two kernels differ only by their evaluations' rounding.
const POSITIONS_TESTED: usize = 6;
const DEPTH: u32 = 2;
/// How far apart two kernels' scores may be where they choose different moves.
const CP_TOLERANCE: i32 = 3;

fn settings(kernel: Kernel) -> PlayerSettings {
    PlayerSettings { kernel: Some(kernel.name()), ..PlayerSettings::new(1) }
}

/// The player's choices at the tested positions with `kernel`, and its `loaded` string.
fn choices(entry: &deepchess::players::Entry, kernel: Kernel) -> (Vec<SearchResult>, Option<String>) {
    let built = entry.build(&settings(kernel)).unwrap_or_else(|e| panic!("{} with the {} kernel: {e}", entry.name, kernel.name()));
    let mut player = built.player;
    player.set_selective(false);
    player.set_quiescence(false);
    let results = POSITIONS
        .iter()
        .take(POSITIONS_TESTED)
        .map(|fen| {
            player.new_game();
            let game = Game::new(Position::from_fen(fen).unwrap());
            player.choose(&game, &Limits::depth(DEPTH), Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {})
        })
        .collect();
    (results, built.loaded)
}

#[test]
fn every_player_plays_the_kernel_it_is_given() {
    let kernels = Kernel::available_kernels();
    assert_eq!(kernels[0], Kernel::Scalar);
    let mut failures = Vec::new();
    for entry in PLAYERS {
        let (want, _) = choices(entry, Kernel::Scalar);
        for &k in &kernels {
            let (got, loaded) = choices(entry, k);
            match &loaded {
                // Only a player without a file says nothing: the handcrafted evaluator, and
                // the random net (whose kernel the agreement below still exercises).
                None => assert!(entry.default_net.is_none(), "{}: nothing loaded", entry.name),
                Some(what) => {
                    if !what.contains(&format!("{} kernel", k.name())) {
                        failures.push(format!("{} with the {} kernel: loaded '{what}' does not name it", entry.name, k.name()));
                    }
                }
            }
            for ((w, g), fen) in want.iter().zip(&got).zip(POSITIONS) {
                let close = match (w.info.score, g.info.score) {
                    (Score::Cp(a), Score::Cp(b)) => (a - b).abs() <= CP_TOLERANCE,
                    (a, b) => a == b,
                };
                if !close {
                    failures.push(format!(
                        "{} with the {} kernel at {fen}: {:?} {:?}, the scalar kernel {:?} {:?}",
                        entry.name,
                        k.name(),
                        g.best.map(|m| m.to_string()),
                        g.info.score,
                        w.best.map(|m| m.to_string()),
                        w.info.score
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// One rule for every player's default kernel (`Kernel::for_player`): the process's
/// `DEEPCHESS_KERNEL` reaches every player with a net (DeepChess, DBN and CNN players used to
/// take the best kernel whatever it said), and each names the kernel it runs.
#[test]
fn the_kernel_override_reaches_every_player_with_a_net() {
    for p in PLAYERS.iter().filter(|p| p.default_net.is_some()) {
        let o = common::command().args(["bench", "--eval", p.name, "--depth", "1"]).env("DEEPCHESS_KERNEL", "scalar").output().unwrap();
        let err = common::text(&o.stderr);
        assert!(o.status.success(), "{}: {err}", p.name);
        assert!(err.lines().any(|l| l.starts_with("net ") && l.contains(", scalar kernel")), "{}: {err}", p.name);
    }
}
