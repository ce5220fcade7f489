//! What seed 004 registers (src/players.rs): `neurochess`, the EBNN net, and
//! `neurochess-bp`, plain back-propagation, each the searcher over V ([`super::infer`]).

use super::infer::searcher;
use super::model::Value;
use crate::search::{Built, PlayerSettings};
use std::path::Path;

/// The `neurochess` and `neurochess-bp` players, from the net in `net` (the registry passes
/// the given file or the shipped one).
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the NeuroChess players have a default net");
    let (v, meta) = Value::load(path).map_err(|e| e.to_string())?;
    let variant = meta.iter().find(|(k, _)| k == "variant").map_or("", |(_, v)| v.as_str());
    let what = format!("{} ({}{}{})", path.display(), v.describe(), if variant.is_empty() { "" } else { ", " }, variant);
    Ok(Built { player: Box::new(searcher(v, s.hash_mb)), loaded: Some(what) })
}
