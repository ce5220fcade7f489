//! The one registry of players: every evaluator the engine can search with, by name. UCI's
//! `Eval` option, `match`'s builtin players and `bench --eval` read it; a new system joins by
//! adding an entry to [`PLAYERS`], never by a `match` arm elsewhere.

use crate::dbn::model::{Dbn, Head};
use crate::deepchess::inference::{self, NetOptions};
use crate::eval::handcrafted;
use crate::search::{DynSearcher, Searcher};
use crate::tensor::Kernel;
use std::fmt;
use std::path::{Path, PathBuf};

/// How a player's searcher is set up.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Transposition table (MB).
    pub hash_mb: usize,
    /// The player's net file; `None`: its default one, found under `data/nets/`.
    pub net: Option<PathBuf>,
    /// Instruction flavour of a net's layers; `None`: the best this CPU has.
    pub kernel: Option<Kernel>,
    /// A net's first layer kept incrementally along the line (false: recomputed per position).
    pub incremental: bool,
}

impl Settings {
    pub fn new(hash_mb: usize) -> Settings {
        Settings { hash_mb, net: None, kernel: None, incremental: true }
    }
}

/// A player's searcher, ready to search.
pub struct Built {
    pub searcher: Box<dyn DynSearcher>,
    /// What was loaded, e.g. `data/nets/compact.dcw (773-32-32/32-2, avx2 kernel)`; `None`
    /// for a player without a file.
    pub loaded: Option<String>,
}

/// Why a player could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// No file was given and the player's default one is not under `data/nets/`.
    NoNet { file: &'static str },
    /// The file could not be loaded, or no build fits it.
    Load(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoNet { file } => write!(f, "data/nets/{file} not found"),
            BuildError::Load(e) => write!(f, "{e}"),
        }
    }
}

/// One entry of the registry.
pub struct Player {
    /// The name users give (`setoption name Eval value NAME`, `builtin=NAME`, `--eval NAME`).
    pub name: &'static str,
    pub description: &'static str,
    /// The file under `data/nets/` used when none is given (`None`: the player needs none).
    pub default_net: Option<&'static str>,
    /// Offered to players of games (UCI `Eval`, match builtins); `false`: bench only.
    pub offered: bool,
    build: fn(&Settings, Option<&Path>) -> Result<Built, String>,
}

/// Every player, in the order UCI lists them.
pub const PLAYERS: &[Player] = &[
    Player {
        name: "compact",
        description: "DeepChess, the compact student distilled from the big net (773-32-32/32-2)",
        default_net: Some("compact.dcw"),
        offered: true,
        build: deepchess_net,
    },
    Player {
        name: "distilled",
        description: "DeepChess, the paper's distilled net (773-100-100-100/100-100-2)",
        default_net: Some("distilled.dcw"),
        offered: true,
        build: deepchess_net,
    },
    Player {
        name: "deepchess",
        description: "DeepChess, the paper's full net (773-600-400-200-100/400-200-100-2)",
        default_net: Some("deepchess.dcw"),
        offered: true,
        build: deepchess_net,
    },
    Player {
        name: "dbn-classify",
        description: "seed 001's deep belief network, result head: P(win) - P(loss) (772-100-100-100, 3 classes)",
        default_net: Some("dbn-classify.dcw"),
        offered: true,
        build: dbn_classify,
    },
    Player {
        name: "dbn-regress",
        description: "seed 001's deep belief network, regression of the engine score (772-100-100-100, tanh)",
        default_net: Some("dbn-regress.dcw"),
        offered: true,
        build: dbn_regress,
    },
    Player {
        name: "dbn-quantized",
        description: "seed 001's deep belief network, 7-class quantized score read as its expected value (772-100-100-100)",
        default_net: Some("dbn-quantized.dcw"),
        offered: true,
        build: dbn_quantized,
    },
    Player {
        name: "cnn",
        description: "seed 003's convolutional win/loss classifier: the logit of P(White wins) (8x8x7, conv 400@4x4, pool, conv 200@2x2, 70, 1)",
        default_net: Some("cnn.dcw"),
        offered: true,
        build: cnn_net,
    },
    Player {
        name: "handcrafted",
        description: "material and tapered piece-square tables (the paper's handcrafted baseline)",
        default_net: None,
        offered: true,
        build: handcrafted_eval,
    },
    Player {
        name: "random-distilled",
        description: "the distilled shape with seeded random weights: what the net path costs",
        default_net: None,
        offered: false,
        build: random_distilled,
    },
];

/// The engine's evaluator when none is chosen.
pub const DEFAULT: &str = "compact";
/// What the engine falls back to when a player's net cannot be loaded.
pub const FALLBACK: &str = "handcrafted";

/// The player called `name` (any case), bench-only ones included.
pub fn find(name: &str) -> Option<&'static Player> {
    PLAYERS.iter().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The player called `name` among those offered for games.
pub fn find_offered(name: &str) -> Option<&'static Player> {
    find(name).filter(|p| p.offered)
}

/// The names of the players offered for games, in order.
pub fn offered_names() -> Vec<&'static str> {
    PLAYERS.iter().filter(|p| p.offered).map(|p| p.name).collect()
}

/// The names of every player, in order.
pub fn names() -> Vec<&'static str> {
    PLAYERS.iter().map(|p| p.name).collect()
}

