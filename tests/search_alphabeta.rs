//! Comparison alpha-beta, mostly with the handcrafted comparator: mates, draws, legality,
//! limits, PVS against full-window search; the shipped net where a test says so.

mod common;

use common::{random_game, run, shipped_searcher, uci, MATES};
use deepchess::chess::{Color, Game, Position};
use deepchess::eval::{handcrafted, Comparator, Handcrafted, Kind, ScoreComparator, Value};
use deepchess::search::{bench, Limits, Score, SearchResult, Searcher};
use proptest::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    assert!(c.counters().get("comparisons") > 0);
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
    let mut s = Searcher::new(handcrafted(), 8);
    // The search aims at 150 ms (the movetime less the second kept for the GUI): the
    // overhead covers a machine whose cores are busy elsewhere, so the bound is the movetime
    // itself, which a search ignoring the overhead overruns.
    let limits = Limits { movetime: Some(Duration::from_millis(1150)), ..Limits::default() };
    let t = Instant::now();
    let r = s.search(&g, &limits, Duration::from_millis(1000), Arc::new(AtomicBool::new(false)), &mut |_| {});
    let el = t.elapsed();
    assert!(el < Duration::from_millis(1150), "{el:?}");
    assert!(r.info.depth >= 2);
}

#[test]
fn bench_node_count_is_deterministic() {
    let run = || {
        let mut s = Searcher::new(handcrafted(), 4);
        bench::run(&mut s, 3, &bench::builtin(), |_, _, _| {}).nodes
    };
    let a = run();
    assert!(a > 1000);
    assert_eq!(a, run());
}

/// A score cache (`ScoreComparator::cached`) changes the cost of a search, never the search:
/// the same nodes and best moves, fewer evaluations, and its hits counted; a new game
/// forgets it, and a helper thread's fork keeps one.
#[test]
fn a_score_cache_leaves_the_search_as_it_was() {
    let mut plain = Searcher::new(handcrafted(), 4);
    let mut cached = Searcher::new(ScoreComparator::cached(Handcrafted, 1), 4);
    let games = bench::builtin();
    let a = bench::run(&mut plain, 5, &games, |_, _, _| {});
    let b = bench::run(&mut cached, 5, &games, |_, _, _| {});
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.counters.get("keys"), b.counters.get("keys"));
    let hits = b.counters.get("score cache hits");
    assert!(hits > b.counters.get("keys") / 10, "{hits} hits of {} keys", b.counters.get("keys"));
    assert_eq!(a.counters.get("score cache hits"), 0, "the handcrafted player keeps no cache");
    for g in games.iter().take(6) {
        let (x, y) = (run(&mut plain, g, Limits::depth(6)), run(&mut cached, g, Limits::depth(6)));
        assert_eq!((x.best, x.info.nodes), (y.best, y.info.nodes));
    }
    let fork = cached.comp.fork().expect("handcrafted forks");
    assert_eq!(fork.counters().get("score cache hits"), 0);
    assert!(fork.counters().0.iter().any(|c| c.name == "score cache hits"), "the fork has a cache too");
    // The root's children are cached after a search; after `clear` (a new game) none is.
    let root = *games[0].position();
    run(&mut cached, &games[0], Limits::depth(4));
    let hits_on_children = |c: &mut ScoreComparator<Handcrafted>| {
        let before = c.counters().get("score cache hits");
        for &m in root.legal_moves().iter() {
            let mut child = root;
            child.play(m);
            c.key(1, &child);
        }
        c.counters().get("score cache hits") - before
    };
    assert!(hits_on_children(&mut cached.comp) > 0);
    cached.comp.clear();
    assert_eq!(hits_on_children(&mut cached.comp), 0);
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

