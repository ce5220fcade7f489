//! Elo arithmetic against hand-computed cases (worked by hand below; the decimals were
//! checked once with python's math module, which these tests do not need).

mod common;

use deepchess::arena::elo::{elo_to_score, score_to_elo, Pentanomial, Sprt, SprtDecision, SprtModel, Wdl};

fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} vs {b}");
}

#[test]
fn elo_of_known_scores() {
    // 10^(1/4) ≈ 1.778: a 100 Elo edge scores 1/(1+10^-0.25) = 0.640065.
    close(elo_to_score(100.0), 0.640_065, 1e-6);
    // 3:1 odds are 400·log10(3) = 190.85 Elo.
    close(score_to_elo(0.75), 190.848_501_9, 1e-6);
    close(score_to_elo(0.5), 0.0, 1e-12);
    close(score_to_elo(0.25), -190.848_501_9, 1e-6);
}

#[test]
fn pentanomial_estimate_by_hand() {
    // 50 pairs: 2 × 0, 10 × ½, 20 × 1, 12 × 1½, 6 × 2 points.
    // Per-game scale x = 0, ¼, ½, ¾, 1:
    //   mean  = (10·¼ + 20·½ + 12·¾ + 6·1)/50 = 27.5/50 = 0.55
    //   E[x²] = (10/16 + 20/4 + 12·9/16 + 6)/50 = 18.375/50 = 0.3675
    //   var   = 0.3675 − 0.55² = 0.065;  stderr = √(0.065/50) = 0.036056
    //   Elo   = −400·log10(1/0.55 − 1) = 34.860
    //   95 %: score 0.55 ∓ 1.959964·0.036056 = [0.479332, 0.620668] → Elo [−14.369, 85.536]
    //   LOS   = Φ(0.05/0.036056) = Φ(1.38675) = 0.917241
    let p = Pentanomial([2, 10, 20, 12, 6]);
    assert_eq!(p.pairs(), 50);
    let (mu, var) = p.mean_var().unwrap();
    close(mu, 0.55, 1e-12);
    close(var, 0.065, 1e-12);
    let e = p.estimate().unwrap();
    close(e.elo, 34.860_070, 1e-5);
    close(e.elo_lo, -14.369_442, 1e-5);
    close(e.elo_hi, 85.535_585, 1e-5);
    close(e.error_bar(), (85.535_585 + 14.369_442) / 2.0, 1e-5);
    close(e.los, 0.917_241, 1e-6);
}

#[test]
fn trinomial_estimate_by_hand() {
    // 40 wins, 31 draws, 29 losses: score 55.5/100 = 0.555,
    // var = 0.40·0.445² + 0.31·0.055² + 0.29·0.555² = 0.169475, stderr = 0.041167.
    let w = Wdl { wins: 40, draws: 31, losses: 29 };
    assert_eq!(w.games(), 100);
    close(w.points(), 55.5, 1e-12);
    let e = w.estimate().unwrap();
    close(e.score, 0.555, 1e-12);
    close(e.elo, 38.373_189, 1e-5);
    close(e.elo_lo, -17.864_540, 1e-5);
    close(e.elo_hi, 96.707_094, 1e-5);
    close(e.los, 0.909_227, 1e-6);
}

#[test]
fn empty_cells_are_regularised_like_fishtest() {
    // [0, 3, 4, 2, 1]: the empty cell counts 0.001, so the total weight is 10.001 and
    // mean = (3·¼ + 4·½ + 2·¾ + 1)/10.001 = 5.25/10.001 = 0.524948.
    let e = Pentanomial([0, 3, 4, 2, 1]).estimate().unwrap();
    close(e.score, 5.25 / 10.001, 1e-12);
    close(e.elo, 17.349_709, 1e-5);
    close(e.elo_lo, -85.972_709, 1e-5);
    close(e.elo_hi, 123.932_453, 1e-5);
    // All pairs won: finite Elo (score 2.9975/3.0) but an unbounded upper limit.
    let all = Pentanomial([0, 0, 0, 0, 3]).estimate().unwrap();
    close(all.elo, 1_231.759_336, 1e-4);
    assert_eq!(all.elo_hi, f64::INFINITY);
    assert!(Pentanomial::default().estimate().is_none());
    assert!(Wdl::default().estimate().is_none());
}

