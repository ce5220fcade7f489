//! The bounds of the comparison search: [`Window`], a position's value nudged by
//! infinitesimal steps (alphabeta, quiescence, the pruning steps and the root all hold them).

use crate::eval::Value;

/// A search bound: a value, nudged by `eps` infinitesimal steps in favour of the side to
/// move at the node that holds it. Values are positions, with no "alpha + 1"; the null
/// windows of PVS are (alpha, alpha + ε), so "equal to alpha" is unambiguously a fail-low
/// and equal values met through transpositions cannot be read both ways.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window<K> {
    pub(super) value: Value<K>,
    pub(super) eps: i8,
}

impl<K: Copy + Default> Window<K> {
    pub(super) fn at(value: Value<K>) -> Self {
        Window { value, eps: 0 }
    }
    /// The same bound seen by the other side.
    pub(super) fn flip(self) -> Self {
        Window { eps: -self.eps, ..self }
    }
    pub(super) fn raised(self) -> Self {
        Window { eps: self.eps + 1, ..self }
    }
    pub(super) fn lowered(self) -> Self {
        Window { eps: self.eps - 1, ..self }
    }
}
