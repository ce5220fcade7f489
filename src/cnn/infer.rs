//! The classifier laid out for play: a position's value is the logit of P(White wins),
//! behind the shared scalar-evaluator adapter, so it plays in the same alpha-beta as every
//! evaluator.
//!
//! One position per call on the tensor engine's tape-free layers (the same forward functions
//! as the training tape, one thread). The first convolution's pre-activation is linear in the
//! input, so it is summed from the pieces alone: the bias and side-to-move plane's term
//! (precomputed for each side), plus, for each piece, its ±weight row at every output the
//! 4×4 kernel sees it from (at most 16 × 400 adds a piece, against 25 × 112 × 400 for the
//! dense convolution). The second convolution then dominates: about 2.6 MFLOP a position,
//! a hundred times the work of a DeepChess compact evaluation.

use super::features::{INPUTS, PLANES, SIDE_PLANE};
use super::model::{Cnn, ConvAct};
use crate::chess::Position;
use crate::eval::scalar::{Evaluator, ScoreComparator, SCORE_CACHE_MB};
use crate::chess::{Color, Role};
use crate::tensor::{layers::conv, layers, layers::pool, kernels::vecops, Kernel, Matrix};


/// A loaded CNN, ready to evaluate positions.
pub struct CnnEval {
    net: Cnn,
    kernel: Kernel,
    /// Bias plus the side plane's term of the first convolution, White then Black to move
    /// (`25 × conv1`, output positions in rows).
    side: [Vec<f32>; 2],
    /// Per input square: the (output position, kernel position) pairs that see it.
    taps: Vec<Vec<(u16, u16)>>,
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
        let s = net.arch.conv1_shape();
        let side = [1.0f32, -1.0].map(|v| {
            let mut x = Matrix::zeros(1, INPUTS);
            x.data_mut().chunks_exact_mut(PLANES).for_each(|sq| sq[SIDE_PLANE] = v);
            let mut y = Matrix::zeros(1, 1);
            conv::forward_with(kernel, 1, &s, &x, net.params.value(net.conv1.0), net.params.value(net.conv1.1), &mut y).expect("shapes of the net");
            y.into_vec()
        });
        let mut taps = vec![Vec::new(); 64];
        for (oy, ox) in (0..s.out_h()).flat_map(|oy| (0..s.out_w()).map(move |ox| (oy, ox))) {
            for (ky, kx) in (0..s.kh).flat_map(|ky| (0..s.kw).map(move |kx| (ky, kx))) {
                let sq = (oy + ky) * 8 + ox + kx;
                taps[sq].push(((oy * s.out_w() + ox) as u16, (ky * s.kw + kx) as u16));
            }
        }
        CnnEval { net, kernel, side, taps, c1: z(), p1: z(), c2: z(), h: z(), z: z() }
    }

    /// The first convolution's pre-activation for `pos`, summed from its pieces.
    fn conv1_sparse(&mut self, pos: &Position) {
        let c = self.net.arch.conv1;
        let w = self.net.params.value(self.net.conv1.0).data();
        self.c1.resize(1, self.side[0].len());
        let acc = self.c1.data_mut();
        acc.copy_from_slice(&self.side[(pos.turn() == Color::Black) as usize]);
        for (color, sign) in [(Color::White, 1.0), (Color::Black, -1.0)] {
            for role in Role::ALL {
                let mut bb = pos.pieces(color, role).0;
                while bb != 0 {
                    let sq = bb.trailing_zeros() as usize;
                    bb &= bb - 1;
                    for &(o, kpos) in &self.taps[sq] {
                        let row = (kpos as usize * PLANES + role.index()) * c;
                        vecops::axpy_with(self.kernel, &mut acc[o as usize * c..][..c], sign, &w[row..row + c]);
                    }
                }
            }
        }
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    pub fn net(&self) -> &Cnn {
        &self.net
    }

    /// The logit of P(White wins) for `pos`.
    pub fn logit(&mut self, pos: &Position) -> f32 {
        self.conv1_sparse(pos);
        let n = &self.net;
        let a = n.arch;
        let p = &n.params;
        let k = self.kernel;
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

    // Values are logits (the default scale): their difference is a log-odds ratio.
}

/// A CNN as the search's comparator.
pub fn comparator(net: Cnn, kernel: Kernel) -> ScoreComparator<CnnEval> {
    ScoreComparator::cached(CnnEval::new(net, kernel), SCORE_CACHE_MB)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cnn::features::encode;
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