#[test]
fn pairs_are_added_by_points() {
    let mut p = Pentanomial::default();
    p.add(1.0, 0.0); // win + loss = 1 point
    p.add(0.5, 1.0); // 1½
    p.add(0.0, 0.0);
    p.add(1.0, 1.0);
    p.add(0.5, 0.0);
    assert_eq!(p.0, [1, 1, 1, 1, 1]);
}

#[test]
fn sprt_llr_by_hand() {
    let lo = Sprt::new(0.0, 5.0, 0.05, 0.05, SprtModel::Logistic).unwrap();
    // Wald's bounds: ln(0.05/0.95) = −2.944439, ln(0.95/0.05) = +2.944439.
    let (a, b) = lo.bounds();
    close(a, -2.944_439, 1e-6);
    close(b, 2.944_439, 1e-6);
    // Logistic: N(s1−s0)(2x̄−s0−s1)/(2σ²) with s0 = 0.5, s1 = L(5) = 0.507195,
    // x̄ = 0.55, σ² = 0.065, N = 50 → 50·0.007195·0.092805/0.13 = 0.256823.
    let p = Pentanomial([2, 10, 20, 12, 6]);
    close(lo.llr(&p), 0.256_823, 1e-5);
    // Normalized: σ = √(2·0.065) = 0.360555, t = 0.05/σ = 0.138675, t1 = 5/347.4356;
    // LLR = (100/2)·ln((1+t²)/(1+(t−t1)²)) = 0.185990.
    let nz = Sprt::new(0.0, 5.0, 0.05, 0.05, SprtModel::Normalized).unwrap();
    close(nz.llr(&p), 0.185_990, 1e-5);
    assert_eq!(lo.decision(lo.llr(&p)), SprtDecision::Continue);
    assert_eq!(lo.llr(&Pentanomial::default()), 0.0);
}

#[test]
fn sprt_stops_both_ways() {
    let lo = Sprt::new(0.0, 5.0, 0.05, 0.05, SprtModel::Logistic).unwrap();
    let nz = Sprt::new(0.0, 5.0, 0.05, 0.05, SprtModel::Normalized).unwrap();
    // The same distribution ×5 multiplies the LLR by 5 (1.151751 → 5.758757; 0.598597 → 2.992986).
    let good = Pentanomial([5, 25, 50, 125, 45]);
    close(lo.llr(&good), 5.758_757, 1e-5);
    close(nz.llr(&good), 2.992_986, 1e-5);
    assert_eq!(lo.decision(lo.llr(&good)), SprtDecision::H1);
    assert_eq!(nz.decision(nz.llr(&good)), SprtDecision::H1);
    let bad = Pentanomial([45, 125, 50, 25, 5]);
    close(lo.llr(&bad), -5.993_645, 1e-5);
    assert_eq!(lo.decision(lo.llr(&bad)), SprtDecision::H0);
}

#[test]
fn sprt_rejects_bad_parameters() {
    assert!(Sprt::new(5.0, 0.0, 0.05, 0.05, SprtModel::Logistic).is_err());
    assert!(Sprt::new(0.0, 5.0, 0.0, 0.05, SprtModel::Logistic).is_err());
    assert!(Sprt::new(0.0, 5.0, 0.05, 0.7, SprtModel::Normalized).is_err());
    assert!(Sprt::new(f64::NAN, 5.0, 0.05, 0.05, SprtModel::Normalized).is_err());
}

fn wdl(wins: u64, draws: u64, losses: u64) -> Wdl {
    Wdl { wins, draws, losses }
}

