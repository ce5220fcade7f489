//! What the DeepChess phases train and are judged on: W/L pools from a dataset, random
//! (W, L) pair batches (the paper's pairs) and, beyond the paper, same-game and material
//! pairs; pair accuracy on held-out games.

use super::features::{Features, INPUTS};
use super::model::{batch_of, prob_first, value_on_tape, Net, ValueNet};
use crate::data::dataset::Dataset;
use crate::tensor::{Rng, SparseBatch, Tape};
use std::path::{Path, PathBuf};

/// W positions (from games White won) and L positions, as feature lists.
#[derive(Clone, Default)]
pub struct Pools {
    pub w: Vec<Features>,
    pub l: Vec<Features>,
    /// Each game's positions, in ply order, as a run of one pool (mirrored twins form a run
    /// of the other pool): what same-game (progress) pairs are drawn from.
    pub games: Vec<GameRun>,
}

/// A game's positions: `pools.w[start..start + len]` when `white_won`, else `pools.l[…]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameRun {
    pub white_won: bool,
    pub start: u32,
    pub len: u32,
}

impl Pools {
    /// The paper's Pos2Vec set: `n` positions drawn once from each pool (without replacement;
    /// all of a pool smaller than `n`), no game runs.
    pub fn balanced_subset(&self, n: usize, rng: &mut crate::tensor::Rng) -> Pools {
        let pick = |pool: &[Features], rng: &mut crate::tensor::Rng| -> Vec<Features> {
            let mut idx: Vec<usize> = (0..pool.len()).collect();
            let k = n.min(idx.len());
            // A partial Fisher-Yates shuffle: the first k indices are a uniform sample.
            for i in 0..k {
                let j = i + rng.below((idx.len() - i) as u64) as usize;
                idx.swap(i, j);
            }
            idx[..k].iter().map(|&i| pool[i].clone()).collect()
        };
        let w = pick(&self.w, rng);
        let l = pick(&self.l, rng);
        Pools { w, l, games: Vec::new() }
    }

    /// From a dataset; with `mirror`, each position's colour-mirrored twin joins the
    /// other pool (a W position mirrored is an L position), doubling the data.
    pub fn from_dataset(d: &Dataset, mirror: bool) -> Pools {
        let mut p = Pools::default();
        // A new game starts where the game id, the label or the ply order changes.
        let mut prev: Option<(u32, u8, u16)> = None;
        for r in &d.records {
            let f = Features::from_record(r);
            let won = r.label == 1;
            let new_game = prev.is_none_or(|(g, l, ply)| g != r.game || l != r.label || ply >= r.ply);
            prev = Some((r.game, r.label, r.ply));
            let (own, other) = if won { (&mut p.w, &mut p.l) } else { (&mut p.l, &mut p.w) };
            if new_game {
                p.games.push(GameRun { white_won: won, start: own.len() as u32, len: 0 });
                if mirror {
                    p.games.push(GameRun { white_won: !won, start: other.len() as u32, len: 0 });
                }
            }
            own.push(f);
            if mirror {
                other.push(f.mirrored());
            }
            // This game's run, and its mirror's.
            for g in p.games.iter_mut().rev().take(1 + usize::from(mirror)) {
                g.len += 1;
            }
        }
        p
    }

    pub fn len(&self) -> usize {
        self.w.len() + self.l.len()
    }

    pub fn is_empty(&self) -> bool {
        self.w.is_empty() || self.l.is_empty()
    }

    /// Keeps at most `n` positions of each class (the first ones: datasets are in game
    /// order, so this is a subset of games, used for accuracy-vs-data curves).
    pub fn truncate(&mut self, n: usize) {
        self.w.truncate(n);
        self.l.truncate(n);
        let (nw, nl) = (self.w.len() as u32, self.l.len() as u32);
        self.games.retain_mut(|g| {
            let end = if g.white_won { nw } else { nl };
            g.len = g.len.min(end.saturating_sub(g.start));
            g.len > 0
        });
    }
}

