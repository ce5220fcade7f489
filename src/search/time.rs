//! Search limits (UCI `go` parameters), pondering and time management.

use crate::chess::{Color, Move};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The deepest iteration any search runs (UCI `go depth` is clamped to it too).
pub const MAX_DEPTH: u32 = 100;

/// What `go` asked for. Everything unset and `infinite` false means "until stopped".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime: Option<Duration>,
    pub wtime: Option<Duration>,
    pub btime: Option<Duration>,
    pub winc: Option<Duration>,
    pub binc: Option<Duration>,
    pub movestogo: Option<u32>,
    pub infinite: bool,
    /// Search for a mate in this many moves (treated as a depth limit of 2N-1 plies).
    pub mate: Option<u32>,
    /// Only these root moves (UCI `searchmoves`); empty means every legal move.
    pub searchmoves: Vec<Move>,
    /// `go ponder`: no deadline runs until [`Ponder::hit`].
    pub ponder: Option<Ponder>,
}

impl Limits {
    pub fn depth(d: u32) -> Limits {
        Limits { depth: Some(d), ..Limits::default() }
    }

    /// Whether nothing bounds the search: no clock, depth, node count, mate or move time.
    pub fn unbounded(&self) -> bool {
        self.depth.is_none() && self.nodes.is_none() && self.movetime.is_none() && self.wtime.is_none() && self.btime.is_none() && self.mate.is_none()
    }

    /// Whether `bestmove` must wait for `stop` (or `ponderhit`) even if the search ended:
    /// `go infinite`, and `go ponder` until the opponent plays the expected move.
    pub fn waits_for_stop(&self) -> bool {
        self.infinite || self.ponder.as_ref().is_some_and(Ponder::pondering)
    }

    /// Whether the side to move has no clock of its own but its opponent has one (a GUI bug
    /// or a hand-typed `go btime …`): the search then plans with the opponent's clock
    /// rather than running unbounded.
    pub fn borrows_clock(&self, side: Color) -> bool {
        let (own, other) = match side {
            Color::White => (self.wtime, self.btime),
            Color::Black => (self.btime, self.wtime),
        };
        own.is_none() && other.is_some()
    }
}

/// The `ponderhit` signal shared by the UCI thread and a pondering search: unset while the
/// engine ponders, then the moment the opponent played the expected move, from which the
/// search's time budget runs.
#[derive(Clone, Debug, Default)]
pub struct Ponder(Arc<OnceLock<Instant>>);

impl Ponder {
    pub fn new() -> Ponder {
        Ponder::default()
    }
    /// The opponent played the pondered move: the clock starts now.
    pub fn hit(&self) {
        let _ = self.0.set(Instant::now());
    }
    pub fn pondering(&self) -> bool {
        self.0.get().is_none()
    }
    fn hit_at(&self) -> Option<Instant> {
        self.0.get().copied()
    }
}

impl PartialEq for Ponder {
    fn eq(&self, other: &Ponder) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Deadlines derived from the limits: a soft one (do not start another iteration) and a
/// hard one (abort the search now), both measured from `start` (or from `ponderhit`).
#[derive(Clone, Debug)]
pub struct Clock {
    pub start: Instant,
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
    /// `go movetime`: the time is the user's to spend, so iterations start until the hard
    /// deadline cuts one (its best move so far counts).
    pub fixed: bool,
    pub ponder: Option<Ponder>,
}

/// Default number of moves to plan for when `movestogo` is absent (sudden death). Games
/// against Stockfish are decided soon after the opening, and planning for more moves left
/// clock unused at the end of games (docs/notebook/results.md).
const MOVES_TO_GO: u32 = 24;

/// Kept back beyond the overhead at any time control, never planned into a budget: a
/// stall (the engine descheduled on a busy machine, 50 ms or so) plus the GUI's own latency
/// on the move it strikes, with the clock at its lowest. Costs a tenth of a 1 s clock.
pub const RESERVE: Duration = Duration::from_millis(100);

impl Clock {
    /// A clock with no deadline (set up by every search before use).
    pub fn unlimited() -> Clock {
        Clock { start: Instant::now(), soft: None, hard: None, fixed: false, ponder: None }
    }