#[test]
fn rating_fit_by_hand() {
    use deepchess::arena::elo::fit_rating;
    // One level: the maximum is where the expected score equals the score, so 75 % at
    // level 2000 puts the player 400·log10(3) = 190.85 above it.
    let f = fit_rating(&[(2000.0, wdl(60, 0, 20))]).unwrap();
    close(f.rating, 2190.848_502, 1e-3);
    assert_eq!(f.games, 80);
    // Even score at two levels 200 apart: the midpoint, with a symmetric interval.
    let f = fit_rating(&[(1900.0, wdl(30, 20, 30)), (2100.0, wdl(30, 20, 30))]).unwrap();
    close(f.rating, 2000.0, 1e-6);
    close(f.rating - f.lo, f.hi - f.rating, 1e-6);
    // The interval ends lie 1.92 log-likelihood units below the maximum. One level,
    // n = 100 games, k = 50 points: ll(r) = 50·ln p + 50·ln(1 − p), ll(max) = 100·ln ½;
    // 50·ln(4p(1 − p)) = −1.920729 → 4p(1 − p) = 0.962314 → p = 0.402936 or 0.597064 →
    // 400·log10(p/(1 − p)) = ±68.31 (in closed form, no search).
    let f = fit_rating(&[(1500.0, wdl(40, 20, 40))]).unwrap();
    close(f.rating, 1500.0, 1e-6);
    let p: f64 = 0.5 + 0.5 * (1.0f64 - (-1.920_729_410_347_062f64 / 50.0).exp()).sqrt();
    let half = 400.0 * (p / (1.0 - p)).log10();
    close(half, 68.31, 0.01);
    close(f.hi - f.rating, half, 1e-3);
    close(f.rating - f.lo, half, 1e-3);
    // More games, a narrower interval.
    let g = fit_rating(&[(1500.0, wdl(160, 80, 160))]).unwrap();
    assert!(g.hi - g.lo < 0.6 * (f.hi - f.lo));
}

#[test]
fn rating_fit_matches_the_python_aid_and_handles_one_sided_results() {
    use deepchess::arena::elo::fit_rating;
    // docs/analysis/gauntlet_fit.py (a grid search, 0.1 steps) says about 1905, 1858–1951.
    let f = fit_rating(&[(1900.0, wdl(46, 8, 26)), (2000.0, wdl(18, 7, 55)), (2100.0, wdl(13, 10, 57))]).unwrap();
    assert_eq!(f.rating.round(), 1905.0, "{f:?}");
    assert_eq!((f.lo.round(), f.hi.round()), (1858.0, 1951.0), "{f:?}");
    // All won: no upper bound, but a lower one; all lost: the mirror image.
    let f = fit_rating(&[(1350.0, wdl(20, 0, 0))]).unwrap();
    assert_eq!(f.rating, f64::INFINITY);
    assert_eq!(f.hi, f64::INFINITY);
    assert!(f.lo.is_finite() && f.lo > 1350.0, "{f:?}");
    let g = fit_rating(&[(1350.0, wdl(0, 0, 20))]).unwrap();
    assert_eq!((g.rating, g.lo), (f64::NEG_INFINITY, f64::NEG_INFINITY));
    close(1350.0 - g.hi, f.lo - 1350.0, 1e-6);
    assert!(fit_rating(&[]).is_none());
    assert!(fit_rating(&[(2000.0, wdl(0, 0, 0))]).is_none());
}

