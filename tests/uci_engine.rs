//! Scripted UCI sessions against the real binary (stdin/stdout): handshake, garbage lines,
//! `isready` and `stop` mid-search, time limits, one legal `bestmove` per `go`.

use deepchess::chess::{Game, Position};
mod common;

use common::session::{Session, REPLY, SEC};
use std::time::{Duration, Instant};

fn legal_in(game: &Game, bestmove: &str) -> bool {
    let m = bestmove.split_whitespace().nth(1).unwrap();
    game.position().parse_uci(m).is_ok()
}

#[test]
fn handshake_and_no_argument_mode() {
    for args in [&[][..], &["uci"][..]] {
        let mut s = Session::start(args);
        s.send("uci");
        s.expect("id name deepchess", REPLY);
        for opt in [
            "Hash",
            "Threads",
            "Move Overhead",
            "EvalFile",
            "Eval",
            "Selective",
        ] {
            assert!(s.expect("option name", REPLY).contains(opt));
        }
        s.expect("uciok", REPLY);
        s.send("isready");
        s.expect("readyok", REPLY);
        s.quit();
    }
}

#[test]
fn garbage_is_explained_never_fatal() {
    let mut s = Session::start(&[]);
    for junk in [
        "hello world",
        "position fen not/a/fen w - - 0 1",
        "position startpos moves e2e5",
        "position",
        "setoption name Hash value lots",
        "setoption name Nonsense value 3",
        "setoption name Eval value alphazero",
        "setoption name Selective value sometimes",
        "\u{7f}\u{1b}[A",
    ] {
        s.send(junk);
        s.expect("info string", REPLY);
    }
    // A malformed limit is explained and dropped: the search runs until stopped.
    s.send("go depth banana");
    assert!(s.expect("info string", REPLY).contains("depth"));
    s.send("stop");
    s.expect("bestmove", REPLY);
    s.send("");
    s.send("setoption name EvalFile value /nonexistent/net.dcw");
    assert!(s.expect("info string", REPLY).contains("no net loaded, using handcrafted"));
    s.send("setoption name EvalFile value <empty>");
    assert!(s.expect("info string", REPLY).contains("compact.dcw"));
    s.send("setoption name Eval value handcrafted");
    assert!(s.expect("info string", REPLY).contains("handcrafted"));
    // The bad move cut the move list: still the start position plus nothing.
    s.send("go depth 2");
    let bm = s.expect("bestmove", 10 * SEC);
    assert!(legal_in(&Game::default(), &bm), "{bm}");
    s.send("isready");
    s.expect("readyok", REPLY);
    s.quit();
}

#[test]
fn isready_and_stop_mid_search() {
    let mut s = Session::start(&[]);
    s.send("position startpos moves e2e4 e7e5 g1f3");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    s.send("isready");
    s.expect("readyok", REPLY);
    // Still searching: no bestmove yet after more time.
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    s.send("stop");
    let final_info = s.expect("info depth", REPLY);
    for field in [" seldepth ", " score ", " nodes ", " nps ", " time ", " pv "] {
        assert!(final_info.contains(field), "{final_info}");
    }
    let bm = s.expect("bestmove", REPLY);
    // Promptly; the bound allows for a machine whose cores are busy elsewhere.
    assert!(t.elapsed() < 2 * SEC, "stop took {:?}", t.elapsed());
    let mut g = Game::default();
    for m in ["e2e4", "e7e5", "g1f3"] {
        g.play(g.position().parse_uci(m).unwrap()).unwrap();
    }
    assert!(legal_in(&g, &bm), "{bm}");
    s.quit();
}

#[test]
fn time_limits_respected_within_overhead() {
    let mut s = Session::start(&[]);
    // The overhead is the latency the engine does not see (the GUI's, a descheduled
    // process's): a second of it covers a machine whose cores are busy elsewhere. Each limit
    // then leaves at most a few hundred milliseconds to search; a search that keeps no
    // overhead under `movetime`, or that overruns its clock, answers too late.
    s.send("setoption name Move Overhead value 1000");
    s.send("position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10");
    s.send("isready");
    s.expect("readyok", REPLY);
    for (go, limit_ms) in [("go movetime 1300", 1300u64), ("go wtime 1500 btime 1500", 1500), ("go wtime 2000 btime 2000 winc 100 binc 100 movestogo 1", 2000)] {
        let t = Instant::now();
        s.send(go);
        s.expect("bestmove", REPLY);
        let el = t.elapsed().as_millis() as u64;
        assert!(el < limit_ms, "{go}: answered after {el} ms");
    }
    s.quit();
}

