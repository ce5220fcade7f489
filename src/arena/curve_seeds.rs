//! Several runs of one learning curve (the same match, each run's snapshots from its own
//! seed) summed up: per point, each series' cumulative wins as a mean with its 95 % interval
//! over the runs (Student's t), and the difference of two series per run and over the runs,
//! with the power of that comparison. Seed 004 reports one run per variant; with the
//! run-to-run spread of its curves that cannot tell the variants apart, so its Table 1 is
//! played over ten seeds and read here (`deepchess curves`).

use super::curve::{read_finished, Done};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One run's curve: where it was read from and its finished points.
pub struct Run {
    pub label: String,
    pub done: Vec<Done>,
}

/// Reads the curves of `dirs` (each a curve folder or its `points.tsv`), refusing runs whose
/// match settings differ: their mean would mix two protocols.
pub fn read_runs(dirs: &[PathBuf]) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    let mut first: Option<(String, String)> = None;
    for d in dirs {
        let tsv = if d.is_dir() { d.join("points.tsv") } else { d.clone() };
        if !tsv.exists() {
            return Err(format!("{}: no points.tsv (a curve's folder is what 'deepchess match --curve --curve-out DIR' writes)", d.display()));
        }
        let (header, done) = read_finished(&tsv)?;
        match &first {
            None => first = Some((d.display().to_string(), header)),
            Some((who, h)) if *h != header => {
                let mut why = String::new();
                for (a, b) in h.lines().zip(header.lines()).filter(|(a, b)| a != b) {
                    let _ = write!(why, "\n  {who}: {}\n  {}: {}", a.trim_start_matches("# match "), d.display(), b.trim_start_matches("# match "));
                }
                return Err(format!("{} was played under other match settings than {who}; runs summed up together must play the same match:{why}", d.display()));
            }
            Some(_) => {}
        }
        runs.push(Run { label: label(d), done });
    }
    Ok(runs)
}

/// A run's name in the tables: its curve folder's parent (the training run) and the folder.
fn label(d: &Path) -> String {
    let d = if d.ends_with("points.tsv") { d.parent().unwrap_or(d) } else { d };
    let parts: Vec<String> = d.components().rev().take(2).map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// Cumulative wins and test games of `series` up to and including the point at `trained`
/// training games, if the run has that point.
pub fn cumulative(done: &[Done], series: &str, trained: u64) -> Option<(u64, u64)> {
    done.iter().find(|d| d.point.series == series && d.point.trained == trained)?;
    let upto = done.iter().filter(|d| d.point.series == series && d.point.trained <= trained);
    Some(upto.fold((0, 0), |(w, g), d| (w + d.wdl.wins, g + d.wdl.games())))
}

/// Mean, sample standard deviation and the 95 % t interval's half-width of `xs` (the
/// half-width is infinite for fewer than two values).
pub fn mean_interval(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::INFINITY);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN, f64::INFINITY);
    }
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    (mean, sd, t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt())
}

/// The smallest gap a comparison of `n` runs with spread `sd` finds with 80 % power at the
/// two-sided 5 % level: `(t₀.₉₇₅ + t₀.₈₀)·sd/√n`, `n − 1` degrees of freedom.
pub fn detectable(n: usize, sd: f64) -> f64 {
    if n < 2 {
        return f64::INFINITY;
    }
    let df = (n - 1) as f64;
    (t_quantile(0.975, df) + t_quantile(0.8, df)) * sd / (n as f64).sqrt()
}

/// How many runs it takes to find a gap of `gap` with 80 % power when runs spread by `sd`;
/// `None` beyond 10,000.
pub fn runs_needed(gap: f64, sd: f64) -> Option<usize> {
    (2..=10_000).find(|&n| detectable(n, sd) <= gap.abs())
}

