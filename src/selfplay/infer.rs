//! The agents laid out for play and self-play (seed 002, "selecting the action"): [`Infer`]
//! runs one net on one position without a tape (buffers kept between calls), [`evaluate`]
//! runs the nets the position needs of the side to move's agent into [`Values`], and
//! [`QScorer`] is the `qagent` player's move scorer: each move's composed value, by the rule
//! of [`super::policy`].

use super::features::{encode, INPUTS};
use super::model::{Agents, Net};
use super::policy::{choose_among, move_scores, Compose, Values};
use crate::chess::{Color, Game, Move, Position, Role};
use crate::search::MoveScorer;
use crate::tensor::kernels::simd::{active_kernel, Kernel};
use crate::tensor::layers::{affine_act, conv};
use crate::tensor::{Matrix, Result};

/// One position through nets without a tape (play and self-play): buffers kept between calls.
pub struct Infer {
    kernel: Kernel,
    x: Matrix,
    a: Matrix,
    b: Matrix,
}

impl Infer {
    /// On kernel flavour `kernel`; one this CPU lacks becomes the portable loop.
    pub fn new(kernel: Kernel) -> Infer {
        let kernel = if kernel.available() { kernel } else { Kernel::Scalar };
        Infer { kernel, x: Matrix::zeros(1, INPUTS), a: Matrix::zeros(1, 1), b: Matrix::zeros(1, 1) }
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The encoded position to evaluate next (length 384).
    pub fn input(&mut self) -> &mut [f32] {
        self.x.data_mut()
    }

    /// The 64 values of `net` of `colour`'s agent for the input, into `out`.
    pub fn eval(&mut self, agents: &Agents, colour: Color, net: Net, out: &mut [f32; 64]) -> Result<()> {
        self.eval_seen(agents, colour, net, out, |_, _| {})
    }

    /// [`Infer::eval`], showing `seen` each hidden layer's activations after its ReLU (layer
    /// 0–3: the three convolutions, their rows the board's squares and their columns the
    /// filters, then the dense layer): what the nets' health is measured on (`health`).
    pub fn eval_seen(&mut self, agents: &Agents, colour: Color, net: Net, out: &mut [f32; 64], mut seen: impl FnMut(usize, &Matrix)) -> Result<()> {
        let id = agents.layout.tensors(colour, net);
        let p = &agents.params;
        let [s1, s2, s3] = agents.layout.arch.convs();
        conv::forward_with(self.kernel, 1, &s1, &self.x, p.value(id[0]), p.value(id[1]), &mut self.a)?;
        relu(&mut self.a);
        seen(0, &self.a);
        conv::forward_with(self.kernel, 1, &s2, &self.a, p.value(id[2]), p.value(id[3]), &mut self.b)?;
        relu(&mut self.b);
        seen(1, &self.b);
        conv::forward_with(self.kernel, 1, &s3, &self.b, p.value(id[4]), p.value(id[5]), &mut self.a)?;
        relu(&mut self.a);
        seen(2, &self.a);
        affine_act(&self.a, p.value(id[6]), p.value(id[7]), true, &mut self.b)?;
        seen(3, &self.b);
        affine_act(&self.b, p.value(id[8]), p.value(id[9]), false, &mut self.a)?;
        out.copy_from_slice(self.a.data());
        Ok(())
    }
}

fn relu(m: &mut Matrix) {
    crate::tensor::layers::relu_inplace(m)
}

/// Runs the nets the position needs (the piece selector, and the move selectors of the piece
/// types that can move, with queen, rook, bishop and knight when a pawn can promote) of the
/// side to move's agent, into `values`.
pub fn evaluate(infer: &mut Infer, agents: &Agents, pos: &Position, values: &mut Values) -> Result<()> {
    let agent = pos.turn();
    encode(pos, agent, &mut infer.input()[..INPUTS]);
    infer.eval(agents, agent, Net::Piece, &mut values.nets[0])?;
    let mut need = [false; 6];
    for m in pos.legal_moves().iter() {
        let role = pos.role_on(m.from).expect("a legal move has a piece");
        need[role.index()] = true;
        if m.promotion.is_some() {
            for r in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                need[r.index()] = true;
            }
        }
    }
    for role in Role::ALL {
        if need[role.index()] {
            infer.eval(agents, agent, Net::Move(role), &mut values.nets[1 + role.index()])?;
        }
    }
    Ok(())
}

