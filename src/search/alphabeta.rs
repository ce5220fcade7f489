//! The paper's comparison-based alpha-beta (§4): alpha and beta are positions (`Value`s),
//! compared by the [`Comparator`]; Black's nodes read the comparator reversed. Around it, what
//! a real engine needs: iterative deepening with a principal variation, quiescence over
//! captures and promotions, a transposition table, move ordering and a check extension.
//! The search owns the rules the comparator never learned: mate and every draw.

use super::comparator::{Comparator, Kind, Value};
use super::ordering::{Heuristics, Picker, MAX_PLY};
use super::see::see;
use super::time::{Clock, Limits};
use super::tt::{Bound, Table};
use crate::chess::{Color, Game, Move, Position};
use std::cmp::Ordering::{Greater, Less};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Quiescence plies within which checks are answered with every evasion.
const QS_EVASION_PLIES: usize = 3;

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
    tt: Table<C::Key>,
    heur: Heuristics,
    nodes: u64,
    seldepth: usize,
    aborted: bool,
    stop: Arc<AtomicBool>,
    clock: Clock,
    node_limit: u64,
    root_depth: i32,
    /// Zobrist keys of the game so far and of the current line, for repetitions.
    path: Vec<u64>,
    pv: Vec<[Option<Move>; MAX_PLY]>,
    pv_len: [usize; MAX_PLY + 1],
    root_best: Option<Move>,
}

impl<C: Comparator> Searcher<C> {
    pub fn new(comp: C, hash_mb: usize) -> Self {
        Searcher {
            comp,
            tt: Table::new(hash_mb),
            heur: Heuristics::default(),
            nodes: 0,
            seldepth: 0,
            aborted: false,
            stop: Arc::new(AtomicBool::new(false)),
            clock: Clock { start: Instant::now(), soft: None, hard: None },
            node_limit: u64::MAX,
            root_depth: 0,
            path: Vec::new(),
            pv: vec![[None; MAX_PLY]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
            root_best: None,
        }
    }

    /// Forget everything learned in this game (UCI `ucinewgame`, bench between positions).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.heur.clear();
        self.comp.clear();
    }

