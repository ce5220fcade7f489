//! The classifier in the search: a position's value is the logit of P(White wins), behind the
//! shared scalar-evaluator adapter, so it plays in the same alpha-beta as every evaluator.
//!
//! One position per call on the tensor engine's tape-free layers (the same forward functions
//! as the training tape, one thread): about 4.9 MFLOP a position, two hundred times the work
//! of a DeepChess compact evaluation, which is what its nodes per second pay.

use super::features::{encode, INPUTS};
use super::model::{Cnn, ConvAct};
use crate::chess::Position;
use crate::eval::scalar::{Evaluator, ScoreComparator};
use crate::tensor::{conv, layers, pool, Kernel, Matrix};

/// Centipawns per logit unit in UCI output (the handcrafted evaluator's logistic scale).
const CP_PER_LOGIT: f32 = 173.7;

/// A loaded CNN, ready to evaluate positions.
pub struct CnnEval {
    net: Cnn,
    kernel: Kernel,
    x: Matrix,
    c1: Matrix,
    p1: Matrix,
    c2: Matrix,
    h: Matrix,
    z: Matrix,
}

impl CnnEval {
    pub fn new(net: Cnn, kernel: Kernel) -> CnnEval {
        let kernel = if kernel.available() { kernel } else { Kernel::Scalar };
        let z = || Matrix::zeros(1, 1);
        CnnEval { net, kernel, x: Matrix::zeros(1, INPUTS), c1: z(), p1: z(), c2: z(), h: z(), z: z() }
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    pub fn net(&self) -> &Cnn {
        &self.net
    }

    /// The logit of P(White wins) for `pos`.
    pub fn logit(&mut self, pos: &Position) -> f32 {
        encode(pos, self.x.row_mut(0));
        let n = &self.net;
        let a = n.arch;
        let p = &n.params;
        let k = self.kernel;
        conv::forward_with(k, 1, &a.conv1_shape(), &self.x, p.value(n.conv1.0), p.value(n.conv1.1), &mut self.c1).expect("shapes of the net");
        if a.act == ConvAct::Relu {
            layers::relu_inplace(&mut self.c1);
        }
        pool::forward(&a.pool_shape(), &self.c1, &mut self.p1).expect("shapes of the net");
        conv::forward_with(k, 1, &a.conv2_shape(), &self.p1, p.value(n.conv2.0), p.value(n.conv2.1), &mut self.c2).expect("shapes of the net");
        if a.act == ConvAct::Relu {
            layers::relu_inplace(&mut self.c2);
        }
        layers::affine(&self.c2, p.value(n.ip1.0), p.value(n.ip1.1), &mut self.h).expect("shapes of the net");
        layers::sigmoid_inplace(&mut self.h);
        layers::affine(&self.h, p.value(n.out.0), p.value(n.out.1), &mut self.z).expect("shapes of the net");
        self.z.get(0, 0)
    }
}

impl Evaluator for CnnEval {
    fn name(&self) -> &'static str {
        "cnn"
    }

    fn evaluate(&mut self, pos: &Position) -> f32 {
        self.logit(pos)
    }

    /// Values are logits of one probability: their difference is a log-odds ratio.
    fn prob_from_diff(&self, diff: f32) -> f32 {
        layers::sigmoid(diff)
    }

    fn centipawns(&self, value: f32) -> i32 {
        (value * CP_PER_LOGIT).round().clamp(-30_000.0, 30_000.0) as i32
    }
}

/// A CNN as the search's comparator.
pub fn comparator(net: Cnn, kernel: Kernel) -> ScoreComparator<CnnEval> {
    ScoreComparator::new(CnnEval::new(net, kernel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cnn::model::Arch;
    use crate::tensor::{Rng, Tape};

    /// The search's inference equals the training tape's forward pass, for both activations
    /// and every kernel this CPU has.
    #[test]
    fn inference_matches_the_tape() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r3k2r/8/8/3q4/8/8/8/R3K2R w Kq - 0 1",
            "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
        ];
        for act in [ConvAct::Linear, ConvAct::Relu] {
            let arch = Arch { conv1: 24, conv2: 12, hidden: 10, act };
            for k in Kernel::available_kernels() {
                let net = Cnn::new(arch, &mut Rng::new(7));
                let mut tape = Tape::new();
                let mut x = Matrix::zeros(1, INPUTS);
                let mut e = CnnEval::new(Cnn::new(arch, &mut Rng::new(7)), k);
                for fen in fens {
                    let pos = Position::from_fen(fen).unwrap();
                    encode(&pos, x.row_mut(0));
                    tape.reset();
                    let xv = tape.input(&x);
                    let z = net.logit_on_tape(&mut tape, xv, None).unwrap();
                    let want = tape.value(z).get(0, 0);
                    let got = e.logit(&pos);
                    assert!((got - want).abs() < 1e-4 * (1.0 + want.abs()), "{act:?} {k:?} {fen}: {got} vs {want}");
                    assert_eq!(e.logit(&pos), got, "repeatable");
                }
            }
        }
    }
}
