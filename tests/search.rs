//! Comparison alpha-beta with the handcrafted comparator: mates, draws, legality, limits.

use deepchess::chess::{Color, Game, Move, Position};
use deepchess::eval::{handcrafted, Comparator, Handcrafted, Kind, ScoreComparator, Value};
use deepchess::search::{bench, Limits, Score, SearchResult, Searcher};
use proptest::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn run<C: Comparator>(s: &mut Searcher<C>, game: &Game, limits: Limits) -> SearchResult {
    s.search(game, &limits, Duration::ZERO, Arc::new(AtomicBool::new(false)), &mut |_| {})
}

fn search_game(game: &Game, limits: Limits) -> SearchResult {
    run(&mut Searcher::new(handcrafted(), 8), game, limits)
}

/// A handcrafted searcher without null move, reductions or pruning.
fn full_width() -> Searcher<ScoreComparator<Handcrafted>> {
    let mut s = Searcher::new(handcrafted(), 8);
    s.selective = false;
    s
}

fn search_fen(fen: &str, depth: u32) -> SearchResult {
    search_game(&Game::new(Position::from_fen(fen).unwrap()), Limits::depth(depth))
}

fn uci(pos: &Position, m: &str) -> Move {
    pos.parse_uci(m).unwrap()
}

/// (FEN, mate in N, the mating first move) — all checked with Stockfish 15.1.
const MATES: &[(&str, i32, &str)] = &[
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 1, "a1a8"),
    ("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", 1, "a8a1"),
    ("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", 1, "f1f8"),
    ("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2, "d5f6"),
    ("6k1/pp4p1/2p5/2bp4/8/P5Pb/1P3rrP/2BRRN1K b - - 0 1", 2, "g2g1"),
    ("r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1", 3, "f8c5"),
    ("2r3k1/p4p2/3Rp2p/1p2P1pK/8/1P4P1/P3Q2P/1q6 b - - 0 1", 3, "b1g6"),
];

#[test]
fn finds_mates_in_one_two_three() {
    // Full width at depth 2N: the nominal depth of a mate in N, plus one ply to refute.
    for &(fen, n, mv) in MATES {
        let r = run(&mut full_width(), &Game::new(Position::from_fen(fen).unwrap()), Limits::depth((2 * n) as u32));
        let pos = Position::from_fen(fen).unwrap();
        assert_eq!(r.best, Some(uci(&pos, mv)), "{fen}");
        assert_eq!(r.info.score, Score::Mate(n), "{fen}");
    }
}

#[test]
fn being_mated_is_reported_negative() {
    // White is mated next move whatever it plays (Stockfish: mate -1).
    let r = search_fen("7k/8/8/8/P7/1r6/r7/7K w - - 0 1", 3);
    assert_eq!(r.info.score, Score::Mate(-1));
    assert!(r.best.is_some());
}

#[test]
fn root_checkmate_and_stalemate() {
    let r = search_fen("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", 3);
    assert_eq!(r.best, None);
    assert_eq!(r.info.score, Score::Mate(0));
    let r = search_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 3);
    assert_eq!(r.best, None);
    assert_eq!(r.info.score, Score::Cp(0));
}

#[test]
fn winning_side_avoids_stalemate_losing_side_seeks_it() {
    // Qf7 would stalemate; Qf8 mates.
    let r = search_fen("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", 3);
    assert_eq!(r.info.score, Score::Mate(1));
    // Black, a queen down, sacrifices the rook with check: Kxg1 is forced and stalemates.
    let r = search_fen("k5r1/2Q5/8/8/8/8/7P/7K b - - 0 1", 4);
    assert_eq!(r.best, Some(uci(&Position::from_fen("k5r1/2Q5/8/8/8/8/7P/7K b - - 0 1").unwrap(), "g8g1")));
    assert_eq!(r.info.score, Score::Cp(0));
}

