//! Opening suites for matches: EPD/FEN files (one position a line) or PGN files (each game's
//! start position and moves, played before the engines take over).

use crate::chess::pgn::PgnReader;
use crate::chess::{Move, Position};
use crate::io::files::read_regular;

/// Largest suite read: thousands of times the shipped one, and a wrong path (a corpus, a
/// device) fails at once.
const MAX_FILE_BYTES: u64 = 256 << 20;

fn read(path: &str) -> Result<Vec<u8>, String> {
    read_regular(std::path::Path::new(path), MAX_FILE_BYTES, "opening suite").map_err(|e| format!("{path}: {e}"))
}

/// One opening: a start position and the moves played from it before the engines think.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    pub start: Position,
    pub moves: Vec<Move>,
}

impl Opening {
    pub fn startpos() -> Opening {
        Opening { start: Position::startpos(), moves: Vec::new() }
    }
}

/// Reads a suite: `*.pgn` as PGN, anything else as EPD/FEN lines (the first four fields are
/// the position; EPD operations and FEN counters are ignored; blank and `#` lines skipped).
/// `startpos` means the initial position alone. Errors name the file and line or game.
pub fn load(path: &str) -> Result<Vec<Opening>, String> {
    if path == "startpos" {
        return Ok(vec![Opening::startpos()]);
    }
    let out = if path.to_ascii_lowercase().ends_with(".pgn") { load_pgn(path)? } else { load_epd(path)? };
    if out.is_empty() {
        return Err(format!("{path}: no openings in the file"));
    }
    Ok(out)
}

fn load_epd(path: &str) -> Result<Vec<Opening>, String> {
    let bytes = read(path)?;
    let mut out = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        // Decoded a line at a time, so that an error says which line is not text.
        let line = std::str::from_utf8(line).map_err(|_| format!("{path}:{}: not UTF-8 text", i + 1))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        let start = Position::from_fen(&fields.join(" ")).map_err(|e| format!("{path}:{}: {e}", i + 1))?;
        if start.ending().is_some() {
            return Err(format!("{path}:{}: the game is already over in this position", i + 1));
        }
        out.push(Opening { start, moves: Vec::new() });
    }
    Ok(out)
}

fn load_pgn(path: &str) -> Result<Vec<Opening>, String> {
    let bytes = read(path)?;
    let mut reader = PgnReader::new(&bytes[..]);
    let mut out = Vec::new();
    while let Some(game) = reader.next_game() {
        // A bad opening would silently change the suite: refuse the file instead.
        let g = game.map_err(|skip| format!("{path}: {skip}"))?;
        let opening = Opening { start: g.start, moves: g.moves };
        let game = g_to_game(&opening);
        if game.outcome().is_some() {
            return Err(format!("{path}: game {}: the opening already ends the game", g.number));
        }
        out.push(opening);
    }
    Ok(out)
}

fn g_to_game(o: &Opening) -> crate::chess::Game {
    let mut game = crate::chess::Game::new(o.start);
    for &m in &o.moves {
        game.play_unchecked(m);
    }
    game
}

/// The order in which a match uses a suite: `count` openings starting at `first`, in file
/// order or shuffled with `seed` (each opening used once before any repeats).
pub fn order(suite_len: usize, count: usize, first: usize, shuffle: Option<u64>) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..suite_len).collect();
    if let Some(seed) = shuffle {
        let mut s = seed;
        // Fisher–Yates with SplitMix64.
        for i in (1..idx.len()).rev() {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            idx.swap(i, (z % (i as u64 + 1)) as usize);
        }
    }
    (0..count).map(|k| idx[(first + k) % suite_len.max(1)]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_wraps_and_shuffles_deterministically() {
        assert_eq!(order(3, 5, 1, None), [1, 2, 0, 1, 2]);
        let a = order(100, 100, 0, Some(7));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        assert_eq!(a, order(100, 100, 0, Some(7)));
    }
}
