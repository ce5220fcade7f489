//! Elo statistics of a match, as fishtest computes them: the score → Elo logistic curve,
//! 95 % error bars and LOS from the pentanomial model over game pairs (each opening played
//! twice with colours swapped), and an SPRT with the usual GSPRT approximations.
//!
//! Pair scores are on the per-game scale: a pair scoring 0, ½, 1, 1½ or 2 points counts as
//! 0, ¼, ½, ¾ or 1, so the mean is the expected score of one game. Like fishtest, empty
//! cells are given a count of 0.001 ("regularised") before the mean and variance are taken,
//! so that a one-sided or tiny sample still has a finite Elo and a non-zero variance.

use crate::chess::{Color, Outcome};

/// Two-sided 95 % quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Count given to empty cells before taking moments (fishtest's `regularize`).
const REGULARIZE: f64 = 1e-3;

/// Expected score of a player `elo` points stronger.
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Elo difference that gives expected score `s` (±∞ at 1 and 0).
pub fn score_to_elo(s: f64) -> f64 {
    if s <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if s >= 1.0 {
        return f64::INFINITY;
    }
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Complementary error function (Numerical Recipes `erfcc`, relative error < 1.2e-7):
/// std has no erf.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Standard normal cumulative distribution.
pub fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Game results of one player: wins, draws, losses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Counts a finished game from `side`'s point of view.
    pub fn add(&mut self, outcome: Outcome, side: Color) {
        match outcome {
            Outcome::Draw => self.draws += 1,
            Outcome::Win(c) if c == side => self.wins += 1,
            Outcome::Win(_) => self.losses += 1,
        }
    }

    /// Points: a win 1, a draw ½.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Estimate from single games (the trinomial model), for runs without pairs.
    pub fn estimate(&self) -> Option<Estimate> {
        let cells = [(0.0, self.losses), (0.5, self.draws), (1.0, self.wins)];
        Estimate::from_cells(&cells)
    }
}

/// Counts of game pairs by the points the player scored in the pair: index 0 = 0 points
/// (two losses), 1 = ½, 2 = 1 (two draws, or a win and a loss), 3 = 1½, 4 = 2 (two wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// Adds a pair from the player's two game scores (each 0, 0.5 or 1).
    pub fn add(&mut self, first: f64, second: f64) {
        let i = ((first + second) * 2.0).round().clamp(0.0, 4.0) as usize;
        self.0[i] += 1;
    }

    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    fn cells(&self) -> [(f64, u64); 5] {
        [0, 1, 2, 3, 4].map(|i| (i as f64 / 4.0, self.0[i]))
    }

    /// Regularised mean and variance of the per-game score of one pair.
    pub fn mean_var(&self) -> Option<(f64, f64)> {
        moments(&self.cells())
    }

    /// Elo, 95 % error bars and LOS; `None` before the first complete pair.
    pub fn estimate(&self) -> Option<Estimate> {
        Estimate::from_cells(&self.cells())
    }
}

/// Regularised mean and (population) variance of a discrete distribution of counts.
fn moments(cells: &[(f64, u64)]) -> Option<(f64, f64)> {
    if cells.iter().all(|c| c.1 == 0) {
        return None;
    }
    let w: Vec<f64> = cells.iter().map(|&(_, n)| if n == 0 { REGULARIZE } else { n as f64 }).collect();
    let total: f64 = w.iter().sum();
    let mu = cells.iter().zip(&w).map(|(c, n)| c.0 * n).sum::<f64>() / total;
    let var = cells.iter().zip(&w).map(|(c, n)| (c.0 - mu).powi(2) * n).sum::<f64>() / total;
    Some((mu, var))
}

/// A match result as an Elo difference with its uncertainty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Number of observations (pairs, or games in the trinomial model).
    pub n: u64,
    /// Mean score per game (regularised).
    pub score: f64,
    pub elo: f64,
    /// 95 % confidence interval of the Elo difference.
    pub elo_lo: f64,
    pub elo_hi: f64,
    /// Likelihood of superiority: P(true score > ½).
    pub los: f64,
}

