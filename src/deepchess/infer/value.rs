//! The draw-referenced value (beyond the paper): a DeepChess comparator read as an
//! evaluation. Each position is compared with its own colour mirror, the draw reference the
//! comparison search already uses (docs/search.md), and the margin of that comparison is
//! the position's value. The search then orders positions by numbers, as it does a
//! handcrafted score, instead of asking the net about every pair.
//!
//! Why it may stand for the pairwise comparator: if the head were a difference of scores,
//! l(a, b) = s(a) − s(b) with s(mirror a) = −s(a), then the margin of a against its mirror,
//! l(a, ā) − l(ā, a), is 4 s(a). The value is that margin over 4, in the head's logit units,
//! and `P(a better than b) = sigmoid(value(a) − value(b))`; it is counted in whole
//! centipawns, as a handcrafted score is. Whether the trained head is close
//! enough is measured, not assumed: `deepchess accuracy` gives the value's pair accuracy
//! beside the comparator's (docs/results.md, "The draw-referenced value").
//!
//! Both halves of each comparison are kept along the search's line by one [`FirstLayer`]
//! twice as wide as the net's: the position's sums, then its mirror's, updated from the
//! same move's bits (the mirror's rows are the mirrored bits' rows).

use super::SiameseNet;
use crate::chess::Position;
use crate::deepchess::features::{Features, MAX_ACTIVE};
use crate::eval::line::{BoardBits, FirstLayer, Line};
use crate::eval::{Evaluator, CP_PER_LOGIT};
use std::sync::Arc;

/// A position's sums and its mirror's, side by side: `width()` is twice the net's.
struct WithMirror<'a, N>(&'a N);

/// Up to this many bits change in one update (a castling move changes four piece bits,
/// the side bit and up to two castling rights; `Line` replays one move at a time).
const MAX_CHANGED: usize = 16;

impl<N: SiameseNet> WithMirror<'_, N> {
    /// `active`'s bits as the mirror's (sorted: the order a refresh sums rows in).
    fn mirrored(&self, active: &[usize], out: &mut [usize; MAX_ACTIVE + 1]) -> usize {
        let bits = self.0.bits();
        let mut n = 0;
        let mut side_seen = false;
        for &i in active {
            if Some(i) == bits.side {
                side_seen = true;
            } else {
                out[n] = bits.mirror_bit(i);
                n += 1;
            }
        }
        if let (Some(side), false) = (bits.side, side_seen) {
            out[n] = side;
            n += 1;
        }
        out[..n].sort_unstable();
        n
    }
}

impl<N: SiameseNet> FirstLayer for WithMirror<'_, N> {
    type Sum = N::Sum;
    fn bits(&self) -> BoardBits {
        self.0.bits()
    }
    fn width(&self) -> usize {
        2 * self.0.width()
    }
    fn refresh(&self, active: &[usize], out: &mut [N::Sum]) {
        let h = self.0.width();
        let mut m = [0; MAX_ACTIVE + 1];
        let n = self.mirrored(active, &mut m);
        let (own, mirror) = out.split_at_mut(h);
        self.0.refresh(active, own);
        self.0.refresh(&m[..n], mirror);
    }
    fn update(&self, dst: &mut [N::Sum], src: &[N::Sum], added: &[usize], removed: &[usize]) {
        let h = self.0.width();
        let bits = self.0.bits();
        let (mut a, mut r) = ([0; MAX_CHANGED], [0; MAX_CHANGED]);
        let (mut na, mut nr) = (0, 0);
        // Each bit's mirror goes to the same list, except the side bit, which the mirror has
        // exactly when the position lacks it: added to one, removed from the other.
        for (&i, was_added) in added.iter().map(|i| (i, true)).chain(removed.iter().map(|i| (i, false))) {
            if was_added != (Some(i) == bits.side) {
                a[na] = bits.mirror_bit(i);
                na += 1;
            } else {
                r[nr] = bits.mirror_bit(i);
                nr += 1;
            }
        }
        let (own, mirror) = dst.split_at_mut(h);
        self.0.update(own, &src[..h], added, removed);
        self.0.update(mirror, &src[h..], &a[..na], &r[..nr]);
    }
}

/// The value from a position's sums and its mirror's, side by side.
#[inline]
fn value_of<N: SiameseNet>(net: &N, sums: &[N::Sum]) -> f32 {
    let (own, mirror) = sums.split_at(net.width());
    let (a, m) = net.finish_pair(own, mirror);
    let (am, ma) = net.head_logit_pair(&a, &m);
    whole_centipawns(0.25 * (am - ma))
}

/// A value rounded to whole centipawns (of [`CP_PER_LOGIT`]), as a handcrafted score is
/// counted: positions the net tells apart by less than that compare equal, which is what
/// lets a null window fail low on them (docs/search.md, "The draw-referenced value").
#[inline]
pub(super) fn whole_centipawns(v: f32) -> f32 {
    (v * CP_PER_LOGIT).round() / CP_PER_LOGIT
}

/// A DeepChess net as an [`Evaluator`]: each position's value is its comparison with its
/// colour mirror (see the module's text), in the head's logit units.
pub struct DrawValue<N: SiameseNet> {
    net: Arc<N>,
    name: &'static str,
    line: Line<N::Sum>,
}

impl<N: SiameseNet> DrawValue<N> {
    pub fn new(net: N, name: &'static str) -> Self {
        Self::shared(Arc::new(net), name)
    }

    fn shared(net: Arc<N>, name: &'static str) -> Self {
        let line = Line::new(2 * net.width());
        DrawValue { net, name, line }
    }