/// What a phase is judged on after each epoch: `valid` (valid.dcds, held out by the
/// protocol its header names) and, from `deepchess data --split both`, `positions`: single
/// positions of training games held out (the other protocol, on the same run).
#[derive(Clone, Copy)]
pub struct Validation<'a> {
    pub valid: &'a Pools,
    pub positions: Option<&'a Pools>,
    /// Random (W, L) pairs drawn from each set (a fixed seed: the same pairs every epoch).
    pub pairs: usize,
}

/// Fills a batch of `n` random (W, L) pairs, each ordered at random; label 0 when the first
/// position is the W one (the paper's output (1, 0)).
pub fn pair_batch(pools: &Pools, rng: &mut Rng, n: usize, xa: &mut SparseBatch, xb: &mut SparseBatch, labels: &mut Vec<usize>) {
    let mut a: Vec<&[u16]> = Vec::with_capacity(n);
    let mut b: Vec<&[u16]> = Vec::with_capacity(n);
    labels.clear();
    for _ in 0..n {
        let (w, l) = wl_pair(pools, rng);
        let (w, l) = (w.as_slice(), l.as_slice());
        if rng.next_u64() & 1 == 0 {
            a.push(w);
            b.push(l);
            labels.push(0);
        } else {
            a.push(l);
            b.push(w);
            labels.push(1);
        }
    }
    batch_of(&a, xa);
    batch_of(&b, xb);
}

/// Beyond the paper: pairs other than (W, L) from different games, mixed into a phase's
/// batches (`deepchess train --compact-aux`). The paper's pairs never compare related
/// positions; the search compares little else.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuxPairs {
    /// Fraction of pairs drawn from one game: two of its positions at least `gap` sampled
    /// positions apart, the later one better for the side that won (learnt from the result
    /// alone, like the paper's pairs).
    pub progress: f32,
    pub gap: u32,
    /// Fraction of pairs (position, the same position minus one random non-king piece), the
    /// full one better for the piece's owner with probability [`MATERIAL_TARGET`] of the role.
    pub material: f32,
}

/// Target probabilities of material pairs by role (pawn, knight, bishop, rook, queen): a
/// prior, the logits 1.1, 2.4, 2.4, 3.2, 4.6 are roughly 1, 2, 2, 3, 4 pawns' worth at the
/// search's 0.75-is-a-pawn reading (src/eval/comparator.rs).
pub const MATERIAL_TARGET: [f32; 5] = [0.75, 0.92, 0.92, 0.96, 0.99];

impl AuxPairs {
    /// No aux pairs: the paper's (W, L) pairs only.
    pub const NONE: AuxPairs = AuxPairs { progress: 0.0, gap: 8, material: 0.0 };

    pub fn is_none(&self) -> bool {
        self.progress <= 0.0 && self.material <= 0.0
    }

    /// Parses `progress=F,gap=N,material=F` (any subset).
    pub fn parse(s: &str) -> Result<AuxPairs, String> {
        let mut a = AuxPairs::NONE;
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| format!("'{part}' is not KEY=VALUE"))?;
            let frac = |v: &str| -> Result<f32, String> {
                v.parse::<f32>().ok().filter(|f| (0.0..=1.0).contains(f)).ok_or_else(|| format!("{k}={v}: want a fraction in [0, 1]"))
            };
            match k {
                "progress" => a.progress = frac(v)?,
                "material" => a.material = frac(v)?,
                "gap" => a.gap = v.parse().ok().filter(|&g| g >= 1).ok_or_else(|| format!("gap={v}: want an integer >= 1"))?,
                _ => return Err(format!("unknown key '{k}' (progress, gap, material)")),
            }
        }
        if a.progress + a.material > 1.0 {
            return Err(format!("progress + material = {} > 1", a.progress + a.material));
        }
        Ok(a)
    }
}

