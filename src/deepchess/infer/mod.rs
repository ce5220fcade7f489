//! The search's side of DeepChess (paper §4), its whole inference path in one place:
//! - `net.rs`: a trained net laid out for one-position inference (the tower after the
//!   first layer, the head split into per-position halves, SIMD layers), one build per
//!   padded shape ([`Distilled`], [`Compact`], [`Big`]);
//! - `value.rs`: [`DrawValue`], the same nets read as a value per position (each against its
//!   colour mirror) for the search's scalar path (beyond the paper);
//! - `student.rs`: [`ValueStudent`], the value learned by one tower (train phase `value`):
//!   one tower per position instead of the teacher's two (beyond the paper);
//! - `comparator.rs`: [`NetComparator`], the [`Comparator`](crate::eval::Comparator) the
//!   search asks, with the incremental first layer (an accumulator per ply) and the
//!   antisymmetric reading of the head;
//! - `key.rs`: [`NetKey`], a position as the comparator keeps it while the search holds it
//!   (zobrist key and board);
//! - `packed.rs`: [`PackedKey`], a position bound as the transposition table keeps it (the
//!   board in 36 bytes, so a table slot is one cache line);
//! - the paper's position hashing, codes kept by zobrist key: [`FeatureCache`], the shared
//!   [`PositionCache`](crate::eval::PositionCache) of the evaluation floor.

mod calibrate;
mod comparator;
mod key;
mod net;
mod packed;
mod qnet;
mod student;
mod value;

/// The paper's position hashing (§4): each position's code (Pos2Vec output, or what the net
/// precomputes per position) by zobrist key.
pub type FeatureCache<V> = crate::eval::PositionCache<V>;
pub use comparator::{NetComparator, NetStats, SiameseNet};
pub use key::NetKey;
pub use packed::PackedKey;
pub use net::{random_distilled, Big, Compact, Distilled, Halves, NetEval};
pub use qnet::{QBig, QCompact, QDistilled, QHalves, QNetEval};
pub use student::ValueStudent;
pub use value::DrawValue;

use crate::eval::scalar::{ScoreComparator, SCORE_CACHE_MB};

use crate::deepchess::model::{Arch, Net};
use crate::search::{Player, PlayerOption, PlayerSettings, Searcher};
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
    load(path, s, cache_mb, Reading::Comparator)
}

/// A net file as a searcher that reads it as a value ([`DrawValue`]: each position against
/// its colour mirror), the build and kernel chosen as [`load_searcher`] chooses them; the
/// searcher is named after the build with `-value` (`compact-value`, …), and its values are
/// kept in a score cache of `SCORE_CACHE_MB`.
pub fn load_value_searcher(path: &Path, s: &PlayerSettings) -> Result<(Box<dyn Player>, String), String> {
    load(path, s, 0, Reading::Value)
}

/// A value student's file ([`ValueStudent`]) as a searcher called `name`, on the
/// kernel `s` names (one the CPU lacks is ignored); and what was loaded, e.g. `773-32-32-1,
/// avx512 kernel`. No score cache: one tower costs less than a cache probe (the search is
/// 0.90x the time without it, docs/notebook/results.md, "The value student").
pub fn load_student_searcher(path: &Path, s: &PlayerSettings, name: &'static str) -> Result<(Box<dyn Player>, String), String> {
    let (net, _) = crate::deepchess::model::ValueNet::load(path).map_err(|e| e.to_string())?;
    let mut e = ValueStudent::from_net(&net).map_err(|e| format!("{}: {e}", path.display()))?.named(name);
    e.set_kernel(crate::tensor::Kernel::for_player(s.kernel));
    let what = format!("{}, {} kernel", e.description, e.kernel().name());
    Ok((Box::new(Searcher::new(ScoreComparator::new(e), s.hash_mb)), what))
}

// The net players' options (the registry lists them through `player.rs`), here because the
// builds below read them.

/// DeepChess's integer inference (16-bit tower, 8-bit head), an option of the net players:
/// `auto` the faster build for the net as measured (docs/benchmarks.md), `true` forces the
/// integer build, `false` the f32 layout it is measured against.
pub const QUANTISED: PlayerOption = PlayerOption {
    name: "Quantised",
    values: &["auto", "true", "false"],
    about: "DeepChess's integer inference: auto (the faster build for the net), true, false",
};