/// The summary as Markdown: per point each series' mean cumulative wins over the runs with its
/// 95 % interval (and `a − b` when `diff` names two series), then each run at the last point
/// every run reached, then the comparison's verdict and power.
pub fn summary(runs: &[Run], diff: Option<(&str, &str)>) -> Result<String, String> {
    let mut series: Vec<String> = Vec::new();
    let mut points: Vec<u64> = Vec::new();
    for d in runs.iter().flat_map(|r| &r.done) {
        if !series.contains(&d.point.series) {
            series.push(d.point.series.clone());
        }
        if !points.contains(&d.point.trained) {
            points.push(d.point.trained);
        }
    }
    points.sort_unstable();
    if let Some((a, b)) = diff {
        for s in [a, b] {
            if !series.iter().any(|x| x == s) {
                return Err(format!("--diff names series '{s}', which no run has (series: {})", series.join(", ")));
            }
        }
    }
    let f = |x: f64| if x.is_finite() { format!("{x:.1}") } else { "–".into() };
    let with_interval = |xs: &[f64]| {
        let (m, _, h) = mean_interval(xs);
        if h.is_finite() { format!("{} [{}, {}]", f(m), f(m - h), f(m + h)) } else { f(m) }
    };
    let mut s = format!("{} runs of one curve: {}\n\n", runs.len(), runs.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(", "));
    let _ = write!(s, "Cumulative wins after each number of training games: the mean over the runs that reached the point, with its 95 % interval (Student's t over runs).\n\n| training games | runs | test games |");
    for name in &series {
        let _ = write!(s, " {name}: wins |");
    }
    if let Some((a, b)) = diff {
        let _ = write!(s, " {a} − {b} |");
    }
    s.push_str("\n|---:|---:|---:|");
    s.push_str(&"---:|".repeat(series.len() + usize::from(diff.is_some())));
    s.push('\n');
    for &t in &points {
        let per: Vec<Vec<Option<(u64, u64)>>> = series.iter().map(|n| runs.iter().map(|r| cumulative(&r.done, n, t)).collect()).collect();
        let reached = runs.iter().enumerate().filter(|(i, _)| per.iter().any(|p| p[*i].is_some())).count();
        let games = per.iter().flatten().flatten().map(|x| x.1).max().unwrap_or(0);
        let _ = write!(s, "| {t} | {reached} | {games} |");
        for p in &per {
            let xs: Vec<f64> = p.iter().flatten().map(|x| x.0 as f64).collect();
            let _ = write!(s, " {} |", with_interval(&xs));
        }
        if let Some((a, b)) = diff {
            let _ = write!(s, " {} |", with_interval(&gaps(runs, a, b, t)));
        }
        s.push('\n');
    }
    let Some((a, b)) = diff else { return Ok(s) };
    // The comparison at the last point every run reached in both series.
    let last = points.iter().rev().copied().find(|&t| runs.iter().all(|r| cumulative(&r.done, a, t).is_some() && cumulative(&r.done, b, t).is_some()));
    let Some(t) = last else {
        s.push_str("\nNo point is reached by every run in both series yet: no comparison.\n");
        return Ok(s);
    };
    let _ = write!(s, "\nEach run after {t} training games (cumulative wins of its test games):\n\n| run | {a} | {b} | {a} − {b} |\n|---|---:|---:|---:|\n");
    for r in runs {
        let (wa, ga) = cumulative(&r.done, a, t).unwrap_or_default();
        let (wb, _) = cumulative(&r.done, b, t).unwrap_or_default();
        let _ = writeln!(s, "| {} | {wa} of {ga} | {wb} | {:+} |", r.label, wa as i64 - wb as i64);
    }
    let g = gaps(runs, a, b, t);
    let (m, sd, h) = mean_interval(&g);
    let n = g.len();
    let verdict = if !h.is_finite() {
        "one run gives no interval".to_string()
    } else if m - h > 0.0 || m + h < 0.0 {
        format!("the interval excludes 0: {} wins more", if m > 0.0 { a } else { b })
    } else {
        "the interval holds 0: neither is shown to win more".to_string()
    };
    let _ = write!(s, "\n{a} − {b} over {n} runs after {t} training games: mean {m:+.1} wins, standard deviation {} between runs, 95 % interval {} to {} ({} degrees of freedom): {verdict}.\n", f(sd), f(m - h), f(m + h), n.saturating_sub(1));
    if n >= 2 && sd.is_finite() {
        let need = match runs_needed(m, sd) {
            Some(k) => format!("about {k} runs"),
            None => "more than 10,000 runs".to_string(),
        };
        let _ = write!(
            s,
            "Power: with {n} runs and this spread, a gap of {} wins or more is found 4 times in 5 (two-sided 5 % level); a gap as large as the mean seen here ({m:+.1}) would take {need}.\n",
            f(detectable(n, sd))
        );
    }
    Ok(s)
}

/// Per run that has both series at `t`: `a`'s cumulative wins minus `b`'s.
fn gaps(runs: &[Run], a: &str, b: &str, t: u64) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| Some(cumulative(&r.done, a, t)?.0 as f64 - cumulative(&r.done, b, t)?.0 as f64))
        .collect()
}

