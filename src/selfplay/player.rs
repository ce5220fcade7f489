//! What seed 002 registers (src/players.rs: `qagent`): the trained agents as a policy without
//! search, the side to move's agent choosing by its own nets exactly as in self-play (no
//! exploration), one ply, any time limit.

use super::model::{Agents, Infer};
use super::policy::{evaluate, move_scores, Compose, Values};
use crate::chess::{Game, Move};
use crate::search::{Built, MoveScorer, PlayerSettings, PolicyPlayer};
use std::path::Path;

/// The agents as a move scorer: each move's composed value (see `policy`).
pub struct QScorer {
    agents: Agents,
    infer: Infer,
    values: Values,
    compose: Compose,
}

impl QScorer {
    pub fn new(agents: Agents, compose: Compose) -> QScorer {
        QScorer { agents, infer: Infer::new(crate::tensor::active_kernel()), values: Values::default(), compose }
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

/// The `qagent` player, from the agents in `net` (the registry passes the given file or the
/// shipped one); the composition rule is the one the file was trained with.
pub fn build(_: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the qagent player has a default net");
    let (agents, meta) = Agents::load(path).map_err(|e| e.to_string())?;
    let rule = meta.iter().find(|(k, _)| k == "compose").map_or("signed", |(_, v)| v.as_str());
    let compose = Compose::parse(rule).ok_or_else(|| format!("{}: unknown composition '{rule}'", path.display()))?;
    let what = format!("{} ({}, {} composition)", path.display(), agents.layout.arch.describe(), compose.name());
    Ok(Built { player: Box::new(PolicyPlayer::new(QScorer::new(agents, compose))), loaded: Some(what) })
}

/// It keeps no table.
pub fn memory_mb(_hash_mb: usize) -> usize {
    8
}
