//! Who plays whom. Round 0 is a full round robin, one game pair per pairing: it connects every
//! player to every other, so the first fit already places everyone. Each later round is a
//! ladder: players in the order of the current fit, each paired with its next `k` neighbours
//! below. A game between players of similar strength says the most about their difference (its
//! Fisher information is proportional to p(1 − p), largest at p = ½; a 1,000-point mismatch
//! carries 1/30 of it), so after the round robin the games go where the intervals are wide
//! against their neighbours, the way a Swiss system does. Anchors (fixed ratings) never meet
//! each other: their games would inform nothing.
//!
//! Everything here is a function of the games already played, so a resumed tournament asks
//! for the same pairs; the journal also records each round's pairs as they are decided.

/// Every allowed pairing once, in a round-robin order (`allowed(i, j)` with `i < j`); who has
/// White first alternates so each player starts about as often with either colour.
pub fn round_robin(n: usize, allowed: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Berger's circle method: rounds in which every player plays at most once, so that the
    // games running at once involve different players and the early games cover everyone.
    let m = n + n % 2;
    let mut ring: Vec<usize> = (0..m).collect();
    for r in 0..m.saturating_sub(1) {
        for k in 0..m / 2 {
            let (x, y) = (ring[k], ring[m - 1 - k]);
            if x >= n || y >= n {
                continue;
            }
            let (i, j) = (x.min(y), x.max(y));
            if allowed(i, j) {
                out.push(if (r + k) % 2 == 0 { (i, j) } else { (j, i) });
            }
        }
        // Keep the first seat, turn the others one place.
        if m > 2 {
            let last = ring.pop().unwrap();
            ring.insert(1, last);
        }
    }
    out
}

/// A ladder round: `order` lists the players strongest first; each is paired with the next
/// `k` allowed players after it. The stronger player has White first in even rounds.
pub fn ladder(order: &[usize], k: usize, round: usize, allowed: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (x, &i) in order.iter().enumerate() {
        let mut taken = 0;
        for &j in &order[x + 1..] {
            if taken == k {
                break;
            }
            if allowed(i.min(j), i.max(j)) {
                out.push(if round.is_multiple_of(2) { (i, j) } else { (j, i) });
                taken += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn round_robin_meets_everyone_once_without_barred_pairs() {
        for n in [2, 3, 7, 16] {
            // Players 0 and 1 are anchors that never meet.
            let rr = round_robin(n, |i, j| !(i == 0 && j == 1));
            let set: HashSet<(usize, usize)> = rr.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
            assert_eq!(set.len(), rr.len(), "no pairing twice");
            assert_eq!(rr.len(), n * (n - 1) / 2 - 1, "n = {n}");
            assert!(!set.contains(&(0, 1)));
            // Colours: nobody starts with White in more than about half its pairings + 1.
            for p in 0..n {
                let first_white = rr.iter().filter(|&&(a, _)| a == p).count();
                assert!(first_white <= n.div_ceil(2) + 1, "player {p} of {n}: {first_white}");
            }
        }
    }

    #[test]
    fn ladder_pairs_neighbours() {
        let order = [4, 2, 0, 1, 3];
        let l = ladder(&order, 2, 0, |_, _| true);
        assert_eq!(l, vec![(4, 2), (4, 0), (2, 0), (2, 1), (0, 1), (0, 3), (1, 3)]);
        let odd = ladder(&order, 1, 1, |i, j| !(i == 0 && j == 2));
        assert_eq!(odd, vec![(2, 4), (1, 2), (1, 0), (3, 1)]);
    }
}
