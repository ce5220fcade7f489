//! The one registry of players: everything that chooses moves (a search over an evaluator,
//! or a policy without search), by name, and [`SYSTEMS`], every trainable system. UCI's
//! `Eval` option, `match`'s built-in players, `bench --eval`, the help texts and `train
//! --system` read these tables; a new system joins by adding its lines here, never by a
//! `match` arm elsewhere. Each entry points into its system's `player.rs` (how to build it,
//! what memory it takes) or `pipeline.rs` (how to train it).

use crate::eval::handcrafted;
use crate::search::{Built, PlayerOption, PlayerSettings, Searcher};
use crate::train::system::System;
use std::fmt;
use std::path::Path;

/// Why a player could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// No file was given and the player's default one is not under `data/nets/`.
    NoNet { file: &'static str },
    /// The file could not be loaded, or no build fits it.
    Load(String),
    /// A net file was given to a player that takes none (the handcrafted and GNU
    /// evaluators): refused rather than ignored without a word.
    TakesNoNet { player: &'static str },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoNet { file } => write!(f, "data/nets/{file} not found"),
            BuildError::Load(e) => write!(f, "{e}"),
            BuildError::TakesNoNet { player } => write!(f, "player {player} takes no net file"),
        }
    }
}

/// One entry of the registry.
pub struct Entry {
    /// The name users give (`setoption name Eval value NAME`, `builtin=NAME`, `--eval NAME`).
    pub name: &'static str,
    pub description: &'static str,
    /// The system it comes from (a name of [`SYSTEMS`], or `handcrafted`).
    pub system: &'static str,
    /// The file under `data/nets/` used when none is given (`None`: the player needs none).
    pub default_net: Option<&'static str>,
    /// Offered to players of games (UCI `Eval`, match builtins); `false`: bench only.
    pub offered: bool,
    /// The memory (MB) the player takes with a table of the given MB, the player's own
    /// caches included: UCI refuses a `Hash` that would not fit before building.
    pub memory_mb: fn(usize) -> usize,
    build: fn(&PlayerSettings, Option<&Path>) -> Result<Built, String>,
    /// Options of its own (DeepChess's `Quantised`): UCI lists them, `setoption` and `bench
    /// --option` set them; shared floors name none.
    pub options: &'static [PlayerOption],
}