impl Player {
    /// The player's searcher: its net from `s.net`, else its default file.
    pub fn build(&self, s: &Settings) -> Result<Built, BuildError> {
        let net = match (&s.net, self.default_net) {
            (_, None) => None,
            (Some(f), Some(_)) => Some(f.clone()),
            (None, Some(file)) => Some(default_net_path(file).ok_or(BuildError::NoNet { file })?),
        };
        (self.build)(s, net.as_deref()).map_err(BuildError::Load)
    }
}

fn deepchess_net(s: &Settings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("a DeepChess player has a default net");
    let options = NetOptions { hash_mb: s.hash_mb, cache_mb: s.hash_mb.max(16), kernel: s.kernel, incremental: s.incremental };
    let (searcher, what) = inference::load_searcher(path, &options)?;
    Ok(Built { searcher, loaded: Some(format!("{} ({what})", path.display())) })
}

fn dbn_net(s: &Settings, net: Option<&Path>, head: Head, name: &'static str) -> Result<Built, String> {
    let path = net.expect("a DBN player has a default net");
    let (dbn, _) = Dbn::load(path).map_err(|e| e.to_string())?;
    if dbn.arch.head != head {
        return Err(format!("{}: a {} net, not a {} one (player {name})", path.display(), dbn.arch.head.name(), head.name()));
    }
    let kernel = s.kernel.unwrap_or_else(Kernel::best);
    let comparator = crate::dbn::evaluator::comparator(&dbn, name, kernel);
    let what = format!("{} ({}, {} kernel)", path.display(), dbn.arch.describe(), comparator.eval.kernel().name());
    Ok(Built { searcher: Box::new(Searcher::new(comparator, s.hash_mb)), loaded: Some(what) })
}

fn dbn_classify(s: &Settings, net: Option<&Path>) -> Result<Built, String> {
    dbn_net(s, net, Head::Classify, "dbn-classify")
}

fn dbn_regress(s: &Settings, net: Option<&Path>) -> Result<Built, String> {
    dbn_net(s, net, Head::Regress, "dbn-regress")
}

fn dbn_quantized(s: &Settings, net: Option<&Path>) -> Result<Built, String> {
    dbn_net(s, net, Head::Quantized, "dbn-quantized")
}

fn cnn_net(s: &Settings, net: Option<&Path>) -> Result<Built, String> {
    let path = net.expect("the CNN player has a default net");
    let (cnn, _) = crate::cnn::model::Cnn::load(path).map_err(|e| e.to_string())?;
    let what = format!("{} ({}", path.display(), cnn.arch.describe());
    let comparator = crate::cnn::evaluator::comparator(cnn, s.kernel.unwrap_or_else(Kernel::best));
    let what = format!("{what}, {} kernel)", comparator.eval.kernel().name());
    Ok(Built { searcher: Box::new(Searcher::new(comparator, s.hash_mb)), loaded: Some(what) })
}

fn handcrafted_eval(s: &Settings, _: Option<&Path>) -> Result<Built, String> {
    Ok(Built { searcher: Box::new(Searcher::new(handcrafted(), s.hash_mb)), loaded: None })
}

/// Feature cache of the random net (MB): as large as bench gives it.
const RANDOM_NET_CACHE_MB: usize = 64;

fn random_distilled(s: &Settings, _: Option<&Path>) -> Result<Built, String> {
    let options = NetOptions { hash_mb: s.hash_mb, cache_mb: RANDOM_NET_CACHE_MB, kernel: s.kernel, incremental: s.incremental };
    Ok(Built { searcher: inference::random_searcher(1, &options), loaded: None })
}

/// Where the shipped nets are looked for when no file is given: `data/nets/` under the
/// working directory, beside the executable's build tree, then under the source tree.
pub fn default_net_path(file: &str) -> Option<PathBuf> {
    let mut dirs = vec![PathBuf::from("data/nets")];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            dirs.push(d.join("../../data/nets"));
        }
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets"));
    dirs.into_iter().map(|d| d.join(file)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_defaults_are_offered() {
        let names = names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(n), "{n} twice");
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{n}: UCI combo values are single words");
        }
        assert!(find_offered(DEFAULT).is_some() && find_offered(FALLBACK).is_some());
        assert!(find_offered(FALLBACK).unwrap().default_net.is_none(), "the fallback must need no file");
        assert_eq!(find("Compact").map(|p| p.name), Some("compact"));
        assert!(find_offered("random-distilled").is_none() && find("random-distilled").is_some());
        assert!(find("stockfish").is_none());
    }

    /// Every player builds with its defaults and searches; a missing file is named.
    #[test]
    fn every_player_builds_and_searches() {
        use crate::chess::Game;
        use crate::search::Limits;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        for p in PLAYERS {
            let built = p.build(&Settings::new(1)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(built.loaded.is_some(), p.default_net.is_some(), "{}", p.name);
            let mut s = built.searcher;
            let r = s.search(&Game::default(), &Limits::depth(2), std::time::Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {});
            assert!(r.best.is_some(), "{}", p.name);
        }
        let mut s = Settings::new(1);
        s.net = Some(PathBuf::from("/nonexistent/net.dcw"));
        match find("compact").unwrap().build(&s) {
            Err(BuildError::Load(e)) => assert!(e.contains("/nonexistent/net.dcw"), "{e}"),
            other => panic!("{:?}", other.map(|b| b.loaded)),
        }
        assert_eq!(BuildError::NoNet { file: "x.dcw" }.to_string(), "data/nets/x.dcw not found");
    }
}
