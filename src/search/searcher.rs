//! The searcher (paper §4 and what a real engine needs around it): iterative deepening with
//! a principal variation, time and node limits, repetition and rule draws, and the state
//! kept across the searches of one game (transposition table, ordering heuristics). The
//! node itself is in `alphabeta.rs`, its pruning steps in `pruning.rs`, quiescence in
//! `quiesce.rs`. The search owns the rules the comparator never learned: mate and every
//! draw.

use super::ordering::Heuristics;
use super::time::{Clock, Limits, MAX_DEPTH};

// Extensions and quiescence go past the nominal depth: the line buffers must hold them.
const _: () = assert!(MAX_DEPTH as usize + 8 <= MAX_PLY);
use super::tt::Table;
use super::window::Window;
use crate::chess::{Color, Game, Move, Position};
use crate::eval::{Comparator, Kind, Value, MAX_PLY};
use std::cmp::Ordering::{Equal, Greater, Less};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A score for UCI, from the root side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawn-like figure derived from the comparator (see docs/search.md).
    Cp(i32),
    /// Mate in N moves (negative: being mated).
    Mate(i32),
}

/// One iteration's report (an `info` line).
#[derive(Clone, Debug)]
pub struct Info {
    pub depth: u32,
    pub seldepth: u32,
    pub score: Score,
    pub nodes: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
    pub hashfull: u32,
}

impl Info {
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.time.as_secs_f64().max(1e-3)) as u64
    }
}

/// What a search returns. `best` is `None` only when the root has no legal move.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    pub info: Info,
}

/// The searcher: a comparator, a transposition table and ordering heuristics, kept across
/// searches of one game.
pub struct Searcher<C: Comparator> {
    pub comp: C,
    /// Shared with the helper threads of Lazy SMP (`smp.rs`).
    pub(super) tt: Arc<Table<C::Stored>>,
    pub(super) heur: Heuristics,
    pub(super) nodes: u64,
    /// What shaped the tree (`tree.rs`), counted for `bench`.
    pub(super) tree: super::tree::TreeCounts,
    pub(super) seldepth: usize,
    pub(super) aborted: bool,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) clock: Clock,
    pub(super) node_limit: u64,
    pub(super) root_depth: i32,
    /// Zobrist keys of the game so far and of the current line, for repetitions.
    pub(super) path: Vec<u64>,
    pub(super) pv: Vec<[Option<Move>; MAX_PLY]>,
    pub(super) pv_len: [usize; MAX_PLY + 1],
    pub(super) root_best: Option<Move>,
    /// The root moves this search may play (`go searchmoves`); empty: all of them.
    pub(super) root_moves: Vec<Move>,
    /// Null move, late-move reductions and late-move pruning (off: full width to the
    /// nominal depth, as `go mate` asks).
    pub selective: bool,
    /// Principal variation search (off: every node gets the full window; tests compare
    /// the two).
    pub null_windows: bool,
    /// Quiescence search at the horizon and the check extension (off: the search is cut at
    /// the nominal depth, checks included, and the position there stands for itself, as in
    /// the tables of seed 004, whose searches were "cut at depth 2, or 4 (no quiescence
    /// extensions)").
    pub quiescence: bool,
    /// Lazy SMP (`smp.rs`): the helper searchers (threads beyond the first), and for a
    /// helper, where it publishes its node count and the depth its iterations start at.
    pub(super) helpers: Vec<Searcher<C>>,
    pub(super) helper_counts: Vec<Arc<AtomicU64>>,
    pub(super) published: Option<Arc<AtomicU64>>,
    pub(super) start_depth: u32,
}

impl<C: Comparator> Searcher<C> {
    pub fn new(comp: C, hash_mb: usize) -> Self {
        Searcher {
            comp,
            tt: Arc::new(Table::new(hash_mb)),
            heur: Heuristics::default(),
            nodes: 0,
            tree: Default::default(),
            seldepth: 0,
            aborted: false,
            stop: Arc::new(AtomicBool::new(false)),
            clock: Clock::unlimited(),
            node_limit: u64::MAX,
            root_depth: 0,
            path: Vec::new(),
            pv: vec![[None; MAX_PLY]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
            root_best: None,
            root_moves: Vec::new(),
            selective: true,
            null_windows: true,
            quiescence: true,
            helpers: Vec::new(),
            helper_counts: Vec::new(),
            published: None,
            start_depth: 1,
        }
    }

    /// Forget everything learned in this game (UCI `ucinewgame`, bench between positions).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.heur.clear();
        self.comp.clear();
        for h in &mut self.helpers {
            h.heur.clear();
            h.comp.clear();
        }
    }

