//! PGN export format: the Seven Tag Roster first, then other tags, movetext wrapped at 80
//! columns, `N...` after a comment on a White move, the result token, a blank line.

use super::PgnGame;
use crate::chess::position::Position;
use crate::chess::types::Color;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Movetext lines are at most this wide (a single longer word gets a line of its own).
pub const MAX_COLUMNS: usize = 80;

const ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Writes one game followed by a blank line. The `Result` tag is written from
/// `game.result`, and `FEN` from `game.start` (with `SetUp "1"` if not the usual start).
/// Fails with `InvalidInput` if a move is illegal, writing nothing.
pub fn write_game<W: Write + ?Sized>(w: &mut W, game: &PgnGame) -> io::Result<()> {
    let mut out = String::with_capacity(512 + game.moves.len() * 16);
    let result = game.result.map_or("*", |r| r.pgn());
    for (name, default) in ROSTER {
        let value = if name == "Result" { result } else { game.tag(name).unwrap_or(default) };
        tag(&mut out, name, value);
    }
    let standard = game.start == Position::startpos();
    let fen = game.start.fen();
    let mut wrote_fen = false;
    for (name, value) in &game.tags {
        if ROSTER.iter().any(|(r, _)| r == name) {
            continue;
        }
        if name == "FEN" {
            if wrote_fen {
                continue;
            }
            wrote_fen = true;
            tag(&mut out, name, &fen);
        } else if name == "SetUp" && !standard {
            tag(&mut out, name, "1");
        } else {
            tag(&mut out, name, value);
        }
    }
    if !wrote_fen && !standard {
        if game.tag("SetUp").is_none() {
            tag(&mut out, "SetUp", "1");
        }
        tag(&mut out, "FEN", &fen);
    }
    out.push('\n');

    let mut lines = Wrap { out, col: 0, started: false };
    let mut pos = game.start;
    let mut number = pos.fullmove_number().max(1) as u64;
    let mut after_comment = true;
    let mut buf = String::new();
    for (i, &m) in game.moves.iter().enumerate() {
        if !pos.is_legal(m) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("ply {}: move {m} is illegal", i + 1)));
        }
        buf.clear();
        if pos.turn() == Color::White {
            buf.push_str(&format!("{number}. "));
        } else if after_comment {
            buf.push_str(&format!("{number}... "));
        }
        buf.push_str(&pos.san(m));
        // Number and move stay together on one line.
        lines.word(&buf);
        if pos.turn() == Color::Black {
            number += 1;
        }
        pos.play(m);
        after_comment = false;
        if let Some(c) = game.comments.get(i).and_then(|c| c.as_deref()) {
            lines.comment(c);
            after_comment = true;
        }
    }
    lines.word(result);
    lines.out.push_str("\n\n");
    w.write_all(lines.out.as_bytes())
}

fn tag(out: &mut String, name: &str, value: &str) {
    out.push('[');
    // Names are symbols; anything else would not read back.
    let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    out.push_str(if name.is_empty() { "_" } else { &name });
    out.push_str(" \"");
    // Line breaks become spaces; other control characters (an engine's name may hold ESC or
    // NUL) are escaped, then quotes and backslashes (the escapes' own included) are quoted.
    for c in super::printable(&value.replace(['\r', '\n', '\t'], " ")).chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out.push_str("\"]\n");
}

/// Greedy line filling: words separated by one space or a newline.
struct Wrap {
    out: String,
    col: usize,
    started: bool,
}

impl Wrap {
    fn word(&mut self, w: &str) {
        let width = w.chars().count();
        if self.started {
            if self.col > 0 && self.col + 1 + width > MAX_COLUMNS {
                self.out.push('\n');
                self.col = 0;
            } else {
                self.out.push(' ');
                self.col += 1;
            }
        }
        self.started = true;
        self.out.push_str(w);
        self.col += width;
    }

