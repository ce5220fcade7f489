//! The tournament's journal: one append-only text file that holds everything the event has
//! decided (its settings, each round's pairings) and every finished game (result, search
//! figures, the game's PGN), one line per record, each line written whole and synced before
//! the next game is counted. A killed tournament reads it back and continues: a game is in
//! the journal exactly once or not at all (a line cut short by the kill is dropped and its
//! game played again), and every other output (PGN files, tables, ladders) is made from it.
//!
//! Lines (fields separated by tabs; text fields escaped: `\\`, `\t`, `\n`):
//! - `#...`: comments; `C\tKEY\tVALUE`: a setting the event was started with;
//! - `R\tCOND\tROUND\tA,B,OPENING;...`: a round's pairs (A has White in the pair's first game);
//! - `G\tCOND\tROUND\tPAIR\tGAME\tRESULT\tTERMINATION\tPLIES\tWHITE_SEARCH\tBLACK_SEARCH\tPGN`.

use crate::arena::match_runner::Searched;
use crate::chess::{Color, Outcome};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

const HEADER: &str = "# deepchess tournament journal, version 2\n";
/// Journals before each record carried its checksum: read, never written.
const HEADER_V1: &str = "# deepchess tournament journal, version 1\n";

/// The most a journal may hold: a game's line is a few KiB, so a million games.
const MAX_BYTES: u64 = 4 << 30;

/// One pair of a round: `a` has White in the first game, `b` in the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub opening: usize,
}

/// One finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameLine {
    pub cond: String,
    pub round: usize,
    pub pair: usize,
    /// 0: `a` had White; 1: `b` had White.
    pub game: usize,
    pub outcome: Outcome,
    pub termination: String,
    pub plies: usize,
    /// (white, black).
    pub searched: [Searched; 2],
    pub pgn: String,
}

/// What the journal holds, read back.
#[derive(Debug, Default)]
pub struct Journal {
    path: PathBuf,
    /// Whether the file holds its header line (a kill during the first write can leave a
    /// file cut inside it, which `open` empties).
    headed: bool,
    pub settings: Vec<(String, String)>,
    /// Rounds by (condition, round).
    pub rounds: BTreeMap<(String, usize), Vec<Pair>>,
    /// Games by (condition, round, pair, game).
    pub games: BTreeMap<(String, usize, usize, usize), GameLine>,
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\t' => o.push_str("\\t"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c => o.push(c),
        }
    }
    o
}

fn unescape(s: &str) -> Result<String, String> {
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('\\') => o.push('\\'),
            Some('t') => o.push('\t'),
            Some('n') => o.push('\n'),
            Some('r') => o.push('\r'),
            other => return Err(format!("bad escape '\\{}'", other.map_or(String::new(), String::from))),
        }
    }
    Ok(o)
}

pub fn result_text(o: Outcome) -> &'static str {
    match o {
        Outcome::Win(Color::White) => "1-0",
        Outcome::Win(Color::Black) => "0-1",
        Outcome::Draw => "1/2-1/2",
    }
}

fn parse_result(s: &str) -> Option<Outcome> {
    match s {
        "1-0" => Some(Outcome::Win(Color::White)),
        "0-1" => Some(Outcome::Win(Color::Black)),
        "1/2-1/2" => Some(Outcome::Draw),
        _ => None,
    }
}

fn searched_text(s: &Searched) -> String {
    format!("{},{},{},{},{},{}", s.moves, s.depth_sum, s.depth_moves, s.nodes, s.nodes_ms, s.nodes_moves)
}

fn parse_searched(s: &str) -> Option<Searched> {
    let v: Vec<u64> = s.split(',').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [moves, depth_sum, depth_moves, nodes, nodes_ms, nodes_moves] = v[..] else { return None };
    Some(Searched {
        moves: moves as u32,
        depth_sum,
        depth_moves: depth_moves as u32,
        nodes,
        nodes_ms,
        nodes_moves: nodes_moves as u32,
    })
}

