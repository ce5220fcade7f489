//! The search's side of DeepChess (paper §4), its whole inference path in one place:
//! - `net.rs`: a trained net laid out for one-position inference (the tower after the
//!   first layer, the head split into per-position halves, SIMD layers), one build per
//!   padded shape ([`Distilled`], [`Compact`], [`Big`]);
//! - `comparator.rs`: [`NetComparator`], the [`Comparator`](crate::eval::Comparator) the
//!   search asks, with the incremental first layer (an accumulator per ply) and the
//!   antisymmetric reading of the head;
//! - `cache.rs`: the paper's position hashing, codes kept by zobrist key.

mod cache;
mod comparator;
mod net;

pub use cache::FeatureCache;
pub use comparator::{NetComparator, NetKey, SiameseNet};
pub use net::{random_distilled, Big, Compact, Distilled, Halves, NetEval};
pub use crate::tensor::Kernel;

use crate::deepchess::model::Net;
use std::path::Path;

/// A net file loaded into whichever search build fits its shape.
pub enum AnyNet {
    Distilled(Distilled),
    Compact(Compact),
    Big(Big),
}

impl AnyNet {
    pub fn load(path: &Path) -> Result<AnyNet, String> {
        let (net, _) = Net::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let e1 = match Distilled::from_net(&net) {
            Ok(n) => return Ok(AnyNet::Distilled(n)),
            Err(e) => e,
        };
        if let Ok(n) = Compact::from_net(&net) {
            return Ok(AnyNet::Compact(n));
        }
        if let Ok(n) = Big::from_net(&net) {
            return Ok(AnyNet::Big(n));
        }
        Err(format!("{}: {e1}; nor the compact (head 17 to 32, tower up to 128) or big (head 385 to 400, tower up to 608) build", path.display()))
    }

    /// Forces a kernel (see [`NetEval::set_kernel`]).
    pub fn set_kernel(&mut self, k: Kernel) -> bool {
        match self {
            AnyNet::Distilled(n) => n.set_kernel(k),
            AnyNet::Compact(n) => n.set_kernel(k),
            AnyNet::Big(n) => n.set_kernel(k),
        }
    }

    pub fn kernel(&self) -> Kernel {
        match self {
            AnyNet::Distilled(n) => n.kernel(),
            AnyNet::Compact(n) => n.kernel(),
            AnyNet::Big(n) => n.kernel(),
        }
    }

    /// The layers, e.g. `773-32-32/32-2`.
    pub fn description(&self) -> &str {
        match self {
            AnyNet::Distilled(n) => &n.description,
            AnyNet::Compact(n) => &n.description,
            AnyNet::Big(n) => &n.description,
        }
    }
}

/// Where the shipped nets are looked for when no file is given: `data/nets/` under the
/// working directory, beside the executable's build tree, then under the source tree.
pub fn default_net_path(file: &str) -> Option<std::path::PathBuf> {
    let mut dirs = vec![std::path::PathBuf::from("data/nets")];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            dirs.push(d.join("../../data/nets"));
        }
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets"));
    dirs.into_iter().map(|d| d.join(file)).find(|p| p.is_file())
}