#[test]
fn one_legal_bestmove_per_go_over_a_game() {
    let mut s = Session::start(&[]);
    s.send("ucinewgame");
    let mut game = Game::default();
    let mut moves: Vec<String> = Vec::new();
    for i in 0..16 {
        if game.ending().is_some() {
            break;
        }
        let cmd = if moves.is_empty() { "position startpos".to_string() } else { format!("position startpos moves {}", moves.join(" ")) };
        s.send(&cmd);
        s.send(if i % 2 == 0 { "go nodes 3000" } else { "go depth 3" });
        let bm = s.expect("bestmove", 10 * SEC);
        assert!(legal_in(&game, &bm), "{bm} at {}", game.position().fen());
        let m = bm.split_whitespace().nth(1).unwrap().to_string();
        game.play(game.position().parse_uci(&m).unwrap()).unwrap();
        moves.push(m);
    }
    // A go while a go runs: the first is answered before the second starts.
    s.send("go infinite");
    s.send("go depth 1");
    s.expect("bestmove", REPLY);
    s.expect("bestmove", REPLY);
    // Mated and stalemated roots answer 0000.
    s.send("position fen R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1");
    s.send("go depth 3");
    assert_eq!(s.expect("bestmove", REPLY), "bestmove 0000");
    s.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    s.send("go movetime 100");
    assert_eq!(s.expect("bestmove", REPLY), "bestmove 0000");
    s.quit();
    assert!(Position::startpos().has_legal_move());
}

#[test]
fn plays_with_the_shipped_nets() {
    let mut s = Session::start(&[]);
    for (eval, file) in [("distilled", "distilled.dcw"), ("deepchess", "deepchess.dcw")] {
        s.send(&format!("setoption name Eval value {eval}"));
        let msg = s.expect("info string", REPLY);
        assert!(msg.contains("loaded") && msg.contains(file), "{msg}");
        s.send("position startpos moves e2e4");
        s.send("go depth 3");
        let info = s.expect("info depth 3", 20 * SEC);
        assert!(info.contains(" score cp ") || info.contains(" score mate "), "{info}");
        let bm = s.expect("bestmove", 20 * SEC);
        let mut g = Game::default();
        g.play(g.position().parse_uci("e2e4").unwrap()).unwrap();
        assert!(legal_in(&g, &bm), "{bm}");
    }
    // Mates are the search's: found with each net too.
    for (eval, shape) in [("distilled", "773-100-100-100/100-100-2"), ("compact", "773-32-32/32-2"), ("compact-value", "773-32-32/32-2")] {
        s.send(&format!("setoption name Eval value {eval}"));
        let loaded = s.expect("info string", REPLY);
        assert!(loaded.contains(shape), "{loaded}");
        s.send("position fen r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1");
        s.send("go depth 3");
        assert!(s.expect("bestmove", 20 * SEC).starts_with("bestmove d5f6"), "{eval}");
    }
    s.quit();
}

/// `Selective false` gives the paper's full-width search: same best move on a plain tactic,
/// more nodes for the same depth.
#[test]
fn selective_option_switches_pruning() {
    let mut s = Session::start(&[]);
    s.send("setoption name Eval value handcrafted");
    s.expect("info string", REPLY);
    let mut nodes = Vec::new();
    for on in ["true", "false"] {
        s.send(&format!("setoption name Selective value {on}"));
        s.send("ucinewgame");
        s.send("position fen rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 1");
        s.send("go depth 6");
        let mut last = String::new();
        loop {
            let l = s.expect("", 30 * SEC);
            if l.starts_with("bestmove") {
                assert!(l.starts_with("bestmove f3h4"), "{l}");
                break;
            }
            if l.starts_with("info depth") {
                last = l;
            }
        }
        let n = last.split_whitespace().skip_while(|&t| t != "nodes").nth(1).unwrap();
        nodes.push(n.parse::<u64>().unwrap());
    }
    assert!(nodes[1] > nodes[0], "full width {} vs selective {}", nodes[1], nodes[0]);
    s.quit();
}

/// While the fallback evaluator plays because the chosen net did not load, every `info
/// string` says so, a `go` included (issue 45: a GUI's log showed the player's name only);
/// once a net loads the note is gone.
#[test]
fn the_fallback_is_named_in_every_info_string_until_a_net_loads() {
    let mut s = Session::start(&[]);
    s.send("uci");
    s.expect("uciok", 10 * SEC);
    s.send("setoption name Eval value dbn-regress");
    assert!(s.expect("info string", 10 * SEC).contains("dbn-regress.dcw"));
    s.send("setoption name EvalFile value /nonexistent/net.dcw");
    let l = s.expect("info string", 10 * SEC);
    assert!(l.contains("no net loaded, using handcrafted") && l.contains("/nonexistent/net.dcw"), "{l}");
    let note = "playing handcrafted, not Eval dbn-regress";
    s.send("go depth 1");
    assert!(s.expect("info string", 10 * SEC).contains(note));
    s.expect("bestmove", 10 * SEC);
    for cmd in ["frobnicate", "setoption name Threads value 2", "ponderhit", "go depth banana"] {
        s.send(cmd);
        let l = s.expect("info string", 10 * SEC);
        assert!(l.contains(note), "{cmd}: {l}");
    }
    s.send("stop");
    s.expect("bestmove", 10 * SEC);
    s.send("setoption name EvalFile value <empty>");
    let l = s.expect("info string", 10 * SEC);
    assert!(l.contains("loaded") && !l.contains(note), "{l}");
    s.send("frobnicate");
    assert!(!s.expect("info string", 10 * SEC).contains(note));
    s.quit();
}

