//! What shapes the tree, counted by the search as it runs (issue 81: why the comparator's tree
//! is larger than handcrafted's at equal depth): how often a node that searches moves cuts,
//! and on its first move; how often the table's move was known and made the cut; how many
//! null-window searches had to be searched again (a late move reduced and then not, or a
//! principal-variation re-search). And, apart from the search, how often a comparator
//! contradicts itself on the positions a node compares: three siblings with A > B, B > C and
//! C > A.

use crate::chess::Position;
use crate::eval::{Comparator, Counters};
use std::cmp::Ordering;

/// Counts of the main search thread since the searcher was made (`bench` takes differences).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeCounts {
    /// Nodes that reached the move loop with at least one move.
    pub move_nodes: u64,
    /// Of those, nodes that failed high (a move reached beta).
    pub cutoffs: u64,
    /// Of the cut-offs, those made by the first move searched.
    pub first_move_cutoffs: u64,
    /// Move nodes where the table knew a legal move.
    pub hash_move_nodes: u64,
    /// Cut-offs made by the table's move.
    pub hash_move_cutoffs: u64,
    /// Moves searched with a null window after the first (PVS).
    pub null_windows: u64,
    /// Of those, searched again at full depth after a reduced search beat alpha.
    pub lmr_researches: u64,
    /// Of those, searched again with the full window on the principal variation.
    pub pv_researches: u64,
    /// Quiescence nodes (of all nodes the search counts), the horizon's positions included
    /// (all there is of it with quiescence off).
    pub qnodes: u64,
    /// Static cuts tried and made; null moves tried (the position reached beta) and made.
    pub static_tries: u64,
    pub static_cuts: u64,
    pub null_tries: u64,
    pub null_cuts: u64,
    /// Moves skipped by late-move pruning and by SEE pruning.
    pub lmp_skips: u64,
    pub see_skips: u64,
}

impl TreeCounts {
    /// The counts as `bench` prints them, each part as a share of its whole.
    pub fn counters(&self) -> Counters {
        Counters::default()
            .with("move nodes", self.move_nodes, None)
            .with("cut-offs", self.cutoffs, Some("move nodes"))
            .with("first-move cut-offs", self.first_move_cutoffs, Some("cut-offs"))
            .with("table-move cut-offs", self.hash_move_cutoffs, Some("cut-offs"))
            .with("table move known", self.hash_move_nodes, Some("move nodes"))
            .with("null-window searches", self.null_windows, None)
            .with("LMR re-searches", self.lmr_researches, Some("null-window searches"))
            .with("PVS re-searches", self.pv_researches, Some("null-window searches"))
            .with("quiescence nodes", self.qnodes, None)
            .with("static cuts tried", self.static_tries, None)
            .with("static cuts", self.static_cuts, Some("static cuts tried"))
            .with("null moves tried", self.null_tries, None)
            .with("null-move cuts", self.null_cuts, Some("null moves tried"))
            .with("late moves pruned", self.lmp_skips, None)
            .with("SEE-pruned moves", self.see_skips, None)
    }
}

/// Cyclic triples among sibling positions, as a comparator judges them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transitivity {
    /// Sets of siblings examined (the children of one position).
    pub sets: u64,
    /// Triples of siblings compared (all three pairs), and of those, cycles.
    pub triples: u64,
    pub cycles: u64,
    /// Pairs compared both ways, and of those, the pairs whose two answers disagree (A > B
    /// and B > A, or A < B and B < A).
    pub pairs: u64,
    pub asymmetric: u64,
    /// Pairs judged equal (A-B answered `Equal`).
    pub ties: u64,
}

