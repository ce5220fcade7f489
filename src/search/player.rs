//! A player: anything that chooses a move for a game under UCI limits, and reports what it
//! did. The search over a comparator is one ([`Searcher`]); a policy that picks its move
//! from one ply of scores is another (`policy.rs`). The UCI engine, `match`'s built-in
//! players, `bench` and the tournament hold a `Box<dyn Player>` from the registry
//! (src/players.rs) and know nothing else of it: its memory, options and counters are its
//! own to report.

use super::searcher::{Info, SearchResult, Searcher};
use super::time::Limits;
use crate::chess::Game;
use crate::eval::{Comparator, Counters};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// What every player offers. One dynamic call per move; what is inside stays monomorphised.
pub trait Player: Send {
    /// The move for the side to move of `game` within `limits` (`overhead`: what the GUI
    /// loses per move), reporting `info` lines as it goes; `stop` ends it early, and its move
    /// must still be legal. `best` is `None` only when there is no legal move.
    fn choose(&mut self, game: &Game, limits: &Limits, overhead: Duration, stop: Arc<AtomicBool>, on_info: &mut dyn FnMut(&Info)) -> SearchResult;

    /// A new game begins: forget what belongs to the old one (tables, caches).
    fn new_game(&mut self);

    /// Memory for positions (UCI `Hash`), in MB. A player without such a table accepts it.
    fn set_hash(&mut self, _mb: usize) -> Result<(), String> {
        Ok(())
    }

    /// A table of exactly `n` entries instead (`bench --tt-entries`); an error for a player
    /// without one.
    fn set_hash_entries(&mut self, _n: usize) -> Result<(), String> {
        Err(format!("{} has no transposition table", self.name()))
    }

    /// Selective search on or off (UCI `Selective`); a player that does not search ignores it.
    fn set_selective(&mut self, _on: bool) {}

    /// Quiescence search at the horizon on or off (UCI `Quiescence`); a player that does not
    /// search ignores it.
    fn set_quiescence(&mut self, _on: bool) {}

    /// Incremental evaluation on or off (`PlayerSettings::incremental`), for a player
    /// whose evaluator has it ([`Comparator::set_incremental`]); returns whether it has.
    /// A player without it (no such evaluator, or no search) ignores the request.
    fn set_incremental(&mut self, _on: bool) -> bool {
        false
    }

    /// Search threads (UCI `Threads`, Lazy SMP); returns how many it will use: 1 for a
    /// player that does not search or whose evaluator cannot fork.
    fn set_threads(&mut self, _n: usize) -> usize {
        1
    }

    /// The threads it searches on now (helpers started included).
    fn threads(&self) -> usize {
        1
    }

    /// Its name, as `info string` and `bench` show it.
    fn name(&self) -> &'static str;

    /// What it counted since it was built, each count named by the player.
    fn counters(&self) -> Counters;

    /// How often its comparator contradicts itself on the children of each of `parents`
    /// (at most `max_children` each; see `tree.rs`); `None` for a player without one.
    fn transitivity(&mut self, _parents: &[crate::chess::Position], _max_children: usize) -> Option<super::tree::Transitivity> {
        None
    }
}

/// How a player of the registry is built: the same for every player, each reading what it
/// needs (a policy without a table ignores `hash_mb`).
#[derive(Clone, Debug)]
pub struct PlayerSettings {
    /// Transposition table (MB); a net player sizes its own caches from it.
    pub hash_mb: usize,
    /// The player's net file; `None`: its default one, found under `data/nets/`.
    pub net: Option<PathBuf>,
    /// Instruction flavour of a net's layers by name (`scalar`, `avx2`, `avx512`: the
    /// numeric engine's kernels, which the search does not know). Every player with a net
    /// honours it (`Kernel::for_player`, one rule for all) and names the kernel it runs in
    /// [`Built::loaded`]. `None`, or a kernel this CPU lacks: `DEEPCHESS_KERNEL` when set,
    /// else the best this CPU has.
    pub kernel: Option<&'static str>,
    /// Incremental evaluation along the search's line, a capability of an evaluator
    /// ([`Comparator::set_incremental`]: DeepChess keeps its first layer so): the registry
    /// asks every player it builds ([`Player::set_incremental`]); a player without the
    /// capability ignores it. False: every position from scratch (`bench --no-incremental`,
    /// to measure the increments); the values are the same.
    pub incremental: bool,
    /// The values of options a player declares of its own ([`PlayerOption`], e.g.
    /// DeepChess's `Quantised`), by name, as UCI's `setoption` or `bench --option` gave
    /// them (checked against the declaration). A player reads its own; none is named here.
    pub options: Vec<(String, String)>,
}

