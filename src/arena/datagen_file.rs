//! datagen's output file, as a resumed run finds it. A run appends whole games with an
//! fsync each, so the file is its own finished games, perhaps followed by one game it began
//! and never finished (a kill, a full disk). Resuming removes only that unfinished game, and
//! only when it starts with datagen's own header; anything else (another program's PGN, a
//! compressed or binary file, text after the games) is refused untouched, since a byte
//! datagen did not write is not datagen's to remove.

use crate::chess::pgn::PgnReader;

/// The first line of every game datagen writes (`datagen::to_pgn`).
pub const OWN_EVENT: &[u8] = b"[Event \"deepchess datagen\"]\n";
const RESULTS: [&[u8]; 4] = [b"1-0", b"0-1", b"1/2-1/2", b"*"];

/// What an existing output file holds and what resuming must do to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Existing {
    /// Finished games in the file.
    pub games: u64,
    /// Bytes to keep: less than the file's length when an unfinished game of datagen's own
    /// ends it.
    pub keep: usize,
    /// Bytes to append after the kept part so the next game follows a blank line: the last
    /// game may end without its separator (`"\n"` or `"\n\n"`), or nothing.
    pub append: &'static [u8],
}

/// Reads an existing output file's bytes; `Err` says why it is not datagen's output.
pub fn inspect(text: &[u8]) -> Result<Existing, String> {
    if text.is_empty() {
        return Ok(Existing { games: 0, keep: 0, append: b"" });
    }
    // Game starts: every line opening with datagen's header, and a header cut short at the
    // very end of the file after a blank line (within a game, a short tail such as `[` is
    // the next tag being written).
    let mut starts = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let after_blank = at == 0 || text[..at].ends_with(b"\n\n");
        if rest.starts_with(OWN_EVENT) || after_blank && OWN_EVENT.starts_with(rest) {
            starts.push(at);
        }
        at = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => at + i + 1,
            None => text.len(),
        };
    }
    if starts.first() != Some(&0) {
        return Err(format!(
            "it does not begin with datagen's header {} (another program's PGN, a compressed or binary file?)",
            String::from_utf8_lossy(OWN_EVENT.trim_ascii_end())
        ));
    }
    let ends = starts.iter().skip(1).copied().chain([text.len()]);
    let games: Vec<(usize, usize)> = starts.iter().copied().zip(ends).collect();
    let (&(last_from, last_to), finished) = games.split_last().expect("the file starts a game");
    for (k, &(from, to)) in finished.iter().enumerate() {
        if let Err(why) = game_shape(&text[from..to], true) {
            return Err(format!("game {} (at byte {from}) {why}", k + 1));
        }
    }
    let (games, keep) = match game_shape(&text[last_from..last_to], true) {
        Ok(()) => (games.len() as u64, text.len()),
        // Unfinished: datagen's only if it is a single game's beginning.
        Err(_) => match game_shape(&text[last_from..last_to], false) {
            Ok(()) => (finished.len() as u64, last_from),
            Err(why) => return Err(format!("its end (from byte {last_from}) {why}")),
        },
    };
    let kept = &text[..keep];
    if let Err(e) = std::str::from_utf8(kept) {
        return Err(format!("it is not UTF-8 text (byte {})", e.valid_up_to()));
    }
    check_parses(kept, games)?;
    let append: &'static [u8] = if keep == 0 || kept.ends_with(b"\n\n") {
        b""
    } else if kept.ends_with(b"\n") {
        b"\n"
    } else {
        b"\n\n"
    };
    Ok(Existing { games, keep, append })
}

/// Checks one game's text as datagen writes it: tag lines, a blank line, movetext without
/// blank or tag lines ending in a result, then only whitespace. With `finished` false, a
/// beginning of such a game (cut anywhere) passes instead.
fn game_shape(g: &[u8], finished: bool) -> Result<(), String> {
    let (header, body) = match g.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&g[..i], Some(&g[i + 2..])),
        None => (g, None),
    };
    let mut lines = header.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let last_of_cut_header = body.is_none() && lines.peek().is_none();
        let tag = line.starts_with(b"[") && (line.ends_with(b"]") || last_of_cut_header);
        if !tag && !(last_of_cut_header && line.is_empty()) {
            return Err(format!("has a header line that is not a PGN tag: '{}'", String::from_utf8_lossy(&line[..line.len().min(40)])));
        }
    }
    let Some(body) = body else {
        return if finished { Err("is unfinished: it has no moves".into()) } else { Ok(()) };
    };
    let moves = body.trim_ascii_end();
    let after = &body[moves.len()..];
    // A blank line or a tag line among the moves: something follows this game that is not
    // a whole game of datagen's.
    if moves.windows(2).any(|w| w == b"\n\n") || moves.split(|&b| b == b'\n').any(|l| l.starts_with(b"[")) {
        return Err("holds text after its moves that datagen does not write".into());
    }
    let ends_in_result = RESULTS.iter().any(|r| {
        moves.ends_with(r) && (moves.len() == r.len() || moves[moves.len() - r.len() - 1].is_ascii_whitespace())
    });
    match (ends_in_result, finished) {
        (true, _) => Ok(()),
        (false, true) => Err("is unfinished: its moves end without a result".into()),
        (false, false) if after.iter().filter(|&&b| b == b'\n').count() >= 2 => Err("ends without a result".into()),
        (false, false) => Ok(()),
    }
}

