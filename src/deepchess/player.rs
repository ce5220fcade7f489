//! What DeepChess registers (src/players.rs): the net players `compact`, `distilled` and
//! `deepchess`, each taking whichever search build fits the file's shape (so a distilled
//! net under `Eval deepchess` still loads); `compact-value` and `distilled-value`, the same
//! nets read as a value per position (`infer::DrawValue`, beyond the paper); `value-student`,
//! that value learned by one tower (`infer::ValueStudent`, beyond the paper), and
//! `value-searched`, that student taught by its own search (train phase `searched`); and
//! `random-distilled`, the net path with random weights that `bench` times. A comparator
//! player's memory is its transposition table and its feature cache
//! ([`infer::FeatureCache`]), as large as the table and at least 16 MB; a value player's, its
//! table and its score cache.

use super::infer;
pub use super::infer::{resolution, MEMO, QUANTISED, RESOLUTION};
use crate::search::{Built, PlayerSettings};

use std::path::Path;

/// The feature cache (MB) of a net player whose table takes `hash_mb`.
pub fn cache_mb(hash_mb: usize) -> usize {
    hash_mb.max(16)
}

/// What a net player takes with a table of `hash_mb`, in MB.
pub fn memory_mb(hash_mb: usize) -> usize {
    hash_mb.saturating_add(cache_mb(hash_mb))
}

/// A net player: the net in `net` (the registry passes the given file or the shipped one).
pub fn build(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("a DeepChess player has a default net");
    let (player, what) = infer::load_searcher(path, s, cache_mb(s.hash_mb))?;
    Ok(Built { player, loaded: Some(format!("{} ({what})", path.display())) })
}

/// A net read as a value per position ([`infer::DrawValue`]): the net in `net`.
pub fn build_value(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("a DeepChess player has a default net");
    let (player, what) = infer::load_value_searcher(path, s)?;
    Ok(Built { player, loaded: Some(format!("{} ({what}, read as a value)", path.display())) })
}

/// The value student ([`infer::ValueStudent`]): the net in `net`.
pub fn build_student(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    student(s, net, "value-student")
}

/// The value student taught by its own search (train phase `searched`): the net in `net`.
pub fn build_searched(s: &PlayerSettings, net: Option<&Path>) -> Result<Built, String> {
    student(s, net, "value-searched")
}

fn student(s: &PlayerSettings, net: Option<&Path>, name: &'static str) -> Result<Built, String> {
    let path = net.expect("a DeepChess player has a default net");
    let (player, what) = infer::load_student_searcher(path, s, name)?;
    Ok(Built { player, loaded: Some(format!("{} ({what})", path.display())) })
}

/// What a value player takes with a table of `hash_mb`, in MB: the table and its score cache.
pub fn value_memory_mb(hash_mb: usize) -> usize {
    hash_mb.saturating_add(crate::eval::scalar::SCORE_CACHE_MB)
}

/// The feature cache of the random net (MB): as large as `bench` gives it.
const RANDOM_NET_CACHE_MB: usize = 64;

/// The distilled shape with seeded random weights: what the net path costs.
pub fn build_random(s: &PlayerSettings, _: Option<&Path>) -> Result<Built, String> {
    Ok(Built { player: infer::random_searcher(1, s, RANDOM_NET_CACHE_MB), loaded: None })
}

/// What the random net takes with a table of `hash_mb`, in MB.
pub fn random_memory_mb(hash_mb: usize) -> usize {
    hash_mb.saturating_add(RANDOM_NET_CACHE_MB)
}
