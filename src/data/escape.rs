//! The escape suite (seed 002's "escape" milestone as a number): positions from games, each an
//! escape case ([`crate::chess::threats`]: exactly one of the mover's pieces en prise, no
//! capture worth as much, a move that saves it), one per game at most, drawn at a seeded
//! random ply among the game's cases.
//!
//! The file is text, one case a line: the FEN, then `; hanging SQ; saves N of M` (the piece's
//! square, the saving and the legal moves). Reading recomputes each case from the FEN and
//! refuses a line whose figures disagree, so a suite stays what its builder wrote.

use crate::chess::pgn::PgnReader;
use crate::chess::threats::{escape_case, Escape};
use crate::chess::{Position, Square};
use crate::tensor::Rng;
use std::io::BufRead;

/// One position of the suite and its case.
#[derive(Clone, Debug)]
pub struct Case {
    pub pos: Position,
    pub escape: Escape,
}

impl Case {
    /// The line of the suite file.
    pub fn line(&self) -> String {
        format!("{} ; hanging {} ; saves {} of {}", self.pos.fen(), self.escape.square, self.escape.saving.len(), self.escape.legal)
    }

    /// The share of legal moves that save the piece: a uniformly random mover's rate here.
    pub fn random_rate(&self) -> f64 {
        self.escape.saving.len() as f64 / self.escape.legal.max(1) as f64
    }
}

/// What building read.
#[derive(Clone, Debug, Default)]
pub struct Built {
    pub games: usize,
    pub games_with_a_case: usize,
    pub cases_seen: usize,
}

/// Up to `want` cases from the games of `pgns` (read in order), one per game at a ply drawn by
/// `seed` among the game's escape cases, no position twice. A game the reader cannot parse is
/// skipped (it counts in no figure).
pub fn build(pgns: Vec<Box<dyn BufRead>>, want: usize, seed: u64) -> (Vec<Case>, Built) {
    let mut out: Vec<Case> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut st = Built::default();
    'files: for r in pgns {
        let mut reader = PgnReader::new(r);
        while let Some(g) = reader.next_game() {
            let Ok(g) = g else { continue };
            st.games += 1;
            let game = g.to_game();
            let mut pos = *game.start();
            let mut cases = Vec::new();
            for &m in game.moves() {
                if let Some(e) = escape_case(&pos) {
                    cases.push(Case { pos, escape: e });
                }
                pos.play(m);
            }
            st.cases_seen += cases.len();
            if cases.is_empty() {
                continue;
            }
            st.games_with_a_case += 1;
            let mut rng = Rng::new(seed ^ (st.games as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let c = cases.swap_remove(rng.below(cases.len() as u64) as usize);
            if seen.insert(c.pos.hash()) {
                out.push(c);
                if out.len() == want {
                    break 'files;
                }
            }
        }
    }
    (out, st)
}

/// The cases of a suite file's text; `what` names it in errors (with the line).
pub fn read(text: &str, what: &str) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{what}, line {}", i + 1);
        let mut parts = line.split(';').map(str::trim);
        let fen = parts.next().unwrap_or("");
        let pos = Position::from_fen(fen).map_err(|e| format!("{}: {e}", at()))?;
        let escape = escape_case(&pos).ok_or_else(|| format!("{}: not an escape case (no single hanging piece with a save)", at()))?;
        let (mut square, mut counts) = (None, None);
        for p in parts {
            if let Some(s) = p.strip_prefix("hanging ") {
                square = Some(Square::parse(s.trim()).ok_or_else(|| format!("{}: bad square '{s}'", at()))?);
            } else if let Some(s) = p.strip_prefix("saves ") {
                let (n, m) = s.split_once(" of ").ok_or_else(|| format!("{}: 'saves N of M' expected, found '{p}'", at()))?;
                let num = |t: &str| t.trim().parse::<usize>().map_err(|_| format!("{}: bad count '{t}'", at()));
                counts = Some((num(n)?, num(m)?));
            } else if !p.is_empty() {
                return Err(format!("{}: unknown field '{p}'", at()));
            }
        }
        if square.is_some_and(|s| s != escape.square) || counts.is_some_and(|c| c != (escape.saving.len(), escape.legal)) {
            return Err(format!("{}: the file says {} but the position has the piece on {} with {} of {} moves saving it", at(), line.split_once(';').map_or("", |x| x.1).trim(), escape.square, escape.saving.len(), escape.legal));
        }
        out.push(Case { pos, escape });
    }
    Ok(out)
}

/// The suite shipped in `data/escape/` (built from held-out games; its README has the command).
pub const SHIPPED: &str = include_str!("../../data/escape/suite.epd");

/// [`SHIPPED`], read.
pub fn shipped() -> Vec<Case> {
    read(SHIPPED, "data/escape/suite.epd").expect("the shipped suite is checked by its test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_written_and_a_wrong_line_is_refused() {
        let pos = Position::from_fen("4k3/8/4p3/3N4/8/8/8/4K3 w - - 0 1").unwrap();
        let case = Case { pos, escape: escape_case(&pos).unwrap() };
        let back = read(&case.line(), "t").unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].escape, case.escape);
        assert!((case.random_rate() - 7.0 / 13.0).abs() < 1e-9, "{}", case.line());
        let wrong = case.line().replace("hanging d5", "hanging e4");
        assert!(read(&wrong, "t").unwrap_err().contains("t, line 1"));
        assert!(read("8/8/8/8/8/8/8/8 w - - 0 1", "t").is_err());
        assert!(read("not a fen", "t").unwrap_err().contains("line 1"));
        assert!(read(&format!("{} ; bogus", case.line()), "t").unwrap_err().contains("unknown field"));
    }

    #[test]
    fn the_shipped_suite_reads() {
        let s = shipped();
        assert!(s.len() >= 200, "{} cases", s.len());
        let random = s.iter().map(Case::random_rate).sum::<f64>() / s.len() as f64;
        assert!((0.05..0.5).contains(&random), "random mover's rate {random}");
    }

    #[test]
    fn building_takes_one_case_a_game() {
        let pgn = "[Event \"t\"]\n[Result \"*\"]\n\n1. e4 d5 2. Nc3 e6 3. Nb5 a6 4. Nc3 Nf6 *\n\n";
        let (cases, st) = build(vec![Box::new(std::io::Cursor::new(pgn.as_bytes().to_vec()))], 10, 1);
        assert_eq!((st.games, st.cases_seen, cases.len()), (1, 1, 1), "after 3...a6 the knight on b5 only");
        assert_eq!(cases[0].escape.square.to_string(), "b5");
    }
}
