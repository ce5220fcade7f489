//! What seed 002 registers (src/players.rs: `qagent`): the trained agents as a policy without
//! search, the side to move's agent choosing by its own nets exactly as in self-play (no
//! exploration), one ply, any time limit ([`super::infer::QScorer`]).

use super::infer::QScorer;
use super::model::Agents;
use super::policy::Compose;
use crate::search::{Built, PlayerSettings, PolicyPlayer};
use crate::tensor::Kernel;
use std::path::Path;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// The `qagent` player, from the agents in `net` (the registry passes the given file or the
/// shipped one); the composition rule is the one the file was trained with.
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the qagent player has a default net");
    let (agents, meta) = Agents::load(path).map_err(|e| e.to_string())?;
    let rule = meta.iter().find(|(k, _)| k == "compose").map_or("signed", |(_, v)| v.as_str());
    let compose = Compose::parse(rule).ok_or_else(|| format!("{}: unknown composition '{rule}'", path.display()))?;
    let arch = agents.layout.arch.describe();
    let scorer = QScorer::new(agents, compose, Kernel::for_player(s.kernel));
    let what = format!("{} ({arch}, {} composition, {} kernel)", path.display(), compose.name(), scorer.kernel().name());
    Ok(Built { player: Box::new(PolicyPlayer::new(scorer)), loaded: Some(what) })
}

/// It keeps no table.
pub fn memory_mb(_hash_mb: usize) -> usize {
    8
}