#[test]
fn repetition_is_a_draw_the_losing_side_takes() {
    // Black is two queens down; repeating the knight move draws by repetition.
    let start = Position::from_fen("7k/8/8/8/6n1/QQ6/8/7K b - - 0 1").unwrap();
    let mut g = Game::new(start);
    for m in ["g4f6", "a3a4", "f6g4", "a4a3"] {
        let mv = g.position().parse_uci(m).unwrap();
        g.play(mv).unwrap();
    }
    let r = search_game(&g, Limits::depth(4));
    assert_eq!(r.best, Some(uci(g.position(), "g4f6")));
    assert_eq!(r.info.score, Score::Cp(0));
    // Without the history the same position is simply lost.
    let r = search_game(&Game::new(*g.position()), Limits::depth(4));
    assert!(matches!(r.info.score, Score::Cp(c) if c < -1000) || matches!(r.info.score, Score::Mate(m) if m < 0));
}

#[test]
fn fifty_move_rule_and_insufficient_material_are_draws() {
    // Halfmove clock 99: any non-pawn, non-capture move draws; Black is lost otherwise.
    let r = search_fen("7k/8/8/8/8/QQ6/8/6nK b - - 99 120", 3);
    assert_eq!(r.info.score, Score::Cp(0));
    // K+N v K: every line is a draw.
    let r = search_fen("8/8/4k3/8/8/3NK3/8/8 w - - 0 1", 4);
    assert_eq!(r.info.score, Score::Cp(0));
}

#[test]
fn values_rank_mates_beyond_positions_shorter_first() {
    let mut c = handcrafted();
    let w = Color::White;
    let pos_big = Value::pos(5000.0);
    let pos_small = Value::pos(-5000.0);
    let white_m1: Value<f32> = Value::mate(Color::White, 1);
    let white_m5: Value<f32> = Value::mate(Color::White, 5);
    let black_m2: Value<f32> = Value::mate(Color::Black, 2);
    let black_m8: Value<f32> = Value::mate(Color::Black, 8);
    let draw: Value<f32> = Value::draw();
    let order = [black_m2, black_m8, pos_small, draw, pos_big, white_m5, white_m1];
    for i in 0..order.len() {
        for j in 0..order.len() {
            let want = i.cmp(&j);
            assert_eq!(order[i].cmp_white(&order[j], &mut c), want, "{i} vs {j}");
            assert_eq!(order[i].cmp_for(&order[j], Color::Black, &mut c), want.reverse());
        }
    }
    assert!(matches!(Value::<f32>::worst_for(w).kind, Kind::Bottom));
    assert!(c.stats().comparisons > 0);
}

#[test]
fn node_limit_and_stop_flag_are_obeyed() {
    let g = Game::default();
    let r = search_game(&g, Limits { nodes: Some(5000), ..Limits::default() });
    assert!(r.info.nodes <= 5000 + 64, "{}", r.info.nodes);
    assert!(r.best.is_some());
    // Already stopped: still one legal move.
    let mut s = Searcher::new(handcrafted(), 1);
    let r = s.search(&g, &Limits { infinite: true, ..Limits::default() }, Duration::ZERO, Arc::new(AtomicBool::new(true)), &mut |_| {});
    assert!(g.position().is_legal(r.best.unwrap()));
}

#[test]
fn movetime_is_respected() {
    let g = Game::new(Position::from_fen(bench::POSITIONS[1]).unwrap());
    let t = Instant::now();
    let mut s = Searcher::new(handcrafted(), 8);
    let limits = Limits { movetime: Some(Duration::from_millis(150)), ..Limits::default() };
    let r = s.search(&g, &limits, Duration::from_millis(50), Arc::new(AtomicBool::new(false)), &mut |_| {});
    let el = t.elapsed();
    assert!(el < Duration::from_millis(150), "{el:?}");
    assert!(r.info.depth >= 2);
}

#[test]
fn bench_node_count_is_deterministic() {
    let run = || {
        let mut s = Searcher::new(handcrafted(), 4);
        bench::run(&mut s, 3, |_, _, _| {}).nodes
    };
    let a = run();
    assert!(a > 1000);
    assert_eq!(a, run());
}