fn parse_pairs(s: &str) -> Option<Vec<Pair>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split(';')
        .map(|p| {
            let v: Vec<usize> = p.split(',').map(|x| x.parse().ok()).collect::<Option<_>>()?;
            let [a, b, opening] = v[..] else { return None };
            Some(Pair { a, b, opening })
        })
        .collect()
}

impl Journal {
    /// Reads `path` (a missing file is an empty journal). A last line without its line end
    /// (cut by a kill) is dropped from the file; any other bad line is an error naming it.
    /// The journal is the tournament's own file: a regular file of at most [`MAX_BYTES`],
    /// never a symbolic link (appending through one would write outside `--out`).
    pub fn open(path: &Path) -> Result<Journal, String> {
        let mut j = Journal { path: path.to_path_buf(), ..Journal::default() };
        let err = |e: std::io::Error| format!("{}: {e}", path.display());
        let bytes = match crate::io::files::read_own(path, MAX_BYTES, "tournament journal") {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(j),
            Err(e) => return Err(err(e)),
        };
        // The kill came mid-line: that record never happened (the header's line too).
        let whole = crate::io::files::cut_torn_line(path, &bytes, "tournament journal").map_err(err)?;
        j.headed = whole > 0;
        let text = std::str::from_utf8(&bytes[..whole]).map_err(|_| format!("{}: not UTF-8 text", path.display()))?;
        if !text.is_empty() && !text.starts_with(HEADER) && !text.starts_with(HEADER_V1) {
            return Err(format!("{}: not a deepchess tournament journal (first line differs)", path.display()));
        }
        let sealed = !text.starts_with(HEADER_V1);
        for (n, line) in text.lines().enumerate() {
            let at = || format!("{}:{}", path.display(), n + 1);
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let line = if sealed { crate::io::checksum::unseal_line(line).map_err(|e| format!("{}: {e}", at()))? } else { line };
            let f: Vec<&str> = line.split('\t').collect();
            match f[0] {
                "C" if f.len() == 3 => j.settings.push((f[1].to_string(), unescape(f[2]).map_err(|e| format!("{}: {e}", at()))?)),
                "R" if f.len() == 4 => {
                    let round = f[2].parse().map_err(|_| format!("{}: bad round '{}'", at(), f[2]))?;
                    let pairs = parse_pairs(f[3]).ok_or_else(|| format!("{}: bad pairs", at()))?;
                    j.rounds.insert((f[1].to_string(), round), pairs);
                }
                "G" if f.len() == 11 => {
                    let num = |i: usize| f[i].parse::<usize>().map_err(|_| format!("{}: field {} is not a number: '{}'", at(), i + 1, f[i]));
                    let g = GameLine {
                        cond: f[1].to_string(),
                        round: num(2)?,
                        pair: num(3)?,
                        game: num(4)?,
                        outcome: parse_result(f[5]).ok_or_else(|| format!("{}: bad result '{}'", at(), f[5]))?,
                        termination: unescape(f[6]).map_err(|e| format!("{}: {e}", at()))?,
                        plies: num(7)?,
                        searched: [
                            parse_searched(f[8]).ok_or_else(|| format!("{}: bad search figures", at()))?,
                            parse_searched(f[9]).ok_or_else(|| format!("{}: bad search figures", at()))?,
                        ],
                        pgn: unescape(f[10]).map_err(|e| format!("{}: {e}", at()))?,
                    };
                    let key = (g.cond.clone(), g.round, g.pair, g.game);
                    let known = j.rounds.get(&(g.cond.clone(), g.round)).is_some_and(|r| g.pair < r.len()) && g.game < 2;
                    if !known {
                        return Err(format!("{}: a game of no pair the journal scheduled", at()));
                    }
                    if j.games.insert(key, g).is_some() {
                        return Err(format!("{}: the same game recorded twice", at()));
                    }
                }
                _ => return Err(format!("{}: unreadable record", at())),
            }
        }
        Ok(j)
    }

