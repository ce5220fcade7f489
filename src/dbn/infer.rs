//! The DBN laid out for play (section IV): each head read as one value from White's side,
//! behind the shared scalar-evaluator adapter, so the three nets play in the same alpha-beta
//! and transposition table as every other evaluator.
//!
//! Readings, all in the normalised-score unit (1 = 300 cp):
//! - classify: P(win) − P(loss), the expected result with a draw worth 0;
//! - regress: the tanh output itself;
//! - quantized: the expected class value Σ p_c · value_c. The argmax would make most
//!   positions of a line tie at one of seven values and leave the search no preference
//!   inside a class; the expectation keeps the ordering the softmax knows.
//!
//! Inference is one position at a time on the shared dense layers (half-precision SIMD
//! kernels, zero inputs skipped). In the search the first layer is incremental
//! ([`crate::eval::line`]): each position's sums from its ancestor's, by the rows of the bits
//! the moves changed. Elsewhere it reads the ~34 set bits of a 784-float input kept zero
//! between calls.

use super::features::Encoding;
use super::model::{Dbn, Head};
use super::targets::{class_value, CLIP_CP};
use crate::chess::Position;
use crate::eval::line::{DenseFirst, Line};
use crate::eval::scalar::{Evaluator, ScoreComparator, SCORE_CACHE_MB};
use crate::tensor::layers::dense::{self, pad, Dense};
use crate::tensor::Kernel;

// Centipawns per logistic unit of `Evaluator::prob_from_diff`, as the handcrafted one.

/// A loaded DBN, ready to evaluate positions.
pub struct DbnEval {
    name: &'static str,
    encoding: Encoding,
    head: Head,
    layers: Vec<Dense>,
    out: Dense,
    kernel: Kernel,
    x: Vec<f32>,
    a: Vec<f32>,
    b: Vec<f32>,
    bits: Vec<u32>,
    /// The search's line and its first-layer sums.
    line: Line<f32>,
}

impl DbnEval {
    /// From a trained net, with instruction flavour `kernel`.
    pub fn new(net: &Dbn, name: &'static str, kernel: Kernel) -> DbnEval {
        let w = net.arch.widths();
        let dense_of = |(wid, bid): (crate::tensor::ParamId, crate::tensor::ParamId), n_in, n_out| {
            Dense::new(net.params.value(wid).data(), net.params.value(bid).data(), n_in, n_out)
        };
        let layers: Vec<Dense> = net.hidden.iter().zip(w.windows(2)).map(|(&ids, p)| dense_of(ids, p[0], p[1])).collect();
        let out = dense_of(net.out, *w.last().unwrap(), net.arch.head.outputs());
        let widest = layers.iter().map(|d| d.cols()).chain([out.cols()]).max().unwrap_or(0);
        DbnEval {
            name,
            encoding: net.arch.encoding,
            head: net.arch.head,
            x: vec![0.0; pad(net.arch.encoding.inputs())],
            a: vec![0.0; widest],
            b: vec![0.0; widest],
            bits: Vec::with_capacity(40),
            line: Line::new(layers[0].cols()),
            layers,
            out,
            kernel: if kernel.available() { kernel } else { Kernel::Scalar },
        }
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The output layer's values (logits, or the regression's pre-tanh value) for `pos`,
    /// the first layer from the line's sums when `pos` is the line's position at `ply`.
    fn outputs(&mut self, pos: &Position, ply: Option<usize>) -> &[f32] {
        let k = self.kernel;
        let (mut cur, mut next) = (&mut self.a, &mut self.b);
        match ply.filter(|&p| self.line.holds(p, pos)) {
            Some(p) => {
                let first = DenseFirst { d: &self.layers[0], kernel: k, bits: self.encoding.bits() };
                for (c, &s) in cur.iter_mut().zip(self.line.ensure(p, &first)) {
                    *c = s.max(0.0);
                }
            }
            None => {
                self.encoding.active(pos, &mut self.bits);
                for &i in &self.bits {
                    self.x[i as usize] = 1.0;
                }
                dense::forward_with(k, &self.layers[0], &self.x, cur, true);
                for &i in &self.bits {
                    self.x[i as usize] = 0.0;
                }
            }
        }
        for d in &self.layers[1..] {
            dense::forward_with(k, d, &cur[..d.rows()], next, true);
            std::mem::swap(&mut cur, &mut next);
        }
        dense::forward_with(k, &self.out, &cur[..self.out.rows()], next, false);
        &next[..self.out.outputs()]
    }

    /// The head's reading of `pos` (see the module documentation), in [−1, 1].
    pub fn value(&mut self, pos: &Position) -> f32 {
        self.value_at(pos, None)
    }

    /// [`DbnEval::value`], the first layer from the line's sums where `pos` is at `ply`.
    fn value_at(&mut self, pos: &Position, ply: Option<usize>) -> f32 {
        let head = self.head;
        let z = self.outputs(pos, ply);
        match head {
            Head::Regress => z[0].tanh(),
            Head::Classify => {
                let p = softmax(z);
                p[2] - p[0]
            }
            Head::Quantized => softmax(z)[..z.len()].iter().enumerate().map(|(c, p)| p * class_value(c)).sum(),
        }
    }
}