/// `Quantised` chooses a DeepChess net's build (each load names it), `Threads` says how many
/// threads the next search uses (one for an evaluator that cannot be shared), and a search
/// with two threads reports both threads' nodes.
#[test]
fn quantised_and_threads_are_answered_and_used() {
    let mut s = Session::start(&[]);
    s.send("uci");
    s.expect("uciok", 10 * SEC);
    s.send("setoption name Quantised value true");
    let l = s.expect("info string", 10 * SEC);
    assert!(l.contains("compact.dcw") && l.contains("integer"), "{l}");
    s.send("setoption name Quantised value false");
    let l = s.expect("info string", 10 * SEC);
    assert!(l.contains("compact.dcw") && !l.contains("integer"), "{l}");
    s.send("setoption name Quantised value maybe");
    assert!(s.expect("info string", 10 * SEC).contains("is not one of auto, true, false"));
    s.send("setoption name Threads value 2");
    assert!(s.expect("info string", 10 * SEC).contains("searching on 2 threads"));
    s.send("position startpos");
    s.send("go movetime 300");
    s.expect("bestmove", 10 * SEC);
    s.send("setoption name Eval value cnn");
    s.expect("info string", 10 * SEC);
    s.send("setoption name Threads value 2");
    assert!(s.expect("info string", 10 * SEC).contains("searches on 1 thread"));
    s.quit();
}

/// Issue 79: `Threads` costs memory (each helper its own caches and a stack) that nothing
/// checked: under `ulimit -v 2000000`, `Threads 256` panicked allocating a cache, with no
/// `readyok`. Threads and Hash are now accounted together against what the process can have:
/// fewer threads start, an `info string` says so, `isready` is answered, and the search plays
/// a legal move.
#[cfg(unix)]
#[test]
fn threads_beyond_the_memory_are_reduced_and_said_never_a_panic() {
    let mut s = Session::start_limited(2_000_000);
    s.send("uci");
    s.expect("uciok", 10 * SEC);
    s.send("isready");
    s.expect("readyok", 30 * SEC);
    s.send("setoption name Threads value 256");
    let l = s.expect("info string Threads 256", 30 * SEC);
    assert!(l.contains("more than this machine can give; using"), "{l}");
    let used: usize = l.rsplit("using ").next().unwrap().trim().parse().unwrap();
    assert!((1..256).contains(&used), "{l}");
    s.send("isready");
    s.expect("readyok", 60 * SEC);
    s.send("position startpos");
    s.send("go depth 4");
    let bm = s.expect("bestmove", 120 * SEC);
    assert!(!bm.contains("0000"), "{bm}: {:#?}", s.seen);
    // The Eval's cache grows with Hash: a Hash that no longer fits beside the threads is refused.
    s.send("setoption name Hash value 60000");
    assert!(s.expect("info string", 30 * SEC).contains("keeping 16 MB"));
    s.send("isready");
    s.expect("readyok", 60 * SEC);
    // The Threads asked are kept, not lowered to what fitted: a smaller Hash frees memory and
    // as many threads as then fit are started, said against the 256 asked.
    s.send("setoption name Hash value 1");
    let l = s.expect("info string Threads 256", 30 * SEC);
    let again: usize = l.rsplit("using ").next().unwrap().trim().parse().unwrap();
    assert!((used..256).contains(&again), "{l} (before: {used})");
    s.send("isready");
    s.expect("readyok", 60 * SEC);
    s.send("go depth 3");
    assert!(!s.expect("bestmove", 120 * SEC).contains("0000"));
    s.quit();
}

/// A net file given to a player that takes none is said to be ignored, not silently dropped.
#[test]
fn evalfile_under_a_player_without_a_net_is_said_to_be_ignored() {
    for eval in ["gnu", "handcrafted"] {
        let mut s = Session::start(&[]);
        s.send(&format!("setoption name Eval value {eval}"));
        s.expect("info string", 10 * SEC);
        s.send("setoption name EvalFile value data/nets/compact.dcw");
        let l = s.expect("info string", 10 * SEC);
        assert!(l.contains(&format!("Eval {eval} takes no net file: EvalFile data/nets/compact.dcw ignored")), "{l}");
        s.send("go depth 2");
        assert!(!s.expect("bestmove", 10 * SEC).contains("0000"));
        s.quit();
    }
}