/// Student's t distribution's quantile: the `p` point (0 < p < 1) for `df` degrees of
/// freedom, by bisection on the distribution function.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while t_cdf(hi, df) < p {
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Student's t distribution function: `1 − ½·I_{df/(df+t²)}(df/2, ½)` for `t ≥ 0`.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / (df + t * t), 0.5 * df, 0.5);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The regularised incomplete beta function `I_x(a, b)` by its continued fraction
/// (Numerical Recipes' `betai`).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..].iter().enumerate().fold(G[0], |acc, (i, g)| acc + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::curve::Point;
    use crate::arena::elo::{Pentanomial, Wdl};

    #[test]
    fn t_quantiles_match_the_printed_tables() {
        // Two-sided 5 % and one-sided 20 % points from any statistics table.
        for (df, q975, q80) in [(1.0, 12.706, 1.376), (4.0, 2.776, 0.941), (9.0, 2.262, 0.883), (29.0, 2.045, 0.854), (1e6, 1.960, 0.842)] {
            assert!((t_quantile(0.975, df) - q975).abs() < 1e-3, "t.975 at {df}: {}", t_quantile(0.975, df));
            assert!((t_quantile(0.8, df) - q80).abs() < 1e-3, "t.80 at {df}: {}", t_quantile(0.8, df));
            assert!((t_quantile(0.025, df) + q975).abs() < 1e-3);
        }
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12 && (ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn the_five_seeds_of_the_notebook_give_its_interval() {
        // docs/results.md's five seeds of EBNN − BP: −23, +1, +71, −6, −33 → +2, −49 to +53.
        let (m, sd, h) = mean_interval(&[-23.0, 1.0, 71.0, -6.0, -33.0]);
        assert!((m - 2.0).abs() < 1e-9);
        assert!((m - h + 48.7).abs() < 0.1 && (m + h - 52.7).abs() < 0.1, "{} {}", m - h, m + h);
        // Ten runs of that spread find only gaps of some tens of wins; a tiny one never.
        assert!(detectable(10, sd) > 30.0 && runs_needed(0.01, sd).is_none());
        assert!(runs_needed(detectable(10, sd), sd) == Some(10));
    }

    fn done(series: &str, trained: u64, wins: u64, losses: u64) -> Done {
        let pairs = (wins + losses) / 2;
        Done { point: Point { series: series.into(), trained, net: format!("{series}-{trained}.dcw") }, wdl: Wdl { wins, draws: 0, losses }, penta: Pentanomial([0, 0, pairs, 0, 0]), pgn_end: None }
    }

    #[test]
    fn the_summary_adds_up_each_run_and_compares_the_series() {
        let run = |label: &str, bp: [u64; 2], ebnn: [u64; 2]| Run {
            label: label.into(),
            done: vec![done("bp", 100, bp[0], 100 - bp[0]), done("ebnn", 100, ebnn[0], 100 - ebnn[0]), done("bp", 200, bp[1], 100 - bp[1]), done("ebnn", 200, ebnn[1], 100 - ebnn[1])],
        };
        let runs = vec![run("s1", [2, 4], [6, 10]), run("s2", [0, 2], [4, 8]), run("s3", [4, 6], [8, 12])];
        assert_eq!(cumulative(&runs[0].done, "bp", 200), Some((6, 200)));
        assert_eq!(cumulative(&runs[0].done, "bp", 150), None);
        let s = summary(&runs, Some(("ebnn", "bp"))).unwrap();
        // Cumulative ebnn − bp at 200: s1 16−6, s2 12−2, s3 20−10: all +10, no spread.
        assert!(s.contains("| s1 | 16 of 200 | 6 | +10 |"), "{s}");
        assert!(s.contains("mean +10.0 wins"), "{s}");
        assert!(s.contains("| 100 | 3 | 100 | 2.0 [-3.0, 7.0] | 6.0 [1.0, 11.0] | 4.0 [4.0, 4.0] |"), "{s}");
        assert!(summary(&runs, Some(("ebnn", "td"))).unwrap_err().contains("'td'"));
        // A run that has not reached 200 games leaves the comparison at 100.
        let mut short = runs;
        short[2].done.truncate(2);
        let s = summary(&short, Some(("ebnn", "bp"))).unwrap();
        assert!(s.contains("after 100 training games"), "{s}");
    }
}