/// Every player, in the order UCI lists them.
pub const PLAYERS: &[Entry] = &[
    Entry {
        name: "compact",
        description: "DeepChess, the compact student distilled from the big net (773-32-32/32-2)",
        system: "deepchess",
        default_net: Some("compact.dcw"),
        offered: true,
        memory_mb: crate::deepchess::player::memory_mb,
        build: crate::deepchess::player::build,
        options: &[crate::deepchess::player::QUANTISED, crate::deepchess::player::MEMO, crate::deepchess::player::RESOLUTION],
    },
    Entry {
        name: "distilled",
        description: "DeepChess, the paper's distilled net (773-100-100-100/100-100-2)",
        system: "deepchess",
        default_net: Some("distilled.dcw"),
        offered: true,
        memory_mb: crate::deepchess::player::memory_mb,
        build: crate::deepchess::player::build,
        options: &[crate::deepchess::player::QUANTISED, crate::deepchess::player::MEMO, crate::deepchess::player::RESOLUTION],
    },
    Entry {
        name: "deepchess",
        description: "DeepChess, the paper's full net (773-600-400-200-100/400-200-100-2)",
        system: "deepchess",
        default_net: Some("deepchess.dcw"),
        offered: true,
        memory_mb: crate::deepchess::player::memory_mb,
        build: crate::deepchess::player::build,
        options: &[crate::deepchess::player::QUANTISED, crate::deepchess::player::MEMO, crate::deepchess::player::RESOLUTION],
    },
    Entry {
        name: "compact-value",
        description: "DeepChess's compact net read as a value: each position against its colour mirror, ordered as numbers (beyond the paper)",
        system: "deepchess",
        default_net: Some("compact.dcw"),
        offered: true,
        memory_mb: crate::deepchess::player::value_memory_mb,
        build: crate::deepchess::player::build_value,
        options: &[crate::deepchess::player::QUANTISED],
    },
    Entry {
        name: "distilled-value",
        description: "DeepChess's distilled net read as a value: each position against its colour mirror, ordered as numbers (beyond the paper)",
        system: "deepchess",
        default_net: Some("distilled.dcw"),
        offered: true,
        memory_mb: crate::deepchess::player::value_memory_mb,
        build: crate::deepchess::player::build_value,
        options: &[crate::deepchess::player::QUANTISED],
    },
    Entry {
        name: "value-student",
        description: "the compact net's value learned by one tower (773-32-32-1): one tower per position instead of two (beyond the paper)",
        system: "deepchess",
        default_net: Some("value-student.dcw"),
        offered: true,
        memory_mb: table_only,
        build: crate::deepchess::player::build_student,
        options: &[],
    },
    Entry {
        name: "value-searched",
        description: "the value student taught by its own depth-8 search (773-32-32-1, train phase searched; beyond the paper)",
        system: "deepchess",
        default_net: Some("value-searched.dcw"),
        offered: true,
        memory_mb: table_only,
        build: crate::deepchess::player::build_searched,
        options: &[],
    },
    Entry {
        name: "dbn-classify",
        description: "seed 001's deep belief network, result head: P(win) - P(loss) (772-100-100-100, 3 classes)",
        system: "dbn",
        default_net: Some("dbn-classify.dcw"),
        offered: true,
        memory_mb: table_and_scores,
        build: crate::dbn::player::build_classify,
        options: &[],
    },
    Entry {
        name: "dbn-regress",
        description: "seed 001's deep belief network, regression of the engine score (772-100-100-100, tanh)",
        system: "dbn",
        default_net: Some("dbn-regress.dcw"),
        offered: true,
        memory_mb: table_and_scores,
        build: crate::dbn::player::build_regress,
        options: &[],
    },
    Entry {
        name: "dbn-quantized",
        description: "seed 001's deep belief network, 7-class quantized score read as its expected value (772-100-100-100)",
        system: "dbn",
        default_net: Some("dbn-quantized.dcw"),
        offered: true,
        memory_mb: table_and_scores,
        build: crate::dbn::player::build_quantized,
        options: &[],
    },
    Entry {
        name: "cnn",
        description: "seed 003's convolutional win/loss classifier: the logit of P(White wins) (8x8x7, conv 400@4x4, pool, conv 200@2x2, 70, 1)",
        system: "cnn",
        default_net: Some("cnn.dcw"),
        offered: true,
        memory_mb: table_and_scores,
        build: crate::cnn::player::build,
        options: &[],
    },
    Entry {
        name: "neurochess",
        description: "seed 004's NeuroChess, V learned by TD(0) with EBNN slopes (175 features, 175-80-1 tanh)",
        system: "neurochess",
        default_net: Some("neurochess.dcw"),
        offered: true,
        memory_mb: table_and_scores,
        build: crate::neurochess::player::build,
        options: &[crate::neurochess::player::TEMPO],
    },
    Entry {
        name: "neurochess-bp",
        description: "seed 004's NeuroChess, V learned by TD(0) with plain back-propagation (175 features, 175-80-1 tanh)",
        system: "neurochess",
        default_net: Some("neurochess-bp.dcw"),
        offered: true,
        memory_mb: table_and_scores,
        build: crate::neurochess::player::build,
        options: &[crate::neurochess::player::TEMPO],
    },
    Entry {
        name: "qagent",
        description: "seed 002's self-play Q-learning agents as a policy without search: piece selector × move selector CNNs of the side to move",
        system: "selfplay",
        default_net: Some("qagent.dcw"),
        offered: true,
        memory_mb: crate::selfplay::player::memory_mb,
        build: crate::selfplay::player::build,
        options: &[],
    },
    Entry {
        name: "handcrafted",
        description: "material and tapered piece-square tables (the paper's handcrafted baseline)",
        system: "handcrafted",
        default_net: None,
        offered: true,
        memory_mb: table_only,
        build: handcrafted_player,
        options: &[],
    },
    Entry {
        name: "gnu",
        description: "GNU Chess's evaluation written from its authors' prose (seed 004's opponent): material, pawn structure, piece placement, mobility and x-rays, king safety, hung pieces",
        system: "handcrafted",
        default_net: None,
        offered: true,
        memory_mb: table_only,
        build: gnu_player,
        options: &[],
    },
    Entry {
        name: "random-distilled",
        description: "the distilled shape with seeded random weights: what the net path costs",
        system: "deepchess",
        default_net: None,
        offered: false,
        memory_mb: crate::deepchess::player::random_memory_mb,
        build: crate::deepchess::player::build_random,
        options: &[],
    },
];

