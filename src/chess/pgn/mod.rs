//! PGN: a streaming, tolerant reader (one game at a time from any `BufRead`, bad games
//! skipped and counted, never aborting the file) and an export-format writer whose output
//! the reader reads back identically.

mod lexer;
mod reader;
mod writer;

pub use reader::{PgnReader, PgnSkip, SkipReason, Summary};
pub use writer::{appendable, write_game, MAX_COLUMNS};
pub use crate::io::text::printable;

use super::game::{Game, Outcome};
use super::moves::Move;
use super::position::Position;
use std::fmt;
use std::io::{self, BufRead, BufReader};

/// One game as read from (or to be written to) PGN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    /// Tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// Start position (from the `FEN` tag, else the standard one).
    pub start: Position,
    /// Main-line moves; variations are skipped.
    pub moves: Vec<Move>,
    /// One entry per move: the comment text after it (several comments joined by a space).
    pub comments: Vec<Option<String>>,
    /// The game termination marker; `None` for `*` (unfinished or unknown).
    pub result: Option<Outcome>,
    /// 1-based index of the game in its file, counting skipped games.
    pub number: u64,
}

impl PgnGame {
    /// An empty game from `start`, without tags.
    pub fn new(start: Position) -> PgnGame {
        PgnGame { tags: Vec::new(), start, moves: Vec::new(), comments: Vec::new(), result: None, number: 0 }
    }

    /// The moves of `game`, without comments; the result is left unknown.
    pub fn from_game(game: &Game) -> PgnGame {
        let mut g = PgnGame::new(*game.start());
        g.moves = game.moves().to_vec();
        g.comments = vec![None; g.moves.len()];
        g
    }

    /// Value of the first tag called `name` (case-sensitive, as PGN tag names are).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Sets a tag, replacing the first one of that name or appending.
    pub fn set_tag(&mut self, name: &str, value: &str) {
        match self.tags.iter_mut().find(|(k, _)| k == name) {
            Some(t) => t.1 = value.to_string(),
            None => self.tags.push((name.to_string(), value.to_string())),
        }
    }

    /// Appends a move (which must be legal after the previous ones) with its comment.
    pub fn push(&mut self, m: Move, comment: Option<String>) {
        self.moves.push(m);
        self.comments.push(comment);
    }

    /// Comment after move `ply` (0-based).
    pub fn comment(&self, ply: usize) -> Option<&str> {
        self.comments.get(ply).and_then(|c| c.as_deref())
    }

    /// Engine evaluation in the comment after move `ply`, if it has the `+0.32/12` form.
    pub fn eval(&self, ply: usize) -> Option<EngineEval> {
        self.comment(ply).and_then(EngineEval::parse)
    }

    /// Replays the moves into a `Game` (they were checked legal when read).
    pub fn to_game(&self) -> Game {
        let mut game = Game::new(self.start);
        for &m in &self.moves {
            game.play_unchecked(m);
        }
        game
    }

    /// The game in PGN export format; fails only if a move is illegal.
    pub fn to_pgn(&self) -> io::Result<String> {
        let mut out = Vec::new();
        write_game(&mut out, self)?;
        // The writer only emits UTF-8 built from `String`s.
        String::from_utf8(out).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// An engine score as match runners write it, from the mover's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in n moves: positive when the mover mates, negative when it is mated.
    Mate(i32),
}

impl Score {
    /// Centipawns, with mates mapped beyond any material score (sooner mates more extreme).
    pub fn to_cp(self) -> i32 {
        match self {
            Score::Cp(c) => c,
            Score::Mate(m) if m > 0 => 100_000 - m,
            Score::Mate(m) => -100_000 - m,
        }
    }
}

/// A comment of the form `+0.32/12`, `-M3/20` or `+0.39/8 0.12s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineEval {
    pub score: Score,
    pub depth: u32,
}

impl EngineEval {
    /// Parses the leading `score/depth` word of a comment; `None` for other comments.
    pub fn parse(comment: &str) -> Option<EngineEval> {
        let word = comment.split_ascii_whitespace().next()?;
        let (score, depth) = word.split_once('/')?;
        let depth = parse_digits(depth)?;
        let (neg, body) = match score.as_bytes().first()? {
            b'+' => (false, &score[1..]),
            b'-' => (true, &score[1..]),
            _ => (false, score),
        };
        let sign = if neg { -1 } else { 1 };
        let score = if let Some(n) = body.strip_prefix('M').or_else(|| body.strip_prefix('#')) {
            Score::Mate(sign * i32::try_from(parse_digits(n)?).ok()?)
        } else {
            let (int, frac) = body.split_once('.').unwrap_or((body, ""));
            let pawns = i32::try_from(parse_digits(int)?).ok()?;
            if !frac.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // Two decimals are centipawns; more are truncated, fewer padded.
            let mut digits = frac.bytes().map(|c| (c - b'0') as i32);
            let cents = digits.next().unwrap_or(0) * 10 + digits.next().unwrap_or(0);
            Score::Cp(sign * pawns.checked_mul(100)?.checked_add(cents)?)
        };
        Some(EngineEval { score, depth })
    }
}

/// A non-empty run of ASCII digits, without overflow.
fn parse_digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Opens a PGN source: `-` is stdin, `*.xz` is piped through `xz -dc`, anything else a file.
/// A source is streamed, so a FIFO that a producer writes into is accepted (opening it waits
/// for the producer); a directory or a device is refused (`/dev/zero` would never end).
pub fn open_pgn(path: &str) -> io::Result<Box<dyn BufRead>> {
    const BUF: usize = 1 << 18;
    if path == "-" {
        return Ok(Box::new(BufReader::with_capacity(BUF, io::stdin().lock())));
    }
    crate::io::files::check_stream(std::path::Path::new(path), "PGN file")?;
    crate::io::provenance::input(std::path::Path::new(path));
    if path.ends_with(".xz") {
        return Ok(Box::new(BufReader::with_capacity(BUF, crate::io::xz::decompress(std::path::Path::new(path))?)));
    }
    Ok(Box::new(BufReader::with_capacity(BUF, crate::io::open_stream(std::path::Path::new(path), "PGN file")?)))
}

impl fmt::Display for EngineEval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.score, self.depth)
    }
}

/// `+0.39`, `-0.05`, `+M3`, `-M2`, as match runners write scores.
impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Score::Cp(cp) => {
                let sign = if cp < 0 { "-" } else { "+" };
                write!(f, "{sign}{}.{:02}", cp.unsigned_abs() / 100, cp.unsigned_abs() % 100)
            }
            Score::Mate(n) => write!(f, "{}M{}", if n < 0 { "-" } else { "+" }, n.unsigned_abs()),
        }
    }
}
