//! The settings of seed 002's learning rule ("Q-learning", "Rewards"), and the two recipes
//! that fill them: ours (Adam on batches of moves, the chosen outputs taught) and the seed
//! author's published code (a fresh Adam per move, masked targets on all seven nets).

use super::policy::Compose;

/// The settings of the learning rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QCfg {
    /// The discount (the seed's 0.99).
    pub gamma: f32,
    /// The reward of a move that captures nothing (the seed's −0.1).
    pub no_capture: f32,
    /// Examples per optimizer step and passes over a batch's examples.
    pub batch: usize,
    pub passes: usize,
    pub compose: Compose,
    /// Every this many batches, the agents play `eval_games` games against a random mover and
    /// as many against a one-ply greedy capturer (0: never).
    pub eval_every: usize,
    pub eval_games: usize,
    /// The game length of those games (plies; then a draw).
    pub eval_plies: usize,
    /// Whether repetition and the fifty-move rule end games (self-play and evaluation): the
    /// seed's environment has neither, so by default only mate, stalemate, insufficient
    /// material and the move limit do.
    pub rule_draws: bool,
    /// The reward of a mate (the seed's king value, 255).
    pub mate: f32,
    /// Self-play in the seed's environment: no check, a king left attacked may be taken
    /// (worth the king's 255, ending the game); no mate either ([`EpisodeCfg::king_capture`]).
    /// The evaluations stay in legal chess.
    ///
    /// [`EpisodeCfg::king_capture`]: crate::train::episode::EpisodeCfg::king_capture
    pub king_capture: bool,
    /// The error of a taught output against its target.
    pub loss: Loss,
    /// Which outputs each move teaches.
    pub targets: Targets,
    /// When the nets learn.
    pub update: Update,
}

/// The error of a taught output against its target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loss {
    /// The squared error (the seed's MSE).
    Squared,
    /// The squared error within δ of the target, linear beyond (twice Huber's): a mate's
    /// 255 pulls like an error of δ, not of 255 (the TD-error clipping of DQN, at a δ above
    /// every piece's value).
    Huber(f32),
}

impl Loss {
    pub fn name(self) -> String {
        match self {
            Loss::Squared => "squared error".into(),
            Loss::Huber(d) => format!("Huber δ {d}"),
        }
    }
}

/// Which outputs a move teaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Targets {
    /// The chosen outputs only: the piece selector's from-square and the moved piece's
    /// selector's destination (the seed's text).
    Chosen,
    /// The author's code: those two, and on every one of the agent's seven nets each square
    /// the net may not choose there (the piece selector: squares without one of the agent's
    /// pieces; a move selector: squares no piece of its kind can reach) pulled to 0.
    Masked,
}

impl Targets {
    pub fn name(self) -> &'static str {
        match self {
            Targets::Chosen => "chosen",
            Targets::Masked => "masked",
        }
    }

    pub fn parse(s: &str) -> Option<Targets> {
        [Targets::Chosen, Targets::Masked].into_iter().find(|t| t.name() == s)
    }
}

/// When the nets learn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Update {
    /// After each batch of games, Adam steps over its moves shuffled, `batch` moves a step.
    Batches,
    /// The author's code: one step per move in the order the games played them, each by a
    /// fresh Adam of rate `lr` (its first step: every parameter with a gradient moves by
    /// lr·g/(|g| + 1e-8)).
    PerMove { lr: f32 },
}

impl QCfg {
    /// The seed's rule (γ 0.99, −0.1 for a quiet move, mate 255) on batches of 256 moves, an
    /// evaluation of 100 games of 100 plies every 10 batches: the quick and paper profiles'.
    pub fn seed() -> QCfg {
        QCfg { gamma: 0.99, no_capture: -0.1, batch: 256, passes: 1, compose: Compose::Signed, eval_every: 10, eval_games: 100, eval_plies: 100, rule_draws: false, mate: super::features::MATE_VALUE, king_capture: false, loss: Loss::Huber(10.0), targets: Targets::Chosen, update: Update::Batches }
    }
}