    /// Appends lines and syncs them to disk before returning.
    fn append(&mut self, text: &str) -> Result<(), String> {
        use crate::io::{open_append, Place};
        let mut f: File = open_append(&self.path, "tournament journal", Place::Own).map_err(|e| format!("{}: {e}", self.path.display()))?;
        let sealed: String = text.lines().map(|l| format!("{}\n", crate::io::checksum::seal_line(l))).collect();
        let body = if self.headed { sealed } else { format!("{HEADER}{sealed}") };
        f.write_all(body.as_bytes()).and_then(|_| f.sync_data()).map_err(|e| format!("{}: {e}", self.path.display()))?;
        self.headed = true;
        Ok(())
    }

    /// Records settings of the event (all at once, one write: a kill leaves all or a cut
    /// last line, which is dropped and the setting written again).
    pub fn write_settings(&mut self, settings: &[(String, String)]) -> Result<(), String> {
        let text: String = settings.iter().map(|(k, v)| format!("C\t{k}\t{}\n", escape(v))).collect();
        self.append(&text)?;
        self.settings.extend(settings.iter().cloned());
        Ok(())
    }

    /// Records a round's pairs (one line, so that a kill leaves all or none of them).
    pub fn write_round(&mut self, cond: &str, round: usize, pairs: &[Pair]) -> Result<(), String> {
        let list: Vec<String> = pairs.iter().map(|p| format!("{},{},{}", p.a, p.b, p.opening)).collect();
        self.append(&format!("R\t{cond}\t{round}\t{}\n", list.join(";")))?;
        self.rounds.insert((cond.to_string(), round), pairs.to_vec());
        Ok(())
    }

