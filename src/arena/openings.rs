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
/// `startpos` means the initial position alone; `random:PLIES:SEED`, the initial position and
/// PLIES random moves ([`random`]). Errors name the file and line or game.
pub fn load(path: &str) -> Result<Vec<Opening>, String> {
    if path == "startpos" {
        return Ok(vec![Opening::startpos()]);
    }
    if let Some(spec) = path.strip_prefix("random:") {
        let bad = || format!("{path}: random openings are 'random:PLIES:SEED' (PLIES 1 to 12)");
        let (plies, seed) = spec.split_once(':').ok_or_else(bad)?;
        let plies: usize = plies.parse().ok().filter(|p| (1..=12).contains(p)).ok_or_else(bad)?;
        let seed: u64 = seed.parse().map_err(|_| bad())?;
        return Ok(random(plies, seed, RANDOM_SUITE));
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

/// How many openings `random:PLIES:SEED` holds: more than a curve of seed 004's 2,400 test
/// games uses (1,200 pairs), so that none repeats.
pub const RANDOM_SUITE: usize = 10_000;

/// `count` distinct openings, each the initial position and `plies` legal moves drawn
/// uniformly (the seed's start position, randomised: a suite as large as wanted, no opening
/// twice). The suite depends on `seed` alone, and a shorter one is the start of a longer one;
/// an attempt whose moves end the game or reach an opening drawn before is drawn again.
pub fn random(plies: usize, seed: u64, count: usize) -> Vec<Opening> {
    crate::chess::attacks::init();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut attempt = 0u64;
    while out.len() < count && attempt < 100 * count as u64 + 1000 {
        let mut state = seed ^ attempt.wrapping_mul(0xD1B5_4A32_D192_ED03);
        attempt += 1;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut game = crate::chess::Game::new(Position::startpos());
        for _ in 0..plies {
            let moves = game.position().legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves.iter().nth((next() % moves.len() as u64) as usize).copied().expect("a legal move");
            game.play_unchecked(m);
        }
        if game.moves().len() == plies && game.outcome().is_none() && seen.insert(key(game.position())) {
            out.push(Opening { start: Position::startpos(), moves: game.moves().to_vec() });
        }
    }
    out
}

/// A position's identity for exclusion and distinctness: its Zobrist key (placement, side,
/// castling, en passant; move counters aside), as repetitions are told apart.
fn key(p: &Position) -> u64 {
    p.hash()
}

/// The start positions (as [`key`]) of the games of a PGN file (`.xz` allowed; a game without
/// a `FEN` tag starts from the initial position). A game the reader skips counts by no start:
/// only where the games it reads begin matters.
pub fn game_starts(path: &str) -> Result<std::collections::HashSet<u64>, String> {
    let reader = crate::chess::pgn::open_pgn(path).map_err(|e| format!("{path}: {e}"))?;
    let mut reader = PgnReader::new(reader);
    let mut starts = std::collections::HashSet::new();
    while let Some(game) = reader.next_game() {
        if let Ok(g) = game {
            starts.insert(key(&g.start));
        }
    }
    if starts.is_empty() {
        return Err(format!("{path}: no games in the file"));
    }
    Ok(starts)
}

/// `suite` without the openings that begin where a game of `starts` began (the position the
/// engines take over from, after the opening's moves), and `first` (0-based, in `suite`)
/// moved to the same opening of what is kept (or the next kept one). Returns the openings
/// kept, the new first and how many were left out.
pub fn exclude(suite: Vec<Opening>, first: usize, starts: &std::collections::HashSet<u64>) -> (Vec<Opening>, usize, usize) {
    let before = suite.len();
    // A first past the end wraps, as `order` wraps it.
    let first = first % before.max(1);
    let mut new_first = None;
    let mut kept = Vec::with_capacity(before);
    for (i, o) in suite.into_iter().enumerate() {
        if starts.contains(&key(g_to_game(&o).position())) {
            continue;
        }
        if i >= first && new_first.is_none() {
            new_first = Some(kept.len());
        }
        kept.push(o);
    }
    let left = before - kept.len();
    (kept, new_first.unwrap_or(0), left)
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

    #[test]
    fn random_openings_are_distinct_reproducible_and_differ_by_seed() {
        let a = random(6, 1, 2000);
        assert_eq!(a.len(), 2000);
        assert_eq!(a, random(6, 1, 2000));
        let keys = |v: &[Opening]| v.iter().map(|o| key(g_to_game(o).position())).collect::<std::collections::HashSet<_>>();
        assert_eq!(keys(&a).len(), 2000, "no opening twice");
        assert!(a.iter().all(|o| o.start == Position::startpos() && o.moves.len() == 6));
        let b = random(6, 2, 2000);
        assert_ne!(a[..10], b[..10]);
        // A prefix of a longer suite is the shorter one: opening k depends on the seed and k.
        assert_eq!(random(6, 1, 10)[..], a[..10]);
        assert_eq!(load("random:6:1").unwrap()[..2000], a[..]);
        // Seed 004's Table 1 (make neurochess-table1): the test curves' suite and the validation
        // curve's share no opening over the 1,200 pairs a curve of 2,400 games plays.
        let (test, valid) = (random(6, 4004, 1200), random(6, 4005, 1200));
        assert!(keys(&test).is_disjoint(&keys(&valid)));
        for bad in ["random:", "random:0:1", "random:13:1", "random:6", "random:x:1", "random:6:-1"] {
            assert!(load(bad).unwrap_err().contains("random:PLIES:SEED"), "{bad}");
        }
    }

    #[test]
    fn exclusion_drops_openings_a_corpus_started_from_and_keeps_the_first_one_named() {
        let fens = ["4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "4k3/8/8/8/8/8/8/1R2K3 w - - 0 1", "4k3/8/8/8/8/8/8/2R1K3 w - - 0 1", "4k3/8/8/8/8/8/8/3RK3 w - - 0 1"];
        let suite: Vec<Opening> = fens.iter().map(|f| Opening { start: Position::from_fen(f).unwrap(), moves: Vec::new() }).collect();
        // The corpus began at the second opening (its counters differ: they do not count).
        let starts: std::collections::HashSet<u64> = [key(&Position::from_fen("4k3/8/8/8/8/8/8/1R2K3 w - - 7 30").unwrap())].into();
        let (kept, first, left) = exclude(suite.clone(), 2, &starts);
        assert_eq!((kept.len(), first, left), (3, 1, 1));
        assert_eq!(kept[first], suite[2]);
        // A first that is itself excluded moves to the next kept opening; past the end, it wraps.
        assert_eq!(exclude(suite.clone(), 1, &starts).1, 1);
        assert_eq!(exclude(suite.clone(), 7, &starts).1, 2);
        assert_eq!(exclude(suite.clone(), 0, &Default::default()), (suite, 0, 0));
    }
}
