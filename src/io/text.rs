//! Text from outside (engines, binary files) made safe to show and store.

/// `s` safe to show on a terminal or write into a file meant for people: every control
/// character (C0, DEL, C1, so ESC sequences and NULs that an engine or a binary file sends)
/// as `\xNN`, the rest unchanged. Escapes contain no braces or quotes, so they survive
/// inside PGN comments and tags.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// [`printable`] of at most `max_chars` characters of `s`, with `…` where it was cut: a
/// field quoted in an error message.
pub fn cut(s: &str, max_chars: usize) -> String {
    let mut out = printable(&s.chars().take(max_chars).collect::<String>());
    if s.chars().nth(max_chars).is_some() {
        out.push('…');
    }
    out
}

/// Writes `args` to `w` with every control character but line feed, tab and carriage return
/// escaped as [`printable`] does: what the crate's `print!` and `eprint!` macros (src/lib.rs)
/// write. A message quotes strings from files (a net header, a tensor name, a path), and an
/// ESC, BEL or NUL there would otherwise reach the terminal raw.
pub fn write_clean(w: &mut impl std::io::Write, args: std::fmt::Arguments) -> std::io::Result<()> {
    struct Clean<'a, W: std::io::Write> {
        w: &'a mut W,
        err: Option<std::io::Error>,
    }
    impl<W: std::io::Write> std::fmt::Write for Clean<'_, W> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let r = if s.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')) {
                let mut out = String::with_capacity(s.len() + 8);
                for c in s.chars() {
                    if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                        out.push_str(&format!("\\x{:02x}", c as u32));
                    } else {
                        out.push(c);
                    }
                }
                self.w.write_all(out.as_bytes())
            } else {
                self.w.write_all(s.as_bytes())
            };
            r.map_err(|e| {
                self.err = Some(e);
                std::fmt::Error
            })
        }
    }
    let mut c = Clean { w, err: None };
    match std::fmt::Write::write_fmt(&mut c, args) {
        Ok(()) => Ok(()),
        Err(_) => Err(c.err.unwrap_or_else(|| std::io::Error::other("formatting failed"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_for_the_terminal() {
        assert_eq!(printable("a\x1b[2Jb\x07\0\n"), "a\\x1b[2Jb\\x07\\x00\\x0a");
        assert_eq!(printable("\u{9b}x"), "\\x9bx");
        let mut out = Vec::new();
        write_clean(&mut out, format_args!("{}|{}\n", "net \x1b]0;pwned\x07", "tab\tcr\r")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "net \\x1b]0;pwned\\x07|tab\tcr\r\n");
        assert_eq!(cut("abc\0def", 3), "abc…");
        assert_eq!(cut("a\0", 5), "a\\x00");
    }
}