/// DeepChess's memo of comparisons by pair of positions, an option of the comparator
/// players: `auto` where it is faster than the head on two cached codes, as measured for
/// each build (docs/benchmarks.md), `true` always, `false` never.
pub const MEMO: PlayerOption = PlayerOption {
    name: "Memo",
    values: &["auto", "true", "false"],
    about: "DeepChess's memo of comparisons by pair: auto (where it is faster for the net), true, false",
};
/// How finely DeepChess's comparator tells two positions apart: margins under this many
/// centipawns (on the scale of its `info score cp`) compare equal, as handcrafted scores
/// that round to one centipawn do. `0`, the paper's comparator, lets every difference count.
pub const RESOLUTION: PlayerOption = PlayerOption {
    name: "Resolution",
    values: &["0", "0.5", "1", "2", "5"],
    about: "DeepChess's comparator: centipawns within which two positions compare equal (0: every difference counts)",
};

/// [`RESOLUTION`]'s value in a player's settings, in centipawns.
pub fn resolution(s: &PlayerSettings) -> f32 {
    s.option(RESOLUTION.name).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

/// Whether each build's comparisons go through the memo of pairs by default (option `Memo`
/// `auto`): where it measured faster than the head's remainder on two cached codes.
const MEMO_COMPACT: bool = true;
const MEMO_DISTILLED: bool = true;
const MEMO_BIG: bool = true;

/// How the search reads a net: as the paper's comparator, or as a value per position.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Comparator,
    Value,
}

fn load(path: &Path, s: &PlayerSettings, cache_mb: usize, reading: Reading) -> Result<(Box<dyn Player>, String), String> {
    let (net, _) = Net::load(path).map_err(|e| e.to_string())?;
    // Measured defaults (docs/benchmarks.md): integer inference is faster for the big net;
    // for the distilled and compact nets the f32 layout (half-float weights) is.
    let q = |default: bool| match s.option(QUANTISED.name) {
        Some("true") => true,
        Some("false") => false,
        _ => default,
    };
    let names = |comparator, value| if reading == Reading::Value { value } else { comparator };
    // The comparisons' memo of pairs, where it pays (measured per build, docs/benchmarks.md).
    let memo = |default: bool| match s.option(MEMO.name) {
        Some("true") => true,
        Some("false") => false,
        _ => default,
    };
    let e1 = match Distilled::fits(&net.arch) {
        Ok(()) if q(false) => return Ok(player(qprepared(QDistilled::from_net(&net)?, s), names("distilled", "distilled-value"), s, cache_mb, reading, memo(MEMO_DISTILLED))),
        Ok(()) => return Ok(player(prepared(Distilled::from_net(&net)?, s), names("distilled", "distilled-value"), s, cache_mb, reading, memo(MEMO_DISTILLED))),
        Err(e) => e,
    };
    if Compact::fits(&net.arch).is_ok() {
        let name = names("compact", "compact-value");
        return Ok(if q(false) { player(qprepared(QCompact::from_net(&net)?, s), name, s, cache_mb, reading, memo(MEMO_COMPACT)) } else { player(prepared(Compact::from_net(&net)?, s), name, s, cache_mb, reading, memo(MEMO_COMPACT)) });
    }
    if Big::fits(&net.arch).is_ok() {
        let name = names("deepchess", "deepchess-value");
        return Ok(if q(true) { player(qprepared(QBig::from_net(&net)?, s), name, s, cache_mb, reading, memo(MEMO_BIG)) } else { player(prepared(Big::from_net(&net)?, s), name, s, cache_mb, reading, memo(MEMO_BIG)) });
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
    player(prepared(random_distilled(seed), s), "random-distilled", s, cache_mb, Reading::Comparator, MEMO_DISTILLED).0
}

/// A float build on the kernel `s` names (one the CPU lacks is ignored), and what it is.
fn prepared<const N: usize, const W: usize>(mut net: NetEval<N, W>, s: &PlayerSettings) -> (NetEval<N, W>, String) {
    net.set_kernel(crate::tensor::Kernel::for_player(s.kernel));
    let what = format!("{}, {} kernel", net.description, net.kernel().name());
    (net, what)
}

/// An integer build, as [`prepared`].
fn qprepared<const N: usize, const W: usize>(mut net: QNetEval<N, W>, s: &PlayerSettings) -> (QNetEval<N, W>, String) {
    net.set_kernel(crate::tensor::Kernel::for_player(s.kernel));
    let what = format!("{}, {}", net.description, net.kernel_description());
    (net, what)
}

/// The searcher over a prepared build, reading it as `reading` says.
fn player<N: SiameseNet + 'static>((net, what): (N, String), name: &'static str, s: &PlayerSettings, cache_mb: usize, reading: Reading, memo: bool) -> (Box<dyn Player>, String) {
    let player: Box<dyn Player> = match reading {
        Reading::Comparator => Box::new(Searcher::new(NetComparator::new(net, name, cache_mb).with_memo(memo).with_resolution(resolution(s)), s.hash_mb)),
        Reading::Value => Box::new(Searcher::new(ScoreComparator::cached(DrawValue::new(net, name), SCORE_CACHE_MB), s.hash_mb)),
    };
    (player, what)
}
