//! A learning curve played out: player A's nets, snapshots taken as a system trained (one
//! series per way of training), each against the same player B, as seed 004's Table 1
//! ("wins against GNU Chess after 100 … 2,400 training games, using the same number of games
//! for testing as for training").
//!
//! The points of a series are played in order of training games. The test games of a point
//! are those of its interval (training games since the series' previous point, times the
//! test share), played by the point's snapshot, so the cumulative wins at a point count every
//! test game up to it, as the seed's table does. Each interval takes the suite's next
//! openings, each opening twice with colours swapped; every series plays the same openings
//! at the same point (paired). A finished point is recorded in `points.tsv` of the output
//! folder at once, so a stopped run continues where it stopped (`--resume`).

use super::elo::{Pentanomial, Wdl};
use super::match_runner::{run, MatchConfig, MatchStats};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One snapshot: its series, the training games behind it, its net file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub series: String,
    pub trained: u64,
    pub net: String,
}

/// Reads a list of points: `SERIES GAMES NET` per line, `#` comments and blank lines ignored.
pub fn parse_points(text: &str, origin: &str) -> Result<Vec<Point>, String> {
    let mut out: Vec<Point> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{origin} line {}", i + 1);
        let mut w = line.split_whitespace();
        let (Some(series), Some(games), Some(net), None) = (w.next(), w.next(), w.next(), w.next()) else {
            return Err(format!("{}: want 'SERIES GAMES NET', got '{}'", at(), crate::io::text::cut(line, 80)));
        };
        if !series.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("{}: series '{series}': use letters, digits, '-' or '_'", at()));
        }
        let trained: u64 = games.parse().ok().filter(|&g| g > 0).ok_or_else(|| format!("{}: '{games}' is not a positive number of games", at()))?;
        if out.iter().any(|p| p.series == series && p.trained >= trained) {
            return Err(format!("{}: series {series}: points must grow in training games ({trained} after a larger one)", at()));
        }
        out.push(Point { series: series.to_string(), trained, net: net.to_string() });
    }
    if out.is_empty() {
        return Err(format!("{origin}: no points"));
    }
    Ok(out)
}

/// The test games of each point: its interval's training games times `share`, rounded up to
/// whole pairs.
pub fn test_games(points: &[Point], share: f64) -> Vec<u64> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let prev = points[..i].iter().rev().find(|q| q.series == p.series).map_or(0, |q| q.trained);
            let n = ((p.trained - prev) as f64 * share).ceil() as u64;
            n.div_ceil(2).max(1) * 2
        })
        .collect()
}

/// A finished point.
#[derive(Clone, Debug, PartialEq)]
pub struct Done {
    pub point: Point,
    pub wdl: Wdl,
    pub penta: Pentanomial,
    /// The length of the curve's own `games.pgn` once the point's games were in it: a point
    /// cut short by a kill left games there, which a resume cuts off before playing it again.
    pub pgn_end: Option<u64>,
}

impl Done {
    fn line(&self) -> String {
        let p = self.penta.0;
        let end = self.pgn_end.map_or(String::new(), |n| format!("\t{n}"));
        let body = format!("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}{end}", self.point.series, self.point.trained, self.point.net, self.wdl.wins, self.wdl.draws, self.wdl.losses, p[0], p[1], p[2], p[3], p[4]);
        format!("{}\n", crate::io::checksum::seal_line(&body))
    }

    fn parse(line: &str) -> Option<Done> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 11 && f.len() != 12 {
            return None;
        }
        let n: Vec<u64> = f[3..].iter().map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let (wdl, penta) = (Wdl { wins: n[0], draws: n[1], losses: n[2] }, Pentanomial([n[3], n[4], n[5], n[6], n[7]]));
        // A point's games: its pairs' outcomes, counted twice over.
        if wdl.wins + wdl.draws + wdl.losses != 2 * penta.0.iter().sum::<u64>() {
            return None;
        }
        Some(Done { point: Point { series: f[0].into(), trained: f[1].parse().ok()?, net: f[2].into() }, wdl, penta, pgn_end: n.get(8).copied() })
    }
}

/// What a curve run needs: the match (player A's net and name are set per point), the
/// points, the test share and the output folder.
pub struct CurveConfig {
    pub base: MatchConfig,
    pub points: Vec<Point>,
    pub share: f64,
    pub out: PathBuf,
    pub resume: bool,
}