/// A random legal game prefix from a seed (xorshift), for legality checks.
fn random_game(seed: u64, plies: usize) -> Game {
    let mut g = Game::default();
    let mut x = seed | 1;
    for _ in 0..plies {
        if g.ending().is_some() {
            break;
        }
        let moves = g.position().legal_moves();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let m = moves.as_slice()[(x % moves.len() as u64) as usize];
        g.play_unchecked(m);
    }
    g
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn best_move_is_always_legal(seed in any::<u64>(), plies in 0usize..120, depth in 1u32..4) {
        let g = random_game(seed, plies);
        let r = search_game(&g, Limits { depth: Some(depth), nodes: Some(20_000), ..Limits::default() });
        let pos = g.position();
        match r.best {
            Some(m) => {
                prop_assert!(pos.is_legal(m));
                // The PV is a legal line.
                let mut p = *pos;
                for &m in &r.info.pv {
                    prop_assert!(p.is_legal(m), "pv {:?} illegal in {}", r.info.pv, pos.fen());
                    p.play(m);
                }
            }
            None => prop_assert!(!pos.has_legal_move()),
        }
    }
}

// --- the net path (random weights of the distilled shape: the seam, not a trained net) ---

use deepchess::deepchess::features::Features;
use deepchess::search::net::{feature_delta, mirror_features};
use deepchess::search::random_net::RandomNet;
use deepchess::search::NetComparator;

fn net_searcher() -> Searcher<NetComparator<RandomNet>> {
    Searcher::new(NetComparator::new(RandomNet::new(7), "random", 32), 8)
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

#[test]
fn net_draw_reference_is_the_mirror_twin() {
    // A symmetric position (its mirror is itself with the other side to move) and a lost one.
    let mut c = NetComparator::new(RandomNet::new(3), "random", 1);
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
    let mut tiny = NetComparator::new(RandomNet::new(9), "tiny", 0);
    let mut big = NetComparator::new(RandomNet::new(9), "big", 16);
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
        let mut inc = NetComparator::new(RandomNet::new(5), "inc", 1);
        let mut full = NetComparator::new(RandomNet::new(5), "full", 1);
        full.incremental = false;
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
        prop_assert_eq!(mirror_features(&Features::from_position(&pos)), Features::from_position(&pos.mirror()));
        // Between any two positions (not only a move apart): the set differences, increasing.
        let (a, b) = (bits(g.start()), bits(&pos));
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        feature_delta(g.start(), &pos, &mut added, &mut removed);
        prop_assert_eq!(added, b.iter().copied().filter(|x| !a.contains(x)).collect::<Vec<_>>());
        prop_assert_eq!(removed, a.iter().copied().filter(|x| !b.contains(x)).collect::<Vec<_>>());
    }
}

// --- the shipped distilled net: the comparator must be a consistent order for alpha-beta ---

fn shipped_searcher() -> Searcher<NetComparator<deepchess::search::deepchess_net::Distilled>> {
    let path = format!("{}/data/nets/distilled.dcw", env!("CARGO_MANIFEST_DIR"));
    let net = deepchess::search::deepchess_net::Distilled::load(std::path::Path::new(&path)).unwrap();
    Searcher::new(NetComparator::new(net, "distilled", 16), 8)
}

