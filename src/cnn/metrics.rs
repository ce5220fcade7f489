//! How the classifier is judged ("Test set accuracy", "final results"): accuracy at the
//! 0.5 threshold, cross-entropy, and the seed's buckets of the sigmoid output ([0.9–1.0],
//! [0.8–0.9], [0.65–0.8], … and the "difficult cases" [0.45–0.55]) with each bucket's share
//! of positions, accuracy, and how often White actually won there (calibration).

use std::fmt::Write as _;

/// The seed's output buckets, from "Black predicted to win [0.0–0.1]" to "White predicted to
/// win [0.9–1.0]"; [0.35–0.45] and [0.55–0.65] fill the gaps the seed leaves.
pub const BUCKETS: [(f32, f32); 9] =
    [(0.0, 0.1), (0.1, 0.2), (0.2, 0.35), (0.35, 0.45), (0.45, 0.55), (0.55, 0.65), (0.65, 0.8), (0.8, 0.9), (0.9, 1.0)];

/// One bucket's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    pub positions: usize,
    /// Predicted winner (White above 0.5) right.
    pub right: usize,
    /// Positions whose game White won.
    pub white_won: usize,
    pub sum_p: f64,
}

/// Figures of a net on one set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub positions: usize,
    pub right: usize,
    pub bce: f64,
    pub buckets: [Bucket; 9],
}

/// Which bucket holds `p` (upper edges belong to the bucket above; 1.0 to the last).
pub fn bucket_of(p: f32) -> usize {
    BUCKETS.iter().position(|&(_, hi)| p < hi).unwrap_or(BUCKETS.len() - 1)
}

impl Report {
    /// Adds one position: `p` = P(White wins) from the net, `white_won` its label.
    pub fn add(&mut self, p: f32, white_won: bool) {
        let right = (p > 0.5) == white_won;
        self.positions += 1;
        self.right += right as usize;
        let q = p.clamp(1e-7, 1.0 - 1e-7) as f64;
        self.bce -= if white_won { q.ln() } else { (1.0 - q).ln() };
        let b = &mut self.buckets[bucket_of(p)];
        b.positions += 1;
        b.right += right as usize;
        b.white_won += white_won as usize;
        b.sum_p += p as f64;
    }

    pub fn accuracy(&self) -> f64 {
        self.right as f64 / self.positions.max(1) as f64
    }

    /// Share of positions whose game White won: the accuracy of always answering "White".
    pub fn white_share(&self) -> f64 {
        self.buckets.iter().map(|b| b.white_won).sum::<usize>() as f64 / self.positions.max(1) as f64
    }

    pub fn mean_bce(&self) -> f64 {
        self.bce / self.positions.max(1) as f64
    }

    /// Markdown rows of the calibration table (bucket, share, accuracy, mean output, White's
    /// observed win rate).
    pub fn calibration_rows(&self) -> String {
        let mut s = String::new();
        for (b, &(lo, hi)) in self.buckets.iter().zip(BUCKETS.iter()) {
            let n = b.positions.max(1) as f64;
            let pct = |x: usize| if b.positions == 0 { "–".to_string() } else { format!("{:.1} %", 100.0 * x as f64 / n) };
            let _ = writeln!(
                s,
                "| [{lo:.2}–{hi:.2}]{} | {} ({:.1} %) | {} | {} | {} |",
                if lo == 0.45 { " difficult" } else { "" },
                b.positions,
                100.0 * b.positions as f64 / self.positions.max(1) as f64,
                pct(b.right),
                if b.positions == 0 { "–".to_string() } else { format!("{:.3}", b.sum_p / n) },
                pct(b.white_won),
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_accuracy() {
        assert_eq!(bucket_of(0.0), 0);
        assert_eq!(bucket_of(0.1), 1);
        assert_eq!(bucket_of(0.5), 4);
        assert_eq!(bucket_of(0.95), 8);
        assert_eq!(bucket_of(1.0), 8);
        let mut r = Report::default();
        r.add(0.95, true);
        r.add(0.92, false);
        r.add(0.05, false);
        r.add(0.5, true); // 0.5 predicts Black: wrong
        assert_eq!((r.positions, r.right), (4, 2));
        assert_eq!(r.buckets[8].positions, 2);
        assert_eq!(r.buckets[8].right, 1);
        assert_eq!(r.buckets[8].white_won, 1);
        assert_eq!(r.white_share(), 0.5);
        let expected = -(0.95f64.ln() + 0.08f64.ln() + 0.95f64.ln() + 0.5f64.ln()) / 4.0;
        assert!((r.mean_bce() - expected).abs() < 1e-6);
        assert!(r.calibration_rows().contains("| [0.45–0.55] difficult | 1 (25.0 %) | 0.0 % | 0.500 | 100.0 % |"), "{}", r.calibration_rows());
    }
}