/// Plays every point not yet in `points.tsv`; writes `curve.md` and `curve.svg` after each.
pub fn run_curve(cfg: &CurveConfig, mut progress: impl FnMut(&Point, &MatchConfig, &MatchStats) + Send) -> Result<Vec<Done>, String> {
    std::fs::create_dir_all(&cfg.out).map_err(|e| format!("cannot create {}: {e}", cfg.out.display()))?;
    let tsv = cfg.out.join("points.tsv");
    let mut done: Vec<Done> = Vec::new();
    let header = identity(cfg);
    // The curve's own PGN (not one the user named with --pgn, which others may append to).
    let own_pgn = cfg.base.pgn_out.clone().filter(|p| *p == cfg.out.join("games.pgn"));
    if std::fs::symlink_metadata(&tsv).is_ok() {
        if !cfg.resume {
            return Err(format!("{} already holds a curve: add --resume to continue it, or choose another --curve-out", cfg.out.display()));
        }
        done = read_points(&tsv, &header)?;
        if let Some(pgn) = &own_pgn {
            cut_unfinished_games(pgn, done.last().and_then(|d| d.pgn_end))?;
        }
    } else {
        crate::io::write_atomic(&tsv, format!("{SEALED}{header}").as_bytes()).map_err(|e| format!("{}: {e}", tsv.display()))?;
    }
    let tests = test_games(&cfg.points, cfg.share);
    let a_name = cfg.base.players[0].name.clone();
    for (i, p) in cfg.points.iter().enumerate() {
        if let Some(d) = done.iter().find(|d| d.point.series == p.series && d.point.trained == p.trained) {
            if d.point.net != p.net {
                return Err(format!("{}: {} at {} games was played with {}, not {}: choose another --curve-out", tsv.display(), p.series, p.trained, d.point.net, p.net));
            }
            continue;
        }
        // The same openings for every series at the same point: the pairs before it.
        let before: u64 = cfg.points[..i].iter().zip(&tests).filter(|(q, _)| q.series == p.series).map(|(_, &n)| n / 2).sum();
        let mut m = cfg.base.clone();
        m.games = tests[i];
        m.opening_first += before as usize;
        m.players[0].net = Some(p.net.clone());
        m.players[0].name = format!("{a_name}-{}-{}", p.series, p.trained);
        if m.opening_first >= m.openings.len() {
            eprintln!("note: {} at {} games starts past the suite's {} openings: the suite wraps around", p.series, p.trained, m.openings.len());
        }
        let stats = run(&m, |s, _| progress(p, &m, s))?;
        let pgn_end = own_pgn.as_ref().map(|p| std::fs::metadata(p).map_or(0, |m| m.len()));
        let d = Done { point: p.clone(), wdl: stats.wdl, penta: stats.penta, pgn_end };
        append(&tsv, &d.line())?;
        done.push(d);
        let ordered: Vec<Done> = cfg.points.iter().filter_map(|q| done.iter().find(|d| d.point.series == q.series && d.point.trained == q.trained).cloned()).collect();
        write_outputs(&cfg.out, &ordered, &describe(cfg))?;
    }
    let ordered: Vec<Done> = cfg.points.iter().filter_map(|q| done.iter().find(|d| d.point.series == q.series && d.point.trained == q.trained).cloned()).collect();
    write_outputs(&cfg.out, &ordered, &describe(cfg))?;
    Ok(ordered)
}