/// `bench --vs` runs any registered players against handcrafted, a ratio line per player.
#[test]
fn bench_vs_lists_each_player_against_handcrafted() {
    let exe = common::exe();
    let out = std::process::Command::new(exe).args(["bench", "--depth", "2", "--vs", "dbn-regress,compact", "--rounds", "2"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for name in ["dbn-regress", "compact"] {
        let line = err.lines().find(|l| l.starts_with(&format!("{name} vs handcrafted"))).unwrap_or_else(|| panic!("{err}"));
        assert!(line.contains("median of 2 interleaved rounds"), "{line}");
    }
    // --net FILE is the compared player's net (handcrafted takes none).
    let net = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(exe).args(["bench", "--depth", "2", "--vs", "compact", "--rounds", "1", "--net", &net]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("net ") && err.contains("compact.dcw"), "{err}");
    let out = std::process::Command::new(exe).args(["bench", "--vs", "nobody"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nobody"));
}

#[test]
fn bench_vs_net_reports_the_median_of_interleaved_rounds() {
    let exe = common::exe();
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

/// `bench --openings N` searches the match suite's first N positions (not the built-in ones),
/// and beside handcrafted reports the tree-size and time-to-depth ratios; bad values are
/// refused before any search.
#[test]
fn bench_on_the_match_openings_reports_nodes_and_time_to_depth() {
    let exe = common::exe();
    let run = |args: &[&str]| std::process::Command::new(exe).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    let out = run(&["bench", "--depth", "3", "--openings", "4", "--verbose"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("eval handcrafted depth 3: 4 positions"), "{err}");
    // The first opening of the suite, not the built-in start position.
    let first = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/openings-balanced-1000.epd")).unwrap();
    let board = first.lines().next().unwrap().split_whitespace().next().unwrap();
    assert!(err.lines().any(|l| l.starts_with("position  1:") && l.contains(board)), "{err}");
    let out = run(&["bench", "--depth", "2", "--openings", "3", "--vs", "compact", "--rounds", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("compact vs handcrafted, same openings"), "{err}");
    let line = err.lines().find(|l| l.starts_with("compact vs handcrafted, depth 2:")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("x the nodes") && line.contains("x the time to depth"), "{line}");
    for (args, says) in [
        (&["bench", "--openings", "0"][..], "--openings 0"),
        (&["bench", "--suite", "data/openings-balanced-1000.epd"][..], "--suite goes with --openings"),
        (&["bench", "--openings", "2000"][..], "holds 1000 openings"),
        (&["bench", "--openings", "2", "--suite", "no/such/suite.epd"][..], "no/such/suite.epd"),
    ] {
        let bad = run(args);
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(!bad.status.success() && err.contains(says) && !err.contains("eval handcrafted"), "{args:?}: {err}");
    }
}

/// Quiescence off (UCI `Quiescence false`, seed 004's tables "cut at depth 2, or 4") leaves
/// the position at the horizon as it is: at depth 1 the queen takes a knight the pawn
/// defends, which the quiescence search sees refuted. Nor is a check extended: no line goes
/// past the nominal depth.
#[test]
fn quiescence_off_cuts_the_search_at_the_nominal_depth() {
    let pos = Position::from_fen("4k3/8/4p3/3n4/8/8/8/3QK3 w - - 0 1").unwrap();
    let game = Game::new(pos);
    let mut with = full_width();
    let mut without = full_width();
    without.quiescence = false;
    let a = run(&mut with, &game, Limits::depth(1));
    let b = run(&mut without, &game, Limits::depth(1));
    assert_ne!(a.best, Some(uci(&pos, "d1d5")), "quiescence sees exd5");
    assert_eq!(b.best, Some(uci(&pos, "d1d5")), "cut at depth 1, the capture looks like a knight won");
    assert!(b.info.nodes < a.info.nodes, "nodes {} without, {} with", b.info.nodes, a.info.nodes);
    // Mate at the horizon is still seen.
    let mate = Position::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap();
    let r = run(&mut without, &Game::new(mate), Limits::depth(2));
    assert_eq!(r.best, Some(uci(&mate, "a1a8")));
    for fen in bench::POSITIONS {
        let g = Game::new(Position::from_fen(fen).unwrap());
        for d in [2, 3] {
            let r = run(&mut without, &g, Limits::depth(d));
            assert!(r.info.seldepth <= d, "{fen}: depth {d} reached seldepth {}", r.info.seldepth);
        }
    }
}

/// The tree's counts (`bench --tree`) are consistent and follow the search's switches: parts
/// never exceed their wholes, full width prunes nothing, a search without null windows makes
/// none, one without quiescence counts only its horizon's positions there.
#[test]
fn the_tree_counts_follow_the_search() {
    use deepchess::search::Player;
    let game = Game::new(Position::from_fen(bench::POSITIONS[1]).unwrap());
    let counts = |s: &mut Searcher<ScoreComparator<Handcrafted>>| {
        run(s, &game, Limits::depth(6));
        s.counters()
    };
    let c = counts(&mut Searcher::new(handcrafted(), 8));
    for (part, whole) in [("cut-offs", "move nodes"), ("first-move cut-offs", "cut-offs"), ("table-move cut-offs", "cut-offs"), ("static cuts", "static cuts tried"), ("null-move cuts", "null moves tried"), ("LMR re-searches", "null-window searches")] {
        assert!(c.get(part) <= c.get(whole), "{part} {} > {whole} {}", c.get(part), c.get(whole));
    }
    for name in ["move nodes", "cut-offs", "first-move cut-offs", "null-window searches", "quiescence nodes", "static cuts tried", "late moves pruned"] {
        assert!(c.get(name) > 0, "{name}: {c:?}");
    }
    let c = counts(&mut full_width());
    for name in ["static cuts tried", "null moves tried", "late moves pruned", "SEE-pruned moves", "LMR re-searches"] {
        assert_eq!(c.get(name), 0, "{name} at full width");
    }
    let mut s = Searcher::new(handcrafted(), 8);
    s.null_windows = false;
    assert_eq!(counts(&mut s).get("null-window searches"), 0);
    let with = counts(&mut Searcher::new(handcrafted(), 8)).get("quiescence nodes");
    let mut s = Searcher::new(handcrafted(), 8);
    s.quiescence = false;
    let without = counts(&mut s).get("quiescence nodes");
    assert!(0 < without && without < with, "{without} horizon positions, {with} quiescence nodes");
}
