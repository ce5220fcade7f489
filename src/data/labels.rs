//! Labelled positions (seed 001, section III.A): each position of a game with the game's
//! result and an engine score, both from White's side. The deep belief network evaluators
//! learn the result (three classes), the score clipped to ±300 (regression) and the score in
//! seven classes, which that system computes from the score: it is not stored.
//!
//! The file is text CSV, optionally xz-compressed (a path ending in `.xz`):
//! ```text
//! # format=deepchess labelled positions 1
//! # engine=Stockfish 15.1
//! # ...                       (provenance: `# key=value`, in the order written)
//! game,ply,result,score,fen
//! 17,42,1/2-1/2,-34,r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 3 9
//! 17,57,1/2-1/2,#-4,...
//! ```
//! - `game`: the 1-based number of the game in the concatenated sources, skipped games
//!   counted (as `data::build` numbers `Record::game`); `ply`: the number of half-moves
//!   played from the game's start before the position.
//! - `result`: `1-0`, `1/2-1/2` or `0-1`, the game's result.
//! - `score`: centipawns from White's side (`34`, `-120`), or a mate: `#N` White mates in N
//!   moves, `#-N` Black mates in N. `#0` is refused: a position without a legal move
//!   (checkmate, stalemate) is never labelled, and a row holding one is refused too.
//! - `fen`: the full FEN (board, side, castling, en passant, clocks).
//!
//! `#` lines before the header are provenance `# key=value` (a `#` line without `=` is a
//! free comment); a `count` key, when present, must equal the number of rows (a cut file is
//! refused). A `(game, ply)` pair appears once. Loading is bounded and never panics: every
//! error names the file, the line and the field.

use super::dataset::Record;
use crate::io::atomic::write_atomic;
use crate::chess::game::Outcome;
use crate::chess::pgn::Score;
use crate::chess::{Color, Position};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// The header line.
pub const HEADER: &str = "game,ply,result,score,fen";
/// The `format` value this code writes.
pub const FORMAT: &str = "deepchess labelled positions 1";
/// Largest file read, compressed or not, and largest decompressed text (millions of rows).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// A game's result from White's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wdl {
    Loss,
    Draw,
    Win,
}

impl Wdl {
    pub const ALL: [Wdl; 3] = [Wdl::Loss, Wdl::Draw, Wdl::Win];

    pub fn from_outcome(o: Outcome) -> Wdl {
        match o {
            Outcome::Win(Color::White) => Wdl::Win,
            Outcome::Win(Color::Black) => Wdl::Loss,
            Outcome::Draw => Wdl::Draw,
        }
    }

    /// The PGN token: `1-0`, `1/2-1/2`, `0-1`.
    pub fn pgn(self) -> &'static str {
        match self {
            Wdl::Win => "1-0",
            Wdl::Draw => "1/2-1/2",
            Wdl::Loss => "0-1",
        }
    }

    pub fn from_pgn(s: &str) -> Option<Wdl> {
        Outcome::from_pgn(s).map(Wdl::from_outcome)
    }

    /// Class index: Loss 0, Draw 1, Win 2.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// An engine's score from White's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineScore {
    /// Centipawns, positive when White is better.
    Cp(i32),
    /// Mate in n moves (never 0): positive when White mates, negative when Black does.
    Mate(i32),
}

impl EngineScore {
    /// A UCI score (from the side to move, `mover`) seen from White's side.
    pub fn from_mover(score: Score, mover: Color) -> EngineScore {
        let sign = if mover == Color::White { 1 } else { -1 };
        match score {
            Score::Cp(c) => EngineScore::Cp(c.saturating_mul(sign)),
            Score::Mate(m) => EngineScore::Mate(m.saturating_mul(sign)),
        }
    }

    /// Centipawns clipped to ±`limit`; a mate is ±`limit` (seed 001 regresses on ±300).
    pub fn clipped(self, limit: i32) -> i32 {
        match self {
            EngineScore::Cp(c) => c.clamp(-limit, limit),
            EngineScore::Mate(m) if m > 0 => limit,
            EngineScore::Mate(_) => -limit,
        }
    }

    /// Parses `34`, `-120`, `#3`, `#-2` (a leading `+` is accepted); `#0` is refused.
    pub fn parse(s: &str) -> Result<EngineScore, String> {
        let int = |t: &str| -> Option<i32> {
            let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        };
        if let Some(m) = s.strip_prefix('#') {
            return match int(m) {
                Some(0) => Err("#0 is no score: a position without a legal move is never labelled".into()),
                Some(n) => Ok(EngineScore::Mate(n)),
                None => Err(format!("expected a mate #N or #-N, found \"{}\"", shown(s))),
            };
        }
        int(s).map(EngineScore::Cp).ok_or_else(|| format!("expected an integer or #N, found \"{}\"", shown(s)))
    }
}

/// `34`, `-120`, `#3`, `#-2`.
impl fmt::Display for EngineScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineScore::Cp(c) => write!(f, "{c}"),
            EngineScore::Mate(m) => write!(f, "#{m}"),
        }
    }
}

