//! One rating fit over every game of an event, as Ordo does: a Bradley–Terry (logistic) model
//! in which player i scores `1 / (1 + 10^(−(r_i − r_j)/400))` against player j, a draw counting
//! as half a win and half a loss, fitted jointly by maximum likelihood (Newton's method on the
//! concave log-likelihood). Draws as half points keep the ratings on the expected-score scale
//! that Stockfish's `UCI_Elo` and `deepchess match` use (BayesElo's draw model stretches it).
//! No white-advantage term: every opening is played twice with colours swapped.
//!
//! Anchors hold fixed ratings (Stockfish's levels at their `UCI_Elo`, or one player at 0).
//! A free player who won or lost every game has no finite maximum; it is taken out of the
//! joint fit (repeatedly, as taking one out can leave another unbeaten) and placed alone
//! against its opponents' fitted ratings, with its one finite interval end.
//!
//! Intervals: a bootstrap over the event's game pairs, 2.5 and 97.5 percentiles of each
//! player's refitted rating. Consistency: each pairing's observed points against the fit's prediction.

use crate::arena::elo::{elo_to_score, fit_rating, phi, Wdl};
use crate::chess::{Color, Outcome};
use crate::tensor::rng::Rng;

/// The slope of the logistic curve per Elo point.
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// Virtual drawn games added to every pairing played, so that a set of players who beat
/// everyone outside it still has a finite maximum: a hundredth of a game moves no rating by
/// a measurable amount.
const EPS_GAMES: f64 = 0.01;

/// The results of one pairing (player `a` against player `b`), from `a`'s side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pairing {
    pub a: usize,
    pub b: usize,
    /// Complete game pairs by `a`'s points in the pair: 0, ½, 1, 1½, 2.
    pub pairs: [u64; 5],
    /// Games whose partner game is missing, by `a`'s points: 0, ½, 1.
    pub singles: [u64; 3],
}

impl Pairing {
    pub fn games(&self) -> f64 {
        (2 * self.pairs.iter().sum::<u64>() + self.singles.iter().sum::<u64>()) as f64
    }

    /// `a`'s points.
    pub fn points(&self) -> f64 {
        let p: f64 = self.pairs.iter().enumerate().map(|(k, &n)| n as f64 * k as f64 * 0.5).sum();
        p + self.singles.iter().enumerate().map(|(k, &n)| n as f64 * k as f64 * 0.5).sum::<f64>()
    }

    /// What the bootstrap draws from: game pairs and single games.
    fn units(&self) -> u64 {
        self.pairs.iter().sum::<u64>() + self.singles.iter().sum::<u64>()
    }
}

/// Every pairing's results, grouped: a pairing is unordered, `a < b`.
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub players: usize,
    pub pairings: Vec<Pairing>,
    /// Drawn games per pairing index (for the consistency check's variance).
    pub draws: Vec<u64>,
}

fn points_of(o: Outcome, side: Color) -> f64 {
    match o {
        Outcome::Draw => 0.5,
        Outcome::Win(c) if c == side => 1.0,
        Outcome::Win(_) => 0.0,
    }
}

impl Results {
    pub fn new(players: usize) -> Results {
        Results { players, ..Results::default() }
    }

    fn index(&mut self, a: usize, b: usize) -> usize {
        match self.pairings.iter().position(|p| p.a == a && p.b == b) {
            Some(i) => i,
            None => {
                self.pairings.push(Pairing { a, b, ..Pairing::default() });
                self.draws.push(0);
                self.pairings.len() - 1
            }
        }
    }

    /// Adds a game pair (the same opening, colours swapped): `white_first` had White in the
    /// first game, `outcomes` are the two games' results; `second` is `None` when the pair's
    /// second game was never played.
    pub fn add_pair(&mut self, white_first: usize, other: usize, first: Outcome, second: Option<Outcome>) {
        let (a, b) = (white_first.min(other), white_first.max(other));
        let i = self.index(a, b);
        let a_colour_first = if a == white_first { Color::White } else { Color::Black };
        let p1 = points_of(first, a_colour_first);
        self.draws[i] += u64::from(first == Outcome::Draw);
        match second {
            Some(o) => {
                let p2 = points_of(o, a_colour_first.flip());
                self.draws[i] += u64::from(o == Outcome::Draw);
                self.pairings[i].pairs[((p1 + p2) * 2.0).round() as usize] += 1;
            }
            None => self.pairings[i].singles[(p1 * 2.0).round() as usize] += 1,
        }
    }

