//! What seed 001 registers (src/players.rs): `dbn-classify`, `dbn-regress` and
//! `dbn-quantized`, each the searcher over its head's reading ([`super::infer`]), refusing a
//! net of another head.

use super::infer::comparator;
use super::model::{Dbn, Head};
use crate::search::{Built, PlayerSettings, Searcher};
use crate::tensor::Kernel;
use std::path::Path;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// A player of head `head` called `name`, from the net in `net` (the registry passes the
/// given file or the shipped one); a net of another head is refused, naming both.
fn build(s: &PlayerSettings, net: Option<&Path>, head: Head, name: &'static str) -> Result<Built, String> {
    let path = net.expect("a DBN player has a default net");
    let (dbn, _) = Dbn::load(path).map_err(|e| e.to_string())?;
    if dbn.arch.head != head {
        return Err(format!("{}: a {} net, not a {} one (player {name})", path.display(), dbn.arch.head.name(), head.name()));
    }
    let c = comparator(&dbn, name, Kernel::for_player(s.kernel));
    let what = format!("{} ({}, {} kernel)", path.display(), dbn.arch.describe(), c.eval.kernel().name());
    Ok(Built { player: Box::new(Searcher::new(c, s.hash_mb)), loaded: Some(what) })
}

/// `dbn-classify`.
pub fn build_classify(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    build(s, net, Head::Classify, "dbn-classify")
}

/// `dbn-regress`.
pub fn build_regress(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    build(s, net, Head::Regress, "dbn-regress")
}

/// `dbn-quantized`.
pub fn build_quantized(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    build(s, net, Head::Quantized, "dbn-quantized")
}