    pub fn resize_hash(&mut self, mb: usize) {
        self.tt = Table::new(mb);
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
        let start = Instant::now();
        let root = *game.position();
        self.stop = stop;
        self.clock = Clock::new(limits, root.turn(), overhead, start);
        self.node_limit = limits.nodes.unwrap_or(u64::MAX).max(1);
        self.nodes = 0;
        self.aborted = false;
        self.path.clear();
        self.path.extend_from_slice(game.keys());
        self.tt.new_search();
        self.heur.age();
        self.comp.set_root(&root);

        let legal = root.legal_moves();
        let max_depth = limits
            .depth
            .or(limits.mate.map(|n| 2 * n.max(1) - 1))
            .unwrap_or(MAX_PLY as u32 - 8)
            .clamp(1, MAX_PLY as u32 - 8);
        let mut last: Option<Info> = None;
        let mut best = legal.iter().next().copied();
        for depth in 1..=max_depth {
            self.root_depth = depth as i32;
            self.seldepth = 0;
            self.root_best = None;
            let side = root.turn();
            let v = self.alphabeta(&root, depth as i32, 0, Value::worst_for(side), Value::best_for(side));
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
                nodes: self.nodes,
                time: start.elapsed(),
                pv: if pv.first() == best.as_ref() { pv } else { best.into_iter().collect() },
                hashfull: self.tt.hashfull(),
            };
            on_info(&info);
            last = Some(info);
            if self.aborted || legal.is_empty() {
                break;
            }
            let timed = self.clock.soft.is_some();
            if self.nodes >= self.node_limit
                || !self.clock.may_start_iteration()
                || (timed && legal.len() == 1)
                || (timed && v.is_mate() && depth >= 2 * mate_ply(&v) + 2)
            {
                break;
            }
        }
        let mut info = last.expect("depth 1 always reports");
        info.nodes = self.nodes;
        info.time = start.elapsed();
        if info.pv.first() != best.as_ref() {
            info.pv = best.into_iter().collect();
        }
        let ponder = info.pv.get(1).copied();
        SearchResult { best, ponder, info }
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
    fn check_abort(&mut self) -> bool {
        if self.nodes >= self.node_limit {
            self.aborted = true;
        } else if self.nodes & 1023 == 0
            && (self.stop.load(AtomicOrdering::Relaxed) || self.clock.hard_expired())
        {
            self.aborted = true;
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
    fn is_rule_draw(&self, pos: &Position) -> bool {
        pos.halfmove_clock() >= 100 || pos.is_insufficient_material() || self.is_repetition(pos)
    }

    fn alphabeta(&mut self, pos: &Position, depth: i32, ply: usize, mut alpha: Value<C::Key>, beta: Value<C::Key>) -> Value<C::Key> {
        self.pv_len[ply] = 0;
        if depth <= 0 {
            return self.quiesce(pos, ply, 0, alpha, beta);
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if ply > 0 && self.check_abort() {
            return alpha;
        }
        let side = pos.turn();
        let in_check = pos.is_check();
        if ply > 0 && self.is_rule_draw(pos) && (!in_check || pos.has_legal_move()) {
            return Value::draw();
        }
        if ply >= MAX_PLY - 1 {
            return Value::pos(self.comp.key(ply, pos));
        }

        let hash = pos.hash();
        let mut hash_move = None;
        if let Some(e) = self.tt.probe(hash, ply) {
            hash_move = Move::from_u16(e.mv).filter(|&m| e.mv != 0 && pos.is_legal(m));
            if ply > 0 && e.depth as i32 >= depth {
                let v = e.value;
                let cut = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => v.cmp_for(&beta, side, &mut self.comp) != Less,
                    Bound::Upper => v.cmp_for(&alpha, side, &mut self.comp) != Greater,
                };
                if cut {
                    return v;
                }
            }
        }

        let mut picker = Picker::new(pos, false, hash_move, &self.heur, ply);
        if picker.is_empty() {
            return if in_check { Value::mate(side.flip(), ply) } else { Value::draw() };
        }
        let mut best_move = None;
        let mut quiets: [Option<Move>; 64] = [None; 64];
        let mut n_quiets = 0;
        while let Some(m) = picker.next() {
            let mut child = *pos;
            child.play(m);
            self.comp.set_node(ply + 1, &child);
            self.path.push(child.hash());
            // Check extension, bounded so perpetual checks cannot blow up the tree.
            let ext = (child.is_check() && (ply as i32) < 2 * self.root_depth) as i32;
            let v = self.alphabeta(&child, depth - 1 + ext, ply + 1, beta, alpha);
            self.path.pop();
            if self.aborted {
                return alpha;
            }
            let quiet = !pos.is_capture(m) && m.promotion.is_none();
            if v.cmp_for(&beta, side, &mut self.comp) != Less {
                if quiet {
                    let tried: Vec<Move> = quiets[..n_quiets].iter().flatten().copied().collect();
                    self.heur.on_cutoff(side, m, ply, depth, &tried);
                }
                self.tt.store(hash, ply, depth, Bound::Lower, v, Some(m));
                if ply == 0 {
                    self.root_best = Some(m);
                    self.set_pv(ply, m);
                }
                return v;
            }
            if v.cmp_for(&alpha, side, &mut self.comp) == Greater {
                alpha = v;
                best_move = Some(m);
                self.set_pv(ply, m);
                if ply == 0 {
                    self.root_best = Some(m);
                }
            }
            if quiet && n_quiets < quiets.len() {
                quiets[n_quiets] = Some(m);
                n_quiets += 1;
            }
        }
        let bound = if best_move.is_some() { Bound::Exact } else { Bound::Upper };
        self.tt.store(hash, ply, depth, bound, alpha, best_move);
        alpha
    }

    /// Quiescence: the comparator only saw quiet positions, so resolve captures and
    /// promotions first. Standing pat is the position itself; in check, every evasion.
    fn quiesce(&mut self, pos: &Position, ply: usize, qply: usize, mut alpha: Value<C::Key>, beta: Value<C::Key>) -> Value<C::Key> {
        self.pv_len[ply] = 0;
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if self.check_abort() {
            return alpha;
        }
        let side = pos.turn();
        let in_check = pos.is_check();
        if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
            if !in_check || pos.has_legal_move() {
                return Value::draw();
            }
        }
        // Deep in quiescence a check is not resolved any more (evasions are quiet moves and
        // chains of checking captures would explode): the position stands for itself.
        if ply >= MAX_PLY - 1 || (in_check && qply > QS_EVASION_PLIES) {
            return Value::pos(self.comp.key(ply, pos));
        }
        if !in_check {
            let stand = Value::pos(self.comp.key(ply, pos));
            if stand.cmp_for(&beta, side, &mut self.comp) != Less {
                return stand;
            }
            if stand.cmp_for(&alpha, side, &mut self.comp) == Greater {
                alpha = stand;
            }
        }
        let mut picker = Picker::new(pos, !in_check, None, &self.heur, ply);
        if picker.is_empty() {
            if in_check {
                return Value::mate(side.flip(), ply);
            }
            if !pos.has_legal_move() {
                return Value::draw();
            }
            return alpha;
        }
        while let Some(m) = picker.next() {
            // Losing captures cannot restore a standing pat; skip them (not when evading).
            if !in_check && see(pos, m) < 0 {
                continue;
            }
            let mut child = *pos;
            child.play(m);
            self.comp.set_node(ply + 1, &child);
            let v = self.quiesce(&child, ply + 1, qply + 1, beta, alpha);
            if self.aborted {
                return alpha;
            }
            if v.cmp_for(&beta, side, &mut self.comp) != Less {
                return v;
            }
            if v.cmp_for(&alpha, side, &mut self.comp) == Greater {
                alpha = v;
                self.set_pv(ply, m);
            }
        }
        alpha
    }

    fn set_pv(&mut self, ply: usize, m: Move) {
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