impl Estimate {
    fn from_cells(cells: &[(f64, u64)]) -> Option<Estimate> {
        let (mu, var) = moments(cells)?;
        let n: u64 = cells.iter().map(|c| c.1).sum();
        let stderr = (var / n as f64).sqrt();
        let los = if stderr > 0.0 {
            phi((mu - 0.5) / stderr)
        } else {
            0.5
        };
        Some(Estimate {
            n,
            score: mu,
            elo: score_to_elo(mu),
            elo_lo: score_to_elo(mu - Z95 * stderr),
            elo_hi: score_to_elo(mu + Z95 * stderr),
            los,
        })
    }

    /// Half the width of the 95 % interval, as `±` in tables (the interval is asymmetric).
    pub fn error_bar(&self) -> f64 {
        (self.elo_hi - self.elo_lo) / 2.0
    }
}

/// Which Elo the SPRT bounds are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtModel {
    /// Ordinary (logistic) Elo.
    Logistic,
    /// Normalized Elo (fishtest's default): Elo divided by the score's spread.
    Normalized,
}

/// A sequential probability ratio test of H0: Elo = elo0 against H1: Elo = elo1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: SprtModel,
}

/// What an SPRT says after the games so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    Continue,
    /// H0 accepted: not better than elo0.
    H0,
    /// H1 accepted: at least elo1.
    H1,
}

impl Sprt {
    /// Checks the parameters: elo0 < elo1, 0 < alpha, beta < ½.
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64, model: SprtModel) -> Result<Sprt, String> {
        if !(elo0.is_finite() && elo1.is_finite() && elo0 < elo1) {
            return Err(format!("SPRT needs elo0 < elo1 (got {elo0}, {elo1})"));
        }
        if !(alpha > 0.0 && alpha < 0.5 && beta > 0.0 && beta < 0.5) {
            return Err(format!("SPRT needs 0 < alpha, beta < 0.5 (got {alpha}, {beta})"));
        }
        Ok(Sprt { elo0, elo1, alpha, beta, model })
    }

    /// Wald's bounds (lower, upper) on the log-likelihood ratio.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// Log-likelihood ratio of the pairs so far (0 before the first pair).
    pub fn llr(&self, p: &Pentanomial) -> f64 {
        let Some((mu, var)) = p.mean_var() else { return 0.0 };
        let pairs = p.pairs() as f64;
        match self.model {
            // Normal approximation with the observed variance:
            // N/(2σ²) · ((x̄−s0)² − (x̄−s1)²) = N (s1−s0)(2x̄−s0−s1) / (2σ²).
            SprtModel::Logistic => {
                let (s0, s1) = (elo_to_score(self.elo0), elo_to_score(self.elo1));
                pairs * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)
            }
            // fishtest's LLR_normalized_alt (van den Bergh, "Normalized Elo", section 4.2):
            // per-game spread σ = √(2·var_pair), t = (x̄−½)/σ, t_i = nElo_i / (800/ln 10).
            SprtModel::Normalized => {
                let nelo_per_t = 800.0 / std::f64::consts::LN_10;
                let sigma = (2.0 * var).sqrt();
                let t = (mu - 0.5) / sigma;
                let (t0, t1) = (self.elo0 / nelo_per_t, self.elo1 / nelo_per_t);
                let games = 2.0 * pairs;
                games / 2.0 * ((1.0 + (t - t0).powi(2)) / (1.0 + (t - t1).powi(2))).ln()
            }
        }
    }

    pub fn decision(&self, llr: f64) -> SprtDecision {
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtDecision::H1
        } else if llr <= lo {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

/// A rating on a reference scale from results against several fixed levels of it (a
/// gauntlet against Stockfish's `UCI_Elo` levels, say).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatingFit {
    /// Maximum-likelihood rating (±∞ when every game was won or every game lost).
    pub rating: f64,
    /// 95 % likelihood-ratio interval (an end is ±∞ when the data do not bound it).
    pub lo: f64,
    pub hi: f64,
    pub games: u64,
}