/// Every finished game must read back as a legal game: the file is then datagen's output
/// and not merely shaped like it.
fn check_parses(kept: &[u8], games: u64) -> Result<(), String> {
    let mut reader = PgnReader::new(kept);
    let mut read = 0;
    while let Some(g) = reader.next_game() {
        g.map_err(|skip| format!("{skip}"))?;
        read += 1;
    }
    if let Some(e) = &reader.summary().io_error {
        return Err(format!("read error: {e}"));
    }
    if read != games {
        return Err(format!("{games} games by their headers, {read} by the PGN reader"));
    }
    Ok(())
}

#[cfg(test)]
mod resume_tests {
    use super::*;

    const ONE: &[u8] = b"[Event \"deepchess datagen\"]\n[Round \"0\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n";
    const TWO: &[u8] = b"[Event \"deepchess datagen\"]\n[Round \"1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n";

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn finished_games_are_kept_and_counted() {
        assert_eq!(inspect(b"").unwrap(), Existing { games: 0, keep: 0, append: b"" });
        let t = cat(&[ONE, TWO]);
        assert_eq!(inspect(&t).unwrap(), Existing { games: 2, keep: t.len(), append: b"" });
        // The last game complete but its blank line missing: complete, the separator added.
        let t = cat(&[ONE, &TWO[..TWO.len() - 1]]);
        assert_eq!(inspect(&t).unwrap(), Existing { games: 2, keep: t.len(), append: b"\n" });
        let t = cat(&[ONE, &TWO[..TWO.len() - 2]]);
        assert_eq!(inspect(&t).unwrap(), Existing { games: 2, keep: t.len(), append: b"\n\n" });
    }

    #[test]
    fn only_an_unfinished_game_of_its_own_is_cut() {
        let done = cat(&[ONE, TWO]);
        // Cut anywhere inside datagen's next game, header included.
        let next = b"[Event \"deepchess datagen\"]\n[Round \"2\"]\n\n1. c4 { +0.3";
        for cut in 1..next.len() {
            let t = cat(&[&done, &next[..cut]]);
            let e = inspect(&t).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            assert_eq!(e, Existing { games: 2, keep: done.len(), append: b"" }, "cut {cut}");
        }
        // After a finished game without its blank line: cut, then the separator.
        let t = cat(&[&done[..done.len() - 1], next]);
        assert_eq!(inspect(&t).unwrap(), Existing { games: 2, keep: done.len() - 1, append: b"\n" });
        // A header cut short right after a game without its blank line is not recognised
        // as a game start: refused rather than taken for the end of the finished game.
        assert!(inspect(&cat(&[&done[..done.len() - 1], &next[..10]])).is_err());
        // The first game itself unfinished.
        assert_eq!(inspect(&next[..20]).unwrap(), Existing { games: 0, keep: 0, append: b"" });
    }

    #[test]
    fn anything_datagen_did_not_write_is_refused() {
        let done = cat(&[ONE, TWO]);
        let refused = |t: &[u8]| inspect(t).expect_err(&String::from_utf8_lossy(t));
        // Another program's PGN, compressed or binary bytes, UTF-16.
        assert!(refused(b"[Event \"Rated game\"]\n\n1. e4 e5 1-0\n\n").contains("does not begin"));
        assert!(refused(b"\xFD7zXZ\0\0\x04\xE6\xD6\xB4\x46").contains("does not begin"));
        assert!(refused(b"\x7fELF\x02\x01\x01").contains("does not begin"));
        assert!(refused(b"\xFF\xFE[\0E\0v\0").contains("does not begin"));
        // A foreign game, finished or not, after datagen's.
        assert!(refused(&cat(&[&done, b"[Event \"x\"]\n\n1. d4 d5 1/2-1/2\n\n"])).contains("after its moves"));
        assert!(refused(&cat(&[&done, b"[Event \"x\"]\n\n1. d4"])).contains("after its moves"));
        // Bytes after the last game (zeros left by a crash, notes).
        assert!(refused(&cat(&[&done, b"\0\0\0\0"])).contains("after its moves"));
        assert!(refused(&cat(&[&done, b"notes"])).contains("after its moves"));
        // An unfinished game in the middle, a game that does not parse, bad UTF-8.
        assert!(refused(&cat(&[&ONE[..40], TWO])).contains("game 1"));
        assert!(refused(&cat(&[ONE, b"[Event \"deepchess datagen\"]\n\n1. e5 1-0\n\n"])).contains("bad move"));
        assert!(refused(&cat(&[ONE, b"[Event \"deepchess datagen\"]\n[White \"\xFF\"]\n\n1. e4 1-0\n\n"])).contains("UTF-8"));
        // A header line that is no tag.
        assert!(refused(&cat(&[ONE, b"[Event \"deepchess datagen\"]\nhello\n\n1. e4 1-0\n\n"])).contains("not a PGN tag"));
    }
}
