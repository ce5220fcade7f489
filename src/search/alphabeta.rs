//! The paper's comparison-based alpha-beta (§4): alpha and beta are positions (`Value`s),
//! compared by the [`Comparator`]; Black's nodes read the comparator reversed. Around it, what
//! a real engine needs: iterative deepening with a principal variation, quiescence over
//! captures and promotions, a transposition table, move ordering and a check extension.
//! The search owns the rules the comparator never learned: mate and every draw.

use super::ordering::{Heuristics, Picker};
use super::see::see_ge;
use super::time::{Clock, Limits};
use super::tt::{Bound, Table};
use crate::chess::{Color, Game, Move, Position, Role, Square};
use crate::eval::{Comparator, Kind, Value, MAX_PLY};
use std::cmp::Ordering::{Equal, Greater, Less};
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
    /// Null move, late-move reductions and late-move pruning (off: full width to the
    /// nominal depth, as `go mate` asks).
    pub selective: bool,
    /// Principal variation search (off: every node gets the full window; tests compare
    /// the two).
    pub null_windows: bool,
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
            selective: true,
            null_windows: true,
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

        // `go mate N` asks for a proof within N moves: no selective pruning, which could
        // hide the mate at its nominal depth.
        let selective = self.selective;
        self.selective &= limits.mate.is_none();
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
        self.selective = selective;
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

    /// `alpha` and `beta` are bounds for the side to move ([`Window`]); the result is a value
    /// (fail-soft): at least `beta` is a cut-off, not above `alpha` a fail-low, anything
    /// else exact. `pv`: a node on the principal variation with an open window; every other
    /// node gets a null window (`beta` = `alpha` + ε: only "better than alpha or not?").
    fn alphabeta(
        &mut self,
        pos: &Position,
        mut depth: i32,
        ply: usize,
        mut alpha: Window<C::Key>,
        beta: Window<C::Key>,
        pv: bool,
    ) -> Value<C::Key> {
        self.pv_len[ply] = 0;
        if depth <= 0 {
            return self.quiesce(pos, ply, 0, alpha, beta);
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if ply > 0 && self.check_abort() {
            return alpha.value;
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
                    Bound::Lower => self.reaches(&v, &beta, side),
                    Bound::Upper => !self.exceeds(&v, &alpha, side),
                };
                if cut {
                    return v;
                }
            }
        }

        // Internal iterative reduction: a node deep enough to matter that the table knows no
        // move for is probably new to this line; search it one ply shallower (its next
        // visit will have the move this visit stores).
        if self.selective && ply > 0 && depth >= 4 && hash_move.is_none() {
            depth -= 1;
        }

        // Static cut (reverse futility in comparison terms): a few plies from the leaves, a
        // position the comparator is confident is better than beta for the side to move
        // stays above it. Confidence, not a margin, is what a comparator offers.
        let mut stand = None;
        if self.selective && !pv && !in_check && ply > 0 && depth <= STATIC_CUT_DEPTH {
            let v = Value::pos(self.comp.key(ply, pos));
            stand = Some(v);
            let p_white = match beta.value.kind {
                Kind::Pos => Some(self.comp.prob_white_better(&v.key, &beta.value.key)),
                Kind::Draw => Some(self.comp.prob_better_than_draw(&v.key)),
                _ => None,
            };
            if let Some(p) = p_white {
                let p_side = if side == Color::White { p } else { 1.0 - p };
                if p_side >= static_cut_confidence(depth) {
                    return v;
                }
            }
        }

        // Null move (beyond the paper): if passing still leaves the side at least at beta
        // after a reduced search, a real move would too. Not in check, not in pawn endings
        // (zugzwang), and only where the position itself already reaches beta.
        if self.selective
            && !pv
            && !in_check
            && depth >= 3
            && ply > 0
            && !beta.value.is_mate()
            && has_pieces(pos, side)
        {
            let stand = stand.unwrap_or_else(|| Value::pos(self.comp.key(ply, pos)));
            if self.reaches(&stand, &beta, side) {
                let r = 3 + depth / 6;
                let mut child = *pos;
                child.play_null();
                self.enter(ply + 1, &child, depth - 1 - r);
                self.path.push(child.hash());
                // Window (beta - ε, beta): only "does it reach beta?".
                let v = self.alphabeta(
                    &child,
                    depth - 1 - r,
                    ply + 1,
                    beta.flip(),
                    beta.lowered().flip(),
                    false,
                );
                self.path.pop();
                if self.aborted {
                    return alpha.value;
                }
                // A mate found after passing is no proof of anything: search normally.
                if !v.is_mate() && self.reaches(&v, &beta, side) {
                    return v;
                }
            }
        }

        let mut picker = Picker::new(pos, false, hash_move, &self.heur, ply);
        if picker.is_empty() {
            return if in_check { Value::mate(side.flip(), ply) } else { Value::draw() };
        }
        let mut best = Value::worst_for(side);
        let mut best_move = None;
        // Quiet moves searched so far (the first 64): history pushes them down on a cut-off.
        let mut quiets = [Move::new(Square::A1, Square::A1, None); 64];
        let mut n_quiets = 0;
        let mut index = 0usize;
        while let Some(m) = picker.next() {
            let quiet = !pos.is_capture(m) && m.promotion.is_none();
            // Late-move pruning: near the leaves of a null-window node, quiet moves this far
            // down the ordering almost never cut; skip them (never in check, never checks).
            // Tested first: most moves it skips need no static exchange.
            let late = self.selective && !pv && quiet && !in_check && depth <= 4 && index >= lmp_count(depth);
            let mut child = *pos;
            if late {
                child.play(m);
                if !child.is_check() {
                    continue;
                }
            }
            // SEE pruning: near the leaves, once one move has been searched, a move that loses
            // material on its square by more than the depth allows is not worth searching.
            if self.selective
                && ply > 0
                && index > 0
                && !in_check
                && depth <= 6
                && !best.is_losing_mate_for(side)
                && Some(m) != hash_move
                && !see_ge(pos, m, see_margin(depth, quiet))
            {
                continue;
            }
            if !late {
                child.play(m);
            }
            let gives_check = child.is_check();
            self.enter(ply + 1, &child, depth - 1);
            self.path.push(child.hash());
            // Check extension, bounded so perpetual checks cannot blow up the tree; a check
            // that loses material on its square is not worth a ply (a sacrifice that mates is
            // still searched, one ply shorter).
            let ext = (gives_check
                && (ply as i32) < 2 * self.root_depth
                && see_ge(pos, m, 0)) as i32;
            let new_depth = depth - 1 + ext;
            let v = if index == 0 || !self.null_windows {
                self.alphabeta(&child, new_depth, ply + 1, beta.flip(), alpha.flip(), pv)
            } else {
                // Principal variation search: later moves only have to show they are not
                // better than alpha (window (alpha, alpha + ε)), late quiet ones at reduced
                // depth first; one that is better is searched again at full depth, and on the
                // principal variation with the full window.
                let r = if self.selective
                    && quiet
                    && !in_check
                    && !gives_check
                    && depth >= 3
                    && !self.heur.is_killer(ply, m)
                {
                    (lmr(depth, index) - pv as i32).clamp(0, new_depth - 1)
                } else {
                    0
                };
                let (na, nb) = (alpha.raised().flip(), alpha.flip());
                let mut v = self.alphabeta(&child, new_depth - r, ply + 1, na, nb, false);
                if r > 0 && !self.aborted && self.exceeds(&v, &alpha, side) {
                    v = self.alphabeta(&child, new_depth, ply + 1, na, nb, false);
                }
                if pv
                    && !self.aborted
                    && self.exceeds(&v, &alpha, side)
                    && !self.reaches(&v, &beta, side)
                {
                    v = self.alphabeta(&child, new_depth, ply + 1, beta.flip(), alpha.flip(), true);
                }
                v
            };
            index += 1;
            self.path.pop();
            if self.aborted {
                return alpha.value;
            }
            if self.reaches(&v, &beta, side) {
                if quiet {
                    self.heur.on_cutoff(side, m, ply, depth, &quiets[..n_quiets]);
                }
                self.tt.store(hash, ply, depth, Bound::Lower, v, Some(m));
                if ply == 0 {
                    self.root_best = Some(m);
                    self.set_pv(ply, m);
                }
                return v;
            }
            // Whatever beat alpha beats every earlier move too (best ≤ alpha): one comparison.
            if self.exceeds(&v, &alpha, side) {
                best = v;
                alpha = Window::at(v);
                best_move = Some(m);
                self.set_pv(ply, m);
                if ply == 0 {
                    self.root_best = Some(m);
                }
            } else if index == 1 || v.cmp_for(&best, side, &mut self.comp) == Greater {
                best = v;
            }
            if quiet && n_quiets < quiets.len() {
                quiets[n_quiets] = m;
                n_quiets += 1;
            }
        }
        let bound = if best_move.is_some() { Bound::Exact } else { Bound::Upper };
        self.tt.store(hash, ply, depth, bound, best, best_move);
        best
    }

    /// Makes `child` the position at `ply` of the current line; when it will be searched
    /// with depth left, starts loading its transposition entry (read after the tests that
    /// precede the probe, so the line usually arrives in time).
    #[inline]
    fn enter(&mut self, ply: usize, child: &Position, depth_left: i32) {
        if depth_left > 0 {
            self.tt.prefetch(child.hash());
        }
        self.comp.set_node(ply, child);
    }

    /// `v` is at least bound `b` for `side`.
    #[inline]
    fn reaches(&mut self, v: &Value<C::Key>, b: &Window<C::Key>, side: Color) -> bool {
        match v.cmp_for(&b.value, side, &mut self.comp) {
            Greater => true,
            Less => false,
            Equal => b.eps <= 0,
        }
    }

    /// `v` is strictly better than bound `b` for `side`.
    #[inline]
    fn exceeds(&mut self, v: &Value<C::Key>, b: &Window<C::Key>, side: Color) -> bool {
        match v.cmp_for(&b.value, side, &mut self.comp) {
            Greater => true,
            Less => false,
            Equal => b.eps < 0,
        }
    }

    /// Quiescence: the comparator only saw quiet positions, so resolve captures and
    /// promotions first. Standing pat is the position itself; in check, every evasion.
    fn quiesce(
        &mut self,
        pos: &Position,
        ply: usize,
        qply: usize,
        mut alpha: Window<C::Key>,
        beta: Window<C::Key>,
    ) -> Value<C::Key> {
        self.pv_len[ply] = 0;
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if self.check_abort() {
            return alpha.value;
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
        let mut best = Value::worst_for(side);
        if !in_check {
            let stand = Value::pos(self.comp.key(ply, pos));
            if self.reaches(&stand, &beta, side) {
                return stand;
            }
            best = stand;
            if self.exceeds(&stand, &alpha, side) {
                alpha = Window::at(stand);
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
            return best;
        }
        while let Some(m) = picker.next() {
            // Losing captures cannot restore a standing pat; skip them (not when evading).
            if !in_check && !see_ge(pos, m, 0) {
                continue;
            }
            let mut child = *pos;
            child.play(m);
            self.enter(ply + 1, &child, 0);
            let v = self.quiesce(&child, ply + 1, qply + 1, beta.flip(), alpha.flip());
            if self.aborted {
                return best;
            }
            if self.reaches(&v, &beta, side) {
                return v;
            }
            if self.exceeds(&v, &alpha, side) {
                best = v;
                alpha = Window::at(v);
                self.set_pv(ply, m);
            } else if v.cmp_for(&best, side, &mut self.comp) == Greater {
                best = v;
            }
        }
        best
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

/// A search bound: a value, nudged by `eps` infinitesimal steps in favour of the side to
/// move at the node that holds it. Values are positions, with no "alpha + 1"; the null
/// windows of PVS are (alpha, alpha + ε), so "equal to alpha" is unambiguously a fail-low
/// and equal values met through transpositions cannot be read both ways.
#[derive(Clone, Copy, Debug)]
struct Window<K> {
    value: Value<K>,
    eps: i8,
}

impl<K: Copy + Default> Window<K> {
    fn at(value: Value<K>) -> Self {
        Window { value, eps: 0 }
    }
    /// The same bound seen by the other side.
    fn flip(self) -> Self {
        Window { eps: -self.eps, ..self }
    }
    fn raised(self) -> Self {
        Window { eps: self.eps + 1, ..self }
    }
    fn lowered(self) -> Self {
        Window { eps: self.eps - 1, ..self }
    }
}

/// Late-move reduction in plies for the `index`-th move (0-based) at `depth`: none for
/// the first three, then growing with the logarithms of both.
fn lmr(depth: i32, index: usize) -> i32 {
    if index < 3 {
        return 0;
    }
    (0.75 + (depth as f64).ln() * (index as f64).ln() / 2.25) as i32
}

/// Depth up to which the static cut applies, and the confidence it asks for at `depth`.
const STATIC_CUT_DEPTH: i32 = 3;
fn static_cut_confidence(depth: i32) -> f32 {
    0.55 + 0.05 * depth as f32
}

/// SEE below which a move is pruned at `depth` (see the move loop): quiet moves may hang
/// less than captures, whose exchange already won something.
fn see_margin(depth: i32, quiet: bool) -> i32 {
    if quiet {
        -15 * depth * depth
    } else {
        -90 * depth
    }
}

/// Moves searched at `depth` before late quiet moves are pruned (see the move loop).
fn lmp_count(depth: i32) -> usize {
    3 + (depth * depth) as usize
}

/// Whether `side` has a piece besides pawns and king (null move is unsafe without one).
fn has_pieces(pos: &Position, side: Color) -> bool {
    let pawns_kings = pos.by_role(Role::Pawn) | pos.by_role(Role::King);
    !(pos.by_color(side) & !pawns_kings).is_empty()
}

fn mate_ply<K>(v: &Value<K>) -> u32 {
    match v.kind {
        Kind::Mate { ply, .. } => ply as u32,
        _ => 0,
    }
}