fn append(path: &Path, line: &str) -> Result<(), String> {
    use std::io::Write;
    let mut f = crate::io::open_append(path, "curve's points file", crate::io::Place::Own).map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(line.as_bytes()).and_then(|_| f.sync_all()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Cuts the curve's own `pgn` back to `end` bytes, the length it had after the last finished
/// point: games beyond it belong to a point a kill cut short, which is played again. With
/// no point finished, every game there is such a game.
fn cut_unfinished_games(pgn: &Path, end: Option<u64>) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(pgn) else { return Ok(()) };
    let end = end.unwrap_or(0);
    if !meta.is_file() || meta.len() <= end {
        return Ok(());
    }
    let f = crate::io::open_append(pgn, "curve's games file", crate::io::Place::Own).map_err(|e| format!("{}: {e}", pgn.display()))?;
    f.set_len(end).and_then(|_| f.sync_all()).map_err(|e| format!("{}: {e}", pgn.display()))?;
    eprintln!("note: {}: cut {} bytes of games of a point cut short; it is played again", pgn.display(), meta.len() - end);
    Ok(())
}

/// What every point of a curve is played under, as the `# match` lines that open
/// `points.tsv`: both players (program, options, limits; player B's net), the test share,
/// the openings (their number and checksum, the first one, the shuffle) and the game
/// settings. A resume with any of them different would put games of two matches under one
/// title, so it is refused.
fn identity(cfg: &CurveConfig) -> String {
    let m = &cfg.base;
    let [a, b] = &m.players;
    let player = |p: &super::match_runner::PlayerSpec, net: bool| {
        let net = if net { format!(" net={}", p.net.as_deref().unwrap_or("(its own)")) } else { String::new() };
        let opts: String = p.options.iter().map(|(k, v)| format!(" option.{k}={v}")).collect();
        format!("name={} program={:?} limit={}{net}{opts}", p.name, p.program, p.limit)
    };
    let openings = crate::io::fnv1a64(format!("{:?}", m.openings).as_bytes());
    let lines = [
        format!("A {}", player(a, false)),
        format!("B {}", player(b, true)),
        format!("test-share {}", cfg.share),
        format!("openings {} fnv64={openings:016x} first={} shuffle={:?}", m.openings.len(), m.opening_first, m.shuffle),
        format!("settings {:?}", m.settings),
    ];
    lines.iter().map(|l| format!("# match {}\n", crate::io::text::printable(l))).collect()
}

/// The first line of a points file whose records carry their checksums
/// ([`crate::io::checksum::seal_line`]); a file without it (written before) is read unsealed.
const SEALED: &str = "# deepchess curve points: each record ends with its checksum\n";

/// Reads the finished points of `tsv` (the curve's own file: regular, bounded, not a link),
/// checking that its `# match` lines are `header`. A last line cut by a kill is dropped from
/// the file, and its point is played again.
pub fn read_points(tsv: &Path, header: &str) -> Result<Vec<Done>, String> {
    let shown = tsv.display().to_string();
    let bytes = crate::io::files::read_own(tsv, 16 << 20, "curve's points file").map_err(|e| format!("{shown}: {e}"))?;
    let (text, whole, recorded) = settings(&bytes, &shown)?;
    if recorded.is_empty() {
        return Err(format!("{shown}: records no match settings (written before curves recorded them, or not a curve's file), so this resume cannot be checked against it: choose another --curve-out"));
    }
    if recorded != header {
        let mut why = String::new();
        for (was, now) in recorded.lines().zip(header.lines()).filter(|(a, b)| a != b) {
            let _ = write!(why, "\n  the curve: {}\n  this run:  {}", was.trim_start_matches("# match "), now.trim_start_matches("# match "));
        }
        return Err(format!("{shown}: this curve was played under other settings; a resume must play the same match (or choose another --curve-out):{why}"));
    }
    let done = records(text, whole, &shown)?;
    if whole < bytes.len() {
        eprintln!("note: {shown}: dropped a point cut short by a kill; it is played again");
        crate::io::files::cut_torn_line(tsv, &bytes, "curve's points file").map_err(|e| format!("{shown}: {e}"))?;
    }
    Ok(done)
}

/// The finished points of a curve's `points.tsv`, read only (a summary over several runs):
/// its `# match` lines and its points, every record checked as a resume checks them; a last
/// line cut by a kill is left out here and left in the file (its run's resume drops it).
pub fn read_finished(tsv: &Path) -> Result<(String, Vec<Done>), String> {
    let shown = tsv.display().to_string();
    let bytes = crate::io::files::read_own(tsv, 16 << 20, "curve's points file").map_err(|e| format!("{shown}: {e}"))?;
    let (text, whole, recorded) = settings(&bytes, &shown)?;
    if recorded.is_empty() {
        return Err(format!("{shown}: records no match settings, so it is not a curve's points file this build can read"));
    }
    Ok((recorded, records(text, whole, &shown)?))
}

/// A points file as text, where its last whole line ends, and its `# match` lines.
fn settings<'a>(bytes: &'a [u8], shown: &str) -> Result<(&'a str, usize, String), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text, so not a curve's points file"))?;
    let whole = text.rfind('\n').map_or(0, |i| i + 1);
    let recorded: String = text[..whole].lines().filter(|l| l.starts_with("# match ")).map(|l| format!("{l}\n")).collect();
    Ok((text, whole, recorded))
}