/// One labelled position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Labelled {
    pub game: u32,
    pub ply: u16,
    pub result: Wdl,
    pub score: EngineScore,
    pub pos: Position,
}

impl Labelled {
    /// The position as the compact record encoders read (`planes()`, `castling()`). Its
    /// `label` byte is 1 for a White win and 0 otherwise (a draw too): take the result from
    /// `self.result`.
    pub fn record(&self) -> Record {
        Record::new(&self.pos, self.result == Wdl::Win, self.ply, self.game)
    }

    /// The CSV row, without its newline.
    pub fn row(&self) -> String {
        format!("{},{},{},{},{}", self.game, self.ply, self.result.pgn(), self.score, self.pos.fen())
    }

    /// Parses a CSV row; the error names the field (`score: expected ...`).
    pub fn parse_row(line: &str) -> Result<Labelled, String> {
        let fields: Vec<&str> = line.splitn(5, ',').collect();
        if fields.len() < 5 {
            return Err(format!("row: expected 5 fields {HEADER}, found {} in \"{}\"", fields.len(), shown(line)));
        }
        let game = fields[0].parse::<u32>().ok().filter(|_| plain_digits(fields[0])).ok_or_else(|| {
            format!("game: expected a game number 0..={}, found \"{}\"", u32::MAX, shown(fields[0]))
        })?;
        let ply = fields[1].parse::<u16>().ok().filter(|_| plain_digits(fields[1])).ok_or_else(|| {
            format!("ply: expected a ply 0..={}, found \"{}\"", u16::MAX, shown(fields[1]))
        })?;
        let result = Wdl::from_pgn(fields[2])
            .ok_or_else(|| format!("result: expected 1-0, 1/2-1/2 or 0-1, found \"{}\"", shown(fields[2])))?;
        let score = EngineScore::parse(fields[3]).map_err(|e| format!("score: {e}"))?;
        let pos = Position::from_fen(fields[4]).map_err(|e| format!("fen: {e} in \"{}\"", shown(fields[4])))?;
        if !pos.has_legal_move() {
            return Err("fen: no legal move (checkmate or stalemate): such positions are never labelled".into());
        }
        Ok(Labelled { game, ply, result, score, pos })
    }
}

fn plain_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// Text for a message: at most 60 characters, control characters escaped.
fn shown(s: &str) -> String {
    crate::io::text::cut(s, 60)
}

/// A labelled set: provenance and positions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSet {
    pub meta: Vec<(String, String)>,
    pub items: Vec<Labelled>,
}

impl LabelSet {
    pub fn meta(&self, key: &str) -> Option<&str> {
        super::dataset::meta_get(&self.meta, key)
    }

    pub fn set_meta(&mut self, key: &str, value: impl Into<String>) {
        super::dataset::meta_set(&mut self.meta, key, value.into())
    }

    /// Positions per result: `[losses, draws, wins]` (indexed by `Wdl::index`).
    pub fn wdl_counts(&self) -> [usize; 3] {
        let mut n = [0; 3];
        for it in &self.items {
            n[it.result.index()] += 1;
        }
        n
    }

    /// The file's text: provenance lines, the header, one row per item.
    pub fn to_csv(&self) -> String {
        let mut s = meta_lines(&self.meta);
        s.push_str(HEADER);
        s.push('\n');
        for it in &self.items {
            s.push_str(&it.row());
            s.push('\n');
        }
        s
    }

    /// Parses the file's text. Errors read `LINE: FIELD: what` (1-based line).
    pub fn from_csv(bytes: &[u8]) -> Result<LabelSet, String> {
        let mut set = LabelSet::default();
        let mut header = false;
        let mut seen: HashMap<(u32, u16), usize> = HashMap::new();
        let mut n = 0;
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            n = i + 1;
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let line = std::str::from_utf8(raw).map_err(|e| format!("{n}: line: not UTF-8 text (byte {})", e.valid_up_to()))?;
            if line.trim().is_empty() {
                continue;
            }
            if !header {
                if let Some(c) = line.strip_prefix('#') {
                    if let Some((k, v)) = c.split_once('=') {
                        set.meta.push((k.trim().to_string(), v.to_string()));
                    }
                    continue;
                }
                if line.trim() != HEADER {
                    return Err(format!("{n}: header: expected \"{HEADER}\", found \"{}\"", shown(line)));
                }
                header = true;
                continue;
            }
            let it = Labelled::parse_row(line).map_err(|e| format!("{n}: {e}"))?;
            if let Some(first) = seen.insert((it.game, it.ply), n) {
                return Err(format!("{n}: row: game {} ply {} appears twice (first on line {first})", it.game, it.ply));
            }
            set.items.push(it);
        }
        if !header {
            return Err(format!("{n}: header: no \"{HEADER}\" line (empty, cut, or not a labelled set)"));
        }
        if let Some(c) = set.meta("count") {
            let want: usize =
                c.trim().parse().map_err(|_| format!("{n}: count: the provenance says \"{}\", not a number", shown(c)))?;
            if want != set.items.len() {
                return Err(format!("{n}: count: the provenance says {want} rows, the file has {} (cut or edited?)", set.items.len()));
            }
        }
        Ok(set)
    }

    /// Loads a set (`*.xz` decompressed with `xz -dc`). Errors name the file, then the line
    /// and field: `labels.csv:1234: score: expected an integer or #N, found "abc"`.
    pub fn load(path: &Path) -> Result<LabelSet, String> {
        let bytes = read_text(path)?;
        LabelSet::from_csv(&bytes).map_err(|e| format!("{}:{e}", path.display()))
    }

    /// Writes atomically (temporary file, sync, rename); `*.xz` is compressed with
    /// `xz -9e -T1`, whose output is the same on every run.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = self.to_csv();
        let bytes = if is_xz(path) { crate::io::xz::compress(&["-9e", "-T1", "-c"], text.into_bytes()).map_err(|e| format!("{}: {e}", path.display()))? } else { text.into_bytes() };
        write_atomic(path, &bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
    }
}

