//! What a tournament shows: per condition the rating table (player, system, games, score,
//! rating with its 95 % interval, nodes/s, mean depth), the consistency check, the ladder
//! (SVG, coloured by seed system) and every game as PGN; and a summary of all conditions.
//! All of it is made from the journal, so it is the same however often the run was killed.

use super::fit::{self, Fit};
use super::journal::Journal;
use super::{results_of, Condition, TournamentConfig};
use crate::arena::match_runner::Searched;
use crate::io::atomic::write_atomic;
use std::fmt::Write as _;

/// Colours in the ladder of the players that come from no trainable system (each system's
/// own is its `System::colour`, src/players.rs `SYSTEMS`).
const OTHER_COLOURS: &[(&str, &str)] = &[
    ("handcrafted", "#8c564b"),
    ("stockfish", "#555555"),
    ("gnuchess", "#e377c2"),
    ("external", "#17becf"),
];

/// Every colour of the ladder: the trainable systems', in the order of `SYSTEMS`, then the
/// other players'.
fn colours() -> impl Iterator<Item = (&'static str, &'static str)> {
    crate::players::SYSTEMS.iter().map(|s| (s.name, s.colour)).chain(OTHER_COLOURS.iter().copied())
}

fn colour(system: &str) -> &'static str {
    colours().find(|(s, _)| *s == system).map_or("#000000", |c| c.1)
}

/// One row of a condition's table.
#[derive(Clone, Debug)]
pub struct Row {
    pub player: usize,
    pub games: f64,
    pub points: f64,
    pub rated: fit::Rated,
    pub searched: Searched,
}

/// The fit and the rows of one condition, strongest first.
pub fn standings(cfg: &TournamentConfig, j: &Journal, cond: &str) -> (Fit, Vec<Row>) {
    let res = results_of(cfg, j, cond);
    let f = fit::fit(&res, &cfg.anchors(), cfg.bootstrap, 1);
    let mut searched = vec![Searched::default(); cfg.entrants.len()];
    for ((c, round, pair, game), g) in &j.games {
        if c != cond {
            continue;
        }
        let p = j.rounds[&(c.clone(), *round)][*pair];
        let (w, b) = if *game == 0 { (p.a, p.b) } else { (p.b, p.a) };
        searched[w].add(&g.searched[0]);
        searched[b].add(&g.searched[1]);
    }
    let mut rows: Vec<Row> = (0..cfg.entrants.len())
        .map(|i| {
            let (games, points) = res.totals(i);
            Row { player: i, games, points, rated: f.rated[i], searched: searched[i] }
        })
        .filter(|r| r.games > 0.0)
        .collect();
    rows.sort_by(|a, b| b.rated.rating.total_cmp(&a.rated.rating).then(a.player.cmp(&b.player)));
    (f, rows)
}

fn elo(x: f64) -> String {
    if x == f64::INFINITY {
        "+∞".into()
    } else if x == f64::NEG_INFINITY {
        "−∞".into()
    } else {
        format!("{:.0}", x + 0.0).replace('-', "−")
    }
}

