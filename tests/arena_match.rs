//! `deepchess match` end to end against the fake UCI engines in tests/fakes/: legal games with
//! engine comments, and every kind of misbehaviour (illegal move, crash, silence, a slow
//! engine on a short clock) recorded as a loss with its reason, never a hang.

mod common;

use deepchess::chess::pgn::{PgnGame, PgnReader};
use deepchess::chess::{Color, Outcome, Position};
use std::process::Output;

fn fake(name: &str) -> String {
    format!("{}/tests/fakes/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir() -> common::TempDir {
    common::TempDir::new("match")
}

/// Runs `deepchess match ARGS --pgn DIR/games.pgn`; returns the output and the games.
fn run_match(args: &[&str]) -> (Output, Vec<PgnGame>) {
    let dir = temp_dir();
    let pgn = dir.join("games.pgn");
    let out = common::command()
        .arg("match")
        .args(args)
        .args(["--pgn", pgn.to_str().unwrap()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let games = match std::fs::File::open(&pgn) {
        Ok(f) => {
            let mut r = PgnReader::new(std::io::BufReader::new(f));
            let g: Vec<PgnGame> = r.by_ref().collect();
            assert_eq!(r.summary().skipped(), 0, "{}", r.summary());
            g
        }
        Err(_) => Vec::new(),
    };
    (out, games)
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(o.status.success(), "status {:?}\nstdout:\n{out}\nstderr:\n{err}", o.status);
    out
}

fn by_round(mut games: Vec<PgnGame>) -> Vec<PgnGame> {
    games.sort_by_key(|g| g.tag("Round").unwrap().parse::<u32>().unwrap());
    games
}

#[test]
fn scripted_engines_play_legal_games_with_comments() {
    let scripted = format!("cmd={}", fake("scripted.sh"));
    let (o, games) = run_match(&[
        "--engine", "name=alpha", &scripted, "--engine", "name=beta", &scripted,
        "--each", "tc=5+0.05", "--games", "4", "--openings", "startpos",
    ]);
    let out = ok(&o);
    let games = by_round(games);
    assert_eq!(games.len(), 4);
    for (i, g) in games.iter().enumerate() {
        // Scholar's mate: White always wins, and colours alternate within a pair.
        assert_eq!(g.result, Some(Outcome::Win(Color::White)));
        assert!(g.to_game().position().is_checkmate());
        assert_eq!(g.tag("Termination"), Some("normal"));
        assert_eq!(g.tag("White"), Some(if i % 2 == 0 { "alpha" } else { "beta" }));
        assert_eq!(g.tag("TimeControl"), Some("5+0.05"));
        let c = g.comment(0).unwrap();
        assert!(c.starts_with("+0.00/3 ") && c.ends_with('s'), "{c}");
        assert_eq!(g.eval(4).unwrap().score, deepchess::chess::pgn::Score::Cp(400));
    }
    // Each pair is one win each: score 1 of 2, pentanomial [0, 0, 2, 0, 0].
    assert!(out.contains("2-0-2"), "{out}");
    assert!(out.contains("for alpha: 0 0 2 0 0"), "{out}");
    assert!(out.contains("White scored 100.0%"), "{out}");
}

#[test]
fn openings_from_pgn_and_epd() {
    let dir = temp_dir();
    let pgn = dir.join("open.pgn");
    std::fs::write(&pgn, "[Event \"o\"]\n\n1. e4 e5 *\n").unwrap();
    let scripted = format!("cmd={}", fake("scripted.sh"));
    let (o, games) = run_match(&[
        "--engine", &scripted, "--engine", &scripted, "--each", "depth=3", "--games", "2",
        "--openings", pgn.to_str().unwrap(),
    ]);
    ok(&o);
    for g in &games {
        // The opening moves carry no comment; the engines take over at ply 3.
        assert_eq!((g.comment(0), g.comment(1)), (None, None));
        assert!(g.comment(2).is_some());
        assert!(g.to_game().position().is_checkmate());
        assert_eq!(g.tag("TimeControl"), Some("-"));
    }
    // An EPD position (after 1. e4 e5): the knight shuffle repeats it three times.
    let epd = dir.join("open.epd");
    let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -";
    std::fs::write(&epd, format!("# a comment\n{fen} id \"x\";\n")).unwrap();
    let shuffle = format!("cmd={}", fake("shuffle.sh"));
    let (o, games) = run_match(&[
        "--engine", &shuffle, "--engine", &shuffle, "--each", "nodes=100", "--games", "2",
        "--openings", epd.to_str().unwrap(),
    ]);
    let out = ok(&o);
    assert!(out.contains("0-2-0"), "{out}");
    for g in &games {
        assert_eq!(g.start, Position::from_fen(fen).unwrap());
        assert_eq!(g.tag("SetUp"), Some("1"));
        assert_eq!(g.result, Some(Outcome::Draw));
        assert_eq!(g.tag("TerminationDetails"), Some("threefold repetition"));
        assert_eq!(g.moves.len(), 8);
    }
}

#[test]
fn adjudication_can_be_switched_off() {
    // Both engines report +7 pawns for White: resign adjudication after 3 moves each.
    let winning = format!("cmd={} 700", fake("shuffle.sh"));
    let args = ["--engine", &winning, "--engine", &winning, "--each", "nodes=1", "--games", "2", "--openings", "startpos"];
    let (o, games) = run_match(&args);
    let out = ok(&o);
    assert!(out.contains("adjudicated 2"), "{out}");
    for g in &games {
        assert_eq!((g.result, g.tag("Termination")), (Some(Outcome::Win(Color::White)), Some("adjudication")));
        assert_eq!(g.moves.len(), 6);
    }
    let mut off = args.to_vec();
    off.push("--no-adjudication");
    let (o, games) = run_match(&off);
    ok(&o);
    assert!(games.iter().all(|g| g.result == Some(Outcome::Draw) && g.moves.len() == 8));
}

/// A misbehaving engine (B, with the limit `bad_limit`) against the scripted one (A, five
/// seconds a game: it answers at once, so never loses on time, even on a busy machine):
/// every game is A's, with `tag`.
fn misbehaving(engine: &str, bad_limit: &str, extra: &[&str], tag: &str) -> (String, Vec<PgnGame>) {
    let bad = format!("cmd={}", fake(engine));
    let good = format!("cmd={}", fake("scripted.sh"));
    let mut args = vec!["--engine", "name=good", &good, "tc=5", "--engine", "name=bad", &bad, bad_limit, "--games", "2", "--openings", "startpos"];
    args.extend_from_slice(extra);
    let (o, games) = run_match(&args);
    let out = ok(&o);
    assert_eq!(games.len(), 2);
    for g in &games {
        let bad_color = if g.tag("White") == Some("bad") { Color::White } else { Color::Black };
        assert_eq!(g.result, Some(Outcome::Win(bad_color.flip())), "{g:?}");
        assert_eq!(g.tag("Termination"), Some(tag));
    }
    assert!(out.contains("2-0-0"), "{out}");
    (out, games)
}

#[test]
fn illegal_moves_lose() {
    let (out, games) = misbehaving("illegal.sh", "tc=5", &[], "illegal move");
    assert!(out.contains("illegal moves good 0 / bad 2"), "{out}");
    assert!(games.iter().all(|g| g.tag("TerminationDetails").unwrap().contains("e2e5")));
}

#[test]
fn crashes_lose_and_the_engine_is_restarted() {
    let (out, games) = misbehaving("crash.sh", "tc=5", &["--concurrency", "1"], "engine crash");
    assert!(out.contains("crashes good 0 / bad 2"), "{out}");
    assert!(games.iter().all(|g| g.tag("TerminationDetails").unwrap().contains("bad")));
}

#[test]
fn a_silent_engine_loses_on_time_and_never_hangs() {
    let t = std::time::Instant::now();
    let (out, games) = misbehaving("silent.sh", "tc=0.3", &["--hang-margin", "200"], "time forfeit");
    assert!(out.contains("time losses good 0 / bad 2"), "{out}");
    assert!(games.iter().all(|g| g.tag("TerminationDetails").unwrap().contains("did not answer")));
    // Half a second per game once the engines run; a hang never ends. The bound allows for
    // a machine whose cores are busy elsewhere.
    assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
}

#[test]
fn a_slow_engine_loses_on_time_by_our_clock() {
    // It answers after 0.5 s on a 0.3 s clock: too late, but well within the hang margin
    // (5 s, so that a busy machine's delays cannot make the late answer a missing one).
    let slow = format!("cmd={} 0.5", fake("slow.sh"));
    let good = format!("cmd={}", fake("shuffle.sh"));
    let (o, games) = run_match(&[
        "--engine", "name=good", &good, "tc=5", "--engine", "name=slow", &slow, "tc=0.3",
        "--games", "2", "--openings", "startpos", "--time-tolerance", "50", "--hang-margin", "5000",
    ]);
    let out = ok(&o);
    assert!(out.contains("time losses good 0 / slow 2"), "{out}");
    for g in &games {
        assert_eq!(g.tag("Termination"), Some("time forfeit"));
        assert!(g.tag("TerminationDetails").unwrap().contains("lost on time"), "{g:?}");
        assert!(g.tag("WhiteTimeControl").is_some());
    }
}

#[test]
fn sprt_stops_early_with_complete_pairs() {
    // Every pair scores exactly 1. With fishtest's regularisation (0.001 in each empty cell)
    // the pair variance after n pairs is ≈ 0.000625/n, so the logistic LLR is
    // −n·(s1−s0)²/(2·var) ≈ −0.0414·n², below ln(0.05/0.95) = −2.944 from n = 9 pairs:
    // H0 after 18 games, plus at most one pair already in flight.
    let scripted = format!("cmd={}", fake("scripted.sh"));
    let (o, games) = run_match(&[
        "--engine", &scripted, "--engine", &scripted, "--each", "depth=1", "--games", "200",
        "--openings", "startpos", "--sprt", "0,5", "--sprt-model", "logistic",
    ]);
    let out = ok(&o);
    assert!(out.contains("H0 accepted"), "{out}");
    assert!((18..=20).contains(&games.len()) && games.len() % 2 == 0, "{}", games.len());
}

#[test]
fn builtin_players_run_this_executable_as_uci() {
    // The UCI engine itself lives in another module; until it answers `uci`, the match must
    // fail cleanly, naming the player, instead of hanging.
    let (o, games) = run_match(&[
        "--engine", "name=hand", "builtin=handcrafted", "--engine", "name=hand2", "builtin=handcrafted",
        "--each", "depth=1", "--games", "2", "--start-timeout", "5",
    ]);
    let (out, err) = text(&o);
    if o.status.success() {
        assert_eq!(games.len(), 2, "{out}");
        assert!(out.contains("hand2"));
    } else {
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("player hand") && err.contains("failed to start as a UCI engine"), "{err}");
    }
}

#[test]
fn bad_command_lines_are_explained() {
    let scripted = format!("cmd={}", fake("scripted.sh"));
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["--engine", &scripted, "tc=1"], 2, "exactly two"),
        (vec!["--engine", &scripted, "tc=x", "--engine", &scripted, "tc=1"], 2, "tc=x"),
        (vec!["--engine", &scripted, "--engine", &scripted], 2, "needs a limit"),
        (vec!["--engine", &scripted, "--engine", "builtin=foo", "--each", "tc=1"], 2, "expected one of"),
        (vec!["--engine", &scripted, "--engine", &scripted, "--each", "tc=1", "--sprt", "5,0"], 2, "elo0 < elo1"),
        (vec!["--engine", &scripted, "--engine", &scripted, "--each", "tc=1", "--games", "0"], 2, "at least 1"),
        (vec!["--engine", &scripted, "--engine", &scripted, "--each", "tc=1", "--openings", "/nonexistent.epd"], 1, "/nonexistent.epd"),
        (vec!["--engine", "cmd=/nonexistent/engine", "--engine", &scripted, "--each", "tc=1", "--openings", "startpos"], 1, "cannot start"),
    ];
    for (args, code, needle) in cases {
        let (o, _) = run_match(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let dir = temp_dir();
    let epd = dir.join("bad.epd");
    std::fs::write(&epd, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a fen\n").unwrap();
    let (o, _) = run_match(&["--engine", &scripted, "--engine", &scripted, "--each", "tc=1", "--openings", epd.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(err.contains("bad.epd:2"), "{err}");
}

/// Bytes an engine sends (ESC sequences, NUL, BEL in its name, info lines and move) reach
/// neither the PGN nor the terminal raw (issue 45): they are escaped as `\xNN`, and the
/// illegal move is still named.
#[test]
fn an_engines_control_bytes_are_escaped_everywhere() {
    let (o, games) = misbehaving("noisy.sh", "tc=5", &[], "illegal move");
    let dir = temp_dir();
    let pgn = dir.join("noisy.pgn");
    let noisy = format!("cmd={}", fake("noisy.sh"));
    let good = format!("cmd={}", fake("scripted.sh"));
    let o2 = common::command()
        .args(["match", "--engine", &noisy, "--engine", &good, "--each", "tc=5", "--games", "2", "--openings", "startpos"])
        .args(["--pgn", pgn.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o2.status.success(), "{}", String::from_utf8_lossy(&o2.stderr));
    let bytes = std::fs::read(&pgn).unwrap();
    for (what, b) in [("pgn", &bytes[..]), ("stdout", &o2.stdout[..]), ("stderr", &o2.stderr[..]), ("first stdout", o.as_bytes())] {
        let raw = b.iter().position(|&c| (c < 0x20 && c != b'\n' && c != b'\r') || c == 0x7f);
        assert!(raw.is_none(), "{what}: raw control byte at {raw:?}: {:?}", String::from_utf8_lossy(b));
    }
    for g in &games {
        let d = g.tag("TerminationDetails").unwrap();
        assert!(d.contains("e2e5\\x1b[2J\\x00"), "{d}");
    }
}

/// `--pgn` appends only to a PGN (issue 45: `--pgn FILE.pgn.xz` appended text to the
/// archive): a compressed name, a binary file, a file of other text and a folder are refused
/// before any game, untouched; a PGN whose last game lacks its blank line gets one, and
/// every game reads back.
#[test]
fn match_appends_only_to_a_pgn_file() {
    let dir = temp_dir();
    let scripted = format!("cmd={}", fake("scripted.sh"));
    let run = |pgn: &std::path::Path| {
        common::command()
            .args(["match", "--engine", &scripted, "--engine", &scripted, "--each", "depth=1", "--games", "2", "--openings", "startpos"])
            .args(["--pgn", pgn.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let xz = dir.join("games.pgn.xz");
    let archive = b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x02\x00\x21\x01".to_vec();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("games.pgn.xz", archive.clone(), "compressed"),
        ("new.pgn.gz", Vec::new(), "compressed"),
        ("binary.pgn", archive, "not UTF-8"),
        ("nul.pgn", b"[Event \"x\"]\n\x00\x00".to_vec(), "control character \\x00 at byte 12"),
        ("notes.pgn", b"my notes\n".to_vec(), "does not begin"),
    ];
    for (name, bytes, needle) in cases {
        let f = dir.join(name);
        if !bytes.is_empty() {
            std::fs::write(&f, &bytes).unwrap();
        }
        let o = run(&f);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(needle) && err.contains(name), "{name}: {err}");
        if bytes.is_empty() {
            assert!(!f.exists(), "{name} was created");
        } else {
            assert_eq!(std::fs::read(&f).unwrap(), bytes, "{name} was written");
        }
    }
    assert!(xz.exists());
    let o = run(dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    // A PGN without the final blank line (or newline): appended games still read apart.
    for (name, end) in [("nl.pgn", "\n"), ("none.pgn", "")] {
        let f = dir.join(name);
        std::fs::write(&f, format!("[Event \"mine\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0{end}")).unwrap();
        ok(&run(&f));
        ok(&run(&f));
        let mut r = PgnReader::new(std::io::BufReader::new(std::fs::File::open(&f).unwrap()));
        let games: Vec<PgnGame> = r.by_ref().collect();
        assert_eq!((games.len(), r.summary().skipped()), (5, 0), "{name}: {}", std::fs::read_to_string(&f).unwrap());
        assert_eq!(games[0].tag("Event"), Some("mine"));
    }
}

/// A built-in player whose net does not load stops the match before the first game (issue
/// 45: it played the handcrafted fallback under the player's name), as does a net given to
/// a player that takes none; no game is written.
#[test]
fn a_builtin_players_net_must_load_before_any_game() {
    let dir = temp_dir();
    let garbage = dir.join("garbage.dcw");
    std::fs::write(&garbage, b"not a net at all").unwrap();
    let compact = format!("{}/data/nets/compact.dcw", env!("CARGO_MANIFEST_DIR"));
    let nets = [
        ("dbn-classify", "/nonexistent/net.dcw".to_string(), "/nonexistent/net.dcw"),
        ("dbn-classify", garbage.to_str().unwrap().to_string(), "garbage.dcw"),
        ("cnn", compact.clone(), "compact.dcw"),
        ("handcrafted", compact, "uses no net file"),
    ];
    for (kind, net, needle) in nets {
        let pgn = dir.join(format!("{kind}.pgn"));
        let o = common::command()
            .args(["match", "--engine", &format!("builtin={kind}"), &format!("net={net}"), "--engine", "builtin=handcrafted"])
            .args(["--each", "depth=1", "--games", "2", "--openings", "startpos", "--pgn", pgn.to_str().unwrap()])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{kind} {net}: {err}");
        assert!(err.contains(&format!("player {kind}")) && err.contains(needle), "{kind} {net}: {err}");
        assert!(!pgn.exists(), "{kind}: a game was written");
    }
}

/// The games are never appended to the opening suite the match reads (the same file by
/// device and inode: a path through `./` or a link counts).
#[test]
fn the_openings_are_never_the_pgn_output() {
    let dir = temp_dir();
    let suite = dir.join("openings.pgn");
    let text = "[Event \"o\"]\n[Result \"*\"]\n\n1. e4 e5 *\n\n";
    std::fs::write(&suite, text).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&suite, dir.join("link.pgn")).unwrap();
    let scripted = format!("cmd={}", fake("scripted.sh"));
    for out in [suite.clone(), dir.join(".").join("openings.pgn"), dir.join("link.pgn")] {
        if !out.exists() {
            continue;
        }
        let o = common::command()
            .args(["match", "--engine", &scripted, "--engine", &scripted, "--each", "depth=1", "--games", "2"])
            .args(["--openings", suite.to_str().unwrap(), "--pgn", out.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}: {err}", out.display());
        assert!(err.contains("is the opening suite"), "{err}");
        assert_eq!(std::fs::read_to_string(&suite).unwrap(), text, "the suite was written");
    }
}

/// A learning curve (`match --curve`) records the match it plays in `points.tsv`; a resume
/// against another opponent or limit is refused, the file untouched; a point cut short by a
/// kill is dropped and played again; the points file is never followed through a link.
#[test]
fn a_curve_resumes_only_the_match_it_recorded() {
    let dir = temp_dir();
    let net = format!("{}/data/nets/neurochess.dcw", env!("CARGO_MANIFEST_DIR"));
    let list = dir.join("list.txt");
    std::fs::write(&list, format!("nc 1 {net}\nnc 2 {net}\n")).unwrap();
    let out = dir.join("curve");
    let tsv = out.join("points.tsv");
    let curve = |opponent_depth: &str, resume: bool| {
        let mut c = common::command();
        c.current_dir(env!("CARGO_MANIFEST_DIR"));
        c.args(["match", "--engine", "name=nc", "builtin=neurochess", "depth=1", "--engine", "name=hc", "builtin=handcrafted", opponent_depth]);
        c.args(["--curve", list.to_str().unwrap(), "--curve-out", out.to_str().unwrap(), "--concurrency", "2"]);
        if resume {
            c.arg("--resume");
        }
        c.output().unwrap()
    };
    ok(&curve("depth=1", false));
    let first = std::fs::read_to_string(&tsv).unwrap();
    assert!(first.contains("\n# match A name=nc") && first.contains("# match B name=hc") && first.contains("limit=depth=1"), "{first}");
    let points = |t: &str| t.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(points(&first), 2, "{first}");
    // Another opponent limit: refused, both settings named, nothing written.
    let o = curve("depth=2", true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("other settings") && err.contains("limit=depth=1") && err.contains("limit=depth=2"), "{err}");
    assert_eq!(std::fs::read_to_string(&tsv).unwrap(), first);
    // A kill while the second point's line was written: that point is played again.
    let kept: String = first.lines().take_while(|l| !l.starts_with("nc\t2")).map(|l| format!("{l}\n")).collect();
    std::fs::write(&tsv, format!("{kept}nc\t2\t{net}\t1")).unwrap();
    let o = curve("depth=1", true);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cut short"), "{}", String::from_utf8_lossy(&o.stderr));
    let again = std::fs::read_to_string(&tsv).unwrap();
    assert_eq!(points(&again), 2, "{again}");
    // A points file made before curves recorded their match cannot be checked.
    std::fs::write(&tsv, first.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let o = curve("depth=1", true);
    assert!(String::from_utf8_lossy(&o.stderr).contains("records no match settings"), "{}", String::from_utf8_lossy(&o.stderr));
    // A link in the points file's place (to a file outside --curve-out) is refused untouched.
    #[cfg(unix)]
    {
        let outside = dir.join("outside.tsv");
        std::fs::write(&outside, &first).unwrap();
        std::fs::remove_file(&tsv).unwrap();
        std::os::unix::fs::symlink(&outside, &tsv).unwrap();
        let o = curve("depth=1", true);
        assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("symbolic link"), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), first);
    }
}

/// Issue 79: a `points.tsv` that repeats or contradicts itself, or whose record was edited,
/// is refused with every file of the curve untouched (a duplicated line of a finished point
/// used to cut `games.pgn` back to that point's end, destroying later points' games).
#[test]
fn a_points_file_that_repeats_contradicts_or_was_edited_is_refused_untouched() {
    let dir = temp_dir();
    let net = format!("{}/data/nets/neurochess.dcw", env!("CARGO_MANIFEST_DIR"));
    let list = dir.join("list.txt");
    std::fs::write(&list, format!("nc 2 {net}\nnc 4 {net}\nnc 6 {net}\n")).unwrap();
    let out = dir.join("curve");
    let curve = |resume: bool| {
        let list = list.to_str().unwrap();
        let mut args = vec!["match", "--engine", "name=nc", "builtin=neurochess", "depth=1", "--engine", "name=hc", "builtin=handcrafted", "depth=1"];
        args.extend(["--curve", list, "--curve-out", out.to_str().unwrap(), "--concurrency", "2"]);
        if resume {
            args.push("--resume");
        }
        common::deepchess(&args)
    };
    ok(&curve(false));
    let (tsv, pgn) = (out.join("points.tsv"), out.join("games.pgn"));
    let first = std::fs::read_to_string(&tsv).unwrap();
    let games = std::fs::read(&pgn).unwrap();
    let records: Vec<&str> = first.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(records.len(), 3, "{first}");
    assert!(records.iter().all(|l| l.rsplit_once("\t#").is_some_and(|(_, s)| s.len() == 16)), "each record carries its checksum:\n{first}");
    let header: String = first.lines().filter(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    let cases = [
        ("the first point's line again", format!("{first}{}\n", records[0]), "repeats the point of line"),
        ("the points out of order", format!("{header}{}\n{}\n{}\n", records[0], records[2], records[1]), "contradict each other"),
        ("a game count edited", first.replacen(&format!("nc\t4\t{net}\t"), &format!("nc\t4\t{net}\t9"), 1), "corrupt"),
        ("a checksum lost", first.replacen(&format!("\t#{}", records[1].rsplit_once("\t#").unwrap().1), "", 1), "lost its checksum"),
    ];
    for (what, text, needle) in cases {
        assert_ne!(text, first, "{what}: the case changes the file");
        std::fs::write(&tsv, &text).unwrap();
        let o = curve(true);
        let err = common::text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(err.contains(needle) && err.contains("points.tsv"), "{what}: {err}");
        assert_eq!(std::fs::read_to_string(&tsv).unwrap(), text, "{what}: points.tsv was changed");
        assert_eq!(std::fs::read(&pgn).unwrap(), games, "{what}: games.pgn was changed");
    }
    // The true file resumes: nothing to play, every game kept.
    std::fs::write(&tsv, &first).unwrap();
    ok(&curve(true));
    assert_eq!(std::fs::read(&pgn).unwrap(), games);
}

/// A curve killed (SIGKILL) again and again, each time resumed, ends with every point once in
/// `points.tsv` and every test game once in its `games.pgn`: a point's games written before
/// the kill are cut off and the point played again.
#[cfg(unix)]
#[test]
fn a_killed_curve_resumes_without_a_lost_or_repeated_game() {
    let dir = temp_dir();
    let net = format!("{}/data/nets/neurochess.dcw", env!("CARGO_MANIFEST_DIR"));
    let list = dir.join("list.txt");
    std::fs::write(&list, format!("nc 6 {net}\nnc 12 {net}\nnc 18 {net}\n")).unwrap();
    let out = dir.join("curve");
    let command = |resume: bool| {
        let mut c = common::command();
        c.current_dir(env!("CARGO_MANIFEST_DIR"));
        c.args(["match", "--engine", "name=nc", "builtin=neurochess", "depth=1", "--engine", "name=hc", "builtin=handcrafted", "depth=1"]);
        c.args(["--curve", list.to_str().unwrap(), "--curve-out", out.to_str().unwrap(), "--concurrency", "1"]);
        if resume {
            c.arg("--resume");
        }
        c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        c
    };
    let mut kills = 0;
    let mut finished = false;
    for i in 0..40 {
        let mut child = command(i > 0).spawn().unwrap();
        // Short enough that an idle machine (18 games at depth 1 in about half a second) still
        // sees several kills land mid-curve.
        std::thread::sleep(std::time::Duration::from_millis(60 + 37 * (i % 7)));
        if child.try_wait().unwrap().is_some_and(|s| s.success()) {
            finished = true;
            break;
        }
        child.kill().unwrap();
        let _ = child.wait();
        kills += 1;
    }
    if !finished {
        assert!(command(true).status().unwrap().success(), "the last resume failed");
    }
    assert!(kills >= 3, "only {kills} kills landed: the curve ended too soon to test them");
    let tsv = std::fs::read_to_string(out.join("points.tsv")).unwrap();
    let points: Vec<&str> = tsv.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(points.len(), 3, "{tsv}");
    let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 18, "after {kills} kills:\n{tsv}");
    let mut r = PgnReader::new(std::io::BufReader::new(pgn.as_bytes()));
    assert_eq!(r.by_ref().count(), 18);
    assert_eq!(r.summary().skipped(), 0, "a game cut in half was left in the PGN");
}