/// Provenance lines `# key=value\n`, newlines in keys and values replaced by spaces.
pub fn meta_lines(meta: &[(String, String)]) -> String {
    let mut s = String::new();
    for (k, v) in meta {
        s.push_str(&format!("# {}={}\n", k.replace(['\n', '\r', '='], " "), v.replace(['\n', '\r'], " ")));
    }
    s
}

fn is_xz(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "xz")
}

/// The bytes of a set's file, decompressed when it ends in `.xz`; a regular file of at most
/// [`MAX_FILE_BYTES`], and as much text after decompression.
pub fn read_text(path: &Path) -> Result<Vec<u8>, String> {
    let fail = |e: String| format!("{}: {e}", path.display());
    let what = "labelled set";
    if !is_xz(path) {
        return crate::io::files::read_regular(path, MAX_FILE_BYTES, what).map_err(|e| fail(format!("cannot read: {e}")));
    }
    // The checked file itself is xz's input, so what is decompressed is what was checked.
    let file = crate::io::files::open_regular(path, MAX_FILE_BYTES, what).map_err(|e| fail(format!("cannot read: {e}")))?;
    crate::io::xz::decompress_bounded(file, MAX_FILE_BYTES, what).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_and_print() {
        for (s, v) in [("34", EngineScore::Cp(34)), ("-120", EngineScore::Cp(-120)), ("#3", EngineScore::Mate(3)), ("#-2", EngineScore::Mate(-2))] {
            assert_eq!(EngineScore::parse(s).unwrap(), v);
            assert_eq!(v.to_string(), s);
        }
        assert_eq!(EngineScore::parse("+7").unwrap(), EngineScore::Cp(7));
        for bad in ["", "abc", "1.5", "#", "#x", "--3", "99999999999", " 3"] {
            assert!(EngineScore::parse(bad).is_err(), "{bad}");
        }
        assert!(EngineScore::parse("#0").unwrap_err().contains("never labelled"));
        assert_eq!(EngineScore::from_mover(Score::Cp(42), Color::Black), EngineScore::Cp(-42));
        assert_eq!(EngineScore::from_mover(Score::Mate(-3), Color::Black), EngineScore::Mate(3));
        assert_eq!(EngineScore::from_mover(Score::Mate(2), Color::White), EngineScore::Mate(2));
        assert_eq!(EngineScore::Cp(-450).clipped(300), -300);
        assert_eq!(EngineScore::Mate(-1).clipped(300), -300);
        assert_eq!(EngineScore::Cp(12).clipped(300), 12);
    }

    #[test]
    fn rows_round_trip_and_name_their_field() {
        let pos = Position::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").unwrap();
        let it = Labelled { game: 7, ply: 4, result: Wdl::Draw, score: EngineScore::Mate(-5), pos };
        assert_eq!(Labelled::parse_row(&it.row()).unwrap(), it);
        let r = it.record();
        assert_eq!((r.game, r.ply, r.label, r.castling()), (7, 4, 0, 15));
        let row = |f: &str| Labelled::parse_row(f).unwrap_err();
        assert!(row("1,2,1-0").starts_with("row:"));
        assert!(row("x,2,1-0,3,8/8/8/8/8/8/8/8 w - - 0 1").starts_with("game:"));
        assert!(row("1,70000,1-0,3,8/8/8/8/8/8/8/8 w - - 0 1").starts_with("ply:"));
        assert!(row("1,2,1-1,3,8/8/8/8/8/8/8/8 w - - 0 1").starts_with("result:"));
        assert!(row("1,2,1-0,abc,8/8/8/8/8/8/8/8 w - - 0 1").starts_with("score: expected an integer or #N, found \"abc\""));
        assert!(row("1,2,1-0,3,8/8/8/8/8/8/8/8 w - - 0 1").starts_with("fen:"));
        // Fool's mate: White is mated.
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        assert!(row(&format!("1,4,0-1,-5,{mated}")).contains("no legal move"));
    }
}
