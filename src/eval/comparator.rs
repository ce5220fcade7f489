//! The comparator: "is position A better than position B for White?" (paper §4).
//!
//! The search never sees a score. It holds positions as bounds (`alpha_pos`, `beta_pos`),
//! each represented by a [`Value`]: either a position judged by the comparator (through its
//! cached [`Comparator::Key`]) or a terminal outcome the search itself knows (mate, draw).

use crate::chess::{Color, Position};
use std::cmp::Ordering;

/// The deepest ply a search asks a comparator about: per-ply state (an incremental
/// accumulator, say) is sized for plies `0..=MAX_PLY`.
pub const MAX_PLY: usize = 128;

/// What a comparator (or any player) counted, each counter named by whoever keeps it, for
/// `bench`: the search knows no cache, so a net's comparator says what its counters mean.
/// A counter may be a part of another (`of`): `bench` shows it as a share of that one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub Vec<Counter>);

/// One named count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    pub name: &'static str,
    pub count: u64,
    /// The counter this one is a part of.
    pub of: Option<&'static str>,
}

impl Counters {
    /// Appends a counter (`of`: the counter it is a part of).
    pub fn with(mut self, name: &'static str, count: u64, of: Option<&'static str>) -> Counters {
        self.0.push(Counter { name, count, of });
        self
    }

    /// The count named `name` (0 when there is none).
    pub fn get(&self, name: &str) -> u64 {
        self.0.iter().find(|c| c.name == name).map_or(0, |c| c.count)
    }

    /// What was counted since `earlier` (counter by counter, by name).
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters(self.0.iter().map(|c| Counter { count: c.count - earlier.get(c.name).min(c.count), ..*c }).collect())
    }
}

/// Centipawns per unit of the logit of P(better than a draw): p = 0.75 is about 100 cp
/// ([`Comparator::centipawns`]).
pub const CP_PER_DRAW_LOGIT: f32 = 91.0;

/// A position comparator usable inside the comparison alpha-beta.
///
/// `key` is the expensive per-position part (Pos2Vec features for the net, the score for the
/// handcrafted evaluator); `compare` / `prob_white_better` is the cheap per-comparison part
/// (the head's remaining layers for the net). The search calls [`Comparator::set_node`] on every move it
/// makes, so an implementation may keep per-ply state (an incremental accumulator) and
/// build `key(ply, …)` from its ancestors' state.
pub trait Comparator: Send {
    /// A live position bound: what the search's values and windows hold while it runs on
    /// one thread. It may refer to state the comparator keeps (and so never leave it).
    type Key: Copy + Default;

    /// What the transposition table keeps of a position bound: self-contained, because the
    /// table is shared by the threads of a search and outlives each search.
    type Stored: Copy + Default + Send + Sync;

    /// `k` in the form the table keeps.
    fn stored(&mut self, k: &Self::Key) -> Self::Stored;

    /// A stored bound made live again; `None` when the stored form cannot be (the entry is
    /// then used for its move only).
    fn from_stored(&mut self, s: &Self::Stored) -> Option<Self::Key>;

    /// Live keys may live in a stack the comparator keeps (a net's positions): the search
    /// takes a `mark` on entering a node and, on leaving it, `release`s everything above
    /// the mark but the value it returns (whose key is rewritten to where it now lives).
    /// Values travel only up the stack (returns) or down it (bounds, below every mark the
    /// node takes), so nothing a caller holds is released. No-ops for keys that are values.
    #[inline(always)]
    fn mark(&self) -> u32 {
        0
    }

    /// Drops every key above `mark` except `keep`'s (see [`Comparator::mark`]).
    #[inline(always)]
    fn release(&mut self, _mark: u32, _keep: &mut Value<Self::Key>) {}

    /// Drops every key above `mark`.
    #[inline(always)]
    fn truncate(&mut self, _mark: u32) {}

    /// Short name for `info string` and bench output.
    fn name(&self) -> &'static str;

    /// A new root: `pos` is at ply 0. Clears per-line state (not caches).
    fn set_root(&mut self, pos: &Position) {
        self.set_node(0, pos);
    }

    /// The search's current line now has `pos` at `ply` (called on every make).
    fn set_node(&mut self, _ply: usize, _pos: &Position) {}

    /// The key of `pos`, which is the position at `ply` of the current line.
    fn key(&mut self, ply: usize, pos: &Position) -> Self::Key;

    /// Probability that `a` is better for White than `b`.
    fn prob_white_better(&mut self, a: &Self::Key, b: &Self::Key) -> f32;

    /// `Greater` when `a` is better for White than `b`. Comparators with a cheaper exact
    /// test override this (the handcrafted scores, the net's logit margin).
    fn compare(&mut self, a: &Self::Key, b: &Self::Key) -> Ordering {
        let p = self.prob_white_better(a, b);
        p.partial_cmp(&0.5).unwrap_or(Ordering::Equal)
    }

    /// Probability that `a` is better for White than a draw. The draw reference must be
    /// principled (docs/search.md): a score of 0 for handcrafted evaluators; for the net, the
    /// position against its own colour-mirrored twin (a draw sits between them by symmetry).
    fn prob_better_than_draw(&mut self, a: &Self::Key) -> f32;

    /// `Greater` when `a` is better for White than a draw.
    fn compare_draw(&mut self, a: &Self::Key) -> Ordering {
        let p = self.prob_better_than_draw(a);
        p.partial_cmp(&0.5).unwrap_or(Ordering::Equal)
    }

