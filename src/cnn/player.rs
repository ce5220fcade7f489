//! What seed 003 registers (src/players.rs): `cnn`, the searcher over the classifier's
//! logit ([`super::infer`]).

use super::infer::comparator;
use super::model::Cnn;
use crate::search::{Built, PlayerSettings, Searcher};
use crate::tensor::Kernel;
use std::path::Path;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// The `cnn` player, from the net in `net` (the registry passes the given file or the
/// shipped one).
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the CNN player has a default net");
    let (cnn, _) = Cnn::load(path).map_err(|e| e.to_string())?;
    let arch = cnn.arch.describe();
    let c = comparator(cnn, Kernel::for_player(s.kernel));
    let what = format!("{} ({arch}, {} kernel)", path.display(), c.eval.kernel().name());
    Ok(Built { player: Box::new(Searcher::new(c, s.hash_mb)), loaded: Some(what) })
}