impl PlayerSettings {
    pub fn new(hash_mb: usize) -> PlayerSettings {
        PlayerSettings { hash_mb, net: None, kernel: None, incremental: true, options: Vec::new() }
    }

    /// The value given for option `name` (any case), if any.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().rev().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An option of a player's own, declared by its registry entry: UCI lists it (`option name
/// NAME type combo default D var …`) and passes `setoption` values to the player through
/// [`PlayerSettings::options`]; `bench --option NAME=VALUE` does the same.
#[derive(Debug)]
pub struct PlayerOption {
    pub name: &'static str,
    /// The values it takes (any case), the first its default.
    pub values: &'static [&'static str],
    /// What it does, for the help texts.
    pub about: &'static str,
}

impl PlayerOption {
    /// `value` as one of [`PlayerOption::values`] (its canonical spelling), or why not.
    pub fn check(&self, value: &str) -> Result<&'static str, String> {
        self.values.iter().find(|v| v.eq_ignore_ascii_case(value.trim())).copied().ok_or_else(|| format!("{}: '{}' is not one of {}", self.name, crate::io::text::cut(value, 40), self.values.join(", ")))
    }

    /// Its line in UCI's answer to `uci`.
    pub fn uci_line(&self) -> String {
        let vars: String = self.values.iter().map(|v| format!(" var {v}")).collect();
        format!("option name {} type combo default {}{vars}", self.name, self.values[0])
    }
}

/// A built player and what it loaded.
pub struct Built {
    pub player: Box<dyn Player>,
    /// What was loaded, e.g. `data/nets/compact.dcw (773-32-32/32-2, avx2 kernel)`; `None`
    /// for a player without a file.
    pub loaded: Option<String>,
}

impl<C: Comparator> Player for Searcher<C>
where
    Searcher<C>: Send,
{
    fn choose(&mut self, game: &Game, limits: &Limits, overhead: Duration, stop: Arc<AtomicBool>, on_info: &mut dyn FnMut(&Info)) -> SearchResult {
        Searcher::search(self, game, limits, overhead, stop, on_info)
    }
    fn new_game(&mut self) {
        Searcher::clear(self)
    }
    fn set_hash(&mut self, mb: usize) -> Result<(), String> {
        Searcher::resize_hash(self, mb)
    }
    fn set_hash_entries(&mut self, n: usize) -> Result<(), String> {
        Searcher::resize_hash_entries(self, n)
    }
    fn set_selective(&mut self, on: bool) {
        self.selective = on;
    }
    fn set_quiescence(&mut self, on: bool) {
        self.quiescence = on;
    }
    fn set_incremental(&mut self, on: bool) -> bool {
        let on_helpers = self.helpers.iter_mut().all(|h| h.comp.set_incremental(on));
        self.comp.set_incremental(on) && on_helpers
    }
    fn set_threads(&mut self, n: usize) -> usize {
        Searcher::set_threads(self, n)
    }
    fn threads(&self) -> usize {
        Searcher::threads(self)
    }
    fn name(&self) -> &'static str {
        self.comp.name()
    }
    fn transitivity(&mut self, parents: &[crate::chess::Position], max_children: usize) -> Option<super::tree::Transitivity> {
        let mut t = super::tree::Transitivity::default();
        for p in parents {
            t.add_siblings(&mut self.comp, p, max_children);
        }
        self.comp.clear();
        Some(t)
    }
    fn counters(&self) -> Counters {
        let mut c = self.comp.counters();
        c.0.extend(self.tree.counters().0);
        c
    }
}
