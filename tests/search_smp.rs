//! Lazy SMP: the transposition table shared between threads (an entry per sequence lock)
//! never hands out a torn entry, and a searcher with helper threads finds the same mates,
//! plays legal moves under every limit, counts every thread's nodes and stops them all.

mod common;

use common::{random_game, run, shipped_searcher, uci, MATES};
use deepchess::chess::{Game, Position};
use deepchess::eval::{handcrafted, Value};
use deepchess::search::tt::{Bound, Table};
use deepchess::search::{Limits, Score, Searcher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An entry as large as a DeepChess key (a board), every word derived from the hash: a
/// copy torn between two writers would mix words of two hashes.
fn key_of(hash: u64) -> [u64; 10] {
    std::array::from_fn(|i| hash.rotate_left(7 * i as u32) ^ i as u64)
}

/// Two writers storing the same 4,000 positions into a 1 MB table while two readers probe
/// them: every entry read is one some writer stored whole.
#[test]
fn a_shared_table_never_returns_a_torn_entry() {
    let t: Arc<Table<[u64; 10]>> = Arc::new(Table::new(0));
    let (hits, checked) = (AtomicU64::new(0), AtomicU64::new(0));
    let hashes: Vec<u64> = (1..=4000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    std::thread::scope(|s| {
        for w in 0..2 {
            let (t, hashes) = (&t, &hashes);
            s.spawn(move || {
                for round in 0..200 {
                    for (i, &h) in hashes.iter().enumerate().skip(w) {
                        let depth = (h % 50) as i32 + (round % 3);
                        t.store(h, 0, depth, Bound::Exact, Value::pos(key_of(h)), None);
                        if i % 997 == 0 {
                            t.new_search();
                        }
                    }
                }
            });
        }
        for _ in 0..2 {
            let (t, hashes, hits, checked) = (&t, &hashes, &hits, &checked);
            s.spawn(move || {
                for _ in 0..200 {
                    for &h in hashes {
                        checked.fetch_add(1, Ordering::Relaxed);
                        if let Some(e) = t.probe(h, 0) {
                            hits.fetch_add(1, Ordering::Relaxed);
                            assert_eq!(e.value.key, key_of(h), "a torn entry for {h:#x}");
                            assert!((e.depth as u64) >= h % 50 && (e.depth as u64) < h % 50 + 3);
                        }
                    }
                }
            });
        }
    });
    assert!(hits.load(Ordering::Relaxed) > 1000, "readers saw {} hits of {}", hits.load(Ordering::Relaxed), checked.load(Ordering::Relaxed));
}

/// Two threads find the mates one finds, with the same score.
#[test]
fn two_threads_find_the_mates() {
    for &(fen, n, mv) in MATES {
        let mut s = Searcher::new(handcrafted(), 8);
        assert_eq!(s.set_threads(2), 2, "the handcrafted comparator forks");
        s.selective = false;
        let pos = Position::from_fen(fen).unwrap();
        let r = run(&mut s, &Game::new(pos), Limits::depth((2 * n) as u32));
        assert_eq!(r.best, Some(uci(&pos, mv)), "{fen}");
        assert_eq!(r.info.score, Score::Mate(n), "{fen}");
    }
}

/// With the shipped net and two threads: legal moves along random games under depth, node
/// and time limits; the reported nodes are all threads' (more than the main thread's own);
/// `stop` ends every thread at once.
#[test]
fn two_threads_with_the_net_play_legal_moves_and_count_all_nodes() {
    let mut s = shipped_searcher();
    assert_eq!(s.set_threads(2), 2, "the net comparator forks");
    for seed in 0..6 {
        let game = random_game(seed, 10 + seed as usize * 7);
        let limits = match seed % 3 {
            0 => Limits::depth(5),
            1 => Limits { nodes: Some(20_000), ..Limits::default() },
            _ => Limits { movetime: Some(Duration::from_millis(150)), ..Limits::default() },
        };
        let r = run(&mut s, &game, limits);
        let best = r.best.expect("a legal move exists");
        assert!(game.position().is_legal(best), "seed {seed}: {best}");
        assert!(r.info.nodes > s.nodes(), "seed {seed}: {} reported, the main thread alone {}", r.info.nodes, s.nodes());
    }
    // An infinite search stopped from outside returns promptly, helpers and all.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::Relaxed);
        Instant::now()
    });
    let infinite = Limits { infinite: true, ..Limits::default() };
    let r = s.search(&Game::default(), &infinite, Duration::ZERO, stop, &mut |_| {});
    let stopped = stopper.join().unwrap();
    // Promptly: the flag is read every 1024 nodes; the bound leaves room for a loaded host.
    assert!(stopped.elapsed() < Duration::from_secs(2), "returned {:?} after stop", stopped.elapsed());
    assert!(r.best.is_some());
    // Back to one thread: the single-threaded search as before.
    assert_eq!(s.set_threads(1), 1);
    let r = run(&mut s, &Game::default(), Limits::depth(5));
    assert_eq!(r.info.nodes, s.nodes(), "one thread reports its own nodes");
    assert!(r.best.is_some());
}
