//! The search's side of DeepChess (paper §4), its whole inference path in one place:
//! - `net.rs`: a trained net laid out for one-position inference (the tower after the
//!   first layer, the head split into per-position halves, SIMD layers), one build per
//!   padded shape ([`Distilled`], [`Compact`], [`Big`]);
//! - `comparator.rs`: [`NetComparator`], the [`Comparator`](crate::eval::Comparator) the
//!   search asks, with the incremental first layer (an accumulator per ply) and the
//!   antisymmetric reading of the head;
//! - the paper's position hashing, codes kept by zobrist key: [`FeatureCache`], the shared
//!   [`PositionCache`](crate::eval::PositionCache) of the evaluation floor.

mod calibrate;
mod comparator;
mod net;
mod qnet;

/// The paper's position hashing (§4): each position's code (Pos2Vec output, or what the net
/// precomputes per position) by zobrist key.
pub type FeatureCache<V> = crate::eval::PositionCache<V>;
pub use comparator::{NetComparator, NetKey, NetStats, SiameseNet};
pub use net::{random_distilled, Big, Compact, Distilled, Halves, NetEval};
pub use qnet::{QBig, QCompact, QDistilled, QHalves, QNetEval};

use crate::deepchess::model::{Arch, Net};
use crate::search::{Player, PlayerSettings, Searcher};
use std::path::Path;
use crate::tensor::NetFile;

/// A net file as a searcher, in whichever build fits its shape (a distilled net under
/// `Eval deepchess` still loads), quantised as `s.quantised` says (by default where it is
/// faster). Returns the
/// searcher, whose comparator is named after the build (`distilled`, `compact`,
/// `deepchess`), and what was loaded, e.g. `773-32-32/32-2, avx512 kernel` (quantised:
/// `…, avx512 kernel, integer avx512-vnni`).
/// `s` gives the table and the layers' kernel (one the CPU lacks is ignored); the feature
/// cache takes `cache_mb`. The first layer is incremental, as `Player::set_incremental`
/// may change (the registry does, from `s.incremental`).
pub fn load_searcher(path: &Path, s: &PlayerSettings, cache_mb: usize) -> Result<(Box<dyn Player>, String), String> {
    let (net, _) = Net::load(path).map_err(|e| e.to_string())?;
    // Measured defaults (docs/benchmarks.md): integer inference is faster for the big net;
    // for the distilled and compact nets the f32 layout (half-float weights) is.
    let q = |default: bool| s.quantised.unwrap_or(default);
    let e1 = match Distilled::fits(&net.arch) {
        Ok(()) if q(false) => return Ok(qsearcher(QDistilled::from_net(&net)?, "distilled", s, cache_mb)),
        Ok(()) => return Ok(searcher(Distilled::from_net(&net)?, "distilled", s, cache_mb)),
        Err(e) => e,
    };
    if Compact::fits(&net.arch).is_ok() {
        return Ok(if q(false) { qsearcher(QCompact::from_net(&net)?, "compact", s, cache_mb) } else { searcher(Compact::from_net(&net)?, "compact", s, cache_mb) });
    }
    if Big::fits(&net.arch).is_ok() {
        return Ok(if q(true) { qsearcher(QBig::from_net(&net)?, "deepchess", s, cache_mb) } else { searcher(Big::from_net(&net)?, "deepchess", s, cache_mb) });
    }
    Err(format!("{}: {e1}; {BUILDS}", path.display()))
}

/// The builds other than the distilled one, as [`load_searcher`] and [`playable`] name them.
const BUILDS: &str = "nor the compact (head 17 to 32, tower up to 128) or big (head 385 to 400, tower up to 608) build";

/// Whether the search can play a net of shape `arch` (one of the builds fits it): the
/// trainer refuses a student shape it could not play before training it.
pub fn playable(arch: &Arch) -> Result<(), String> {
    let e1 = match Distilled::fits(arch) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    if Compact::fits(arch).is_ok() || Big::fits(arch).is_ok() {
        return Ok(());
    }
    Err(format!("{e1}; {BUILDS}"))
}

/// [`random_distilled`] as a searcher named `random-distilled`.
pub fn random_searcher(seed: u64, s: &PlayerSettings, cache_mb: usize) -> Box<dyn Player> {
    searcher(random_distilled(seed), "random-distilled", s, cache_mb).0
}

fn searcher<const N: usize, const W: usize>(mut net: NetEval<N, W>, name: &'static str, s: &PlayerSettings, cache_mb: usize) -> (Box<dyn Player>, String) {
    if let Some(k) = s.kernel.and_then(crate::tensor::Kernel::from_name) {
        net.set_kernel(k);
    }
    let what = format!("{}, {} kernel", net.description, net.kernel().name());
    let c = NetComparator::new(net, name, cache_mb);
    (Box::new(Searcher::new(c, s.hash_mb)), what)
}

fn qsearcher<const N: usize, const W: usize>(mut net: QNetEval<N, W>, name: &'static str, s: &PlayerSettings, cache_mb: usize) -> (Box<dyn Player>, String) {
    if let Some(k) = s.kernel.and_then(crate::tensor::Kernel::from_name) {
        net.set_kernel(k);
    }
    let what = format!("{}, {}", net.description, net.kernel_description());
    let c = NetComparator::new(net, name, cache_mb);
    (Box::new(Searcher::new(c, s.hash_mb)), what)
}