    pub fn new(limits: &Limits, side: Color, overhead: Duration, start: Instant) -> Clock {
        let mut c = Clock { start, ponder: limits.ponder.clone(), ..Clock::unlimited() };
        if let Some(mt) = limits.movetime {
            let t = mt.saturating_sub(overhead).max(Duration::from_millis(1));
            c.soft = Some(t);
            c.hard = Some(t);
            c.fixed = true;
        }
        let (mut time, mut inc) = match side {
            Color::White => (limits.wtime, limits.winc),
            Color::Black => (limits.btime, limits.binc),
        };
        if limits.borrows_clock(side) {
            (time, inc) = match side {
                Color::White => (limits.btime, limits.binc),
                Color::Black => (limits.wtime, limits.winc),
            };
        }
        if let Some(time) = time {
            let inc = inc.unwrap_or_default();
            let mtg = limits.movestogo.unwrap_or(MOVES_TO_GO).clamp(1, MOVES_TO_GO);
            // Plan only with what is left after the overhead and the reserve, so a stall on
            // any move, even with the clock nearly spent, still leaves time on it; with an
            // increment the clock climbs back above the reserve.
            let left = time.saturating_sub(overhead + RESERVE);
            let cap = left.mul_f64(if mtg == 1 { 0.9 } else { 0.5 });
            let base = left / mtg + inc;
            let s = base.min(cap).max(Duration::from_millis(1));
            let h = (base * 3).min(cap).max(s);
            c.soft = Some(c.soft.map_or(s, |x| x.min(s)));
            c.hard = Some(c.hard.map_or(h, |x| x.min(h)));
            c.fixed = false;
        }
        if limits.infinite {
            c.soft = None;
            c.hard = None;
        }
        c
    }

    /// Time spent against the budget: since `start`, or since `ponderhit` (None while
    /// pondering: no deadline applies yet).
    pub fn spent(&self) -> Option<Duration> {
        match &self.ponder {
            Some(p) => p.hit_at().map(|at| at.elapsed()),
            None => Some(self.start.elapsed()),
        }
    }

    /// Whether a new iteration is worth starting (it typically takes about twice the last;
    /// one that overruns is cut by the hard deadline and its best move so far still counts).
    pub fn may_start_iteration(&self) -> bool {
        match (self.soft, self.spent()) {
            (Some(_), Some(_)) if self.fixed => !self.hard_expired(),
            (Some(s), Some(spent)) => spent < s.mul_f64(0.6),
            _ => true,
        }
    }

    pub fn hard_expired(&self) -> bool {
        matches!((self.hard, self.spent()), (Some(h), Some(spent)) if spent >= h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_budgets_stay_inside_remaining_time() {
        let ms = Duration::from_millis;
        let l = Limits { wtime: Some(ms(1000)), winc: Some(ms(0)), ..Limits::default() };
        let c = Clock::new(&l, Color::White, ms(50), Instant::now());
        assert!(c.hard.unwrap() <= ms(475));
        assert!(c.soft.unwrap() >= ms(20));
        let l = Limits { movetime: Some(ms(300)), ..Limits::default() };
        let c = Clock::new(&l, Color::Black, ms(50), Instant::now());
        assert_eq!(c.hard, Some(ms(250)));
        let l = Limits { btime: Some(ms(10)), ..Limits::default() };
        let c = Clock::new(&l, Color::Black, ms(50), Instant::now());
        assert_eq!(c.hard, Some(ms(1)));
        let c = Clock::new(&Limits { infinite: true, ..l }, Color::Black, ms(50), Instant::now());
        assert!(c.hard.is_none());
    }

    /// A 10+0.1 sudden-death game played at the pace the engine keeps (about three quarters
    /// of each soft budget; sometimes the whole hard one): the clock is spent early, where
    /// games against Stockfish are decided, and never runs out however long the game lasts.
    #[test]
    fn sudden_death_spends_early_and_never_flags() {
        let ms = Duration::from_millis;
        let (inc, overhead) = (ms(100), ms(10));
        let mut left = ms(10_000);
        for moves in 1..=300 {
            let l = Limits { wtime: Some(left), winc: Some(inc), ..Limits::default() };
            let c = Clock::new(&l, Color::White, overhead, Instant::now());
            let spent = if moves % 50 == 0 { c.hard.unwrap() } else { c.soft.unwrap().mul_f64(0.75) };
            assert!(spent + overhead < left, "move {moves}: {spent:?} of {left:?}");
            left = left - spent - overhead + inc;
            if moves == 30 {
                // Most of the clock is spent by the time games are decided.
                assert!(left < ms(4_500), "after 30 moves {left:?} of 10 s left");
            }
        }
        assert!(left > ms(100), "{left:?}");
    }
}
