//! `deepchess bench-neurochess`: seed 004's costs beside their anchors, measured in the same
//! run in interleaved rounds (medians): the 175 features and V's evaluation (features and
//! the 175-80-1 net) against the handcrafted evaluator's evaluations/s on the same
//! positions, and a Tangent-Prop step (values and slopes) against a plain one (values).
//! Search nodes/s with V come from `deepchess bench --vs neurochess`.

use crate::chess::Position;
use crate::eval::scalar::Evaluator;
use crate::eval::Handcrafted;
use crate::io::args::{self, median, CliError, Flag};
use crate::neurochess::features::{features_into, FEATURES};
use crate::neurochess::model::{Pass, Value, MAX_HIDDEN};
use crate::neurochess::infer::VEval;
use crate::tensor::Rng;
use std::hint::black_box;
use crate::train::system::Command;
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "seconds", value: Some("S"), help: "time per figure and round (default 0.5)" },
    Flag { name: "rounds", value: Some("N"), help: "interleaved rounds, medians reported (default 5)" },
];

/// The positions: the bench's 30, and every position of a few plies of play from each (so
/// that quiet and tactical boards are both there).
fn positions() -> Vec<Position> {
    let mut out = Vec::new();
    for fen in crate::search::bench::POSITIONS {
        let mut p = Position::from_fen(fen).expect("the bench's positions parse");
        for _ in 0..8 {
            out.push(p);
            let moves = p.legal_moves();
            let Some(&m) = moves.as_slice().get(out.len() % moves.len().max(1)) else { break };
            p.play(m);
        }
    }
    out
}

/// Calls of `f` per second, over `secs`.
fn rate(secs: f64, n: usize, mut f: impl FnMut(usize)) -> f64 {
    let t = Instant::now();
    let mut done = 0usize;
    while t.elapsed().as_secs_f64() < secs {
        for i in 0..n {
            f(i);
        }
        done += n;
    }
    done as f64 / t.elapsed().as_secs_f64()
}

/// `deepchess bench-neurochess`, a benchmark of NeuroChess (`SYSTEM.commands`).
pub const COMMAND: Command = Command {
    name: "bench-neurochess",
    synopsis: "[--rounds N]",
    about: "seed 004's features, V evaluations, Tangent-Prop steps beside their anchors",
    run,
};

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let help = args::usage("bench-neurochess", "[--seconds S] [--rounds N]", "Seed 004's features, V evaluations and Tangent-Prop steps beside their anchors.", FLAGS);
    let p = args::parse("bench-neurochess", argv, FLAGS, &help)?;
    let secs: f64 = p.get_or("bench-neurochess", "seconds", 0.5)?;
    let rounds: usize = p.get_or("bench-neurochess", "rounds", 5)?;
    if !(secs > 0.0 && secs < 1e4) || rounds == 0 {
        return Err(CliError::Usage("deepchess bench-neurochess: --seconds must be positive and --rounds at least 1".into()));
    }
    crate::chess::attacks::init();
    let pos = positions();
    let mut rng = Rng::new(1);
    let v = Value::new(MAX_HIDDEN, &mut rng);
    let mut hc = Handcrafted;
    let mut ve = VEval::new(v.clone());
    let mut x = vec![0.0f32; FEATURES];
    // Tangent-Prop against a plain step: one board's gradient, slopes of a typical size.
    let xs: Vec<Vec<f32>> = pos
        .iter()
        .map(|p| {
            features_into(p, &mut x);
            x.clone()
        })
        .collect();
    let slope: Vec<f32> = (0..FEATURES).map(|_| rng.uniform(-0.01, 0.01)).collect();
    let mut net = v.clone();
    let mut pass = Pass::default();
    let mut figures: [Vec<f64>; 5] = Default::default();
    for _ in 0..rounds {
        figures[0].push(rate(secs, pos.len(), |i| {
            black_box(hc.evaluate(&pos[i]));
        }));
        figures[1].push(rate(secs, pos.len(), |i| features_into(black_box(&pos[i]), &mut x)));
        figures[2].push(rate(secs, pos.len(), |i| {
            black_box(ve.evaluate(&pos[i]));
        }));
        figures[3].push(rate(secs, xs.len(), |i| {
            black_box(net.accumulate(&xs[i], 0.1, 1.0, None, &mut pass));
        }));
        figures[4].push(rate(secs, xs.len(), |i| {
            black_box(net.accumulate(&xs[i], 0.1, 1.0, Some((&slope, 0.1, None)), &mut pass));
        }));
    }
    let m: Vec<f64> = figures.iter_mut().map(|f| median(f)).collect();
    println!("seed 004 on {} positions, medians of {rounds} interleaved rounds of {secs} s, one thread", pos.len());
    println!("{:<44} {:>14} {:>22}", "what", "per second", "against handcrafted");
    println!("{:<44} {:>14.0} {:>22}", "handcrafted evaluations", m[0], "1.00x");
    println!("{:<44} {:>14.0} {:>21.2}x", "NeuroChess features (175)", m[1], m[0] / m[1]);
    println!("{:<44} {:>14.0} {:>21.2}x", "V evaluations (features + 175-80-1)", m[2], m[0] / m[2]);
    println!("{:<44} {:>14.0}", "plain step (value gradient, one board)", m[3]);
    println!("{:<44} {:>14.0} {:>19.2}x", "Tangent-Prop step (values and slopes)", m[4], m[3] / m[4]);
    println!("(the last ratio: a Tangent-Prop step's time over a plain step's; the others: times slower than a handcrafted evaluation)");
    Ok(())
}