/// Like [`pair_batch`], with a fraction of the pairs replaced by [`AuxPairs`]; `target[i]`
/// is `Some(p)` for those, `p` the probability that the first position is the better one for
/// White (output 0), and `None` for (W, L) pairs, whose label is in `labels`.
#[allow(clippy::too_many_arguments)]
pub fn aux_pair_batch(
    pools: &Pools,
    aux: &AuxPairs,
    rng: &mut Rng,
    n: usize,
    xa: &mut SparseBatch,
    xb: &mut SparseBatch,
    labels: &mut Vec<usize>,
    target: &mut Vec<Option<f32>>,
) {
    let (mut fa, mut fb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    aux_pairs(pools, aux, rng, n, &mut fa, &mut fb, labels, target);
    let a: Vec<&[u16]> = fa.iter().map(|f| f.as_slice()).collect();
    let b: Vec<&[u16]> = fb.iter().map(|f| f.as_slice()).collect();
    batch_of(&a, xa);
    batch_of(&b, xb);
}

/// [`aux_pair_batch`]'s pairs as feature lists.
#[allow(clippy::too_many_arguments)]
pub fn aux_pairs(
    pools: &Pools,
    aux: &AuxPairs,
    rng: &mut Rng,
    n: usize,
    fa: &mut Vec<Features>,
    fb: &mut Vec<Features>,
    labels: &mut Vec<usize>,
    target: &mut Vec<Option<f32>>,
) {
    fa.clear();
    fb.clear();
    labels.clear();
    target.clear();
    for _ in 0..n {
        let u = rng.next_f32();
        // (first, second, P(first better for White) for aux pairs, None for (W, L) pairs)
        let (first, second, p) = if u < aux.progress && !pools.games.is_empty() {
            // A game long enough for the gap (a few tries; else a (W, L) pair).
            let g = (0..64).map(|_| pools.games[rng.below(pools.games.len() as u64) as usize]).find(|g| g.len > aux.gap);
            match g {
                Some(g) => {
                    let i = rng.below((g.len - aux.gap) as u64) as u32;
                    let j = i + aux.gap + rng.below((g.len - aux.gap - i) as u64) as u32;
                    let pool = if g.white_won { &pools.w } else { &pools.l };
                    let (early, late) = (pool[(g.start + i) as usize], pool[(g.start + j) as usize]);
                    // The later position is better for the winner.
                    (late, early, Some(if g.white_won { 1.0 } else { 0.0 }))
                }
                None => wl_copy(pools, rng),
            }
        } else if u < aux.progress + aux.material {
            let pool = if rng.next_u64() & 1 == 0 { &pools.w } else { &pools.l };
            let full = pool[rng.below(pool.len() as u64) as usize];
            let pieces: Vec<u16> = full.as_slice().iter().copied().filter(|&i| (i as usize) < 768 && (i as usize) % 384 / 64 != 5).collect();
            if pieces.is_empty() {
                wl_copy(pools, rng)
            } else {
                let gone = pieces[rng.below(pieces.len() as u64) as usize];
                let less: Vec<u16> = full.as_slice().iter().copied().filter(|&i| i != gone).collect();
                let (white, role) = ((gone as usize) < 384, (gone as usize) % 384 / 64);
                let q = MATERIAL_TARGET[role];
                (full, Features::from_sorted(&less), Some(if white { q } else { 1.0 - q }))
            }
        } else {
            wl_copy(pools, rng)
        };
        // Random order, as for (W, L) pairs (a (W, L) pair's first is W: P = 1).
        let p_first = p.unwrap_or(1.0);
        let swap = rng.next_u64() & 1 == 1;
        let (pa, a, b) = if swap { (1.0 - p_first, second, first) } else { (p_first, first, second) };
        fa.push(a);
        fb.push(b);
        labels.push(usize::from(pa < 0.5));
        target.push(p.map(|_| pa));
    }
}

/// A random (W, L) pair: the draw every pair batch shares.
fn wl_pair<'a>(pools: &'a Pools, rng: &mut Rng) -> (&'a Features, &'a Features) {
    let w = &pools.w[rng.below(pools.w.len() as u64) as usize];
    let l = &pools.l[rng.below(pools.l.len() as u64) as usize];
    (w, l)
}

