//! PGN tokens from a `BufRead`, a line at a time into reused buffers, so memory stays
//! bounded whatever the input: lines and comments beyond a cap are cut, not grown.

use std::io::{self, BufRead};

/// Longest line kept; the rest is dropped and reported as `Token::Overlong`.
pub(crate) const MAX_LINE: usize = 1 << 20;
/// Longest brace comment kept.
pub(crate) const MAX_COMMENT: usize = 1 << 16;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// `[Name "value"]`, the value unescaped.
    Tag {
        name: &'a [u8],
        value: &'a [u8],
    },
    /// Text of `{...}` (newlines as spaces) or `;...`, trimmed.
    Comment(&'a [u8]),
    /// A move, move number, result or annotation glyph.
    Symbol(&'a [u8]),
    /// `$12` (the digits).
    Nag(&'a [u8]),
    Period,
    Open,
    Close,
    /// A line was longer than `MAX_LINE` and cut.
    Overlong,
    Eof,
}

/// Where a token's bytes live, so the borrow is taken only once scanning is over.
enum Raw {
    Tag { name: (usize, usize) },
    LineComment(usize, usize),
    BraceComment,
    Symbol(usize, usize),
    Nag(usize, usize),
    Period,
    Open,
    Close,
    Overlong,
    Eof,
}

pub(crate) struct Lexer<R> {
    r: R,
    line: Vec<u8>,
    pos: usize,
    overlong: bool,
    in_comment: bool,
    comment: Vec<u8>,
    value: Vec<u8>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// Bytes that end a symbol.
fn is_delim(c: u8) -> bool {
    is_space(c) || matches!(c, b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b'$' | b'.' | b'"')
}

fn trim(s: &[u8]) -> (usize, usize) {
    let start = s.iter().position(|&c| !is_space(c)).unwrap_or(s.len());
    let end = s.iter().rposition(|&c| !is_space(c)).map_or(start, |i| i + 1);
    (start, end)
}

impl<R: BufRead> Lexer<R> {
    pub(crate) fn new(r: R) -> Lexer<R> {
        Lexer {
            r,
            line: Vec::with_capacity(4096),
            pos: 0,
            overlong: false,
            in_comment: false,
            comment: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Reads the next line (with its `\n`), cut at `MAX_LINE`; `false` at end of input.
    fn read_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        self.pos = 0;
        let mut any = false;
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(any);
            }
            any = true;
            let (take, done) = match buf.iter().position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = MAX_LINE - self.line.len();
            if take > room {
                self.overlong = true;
            }
            self.line.extend_from_slice(&buf[..take.min(room)]);
            self.r.consume(take);
            if done {
                return Ok(true);
            }
        }
    }

    pub(crate) fn next_token(&mut self) -> io::Result<Token<'_>> {
        let raw = self.scan()?;
        Ok(match raw {
            Raw::Tag { name } => Token::Tag { name: &self.line[name.0..name.1], value: &self.value },
            Raw::LineComment(a, b) => Token::Comment(&self.line[a..b]),
            Raw::BraceComment => {
                let (a, b) = trim(&self.comment);
                Token::Comment(&self.comment[a..b])
            }
            Raw::Symbol(a, b) => Token::Symbol(&self.line[a..b]),
            Raw::Nag(a, b) => Token::Nag(&self.line[a..b]),
            Raw::Period => Token::Period,
            Raw::Open => Token::Open,
            Raw::Close => Token::Close,
            Raw::Overlong => Token::Overlong,
            Raw::Eof => Token::Eof,
        })
    }

    fn scan(&mut self) -> io::Result<Raw> {
        loop {
            if self.pos >= self.line.len() {
                if self.overlong {
                    self.overlong = false;
                    self.line.clear();
                    return Ok(Raw::Overlong);
                }
                if !self.read_line()? {
                    if self.in_comment {
                        // An unterminated comment ends with the input.
                        self.in_comment = false;
                        return Ok(Raw::BraceComment);
                    }
                    return Ok(Raw::Eof);
                }
                // A byte-order mark, also where files were concatenated.
                if self.line.starts_with(b"\xEF\xBB\xBF") {
                    self.pos = 3;
                }
                // `%` in column one escapes the whole line (not inside a comment).
                if !self.in_comment && self.line.get(self.pos) == Some(&b'%') {
                    self.pos = self.line.len();
                }
                continue;
            }
            if self.in_comment {
                let rest = &self.line[self.pos..];
                let end = rest.iter().position(|&c| c == b'}');
                let body = &rest[..end.unwrap_or(rest.len())];
                for &c in body {
                    if self.comment.len() >= MAX_COMMENT {
                        break;
                    }
                    match c {
                        b'\r' => {}
                        b'\n' => self.comment.push(b' '),
                        _ => self.comment.push(c),
                    }
                }
                match end {
                    Some(i) => {
                        self.pos += i + 1;
                        self.in_comment = false;
                        return Ok(Raw::BraceComment);
                    }
                    None => self.pos = self.line.len(),
                }
                continue;
            }
            let start = self.pos;
            let c = self.line[start];
            self.pos += 1;
            match c {
                _ if is_space(c) => {}
                b'{' => {
                    self.comment.clear();
                    self.in_comment = true;
                }
                b';' => {
                    let (a, b) = trim(&self.line[start + 1..]);
                    self.pos = self.line.len();
                    return Ok(Raw::LineComment(start + 1 + a, start + 1 + b));
                }
                b'[' => {
                    if let Some(name) = self.tag() {
                        return Ok(Raw::Tag { name });
                    }
                }
                b'(' => return Ok(Raw::Open),
                b')' => return Ok(Raw::Close),
                b'.' => return Ok(Raw::Period),
                b'$' => {
                    let n = self.line[self.pos..].iter().take_while(|c| c.is_ascii_digit()).count();
                    self.pos += n;
                    return Ok(Raw::Nag(start + 1, self.pos));
                }
                _ if is_delim(c) => return Ok(Raw::Symbol(start, self.pos)),
                _ => {
                    let n = self.line[self.pos..].iter().take_while(|&&c| !is_delim(c)).count();
                    self.pos += n;
                    return Ok(Raw::Symbol(start, self.pos));
                }
            }
        }
    }

    /// Parses a tag pair after `[`, tolerating a missing quote or bracket; the value goes
    /// to `self.value`. A line with no tag name is dropped up to `]` and yields `None`.
    fn tag(&mut self) -> Option<(usize, usize)> {
        let line = &self.line;
        let mut i = self.pos;
        while i < line.len() && is_space(line[i]) {
            i += 1;
        }
        let name_start = i;
        while i < line.len() && (line[i].is_ascii_alphanumeric() || line[i] == b'_') {
            i += 1;
        }
        let name = (name_start, i);
        while i < line.len() && is_space(line[i]) {
            i += 1;
        }
        self.value.clear();
        if name.0 == name.1 || line.get(i) != Some(&b'"') {
            let close = line[self.pos..].iter().position(|&c| c == b']');
            self.pos = close.map_or(line.len(), |c| self.pos + c + 1);
            return None;
        }
        i += 1;
        let mut closed = false;
        while i < line.len() {
            match line[i] {
                b'\\' if matches!(line.get(i + 1), Some(b'"' | b'\\')) => {
                    self.value.push(line[i + 1]);
                    i += 2;
                }
                b'"' => {
                    closed = true;
                    i += 1;
                    break;
                }
                b'\r' | b'\n' => break,
                c => {
                    self.value.push(c);
                    i += 1;
                }
            }
        }
        if !closed {
            // No closing quote: the value runs to the end of the line, less a final `]`.
            let (a, b) = trim(&self.value);
            let b = if self.value[a..b].ends_with(b"]") { b - 1 } else { b };
            self.value.truncate(b);
            self.value.drain(..a);
        }
        while i < line.len() && is_space(line[i]) {
            i += 1;
        }
        if line.get(i) == Some(&b']') {
            i += 1;
        }
        self.pos = i;
        Some(name)
    }
}