    /// Player `i`'s games and points.
    pub fn totals(&self, i: usize) -> (f64, f64) {
        let mut g = 0.0;
        let mut s = 0.0;
        for p in &self.pairings {
            if p.a == i {
                g += p.games();
                s += p.points();
            } else if p.b == i {
                g += p.games();
                s += p.games() - p.points();
            }
        }
        (g, s)
    }
}

/// One player's place on the scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rated {
    pub rating: f64,
    /// 95 % interval (bootstrap; for a player who won or lost everything, one end infinite).
    pub lo: f64,
    pub hi: f64,
    pub anchor: bool,
}

/// A pairing whose result strays from the fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Stray {
    pub a: usize,
    pub b: usize,
    pub games: f64,
    pub observed: f64,
    pub expected: f64,
    pub z: f64,
}

/// The fit and its checks.
#[derive(Clone, Debug)]
pub struct Fit {
    pub rated: Vec<Rated>,
    /// Pearson's χ² over pairings, its degrees of freedom and p-value.
    pub chi2: f64,
    pub dof: usize,
    pub p_value: f64,
    /// Every pairing with its z-score, largest |z| first.
    pub strays: Vec<Stray>,
    pub bootstrap: usize,
}

/// Maximum-likelihood ratings given `anchors` (`Some(rating)` fixed). Players who won or lost
/// every game among the free ones come out ±∞.
pub fn ratings(res: &Results, anchors: &[Option<f64>]) -> Vec<f64> {
    solve_ratings(res, anchors).0
}