/// The nets of both agents as they stand, and what choosing a move needs.
pub struct Actor {
    agents: Agents,
    infer: Infer,
    values: Values,
    compose: Compose,
    /// Playing in the seed's environment (pseudo-legal moves, a king may be taken).
    king_capture: bool,
}

impl Actor {
    /// An actor of legal chess.
    pub fn new(agents: Agents, compose: Compose) -> Actor {
        Actor::in_env(agents, compose, false)
    }

    /// An actor of legal chess, or of the seed's environment (`king_capture`: pseudo-legal
    /// moves, a king may be taken).
    pub fn in_env(agents: Agents, compose: Compose, king_capture: bool) -> Actor {
        Actor { agents, infer: Infer::new(active_kernel()), values: Values::default(), compose, king_capture }
    }

    /// Whether it plays the seed's environment.
    pub fn king_capture(&self) -> bool {
        self.king_capture
    }

    /// The nets it plays with.
    pub fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The nets' outputs on the last position [`Actor::greedy`] was asked.
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The moves the actor chooses among in `pos`.
    pub fn moves(&self, pos: &Position) -> Vec<Move> {
        env_moves(pos, self.king_capture)
    }

    /// The greedy action in `pos` (which has a move), with its two values.
    pub fn greedy(&mut self, pos: &Position) -> super::policy::Choice {
        evaluate(&mut self.infer, &self.agents, pos, &mut self.values).expect("the agents' shapes are checked on load");
        choose_among(pos, &self.values, self.compose, &self.moves(pos))
    }
}

/// The moves of `pos` in legal chess, or in the seed's environment (`king_capture`: the
/// pseudo-legal ones, a king left attacked may be taken).
pub fn env_moves(pos: &Position, king_capture: bool) -> Vec<Move> {
    if king_capture {
        pos.pseudo_legal_moves()
    } else {
        pos.legal_moves().iter().copied().collect()
    }
}

/// The agents as a move scorer: each move's composed value (see `policy`).
pub struct QScorer {
    agents: Agents,
    infer: Infer,
    values: Values,
    compose: Compose,
}

impl QScorer {
    /// The agents' nets on kernel flavour `kernel`.
    pub fn new(agents: Agents, compose: Compose, kernel: Kernel) -> QScorer {
        QScorer { agents, infer: Infer::new(kernel), values: Values::default(), compose }
    }

    pub fn kernel(&self) -> Kernel {
        self.infer.kernel()
    }
}

impl MoveScorer for QScorer {
    fn name(&self) -> &'static str {
        "qagent"
    }

    fn score_moves(&mut self, game: &Game, moves: &[Move], scores: &mut Vec<f32>) {
        let pos = game.position();
        evaluate(&mut self.infer, &self.agents, pos, &mut self.values).expect("the agents' shapes are checked on load");
        move_scores(pos, &self.values, self.compose, moves, scores);
    }

    /// The composed Q value in pawns (a pawn's capture is worth 1).
    fn centipawns(&self, best: f32) -> i32 {
        (best * 100.0).round().clamp(-30_000.0, 30_000.0) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tape;

    /// The tape-free pass equals the tape's, on every kernel flavour, for weights of a
    /// usable scale.
    #[test]
    fn inference_is_the_tape_forward() {
        let ag = crate::selfplay::model::small_agents();
        let pos = Position::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").unwrap();
        let mut x = Matrix::zeros(1, INPUTS);
        super::super::features::encode(&pos, Color::Black, x.data_mut());
        let mut tape = Tape::new();
        let xv = tape.input(&x);
        let y = ag.layout.net_on_tape(&ag.params, &mut tape, xv, Color::Black, Net::Move(Role::Knight)).unwrap();
        let want = tape.value(y).data().to_vec();
        for k in Kernel::available_kernels() {
            let mut inf = Infer::new(k);
            inf.input().copy_from_slice(x.data());
            let mut out = [0.0f32; 64];
            inf.eval(&ag, Color::Black, Net::Move(Role::Knight), &mut out).unwrap();
            for (a, b) in out.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{}: {a} vs {b}", k.name());
            }
        }
    }
}
