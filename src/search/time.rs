//! Search limits (UCI `go` parameters) and time management.

use crate::chess::Color;
use std::time::{Duration, Instant};

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
}

impl Limits {
    pub fn depth(d: u32) -> Limits {
        Limits { depth: Some(d), ..Limits::default() }
    }

    /// Whether the search only ends on `stop` (so `bestmove` must wait for it).
    pub fn waits_for_stop(&self) -> bool {
        self.infinite
    }
}

/// Deadlines derived from the limits: a soft one (do not start another iteration) and a
/// hard one (abort the search now).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub start: Instant,
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
}

/// Default number of moves to plan for when `movestogo` is absent (sudden death). Games
/// against Stockfish are decided soon after the opening, and planning for more moves left
/// clock unused at the end of games (docs/results.md).
const MOVES_TO_GO: u32 = 24;

impl Clock {
    pub fn new(limits: &Limits, side: Color, overhead: Duration, start: Instant) -> Clock {
        let mut soft = None;
        let mut hard = None;
        if let Some(mt) = limits.movetime {
            let t = mt.saturating_sub(overhead).max(Duration::from_millis(1));
            soft = Some(t);
            hard = Some(t);
        }
        let (time, inc) = match side {
            Color::White => (limits.wtime, limits.winc),
            Color::Black => (limits.btime, limits.binc),
        };
        if let Some(time) = time {
            let inc = inc.unwrap_or_default();
            let mtg = limits.movestogo.unwrap_or(MOVES_TO_GO).clamp(1, MOVES_TO_GO);
            // Never plan past what is left after the overhead, keeping a small reserve.
            let left = time.saturating_sub(overhead);
            let cap = left.mul_f64(if mtg == 1 { 0.9 } else { 0.5 });
            let base = left / mtg + inc;
            let s = base.min(cap).max(Duration::from_millis(1));
            let h = (base * 3).min(cap).max(s);
            soft = Some(soft.map_or(s, |x: Duration| x.min(s)));
            hard = Some(hard.map_or(h, |x: Duration| x.min(h)));
        }
        if limits.infinite {
            soft = None;
            hard = None;
        }
        Clock { start, soft, hard }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether a new iteration is worth starting (it typically takes about twice the last;
    /// one that overruns is cut by the hard deadline and its best move so far still counts).
    pub fn may_start_iteration(&self) -> bool {
        match self.soft {
            Some(s) => self.elapsed() < s.mul_f64(0.6),
            None => true,
        }
    }

    pub fn hard_expired(&self) -> bool {
        matches!(self.hard, Some(h) if self.elapsed() >= h)
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