    /// The value of `pos` from its bits (off the line, or with increments off).
    fn from_scratch(&self, pos: &Position) -> f32 {
        let f = Features::from_position(pos);
        let active: Vec<usize> = f.as_slice().iter().map(|&i| i as usize).collect();
        let mut sums = vec![N::Sum::default(); 2 * self.net.width()];
        WithMirror(&*self.net).refresh(&active, &mut sums);
        value_of(&*self.net, &sums)
    }
}

impl<N: SiameseNet> Evaluator for DrawValue<N> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn evaluate(&mut self, pos: &Position) -> f32 {
        self.from_scratch(pos)
    }

    fn set_node(&mut self, ply: usize, pos: &Position) {
        self.line.set_node(ply, pos);
    }

    fn set_root(&mut self, pos: &Position) {
        self.line.set_root(pos, &WithMirror(&*self.net));
    }

    fn evaluate_at(&mut self, ply: usize, pos: &Position) -> f32 {
        if !self.line.holds(ply, pos) {
            return self.from_scratch(pos);
        }
        let net = &*self.net;
        value_of(net, self.line.ensure(ply, &WithMirror(net)))
    }

    fn clear(&mut self) {
        self.line.clear();
    }

    fn set_incremental(&mut self, on: bool) -> bool {
        self.line.incremental = on;
        true
    }

    fn fork(&self) -> Option<Self> {
        let mut v = DrawValue::shared(self.net.clone(), self.name);
        v.line.incremental = self.line.incremental;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deepchess::infer::{Compact, Distilled, QCompact};
    use crate::deepchess::model::Net;
    use crate::tensor::NetFile;
    use std::path::Path;

    fn shipped(file: &str) -> Net {
        Net::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets").join(file)).unwrap().0
    }

    /// The value is the net's own comparison of a position with its mirror: four times it is
    /// l(a, ā) − l(ā, a), the logits of the model's forward pass (the training tape).
    #[test]
    fn the_value_is_the_models_comparison_with_the_mirror() {
        crate::chess::attacks::init();
        let net = shipped("distilled.dcw");
        let mut v = DrawValue::new(Distilled::from_net(&net).unwrap(), "distilled-value");
        let logit = |p: f32| (p / (1.0 - p)).ln();
        for fen in ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 10", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11"] {
            let pos = Position::from_fen(fen).unwrap();
            let (a, m) = (Features::from_position(&pos), Features::from_position(&pos.mirror()));
            assert!(m == a.mirrored(), "{fen}");
            let am = net.prob_better(&[a.as_slice()], &[m.as_slice()]).unwrap()[0];
            let ma = net.prob_better(&[m.as_slice()], &[a.as_slice()]).unwrap()[0];
            let want = 0.25 * (logit(am) - logit(ma));
            // What the value student is taught is this value, from the same tape.
            let (mut x, mut xm) = (crate::tensor::SparseBatch::new(crate::deepchess::features::INPUTS), crate::tensor::SparseBatch::new(crate::deepchess::features::INPUTS));
            crate::deepchess::model::batch_of(&[a.as_slice()], &mut x);
            crate::deepchess::model::batch_of(&[m.as_slice()], &mut xm);
            let taught = crate::deepchess::model::draw_values(&net, &mut crate::tensor::Tape::new(), &x, &xm).unwrap()[0];
            assert!((taught - want).abs() < 1e-3 * (1.0 + want.abs()), "{fen}: draw_values {taught}, model {want}");
            let got = v.evaluate(&pos);
            // Half a centipawn of rounding, and float tolerance.
            assert!((want - got).abs() < 0.5 / CP_PER_LOGIT + 2e-3 * (1.0 + want.abs()), "{fen}: model {want}, value {got}");
            assert_eq!(got, whole_centipawns(got), "{fen}: whole centipawns");
        }
    }

    /// Along random games, the line's values (the position's and its mirror's sums updated
    /// move by move) equal the values from scratch, for the float and the integer builds;
    /// a position's mirror gets the opposite value; more material is worth more.
    #[test]
    fn the_line_gives_the_values_of_scratch_and_mirrors_negate() {
        crate::chess::attacks::init();
        let net = shipped("compact.dcw");
        check_line(DrawValue::new(Compact::from_net(&net).unwrap(), "compact-value"), 1e-3);
        check_line(DrawValue::new(QCompact::from_net(&net).unwrap(), "compact-value"), 2e-2);
        let mut v = DrawValue::new(Compact::from_net(&net).unwrap(), "compact-value");
        let up = v.evaluate(&Position::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap());
        let level = v.evaluate(&Position::startpos());
        assert!(up > level + 2.0 && level.abs() < 0.5, "a queen up {up}, the start {level}");
        assert!(v.centipawns(up) > 400, "{}", v.centipawns(up));
    }

    fn check_line<N: SiameseNet>(mut v: DrawValue<N>, tol: f32) {
        for seed in 1..5u64 {
            let mut pos = Position::startpos();
            v.set_root(&pos);
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for ply in 1..80 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                pos.play(moves.as_slice()[(rng % moves.len() as u64) as usize]);
                v.set_node(ply, &pos);
                if ply % 3 != 0 && ply < 70 {
                    continue; // updates then span several moves
                }
                let (line, scratch, mirror) = (v.evaluate_at(ply, &pos), v.evaluate(&pos), v.evaluate(&pos.mirror()));
                // Float tolerance, and one centipawn where it rounds a value the other way.
                let tol = tol * (1.0 + scratch.abs()) + 1.01 / CP_PER_LOGIT;
                assert!((line - scratch).abs() < tol, "{}: line {line}, scratch {scratch}", pos.fen());
                assert!((mirror + scratch).abs() < tol, "{}: {scratch}, its mirror {mirror}", pos.fen());
            }
        }
    }
}
