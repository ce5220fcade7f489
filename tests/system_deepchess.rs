//! DeepChess in the comparison alpha-beta: the net comparator (incremental first layer,
//! feature cache, draw reference, antisymmetry) with seeded random weights and with the
//! shipped distilled net.

mod common;

use common::{random_game, shipped_searcher, uci, MATES};
use deepchess::chess::{Game, Position};
use deepchess::deepchess::features::{feature_delta, Features};
use deepchess::deepchess::infer::{random_distilled, Distilled, FeatureCache, NetComparator};
use deepchess::eval::Comparator;
use deepchess::search::{bench, Limits, Score, Searcher};
use proptest::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

// --- the net path with seeded random weights of the distilled shape (not a trained net) ---

fn net_searcher() -> Searcher<NetComparator<Distilled>> {
    Searcher::new(NetComparator::new(random_distilled(7), "random", 32), 8)
}

#[test]
fn net_path_finds_mates_in_one_two_three() {
    for &(fen, n, mv) in MATES {
        let pos = Position::from_fen(fen).unwrap();
        let mut s = net_searcher();
        // 2N-1 plies reach the mate (the last move checks, and checks are extended).
        let r = s.search(&Game::new(pos), &Limits::depth((2 * n - 1) as u32), Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {});
        assert_eq!(r.best, Some(uci(&pos, mv)), "{fen}");
        assert_eq!(r.info.score, Score::Mate(n), "{fen}");
    }
}

