//! Progress on stderr, a per-epoch CSV log, and an SVG plot of the curves (hand-written).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One epoch's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub phase: String,
    pub epoch: usize,
    pub lr: f32,
    pub loss: f64,
    pub train_acc: f64,
    pub val_acc: f64,
    pub seconds: f64,
    /// Samples (positions or pairs) per second.
    pub rate: f64,
}

const HEADER: &str = "phase,epoch,lr,loss,train_acc,val_acc,seconds,rate";

/// The run's log: `log.csv` and `curves.svg` in the run folder.
pub struct Log {
    dir: PathBuf,
    pub rows: Vec<Row>,
    /// The last line of `log.csv` as read when the file ended inside it (no newline: a copy
    /// cut short, a full disk; the log itself is replaced whole on every write). Dropped
    /// from `rows`: its epoch's rows come back from the checkpoint ([`Log::restore`]) or are
    /// logged again when the epoch is.
    pub torn: Option<String>,
}

impl Log {
    /// Opens the log of a run folder, keeping earlier rows (a resumed run appends). Only a
    /// missing log starts afresh: one that cannot be read is an error, since the next epoch
    /// would replace it. A last line cut short is dropped, with a note on stderr.
    pub fn open(dir: &Path) -> Result<Log, String> {
        let mut rows = Vec::new();
        let mut torn = None;
        let path = dir.join("log.csv");
        let text = match crate::io::files::read_regular(&path, 64 << 20, "training log") {
            Ok(b) => Some(String::from_utf8(b).map_err(|_| format!("{}: not UTF-8 text", path.display()))?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        if let Some(mut text) = text {
            // Every line is written with its newline, so one without it was cut: even when
            // it still splits into eight fields, the last of them may have lost digits.
            if !text.is_empty() && !text.ends_with('\n') {
                let at = text.rfind('\n').map_or(0, |i| i + 1);
                let line = text.split_off(at);
                eprintln!("note: {}: its last line is cut short ('{}'): dropped; its epoch's rows are restored from the checkpoint or logged again", path.display(), line.escape_debug());
                torn = Some(line);
            }
            rows.extend(text.lines().skip(1).filter_map(parse_line));
        }
        Ok(Log { dir: dir.to_path_buf(), rows, torn })
    }

    /// Records an epoch (replacing a row of the same phase and epoch from an interrupted
    /// run), rewrites the CSV and the SVG atomically.
    pub fn push(&mut self, mut row: Row) -> std::io::Result<()> {
        // Kept as the CSV holds it: a resumed run reads earlier rows back from the CSV, and
        // its curves.svg must be the uninterrupted run's to the byte.
        let rounded = |v: f64, decimals: usize| format!("{v:.decimals$}").parse().unwrap_or(v);
        row.loss = rounded(row.loss, 6);
        row.train_acc = rounded(row.train_acc, 5);
        row.val_acc = rounded(row.val_acc, 5);
        row.seconds = rounded(row.seconds, 2);
        row.rate = rounded(row.rate, 1);
        self.rows.retain(|r| !(r.phase == row.phase && r.epoch == row.epoch));
        self.rows.push(row);
        self.write()
    }

    /// Puts back the rows of the unit (epoch, batch) a checkpoint closed, as it recorded them
    /// ([`unit_text`]), where the log lacks them (its last line was cut, or the file lost its
    /// end): the log must be the uninterrupted run's, and a resume starts after that unit.
    /// Rows still there keep their wall-clock figures; restored ones have none (NaN). The
    /// files are rewritten when a row came back or a cut line was dropped.
    pub fn restore(&mut self, unit: &str) -> std::io::Result<()> {
        let want = rows_from_unit_text(unit);
        let has = |r: &Row, rows: &[Row]| rows.iter().any(|x| x.phase == r.phase && x.epoch == r.epoch);
        let missing = want.iter().any(|r| !has(r, &self.rows));
        if missing {
            // The unit's rows in the order logged, each the log's own where it has it, put
            // where the first of them stood (they are the last rows a checkpoint follows).
            let at = self.rows.iter().position(|r| has(r, &want)).unwrap_or(self.rows.len());
            let unit: Vec<Row> = want.into_iter().map(|w| self.rows.iter().find(|r| r.phase == w.phase && r.epoch == w.epoch).cloned().unwrap_or(w)).collect();
            self.rows.retain(|r| !has(r, &unit));
            let at = at.min(self.rows.len());
            self.rows.splice(at..at, unit);
        }
        if missing || self.torn.take().is_some() {
            self.write()?;
        }
        Ok(())
    }

    fn write(&self) -> std::io::Result<()> {
        let mut csv = String::from(HEADER);
        csv.push('\n');
        for r in &self.rows {
            csv.push_str(&csv_line(r));
            csv.push('\n');
        }
        crate::io::write_atomic(&self.dir.join("log.csv"), csv.as_bytes())?;
        crate::io::write_atomic(&self.dir.join("curves.svg"), svg(&self.rows).as_bytes())
    }
}

/// A row as a line of `log.csv` (no newline).
fn csv_line(r: &Row) -> String {
    format!("{},{},{},{:.6},{:.5},{:.5},{:.2},{:.1}", r.phase, r.epoch, r.lr, r.loss, r.train_acc, r.val_acc, r.seconds, r.rate)
}

/// A line of `log.csv` as a row (`None`: not eight fields). Figures that do not parse are
/// NaN, as the log writes a figure not measured.
fn parse_line(line: &str) -> Option<Row> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 8 {
        return None;
    }
    let num = |i: usize| f[i].parse::<f64>().unwrap_or(f64::NAN);
    Some(Row { phase: f[0].to_string(), epoch: f[1].parse().unwrap_or(0), lr: num(2) as f32, loss: num(3), train_acc: num(4), val_acc: num(5), seconds: num(6), rate: num(7) })
}

/// The rows of one unit (epoch, batch) as a checkpoint records them: their `log.csv` lines
/// less the two wall-clock columns (a checkpoint is the same bytes in every run), joined by
/// "; " (no phase name holds one).
pub fn unit_text(rows: &[Row]) -> String {
    rows.iter().map(|r| csv_line(r).rsplitn(3, ',').nth(2).unwrap_or_default().to_string()).collect::<Vec<_>>().join("; ")
}

/// [`unit_text`] read back, the wall-clock columns NaN (not measured by this process).
fn rows_from_unit_text(text: &str) -> Vec<Row> {
    text.split("; ").filter(|l| !l.is_empty()).filter_map(|l| parse_line(&format!("{l},NaN,NaN"))).collect()
}

/// A progress line with rate and ETA, redrawn at most a few times per second.
pub struct Progress {
    label: String,
    total: usize,
    start: Instant,
    last: Instant,
}

impl Progress {
    pub fn new(label: String, total: usize) -> Progress {
        let now = Instant::now();
        Progress { label, total, start: now, last: now }
    }

