//! A time-control curve read as a line: match results at several equal clocks (each an Elo
//! with its 95 % interval) fitted as Elo against the logarithm of the clock, and the clock
//! where the line reaches a given Elo (0: where the slower, stronger-per-node player draws
//! level), with its interval. Paper 000's Table 2 makes a claim at one clock; ours measures
//! several shorter ones, so where the two meet is read off this line (`deepchess
//! clock-fit`).
//!
//! The model: Elo(T) = m + b·(log2 T − x̄), weighted least squares with each point's weight
//! 1/σ² (σ from its interval as a normal error), x̄ the weighted mean of log2 T, so the
//! level m and the slope b (Elo per doubling of the clock) are independent estimates. The
//! interval of the clock where the line crosses an Elo is Fieller's (the ratio of two
//! normal estimates): bounded only when the slope is distinguished from 0.

use super::elo::Z95;
use super::match_runner::Limit;

/// One match: its clock in seconds a side and its Elo with a standard error.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockPoint {
    pub seconds: f64,
    pub elo: f64,
    pub sigma: f64,
}

/// Seconds a side over a game of `MOVES` moves: the base time and that many increments.
pub const MOVES: f64 = 60.0;

/// `BASE+INC` or `BASE` (seconds, as a match's `tc=` takes them) as seconds a side over a
/// game of [`MOVES`] moves.
pub fn clock_seconds(tc: &str) -> Result<f64, String> {
    match Limit::parse("tc", tc) {
        Some(Ok(Limit::Clock { base, inc })) => Ok(base.as_secs_f64() + MOVES * inc.as_secs_f64()),
        Some(Err(e)) => Err(format!("clock {e}")),
        _ => Err(format!("clock '{tc}': wants SECONDS or SECONDS+INCREMENT")),
    }
}

/// The fitted line.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockFit {
    /// The weighted mean of log2 seconds, where level and slope are independent.
    pub center: f64,
    /// Elo at the center and its standard error.
    pub level: f64,
    pub level_se: f64,
    /// Elo per doubling of the clock and its standard error.
    pub slope: f64,
    pub slope_se: f64,
    /// Σ ((Elo − fit)/σ)² over the points, and its degrees of freedom (points − 2).
    pub chi2: f64,
    pub dof: usize,
    /// The range of the clocks measured, seconds.
    pub lo_seconds: f64,
    pub hi_seconds: f64,
}

/// Where the line reaches an Elo: the clock and its 95 % interval, or why it has none.
#[derive(Clone, Debug, PartialEq)]
pub enum Crossing {
    /// Estimate and 95 % interval, seconds a side.
    Bounded { at: f64, lo: f64, hi: f64 },
    /// The slope is not distinguished from 0 at 95 %: the interval is unbounded. `at` is the
    /// line's point estimate (`None` for a slope of exactly 0).
    Unbounded { at: Option<f64> },
}

/// Fits the line; `None` with fewer than two distinct clocks or a point without a positive
/// finite error.
pub fn fit(points: &[ClockPoint]) -> Option<ClockFit> {
    if points.iter().any(|p| !(p.sigma > 0.0 && p.sigma.is_finite() && p.elo.is_finite() && p.seconds > 0.0 && p.seconds.is_finite())) {
        return None;
    }
    let w: Vec<f64> = points.iter().map(|p| 1.0 / (p.sigma * p.sigma)).collect();
    let x: Vec<f64> = points.iter().map(|p| p.seconds.log2()).collect();
    let sw: f64 = w.iter().sum();
    let center = x.iter().zip(&w).map(|(x, w)| x * w).sum::<f64>() / sw;
    let sxx: f64 = x.iter().zip(&w).map(|(x, w)| w * (x - center).powi(2)).sum();
    if !(sxx > 1e-12) {
        return None;
    }
    let level = points.iter().zip(&w).map(|(p, w)| w * p.elo).sum::<f64>() / sw;
    let slope = points.iter().zip(&x).zip(&w).map(|((p, x), w)| w * (x - center) * p.elo).sum::<f64>() / sxx;
    let chi2 = points.iter().zip(&x).zip(&w).map(|((p, x), w)| w * (p.elo - level - slope * (x - center)).powi(2)).sum();
    let secs = points.iter().map(|p| p.seconds);
    Some(ClockFit {
        center,
        level,
        level_se: (1.0 / sw).sqrt(),
        slope,
        slope_se: (1.0 / sxx).sqrt(),
        chi2,
        dof: points.len() - 2,
        lo_seconds: secs.clone().fold(f64::INFINITY, f64::min),
        hi_seconds: secs.fold(0.0, f64::max),
    })
}

