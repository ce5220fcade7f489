//! The streaming PGN reader: one game at a time, moves checked as they are read, a game
//! with a bad move or FEN skipped to its end and reported, the file never aborted.

use super::lexer::{Lexer, Token, MAX_COMMENT};
use super::PgnGame;
use crate::chess::game::Outcome;
use crate::chess::position::Position;
use crate::chess::types::Color;
use std::fmt;
use std::io::BufRead;

/// Why a game was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// A main-line move that does not parse or is not legal.
    BadMove,
    /// A bad `FEN` tag, or `SetUp "1"` without one.
    BadFen,
    /// A `Variant` tag other than standard chess.
    Variant,
    /// Too long a line, too many tags or plies: not a plausible game.
    Malformed,
}

impl SkipReason {
    pub const ALL: [SkipReason; 4] =
        [SkipReason::BadMove, SkipReason::BadFen, SkipReason::Variant, SkipReason::Malformed];

    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::BadMove => "bad move",
            SkipReason::BadFen => "bad FEN",
            SkipReason::Variant => "unsupported variant",
            SkipReason::Malformed => "malformed",
        }
    }
}

/// A skipped game: which one, why, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnSkip {
    /// 1-based index of the game in the file.
    pub number: u64,
    pub reason: SkipReason,
    /// 1-based ply of the bad move, for `BadMove`.
    pub ply: Option<usize>,
    /// Its move number and side, as in `12...`.
    pub move_number: Option<(u16, Color)>,
    /// The offending text: the move, FEN or variant.
    pub token: String,
    pub message: String,
}

impl fmt::Display for PgnSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "game {}: skipped ({})", self.number, self.reason.describe())?;
        if let Some(ply) = self.ply {
            write!(f, " at ply {ply}")?;
        }
        match self.move_number {
            Some((n, Color::White)) => write!(f, " ({n}. {})", self.token)?,
            Some((n, Color::Black)) => write!(f, " ({n}... {})", self.token)?,
            None if !self.token.is_empty() => write!(f, " '{}'", self.token)?,
            None => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// Counts over a whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Games returned.
    pub games: u64,
    /// Games skipped, by reason (indexed as `SkipReason::ALL`).
    pub skipped_by: [u64; 4],
    /// The I/O error that ended reading early, if any.
    pub io_error: Option<String>,
}

impl Summary {
    pub fn skipped(&self) -> u64 {
        self.skipped_by.iter().sum()
    }

    pub fn skipped_for(&self, reason: SkipReason) -> u64 {
        self.skipped_by[reason as usize]
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} games read, {} skipped", self.games, self.skipped())?;
        let parts: Vec<String> = SkipReason::ALL
            .iter()
            .filter(|&&r| self.skipped_for(r) > 0)
            .map(|&r| format!("{}: {}", r.describe(), self.skipped_for(r)))
            .collect();
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        if let Some(e) = &self.io_error {
            write!(f, "; stopped by read error: {e}")?;
        }
        Ok(())
    }
}

/// Beyond these a "game" is garbage; the caps keep memory bounded.
const MAX_TAGS: usize = 1000;
const MAX_PLIES: usize = 20_000;
/// Skips kept for `take_skips` when no callback is set.
const MAX_KEPT_SKIPS: usize = 10_000;

type SkipFn = Box<dyn FnMut(&PgnSkip)>;

/// Streaming reader. As an iterator it yields the good games and records the skipped
/// ones (see `on_skip`, `take_skips`, `summary`); `next_game` gives both.
pub struct PgnReader<R> {
    lex: Lexer<R>,
    number: u64,
    /// A tag that ended the previous game (no result token before it).
    pending_tag: Option<(String, String)>,
    done: bool,
    summary: Summary,
    skips: Vec<PgnSkip>,
    on_skip: Option<SkipFn>,
}

/// The game being read.
struct Partial {
    game: PgnGame,
    pos: Option<Position>,
    error: Option<PgnSkip>,
    depth: u32,
    movetext: bool,
    content: bool,
    result_token: Option<Option<Outcome>>,
}

