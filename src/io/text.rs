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