impl ClockFit {
    /// The line's Elo at `seconds` and its 95 % interval.
    pub fn elo_at(&self, seconds: f64) -> (f64, f64, f64) {
        let d = seconds.log2() - self.center;
        let e = self.level + self.slope * d;
        let se = (self.level_se.powi(2) + (d * self.slope_se).powi(2)).sqrt();
        (e, e - Z95 * se, e + Z95 * se)
    }

    /// The clock where the line reaches `elo`, with Fieller's 95 % interval: the clocks T
    /// whose line value is within 1.96 of its own standard error of `elo`.
    pub fn crossing(&self, elo: f64) -> Crossing {
        let (m, b) = (self.level - elo, self.slope);
        let (vm, vb) = (self.level_se.powi(2), self.slope_se.powi(2));
        let z2 = Z95 * Z95;
        let to_secs = |d: f64| (self.center + d).exp2();
        let at = (b != 0.0).then(|| to_secs(-m / b));
        // (b² − z²·vb)·d² + 2·m·b·d + (m² − z²·vm) ≤ 0
        let a = b * b - z2 * vb;
        if a <= 0.0 {
            return Crossing::Unbounded { at };
        }
        let disc = (m * b).powi(2) - a * (m * m - z2 * vm);
        let root = disc.max(0.0).sqrt();
        let (d1, d2) = ((-m * b - root) / a, (-m * b + root) / a);
        Crossing::Bounded { at: at.expect("a > 0 means b ≠ 0"), lo: to_secs(d1), hi: to_secs(d2) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(seconds: f64, elo: f64, sigma: f64) -> ClockPoint {
        ClockPoint { seconds, elo, sigma }
    }

    #[test]
    fn an_exact_line_is_recovered_and_crosses_where_it_should() {
        // Elo = −120 + 30 per doubling from 4 s: 0 at 4·2⁴ = 64 s.
        let pts: Vec<ClockPoint> = [4.0, 8.0, 16.0, 32.0].iter().map(|&s: &f64| pt(s, -120.0 + 30.0 * (s / 4.0).log2(), 10.0)).collect();
        let f = fit(&pts).unwrap();
        assert!((f.slope - 30.0).abs() < 1e-9 && f.chi2 < 1e-9 && f.dof == 2);
        match f.crossing(0.0) {
            Crossing::Bounded { at, lo, hi } => {
                assert!((at - 64.0).abs() < 1e-6, "{at}");
                assert!(lo < at && at < hi && lo > 32.0, "{lo} {hi}");
            }
            c => panic!("{c:?}"),
        }
        let (e, lo, hi) = f.elo_at(64.0);
        assert!(e.abs() < 1e-9 && lo < 0.0 && hi > 0.0);
    }

    #[test]
    fn a_slope_within_its_noise_has_no_bounded_crossing() {
        let f = fit(&[pt(3.0, -100.0, 20.0), pt(12.0, -95.0, 20.0), pt(48.0, -102.0, 20.0)]).unwrap();
        assert!(matches!(f.crossing(0.0), Crossing::Unbounded { .. }), "{:?}", f.crossing(0.0));
    }

    #[test]
    fn weights_follow_the_errors() {
        // A precise point pulls the level; an imprecise one barely moves it.
        let f = fit(&[pt(4.0, -100.0, 1.0), pt(16.0, 0.0, 1000.0)]).unwrap();
        let (e, _, _) = f.elo_at(4.0);
        assert!((e + 100.0).abs() < 1e-6, "{e}");
    }

    #[test]
    fn clocks_parse_and_bad_ones_are_refused() {
        assert_eq!(clock_seconds("2+0.02").unwrap(), 2.0 + 60.0 * 0.02);
        assert_eq!(clock_seconds("1800").unwrap(), 1800.0);
        for bad in ["", "x+1", "1+y", "-1+0", "0+0", "inf", "NaN+0"] {
            assert!(clock_seconds(bad).is_err(), "{bad}");
        }
        assert!(fit(&[pt(4.0, 0.0, 1.0)]).is_none());
        assert!(fit(&[pt(4.0, 0.0, 1.0), pt(4.0, 10.0, 1.0)]).is_none());
        assert!(fit(&[pt(4.0, 0.0, 0.0), pt(8.0, 10.0, 1.0)]).is_none());
    }
}
