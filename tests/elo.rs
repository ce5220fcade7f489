//! Elo arithmetic against hand-computed cases (worked by hand below; the decimals were
//! checked once with python's math module, which these tests do not need).

use deepchess::play::elo::{elo_to_score, score_to_elo, Pentanomial, Sprt, SprtDecision, SprtModel, Wdl};

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