/// Every trainable system, the first the default of `deepchess train`.
pub const SYSTEMS: &[&System] = &[
    &crate::deepchess::pipeline::SYSTEM,
    &crate::dbn::pipeline::SYSTEM,
    &crate::cnn::pipeline::SYSTEM,
    &crate::neurochess::pipeline::SYSTEM,
    &crate::selfplay::pipeline::SYSTEM,
];

/// The system called `name` (any case).
pub fn find_system(name: &str) -> Option<&'static System> {
    SYSTEMS.iter().copied().find(|s| s.name.eq_ignore_ascii_case(name.trim()))
}

/// Every option a player declares, each once (by name), in the order of [`PLAYERS`].
pub fn player_options() -> Vec<&'static PlayerOption> {
    let mut out: Vec<&'static PlayerOption> = Vec::new();
    for o in PLAYERS.iter().flat_map(|p| p.options.iter()) {
        if !out.iter().any(|x| x.name.eq_ignore_ascii_case(o.name)) {
            out.push(o);
        }
    }
    out
}

/// The option of some player called `name` (any case).
pub fn find_option(name: &str) -> Option<&'static PlayerOption> {
    player_options().into_iter().find(|o| o.name.eq_ignore_ascii_case(name.trim()))
}

/// The engine's evaluator when none is chosen.
pub const DEFAULT: &str = "compact";
/// The nets `bench --vs-net` sets beside handcrafted, in order: the engine's default, then
/// the paper-sized distilled one (with `--net FILE`, the first alone, on that file).
pub const BENCH_NETS: &[&str] = &[DEFAULT, "distilled"];
/// What the engine falls back to when a player's net cannot be loaded.
pub const FALLBACK: &str = "handcrafted";

/// The player called `name` (any case), bench-only ones included.
pub fn find(name: &str) -> Option<&'static Entry> {
    PLAYERS.iter().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The player called `name` among those offered for games.
pub fn find_offered(name: &str) -> Option<&'static Entry> {
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

/// The search's own memory in each thread beyond its evaluator's caches (ordering tables,
/// the line, counters), MB, rounded up.
const SEARCH_THREAD_MB: usize = 2;

impl Entry {
    /// What each search thread beyond the first adds, in MB: its own caches (the
    /// transposition table is shared) and the search's own tables. UCI accounts `Threads`
    /// with it beside `Hash`.
    pub fn thread_mb(&self, hash_mb: usize) -> usize {
        (self.memory_mb)(hash_mb).saturating_sub(hash_mb).saturating_add(SEARCH_THREAD_MB)
    }

    /// The player, with its net from `s.net`, else its default file, and incremental
    /// evaluation as `s.incremental` says where its evaluator has it.
    pub fn build(&self, s: &PlayerSettings) -> Result<Built, BuildError> {
        let net = match (&s.net, self.default_net) {
            (Some(_), None) => return Err(BuildError::TakesNoNet { player: self.name }),
            (None, None) => None,
            (Some(f), Some(_)) => Some(f.clone()),
            (None, Some(file)) => Some(default_net_path(file).ok_or(BuildError::NoNet { file })?),
        };
        // What a file says (its header's variant or architecture, a tensor's name) is
        // escaped once here for every front end: a line feed in it must not make a line of
        // its own on a terminal, a log or a GUI's stream.
        let printable = crate::io::text::printable;
        let mut built = (self.build)(s, net.as_deref()).map_err(|e| BuildError::Load(printable(&e)))?;
        built.loaded = built.loaded.map(|l| printable(&l));
        built.player.set_incremental(s.incremental);
        Ok(built)
    }
}

/// A player whose only memory is its table (the handcrafted evaluator, and the DBN, CNN and
/// NeuroChess nets, which are under two megabytes).
fn table_only(hash_mb: usize) -> usize {
    hash_mb
}

/// A net evaluator behind the shared adapter: its table and its score cache.
fn table_and_scores(hash_mb: usize) -> usize {
    hash_mb.saturating_add(crate::eval::scalar::SCORE_CACHE_MB)
}

fn handcrafted_player(s: &PlayerSettings, _: Option<&Path>) -> Result<Built, String> {
    Ok(Built { player: Box::new(Searcher::new(handcrafted(), s.hash_mb)), loaded: None })
}