/// [`ratings`], and for each player at ±∞ its likelihood-ratio 95 % interval against its
/// opponents' fitted ratings (one end infinite).
fn solve_ratings(res: &Results, anchors: &[Option<f64>]) -> (Vec<f64>, Vec<Option<(f64, f64)>>) {
    let n = res.players;
    let mut r: Vec<f64> = anchors.iter().map(|a| a.unwrap_or(0.0)).collect();
    let mut out: Vec<bool> = vec![false; n];
    // Take out free players with all or nothing, until none is left.
    loop {
        let mut changed = false;
        for i in 0..n {
            if anchors[i].is_some() || out[i] {
                continue;
            }
            let (mut g, mut s) = (0.0, 0.0);
            for p in &res.pairings {
                let (other, mine) = if p.a == i { (p.b, p.points()) } else if p.b == i { (p.a, p.games() - p.points()) } else { continue };
                if out[other] {
                    continue;
                }
                g += p.games();
                s += mine;
            }
            if g > 0.0 && (s == 0.0 || s == g) {
                out[i] = true;
                r[i] = if s == 0.0 { f64::NEG_INFINITY } else { f64::INFINITY };
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let free: Vec<usize> = (0..n).filter(|&i| anchors[i].is_none() && !out[i]).collect();
    let slot: Vec<Option<usize>> = (0..n).map(|i| free.iter().position(|&f| f == i)).collect();
    let m = free.len();
    let pairs: Vec<(usize, usize, f64, f64)> = res
        .pairings
        .iter()
        .filter(|p| !out[p.a] && !out[p.b])
        .map(|p| (p.a, p.b, p.games() + EPS_GAMES, p.points() + EPS_GAMES / 2.0))
        .collect();
    let loglik = |r: &[f64]| -> f64 {
        pairs
            .iter()
            .map(|&(a, b, g, s)| {
                let e = elo_to_score(r[a] - r[b]).clamp(1e-300, 1.0 - 1e-16);
                s * e.ln() + (g - s) * (1.0 - e).ln()
            })
            .sum()
    };
    if m > 0 {
        for _ in 0..100 {
            let mut grad = vec![0.0; m];
            let mut h = vec![0.0; m * m];
            for &(a, b, g, s) in &pairs {
                let e = elo_to_score(r[a] - r[b]);
                let d = K * (s - g * e);
                let w = K * K * g * e * (1.0 - e);
                if let Some(i) = slot[a] {
                    grad[i] += d;
                    h[i * m + i] += w;
                }
                if let Some(j) = slot[b] {
                    grad[j] -= d;
                    h[j * m + j] += w;
                }
                if let (Some(i), Some(j)) = (slot[a], slot[b]) {
                    h[i * m + j] -= w;
                    h[j * m + i] -= w;
                }
            }
            // Without an anchor the scale floats: a tiny ridge pins its mean (the caller
            // always gives one; this keeps the solve defined regardless).
            for i in 0..m {
                h[i * m + i] += 1e-9;
            }
            let Some(step) = solve(&mut h, &mut grad, m) else { break };
            let before = loglik(&r);
            let mut t = 1.0;
            let mut moved = 0.0f64;
            loop {
                let mut trial = r.clone();
                for (k, &i) in free.iter().enumerate() {
                    trial[i] += t * step[k];
                }
                if loglik(&trial) >= before - 1e-12 || t < 1e-6 {
                    for s in &step {
                        moved = moved.max((t * s).abs());
                    }
                    r = trial;
                    break;
                }
                t *= 0.5;
            }
            if moved < 1e-7 {
                break;
            }
        }
    }
    // The players taken out, each alone against its opponents' ratings.
    let mut bounds = vec![None; n];
    for i in 0..n {
        if out[i] {
            let levels: Vec<(f64, Wdl)> = opponents(res, i).into_iter().filter(|&(j, ..)| !out[j]).map(|(j, g, s)| (r[j], wdl(g, s))).collect();
            if let Some(f) = fit_rating(&levels) {
                r[i] = f.rating;
                bounds[i] = Some((f.lo, f.hi));
            }
        }
    }
    (r, bounds)
}

/// Player `i`'s pairings as (opponent, games, points of `i`).
fn opponents(res: &Results, i: usize) -> Vec<(usize, f64, f64)> {
    res.pairings
        .iter()
        .filter_map(|p| {
            if p.a == i {
                Some((p.b, p.games(), p.points()))
            } else if p.b == i {
                Some((p.a, p.games(), p.games() - p.points()))
            } else {
                None
            }
        })
        .collect()
}

/// Games and points as a W-D-L with the same points (draws for the half points).
fn wdl(g: f64, s: f64) -> Wdl {
    let g = g.round() as u64;
    let half = (2.0 * s).round() as u64;
    let (wins, draws) = (half / 2, half % 2);
    Wdl { wins, draws, losses: g.saturating_sub(wins + draws) }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting (`a` is m×m, row-major).
fn solve(a: &mut [f64], b: &mut [f64], m: usize) -> Option<Vec<f64>> {
    for c in 0..m {
        let p = (c..m).max_by(|&x, &y| a[x * m + c].abs().total_cmp(&a[y * m + c].abs()))?;
        if a[p * m + c].abs() < 1e-300 {
            return None;
        }
        if p != c {
            for k in 0..m {
                a.swap(p * m + k, c * m + k);
            }
            b.swap(p, c);
        }
        for r in c + 1..m {
            let f = a[r * m + c] / a[c * m + c];
            if f != 0.0 {
                for k in c..m {
                    a[r * m + k] -= f * a[c * m + k];
                }
                b[r] -= f * b[c];
            }
        }
    }
    let mut x = vec![0.0; m];
    for c in (0..m).rev() {
        let s: f64 = (c + 1..m).map(|k| a[c * m + k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c * m + c];
    }
    Some(x)
}

/// A bootstrap replicate: as many game pairs (and unpaired games) as the event has, drawn with
/// replacement from all of them. Drawn from the whole event, not within each pairing: a round
/// robin gives most pairings a single pair, which a draw within the pairing would only repeat.
fn resample(res: &Results, rng: &mut Rng) -> Results {
    // Every unit as (pairing, false = a pair / true = a single game, its points class).
    let mut units: Vec<(usize, bool, usize)> = Vec::new();
    for (k, p) in res.pairings.iter().enumerate() {
        for (c, &n) in p.pairs.iter().enumerate() {
            units.extend(std::iter::repeat_n((k, false, c), n as usize));
        }
        for (c, &n) in p.singles.iter().enumerate() {
            units.extend(std::iter::repeat_n((k, true, c), n as usize));
        }
    }
    let mut out = res.clone();
    for q in &mut out.pairings {
        q.pairs = [0; 5];
        q.singles = [0; 3];
    }
    for _ in 0..units.len() {
        let (k, single, c) = units[rng.below(units.len() as u64) as usize];
        if single {
            out.pairings[k].singles[c] += 1;
        } else {
            out.pairings[k].pairs[c] += 1;
        }
    }
    // A pairing drawn no game is dropped (its players may still be linked by others); the
    // draw counts serve the consistency check of the original results only.
    out.pairings.retain(|p| p.units() > 0);
    out.draws.clear();
    out
}

/// The 100·q-th percentile of sorted values (nearest rank).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Fits the ratings, their 95 % bootstrap intervals (`bootstrap` replicates, seeded) and the
/// consistency check.
pub fn fit(res: &Results, anchors: &[Option<f64>], bootstrap: usize, seed: u64) -> Fit {
    let n = res.players;
    let (r, bounds) = solve_ratings(res, anchors);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(bootstrap); n];
    let mut rng = Rng::new(seed);
    for _ in 0..bootstrap {
        let b = ratings(&resample(res, &mut rng), anchors);
        for i in 0..n {
            samples[i].push(b[i]);
        }
    }
    let rated = (0..n)
        .map(|i| {
            let anchor = anchors[i].is_some();
            let (lo, hi) = if anchor || bootstrap == 0 {
                (r[i], r[i])
            } else {
                let s = &mut samples[i];
                s.sort_by(f64::total_cmp);
                (percentile(s, 0.025), percentile(s, 0.975))
            };
            // A player at ±∞: its likelihood-ratio interval, one end infinite.
            let (lo, hi) = bounds[i].unwrap_or((lo, hi));
            Rated { rating: r[i], lo, hi, anchor }
        })
        .collect();
    let mut strays = Vec::new();
    let mut chi2 = 0.0;
    let mut cells = 0usize;
    for (k, p) in res.pairings.iter().enumerate() {
        let g = p.games();
        if g == 0.0 || !r[p.a].is_finite() || !r[p.b].is_finite() {
            continue;
        }
        let e = elo_to_score(r[p.a] - r[p.b]);
        // The draw share as observed, but no more than a score of e allows.
        let d = (res.draws[k] as f64 / g).min(2.0 * e.min(1.0 - e));
        let var = (e * (1.0 - e) - d / 4.0).max(1e-6);
        let z = (p.points() - g * e) / (g * var).sqrt();
        chi2 += z * z;
        cells += 1;
        strays.push(Stray { a: p.a, b: p.b, games: g, observed: p.points(), expected: g * e, z });
    }
    strays.sort_by(|x, y| y.z.abs().total_cmp(&x.z.abs()));
    let free = (0..n).filter(|&i| anchors[i].is_none() && r[i].is_finite()).count();
    let dof = cells.saturating_sub(free);
    let p_value = if dof == 0 { 1.0 } else { chi2_upper(chi2, dof as f64) };
    Fit { rated, chi2, dof, p_value, strays, bootstrap }
}

/// P(χ²_k ≥ x) by the Wilson–Hilferty cube-root approximation (good to a few 1e-3 for k ≥ 3).
fn chi2_upper(x: f64, k: f64) -> f64 {
    let h = 2.0 / (9.0 * k);
    let z = ((x / k).cbrt() - (1.0 - h)) / h.sqrt();
    1.0 - phi(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays `pairs` game pairs between every two players of `truth` (draw share `draw`),
    /// with the results drawn from the model itself.
    fn simulate(truth: &[f64], pairs: usize, draw: f64, seed: u64) -> Results {
        let mut rng = Rng::new(seed);
        let mut res = Results::new(truth.len());
        let game = |a: usize, b: usize, rng: &mut Rng| {
            // White is `a`; the model's score for White split into win and draw.
            let e = elo_to_score(truth[a] - truth[b]);
            let d = draw.min(2.0 * e.min(1.0 - e));
            let u = rng.next_f64();
            if u < e - d / 2.0 {
                Outcome::Win(Color::White)
            } else if u < e + d / 2.0 {
                Outcome::Draw
            } else {
                Outcome::Win(Color::Black)
            }
        };
        for a in 0..truth.len() {
            for b in a + 1..truth.len() {
                for _ in 0..pairs {
                    // The second game of the pair has b White.
                    let (g1, g2) = (game(a, b, &mut rng), game(b, a, &mut rng));
                    res.add_pair(a, b, g1, Some(g2));
                }
            }
        }
        res
    }

    #[test]
    fn known_ratings_are_recovered() {
        let truth = [0.0, 150.0, -200.0, 420.0, -600.0, 60.0];
        let res = simulate(&truth, 400, 0.3, 7);
        let mut anchors = vec![None; truth.len()];
        anchors[0] = Some(0.0);
        let r = ratings(&res, &anchors);
        for (i, (&t, &f)) in truth.iter().zip(&r).enumerate() {
            assert!((t - f).abs() < 25.0, "player {i}: true {t}, fitted {f:.1}");
        }
        assert_eq!(r[0], 0.0);
    }

    #[test]
    fn intervals_cover_the_truth_and_anchors_hold() {
        let truth = [1500.0, 1800.0, 1650.0, 1200.0, 1950.0];
        let mut anchors = vec![None; truth.len()];
        anchors[0] = Some(1500.0);
        anchors[1] = Some(1800.0);
        let (mut covered, mut total) = (0, 0);
        for seed in 0..8 {
            let res = simulate(&truth, 30, 0.2, 100 + seed);
            let f = fit(&res, &anchors, 200, seed);
            assert_eq!((f.rated[0].rating, f.rated[1].rating), (1500.0, 1800.0));
            assert!(f.rated[0].anchor && !f.rated[2].anchor);
            for (i, &t) in truth.iter().enumerate().skip(2) {
                let q = f.rated[i];
                assert!(q.lo <= q.rating && q.rating <= q.hi, "{q:?}");
                assert!(q.hi - q.lo > 20.0 && q.hi - q.lo < 400.0, "{q:?}");
                covered += usize::from(q.lo <= t && t <= q.hi);
                total += 1;
            }
            // Data from the model itself: no pairing strays far.
            assert!(f.p_value > 0.001, "p = {}", f.p_value);
        }
        assert!(covered as f64 >= 0.8 * total as f64, "{covered} of {total} intervals cover the truth");
    }

    #[test]
    fn a_round_robin_of_single_pairs_has_real_intervals() {
        let truth = [0.0, 80.0, -120.0, 200.0, -40.0, 150.0, -250.0, 30.0, 100.0, -60.0];
        let res = simulate(&truth, 1, 0.3, 5);
        let mut anchors = vec![None; truth.len()];
        anchors[0] = Some(0.0);
        let f = fit(&res, &anchors, 300, 2);
        for q in &f.rated[1..] {
            if q.rating.is_finite() {
                assert!(q.hi - q.lo > 100.0, "18 games each leave a wide interval: {q:?}");
                assert!(q.lo <= q.rating && q.rating <= q.hi, "{q:?}");
            }
        }
    }

    #[test]
    fn a_player_who_lost_everything_is_below_with_one_finite_end() {
        let mut res = simulate(&[0.0, 100.0, 200.0], 20, 0.2, 3);
        let mut big = Results::new(4);
        big.pairings = res.pairings.clone();
        big.draws = res.draws.clone();
        res = big;
        for other in 0..3 {
            for _ in 0..10 {
                res.add_pair(3, other, Outcome::Win(Color::Black), Some(Outcome::Win(Color::White)));
            }
        }
        let f = fit(&res, &[Some(0.0), None, None, None], 100, 1);
        let q = f.rated[3];
        assert_eq!(q.rating, f64::NEG_INFINITY);
        assert_eq!(q.lo, f64::NEG_INFINITY);
        assert!(q.hi.is_finite() && q.hi < -100.0, "{q:?}");
        assert!(f.rated[1].rating.is_finite() && f.rated[2].rating.is_finite());
    }

    #[test]
    fn a_cycle_no_rating_explains_is_flagged() {
        // 1 beats 2, 2 beats 3, 3 beats 1, each 3 games of 4; 0 (the anchor) draws everyone.
        let mut res = Results::new(4);
        let w = Outcome::Win(Color::White);
        let b = Outcome::Win(Color::Black);
        for (x, y) in [(1, 2), (2, 3), (3, 1)] {
            for _ in 0..20 {
                res.add_pair(x, y, w, Some(b)); // x wins both
                res.add_pair(x, y, w, Some(w)); // one each
            }
        }
        for x in 1..4 {
            for _ in 0..20 {
                res.add_pair(0, x, Outcome::Draw, Some(Outcome::Draw));
            }
        }
        let f = fit(&res, &[Some(0.0), None, None, None], 0, 1);
        for r in &f.rated {
            assert!(r.rating.abs() < 1.0, "the cycle cancels out: {r:?}");
        }
        let cycle: Vec<&Stray> = f.strays.iter().filter(|x| x.a != 0).collect();
        assert_eq!(cycle.len(), 3);
        for x in &cycle {
            assert!(x.z.abs() > 4.0, "{x:?}");
        }
        assert!(f.strays[0].z.abs() >= f.strays[5].z.abs(), "strays come largest first");
        assert!(f.p_value < 1e-6, "p = {}", f.p_value);
    }

    #[test]
    fn pairs_and_singles_count_from_the_right_side() {
        let mut res = Results::new(2);
        // 1 had White and won, then lost with Black: 1 of 2 each.
        res.add_pair(1, 0, Outcome::Win(Color::White), Some(Outcome::Win(Color::White)));
        res.add_pair(0, 1, Outcome::Draw, None);
        let p = &res.pairings[0];
        assert_eq!((p.a, p.b), (0, 1));
        assert_eq!(p.pairs, [0, 0, 1, 0, 0]);
        assert_eq!(p.singles, [0, 1, 0]);
        assert_eq!((p.games(), p.points()), (3.0, 1.5));
        assert_eq!(res.totals(1), (3.0, 1.5));
        assert_eq!(res.draws[0], 1);
    }
}
