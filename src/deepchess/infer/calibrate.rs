//! Where the quantised net's scales come from: the largest value each unit takes on a fixed
//! set of positions, computed with the f32 net at load time (deterministic, a few
//! milliseconds for the compact net).
//!
//! The positions are the 1,000 balanced openings the matches start from, each played on
//! with random legal moves (captures preferred, so material comes off as in games) for up to
//! 60 plies, one position kept every 6 plies. Comparisons are measured on pairs the search
//! asks for: a position against its child, and against a position of another game.

use crate::chess::Position;
use crate::deepchess::features::Features;
use crate::deepchess::model::Net;
use crate::tensor::Rng;

const OPENINGS: &str = include_str!("../../../data/openings-balanced-1000.epd");

/// The calibration positions: (a position, the next one kept), in pairs of siblings along
/// a random game. `per_opening` positions from each of `openings` openings.
pub fn positions(openings: usize, per_opening: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for line in OPENINGS.lines().filter(|l| !l.trim().is_empty()).take(openings) {
        let fen = line.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
        let Ok(mut p) = Position::from_fen(&format!("{fen} 0 1")) else { continue };
        for ply in 0..per_opening * 6 {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            if ply % 6 == 0 {
                out.push(p);
            }
            let caps: Vec<_> = moves.iter().copied().filter(|&m| p.is_capture(m)).collect();
            let pool = if !caps.is_empty() && rng.below(2) == 0 { &caps[..] } else { moves.as_slice() };
            p.play(pool[rng.below(pool.len() as u64) as usize]);
        }
    }
    out
}

/// The range of every unit over the calibration positions and pairs, layer by layer, as the
/// quantised net needs them: the largest value for the 16-bit tower and codes, the
/// [`QUANTILE`] for the 8-bit activations of the head.
pub struct Ranges {
    /// After the first layer's ReLU (the largest value seen: 16-bit activations have room).
    pub first: Vec<f32>,
    /// After each later tower layer's ReLU (the largest).
    pub tower: Vec<Vec<f32>>,
    /// The head's first layer on one position: the largest |left| or |right| half.
    pub code: Vec<f32>,
    /// The head's first hidden layer on a pair, after its ReLU.
    pub z: Vec<f32>,
    /// After each later hidden head layer's ReLU (not the last layer).
    pub head: Vec<Vec<f32>>,
}

fn affine(w: &[f32], b: &[f32], x: &[f32], relu: bool) -> Vec<f32> {
    let n = b.len();
    let mut y = b.to_vec();
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for (yj, &wj) in y.iter_mut().zip(&w[i * n..(i + 1) * n]) {
                *yj += xi * wj;
            }
        }
    }
    if relu {
        y.iter_mut().for_each(|v| *v = v.max(0.0));
    }
    y
}

/// Every unit's values seen, to read a quantile of at the end.
#[derive(Clone, Default)]
struct Seen(Vec<Vec<f32>>);

impl Seen {
    fn grow(&mut self, v: &[f32]) {
        if self.0.is_empty() {
            self.0.resize(v.len(), Vec::new());
        }
        for (m, x) in self.0.iter_mut().zip(v) {
            m.push(x.abs());
        }
    }
    /// Each unit's `q`-quantile of |value|.
    fn quantile(&mut self, q: f64) -> Vec<f32> {
        self.0
            .iter_mut()
            .map(|v| {
                v.sort_unstable_by(f32::total_cmp);
                v.get(((v.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0)
            })
            .collect()
    }
}

/// The quantile of each unit's values taken as its range: the rare larger value saturates,
/// the common ones keep their resolution.
pub const QUANTILE: f64 = 0.999;

/// Runs the f32 net over `positions` (and pairs of them: each with its successor, and with
/// the position half the list away) and records each unit's range.
pub fn ranges(net: &Net, positions: &[Position]) -> Ranges {
    let p = |id| net.params.value(id);
    let (w0, b0) = (p(net.tower[0].0), p(net.tower[0].1));
    let (n0, f) = (w0.cols(), net.arch.features());
    let (h0w, h0b) = (p(net.head[0].0), p(net.head[0].1));
    let h = h0w.cols();
    let (mut first, mut tower, mut code, mut zs) = (Seen::default(), vec![Seen::default(); net.tower.len() - 1], Seen::default(), Seen::default());
    let mut head = vec![Seen::default(); net.head.len().saturating_sub(2)];
    let mut codes = Vec::with_capacity(positions.len());
    for pos in positions {
        let mut a = b0.row(0).to_vec();
        for &i in Features::from_position(pos).as_slice() {
            for (aj, &wj) in a.iter_mut().zip(&w0.data()[i as usize * n0..(i as usize + 1) * n0]) {
                *aj += wj;
            }
        }
        a.iter_mut().for_each(|v| *v = v.max(0.0));
        first.grow(&a);
        for (l, &(w, b)) in net.tower[1..].iter().enumerate() {
            a = affine(p(w).data(), p(b).row(0), &a, true);
            tower[l].grow(&a);
        }
        let left = affine(&h0w.data()[..f * h], h0b.row(0), &a, false);
        let right = affine(&h0w.data()[f * h..], &vec![0.0; h], &a, false);
        code.grow(&left);
        code.grow(&right);
        codes.push((left, right));
    }
    let n = codes.len();
    for i in 0..n {
        for j in [(i + 1) % n, (i + n / 2) % n] {
            for (x, y) in [(i, j), (j, i)] {
                let mut z: Vec<f32> = codes[x].0.iter().zip(&codes[y].1).map(|(a, b)| (a + b).max(0.0)).collect();
                zs.grow(&z);
                for (l, &(w, b)) in net.head[1..net.head.len() - 1].iter().enumerate() {
                    z = affine(p(w).data(), p(b).row(0), &z, true);
                    head[l].grow(&z);
                }
            }
        }
    }
    Ranges {
        first: first.quantile(1.0),
        tower: tower.iter_mut().map(|s| s.quantile(1.0)).collect(),
        // Codes keep every value seen (16 bits have room): the largest.
        code: code.quantile(1.0),
        z: zs.quantile(QUANTILE),
        head: head.iter_mut().map(|s| s.quantile(QUANTILE)).collect(),
    }
}