    /// Records a finished game.
    pub fn write_game(&mut self, g: GameLine) -> Result<(), String> {
        let key = (g.cond.clone(), g.round, g.pair, g.game);
        if self.games.contains_key(&key) {
            return Err(format!("game {key:?} is already in the journal"));
        }
        self.append(&format!(
            "G\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            g.cond,
            g.round,
            g.pair,
            g.game,
            result_text(g.outcome),
            escape(&g.termination),
            g.plies,
            searched_text(&g.searched[0]),
            searched_text(&g.searched[1]),
            escape(&g.pgn)
        ))?;
        self.games.insert(key, g);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("dc-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        d
    }

    fn game(pair: usize, g: usize) -> GameLine {
        GameLine {
            cond: "time".into(),
            round: 0,
            pair,
            game: g,
            outcome: Outcome::Draw,
            termination: "normal".into(),
            plies: 40,
            searched: [Searched { moves: 20, depth_sum: 100, depth_moves: 20, nodes: 5000, nodes_ms: 900, nodes_moves: 20 }, Searched::default()],
            pgn: "[Event \"x\\y\"]\n\n1. e4 {+0.10/3\t0.01s} *\n".into(),
        }
    }

    #[test]
    fn round_trips_and_a_cut_line_is_dropped() {
        let p = temp("rt");
        let mut j = Journal::open(&p).unwrap();
        j.write_settings(&[("players".into(), "a\tb".into())]).unwrap();
        j.write_round("time", 0, &[Pair { a: 0, b: 1, opening: 0 }, Pair { a: 2, b: 0, opening: 1 }]).unwrap();
        j.write_game(game(0, 0)).unwrap();
        assert!(j.write_game(game(0, 0)).is_err(), "a game is counted once");
        j.write_game(game(1, 1)).unwrap();
        // A kill in the middle of the next record.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"G\ttime\t0\t0\t1\t1-0\tnor").unwrap();
        drop(f);
        let back = Journal::open(&p).unwrap();
        assert_eq!(back.settings, vec![("players".to_string(), "a\tb".to_string())]);
        assert_eq!(back.rounds[&("time".to_string(), 0)].len(), 2);
        assert_eq!(back.games.len(), 2);
        assert_eq!(back.games[&("time".to_string(), 0, 0, 0)], game(0, 0));
        assert!(std::fs::read_to_string(&p).unwrap().ends_with('\n'), "the cut line is gone from the file");
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn bad_journals_are_refused_with_the_line() {
        let p = temp("bad");
        std::fs::write(&p, "not a journal\n").unwrap();
        assert!(Journal::open(&p).unwrap_err().contains("not a deepchess tournament journal"));
        // Records of a version-1 journal (no checksums) are still read, and checked.
        std::fs::write(&p, format!("{HEADER_V1}R\ttime\t0\t0,1,0\nG\ttime\t0\t5\t0\t1-0\tnormal\t3\t1,1,1,1,1,1\t0,0,0,0,0,0\tx\n")).unwrap();
        assert!(Journal::open(&p).unwrap_err().contains(":3: a game of no pair"));
        std::fs::write(&p, format!("{HEADER_V1}X\t1\n")).unwrap();
        assert!(Journal::open(&p).unwrap_err().contains(":2: unreadable record"));
        // Version 2: a record without its checksum, or changed after it was written, is
        // named as corruption, and the file is left as it was.
        std::fs::write(&p, format!("{HEADER}R\ttime\t0\t0,1,0\n")).unwrap();
        assert!(Journal::open(&p).unwrap_err().contains(":2: corrupt: the record has lost its checksum"));
        let _ = std::fs::remove_file(&p);
        let mut j = Journal::open(&p).unwrap();
        j.write_round("time", 0, &[Pair { a: 0, b: 1, opening: 0 }]).unwrap();
        j.write_game(game(0, 0)).unwrap();
        let good = std::fs::read_to_string(&p).unwrap();
        let edited = good.replacen("\t1/2-1/2\t", "\t1-0\t", 1);
        assert_ne!(edited, good, "the game's result is in the file");
        std::fs::write(&p, &edited).unwrap();
        let e = Journal::open(&p).unwrap_err();
        assert!(e.contains(":3: corrupt: the record's checksum does not match"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), edited, "the refused journal is untouched");
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn a_journal_cut_inside_its_header_continues() {
        let p = temp("torn");
        for cut in [1, 17, HEADER.len() - 1] {
            std::fs::write(&p, &HEADER[..cut]).unwrap();
            let mut j = Journal::open(&p).unwrap();
            j.write_settings(&[("players".into(), "a,b".into())]).unwrap();
            let back = Journal::open(&p).unwrap();
            assert_eq!(back.settings.len(), 1, "cut at {cut}");
            assert!(std::fs::read_to_string(&p).unwrap().starts_with(HEADER));
        }
        let _ = std::fs::remove_file(&p);
    }

    #[cfg(unix)]
    #[test]
    fn links_devices_and_fifos_are_refused_untouched() {
        let p = temp("link");
        let outside = temp("outside");
        std::fs::write(&outside, HEADER).unwrap();
        std::os::unix::fs::symlink(&outside, &p).unwrap();
        let e = Journal::open(&p).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), HEADER, "the linked file is untouched");
        // Linked to /dev/zero: refused before a byte is read (it grew the process to 23 GB).
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        assert!(Journal::open(&p).unwrap_err().contains("symbolic link"));
        std::fs::remove_file(&p).unwrap();
        // A FIFO in its place: refused at once instead of blocking forever.
        if std::process::Command::new("mkfifo").arg(&p).status().is_ok_and(|s| s.success()) {
            let e = Journal::open(&p).unwrap_err();
            assert!(e.contains("FIFO"), "{e}");
            std::fs::remove_file(&p).unwrap();
        }
        let _ = std::fs::remove_file(&outside);
    }
}