/// Softmax of up to eight logits.
fn softmax(z: &[f32]) -> [f32; 8] {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut p = [0.0f32; 8];
    let mut s = 0.0;
    for (pi, &zi) in p.iter_mut().zip(z) {
        *pi = (zi - m).exp();
        s += *pi;
    }
    p.iter_mut().for_each(|v| *v /= s);
    p
}

impl Evaluator for DbnEval {
    fn name(&self) -> &'static str {
        self.name
    }

    fn evaluate(&mut self, pos: &Position) -> f32 {
        self.value(pos)
    }

    fn set_node(&mut self, ply: usize, pos: &Position) {
        self.line.set_node(ply, pos);
    }

    fn set_root(&mut self, pos: &Position) {
        let first = DenseFirst { d: &self.layers[0], kernel: self.kernel, bits: self.encoding.bits() };
        self.line.set_root(pos, &first);
    }

    fn evaluate_at(&mut self, ply: usize, pos: &Position) -> f32 {
        self.value_at(pos, Some(ply))
    }

    fn clear(&mut self) {
        self.line.clear();
    }

    /// The first layer along the line (on by default); off, from each position's bits.
    fn set_incremental(&mut self, on: bool) -> bool {
        self.line.incremental = on;
        true
    }

    fn cp_per_unit(&self) -> f32 {
        CLIP_CP as f32
    }
}

/// A DBN as the search's comparator.
pub fn comparator(net: &Dbn, name: &'static str, kernel: Kernel) -> ScoreComparator<DbnEval> {
    ScoreComparator::cached(DbnEval::new(net, name, kernel), SCORE_CACHE_MB)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbn::model::Arch;
    use crate::tensor::{Rng, SparseBatch, Tape};

    /// Along a line of play the incremental first layer gives each position's value as the
    /// from-scratch path does (within float rounding: the sums are added in another order), for
    /// both encodings, whichever plies ask; off (`set_incremental(false)`), the same.
    #[test]
    fn the_line_gives_the_values_of_scratch() {
        crate::chess::attacks::init();
        for enc in [Encoding::Bits772, Encoding::Bits773] {
            let net = Dbn::new(Arch::new(enc, vec![40, 20], Head::Regress), &mut Rng::new(9));
            for incremental in [true, false] {
                let mut e = DbnEval::new(&net, "t", Kernel::best());
                assert!(e.set_incremental(incremental));
                let mut pos = Position::startpos();
                e.set_root(&pos);
                for ply in 1..80usize {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    pos.play(moves.as_slice()[(ply * 7919) % moves.len()]);
                    e.set_node(ply, &pos);
                    if ply % 2 == 0 || ply > 60 {
                        let (line, scratch) = (e.evaluate_at(ply, &pos), e.value(&pos));
                        assert!((line - scratch).abs() < 1e-5, "{enc:?} ply {ply}: {line} vs {scratch}");
                    }
                }
                // A position off the line is valued from its bits.
                let other = Position::from_fen("8/8/4k3/8/8/3K4/8/8 w - - 0 1").unwrap();
                assert_eq!(e.evaluate_at(3, &other), e.value(&other));
            }
        }
    }

    /// The search's inference equals the training tape's forward pass (within the half
    /// precision of the inference weights), for every head and every kernel.
    #[test]
    fn inference_matches_the_tape() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r3k2r/8/8/3q4/8/8/8/R3K2R w Kq - 0 1",
            "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
        ];
        for head in Head::ALL {
            for enc in [Encoding::Bits772, Encoding::Bits773] {
                let net = Dbn::new(Arch::new(enc, vec![40, 20], head), &mut Rng::new(7));
                for k in [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512] {
                    let mut e = DbnEval::new(&net, "t", k);
                    for fen in fens {
                        let pos = Position::from_fen(fen).unwrap();
                        let mut bits = Vec::new();
                        enc.active(&pos, &mut bits);
                        let x = SparseBatch::from_rows(enc.inputs(), &[bits]).unwrap();
                        let mut tape = Tape::new();
                        let z = net.logits_on_tape(&mut tape, &x, None).unwrap();
                        let z = tape.value(z).row(0).to_vec();
                        let want = match head {
                            Head::Regress => z[0].tanh(),
                            Head::Classify => softmax(&z)[2] - softmax(&z)[0],
                            Head::Quantized => softmax(&z)[..z.len()].iter().enumerate().map(|(c, p)| p * class_value(c)).sum(),
                        };
                        let got = e.value(&pos);
                        assert!((got - want).abs() < 2e-2, "{head:?} {k:?} {fen}: {got} vs {want}");
                        assert_eq!(e.value(&pos), got, "the input buffer is left clean");
                    }
                }
            }
        }
    }
}
