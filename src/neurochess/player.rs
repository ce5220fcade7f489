//! What seed 004 registers (src/players.rs): `neurochess`, the EBNN net, and
//! `neurochess-bp`, plain back-propagation, each the searcher over V ([`super::infer`]).

use super::infer::searcher;
use super::model::Value;
use crate::search::{Built, PlayerSettings};
use crate::tensor::Kernel;
use std::path::Path;
use crate::tensor::NetFile;

/// The `neurochess` and `neurochess-bp` players, from the net in `net` (the registry passes
/// the given file or the shipped one).
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the NeuroChess players have a default net");
    let (v, meta) = Value::load(path).map_err(|e| e.to_string())?;
    let variant = meta.iter().find(|(k, _)| k == "variant").map_or("", |(_, v)| v.as_str());
    let desc = v.describe();
    let player = searcher(v, Kernel::for_player(s.kernel), s.hash_mb);
    let kernel = player.comp.eval.kernel().name();
    let what = format!("{} ({desc}{}{variant}, {kernel} kernel)", path.display(), if variant.is_empty() { "" } else { ", " });
    Ok(Built { player: Box::new(player), loaded: Some(what) })
}
