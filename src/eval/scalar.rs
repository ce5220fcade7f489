//! Evaluators that give a position one number (a handcrafted score, a network's output)
//! become comparators through [`ScoreComparator`]: the key of a position is its value, and
//! comparing two positions is comparing their values, so a scalar evaluator plays in the
//! same comparison alpha-beta as a learned comparator.

use super::cache::PositionCache;
use super::comparator::{Comparator, Counters};
use crate::chess::Position;
use std::cmp::Ordering;

/// Centipawns per unit of the logistic that turns a score difference into a probability
/// (400 cp ~ 91 %), and a logit back into centipawns: the handcrafted evaluator's scale,
/// which the learned scalar evaluators share (their UCI scores and comparisons read alike).
pub const CP_PER_LOGIT: f32 = 173.7;

/// The largest `score cp` an evaluator reports (mates are reported apart, as `score mate`).
pub const MAX_CP: f32 = 30_000.0;

/// A position evaluator that returns one value from White's side.
pub trait Evaluator: Send {
    /// Short name for `info string` and bench output.
    fn name(&self) -> &'static str;

    /// The value of `pos` for White: greater is better for White, and 0 is what a draw is
    /// worth (the draw reference of [`Comparator::compare_draw`]).
    fn evaluate(&mut self, pos: &Position) -> f32;

    /// The search's line now has `pos` at `ply` (called on every move): an evaluator that
    /// keeps work along the line (an incremental first layer, [`crate::eval::line`]) records it.
    fn set_node(&mut self, _ply: usize, _pos: &Position) {}

    /// A new root, `pos` at ply 0.
    fn set_root(&mut self, pos: &Position) {
        self.set_node(0, pos);
    }

    /// The value of `pos`, the line's position at `ply` (so an evaluator may build it from
    /// its ancestors' work); by default [`Evaluator::evaluate`].
    fn evaluate_at(&mut self, _ply: usize, pos: &Position) -> f32 {
        self.evaluate(pos)
    }

    /// The key under which its value of `pos` may be cached ([`ScoreComparator::cached`]):
    /// the zobrist key, mixed with whatever else of the game its value reads (the zobrist key
    /// covers the board, the side to move, castling and en passant, not the move clocks).
    fn cache_key(&self, pos: &Position) -> u64 {
        pos.hash()
    }

    /// Its scale, the one thing an evaluator says about its values: centipawns per unit
    /// (1 for a score in centipawns; [`CP_PER_LOGIT`], the default, for a net's logit; 300
    /// for the DBN's clipped score). Probabilities and UCI scores follow from it, once, in
    /// the two methods below.
    fn cp_per_unit(&self) -> f32 {
        CP_PER_LOGIT
    }

    /// Probability that a position of value `a` is better for White than one of value `b`,
    /// given `a − b`: a logistic of the difference in centipawns at [`CP_PER_LOGIT`].
    fn prob_from_diff(&self, diff: f32) -> f32 {
        let per = self.cp_per_unit();
        // A logit is used as it is (the same bits as before the scale was declared).
        crate::tensor::layers::sigmoid(if per == CP_PER_LOGIT { diff } else { diff * per / CP_PER_LOGIT })
    }

    /// A value as the centipawns of UCI's `score cp`, within ±[`MAX_CP`] (a saturated net's
    /// logit must not print a score a GUI reads as a mate, or overflow).
    fn centipawns(&self, value: f32) -> i32 {
        (value * self.cp_per_unit()).round().clamp(-MAX_CP, MAX_CP) as i32
    }

    /// Start a new game: forget caches tied to the old one.
    fn clear(&mut self) {}

    /// Incremental evaluation along the search's line ([`Comparator::set_incremental`]):
    /// an evaluator that keeps part of its work from a parent to its child says so here.
    /// The DBN evaluators do (their first layer, `crate::eval::line`); the others evaluate each
    /// position from scratch.
    fn set_incremental(&mut self, _on: bool) -> bool {
        false
    }

