//! V laid out for play: a position's value is V's estimate of White's expected result,
//! behind the shared scalar-evaluator adapter, so it plays in the same alpha-beta as every
//! evaluator (the seed's "same search" condition), in the players and in self-play.
//!
//! The whole inference path is here: the net's features ([`super::feature_set`]), then V's one
//! hidden layer. The key is the logit of the result read as a probability: with
//! E = 2p − 1 = tanh(u) for White's expected result E, the log-odds of p is 2u = 2·atanh(E),
//! so the handcrafted evaluator's logistic scale (`eval::CP_PER_LOGIT` centipawns a unit) applies unchanged.

use super::model::Value;
use crate::tensor::kernels::simd::{active_kernel, Kernel};
use crate::tensor::kernels::vecops::{axpy_rows_with, sigmoid_bias_with};
use crate::chess::Position;
use crate::eval::scalar::{Evaluator, ScoreComparator, SCORE_CACHE_MB};
use crate::search::Searcher;

// Centipawns per logit unit in UCI output (the handcrafted evaluator's logistic scale).
/// V's output is clamped this far inside (−1, 1) before the logit: ±14.5 units.
const EDGE: f32 = 1e-6;

/// A loaded V, ready to evaluate positions: the features, then the hidden layer as one
/// `axpy` per nonzero feature and `tanh(a) = 2σ(2a) − 1` by the shared vectorised sigmoid,
/// on the kernel flavour chosen at start-up. Neither step fuses a multiply-add, so every
/// flavour gives the same bits (self-play, and so training, is the same on every host); the
/// result is within a few 1e-7 of [`Value::forward`], the training path (tested).
#[derive(Clone)]
pub struct VEval {
    v: Value,
    x: Vec<f32>,
    h: Vec<f32>,
    zeros: Vec<f32>,
    kernel: Kernel,
    /// Logit units the search adds for the side to move (option `Tempo`; 0, the seed's V).
    tempo: f32,
}

impl VEval {
    pub fn new(v: Value) -> VEval {
        VEval::with_kernel(v, active_kernel())
    }

    /// On a given kernel flavour (a player's `PlayerSettings.kernel`; tests force each one);
    /// one this CPU lacks becomes the portable loop.
    pub fn with_kernel(v: Value, kernel: Kernel) -> VEval {
        let n = v.hidden;
        let kernel = if kernel.available() { kernel } else { Kernel::Scalar };
        VEval { x: vec![0.0; v.width()], v, h: Vec::with_capacity(n), zeros: vec![0.0; n], kernel, tempo: 0.0 }
    }

    /// With `centipawns` added to the search's value for the side to move (a tempo term, as
    /// handcrafted evaluations have; beyond the seed). TD(0) leaves V counting the move
    /// against its owner (docs/results.md, "The result on both final boards"), which makes
    /// every stand-pat pessimistic and the quiescence tree explode; this offsets it in play.
    /// Training never reads it: [`VEval::value`] is V itself.
    pub fn with_tempo(mut self, centipawns: f32) -> VEval {
        self.tempo = centipawns / crate::eval::CP_PER_LOGIT;
        self
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// V(pos): White's expected result in (−1, 1).
    pub fn value(&mut self, pos: &Position) -> f32 {
        self.v.features.features_into(pos, &mut self.x);
        let (w1, b1, w2, b2) = self.v.weights();
        let u = if self.v.hidden == 0 {
            self.x.iter().zip(w2).map(|(a, b)| a * b).sum::<f32>()
        } else {
            self.h.clear();
            self.h.extend_from_slice(b1);
            axpy_rows_with(self.kernel, &mut self.h, &self.x, w1);
            self.h.iter_mut().for_each(|a| *a *= 2.0);
            sigmoid_bias_with(self.kernel, &mut self.h, &self.zeros);
            self.h.iter().zip(w2).map(|(s, w)| (2.0 * s - 1.0) * w).sum::<f32>()
        };
        (u + b2).tanh()
    }

    pub fn net(&self) -> &Value {
        &self.v
    }
}

/// The search's key for V's output `e`: the log-odds 2·atanh(e).
pub fn logit(e: f32) -> f32 {
    // atanh(−x) = −atanh(x) exactly (libm's is not odd to the bit), so colours stay symmetric.
    let a = e.abs().min(1.0 - EDGE);
    2.0 * a.atanh().copysign(e)
}

impl Evaluator for VEval {
    fn name(&self) -> &'static str {
        "neurochess"
    }

    fn evaluate(&mut self, pos: &Position) -> f32 {
        let e = self.value(pos);
        let tempo = if pos.turn() == crate::chess::Color::White { self.tempo } else { -self.tempo };
        logit(e) + tempo
    }