/// The finished points of a points file's whole lines. Every record is checked before anything
/// is cut or played: a file that repeats or contradicts itself is refused as it is (a cut made
/// from a wrong record would destroy finished games).
fn records(text: &str, whole: usize, shown: &str) -> Result<Vec<Done>, String> {
    let sealed = text.starts_with(SEALED);
    let mut done: Vec<Done> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    for (i, l) in text[..whole].lines().enumerate().filter(|(_, l)| !l.is_empty() && !l.starts_with('#')) {
        let at = i + 1;
        let body = if sealed { crate::io::checksum::unseal_line(l).map_err(|e| format!("{shown} line {at}: {e}"))? } else { l };
        let d = Done::parse(body).ok_or_else(|| format!("{shown} line {at}: not a finished point"))?;
        if let Some(k) = done.iter().position(|e| e.point.series == d.point.series && e.point.trained == d.point.trained) {
            return Err(format!("{shown} line {at}: repeats the point of line {} ({} at {} games): the file is damaged; nothing was changed", lines[k], d.point.series, d.point.trained));
        }
        if let (Some(prev), Some(end)) = (done.last().and_then(|e| e.pgn_end), d.pgn_end) {
            if end < prev {
                return Err(format!("{shown} line {at}: says games.pgn ended at byte {end} after line {} said {prev}: the records contradict each other; nothing was changed", lines[lines.len() - 1]));
            }
        }
        done.push(d);
        lines.push(at);
    }
    Ok(done)
}

fn describe(cfg: &CurveConfig) -> String {
    let [a, b] = &cfg.base.players;
    format!("{} ({}) against {} ({}), test games {} × the training games of each interval", a.name, a.limit, b.name, b.limit, cfg.share)
}

fn write_outputs(dir: &Path, done: &[Done], what: &str) -> Result<(), String> {
    let md = table(done, what);
    crate::io::write_atomic(&dir.join("curve.md"), md.as_bytes()).map_err(|e| format!("writing curve.md: {e}"))?;
    crate::io::write_atomic(&dir.join("curve.svg"), svg(done, what).as_bytes()).map_err(|e| format!("writing curve.svg: {e}"))
}

/// The pentanomial Elo and its 95 % half-width; a series that scored no point (or every point)
/// has no finite estimate, and the regularised one (about ∓1,700) would read as a measurement.
fn elo(p: &Pentanomial) -> String {
    let pairs: u64 = p.0.iter().sum();
    if pairs > 0 && p.0[0] == pairs {
        return "−inf (no point)".into();
    }
    if pairs > 0 && p.0[4] == pairs {
        return "+inf (every point)".into();
    }
    match p.estimate() {
        Some(e) if e.elo.is_finite() => format!("{:+.0} ± {:.0}", e.elo, e.error_bar()),
        Some(e) => format!("{}", if e.elo > 0.0 { "+inf" } else { "-inf" }),
        None => "–".into(),
    }
}

/// The table: per point, the interval's W-D-L and Elo, and the cumulative wins (Table 1's
/// figure) with the cumulative Elo.
pub fn table(done: &[Done], what: &str) -> String {
    let mut s = format!("{what}\n\n| series | training games | test games | W-D-L | Elo (pentanomial, 95 %) | cumulative wins / games | cumulative Elo |\n|---|---:|---:|---|---:|---:|---:|\n");
    let mut series: Vec<&str> = Vec::new();
    for d in done {
        if !series.contains(&d.point.series.as_str()) {
            series.push(&d.point.series);
        }
    }
    for name in series {
        let (mut wdl, mut penta) = (Wdl::default(), Pentanomial::default());
        for d in done.iter().filter(|d| d.point.series == name) {
            wdl.wins += d.wdl.wins;
            wdl.draws += d.wdl.draws;
            wdl.losses += d.wdl.losses;
            for k in 0..5 {
                penta.0[k] += d.penta.0[k];
            }
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {}-{}-{} | {} | {} / {} | {} |",
                d.point.trained,
                d.wdl.games(),
                d.wdl.wins,
                d.wdl.draws,
                d.wdl.losses,
                elo(&d.penta),
                wdl.wins,
                wdl.games(),
                elo(&penta)
            );
        }
    }
    s
}