/// The command counts one player's games in the PGN files `deepchess match` writes, whichever
/// colour it had, and refuses files or specs it cannot use.
#[test]
fn gauntlet_fit_command_reads_match_pgns() {
    use std::process::Command;
    let dir = common::TempDir::new("gauntlet-fit");
    let pgn = dir.join("g.pgn");
    let game = |white: &str, black: &str, result: &str| {
        format!("[Event \"t\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{result}\"]\n\n1. e4 e5 {result}\n\n")
    };
    let text = [
        game("dc", "sf-2000", "1-0"),
        game("sf-2000", "dc", "1-0"),
        game("sf-2000", "dc", "0-1"),
        game("dc", "sf-2000", "1/2-1/2"),
        game("dc", "sf-2000", "*"),
        game("a", "b", "1-0"),
    ]
    .concat();
    std::fs::write(&pgn, text).unwrap();
    let bin = common::exe();
    let spec = format!("2000:{}", pgn.display());
    let o = Command::new(bin).args(["gauntlet-fit", "--player", "dc", &spec, "1900:3-0-1"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("2-1-1"), "{out}");
    assert!(out.contains("(8 games;"), "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 unfinished"));
    // The same counts given by hand fit to the same rating.
    let by_hand = Command::new(bin).args(["gauntlet-fit", "--player", "dc", "2000:2-1-1", "1900:3-0-1"]).output().unwrap();
    let last = |s: &[u8]| String::from_utf8_lossy(s).lines().last().unwrap_or("").to_string();
    assert_eq!(last(&o.stdout), last(&by_hand.stdout));
    // Unknown player: an error naming the players that are there.
    let o = Command::new(bin).args(["gauntlet-fit", "--player", "nobody", &spec]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sf-2000"));
    for bad in [&["gauntlet-fit"][..], &["gauntlet-fit", "x:1-2-3"], &["gauntlet-fit", "2000:1-2"], &["gauntlet-fit", "--bogus"]] {
        let o = Command::new(bin).args(bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    let o = Command::new(bin).args(["gauntlet-fit", "2000:/nonexistent/x.pgn"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/x.pgn"));
}

/// `clock-fit` reads a line through match results given by hand or as match PGNs (scored by
/// game pairs, as the match scores them), finds where it reaches level, and refuses files it
/// cannot pair.
#[test]
fn clock_fit_command_fits_the_line_and_reads_match_pgns() {
    use std::process::Command;
    let bin = common::exe();
    let run = |args: &[&str]| Command::new(bin).arg("clock-fit").args(args).output().unwrap();
    // Exactly on Elo = −120 + 30 per doubling from 4 s a side: level at 4·2⁴ = 64 s.
    let o = run(&["4:-120:20", "8:-90:20", "16:-60:20", "32:-30:20", "--at", "128"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("+30.0 ± ") && out.contains("chi-square 0.00 on 2"), "{out}");
    assert!(out.contains("(64 s a side)") && out.contains("Fieller"), "{out}");
    assert!(out.contains("at 128 (128 s a side): +30.0") && out.contains("an extrapolation"), "{out}");
    // A flat, noisy curve: no interval claimed.
    let o = run(&["2+0.02:-100:40", "10+0.1:-95:40", "40+0.4:-102:40"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("not distinguished from 0"), "{}", String::from_utf8_lossy(&o.stdout));

    // Two match PGNs: pairs by the Round tag, the player either colour.
    let dir = common::TempDir::new("clock-fit");
    let game = |n: u32, white: &str, black: &str, result: &str| {
        format!("[Event \"m\"]\n[Round \"{n}\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{result}\"]\n\n1. e4 e5 {result}\n\n")
    };
    let short = [game(1, "dc", "hc", "0-1"), game(2, "hc", "dc", "1-0"), game(3, "dc", "hc", "1/2-1/2"), game(4, "hc", "dc", "1-0"), game(5, "dc", "hc", "1-0"), game(6, "hc", "dc", "1-0")].concat();
    let long = [game(1, "dc", "hc", "1-0"), game(2, "hc", "dc", "1/2-1/2"), game(3, "dc", "hc", "1/2-1/2"), game(4, "hc", "dc", "0-1"), game(5, "dc", "hc", "0-1"), game(6, "hc", "dc", "1/2-1/2")].concat();
    let (a, b) = (dir.join("a.pgn"), dir.join("b.pgn"));
    std::fs::write(&a, short).unwrap();
    std::fs::write(&b, long).unwrap();
    let (sa, sb) = (format!("2+0.02:{}", a.display()), format!("40+0.4:{}", b.display()));
    let o = run(&["--player", "dc", &sa, &sb]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("6 games, 3 pairs") && out.contains("line: +"), "{out}");
    // The wrong player, a game without a number, a third game in a pair: errors, exit 1.
    let o = run(&["--player", "nobody", &sa, &sb]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not nobody's"));
    std::fs::write(&b, game(1, "dc", "hc", "1-0").replace("[Round \"1\"]\n", "")).unwrap();
    let o = run(&["--player", "dc", &sa, &sb]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Round"));
    std::fs::write(&b, [game(1, "dc", "hc", "1-0"), game(2, "hc", "dc", "1-0"), game(1, "dc", "hc", "1-0")].concat()).unwrap();
    let o = run(&["--player", "dc", &sa, &sb]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("more than two games"));
    // Bad specs: usage errors, exit 2.
    for bad in [vec!["4:-120:20"], vec!["4:-120:20", "x:1:2"], vec!["4:-120:20", "8:1:0"], vec!["4:1:2", "8:3:4", "--elo", "abc"]] {
        let o = run(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}
