//! `deepchess clock-fit`: a time-control curve (one player against another at several equal
//! clocks) fitted as a line in the clock's logarithm, and the clock where it reaches an Elo
//! (0 by default), with intervals (`arena::clock_curve`).

use crate::arena::clock_curve::{clock_seconds, fit, ClockPoint, Crossing, MOVES};
use crate::arena::elo::{Pentanomial, Z95};
use crate::chess::pgn::{open_pgn, PgnReader};
use crate::chess::{Color, Outcome};
use crate::io::args::{parse, usage, CliError, Flag};
use std::collections::BTreeMap;

const FLAGS: &[Flag] = &[
    Flag { name: "player", value: Some("NAME"), help: "whose results to count in PGN files (White/Black tag; default deepchess)" },
    Flag { name: "elo", value: Some("E"), help: "the Elo whose clock is sought (default 0: level)" },
    Flag { name: "at", value: Some("TC"), help: "also print the line's Elo at this clock (repeatable)" },
];

const ABOUT: &str = "\
Fits a time-control curve: a player's Elo against the same opponent at several equal clocks,
as a line in log2 of the clock (Elo per doubling of the time), each point weighted by its
interval, and prints the clock where the line reaches --elo (0: where the two draw level)
with Fieller's 95 % interval, or says the slope is too uncertain to bound it. A clock is
BASE+INC in seconds and counts as BASE + 60 × INC seconds a side.

Each point is TC:ELO:BAR (a match's Elo and the ± of its 95 % interval, as `deepchess match`
prints them) or TC:FILE.pgn (the games `deepchess match` wrote: --player's results, scored by
game pairs as the match scores them, pairs by the Round tag).

Examples:
  deepchess clock-fit 2+0.02:-124.0:32.3 10+0.1:-103.7:45.0 40+0.4:-55.1:68.2 --at 1800
  deepchess clock-fit 2+0.02:runs/a.pgn 10+0.1:runs/b.pgn --player deepchess";

fn help() -> String {
    usage("clock-fit", "[--elo E] [--at TC]... TC:ELO:BAR|TC:FILE.pgn ...", ABOUT, FLAGS)
}

pub fn run(args: &[String]) -> Result<(), CliError> {
    let p = parse("clock-fit", args, FLAGS, &help())?;
    let player = p.get("player").unwrap_or("deepchess");
    let usage_err = |m: String| CliError::Usage(format!("deepchess clock-fit: {m}\n\n{}", help()));
    let target: f64 = match p.get("elo") {
        None => 0.0,
        Some(s) => s.parse().ok().filter(|e: &f64| e.is_finite()).ok_or_else(|| usage_err(format!("--elo '{s}' is not a number")))?,
    };
    let extra: Vec<(String, f64)> = p.get_all("at").into_iter().map(|tc| clock_seconds(tc).map(|s| (tc.to_string(), s)).map_err(&usage_err)).collect::<Result<_, _>>()?;
    if p.positional.len() < 2 {
        return Err(usage_err("give at least two points, TC:ELO:BAR or TC:FILE.pgn".to_string()));
    }
    let rows = p.positional.iter().map(|s| read_point(s, player)).collect::<Result<Vec<_>, _>>()?;
    println!("{:>10} {:>9} {:>16}  source", "clock", "s a side", "Elo (95 %)");
    for (tc, pt, source) in &rows {
        println!("{tc:>10} {:>9.1} {:>+8.1} ± {:<5.1}  {source}", pt.seconds, pt.elo, Z95 * pt.sigma);
    }
    let points: Vec<ClockPoint> = rows.iter().map(|r| r.1.clone()).collect();
    let f = fit(&points).ok_or_else(|| CliError::Failed("deepchess clock-fit: the points need at least two different clocks and errors above 0".to_string()))?;
    println!(
        "line: {:+.1} ± {:.1} Elo per doubling of the clock; {:+.1} ± {:.1} at {:.1} s a side; chi-square {:.2} on {} degree(s) of freedom",
        f.slope,
        Z95 * f.slope_se,
        f.level,
        Z95 * f.level_se,
        f.center.exp2(),
        f.chi2,
        f.dof
    );
    let range = |s: f64| if s < f.lo_seconds || s > f.hi_seconds { " (beyond the clocks measured: an extrapolation)" } else { "" };
    let tc_of = |s: f64| format!("about {}+{} ({s:.0} s a side)", round3(s / (1.0 + MOVES / 100.0)), round3(s / (1.0 + MOVES / 100.0) / 100.0));
    match f.crossing(target) {
        Crossing::Bounded { at, lo, hi } => println!(
            "reaches {target:+.0} at {}{}; 95 % interval {:.0} to {:.0} s a side (Fieller)",
            tc_of(at),
            range(at),
            lo,
            hi
        ),
        Crossing::Unbounded { at } => {
            let est = at.map(|a| format!("the line's estimate {}{}, but ", tc_of(a), range(a))).unwrap_or_default();
            println!("reaches {target:+.0}: {est}the slope is not distinguished from 0 at 95 %, so no clock is excluded (no bounded interval)")
        }
    }
    for (tc, s) in &extra {
        let (e, lo, hi) = f.elo_at(*s);
        println!("at {tc} ({s:.0} s a side): {e:+.1}, 95 % interval {lo:+.1} to {hi:+.1}{}", range(*s));
    }
    Ok(())
}