/// Cumulative wins against training games, one line per series.
pub fn svg(done: &[Done], what: &str) -> String {
    const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
    let (w, h) = (640.0, 380.0);
    let (x0, y0, x1, y1) = (60.0, 50.0, w - 30.0, h - 50.0);
    let mut series: Vec<(String, Vec<(u64, u64)>)> = Vec::new();
    for d in done {
        let i = match series.iter().position(|(n, _)| *n == d.point.series) {
            Some(i) => i,
            None => {
                series.push((d.point.series.clone(), vec![(0, 0)]));
                series.len() - 1
            }
        };
        let last = series[i].1.last().map_or(0, |p| p.1);
        series[i].1.push((d.point.trained, last + d.wdl.wins));
    }
    let xmax = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).max().unwrap_or(1).max(1) as f64;
    let ymax = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)).max().unwrap_or(1).max(1) as f64;
    let xs = |x: f64| x0 + (x1 - x0) * x / xmax;
    let ys = |y: f64| y1 - (y1 - y0) * y / ymax;
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#);
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="10" y="18" font-size="13">cumulative wins against training games</text>"#);
    let _ = writeln!(s, r#"<text x="10" y="34" font-size="10">{}</text>"#, escape(what));
    let _ = writeln!(s, r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#999"/>"##, x1 - x0, y1 - y0);
    let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, x0 - 4.0, y0 + 8.0, ymax);
    let _ = writeln!(s, r#"<text x="{}" y="{y1}" text-anchor="end">0</text>"#, x0 - 4.0);
    let _ = writeln!(s, r#"<text x="{x0}" y="{}">0</text>"#, y1 + 14.0);
    let _ = writeln!(s, r#"<text x="{x1}" y="{}" text-anchor="end">{} training games</text>"#, y1 + 14.0, xmax);
    for (k, (name, pts)) in series.iter().enumerate() {
        let c = COLOURS[k % COLOURS.len()];
        let line: Vec<String> = pts.iter().map(|&(x, y)| format!("{:.1},{:.1}", xs(x as f64), ys(y as f64))).collect();
        let _ = writeln!(s, r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#, line.join(" "));
        for &(x, y) in &pts[1..] {
            let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{c}"/>"#, xs(x as f64), ys(y as f64));
        }
        let last = pts.last().map_or(0, |p| p.1);
        let _ = writeln!(s, r#"<text x="{}" y="{}" fill="{c}">{} ({last})</text>"#, x0 + 8.0, y0 + 14.0 + 14.0 * k as f64, escape(name));
    }
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_and_intervals_follow_the_series() {
        let text = "# comment\nbp 100 a.dcw\nbp 200 b.dcw\n\nebnn 100 c.dcw\nebnn 300 d.dcw\n";
        let p = parse_points(text, "list").unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(test_games(&p, 1.0), vec![100, 100, 100, 200]);
        assert_eq!(test_games(&p, 0.25), vec![26, 26, 26, 50], "whole pairs");
        for (bad, want) in [
            ("bp 100\n", "line 1: want 'SERIES GAMES NET'"),
            ("bp x a\n", "line 1: 'x' is not a positive"),
            ("bp 200 a\nbp 100 b\n", "line 2: series bp: points must grow"),
            ("b/p 100 a\n", "series 'b/p'"),
            ("# nothing\n", "no points"),
        ] {
            let e = parse_points(bad, "list").unwrap_err();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_table_counts_wins_cumulatively() {
        let d = |series: &str, trained, w, dr, l, penta: [u64; 5]| Done {
            point: Point { series: series.into(), trained, net: "n".into() },
            wdl: Wdl { wins: w, draws: dr, losses: l },
            penta: Pentanomial(penta),
            pgn_end: None,
        };
        let done = vec![d("bp", 100, 3, 1, 6, [2, 1, 1, 1, 0]), d("bp", 200, 4, 2, 4, [1, 1, 1, 1, 1])];
        let t = table(&done, "x");
        assert!(t.contains("| bp | 100 | 10 | 3-1-6 |"), "{t}");
        assert!(t.contains("| 7 / 20 |"), "{t}");
        let line = done[1].line();
        let body = crate::io::checksum::unseal_line(line.trim_end()).unwrap();
        assert_eq!(Done::parse(body).unwrap(), done[1]);
        assert!(svg(&done, "x").contains("bp (7)"));
        // No point scored: no finite Elo, said so, not the regularised estimate.
        let lost = vec![d("gnu", 100, 0, 0, 10, [5, 0, 0, 0, 0]), d("gnu", 200, 0, 1, 9, [4, 1, 0, 0, 0])];
        let t = table(&lost, "x");
        assert!(t.contains("| gnu | 100 | 10 | 0-0-10 | −inf (no point) | 0 / 10 | −inf (no point) |"), "{t}");
        assert!(t.contains("| gnu | 200 | 10 | 0-1-9 | -"), "{t}");
    }
}