/// The condition's table as Markdown, with the consistency check under it.
pub fn table(cfg: &TournamentConfig, cond: &Condition, f: &Fit, rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| # | player | system | games | score | rating | 95 % interval | nodes/s | mean depth |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for (k, r) in rows.iter().enumerate() {
        let e = &cfg.entrants[r.player];
        let rating = if r.rated.anchor { format!("{} (anchor)", elo(r.rated.rating)) } else { elo(r.rated.rating) };
        let interval = if r.rated.anchor { "fixed".to_string() } else { format!("{} … {}", elo(r.rated.lo), elo(r.rated.hi)) };
        let nps = r.searched.nps().map_or("–".to_string(), |v| format!("{v:.0}"));
        let depth = r.searched.mean_depth().map_or("–".to_string(), |v| format!("{v:.1}"));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.1} % | {rating} | {interval} | {nps} | {depth} |",
            k + 1,
            e.name,
            e.system,
            r.games,
            100.0 * r.points / r.games.max(1.0)
        );
    }
    let _ = writeln!(s);
    let anchors: Vec<String> = cfg.entrants.iter().filter_map(|e| e.anchor.map(|a| format!("{} at {a}", e.name))).collect();
    let _ = writeln!(
        s,
        "Condition {}: {}. One Bradley–Terry fit over all {} games (draws as half points); anchors: {}; intervals: {} bootstrap replicates over game pairs.",
        cond.name,
        cond.label,
        rows.iter().map(|r| r.games).sum::<f64>() / 2.0,
        if anchors.is_empty() { "none".into() } else { anchors.join(", ") },
        f.bootstrap
    );
    let strays: Vec<String> = f
        .strays
        .iter()
        .filter(|x| x.z.abs() >= 2.5)
        .map(|x| {
            format!(
                "{}–{} {:.1}/{} (fit: {:.1}, z = {:+.1})",
                cfg.entrants[x.a].name, cfg.entrants[x.b].name, x.observed, x.games, x.expected, x.z
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "Consistency: χ² = {:.1} over {} degrees of freedom (p = {:.3}); pairings beyond |z| ≥ 2.5: {}.",
        f.chi2,
        f.dof,
        f.p_value,
        if strays.is_empty() { "none".to_string() } else { strays.join("; ") }
    );
    s
}

/// The ladder: each player's rating and interval on one Elo axis, coloured by system.
pub fn ladder_svg(cfg: &TournamentConfig, cond: &Condition, rows: &[Row]) -> String {
    let (w, left, right, top, row_h) = (820.0, 170.0, 30.0, 46.0, 22.0);
    let finite = |x: f64| x.is_finite();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for r in rows {
        for x in [r.rated.lo, r.rated.rating, r.rated.hi] {
            if finite(x) {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
    }
    if !lo.is_finite() {
        (lo, hi) = (-100.0, 100.0);
    }
    let step = 200.0;
    lo = (lo / step).floor() * step - step / 2.0;
    hi = (hi / step).ceil() * step + step / 2.0;
    let h = top + row_h * rows.len() as f64 + 70.0;
    let x = |v: f64| left + (v.clamp(lo, hi) - lo) / (hi - lo) * (w - left - right);
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#);
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="20" font-size="14">{} — {}: ratings with 95 % intervals</text>"#, left, xml(&cfg.event), xml(&cond.label));
    let mut v = (lo / step).ceil() * step;
    let axis_y = top + row_h * rows.len() as f64;
    while v <= hi {
        let _ = writeln!(s, r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#dddddd"/>"##, x(v), top - 8.0, axis_y);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{}" text-anchor="middle">{:.0}</text>"#, x(v), axis_y + 16.0, v + 0.0);
        v += step;
    }
    let _ = writeln!(s, r#"<text x="{:.1}" y="{}" text-anchor="middle">Elo (Stockfish UCI_Elo scale where anchored)</text>"#, (left + w - right) / 2.0, axis_y + 34.0);
    for (k, r) in rows.iter().enumerate() {
        let e = &cfg.entrants[r.player];
        let y = top + row_h * k as f64 + row_h / 2.0;
        let c = colour(&e.system);
        let _ = writeln!(s, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, left - 10.0, y + 4.0, xml(&e.name));
        let (a, b) = (r.rated.lo, r.rated.hi);
        let _ = writeln!(s, r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="3"/>"#, x(a), x(b));
        for (end, dir) in [(a, -1.0), (b, 1.0)] {
            if !end.is_finite() {
                let ex = x(end);
                let _ = writeln!(s, r#"<path d="M{:.1},{:.1} L{ex:.1},{y:.1} L{:.1},{:.1}" fill="none" stroke="{c}" stroke-width="2"/>"#, ex - 6.0 * dir, y - 5.0, ex - 6.0 * dir, y + 5.0);
            }
        }
        let shape = if r.rated.anchor {
            format!(r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{c}"/>"#, x(r.rated.rating) - 5.0, y - 5.0)
        } else {
            format!(r#"<circle cx="{:.1}" cy="{y:.1}" r="5" fill="{c}"/>"#, x(r.rated.rating))
        };
        let _ = writeln!(s, "{shape}");
    }
    // Legend: the systems present.
    let mut lx = left;
    let ly = axis_y + 52.0;
    for (sys, c) in colours() {
        if rows.iter().any(|r| cfg.entrants[r.player].system == sys) {
            let _ = writeln!(s, r#"<circle cx="{lx:.1}" cy="{:.1}" r="5" fill="{c}"/><text x="{:.1}" y="{ly:.1}">{sys}</text>"#, ly - 4.0, lx + 9.0);
            lx += 20.0 + 7.5 * sys.len() as f64;
        }
    }
    let _ = writeln!(s, "</svg>");
    s
}

/// Every pairing's points against the fit's prediction (the consistency check in full).
pub fn pairings(cfg: &TournamentConfig, cond: &Condition, f: &Fit) -> String {
    let mut s = format!("# Pairings, {}\n\nPoints of the first player against the joint fit's prediction; z = (observed − predicted) / sd, largest |z| first.\n\n", cond.label);
    s.push_str("| first | second | games | observed | predicted | z |\n|---|---|---|---|---|---|\n");
    for x in &f.strays {
        let _ = writeln!(s, "| {} | {} | {} | {:.1} | {:.1} | {:+.2} |", cfg.entrants[x.a].name, cfg.entrants[x.b].name, x.games, x.observed, x.expected, x.z);
    }
    let _ = writeln!(s, "\nχ² = {:.1} over {} degrees of freedom, p = {:.3}.", f.chi2, f.dof, f.p_value);
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    write_atomic(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes a condition's `table.md`, `ladder.svg` and `games.pgn` into `OUT/COND/`.
pub fn write_condition(cfg: &TournamentConfig, j: &Journal, cond: &Condition) -> Result<(), String> {
    let dir = cfg.out.join(&cond.name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (f, rows) = standings(cfg, j, &cond.name);
    write(&dir.join("table.md"), &table(cfg, cond, &f, &rows))?;
    write(&dir.join("ladder.svg"), &ladder_svg(cfg, cond, &rows))?;
    write(&dir.join("pairings.md"), &pairings(cfg, cond, &f))?;
    let pgn: String = j.games.iter().filter(|((c, ..), _)| *c == cond.name).map(|(_, g)| format!("{}\n", g.pgn.trim_end())).collect::<Vec<_>>().join("\n");
    write(&dir.join("games.pgn"), &pgn)
}

/// Writes `OUT/results.md`: every condition's table and ladder.
pub fn write_summary(cfg: &TournamentConfig, j: &Journal) -> Result<(), String> {
    let mut s = format!("# {}\n\n", cfg.event);
    for cond in &cfg.conditions {
        let (f, rows) = standings(cfg, j, &cond.name);
        let _ = writeln!(s, "## {}\n\n{}\n![ladder]({}/ladder.svg)\n", cond.label, table(cfg, cond, &f, &rows), cond.name);
    }
    write(&cfg.out.join("results.md"), &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each system and each other kind of player has a colour of its own, `#rrggbb`.
    #[test]
    fn every_system_has_a_colour_of_its_own() {
        let all: Vec<(&str, &str)> = colours().collect();
        for (i, (sys, c)) in all.iter().enumerate() {
            assert!(c.len() == 7 && c.starts_with('#') && c[1..].chars().all(|x| x.is_ascii_hexdigit()), "{sys}: {c}");
            assert!(all[i + 1..].iter().all(|(s, o)| s != sys && o != c), "{sys} or {c} twice");
            assert_eq!(colour(sys), *c);
        }
        assert_eq!(colour("someone"), "#000000");
    }
}
