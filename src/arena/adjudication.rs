//! Ending a game early on the engines' own scores, as rating lists and match runners do:
//! one rule, with the settings of matches and of datagen.

use crate::chess::{Color, Outcome};

/// Win and draw adjudication on White-relative engine scores, one per engine move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adjudication {
    /// Win: the last `win_plies` scores all at least `win_cp` for the same side (an even
    /// count: both engines agree).
    pub win_plies: usize,
    pub win_cp: i32,
    /// Draw: from ply `draw_from_ply` of the game on, the last `draw_plies` scores all
    /// within ±`draw_cp`.
    pub draw_from_ply: usize,
    pub draw_plies: usize,
    pub draw_cp: i32,
}

impl Adjudication {
    /// Matches, fishtest-like (cutechess `-resign movecount=3 score=600 twosided=true -draw
    /// movenumber=34 movecount=8 score=20`): three moves of each engine at 600 cp or more
    /// for one side; eight moves of each within ±20 cp from move 34 on.
    pub const MATCH: Adjudication = Adjudication { win_plies: 6, win_cp: 600, draw_from_ply: 68, draw_plies: 16, draw_cp: 20 };

    /// Datagen, the shipped corpus's settings (data/README.md): six plies at 9 pawns or more
    /// for one side; ten plies within ±8 cp past ply 80.
    pub const DATAGEN: Adjudication = Adjudication { win_plies: 6, win_cp: 900, draw_from_ply: 81, draw_plies: 10, draw_cp: 8 };

    /// The verdict after the latest move, if any. `scores` are White-relative, one per engine
    /// move (`None`: the engine gave no score, which breaks a streak); `plies` counts every
    /// move of the game, opening included.
    pub fn verdict(&self, scores: &[Option<i32>], plies: usize) -> Option<(Outcome, String)> {
        let n = scores.len();
        let tail = |k: usize| (n >= k && k > 0).then(|| &scores[n - k..]);
        if let Some(t) = tail(self.win_plies) {
            let moves = self.win_plies / 2;
            if t.iter().all(|s| s.is_some_and(|s| s >= self.win_cp)) {
                return Some((Outcome::Win(Color::White), format!("both engines score White ≥ {} cp for {moves} moves", self.win_cp)));
            }
            if t.iter().all(|s| s.is_some_and(|s| s <= -self.win_cp)) {
                return Some((Outcome::Win(Color::Black), format!("both engines score Black ≥ {} cp for {moves} moves", self.win_cp)));
            }
        }
        if plies >= self.draw_from_ply {
            if let Some(t) = tail(self.draw_plies) {
                if t.iter().all(|s| s.is_some_and(|s| s.abs() <= self.draw_cp)) {
                    return Some((Outcome::Draw, format!("both engines within {} cp for {} moves", self.draw_cp, self.draw_plies / 2)));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[i32]) -> Vec<Option<i32>> {
        v.iter().map(|&x| Some(x)).collect()
    }

    #[test]
    fn match_adjudication() {
        let a = Adjudication::MATCH;
        // Five plies at +600 are not enough; six are (three moves each).
        assert!(a.verdict(&s(&[0, 600, 700, 650, 900, 600, 610]), 20).is_some());
        assert!(a.verdict(&s(&[0, 0, 700, 650, 900, 600, 610]), 20).is_none());
        assert_eq!(a.verdict(&s(&[-600; 6]), 10).unwrap().0, Outcome::Win(Color::Black));
        assert!(a.verdict(&s(&[600, 600, 599, 600, 600, 600]), 20).is_none());
        // A missing score breaks the streak.
        let mut v = s(&[800; 6]);
        v[2] = None;
        assert!(a.verdict(&v, 20).is_none());
        // Draw: 16 plies within 20 cp, but only from move 34 on.
        assert!(a.verdict(&s(&[5; 16]), 67).is_none());
        assert_eq!(a.verdict(&s(&[5; 16]), 68).unwrap().0, Outcome::Draw);
        assert!(a.verdict(&s(&[5; 15]), 90).is_none());
        let mut d = s(&[-20; 16]);
        d[0] = Some(21);
        assert!(a.verdict(&d, 90).is_none());
        assert_eq!(a.verdict(&s(&[700; 6]), 10).unwrap().1, "both engines score White ≥ 600 cp for 3 moves");
    }

    /// Datagen's rule as the corpus was made with it: six plies at 9 pawns; ten plies within
    /// 8 cp once the game is past ply 80 (so at ply 81, not 80).
    #[test]
    fn datagen_adjudication() {
        let a = Adjudication::DATAGEN;
        assert!(a.verdict(&s(&[899, 900, 900, 900, 900, 900]), 40).is_none());
        assert_eq!(a.verdict(&s(&[900; 6]), 40).unwrap().0, Outcome::Win(Color::White));
        assert_eq!(a.verdict(&s(&[-1000; 6]), 40).unwrap().0, Outcome::Win(Color::Black));
        assert!(a.verdict(&s(&[8; 10]), 80).is_none());
        assert_eq!(a.verdict(&s(&[-8; 10]), 81).unwrap().0, Outcome::Draw);
        assert!(a.verdict(&s(&[8; 9]), 200).is_none());
        assert!(a.verdict(&s(&[9, 8, 8, 8, 8, 8, 8, 8, 8, 8]), 200).is_none());
    }
}