    pub fn update(&mut self, done: usize, loss: f64, acc: Option<f64>, unit: &str) {
        if self.last.elapsed().as_millis() < 250 && done < self.total {
            return;
        }
        self.last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = done as f64 / secs;
        let eta = (self.total.saturating_sub(done)) as f64 / rate.max(1e-9);
        let acc = acc.map(|a| format!(" acc {:.1}%", 100.0 * a)).unwrap_or_default();
        let loss = if loss.is_finite() { format!(" loss {loss:.4}") } else { String::new() };
        eprint!("\r{} {}/{}{loss}{acc} {rate:.0} {unit}/s ETA {}   ", self.label, done, self.total, fmt_secs(eta));
        let _ = std::io::stderr().flush();
    }

    pub fn finish(&self) {
        eprintln!();
    }

    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

pub fn fmt_secs(s: f64) -> String {
    if !s.is_finite() {
        return "?".into();
    }
    let s = s as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// Whether `phase` is a second validation accuracy of another phase (`NAME.LABEL` rows with
/// nothing but a validation figure, `EpochStats::aux_val`): drawn in its parent's panel.
fn overlay_of<'a>(phase: &'a str, rows: &[Row]) -> Option<&'a str> {
    let (parent, _) = phase.rsplit_once('.')?;
    let own = || rows.iter().filter(|r| r.phase == phase);
    let only_val = own().all(|r| !r.loss.is_finite() && !r.train_acc.is_finite() && r.val_acc.is_finite());
    (only_val && rows.iter().any(|r| r.phase == parent)).then_some(parent)
}

/// One panel per phase: loss (blue, own scale) and train/validation accuracy (orange/green,
/// 50–100 %) against epoch; a second validation accuracy of a phase (another protocol) in
/// purple in the same panel, so that where the two part shows.
pub fn svg(rows: &[Row]) -> String {
    let mut phases: Vec<&str> = Vec::new();
    let mut overlays: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if phases.contains(&r.phase.as_str()) || overlays.iter().any(|(o, _)| *o == r.phase) {
            continue;
        }
        match overlay_of(&r.phase, rows) {
            Some(parent) => overlays.push((&r.phase, parent)),
            None => phases.push(&r.phase),
        }
    }
    let (pw, ph, cols) = (360.0, 220.0, 2usize);
    let nrows = phases.len().div_ceil(cols).max(1);
    let (w, h) = (pw * cols as f64 + 20.0, ph * nrows as f64 + 40.0);
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#);
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r##"<text x="10" y="18" font-size="14">deepchess training: loss (blue), train accuracy (orange), validation accuracy (green)</text>"##);
    for (pi, phase) in phases.iter().enumerate() {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.phase == *phase).collect();
        let (ox, oy) = (10.0 + pw * (pi % cols) as f64, 30.0 + ph * (pi / cols) as f64);
        let (x0, y0, x1, y1) = (ox + 45.0, oy + 20.0, ox + pw - 45.0, oy + ph - 30.0);
        let _ = writeln!(s, r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#999"/>"##, x1 - x0, y1 - y0);
        let _ = writeln!(s, r#"<text x="{x0}" y="{}" font-weight="bold">{phase}</text>"#, y0 - 5.0);
        let emax = rs.iter().map(|r| r.epoch).max().unwrap_or(1).max(1) as f64;
        let emin = rs.iter().map(|r| r.epoch).min().unwrap_or(0) as f64;
        let xs = |e: usize| x0 + (x1 - x0) * if emax > emin { (e as f64 - emin) / (emax - emin) } else { 0.5 };
        let finite: Vec<f64> = rs.iter().map(|r| r.loss).filter(|v| v.is_finite()).collect();
        let (lmin, lmax) = finite.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let line = |vals: Vec<(usize, f64)>, ys: &dyn Fn(f64) -> f64, color: &str, s: &mut String| {
            let pts: Vec<String> = vals.iter().filter(|(_, v)| v.is_finite()).map(|&(e, v)| format!("{:.1},{:.1}", xs(e), ys(v))).collect();
            if !pts.is_empty() {
                let _ = writeln!(s, r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/>"#, pts.join(" "));
                if pts.len() == 1 {
                    let (x, y) = pts[0].split_once(',').unwrap();
                    let _ = writeln!(s, r#"<circle cx="{x}" cy="{y}" r="2.5" fill="{color}"/>"#);
                }
            }
        };
        if !finite.is_empty() {
            let span = (lmax - lmin).max(1e-12);
            let ys = move |v: f64| y1 - (y1 - y0) * (v - lmin) / span;
            line(rs.iter().map(|r| (r.epoch, r.loss)).collect(), &ys, "#1f77b4", &mut s);
            let _ = writeln!(s, r##"<text x="{}" y="{}" fill="#1f77b4" text-anchor="end">{:.3}</text>"##, x0 - 3.0, y0 + 8.0, lmax);
            let _ = writeln!(s, r##"<text x="{}" y="{}" fill="#1f77b4" text-anchor="end">{:.3}</text>"##, x0 - 3.0, y1, lmin);
        }
        let ya = |v: f64| y1 - (y1 - y0) * ((v - 0.5) / 0.5).clamp(0.0, 1.0);
        line(rs.iter().map(|r| (r.epoch, r.train_acc)).collect(), &ya, "#ff7f0e", &mut s);
        line(rs.iter().map(|r| (r.epoch, r.val_acc)).collect(), &ya, "#2ca02c", &mut s);
        for (k, (name, _)) in overlays.iter().filter(|(_, p)| p == phase).enumerate() {
            let os: Vec<&Row> = rows.iter().filter(|r| r.phase == *name).collect();
            line(os.iter().map(|r| (r.epoch, r.val_acc)).collect(), &ya, "#9467bd", &mut s);
            if let Some(last) = os.last() {
                let label = name.rsplit_once('.').map_or(*name, |(_, l)| l);
                let _ = writeln!(s, r##"<text x="{}" y="{}" fill="#9467bd" text-anchor="end">{label} {:.1}%</text>"##, x1 - 3.0, y1 - 18.0 - 13.0 * k as f64, 100.0 * last.val_acc);
            }
        }
        if rs.iter().any(|r| r.val_acc.is_finite() || r.train_acc.is_finite()) {
            let _ = writeln!(s, r##"<text x="{}" y="{}" fill="#2ca02c">100%</text>"##, x1 + 3.0, y0 + 8.0);
            let _ = writeln!(s, r##"<text x="{}" y="{}" fill="#2ca02c">50%</text>"##, x1 + 3.0, y1);
            if let Some(last) = rs.iter().rev().find(|r| r.val_acc.is_finite()) {
                let _ = writeln!(s, r##"<text x="{}" y="{}" fill="#2ca02c" text-anchor="end">val {:.1}%</text>"##, x1 - 3.0, y1 - 5.0, 100.0 * last.val_acc);
            }
        }
        let _ = writeln!(s, r#"<text x="{x0}" y="{}">epoch {}</text>"#, y1 + 14.0, emin as usize);
        let _ = writeln!(s, r#"<text x="{x1}" y="{}" text-anchor="end">{}</text>"#, y1 + 14.0, emax as usize);
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(phase: &str, epoch: usize, loss: f64, train: f64, val: f64) -> Row {
        Row { phase: phase.into(), epoch, lr: 0.1, loss, train_acc: train, val_acc: val, seconds: 1.0, rate: 1.0 }
    }

    /// A resumed run reads earlier rows back from log.csv; the curves it draws must be the
    /// uninterrupted run's, whatever digits the CSV dropped.
    #[test]
    fn curves_drawn_from_memory_equal_curves_drawn_from_the_csv() {
        let dir = std::env::temp_dir().join(format!("deepchess-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut log = Log::open(&dir).unwrap();
        for (e, loss) in [(1, 0.185_141_234_5), (2, 0.004_703_999_9), (3, 0.000_065_5)] {
            log.push(Row { phase: "p".into(), epoch: e, lr: 0.001, loss, train_acc: 0.917_414_9, val_acc: 1.0 / 3.0, seconds: 1.234_5, rate: 1234.56 }).unwrap();
        }
        let reread = Log::open(&dir).unwrap();
        assert_eq!(log.rows, reread.rows);
        assert_eq!(svg(&log.rows), svg(&reread.rows));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A log cut inside its last line loses that row on reading; the checkpoint's copy of
    /// its unit's rows puts it back in its place, the rows still there untouched.
    #[test]
    fn a_cut_last_line_is_dropped_and_restored_from_the_units_rows() {
        let dir = std::env::temp_dir().join(format!("deepchess-log-cut-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut log = Log::open(&dir).unwrap();
        for e in 1..=2 {
            log.push(row("p", e, 0.5 / e as f64, 0.6, 0.7)).unwrap();
            log.push(row("p.gap", e, 0.1, f64::NAN, f64::NAN)).unwrap();
        }
        let unit = unit_text(&log.rows[2..]);
        assert_eq!(unit, "p,2,0.1,0.250000,0.60000,0.70000; p.gap,2,0.1,0.100000,NaN,NaN");
        let text = std::fs::read_to_string(dir.join("log.csv")).unwrap();
        std::fs::write(dir.join("log.csv"), &text[..text.len() - 12]).unwrap();
        let figures = |rows: &[Row]| rows.iter().map(|r| (r.phase.clone(), r.epoch, r.loss.to_bits(), r.train_acc.to_bits(), r.val_acc.to_bits())).collect::<Vec<_>>();
        let mut cut = Log::open(&dir).unwrap();
        assert_eq!(figures(&cut.rows), figures(&log.rows[..3]));
        assert!(cut.torn.as_deref().is_some_and(|t| t.starts_with("p.gap,2,")), "{:?}", cut.torn);
        cut.restore(&unit).unwrap();
        let again = Log::open(&dir).unwrap();
        assert!(again.torn.is_none());
        assert_eq!(figures(&again.rows), figures(&log.rows));
        assert_eq!(again.rows[2], log.rows[2], "a row still there keeps its wall clock");
        assert!(again.rows[3].seconds.is_nan(), "a restored row's time was not measured here");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_second_validation_curve_shares_its_phase_panel() {
        let nan = f64::NAN;
        let rows = vec![
            row("cnn", 1, 0.6, 0.6, 0.66),
            row("cnn.valid_positions", 1, nan, nan, 0.67),
            row("cnn", 2, 0.5, 0.7, 0.70),
            row("cnn.valid_positions", 2, nan, nan, 0.71),
            // An auxiliary figure with a value of its own keeps its panel (the RBM's gap).
            row("rbm.0", 1, 0.02, nan, nan),
            row("rbm.0.fe_gap", 1, 0.5, nan, nan),
        ];
        let s = svg(&rows);
        let panels: Vec<&str> = s.lines().filter(|l| l.contains(r#"font-weight="bold""#)).collect();
        assert_eq!(panels.len(), 3, "{panels:?}");
        assert!(!panels.iter().any(|p| p.contains("valid_positions")));
        assert!(panels.iter().any(|p| p.contains("rbm.0.fe_gap")));
        assert_eq!(s.matches("#9467bd\" stroke-width").count(), 1, "one purple curve");
        assert!(s.contains("valid_positions 71.0%"));
    }
}