/// Half the 95 % quantile of χ² with one degree of freedom: the likelihood-ratio interval is
/// where the log-likelihood is within this of its maximum.
const HALF_CHI2_95: f64 = 1.920_729_410_347_062;

/// How far outside the levels the search for a rating or an interval end goes.
const FIT_REACH: f64 = 4000.0;

/// Log-likelihood of rating `r`: at level L the expected score is `elo_to_score(r − L)`, and
/// a draw counts as half a win and half a loss.
fn rating_loglik(r: f64, levels: &[(f64, Wdl)]) -> f64 {
    levels
        .iter()
        .map(|&(level, wdl)| {
            let p = elo_to_score(r - level);
            let (won, lost) = (wdl.points(), wdl.games() as f64 - wdl.points());
            let term = |n: f64, q: f64| if n == 0.0 { 0.0 } else { n * q.ln() };
            term(won, p) + term(lost, 1.0 - p)
        })
        .sum()
}

/// Bisection for the `x` in `[a, b]` where the monotone `f` crosses zero (60 halvings:
/// far below a tenth of an Elo point over the reach).
fn bisect(mut a: f64, mut b: f64, f: impl Fn(f64) -> f64) -> f64 {
    let fa = f(a);
    for _ in 0..60 {
        let m = 0.5 * (a + b);
        if (f(m) > 0.0) == (fa > 0.0) {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

/// Places a player on the levels' scale: the maximum-likelihood rating of the logistic
/// model with a likelihood-ratio 95 % interval. `None` without games.
pub fn fit_rating(levels: &[(f64, Wdl)]) -> Option<RatingFit> {
    let games: u64 = levels.iter().map(|l| l.1.games()).sum();
    if games == 0 {
        return None;
    }
    let points: f64 = levels.iter().map(|l| l.1.points()).sum();
    let low = levels.iter().map(|l| l.0).fold(f64::INFINITY, f64::min) - FIT_REACH;
    let high = levels.iter().map(|l| l.0).fold(f64::NEG_INFINITY, f64::max) + FIT_REACH;
    // The likelihood is concave in r; its maximum is where the expected points equal the
    // points scored (the expected points rise with r).
    let (rating, best) = if points == 0.0 {
        (f64::NEG_INFINITY, 0.0)
    } else if points == games as f64 {
        (f64::INFINITY, 0.0)
    } else {
        let expected = |r: f64| {
            levels.iter().map(|&(level, w)| w.games() as f64 * elo_to_score(r - level)).sum::<f64>() - points
        };
        let r = bisect(low, high, expected);
        (r, rating_loglik(r, levels))
    };
    let target = best - HALF_CHI2_95;
    let above = |r: f64| rating_loglik(r, levels) - target;
    let lo = if rating == f64::NEG_INFINITY || above(low) > 0.0 {
        f64::NEG_INFINITY
    } else {
        bisect(low, rating.min(high), above)
    };
    let hi = if rating == f64::INFINITY || above(high) > 0.0 {
        f64::INFINITY
    } else {
        bisect(rating.max(low), high, above)
    };
    Some(RatingFit { rating, lo, hi, games })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_is_accurate() {
        assert!((phi(0.0) - 0.5).abs() < 1e-7);
        assert!((phi(Z95) - 0.975).abs() < 1e-7);
        assert!((phi(-1.0) - 0.158_655_253_931_457).abs() < 1e-7);
        assert!((phi(3.0) - 0.998_650_101_968_37).abs() < 1e-7);
    }

    #[test]
    fn elo_curve_round_trips() {
        for e in [-800.0, -100.0, 0.0, 35.5, 400.0] {
            assert!((score_to_elo(elo_to_score(e)) - e).abs() < 1e-9);
        }
        assert_eq!(score_to_elo(1.0), f64::INFINITY);
        assert_eq!(score_to_elo(0.0), f64::NEG_INFINITY);
    }
}