    /// A centipawn-like figure for `info score cp`, from White's side. The default is the
    /// logit of [`Comparator::prob_better_than_draw`] scaled so that p = 0.75 is about 100 cp.
    fn centipawns(&mut self, a: &Self::Key) -> i32 {
        let p = self.prob_better_than_draw(a).clamp(1e-6, 1.0 - 1e-6) as f64;
        ((p / (1.0 - p)).ln() * CP_PER_DRAW_LOGIT as f64).round() as i32
    }

    /// Start a new game: forget caches tied to the old one.
    fn clear(&mut self) {}

    /// Incremental evaluation, a capability a comparator may have: work on a position (a
    /// net's first layer) carried along the search's line, each child's from its parent's
    /// by what the move changed (through [`Comparator::set_node`]), rather than done from
    /// scratch. `on` turns it on (the default of a comparator that has it) or off (every
    /// position from scratch: for measuring the increments). Returns whether it has the
    /// capability; one without it keeps nothing incremental and ignores the request.
    fn set_incremental(&mut self, _on: bool) -> bool {
        false
    }

    /// A fresh comparator on the same evaluator for another search thread (Lazy SMP): what
    /// is read-only shared (a net's weights), caches and per-line state its own. `None`
    /// (the default): this comparator searches on one thread.
    fn fork(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }

    /// What it counted since it was built (`bench` reports rates and shares).
    fn counters(&self) -> Counters {
        Counters::default()
    }
}

/// What a search value stands for, ordered from White's side by [`Value::cmp_white`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Worse for White than anything (the initial bound of a White node's alpha).
    Bottom,
    /// `winner` mates; the mated position is `ply` plies from the root (shorter is better
    /// for the winner).
    Mate { winner: Color, ply: u16 },
    /// A draw by the rules (stalemate, repetition, fifty moves, insufficient material).
    Draw,
    /// A position judged by the comparator; `Value::key` holds its key.
    Pos,
    /// Better for White than anything.
    Top,
}

/// A search value: a terminal outcome or a comparator-judged position.
#[derive(Clone, Copy, Debug)]
pub struct Value<K> {
    pub kind: Kind,
    pub key: K,
}

impl<K: Copy + Default> Value<K> {
    pub fn pos(key: K) -> Self {
        Value { kind: Kind::Pos, key }
    }
    pub fn draw() -> Self {
        Value { kind: Kind::Draw, key: K::default() }
    }
    pub fn mate(winner: Color, ply: usize) -> Self {
        Value { kind: Kind::Mate { winner, ply: ply.min(u16::MAX as usize) as u16 }, key: K::default() }
    }
    /// The worst value for `side` (its starting alpha).
    pub fn worst_for(side: Color) -> Self {
        let kind = if side == Color::White { Kind::Bottom } else { Kind::Top };
        Value { kind, key: K::default() }
    }
    pub fn best_for(side: Color) -> Self {
        Self::worst_for(side.flip())
    }

    pub fn is_mate(&self) -> bool {
        matches!(self.kind, Kind::Mate { .. })
    }

    /// `side` is mated (or has nothing better than its starting alpha yet).
    pub fn is_losing_mate_for(&self, side: Color) -> bool {
        match self.kind {
            Kind::Mate { winner, .. } => winner != side,
            Kind::Top => side == Color::Black,
            Kind::Bottom => side == Color::White,
            _ => false,
        }
    }

    /// Compares from White's side: `Greater` when `self` is better for White than `o`.
    pub fn cmp_white<C: Comparator<Key = K>>(&self, o: &Self, c: &mut C) -> Ordering {
        use Kind::*;
        // Rank by class first; only Pos/Draw pairs need the comparator.
        let class = |k: &Kind| -> (i32, i32) {
            match *k {
                Bottom => (-3, 0),
                Mate { winner: Color::Black, ply } => (-2, ply as i32),
                Draw | Pos => (0, 0),
                Mate { winner: Color::White, ply } => (2, -(ply as i32)),
                Top => (3, 0),
            }
        };
        match class(&self.kind).cmp(&class(&o.kind)) {
            Ordering::Equal => {}
            ord => return ord,
        }
        match (self.kind, o.kind) {
            (Pos, Pos) => c.compare(&self.key, &o.key),
            (Pos, Draw) => c.compare_draw(&self.key),
            (Draw, Pos) => c.compare_draw(&o.key).reverse(),
            (Draw, Draw) => Ordering::Equal,
            _ => class(&self.kind).1.cmp(&class(&o.kind).1),
        }
    }

    /// Compares from `side`'s point of view: the net judges for White, so Black reads it
    /// reversed (paper §4).
    #[inline]
    pub fn cmp_for<C: Comparator<Key = K>>(&self, o: &Self, side: Color, c: &mut C) -> Ordering {
        let ord = self.cmp_white(o, c);
        if side == Color::White {
            ord
        } else {
            ord.reverse()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losing_mate_is_the_sides_own() {
        let v = |kind| Value { kind, key: 0i32 };
        let black_mates = v(Kind::Mate { winner: Color::Black, ply: 3 });
        assert!(black_mates.is_losing_mate_for(Color::White));
        assert!(!black_mates.is_losing_mate_for(Color::Black));
        // The starting alpha of each side counts as losing for it, not for the other.
        assert!(Value::<i32>::worst_for(Color::White).is_losing_mate_for(Color::White));
        assert!(Value::<i32>::worst_for(Color::Black).is_losing_mate_for(Color::Black));
        assert!(!Value::<i32>::worst_for(Color::Black).is_losing_mate_for(Color::White));
        for k in [Kind::Pos, Kind::Draw] {
            assert!(!v(k).is_losing_mate_for(Color::White) && !v(k).is_losing_mate_for(Color::Black));
        }
    }
}
