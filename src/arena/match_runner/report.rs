//! Human-readable match output: a one-line live progress and the final table (players,
//! score, W-D-L, Elo difference with 95 % error bars over game pairs, LOS, SPRT).

use super::{MatchConfig, MatchStats};
use crate::arena::elo::{Estimate, SprtDecision, SprtModel};

fn elo(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "+inf".into() } else { "-inf".into() };
    }
    format!("{x:+.1}")
}

/// Pentanomial estimate once a pair is complete, else trinomial; with the model's name.
pub fn estimate(stats: &MatchStats) -> Option<(Estimate, &'static str)> {
    match stats.penta.estimate() {
        Some(e) => Some((e, "pentanomial")),
        None => stats.wdl.estimate().map(|e| (e, "trinomial: no complete pair yet")),
    }
}

/// One progress line (no newline), e.g.
/// `12/100 games  dc: +5 =4 -3  Elo +29.0 ±120.3  LOS 80.1%  0.8 games/s  ETA 1m48s`.
pub fn progress_line(cfg: &MatchConfig, s: &MatchStats) -> String {
    let mut line = format!(
        "{}/{} games  {}: +{} ={} -{}",
        s.finished, s.planned, cfg.players[0].name, s.wdl.wins, s.wdl.draws, s.wdl.losses
    );
    if let Some((e, _)) = estimate(s) {
        line.push_str(&format!("  Elo {} ±{:.1}  LOS {:.1}%", elo(e.elo), e.error_bar(), 100.0 * e.los));
    }
    if let (Some(llr), Some(sprt)) = (s.llr, &cfg.sprt) {
        let (lo, hi) = sprt.bounds();
        line.push_str(&format!("  LLR {llr:.2} ({lo:.2}, {hi:.2})"));
    }
    // Games a resume took from the file took none of this invocation's time.
    let rate = (s.finished - s.resumed) as f64 / s.elapsed.as_secs_f64().max(1e-9);
    let eta = s.planned.saturating_sub(s.finished) as f64 / rate.max(1e-9);
    line.push_str(&format!("  {:.2} games/s  ETA {}m{:02}s", rate, (eta / 60.0) as u64, (eta % 60.0) as u64));
    let faults: u64 = s.time_losses.iter().chain(&s.illegal_moves).chain(&s.crashes).sum();
    if faults > 0 {
        line.push_str(&format!("  faults {faults}"));
    }
    line
}

/// The final table, as in the paper's table 2 plus error bars.
pub fn final_table(cfg: &MatchConfig, s: &MatchStats) -> String {
    let [a, b] = &cfg.players;
    let mut out = format!(
        "Match {} ({}) vs {} ({}): {} games played of {}, {:.0} s{}\n\n",
        a.name,
        a.limit,
        b.name,
        b.limit,
        s.finished,
        s.planned,
        s.elapsed.as_secs_f64(),
        if s.resumed > 0 { format!(" (and {} games resumed from the PGN file)", s.resumed) } else { String::new() }
    );
    let width = a.name.len().max(b.name.len()).max(6);
    out.push_str(&format!(
        "{:<width$}  {:>5}  {:>14}  {:>12}  {:>34}  {:>6}\n",
        "player", "games", "score", "W-D-L", "Elo difference (95 %)", "LOS"
    ));
    let est = estimate(s);
    let g = s.wdl.games();
    for (i, p) in cfg.players.iter().enumerate() {
        let (w, l) = if i == 0 { (s.wdl.wins, s.wdl.losses) } else { (s.wdl.losses, s.wdl.wins) };
        let points = w as f64 + 0.5 * s.wdl.draws as f64;
        let score = format!("{points:.1} ({:.1}%)", 100.0 * points / g.max(1) as f64);
        let (diff, los) = match &est {
            Some((e, _)) => {
                let (v, lo, hi, los) = if i == 0 {
                    (e.elo, e.elo_lo, e.elo_hi, e.los)
                } else {
                    (-e.elo, -e.elo_hi, -e.elo_lo, 1.0 - e.los)
                };
                (format!("{} ±{:.1} [{}, {}]", elo(v), e.error_bar(), elo(lo), elo(hi)), format!("{:.1}%", 100.0 * los))
            }
            None => ("-".into(), "-".into()),
        };
        out.push_str(&format!(
            "{:<width$}  {:>5}  {:>14}  {:>12}  {:>34}  {:>6}\n",
            p.name,
            g,
            score,
            format!("{w}-{}-{l}", s.wdl.draws),
            diff,
            los
        ));
    }
    out.push('\n');
    if let Some((_, model)) = &est {
        out.push_str(&format!("Error bars: {model}"));
        if s.penta.pairs() > 0 {
            let p = s.penta.0;
            out.push_str(&format!(
                " over {} pairs; pairs scoring 0 / ½ / 1 / 1½ / 2 for {}: {} {} {} {} {}",
                s.penta.pairs(),
                a.name,
                p[0],
                p[1],
                p[2],
                p[3],
                p[4]
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "White scored {:.1}%; adjudicated {}; time losses {} {} / {} {}; illegal moves {} {} / {} {}; crashes {} {} / {} {}\n",
        100.0 * s.white_points / g.max(1) as f64,
        s.adjudicated,
        a.name,
        s.time_losses[0],
        b.name,
        s.time_losses[1],
        a.name,
        s.illegal_moves[0],
        b.name,
        s.illegal_moves[1],
        a.name,
        s.crashes[0],
        b.name,
        s.crashes[1],
    ));
    if let Some(sprt) = &cfg.sprt {
        let (lo, hi) = sprt.bounds();
        let model = if sprt.model == SprtModel::Normalized { "normalized" } else { "logistic" };
        let verdict = match s.sprt {
            Some(SprtDecision::H1) => format!("H1 accepted: {} is at least {} Elo stronger", a.name, sprt.elo1),
            Some(SprtDecision::H0) => format!("H0 accepted: {} is not {} Elo stronger", a.name, sprt.elo1),
            _ => "no decision yet".into(),
        };
        out.push_str(&format!(
            "SPRT ({model} Elo, elo0 {} elo1 {} alpha {} beta {}): LLR {:.2} in ({lo:.2}, {hi:.2}): {verdict}\n",
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            s.llr.unwrap_or(0.0)
        ));
    }
    out
}
