//! `deepchess bench`: a fixed-depth search over built-in positions (or a suite's: the
//! match's openings, `bench --openings N`). Single thread, fixed depth, the table cleared
//! between positions: the node count is the same on every run.

use super::player::Player;
use super::time::Limits;
use crate::chess::{Game, Position};
use crate::eval::Counters;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Middle games, end games and tactical positions (most from Stockfish's bench set).
pub const POSITIONS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13",
    "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16",
    "4r1k1/r1q2ppp/ppp2n2/4P3/5Rb1/1N1BQ3/PPP3PP/R5K1 w - - 1 17",
    "2rqkb1r/ppp2p2/2npb1p1/1N1Nn2p/2P1PP2/8/PP2B1PP/R1BQK2R b KQ - 0 11",
    "r1bq1r1k/b1p1npp1/p2p3p/1p6/3PP3/1B2NN2/PP3PPP/R2Q1RK1 w - - 1 16",
    "3r1rk1/p5pp/bpp1pp2/8/q1PP1P2/b3P3/P2NQRPP/1R2B1K1 b - - 6 22",
    "r1q2rk1/2p1bppp/2Pp4/p6b/Q1PNp3/4B3/PP1R1PPP/2K4R w - - 2 18",
    "4k2r/1pb2ppp/1p2p3/1R1p4/3P4/2r1PN2/P4PPP/1R4K1 b - - 3 22",
    "3q2k1/pb3p1p/4pbp1/2r5/PpN2N2/1P2P2P/5PP1/Q2R2K1 b - - 4 26",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/8 b - - 3 54",
    "3b4/5kp1/1p1p1p1p/pP1PpP1P/P1P1P3/3KN3/8/8 w - - 0 54",
    "6k1/4pp1p/3p2p1/P1pPb3/R7/1r2P1PP/3B1P2/6K1 w - - 0 45",
    "8/3p3B/5p2/5P2/p7/PP5b/k7/6K1 w - - 0 1",
    "8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1",
    "8/8/8/5N2/8/p7/8/2NK3k w - - 0 1",
    "8/3k4/8/8/8/4B3/4KB2/2B5 w - - 0 1",
    "8/8/1P6/5pr1/8/4R3/7k/2K5 w - - 0 1",
    "8/2p4P/8/kr6/6R1/8/8/1K6 w - - 0 1",
    "8/8/3P3k/8/1p6/8/1P6/1K3n2 b - - 0 1",
    "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
    "6k1/3b3r/1p1p4/p1n2p2/1PPNpP1q/P3Q1p1/1R1RB1P1/5K2 b - - 0 1",
    "r2r1n2/pp2bk2/2p1p2p/3q4/3PN1QP/2P3R1/P4PP1/5RK1 w - - 0 1",
    "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
];

/// Default bench depth: a few seconds with the handcrafted evaluator.
pub const DEFAULT_DEPTH: u32 = 10;

/// Totals of one bench run.
#[derive(Clone, Debug, Default)]
pub struct BenchReport {
    pub positions: usize,
    pub nodes: u64,
    pub time: Duration,
    /// What the player counted during the bench.
    pub counters: Counters,
}

impl BenchReport {
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.time.as_secs_f64().max(1e-9)) as u64
    }
    /// The counters as `bench` prints them: a rate per second, or a share of the counter a
    /// part belongs to (`1234567 comparisons/s, memoised 63.9 % of comparisons`).
    pub fn counters_line(&self) -> String {
        let secs = self.time.as_secs_f64().max(1e-9);
        let part = |c: &crate::eval::Counter| match c.of {
            Some(of) => format!("{} {:.1} % of {of}", c.name, 100.0 * c.count as f64 / self.counters.get(of).max(1) as f64),
            None => format!("{} {}/s", c.name, (c.count as f64 / secs) as u64),
        };
        self.counters.0.iter().map(part).collect::<Vec<_>>().join(", ")
    }
}

/// The built-in positions as games.
pub fn builtin() -> Vec<Game> {
    POSITIONS.iter().map(|fen| Game::new(Position::from_fen(fen).expect("bench FENs are valid"))).collect()
}

/// Searches every game's position to `depth`, calling `each(index, game, nodes)` after each.
pub fn run(player: &mut dyn Player, depth: u32, games: &[Game], mut each: impl FnMut(usize, &Game, u64)) -> BenchReport {
    crate::chess::attacks::init();
    let before = player.counters();
    let mut report = BenchReport::default();
    let stop = Arc::new(AtomicBool::new(false));
    let t = Instant::now();
    for (i, game) in games.iter().enumerate() {
        player.new_game();
        let r = player.choose(game, &Limits::depth(depth), Duration::ZERO, stop.clone(), &mut |_| {});
        report.nodes += r.info.nodes;
        report.positions += 1;
        each(i, game, r.info.nodes);
    }
    report.time = t.elapsed();
    report.counters = player.counters().since(&before);
    report
}