#[test]
fn net_comparator_is_antisymmetric_and_equal_on_equal_keys() {
    let path = format!("{}/data/nets/distilled.dcw", env!("CARGO_MANIFEST_DIR"));
    let net = deepchess::search::deepchess_net::Distilled::load(std::path::Path::new(&path)).unwrap();
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

/// Principal variation search with values as bounds needs "alpha + ε" windows; a tie
/// read the wrong way silently prunes the tree (it once cut a depth-7 search to 5k nodes).
/// Without selectivity, PVS and full-window alpha-beta must agree on every root score.
#[test]
fn pvs_scores_equal_full_window_alpha_beta() {
    let mut pvs_nodes = 0;
    let mut ab_nodes = 0;
    for (i, fen) in bench::POSITIONS.iter().enumerate() {
        let g = Game::new(Position::from_fen(fen).unwrap());
        let depth = if i < 20 { 4 } else { 6 };
        let mut scores = Vec::new();
        for null_windows in [true, false] {
            let mut s = full_width();
            s.null_windows = null_windows;
            let r = run(&mut s, &g, Limits::depth(depth));
            *(if null_windows { &mut pvs_nodes } else { &mut ab_nodes }) += r.info.nodes;
            scores.push(r.info.score);
        }
        assert_eq!(scores[0], scores[1], "{fen}");
    }
    // PVS prunes more, but not absurdly more.
    assert!(pvs_nodes < ab_nodes && 3 * pvs_nodes > ab_nodes, "{pvs_nodes} vs {ab_nodes}");
}

/// The selective search (null move, reductions, late-move pruning) still finds the mates a
/// little deeper, and `go mate N` searches full width, proving them at the nominal depth.
#[test]
fn selective_search_finds_mates_and_go_mate_is_full_width() {
    for &(fen, n, mv) in MATES {
        let pos = Position::from_fen(fen).unwrap();
        let r = search_fen(fen, (2 * n + 2) as u32);
        assert_eq!(r.info.score, Score::Mate(n), "{fen}");
        assert_eq!(r.best, Some(uci(&pos, mv)), "{fen}");
        let r = search_game(&Game::new(pos), Limits { mate: Some(n as u32), ..Limits::default() });
        assert_eq!(r.info.score, Score::Mate(n), "go mate {n}: {fen}");
        assert!(r.info.depth <= (2 * n - 1) as u32);
    }
}

/// Philidor's legacy (Stockfish 15.1: mate in 4, Nf7+ Kg8 Nh6+ Kh8 Qg8+ Rxg8 Nf7#): two of
/// the mating moves lose material on their square (Nh6+, Qg8+), which is what SEE pruning
/// skips and the check extension no longer extends near the leaves, and Qxa5 wins a queen at
/// once. The selective search must still find the mate, a few plies later than the full-width
/// one, with either comparator.
#[test]
fn selective_search_finds_a_mate_through_sacrifices() {
    let fen = "4r2k/pp4pp/8/q2Q2N1/8/8/PP4PP/5RK1 w - - 0 1";
    let pos = Position::from_fen(fen).unwrap();
    let r = run(&mut full_width(), &Game::new(pos), Limits::depth(7));
    assert_eq!((r.best, r.info.score), (Some(uci(&pos, "g5f7")), Score::Mate(4)), "full width");
    let r = search_fen(fen, 12);
    assert_eq!((r.best, r.info.score), (Some(uci(&pos, "g5f7")), Score::Mate(4)), "handcrafted");
    let r = run(&mut shipped_searcher(), &Game::new(pos), Limits::depth(12));
    assert_eq!((r.best, r.info.score), (Some(uci(&pos, "g5f7")), Score::Mate(4)), "net");
}

/// Clearing the feature cache (a new salt, not a rewrite) forgets every entry, and the
/// cache works as before afterwards.
#[test]
fn feature_cache_clear_forgets_everything() {
    use deepchess::search::net::FeatureCache;
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

#[test]
fn bench_vs_net_reports_the_median_of_interleaved_rounds() {
    let exe = env!("CARGO_BIN_EXE_deepchess");
    let out = std::process::Command::new(exe).args(["bench", "--depth", "2", "--vs-net", "--rounds", "3"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    for name in ["compact", "distilled"] {
        let line = err.lines().find(|l| l.starts_with(&format!("{name} net vs handcrafted"))).unwrap_or_else(|| panic!("{err}"));
        assert!(line.contains("median of 3 interleaved rounds"), "{line}");
    }
    // One handcrafted and one run per net per round.
    for eval in ["handcrafted", "compact", "distilled"] {
        assert_eq!(err.lines().filter(|l| l.starts_with(&format!("eval {eval} depth 2"))).count(), 3, "{eval}: {err}");
    }
    // Refused before any search: out of range, or without --vs-net.
    for (args, says) in [(&["bench", "--vs-net", "--rounds", "0"][..], "--rounds 0"), (&["bench", "--rounds", "3"][..], "--rounds goes with --vs-net")] {
        let bad = std::process::Command::new(exe).args(args).output().unwrap();
        assert!(!bad.status.success());
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains(says) && !err.contains("eval handcrafted"), "{err}");
    }
}