    /// A copy for another search thread (Lazy SMP), sharing what is read-only; `None`
    /// (the default): this evaluator searches on one thread.
    fn fork(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// The score cache (MB) of an evaluator that costs more than a handcrafted evaluation
/// ([`ScoreComparator::cached`]): a million values.
pub const SCORE_CACHE_MB: usize = 16;

/// An [`Evaluator`] as a [`Comparator`]: keys are values, comparisons exact.
#[derive(Default)]
pub struct ScoreComparator<E> {
    pub eval: E,
    /// Values by zobrist key, for an evaluator worth caching (a net; not the handcrafted sum).
    cache: Option<PositionCache<f32>>,
    cache_mb: usize,
    /// Comparisons asked for, keys, and keys the cache answered.
    comparisons: u64,
    keys: u64,
    hits: u64,
}

impl<E: Evaluator> ScoreComparator<E> {
    pub fn new(eval: E) -> Self {
        ScoreComparator { eval, cache: None, cache_mb: 0, comparisons: 0, keys: 0, hits: 0 }
    }

    /// With each position's value kept by zobrist key in a cache of `mb` MB: the search meets
    /// a position again through transpositions, the static cut and null move of one node,
    /// and re-searches, and a net's evaluation costs more than a probe. The values are the
    /// evaluator's own, so the search is the same, node for node (an evaluator's value is a
    /// function of the position).
    pub fn cached(eval: E, mb: usize) -> Self {
        ScoreComparator { cache: Some(PositionCache::new(mb)), cache_mb: mb, ..Self::new(eval) }
    }
}

impl<E: Evaluator> Comparator for ScoreComparator<E> {
    type Key = f32;
    type Stored = f32;

    /// A score is its own stored form: the table keeps what the search holds.
    #[inline(always)]
    fn stored(&mut self, k: &f32) -> f32 {
        *k
    }

    #[inline(always)]
    fn from_stored(&mut self, s: &f32) -> Option<f32> {
        Some(*s)
    }

    fn name(&self) -> &'static str {
        self.eval.name()
    }

    /// The move generation of the child comes before its key: its cache slot loads meanwhile.
    #[inline]
    fn set_node(&mut self, ply: usize, pos: &Position) {
        if let Some(c) = &self.cache {
            c.prefetch(self.eval.cache_key(pos));
        }
        self.eval.set_node(ply, pos);
    }

    fn set_root(&mut self, pos: &Position) {
        self.eval.set_root(pos);
    }

    #[inline]
    fn key(&mut self, ply: usize, pos: &Position) -> f32 {
        self.keys += 1;
        let Some(cache) = &mut self.cache else {
            return self.eval.evaluate_at(ply, pos);
        };
        let hash = self.eval.cache_key(pos);
        if let Some(v) = cache.get(hash) {
            self.hits += 1;
            return v;
        }
        let v = self.eval.evaluate_at(ply, pos);
        cache.put(hash, v);
        v
    }

    fn prob_white_better(&mut self, a: &f32, b: &f32) -> f32 {
        self.comparisons += 1;
        self.eval.prob_from_diff(a - b)
    }

    #[inline]
    fn compare(&mut self, a: &f32, b: &f32) -> Ordering {
        self.comparisons += 1;
        a.partial_cmp(b).unwrap_or(Ordering::Equal)
    }

    fn prob_better_than_draw(&mut self, a: &f32) -> f32 {
        self.eval.prob_from_diff(*a)
    }

    #[inline]
    fn compare_draw(&mut self, a: &f32) -> Ordering {
        self.comparisons += 1;
        a.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
    }

    fn centipawns(&mut self, a: &f32) -> i32 {
        self.eval.centipawns(*a)
    }

    fn clear(&mut self) {
        self.eval.clear();
        if let Some(c) = &mut self.cache {
            c.clear();
        }
    }

    fn set_incremental(&mut self, on: bool) -> bool {
        self.eval.set_incremental(on)
    }

    fn fork(&self) -> Option<Self> {
        let mb = self.cache_mb;
        let e = self.eval.fork()?;
        Some(match self.cache {
            // A cache the machine cannot give: no fork (the search runs on fewer threads).
            Some(_) => ScoreComparator { cache: Some(PositionCache::try_new(mb).ok()?), cache_mb: mb, ..Self::new(e) },
            None => ScoreComparator::new(e),
        })
    }

    fn counters(&self) -> Counters {
        let c = Counters::default().with("comparisons", self.comparisons, None).with("keys", self.keys, None);
        if self.cache.is_some() {
            c.with("score cache hits", self.hits, Some("keys"))
        } else {
            c
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One scale rule for every evaluator (issue 80): a logit by default, scores clamped to
    /// ±MAX_CP (DeepChess's value players printed a saturated logit unclamped), and
    /// probabilities from the declared scale.
    #[test]
    fn scores_and_probabilities_follow_the_declared_scale() {
        struct Logit;
        impl Evaluator for Logit {
            fn name(&self) -> &'static str {
                "logit"
            }
            fn evaluate(&mut self, _: &Position) -> f32 {
                0.0
            }
        }
        struct Cp;
        impl Evaluator for Cp {
            fn name(&self) -> &'static str {
                "cp"
            }
            fn evaluate(&mut self, _: &Position) -> f32 {
                0.0
            }
            fn cp_per_unit(&self) -> f32 {
                1.0
            }
        }
        assert_eq!((Logit.centipawns(1.0), Logit.centipawns(1e6), Logit.centipawns(-1e9)), (174, 30_000, -30_000));
        assert_eq!((Cp.centipawns(250.0), Cp.centipawns(1e7)), (250, 30_000));
        assert_eq!(Logit.prob_from_diff(0.7), crate::tensor::layers::sigmoid(0.7));
        assert!((Cp.prob_from_diff(CP_PER_LOGIT) - Logit.prob_from_diff(1.0)).abs() < 1e-6);
    }

    /// Material count: pawns 1, pieces by their usual values, from White's side.
    struct Material;
    impl Evaluator for Material {
        fn name(&self) -> &'static str {
            "material"
        }
        fn evaluate(&mut self, pos: &Position) -> f32 {
            use crate::chess::{Color, Role};
            let v = |c| [(Role::Pawn, 1.0), (Role::Knight, 3.0), (Role::Bishop, 3.0), (Role::Rook, 5.0), (Role::Queen, 9.0)].iter().map(|&(r, x)| x * pos.pieces(c, r).count() as f32).sum::<f32>();
            v(Color::White) - v(Color::Black)
        }
        fn prob_from_diff(&self, diff: f32) -> f32 {
            1.0 / (1.0 + (-diff).exp())
        }
        fn centipawns(&self, value: f32) -> i32 {
            (100.0 * value) as i32
        }
    }

    #[test]
    fn values_order_positions_and_zero_is_the_draw() {
        let mut c = ScoreComparator::new(Material);
        let up = Position::from_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1").unwrap();
        let level = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let down = up.mirror();
        let (u, l, d) = (c.key(0, &up), c.key(0, &level), c.key(0, &down));
        assert_eq!(c.compare(&u, &l), Ordering::Greater);
        assert_eq!(c.compare(&d, &l), Ordering::Less);
        assert_eq!(c.compare(&l, &l), Ordering::Equal);
        assert_eq!((c.compare_draw(&u), c.compare_draw(&l), c.compare_draw(&d)), (Ordering::Greater, Ordering::Equal, Ordering::Less));
        assert!(c.prob_white_better(&u, &d) > 0.99 && (c.prob_white_better(&u, &d) + c.prob_white_better(&d, &u) - 1.0).abs() < 1e-6);
        assert!((c.prob_better_than_draw(&l) - 0.5).abs() < 1e-6);
        assert_eq!((c.centipawns(&u), c.name()), (900, "material"));
        let s = c.counters();
        assert_eq!((s.get("keys"), s.get("comparisons")), (3, 9));
    }
}