    /// One of V's features is the fifty-move clock, which the zobrist key leaves out.
    fn cache_key(&self, pos: &Position) -> u64 {
        pos.hash() ^ (pos.halfmove_clock() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    // Values are logits (the default scale): their difference is a log-odds ratio.
}

/// V as the search's comparator on kernel flavour `kernel`, a searcher around it.
pub fn searcher(v: Value, kernel: Kernel, hash_mb: usize) -> Searcher<ScoreComparator<VEval>> {
    tempo_searcher(v, kernel, hash_mb, 0.0)
}

/// [`searcher`] with a tempo term ([`VEval::with_tempo`]).
pub fn tempo_searcher(v: Value, kernel: Kernel, hash_mb: usize, tempo_cp: f32) -> Searcher<ScoreComparator<VEval>> {
    Searcher::new(ScoreComparator::cached(VEval::with_kernel(v, kernel).with_tempo(tempo_cp), SCORE_CACHE_MB), hash_mb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::features::{features_into, FEATURES};
    use crate::tensor::Rng;

    /// The key orders positions as V does; the logit is finite at V's edges, and odd.
    #[test]
    fn keys_follow_the_value() {
        let mut e = VEval::new(Value::new(6, &mut Rng::new(3)));
        let a = Position::startpos();
        let b = Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1").unwrap();
        let (va, vb) = (e.value(&a), e.value(&b));
        let (ka, kb) = (e.evaluate(&a), e.evaluate(&b));
        assert_eq!(va < vb, ka < kb);
        assert!((logit(va) - ka).abs() < 1e-6);
        assert!(logit(1.0).is_finite() && logit(-1.0) == -logit(1.0));
        assert!((e.prob_from_diff(0.0) - 0.5).abs() < 1e-6);
    }

    /// The tempo term moves the search's value toward the side to move by its centipawns, and
    /// nothing else: V itself (training's value) is unchanged.
    #[test]
    fn the_tempo_term_favours_the_side_to_move() {
        crate::chess::attacks::init();
        let v = Value::new(6, &mut Rng::new(3));
        let (mut plain, mut tempo) = (VEval::new(v.clone()), VEval::new(v).with_tempo(45.0));
        let w = Position::startpos();
        let mut b = w;
        b.play_null();
        let unit = 45.0 / crate::eval::CP_PER_LOGIT;
        assert!((tempo.evaluate(&w) - plain.evaluate(&w) - unit).abs() < 1e-5);
        assert!((tempo.evaluate(&b) - plain.evaluate(&b) + unit).abs() < 1e-5);
        assert_eq!(tempo.value(&w), plain.value(&w));
        let (a, b) = (tempo.evaluate(&w), plain.evaluate(&w));
        assert!((tempo.centipawns(a) - plain.centipawns(b) - 45).abs() <= 1, "45 cp, each side rounded");
    }

    /// V reads the fifty-move clock, so its cached values are kept apart by it: positions that
    /// differ only there get different keys (and may get different values), and a cached
    /// searcher searches exactly as an uncached one.
    #[test]
    fn cached_values_are_kept_apart_by_the_fifty_move_clock() {
        crate::chess::attacks::init();
        let e = VEval::new(Value::new(8, &mut Rng::new(3)));
        let a = Position::from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 40").unwrap();
        let b = Position::from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 60 70").unwrap();
        assert_eq!(a.hash(), b.hash(), "the zobrist key leaves the clocks out");
        assert_ne!(e.cache_key(&a), e.cache_key(&b));
        assert_ne!(e.clone().value(&a), e.clone().value(&b), "V reads the clock");
        let v = Value::new(8, &mut Rng::new(4));
        let mut plain = Searcher::new(ScoreComparator::new(VEval::new(v.clone())), 2);
        let mut cached = searcher(v, Kernel::best(), 2);
        let games = crate::search::bench::builtin();
        let (x, y) = (crate::search::bench::run(&mut plain, 3, &games[..8], |_, _, _| {}), crate::search::bench::run(&mut cached, 3, &games[..8], |_, _, _| {}));
        assert_eq!(x.nodes, y.nodes);
        assert!(y.counters.get("score cache hits") > 0);
    }

    /// The fast path equals the training path within float tolerance, and gives the same bits
    /// on every kernel flavour this host has, on positions of a few plies of play.
    #[test]
    fn the_fast_path_is_the_training_path() {
        use super::super::model::Pass;
        crate::chess::attacks::init();
        for hidden in [0usize, 80] {
            let v = Value::new(hidden, &mut Rng::new(5));
            let mut pass = Pass::default();
            let mut x = vec![0.0f32; FEATURES];
            let evals: Vec<VEval> = Kernel::available_kernels().into_iter().map(|k| VEval::with_kernel(v.clone(), k)).collect();
            for fen in crate::search::bench::POSITIONS.iter().take(12) {
                let mut p = Position::from_fen(fen).unwrap();
                for ply in 0..6 {
                    features_into(&p, &mut x);
                    let want = v.forward(&x, &mut pass);
                    let got: Vec<f32> = evals.clone().iter_mut().map(|e| e.value(&p)).collect();
                    assert!((got[0] - want).abs() < 2e-6, "hidden {hidden}: {} vs {want}", got[0]);
                    assert!(got.iter().all(|g| g.to_bits() == got[0].to_bits()), "kernels differ: {got:?}");
                    let moves = p.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    p.play(moves.as_slice()[ply % moves.len()]);
                }
            }
        }
    }
}
