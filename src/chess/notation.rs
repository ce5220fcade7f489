//! Move notation: UCI long algebraic (`e7e8q`) and SAN (`Nbd2`, `exd6`, `O-O`, `e8=Q+`).
//! Parsing checks legality against the position and says what is wrong.

use super::moves::Move;
use super::position::Position;
use super::types::{Role, Square};
use std::fmt;

/// A move that could not be read or is not legal here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError {
    pub input: String,
    pub message: String,
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "move '{}': {}", self.input, self.message)
    }
}

impl std::error::Error for NotationError {}

fn err<T>(input: &str, message: impl Into<String>) -> Result<T, NotationError> {
    Err(NotationError { input: input.to_string(), message: message.into() })
}

impl Position {
    /// Parses a UCI move (`e2e4`, `e7e8q`, castling as `e1g1`) and checks it is legal.
    pub fn parse_uci(&self, s: &str) -> Result<Move, NotationError> {
        if !s.is_ascii() || !(s.len() == 4 || s.len() == 5) {
            return err(s, "expected UCI notation like e2e4 or e7e8q");
        }
        let (Some(from), Some(to)) = (Square::parse(&s[0..2]), Square::parse(&s[2..4])) else {
            return err(s, "bad square in UCI move");
        };
        let promotion = match s.as_bytes().get(4) {
            None => None,
            Some(&c) => match Role::from_char(c as char) {
                Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)) if c.is_ascii_lowercase() => Some(r),
                _ => return err(s, format!("bad promotion letter '{}' (expected n, b, r or q)", c as char)),
            },
        };
        let m = Move::new(from, to, promotion);
        if self.is_legal(m) {
            Ok(m)
        } else {
            err(s, format!("illegal in position {}", self.fen()))
        }
    }

    /// SAN of a legal move, with `+` or `#`.
    pub fn san(&self, m: Move) -> String {
        let mut s = String::with_capacity(8);
        let role = self.role_on(m.from).unwrap_or(Role::Pawn);
        if self.is_castling(m) {
            s.push_str(if m.to.file() == 6 { "O-O" } else { "O-O-O" });
        } else if role == Role::Pawn {
            if self.is_capture(m) {
                s.push((b'a' + m.from.file()) as char);
                s.push('x');
            }
            s.push_str(&m.to.to_string());
            if let Some(p) = m.promotion {
                s.push('=');
                s.push(p.upper_char());
            }
        } else {
            s.push(role.upper_char());
            // Disambiguate among other pieces of the same kind that can reach `to`.
            let (mut any, mut same_file, mut same_rank) = (false, false, false);
            if role != Role::King {
                for o in self.legal_moves().iter() {
                    if o.to == m.to && o.from != m.from && self.role_on(o.from) == Some(role) {
                        any = true;
                        same_file |= o.from.file() == m.from.file();
                        same_rank |= o.from.rank() == m.from.rank();
                    }
                }
            }
            if any {
                if !same_file {
                    s.push((b'a' + m.from.file()) as char);
                } else if !same_rank {
                    s.push((b'1' + m.from.rank()) as char);
                } else {
                    s.push_str(&m.from.to_string());
                }
            }
            if self.is_capture(m) {
                s.push('x');
            }
            s.push_str(&m.to.to_string());
        }
        let mut after = *self;
        after.play(m);
        if after.is_check() {
            s.push(if after.has_legal_move() { '+' } else { '#' });
        }
        s
    }

    /// Parses SAN, tolerant of common variants: `0-0`, `e8Q`, `e8=Q`, long forms like
    /// `Ng1f3`/`Ng1-f3`, and trailing `+ # ! ?` in any combination.
    pub fn parse_san(&self, input: &str) -> Result<Move, NotationError> {
        let s = input.trim_end_matches(['+', '#', '!', '?']);
        if s.is_empty() || !s.is_ascii() {
            return err(input, "empty or non-ASCII move");
        }
        if matches!(s, "O-O" | "0-0" | "o-o" | "O-O-O" | "0-0-0" | "o-o-o") {
            let long = s.len() == 5;
            let k = self.king(self.turn);
            let file = if long { 2 } else { 6 };
            let m = Move::new(k, Square::from_coords(file, k.rank()), None);
            if k.file() == 4 && self.is_legal(m) {
                return Ok(m);
            }
            return err(input, format!("castling is not legal in position {}", self.fen()));
        }
        let b = s.as_bytes();
        let (role, mut rest) = match b[0] {
            b'N' | b'B' | b'R' | b'Q' | b'K' | b'P' => (Role::from_char(b[0] as char).unwrap(), &b[1..]),
            _ => (Role::Pawn, b),
        };
        // Promotion suffix: "=Q", "Q", or lower case after a rank digit.
        let mut promotion = None;
        if let Some((&last, head)) = rest.split_last() {
            if let Some(r @ (Role::Knight | Role::Bishop | Role::Rook | Role::Queen)) = Role::from_char(last as char) {
                let head = head.strip_suffix(b"=").unwrap_or(head);
                if head.last().is_some_and(|c| matches!(c, b'1' | b'8')) {
                    promotion = Some(r);
                    rest = head;
                }
            }
        }
        if rest.len() < 2 {
            return err(input, "missing destination square");
        }
        let (mid, dest) = rest.split_at(rest.len() - 2);
        let Some(to) = std::str::from_utf8(dest).ok().and_then(Square::parse) else {
            return err(input, "bad destination square");
        };
        let (mut from_file, mut from_rank) = (None, None);
        for &c in mid {
            match c {
                b'a'..=b'h' if from_file.is_none() => from_file = Some(c - b'a'),
                b'1'..=b'8' if from_rank.is_none() => from_rank = Some(c - b'1'),
                b'x' | b':' | b'-' => {}
                _ => return err(input, format!("unexpected '{}'", c as char)),
            }
        }
        let mut found: Option<Move> = None;
        let mut count = 0;
        let mut missing_promotion = false;
        for m in self.legal_moves().iter() {
            if m.to != to
                || self.role_on(m.from) != Some(role)
                || from_file.is_some_and(|f| f != m.from.file())
                || from_rank.is_some_and(|r| r != m.from.rank())
            {
                continue;
            }
            if m.promotion != promotion {
                missing_promotion |= promotion.is_none();
                continue;
            }
            count += 1;
            found = Some(*m);
        }
        match (count, found) {
            (1, Some(m)) => Ok(m),
            (0, _) if missing_promotion => err(input, "a pawn reaching the last rank must promote (e.g. e8=Q)"),
            (0, _) => err(input, format!("illegal in position {}", self.fen())),
            _ => err(input, format!("ambiguous: {count} moves match in position {}", self.fen())),
        }
    }
}