#[test]
fn net_feature_cache_hits_on_a_repeated_search() {
    let mut s = net_searcher();
    let g = Game::new(Position::from_fen(bench::POSITIONS[4]).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    s.search(&g, &Limits::depth(3), Duration::ZERO, stop.clone(), &mut |_| {});
    let first = s.comp.stats();
    assert!(first.keys > 0 && first.comparisons > 0);
    s.search(&g, &Limits::depth(3), Duration::ZERO, stop, &mut |_| {});
    let second = s.comp.stats();
    let (keys, hits) = (second.keys - first.keys, second.cache_hits - first.cache_hits);
    eprintln!("first search {} keys; second {keys} keys, {hits} hits", first.keys);
    // Not all: the second tree differs (table cut-offs, history), and the cache evicts.
    assert!(hits * 2 >= keys, "second search: {hits} hits of {keys} keys");
}

/// The search holds its values as handles into the comparator's store of positions: it
/// leaves none behind, and keys taken before it (a caller's) stay readable.
#[test]
fn net_search_releases_its_live_keys() {
    let mut s = net_searcher();
    let before = Position::from_fen(bench::POSITIONS[1]).unwrap();
    s.comp.set_root(&before);
    let k = s.comp.key(0, &before);
    let code = s.comp.code(&k);
    for fen in &bench::POSITIONS[..6] {
        let g = Game::new(Position::from_fen(fen).unwrap());
        s.search(&g, &Limits::depth(4), Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {});
        assert_eq!(s.comp.live_keys(), 1, "{fen}");
    }
    // (Rebuilt from its board if its cache slot was reused: equal up to rounding.)
    let again = s.comp.code(&k);
    assert!(again.left.iter().chain(&again.right).zip(code.left.iter().chain(&code.right)).all(|(a, b)| (a - b).abs() < 1e-4));
    assert_eq!(s.comp.compare(&k, &k), std::cmp::Ordering::Equal);
}

#[test]
fn net_draw_reference_is_the_mirror_twin() {
    // A symmetric position (its mirror is itself with the other side to move) and a lost one.
    let mut c = NetComparator::new(random_distilled(3), "random", 1);
    let p = Position::from_fen("4k3/8/8/8/8/8/8/QQQQK3 w - - 0 1").unwrap();
    let k = c.key(0, &p);
    let m = c.key(0, &p.mirror());
    let direct = c.prob_white_better(&k, &m);
    assert!((c.prob_better_than_draw(&k) - direct).abs() < 1e-6);
}

/// Keys carry only a hash and input bits; with a one-slot feature cache every code is evicted
/// at once and rebuilt from the bits, and the answers must not change (including the case of
/// both operands mapping to the same slot, and the draw reference of a cache-hit key).
#[test]
fn net_keys_survive_feature_cache_eviction() {
    let fens = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
        "4k3/8/8/8/8/8/8/QQQQK3 b - - 0 1",
    ];
    let pos: Vec<Position> = fens.iter().map(|f| Position::from_fen(f).unwrap()).collect();
    let mut tiny = NetComparator::new(random_distilled(9), "tiny", 0);
    let mut big = NetComparator::new(random_distilled(9), "big", 16);
    let kt: Vec<_> = pos.iter().map(|p| { tiny.set_root(p); tiny.key(0, p) }).collect();
    let kb: Vec<_> = pos.iter().map(|p| { big.set_root(p); big.key(0, p) }).collect();
    for i in 0..pos.len() {
        for j in 0..pos.len() {
            let (a, b) = (tiny.prob_white_better(&kt[i], &kt[j]), big.prob_white_better(&kb[i], &kb[j]));
            assert!((a - b).abs() < 1e-4, "{i} vs {j}: {a} vs {b}");
        }
        let (a, b) = (tiny.prob_better_than_draw(&kt[i]), big.prob_better_than_draw(&kb[i]));
        assert!((a - b).abs() < 1e-4, "draw {i}: {a} vs {b}");
        // A second key of the same position is a cache hit in `big`: same draw reference.
        let again = big.key(0, &pos[i]);
        assert!((big.prob_better_than_draw(&again) - b).abs() < 1e-6);
    }
    assert!(tiny.stats().rebuilds > 0 && big.stats().rebuilds == 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    /// The incremental first layer gives the same codes as recomputing it, and move deltas
    /// turn a position's input bits into its child's.
    #[test]
    fn incremental_first_layer_matches_refresh(seed in any::<u64>(), plies in 1usize..90) {
        let g = random_game(seed, plies);
        let bits = |p: &Position| -> Vec<usize> { Features::from_position(p).as_slice().iter().map(|&b| b as usize).collect() };
        let mut inc = NetComparator::new(random_distilled(5), "inc", 1);
        let mut full = NetComparator::new(random_distilled(5), "full", 1);
        assert!(full.set_incremental(false));
        let mut pos = *g.start();
        inc.set_root(&pos);
        full.set_root(&pos);
        let mut ply = 0;
        for (i, &m) in g.moves().iter().enumerate() {
            let mut child = pos;
            child.play(m);
            let (mut added, mut removed) = (Vec::new(), Vec::new());
            feature_delta(&pos, &child, &mut added, &mut removed);
            prop_assert!(added.windows(2).all(|w| w[0] < w[1]) && removed.windows(2).all(|w| w[0] < w[1]));
            let mut moved = bits(&pos);
            moved.retain(|b| !removed.contains(b));
            moved.extend(&added);
            moved.sort_unstable();
            prop_assert_eq!(moved, bits(&child));
            pos = child;
            ply += 1;
            if ply >= 100 { break; }
            inc.set_node(ply, &pos);
            full.set_node(ply, &pos);
            // Ask for keys only now and then so increments span several moves.
            if i % 3 == 2 || i + 1 == g.moves().len() {
                let (a, b) = (inc.key(ply, &pos), full.key(ply, &pos));
                let (a, b) = (inc.code(&a), full.code(&b));
                for j in 0..a.left.len() {
                    prop_assert!((a.left[j] - b.left[j]).abs() < 1e-3);
                    prop_assert!((a.right[j] - b.right[j]).abs() < 1e-3);
                }
            }
        }
        prop_assert_eq!(Features::from_position(&pos).mirrored(), Features::from_position(&pos.mirror()));
        // Between any two positions (not only a move apart): the set differences, increasing.
        let (a, b) = (bits(g.start()), bits(&pos));
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        feature_delta(g.start(), &pos, &mut added, &mut removed);
        prop_assert_eq!(added, b.iter().copied().filter(|x| !a.contains(x)).collect::<Vec<_>>());
        prop_assert_eq!(removed, a.iter().copied().filter(|x| !b.contains(x)).collect::<Vec<_>>());
    }
}

// --- the shipped distilled net: the comparator must be a consistent order for alpha-beta ---

#[test]
fn net_comparator_is_antisymmetric_and_equal_on_equal_keys() {
    let path = format!("{}/data/nets/distilled.dcw", env!("CARGO_MANIFEST_DIR"));
    let net = Distilled::load(std::path::Path::new(&path)).unwrap();
    let mut c = NetComparator::new(net, "distilled", 4);
    let g = random_game(3, 40);
    let mut keys = Vec::new();
    let mut pos = *g.start();
    for &m in g.moves() {
        keys.push(c.key(usize::MAX, &pos));
        pos.play(m);
    }
    for a in &keys {
        assert_eq!(c.prob_white_better(a, a), 0.5);
        for b in &keys {
            let (p, q) = (c.prob_white_better(a, b), c.prob_white_better(b, a));
            assert!((p + q - 1.0).abs() < 1e-6, "{p} + {q}");
            assert_eq!(c.compare(a, b), c.compare(b, a).reverse());
            // The search's comparison (a logit margin, no exp) says what the probability says.
            if (p - 0.5).abs() > 1e-6 {
                assert_eq!(c.compare(a, b), p.partial_cmp(&0.5).unwrap(), "p = {p}");
            }
        }
    }
}

#[test]
fn net_comparator_resolution_ties_close_positions_only() {
    // Option `Resolution`: margins under R centipawns compare equal; every other answer is the
    // paper's comparator's, and the order stays antisymmetric.
    let path = format!("{}/data/nets/distilled.dcw", env!("CARGO_MANIFEST_DIR"));
    let load = || Distilled::load(std::path::Path::new(&path)).unwrap();
    let mut exact = NetComparator::new(load(), "distilled", 4);
    let mut coarse = NetComparator::new(load(), "distilled", 4).with_resolution(5.0);
    let (mut ties, mut far) = (0, 0);
    for seed in 0..4 {
        let g = random_game(11 + seed, 40);
        let mut pos = *g.start();
        let mut keys = Vec::new();
        for &m in g.moves() {
            keys.push((exact.key(usize::MAX, &pos), coarse.key(usize::MAX, &pos)));
            pos.play(m);
        }
        for (a, ca) in &keys {
            for (b, cb) in &keys {
                let (e, c) = (exact.compare(a, b), coarse.compare(ca, cb));
                assert_eq!(c, coarse.compare(cb, ca).reverse());
                if c != std::cmp::Ordering::Equal {
                    assert_eq!(c, e);
                } else if e != std::cmp::Ordering::Equal {
                    ties += 1;
                }
                // Far apart (p beyond 0.45..0.55, about 18 cp): never tied at 5 cp.
                if (exact.prob_white_better(a, b) - 0.5).abs() > 0.05 {
                    far += 1;
                    assert_ne!(c, std::cmp::Ordering::Equal);
                }
            }
        }
    }
    assert!(ties > 0 && far > 0, "ties {ties}, far apart {far}");
}

#[test]
fn net_search_takes_a_hanging_queen_at_every_depth() {
    // Regression: with a head whose P(a, a) != 1/2, bounds returned by fail-low nodes were
    // misordered and the search played h3 instead of Nxh4 from depth 2 on.
    for depth in 1..=4 {
        let mut s = shipped_searcher();
        let g = Game::new(Position::from_fen("rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 1").unwrap());
        let r = s.search(&g, &Limits { depth: Some(depth), ..Limits::default() }, Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {});
        assert_eq!(r.best.unwrap().to_string(), "f3h4", "depth {depth}");
    }
}


/// Clearing the feature cache (a new salt, not a rewrite) forgets every entry, and the
/// cache works as before afterwards.
#[test]
fn feature_cache_clear_forgets_everything() {
    let mut c: FeatureCache<u32> = FeatureCache::with_bytes(4096);
    let keys: Vec<u64> = (1..200u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    for (i, &k) in keys.iter().enumerate() {
        c.put(k, i as u32);
    }
    assert!(keys.iter().enumerate().any(|(i, &k)| c.get(k) == Some(i as u32)));
    for round in 0..3 {
        c.clear();
        assert!(keys.iter().all(|&k| c.get(k).is_none()), "round {round}");
        c.put(keys[round], 7);
        assert_eq!(c.get(keys[round]), Some(7));
    }
    // Empty slots hold 0, which matches no salted key.
    assert_eq!(c.get(0), None);
}
