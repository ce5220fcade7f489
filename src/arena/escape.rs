//! Escape rates: on a suite of escape cases ([`crate::data::escape`]), the share in which a
//! player's move saves the hanging piece, beside the two baselines computed exactly (no
//! sampling): a uniformly random mover (saving moves over legal moves, averaged) and the
//! one-ply greedy capturer (the capture of the most valuable piece, the first on a tie, else a
//! random move).

use crate::chess::threats::{greedy_capture, saves};
use crate::chess::Game;
use crate::data::escape::Case;
use crate::search::{Limits, Player};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A rate over a suite: the saves and the cases (the baselines' expected saves are fractional).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub saved: f64,
    pub cases: usize,
}

impl Rate {
    pub fn share(&self) -> f64 {
        self.saved / self.cases.max(1) as f64
    }

    /// The 95 % interval of the share (Wilson's score interval: inside [0, 1] however few
    /// the cases or however near 0 or 1 the share, where the normal approximation gave
    /// intervals such as 20.5 % ± 79.1).
    pub fn interval(&self) -> (f64, f64) {
        let (p, n, z) = (self.share(), self.cases.max(1) as f64, 1.96f64);
        let d = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / d;
        let half = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
        ((centre - half).max(0.0), (centre + half).min(1.0))
    }

    /// `34.5 % [28.3, 41.3] (69 of 200)`.
    pub fn text(&self) -> String {
        let (lo, hi) = self.interval();
        format!("{:.1} % [{:.1}, {:.1}] ({:.0} of {})", 100.0 * self.share(), 100.0 * lo, 100.0 * hi, self.saved, self.cases)
    }
}

/// The uniformly random mover's expected rate.
pub fn random_rate(suite: &[Case]) -> Rate {
    Rate { saved: suite.iter().map(Case::random_rate).sum(), cases: suite.len() }
}

/// The one-ply greedy capturer's expected rate.
pub fn greedy_rate(suite: &[Case]) -> Rate {
    let saved = suite
        .iter()
        .map(|c| match greedy_capture(&c.pos) {
            Some(m) => saves(&c.pos, c.escape.square, m) as u8 as f64,
            None => c.random_rate(),
        })
        .sum();
    Rate { saved, cases: suite.len() }
}

/// `player`'s rate within `limits` per position (a new game each, so no table carries over).
pub fn player_rate(player: &mut dyn Player, suite: &[Case], limits: &Limits) -> Rate {
    let mut saved = 0usize;
    for c in suite {
        player.new_game();
        let game = Game::new(c.pos);
        let r = player.choose(&game, limits, Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {});
        saved += r.best.is_some_and(|m| c.escape.saving.contains(&m)) as usize;
    }
    Rate { saved: saved as f64, cases: suite.len() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::threats::escape_case;
    use crate::chess::Position;

    fn case(fen: &str) -> Case {
        let pos = Position::from_fen(fen).unwrap();
        Case { pos, escape: escape_case(&pos).unwrap() }
    }

    #[test]
    fn baselines_on_hand_made_cases() {
        // The knight on d5 hit by a pawn: 7 of 13 moves save it, no capture for the greedy.
        let a = case("4k3/8/4p3/3N4/8/8/8/4K3 w - - 0 1");
        // The bishop can take the attacker: the greedy capturer takes it and saves the knight.
        let b = case("4k3/8/4p3/3N4/8/7B/8/4K3 w - - 0 1");
        let r = random_rate(&[a.clone()]);
        assert!((r.share() - 7.0 / 13.0).abs() < 1e-9);
        let g = greedy_rate(&[a.clone(), b.clone()]);
        assert!((g.saved - (7.0 / 13.0 + 1.0)).abs() < 1e-9, "{g:?}");
        assert_eq!(Rate { saved: 50.0, cases: 100 }.text(), "50.0 % [40.4, 59.6] (50 of 100)");
    }

    /// Issue 79: intervals stay inside [0, 100] % for every count, and hold the share.
    #[test]
    fn intervals_are_wilson_and_stay_inside_0_and_100() {
        assert_eq!(Rate { saved: 1.0, cases: 5 }.text(), "20.0 % [3.6, 62.4] (1 of 5)");
        for cases in [1usize, 2, 3, 5, 10, 37, 200] {
            for saved in 0..=cases {
                let r = Rate { saved: saved as f64, cases };
                let (lo, hi) = r.interval();
                assert!((0.0..=r.share()).contains(&lo) && (r.share()..=1.0).contains(&hi) && lo < hi, "{}", r.text());
            }
        }
    }

    #[test]
    fn the_handcrafted_search_saves_a_knight_a_pawn_attacks() {
        let suite = [case("4k3/8/4p3/3N4/8/8/8/4K3 w - - 0 1"), case("r3k3/8/8/8/8/8/8/N3K3 w - - 0 1")];
        let mut p = crate::search::Searcher::new(crate::eval::handcrafted(), 1);
        let r = player_rate(&mut p, &suite, &Limits::depth(2));
        assert_eq!(r.saved, 2.0, "{r:?}");
    }
}