/// Seconds to three significant digits, trailing zeros dropped (1150, 11.5, 0.02).
fn round3(x: f64) -> String {
    let decimals = (2 - x.abs().max(1e-9).log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{:.*}", decimals, x);
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// `TC:ELO:BAR` or `TC:FILE`.
fn read_point(spec: &str, player: &str) -> Result<(String, ClockPoint, String), CliError> {
    let bad = |why: String| CliError::Usage(format!("deepchess clock-fit: '{spec}': {why} (expected TC:ELO:BAR or TC:FILE.pgn)"));
    let (tc, rest) = spec.split_once(':').ok_or_else(|| bad("no ':'".to_string()))?;
    let seconds = clock_seconds(tc).map_err(&bad)?;
    if rest.is_empty() {
        return Err(bad("nothing after the clock".to_string()));
    }
    let num = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    if let Some((e, b)) = rest.split_once(':') {
        if let (Some(elo), Some(bar)) = (num(e), num(b)) {
            if bar <= 0.0 {
                return Err(bad(format!("the interval's ± must be above 0, not {b}")));
            }
            return Ok((tc.to_string(), ClockPoint { seconds, elo, sigma: bar / Z95 }, "Elo given".to_string()));
        }
        if !std::path::Path::new(rest).exists() {
            return Err(bad("ELO and BAR must be numbers".to_string()));
        }
    }
    let (pairs, games) = pairs_of(rest, player)?;
    let est = pairs
        .estimate()
        .filter(|e| e.elo.is_finite() && e.error_bar().is_finite() && e.error_bar() > 0.0)
        .ok_or_else(|| CliError::Failed(format!("deepchess clock-fit: {rest}: {} complete pair(s) of {player}'s games: no finite Elo with an interval", pairs.pairs())))?;
    let source = format!("{rest}: {games} games, {} pairs", pairs.pairs());
    Ok((tc.to_string(), ClockPoint { seconds, elo: est.elo, sigma: est.error_bar() / Z95 }, source))
}

/// `player`'s finished games of a match's PGN file as pairs (games 2k−1 and 2k share an
/// opening, as `deepchess match` numbers them) and the number of finished games read.
fn pairs_of(path: &str, player: &str) -> Result<(Pentanomial, u64), CliError> {
    let fail = |m: String| CliError::Failed(format!("deepchess clock-fit: {path}: {m}"));
    let src = open_pgn(path).map_err(|e| fail(e.to_string()))?;
    let mut reader = PgnReader::new(src);
    let mut by_pair: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut games = 0;
    while let Some(g) = reader.next_game() {
        let g = g.map_err(|e| fail(format!("a game could not be read ({e})")))?;
        let side = if g.tag("White") == Some(player) {
            Color::White
        } else if g.tag("Black") == Some(player) {
            Color::Black
        } else {
            return Err(fail(format!("game {} is not {player}'s (see --player)", g.number)));
        };
        let n: u64 = g.tag("Round").and_then(|r| r.parse().ok()).filter(|&n| n > 0).ok_or_else(|| fail(format!("game {} has no game number (Round tag)", g.number)))?;
        let Some(outcome) = g.result else { continue };
        let score = match outcome {
            Outcome::Draw => 0.5,
            Outcome::Win(c) if c == side => 1.0,
            Outcome::Win(_) => 0.0,
        };
        let pair = by_pair.entry((n - 1) / 2).or_default();
        pair.push(score);
        if pair.len() > 2 {
            return Err(fail(format!("game pair {} (games {} and {}) holds more than two games", (n - 1) / 2 + 1, n - (n - 1) % 2, n - (n - 1) % 2 + 1)));
        }
        games += 1;
    }
    let mut penta = Pentanomial::default();
    for scores in by_pair.values().filter(|s| s.len() == 2) {
        penta.add(scores[0], scores[1]);
    }
    Ok((penta, games))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_are_shown_to_three_digits() {
        assert_eq!(round3(1150.448), "1150");
        assert_eq!(round3(11.504), "11.5");
        assert_eq!(round3(2.0), "2");
        assert_eq!(round3(0.02), "0.02");
    }

    #[test]
    fn points_parse_strictly() {
        let (tc, p, _) = read_point("10+0.1:-103.7:45.0", "x").unwrap();
        assert_eq!(tc, "10+0.1");
        assert!((p.seconds - 16.0).abs() < 1e-9 && p.elo == -103.7 && (p.sigma * Z95 - 45.0).abs() < 1e-9);
        for bad in ["10+0.1", "10+0.1:", "x:1:2", "10:1:0", "10:1:-3", "10:a:2", "10:1:inf", "10:no-such-file.pgn"] {
            assert!(read_point(bad, "x").is_err(), "{bad}");
        }
    }
}