impl Partial {
    fn fail(&mut self, reason: SkipReason, ply: Option<usize>, token: &str, message: String) {
        if self.error.is_none() {
            let move_number = ply.and(self.pos).map(|p| (p.fullmove_number(), p.turn()));
            let token = token.to_string();
            self.error = Some(PgnSkip { number: self.game.number, reason, ply, move_number, token, message });
        }
    }

    /// Sets the start position from the tags when first needed.
    fn start(&mut self) -> Option<&mut Position> {
        if self.pos.is_none() && self.error.is_none() {
            match start_position(&self.game) {
                Ok(p) => {
                    self.game.start = p;
                    self.pos = Some(p);
                }
                Err(e) => self.error = Some(e),
            }
        }
        if self.error.is_some() {
            return None;
        }
        self.pos.as_mut()
    }
}

fn start_position(g: &PgnGame) -> Result<Position, PgnSkip> {
    let skip = |reason, token: &str, message: String| PgnSkip {
        number: g.number,
        reason,
        ply: None,
        move_number: None,
        token: token.to_string(),
        message,
    };
    if let Some(v) = g.tag("Variant") {
        let v = v.trim();
        if !(v.is_empty() || v.eq_ignore_ascii_case("standard") || v.eq_ignore_ascii_case("chess")) {
            return Err(skip(SkipReason::Variant, v, "only standard chess is supported".into()));
        }
    }
    match g.tag("FEN") {
        Some(fen) => Position::from_fen(fen).map_err(|e| skip(SkipReason::BadFen, fen, e.to_string())),
        None if g.tag("SetUp").is_some_and(|s| s.trim() == "1") => {
            Err(skip(SkipReason::BadFen, "", "SetUp \"1\" without a FEN tag".into()))
        }
        None => Ok(Position::startpos()),
    }
}

fn result_of(s: &[u8]) -> Option<Option<Outcome>> {
    match s {
        b"*" => Some(None),
        b"1-0" | b"0-1" | b"1/2-1/2" => std::str::from_utf8(s).ok().map(Outcome::from_pgn),
        _ => None,
    }
}

/// Annotation glyphs written as text rather than NAGs.
fn is_glyph(s: &[u8]) -> bool {
    s.iter().all(|c| matches!(c, b'!' | b'?'))
        || matches!(s, b"=" | b"+=" | b"=+" | b"+-" | b"-+" | b"+/=" | b"=/+" | b"+/-" | b"-/+")
}

fn lossy(s: &[u8]) -> String {
    String::from_utf8_lossy(s).into_owned()
}

/// A token as text for a message: invalid UTF-8 replaced, control characters escaped (a
/// binary file's bytes must not reach the terminal raw).
fn shown(s: &[u8]) -> String {
    super::printable(&String::from_utf8_lossy(s))
}

impl<R: BufRead> PgnReader<R> {
    pub fn new(r: R) -> PgnReader<R> {
        PgnReader {
            lex: Lexer::new(r),
            number: 0,
            pending_tag: None,
            done: false,
            summary: Summary::default(),
            skips: Vec::new(),
            on_skip: None,
        }
    }

    /// Calls `f` for each skipped game instead of keeping it for `take_skips`.
    pub fn on_skip(mut self, f: impl FnMut(&PgnSkip) + 'static) -> Self {
        self.on_skip = Some(Box::new(f));
        self
    }

    /// Skipped games so far (the first 10,000 when no callback is set), emptied.
    pub fn take_skips(&mut self) -> Vec<PgnSkip> {
        std::mem::take(&mut self.skips)
    }