/// [`wl_pair`] as an aux draw's fallback: owned, no target.
fn wl_copy(pools: &Pools, rng: &mut Rng) -> (Features, Features, Option<f32>) {
    let (w, l) = wl_pair(pools, rng);
    (*w, *l, None)
}

/// Fraction of `pairs` random (W, L) pairs (fixed `seed`) that the net orders correctly.
/// (Training's per-epoch check: one forward pass per pair.)
pub fn pair_accuracy(net: &Net, pools: &Pools, pairs: usize, seed: u64) -> f64 {
    accuracies(&[net], pools, pairs, seed, false).0
}

/// Fraction of `pairs` random (W, L) pairs (fixed `seed`, the pairs [`pair_accuracy`]
/// draws) that a value student orders correctly: the first position is called the winner
/// when its value is the greater.
pub fn value_pair_accuracy(net: &ValueNet, pools: &Pools, pairs: usize, seed: u64) -> f64 {
    if pools.is_empty() || pairs == 0 {
        return f64::NAN;
    }
    let mut rng = Rng::new(seed);
    let mut tape = Tape::new();
    let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    let mut labels = Vec::new();
    let (mut right, mut done) = (0usize, 0usize);
    while done < pairs {
        let n = (pairs - done).min(1024);
        pair_batch(pools, &mut rng, n, &mut xa, &mut xb, &mut labels);
        tape.reset();
        let va = value_on_tape(&mut tape, &net.params, &net.layers, &xa).expect("shapes are the net's own");
        let vb = value_on_tape(&mut tape, &net.params, &net.layers, &xb).expect("shapes are the net's own");
        let (va, vb) = (tape.value(va).data(), tape.value(vb).data());
        right += labels.iter().enumerate().filter(|&(i, &lab)| usize::from(va[i] <= vb[i]) == lab).count();
        done += n;
    }
    right as f64 / pairs as f64
}

/// Pair accuracy of the nets' averaged probability (one net: [`pair_accuracy`]), and with
/// both orders of each pair averaged as well (`(P(a, b) + 1 − P(b, a)) / 2` against ½:
/// the antisymmetric reading the engine uses).
pub fn pair_accuracies(nets: &[&Net], pools: &Pools, pairs: usize, seed: u64) -> (f64, f64) {
    accuracies(nets, pools, pairs, seed, true)
}