    /// Replaces the transposition table by one of `mb` megabytes; when that memory cannot
    /// be had, keeps the current table and says why.
    pub fn resize_hash(&mut self, mb: usize) -> Result<(), String> {
        self.tt = Arc::new(Table::try_new(mb)?);
        Ok(())
    }

    /// Replaces the transposition table by one of `n` entries (`bench --tt-entries`: two key
    /// forms of one comparator compared at an equal entry count).
    pub fn resize_hash_entries(&mut self, n: usize) -> Result<(), String> {
        self.tt = Arc::new(Table::try_with_len(n)?);
        Ok(())
    }

    /// Searches the game's current position within `limits`, calling `on_info` after each
    /// completed iteration. `stop` aborts it from another thread; `overhead` is subtracted
    /// from every time budget (UCI `Move Overhead`).
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        overhead: Duration,
        stop: Arc<AtomicBool>,
        on_info: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        if self.helpers.is_empty() {
            self.search_alone(game, limits, overhead, stop, on_info)
        } else {
            self.search_smp(game, limits, overhead, stop, on_info)
        }
    }

    /// One thread's iterative deepening (the main thread's, or a helper's).
    pub(super) fn search_alone(
        &mut self,
        game: &Game,
        limits: &Limits,
        overhead: Duration,
        stop: Arc<AtomicBool>,
        on_info: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        let start = Instant::now();
        let root = *game.position();
        self.stop = stop;
        self.clock = Clock::new(limits, root.turn(), overhead, start);
        self.node_limit = limits.nodes.unwrap_or(u64::MAX).max(1);
        self.nodes = 0;
        self.aborted = false;
        self.path.clear();
        self.path.extend_from_slice(game.keys());
        // One new search of the shared table per move: the main thread's (a helper aging it
        // too would make the main thread's fresh entries look old).
        if self.published.is_none() {
            self.tt.new_search();
        }
        self.heur.age();
        self.comp.set_root(&root);

        // `go mate N` asks for a proof within N moves: no selective pruning, which could
        // hide the mate at its nominal depth.
        let selective = self.selective;
        self.selective &= limits.mate.is_none();
        // `searchmoves` restricts the root to its legal members (none legal: no restriction).
        let mut legal: Vec<Move> = root.legal_moves().iter().copied().collect();
        // Answer at once only when the rules, not `searchmoves`, leave one move.
        let forced = legal.len() == 1;
        if legal.iter().any(|m| limits.searchmoves.contains(m)) {
            legal.retain(|m| limits.searchmoves.contains(m));
            self.root_moves.clone_from(&legal);
        } else {
            self.root_moves.clear();
        }
        let max_depth = limits.depth.or(limits.mate.map(|n| 2 * n.max(1) - 1)).unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        // No move changes a dead position's outcome: one iteration finds a legal move.
        let max_depth = if root.is_insufficient_material() { 1 } else { max_depth };
        let mut last: Option<Info> = None;
        let mut best = legal.iter().next().copied();
        // Keys taken before the search (a caller's) stay valid: only the search's go.
        let base = self.comp.mark();
        for depth in self.start_depth.min(max_depth)..=max_depth {
            self.root_depth = depth as i32;
            self.seldepth = 0;
            self.root_best = None;
            let side = root.turn();
            let v = self.alphabeta(
                &root,
                depth as i32,
                0,
                Window::at(Value::worst_for(side)),
                Window::at(Value::best_for(side)),
                true,
            );
            if let Some(m) = self.root_best {
                best = Some(m);
            }
            if self.aborted && last.is_some() {
                break;
            }
            let pv: Vec<Move> = self.pv[0][..self.pv_len[0]].iter().flatten().copied().collect();
            let info = Info {
                depth,
                seldepth: self.seldepth.max(depth as usize) as u32,
                score: self.score(&v, side),
                nodes: self.nodes + self.helper_nodes(),
                time: start.elapsed(),
                pv: if pv.first() == best.as_ref() { pv } else { best.into_iter().collect() },
                hashfull: self.tt.hashfull(),
            };
            // The iteration's keys go once its value is read (`score`; `v`'s kind stays).
            self.comp.truncate(base);
            on_info(&info);
            last = Some(info);
            if self.aborted || legal.is_empty() {
                break;
            }
            let timed = self.clock.soft.is_some();
            if self.nodes >= self.node_limit
                || !self.clock.may_start_iteration()
                || (timed && forced)
                || (timed && v.is_mate() && depth >= 2 * mate_ply(&v) + 2)
            {
                break;
            }
        }
        self.comp.truncate(base);
        let mut info = last.expect("the first iteration always reports");
        info.nodes = self.nodes + self.helper_nodes();
        info.time = start.elapsed();
        if info.pv.first() != best.as_ref() {
            info.pv = best.into_iter().collect();
        }
        let ponder = info.pv.get(1).copied().or_else(|| self.expected_reply(&root, best?));
        self.selective = selective;
        self.root_moves.clear();
        SearchResult { best, ponder, info }
    }

    /// The reply the table expects after `best` (for `bestmove … ponder …` when the last
    /// iteration was cut before its principal variation reached a second move).
    fn expected_reply(&self, root: &Position, best: Move) -> Option<Move> {
        let mut p = *root;
        p.play(best);
        let e = self.tt.probe(p.hash(), 1)?;
        Move::from_u16(e.mv).filter(|&m| e.mv != 0 && p.is_legal(m))
    }

    /// UCI score from the root side's point of view.
    fn score(&mut self, v: &Value<C::Key>, side: Color) -> Score {
        let sign = if side == Color::White { 1 } else { -1 };
        match v.kind {
            Kind::Pos => Score::Cp(sign * self.comp.centipawns(&v.key)),
            Kind::Draw => Score::Cp(0),
            Kind::Mate { winner, ply } => {
                let moves = (ply as i32 + 1) / 2;
                Score::Mate(if winner == side { moves } else { -moves })
            }
            Kind::Top => Score::Cp(sign * 100_000),
            Kind::Bottom => Score::Cp(-sign * 100_000),
        }
    }

    #[inline]
    pub(super) fn check_abort(&mut self) -> bool {
        if self.nodes >= self.node_limit {
            self.aborted = true;
        } else if self.nodes & 1023 == 0 {
            if let Some(p) = &self.published {
                p.store(self.nodes, AtomicOrdering::Relaxed);
            }
            if self.stop.load(AtomicOrdering::Relaxed) || self.clock.hard_expired() {
                self.aborted = true;
            }
        }
        self.aborted
    }

    /// A repetition of a position since the last irreversible move (twofold in the search
    /// tree or against the game's history counts as a draw).
    fn is_repetition(&self, pos: &Position) -> bool {
        let n = self.path.len();
        let window = (pos.halfmove_clock() as usize).min(n - 1);
        let h = pos.hash();
        let mut i = n - 1;
        while i >= 2 && i - 2 >= n - 1 - window {
            i -= 2;
            if self.path[i] == h {
                return true;
            }
        }
        false
    }

    /// Draws the rules impose on a position with at least one legal move.
    pub(super) fn is_rule_draw(&self, pos: &Position) -> bool {
        pos.halfmove_clock() >= 100 || pos.is_insufficient_material() || self.is_repetition(pos)
    }

    /// Makes `child` the position at `ply` of the current line; when it will be searched
    /// with depth left, starts loading its transposition entry (read after the tests that
    /// precede the probe, so the line usually arrives in time).
    #[inline]
    pub(super) fn enter(&mut self, ply: usize, child: &Position, depth_left: i32) {
        if depth_left > 0 {
            self.tt.prefetch(child.hash());
        }
        self.comp.set_node(ply, child);
    }

    /// `v` is at least bound `b` for `side`.
    #[inline]
    pub(super) fn reaches(&mut self, v: &Value<C::Key>, b: &Window<C::Key>, side: Color) -> bool {
        match v.cmp_for(&b.value, side, &mut self.comp) {
            Greater => true,
            Less => false,
            Equal => b.eps <= 0,
        }
    }

    /// `v` is strictly better than bound `b` for `side`.
    #[inline]
    pub(super) fn exceeds(&mut self, v: &Value<C::Key>, b: &Window<C::Key>, side: Color) -> bool {
        match v.cmp_for(&b.value, side, &mut self.comp) {
            Greater => true,
            Less => false,
            Equal => b.eps < 0,
        }
    }

    pub(super) fn set_pv(&mut self, ply: usize, m: Move) {
        let child_len = if ply + 1 <= MAX_PLY { self.pv_len[ply + 1] } else { 0 };
        let n = (child_len + 1).min(MAX_PLY);
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        head[ply][0] = Some(m);
        head[ply][1..n].copy_from_slice(&tail[0][..n - 1]);
        self.pv_len[ply] = n;
    }

    /// Nodes searched by the last search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
}

fn mate_ply<K>(v: &Value<K>) -> u32 {
    match v.kind {
        Kind::Mate { ply, .. } => ply as u32,
        _ => 0,
    }
}