fn gnu_player(s: &PlayerSettings, _: Option<&Path>) -> Result<Built, String> {
    Ok(Built { player: Box::new(Searcher::new(crate::eval::gnu::gnu(), s.hash_mb)), loaded: None })
}

/// Where the shipped nets are looked for when no file is given (floor 0 holds it, so that a
/// system's own commands find them too).
pub use crate::io::files::default_net_path;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn names_are_unique_and_the_defaults_are_offered() {
        let names = names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(n), "{n} twice");
            assert!(n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{n}: UCI combo values are single words");
        }
        assert!(find_offered(DEFAULT).is_some() && find_offered(FALLBACK).is_some());
        assert!(BENCH_NETS.iter().all(|n| find(n).is_some_and(|p| p.default_net.is_some())), "bench --vs-net's players are net players");
        assert!(find_offered(FALLBACK).unwrap().default_net.is_none(), "the fallback must need no file");
        assert_eq!(find("Compact").map(|p| p.name), Some("compact"));
        assert!(find_offered("random-distilled").is_none() && find("random-distilled").is_some());
        assert!(find("stockfish").is_none());
        for p in PLAYERS {
            // A policy without search (seed 002's agents) keeps no table: its memory is its nets.
            let policy = p.system == "selfplay";
            assert!((p.memory_mb)(16) >= 16 || (policy && (p.memory_mb)(16) > 0), "{}: a player takes at least its table", p.name);
        }
    }

    /// A player's own options are declared by its entry (issue 80: DeepChess's `Quantised` lived
    /// on the shared floors): each has values, its default first, one name across players, and
    /// a value outside them is refused with the values named.
    #[test]
    fn player_options_are_declared_by_their_players() {
        let all = player_options();
        assert!(all.iter().any(|o| o.name == "Quantised"), "{all:?}");
        for o in &all {
            assert!(!o.values.is_empty() && !o.about.is_empty(), "{}", o.name);
            assert_eq!(o.check(&o.values[0].to_ascii_uppercase()), Ok(o.values[0]));
            assert!(o.check("no such value").unwrap_err().contains(&o.values.join(", ")));
            assert!(o.uci_line().starts_with(&format!("option name {} type combo default {}", o.name, o.values[0])));
            assert!(std::ptr::eq(find_option(&o.name.to_ascii_lowercase()).unwrap(), *o));
        }
        for p in PLAYERS {
            let declared = p.options.iter().any(|o| o.name == "Quantised");
            assert_eq!(declared, p.system == "deepchess" && matches!(p.name, "compact" | "distilled" | "deepchess" | "compact-value" | "distilled-value"), "{}", p.name);
        }
        assert!(find_option("Hash").is_none(), "the engine's own options are not a player's");
    }

    /// Incremental evaluation is the evaluator's capability: the DeepChess and DBN players
    /// have it (their first layer), every other player says it keeps nothing incremental.
    #[test]
    fn incremental_evaluation_is_declared_by_the_players_that_have_it() {
        for p in PLAYERS {
            let mut built = p.build(&PlayerSettings::new(1)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let has = matches!(p.system, "deepchess" | "dbn");
            assert_eq!(built.player.set_incremental(false), has, "{}", p.name);
            assert_eq!(built.player.set_incremental(true), has, "{}", p.name);
        }
    }

    /// Every player builds with its defaults and plays; a missing file is named.
    #[test]
    fn every_player_builds_and_plays() {
        use crate::chess::Game;
        use crate::search::Limits;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        for p in PLAYERS {
            let built = p.build(&PlayerSettings::new(1)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(built.loaded.is_some(), p.default_net.is_some(), "{}", p.name);
            let mut s = built.player;
            let r = s.choose(&Game::default(), &Limits::depth(2), std::time::Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {});
            assert!(r.best.is_some(), "{}", p.name);
        }
        let mut s = PlayerSettings::new(1);
        s.net = Some(PathBuf::from("/nonexistent/net.dcw"));
        match find("compact").unwrap().build(&s) {
            Err(BuildError::Load(e)) => assert!(e.contains("/nonexistent/net.dcw"), "{e}"),
            other => panic!("{:?}", other.map(|b| b.loaded)),
        }
        assert_eq!(BuildError::NoNet { file: "x.dcw" }.to_string(), "data/nets/x.dcw not found");
    }
}