/// Both of the above; the swapped order is only evaluated `with_swapped` (else NaN).
fn accuracies(nets: &[&Net], pools: &Pools, pairs: usize, seed: u64, with_swapped: bool) -> (f64, f64) {
    if pools.is_empty() || pairs == 0 || nets.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = Rng::new(seed);
    let mut tape = Tape::new();
    let (mut xa, mut xb) = (SparseBatch::new(INPUTS), SparseBatch::new(INPUTS));
    let mut labels = Vec::new();
    let (mut right, mut right_both, mut done) = (0usize, 0usize, 0usize);
    // P(output 0) = P(the first position is the winner): label 0.
    let (mut one, mut both) = (Vec::new(), Vec::new());
    while done < pairs {
        let n = (pairs - done).min(1024);
        pair_batch(pools, &mut rng, n, &mut xa, &mut xb, &mut labels);
        one.clear();
        one.resize(n, 0.0f32);
        both.clear();
        both.resize(n, 0.0f32);
        for net in nets {
            tape.reset();
            let logits = net.pair_logits_on_tape(&mut tape, &xa, &xb).expect("shapes are the net's own");
            let z = tape.value(logits);
            for i in 0..n {
                one[i] += prob_first(z, i);
            }
            if with_swapped {
                let swapped = net.pair_logits_on_tape(&mut tape, &xb, &xa).expect("shapes are the net's own");
                let (z, zs) = (tape.value(logits), tape.value(swapped));
                for i in 0..n {
                    both[i] += 0.5 * (prob_first(z, i) + 1.0 - prob_first(zs, i));
                }
            }
        }
        let half = 0.5 * nets.len() as f32;
        for (i, &lab) in labels.iter().enumerate() {
            right += usize::from(usize::from(one[i] < half) == lab);
            right_both += usize::from(usize::from(both[i] < half) == lab);
        }
        done += n;
    }
    (right as f64 / pairs as f64, if with_swapped { right_both as f64 / pairs as f64 } else { f64::NAN })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::dataset::Record;
    use crate::chess::Position;

    /// A pool whose positions are told apart by one input bit each: `base + k`.
    fn tagged(base: u16, n: u16) -> Vec<Features> {
        (0..n).map(|k| Features::from_sorted(&[base + k])).collect()
    }

    #[test]
    fn game_runs_follow_games_labels_and_mirrors() {
        let pos = Position::startpos();
        let rec = |won, ply, game| Record::new(&pos, won, ply, game);
        // Game 1 (White won, 3 positions), game 2 (Black won, 2), game 3 (White won, 2) whose
        // ply order restarts without an id change being needed.
        let records = vec![rec(true, 10, 1), rec(true, 12, 1), rec(true, 15, 1), rec(false, 10, 2), rec(false, 11, 2), rec(true, 20, 3), rec(true, 8, 3)];
        let d = Dataset { meta: vec![], records };
        let p = Pools::from_dataset(&d, false);
        let runs: Vec<(bool, u32, u32)> = p.games.iter().map(|g| (g.white_won, g.start, g.len)).collect();
        assert_eq!(runs, vec![(true, 0, 3), (false, 0, 2), (true, 3, 1), (true, 4, 1)]);
        let m = Pools::from_dataset(&d, true);
        assert_eq!((m.w.len(), m.l.len()), (7, 7));
        let runs: Vec<(bool, u32, u32)> = m.games.iter().map(|g| (g.white_won, g.start, g.len)).collect();
        assert_eq!(runs[..4], [(true, 0, 3), (false, 0, 3), (false, 3, 2), (true, 3, 2)]);
        let mut t = m.clone();
        t.truncate(2);
        assert!(t.games.iter().all(|g| g.start + g.len <= 2));
    }

    #[test]
    fn the_paper_subset_is_balanced_fixed_and_without_repeats() {
        let p = Pools { w: tagged(0, 50), l: tagged(100, 300), games: vec![] };
        let s = p.balanced_subset(40, &mut crate::tensor::Rng::new(3));
        assert_eq!((s.w.len(), s.l.len()), (40, 40), "n of each class, whatever the pools' sizes");
        let mut w: Vec<&[u16]> = s.w.iter().map(|f| f.as_slice()).collect();
        w.sort();
        w.dedup();
        assert_eq!(w.len(), 40, "no position twice");
        assert!(s.w.iter().all(|f| f.as_slice()[0] < 100) && s.l.iter().all(|f| f.as_slice()[0] >= 100), "each from its own pool");
        let again = p.balanced_subset(40, &mut crate::tensor::Rng::new(3));
        assert!(s.w == again.w && s.l == again.l, "the same seed draws the same set");
        assert_eq!(p.balanced_subset(60, &mut crate::tensor::Rng::new(3)).w.len(), 50, "a small pool is taken whole");
    }

    #[test]
    fn progress_pairs_put_the_winners_later_position_ahead() {
        let mut p = Pools { w: tagged(0, 30), l: tagged(100, 30), games: vec![] };
        p.games.push(GameRun { white_won: true, start: 0, len: 30 });
        p.games.push(GameRun { white_won: false, start: 0, len: 30 });
        let aux = AuxPairs { progress: 1.0, gap: 5, material: 0.0 };
        let (mut fa, mut fb, mut labels, mut target) = (vec![], vec![], vec![], vec![]);
        aux_pairs(&p, &aux, &mut Rng::new(3), 2000, &mut fa, &mut fb, &mut labels, &mut target);
        let (mut firsts_later, mut games_seen) = (0, [0; 2]);
        for i in 0..2000 {
            let (a, b) = (fa[i].as_slice()[0], fb[i].as_slice()[0]);
            let white_won = a < 100;
            assert_eq!(white_won, b < 100, "pair {i} mixes games");
            games_seen[white_won as usize] += 1;
            assert!(a.abs_diff(b) >= 5, "pair {i}: gap {}", a.abs_diff(b));
            // P(first better for White): the later position is better for the winner.
            let want = if (a > b) == white_won { 1.0 } else { 0.0 };
            assert_eq!(target[i], Some(want), "pair {i}: ({a}, {b})");
            assert_eq!(labels[i], usize::from(want < 0.5));
            firsts_later += usize::from(a > b);
        }
        assert!(games_seen.iter().all(|&n| n > 800), "{games_seen:?}");
        assert!((800..1200).contains(&firsts_later), "order not random: {firsts_later}");
    }

    #[test]
    fn material_pairs_remove_one_non_king_piece() {
        let f = Features::from_position(&Position::startpos());
        let p = Pools { w: vec![f; 4], l: vec![f.mirrored(); 4], games: vec![] };
        let aux = AuxPairs { progress: 0.0, gap: 1, material: 1.0 };
        let (mut fa, mut fb, mut labels, mut target) = (vec![], vec![], vec![], vec![]);
        aux_pairs(&p, &aux, &mut Rng::new(5), 500, &mut fa, &mut fb, &mut labels, &mut target);
        for i in 0..500 {
            let (a, b) = (fa[i].as_slice(), fb[i].as_slice());
            let (full, less, full_first) = if a.len() > b.len() { (a, b, true) } else { (b, a, false) };
            assert_eq!(full.len(), less.len() + 1);
            let gone: Vec<u16> = full.iter().copied().filter(|i| !less.contains(i)).collect();
            assert_eq!(gone.len(), 1);
            let (white, role) = (gone[0] < 384, gone[0] as usize % 384 / 64);
            assert!(role < 5, "a king was removed");
            let q = MATERIAL_TARGET[role];
            let p_full = if white { q } else { 1.0 - q };
            let want = if full_first { p_full } else { 1.0 - p_full };
            assert!((target[i].unwrap() - want).abs() < 1e-6, "pair {i}");
        }
    }

    #[test]
    fn aux_pairs_mix_in_their_fraction_and_parse() {
        let mut p = Pools { w: tagged(0, 30), l: tagged(100, 30), games: vec![] };
        p.games.push(GameRun { white_won: true, start: 0, len: 30 });
        let aux = AuxPairs::parse("progress=0.3,gap=4").unwrap();
        assert_eq!(aux, AuxPairs { progress: 0.3, gap: 4, material: 0.0 });
        let (mut fa, mut fb, mut labels, mut target) = (vec![], vec![], vec![], vec![]);
        aux_pairs(&p, &aux, &mut Rng::new(9), 4000, &mut fa, &mut fb, &mut labels, &mut target);
        let n_aux = target.iter().filter(|t| t.is_some()).count();
        assert!((1000..1400).contains(&n_aux), "{n_aux} of 4000");
        // (W, L) pairs: label 0 when the first one is the W position.
        for i in (0..4000).filter(|&i| target[i].is_none()) {
            assert_eq!(labels[i], usize::from(fa[i].as_slice()[0] >= 100));
        }
        for bad in ["progress=2", "gap=0", "material=0.6,progress=0.6", "foo=1", "progress"] {
            assert!(AuxPairs::parse(bad).is_err(), "{bad}");
        }
    }
}

pub fn dataset_file(dir: &Path, file: &str) -> Result<PathBuf, String> {
    let path = dir.join(file);
    if !path.exists() {
        return Err(format!(
            "{} not found: build datasets first ('make dataset' or 'deepchess data --pgn FILE --out {}')",
            path.display(),
            dir.display()
        ));
    }
    Ok(path)
}

/// The W and L positions of dataset `file` in `dir` (with mirrored twins when `mirror`).
pub fn load_pools(dir: &Path, file: &str, mirror: bool) -> Result<(Pools, Dataset), String> {
    let path = dataset_file(dir, file)?;
    let d = Dataset::load(&path).map_err(|e| e.to_string())?;
    let pools = Pools::from_dataset(&d, mirror);
    if pools.is_empty() {
        return Err(format!("{}: needs both W and L positions", path.display()));
    }
    Ok((pools, d))
}