impl Transitivity {
    /// Examines the children of `parent` (at most `max_children` of them, in move order):
    /// every pair compared both ways, every triple checked for a cycle. `comp` sees the
    /// parent at ply 0 and each child at ply 1, as the search would show them.
    pub fn add_siblings<C: Comparator>(&mut self, comp: &mut C, parent: &Position, max_children: usize) {
        let mut keys = Vec::new();
        comp.set_root(parent);
        for &m in parent.legal_moves().iter().take(max_children) {
            let mut child = *parent;
            child.play(m);
            comp.set_node(1, &child);
            keys.push(comp.key(1, &child));
        }
        let n = keys.len();
        if n < 2 {
            return;
        }
        self.sets += 1;
        // order[i][j]: Greater when child i is better for White than child j.
        let mut order = vec![vec![Ordering::Equal; n]; n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    order[i][j] = comp.compare(&keys[i], &keys[j]);
                }
            }
        }
        for i in 0..n {
            for j in i + 1..n {
                self.pairs += 1;
                self.ties += (order[i][j] == Ordering::Equal) as u64;
                if order[i][j] != Ordering::Equal && order[i][j] == order[j][i] {
                    self.asymmetric += 1;
                }
                for k in j + 1..n {
                    self.triples += 1;
                    let (a, b, c) = (order[i][j], order[j][k], order[k][i]);
                    if a != Ordering::Equal && a == b && b == c {
                        self.cycles += 1;
                    }
                }
            }
        }
    }

    /// `cycles 1.2 % of 45,000 triples, pairs disagreeing 3.4 % of 9,000 (120 sets)`.
    pub fn line(&self) -> String {
        let pc = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        format!(
            "cyclic triples {:.3} % of {} ({} cycles); of {} pairs, judged equal {:.2} %, answered A-B and B-A alike {:.2} %; {} sets of siblings",
            pc(self.cycles, self.triples),
            self.triples,
            self.cycles,
            self.pairs,
            pc(self.ties, self.pairs),
            pc(self.asymmetric, self.pairs),
            self.sets
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A comparator judging by the number of the position's pieces on a few squares: any
    /// scalar score is transitive and antisymmetric, so no cycle is ever found.
    struct Scalar;
    impl Comparator for Scalar {
        type Key = i32;
        type Stored = i32;
        fn stored(&mut self, k: &i32) -> i32 {
            *k
        }
        fn from_stored(&mut self, s: &i32) -> Option<i32> {
            Some(*s)
        }
        fn name(&self) -> &'static str {
            "scalar"
        }
        fn key(&mut self, _ply: usize, pos: &Position) -> i32 {
            (pos.hash() % 7) as i32
        }
        fn prob_white_better(&mut self, a: &i32, b: &i32) -> f32 {
            if a > b { 1.0 } else if a < b { 0.0 } else { 0.5 }
        }
        fn prob_better_than_draw(&mut self, _a: &i32) -> f32 {
            0.5
        }
    }

    /// Rock, paper, scissors on the key modulo 3: every triple of three distinct classes is a
    /// cycle.
    struct Cyclic;
    impl Comparator for Cyclic {
        type Key = u64;
        type Stored = u64;
        fn stored(&mut self, k: &u64) -> u64 {
            *k
        }
        fn from_stored(&mut self, s: &u64) -> Option<u64> {
            Some(*s)
        }
        fn name(&self) -> &'static str {
            "cyclic"
        }
        fn key(&mut self, _ply: usize, pos: &Position) -> u64 {
            pos.hash() % 3
        }
        fn prob_white_better(&mut self, a: &u64, b: &u64) -> f32 {
            if a == b { 0.5 } else if (a + 1) % 3 == *b { 1.0 } else { 0.0 }
        }
        fn prob_better_than_draw(&mut self, _a: &u64) -> f32 {
            0.5
        }
    }

    #[test]
    fn a_scalar_comparator_has_no_cycles_and_a_cyclic_one_is_caught() {
        crate::chess::attacks::init();
        let p = Position::startpos();
        let mut t = Transitivity::default();
        t.add_siblings(&mut Scalar, &p, 64);
        assert_eq!((t.sets, t.triples, t.pairs), (1, 1140, 190));
        assert_eq!((t.cycles, t.asymmetric), (0, 0));
        let mut t = Transitivity::default();
        t.add_siblings(&mut Cyclic, &p, 64);
        // The cycles are exactly the triples with one child of each class.
        let mut class = [0u64; 3];
        for &m in p.legal_moves().iter() {
            let mut c = p;
            c.play(m);
            class[(c.hash() % 3) as usize] += 1;
        }
        assert_eq!(t.cycles, class[0] * class[1] * class[2]);
        assert!(t.cycles > 0);
        assert_eq!(t.asymmetric, 0);
    }
}
