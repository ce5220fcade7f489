//! PGN export format: the Seven Tag Roster first, then other tags, movetext wrapped at 80
//! columns, `N...` after a comment on a White move, the result token, a blank line.

use super::PgnGame;
use crate::chess::position::Position;
use crate::chess::types::Color;
use std::io::{self, Write};

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
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\r' | '\n' => out.push(' '),
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
        let clean: String = text
            .trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n' | '\x0b' | '\x0c'))
            .chars()
            .map(|c| match c {
                '}' => ')',
                '\r' | '\n' => ' ',
                _ => c,
            })
            .collect();
        self.word("{");
        if !clean.is_empty() {
            for w in clean.split(' ') {
                self.word(w);
            }
        }
        self.word("}");
    }
}