    /// `{ text }`, breaking lines only at the text's spaces (a newline reads back as one).
    /// `}` cannot appear inside and becomes `)`; line breaks become spaces.
    fn comment(&mut self, text: &str) {
        let text = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n' | '\x0b' | '\x0c')).replace(['\r', '\n'], " ");
        let clean: String = super::printable(&text).chars().map(|c| if c == '}' { ')' } else { c }).collect();
        self.word("{");
        if !clean.is_empty() {
            for w in clean.split(' ') {
                self.word(w);
            }
        }
        self.word("}");
    }
}

/// Names of compressed files: appending plain text to one corrupts it.
const COMPRESSED: [&str; 7] = [".xz", ".gz", ".bz2", ".zst", ".zip", ".7z", ".lz"];

/// How much of each end of an existing file [`appendable`] reads.
const PROBE: u64 = 64 << 10;

/// Whether games may be appended to `path`, and what to write before the first one: nothing
/// for a missing or empty file or one ending in a blank line, line breaks enough to leave one
/// otherwise. Refused, untouched: a compressed name (`.xz`, `.gz`, …: text appended to an
/// archive corrupts it), anything but a regular file, and a file whose first and last 64 KiB
/// are not PGN text (UTF-8 without control characters other than line breaks and tabs, the
/// first thing in it a tag, a comment, an escape line or a move number).
pub fn appendable(path: &Path) -> Result<&'static str, String> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    if let Some(ext) = COMPRESSED.iter().find(|e| name.ends_with(*e)) {
        return Err(format!("{}: a compressed name ({ext}): games are written as plain PGN text; give a path ending in .pgn", path.display()));
    }
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(""),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if !meta.is_file() {
        return Err(format!("{}: {}, not a regular file; games are appended to a PGN file only", path.display(), crate::io::files::kind_of(&meta.file_type())));
    }
    if meta.len() == 0 {
        return Ok("");
    }
    let not_pgn = |why: &str| format!("{}: {why}, so it is not a PGN file; refusing to append games to it (give another --pgn)", path.display());
    let mut f = crate::io::open_regular(path, u64::MAX, "PGN file").map_err(|e| format!("{}: {e}", path.display()))?;
    let mut head = Vec::new();
    (&mut f).take(PROBE).read_to_end(&mut head).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut tail = Vec::new();
    if meta.len() > PROBE {
        f.seek(SeekFrom::End(-(PROBE as i64))).and_then(|_| f.take(PROBE).read_to_end(&mut tail)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let tail_at = meta.len().saturating_sub(tail.len() as u64);
    for (bytes, at, cut_start, cut_end) in [(&head[..], 0, false, meta.len() > PROBE), (&tail[..], tail_at, true, false)] {
        if let Some(why) = not_text(bytes, at, cut_start, cut_end) {
            return Err(not_pgn(&why));
        }
    }
    let first = std::str::from_utf8(&head).unwrap_or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""));
    let first = first.trim_start_matches('\u{feff}').trim_start();
    if !first.starts_with(|c: char| matches!(c, '[' | '{' | ';' | '%') || c.is_ascii_digit()) {
        return Err(not_pgn("it does not begin with a tag, a comment or a move number"));
    }
    let end = if tail.is_empty() { &head } else { &tail };
    Ok(if end.ends_with(b"\n\n") || end.ends_with(b"\r\n\r\n") {
        ""
    } else if end.ends_with(b"\n") {
        "\n"
    } else {
        "\n\n"
    })
}

/// Why `bytes` (the window of a file from byte `at`, maybe cut inside a character at either
/// end) is not text, if it is not.
fn not_text(bytes: &[u8], at: u64, cut_start: bool, cut_end: bool) -> Option<String> {
    // Skip a character cut at the window's start (continuation bytes).
    let skip = if cut_start { bytes.iter().take(3).take_while(|&&b| b & 0xC0 == 0x80).count() } else { 0 };
    let bytes = &bytes[skip..];
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) if cut_end && e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
        Err(e) => return Some(format!("byte {} is not UTF-8", at + (e.valid_up_to() + skip) as u64)),
    };
    text.char_indices()
        .find(|&(_, c)| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c'))
        .map(|(i, c)| format!("it holds the control character \\x{:02x} at byte {}", c as u32, at + (i + skip) as u64))
}