    /// Counts so far (final once the iterator returns `None`).
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The next game or skipped game; `None` at the end of input or on a read error
    /// (recorded in the summary). Does not update the summary.
    pub fn next_game(&mut self) -> Option<Result<PgnGame, PgnSkip>> {
        if self.done {
            return None;
        }
        let mut p = Partial {
            game: PgnGame::new(Position::startpos()),
            pos: None,
            error: None,
            depth: 0,
            movetext: false,
            content: false,
            result_token: None,
        };
        p.game.number = self.number + 1;
        if let Some(t) = self.pending_tag.take() {
            p.game.tags.push(t);
            p.content = true;
        }
        loop {
            let tok = match self.lex.next_token() {
                Ok(t) => t,
                Err(e) => {
                    // Don't pass a game cut short by the error off as complete.
                    p.fail(SkipReason::Malformed, None, "", format!("read error: {e}"));
                    self.summary.io_error = Some(e.to_string());
                    self.done = true;
                    break;
                }
            };
            match tok {
                Token::Eof => {
                    self.done = true;
                    break;
                }
                Token::Tag { name, value } => {
                    let tag = (lossy(name), lossy(value));
                    // A tag after movetext (or a second Event): the result was missing, a new
                    // game starts.
                    if p.movetext || (name == b"Event" && !p.game.tags.is_empty()) {
                        self.pending_tag = Some(tag);
                        break;
                    }
                    p.content = true;
                    if p.game.tags.len() < MAX_TAGS {
                        p.game.tags.push(tag);
                    } else {
                        p.fail(SkipReason::Malformed, None, "", format!("more than {MAX_TAGS} tags"));
                    }
                }
                Token::Comment(text) => {
                    // Comments before the first move or inside variations are dropped.
                    if p.depth == 0 && p.error.is_none() {
                        if let Some(slot) = p.game.comments.last_mut() {
                            let c = slot.get_or_insert_with(String::new);
                            if !c.is_empty() {
                                c.push(' ');
                            }
                            let room = MAX_COMMENT.saturating_sub(c.len());
                            c.push_str(&String::from_utf8_lossy(&text[..text.len().min(room)]));
                        }
                    }
                }
                Token::Open => {
                    p.movetext = true;
                    p.content = true;
                    p.depth = p.depth.saturating_add(1);
                }
                Token::Close => {
                    p.movetext = true;
                    p.content = true;
                    p.depth = p.depth.saturating_sub(1);
                }
                Token::Nag(_) | Token::Period => {
                    p.movetext = true;
                    p.content = true;
                }
                Token::Overlong => p.fail(SkipReason::Malformed, None, "", "line longer than 1 MiB".into()),
                Token::Symbol(s) => {
                    p.movetext = true;
                    p.content = true;
                    if p.depth > 0 {
                        continue;
                    }
                    if let Some(r) = result_of(s) {
                        p.result_token = Some(r);
                        break;
                    }
                    // Move numbers and stand-alone annotation glyphs carry nothing we keep.
                    if s.iter().all(u8::is_ascii_digit) || is_glyph(s) {
                        continue;
                    }
                    let ply = p.game.moves.len() + 1;
                    let Some(pos) = p.start() else { continue };
                    let parsed = match std::str::from_utf8(s) {
                        Ok(san) => pos.parse_san(san).map_err(|e| e.message),
                        Err(_) => Err("not UTF-8".to_string()),
                    };
                    match parsed {
                        Ok(m) if ply <= MAX_PLIES => {
                            pos.play(m);
                            p.game.push(m, None);
                        }
                        Ok(_) => {
                            p.fail(SkipReason::Malformed, Some(ply), &shown(s), format!("more than {MAX_PLIES} plies"))
                        }
                        Err(msg) => p.fail(SkipReason::BadMove, Some(ply), &shown(s), msg),
                    }
                }
            }
        }
        if !p.content {
            return None;
        }
        self.number += 1;
        p.start();
        if let Some(e) = p.error {
            return Some(Err(e));
        }
        let mut g = p.game;
        g.result = match p.result_token {
            Some(r) => r,
            None => g.tag("Result").and_then(|r| Outcome::from_pgn(r.trim())),
        };
        Some(Ok(g))
    }

    fn record(&mut self, skip: PgnSkip) {
        self.summary.skipped_by[skip.reason as usize] += 1;
        match &mut self.on_skip {
            Some(f) => f(&skip),
            None if self.skips.len() < MAX_KEPT_SKIPS => self.skips.push(skip),
            None => {}
        }
    }
}

impl<R: BufRead> Iterator for PgnReader<R> {
    type Item = PgnGame;

    fn next(&mut self) -> Option<PgnGame> {
        loop {
            match self.next_game()? {
                Ok(g) => {
                    self.summary.games += 1;
                    return Some(g);
                }
                Err(skip) => self.record(skip),
            }
        }
    }
}
