//! Labelled sets (seed 001): the labeller against a scripted fake UCI engine (signs turned to
//! White's side, mates, results from the PGN, counts, determinism, jobs, resume, a crashing
//! engine), the file format (round trips, line-numbered errors) and the `label` command.

mod common;

use deepchess::arena::labeller::{partial_path, run, sample, LabelConfig};
use deepchess::chess::pgn::{open_pgn, PgnReader};
use deepchess::chess::{Color, Position};
use deepchess::data::labels::{EngineScore, LabelSet, Labelled, Wdl};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

const SAMPLE_PGN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pgn/sf15-sample.pgn");

/// A fake engine: the score depends on the side to move and the parity of the FEN's move
/// number, so every conversion is exercised; lower-depth lines come first (the last counts).
const FAKE: &str = r#"#!/usr/bin/env bash
side=w; full=1
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeLabeller"; echo "uciok" ;;
    isready) echo "readyok" ;;
    ucinewgame) ;;
    "position fen "*) set -- ${line#position fen }; side=$2; full=$6 ;;
    "go depth "*)
      d=${line#go depth }
      echo "info depth 1 score cp -999 nodes 1 pv 0000"
      if (( full % 2 == 0 )); then echo "info depth $d score cp $((40 + d)) nodes 9 pv 0000";
      elif [ "$side" = w ]; then echo "info depth $d score mate 2 nodes 9 pv 0000";
      else echo "info depth $d score mate -3 nodes 9 pv 0000"; fi
      echo "bestmove 0000" ;;
    quit) exit 0 ;;
  esac
done
"#;

/// What the fake reports for `pos` at depth `d`, from White's side.
fn expected(pos: &Position, d: i32) -> EngineScore {
    let white = pos.turn() == Color::White;
    match (pos.fullmove_number() % 2 == 0, white) {
        (true, true) => EngineScore::Cp(40 + d),
        (true, false) => EngineScore::Cp(-(40 + d)),
        (false, true) => EngineScore::Mate(2),
        // Black to move is mated in 3: White mates in 3.
        (false, false) => EngineScore::Mate(3),
    }
}

fn script(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p.to_str().unwrap().to_string()
}

fn config(dir: &Path, out: &str, engine: &str) -> LabelConfig {
    let mut c = LabelConfig::new(vec![SAMPLE_PGN.to_string()], dir.join(out), engine.to_string());
    c.depth = 2;
    c.timeout = Duration::from_secs(10);
    c
}

/// Results of the sample's games by their number, read with the crate's PGN reader.
fn results() -> HashMap<u32, Wdl> {
    let mut r = PgnReader::new(open_pgn(SAMPLE_PGN).unwrap());
    let mut out = HashMap::new();
    let mut n = 0;
    while let Some(g) = r.next_game() {
        n += 1;
        out.insert(n, Wdl::from_outcome(g.unwrap().result.unwrap()));
    }
    out
}

#[test]
fn labels_are_from_whites_side_with_the_games_results() {
    let dir = common::TempDir::new("labels-fake");
    let fake = script(&dir, "fake.sh", FAKE);
    let cfg = config(&dir, "set.csv", &fake);
    let s = run(&cfg, |w| panic!("warning: {w}"), |_| {}).unwrap();
    let set = &s.set;
    // 30 games, 4 positions each (every sample game is longer than 14 plies).
    assert_eq!(set.items.len(), 120);
    assert_eq!(s.stats.games_read, 30);
    assert_eq!(set.meta("engine"), Some("FakeLabeller"));
    assert_eq!(set.meta("count"), Some("120"));
    let results = results();
    let mut seen = HashSet::new();
    let mut kinds = HashSet::new();
    for it in &set.items {
        assert_eq!(it.result, results[&it.game], "game {}", it.game);
        assert_eq!(it.score, expected(&it.pos, 2), "{}", it.pos.fen());
        assert!(it.ply >= 10 && it.pos.has_legal_move());
        assert!(seen.insert(it.pos.hash()), "a position twice");
        kinds.insert((it.pos.turn(), matches!(it.score, EngineScore::Mate(_))));
    }
    assert_eq!(kinds.len(), 4, "both sides to move, with cp and with mate scores");
    let [l, d, w] = set.wdl_counts();
    assert!(l > 0 && d > 0 && w > 0, "{l} {d} {w}: draws are included");
    // Games in order, plies in order within a game.
    assert!(set.items.windows(2).all(|p| (p[0].game, p[0].ply) < (p[1].game, p[1].ply)));
    // The file is what was returned, and the checkpoint is gone.
    assert_eq!(&LabelSet::load(&cfg.out).unwrap(), set);
    assert!(!partial_path(&cfg.out).exists());
    // Same run, same bytes; two engines at once, same bytes.
    let first = std::fs::read(&cfg.out).unwrap();
    let again = LabelConfig { out: dir.join("again.csv"), ..cfg.clone() };
    run(&again, |_| {}, |_| {}).unwrap();
    assert_eq!(std::fs::read(&again.out).unwrap(), first);
    // The finished set is never written again: refused without --resume, checked and kept
    // with it.
    let e = run(&cfg, |_| {}, |_| {}).unwrap_err();
    assert!(e.contains("--resume") && e.contains("this run's set"), "{e}");
    let resumed = run(&LabelConfig { resume: true, engine: "/nonexistent/engine".into(), ..cfg.clone() }, |_| {}, |_| {}).unwrap();
    assert_eq!((resumed.scored, &resumed.set), (0, set));
    assert_eq!(std::fs::read(&cfg.out).unwrap(), first);
    let two = LabelConfig { jobs: 2, out: dir.join("two.csv"), ..cfg.clone() };
    run(&two, |_| {}, |_| {}).unwrap();
    assert_eq!(std::fs::read(&two.out).unwrap(), first);
    // Another seed draws other positions.
    let other = LabelConfig { seed: 2, out: dir.join("seed2.csv"), ..cfg.clone() };
    assert_ne!(run(&other, |_| {}, |_| {}).unwrap().set.items, set.items);
}

#[test]
fn the_target_count_and_per_game_limit_hold() {
    let dir = common::TempDir::new("labels-count");
    let mut cfg = config(&dir, "x.csv", "unused");
    cfg.positions = Some(7);
    cfg.per_game = 3;
    let (items, st) = sample(&cfg, |_| {}).unwrap();
    assert_eq!(items.len(), 7);
    assert_eq!(st.games_read, 3, "stops reading once the target is reached");
    assert_eq!(items.iter().filter(|i| i.game == 1).count(), 3);
    cfg.positions = None;
    cfg.per_game = 1000;
    cfg.skip_plies = 0;
    let (all, _) = sample(&cfg, |_| {}).unwrap();
    let distinct: HashSet<u64> = all.iter().map(|i| i.pos.hash()).collect();
    assert_eq!(distinct.len(), all.len(), "no position twice, even across games");
}

#[test]
fn a_crashing_or_silent_engine_is_reported_with_the_position_and_work_is_kept() {
    let dir = common::TempDir::new("labels-crash");
    let crash = format!("{}/tests/fakes/crash.sh", env!("CARGO_MANIFEST_DIR"));
    let cfg = config(&dir, "set.csv", &crash);
    let e = run(&cfg, |_| {}, |_| {}).unwrap_err();
    assert!(e.contains("engine crashed") && e.contains("FEN ") && e.contains("ply "), "{e}");
    assert!(e.contains("no position was scored yet"), "{e}");
    assert!(!cfg.out.exists());
    // The checkpoint stays; a run without --resume refuses to overwrite it.
    assert!(partial_path(&cfg.out).exists());
    let e = run(&cfg, |_| {}, |_| {}).unwrap_err();
    assert!(e.contains("exists") && e.contains("--resume"), "{e}");
    // A crash after some positions: what was scored is in the checkpoint.
    let late = script(&dir, "late.sh", &FAKE.replace("ucinewgame) ;;", "ucinewgame) n=$((n+1)); (( n > 5 )) && exit 4 ;;"));
    let cfg = config(&dir, "late.csv", &late);
    let e = run(&cfg, |_| {}, |_| {}).unwrap_err();
    assert!(e.contains("the 5 positions scored are kept in") && e.contains("--resume"), "{e}");
    let kept = LabelSet::load(&partial_path(&cfg.out)).unwrap();
    assert_eq!(kept.items.len(), 5);
    // A silent engine times out, naming the position. The timeout also bounds the engine's
    // start-up (a shell starting, on a machine that may be busy), which must not time out.
    let silent = format!("{}/tests/fakes/silent.sh", env!("CARGO_MANIFEST_DIR"));
    let cfg = LabelConfig { timeout: Duration::from_secs(2), ..config(&dir, "silent.csv", &silent) };
    let e = run(&cfg, |_| {}, |_| {}).unwrap_err();
    assert!(e.contains("engine timed out") && e.contains("FEN "), "{e}");
    let missing = config(&dir, "m.csv", "/nonexistent/engine");
    assert!(run(&missing, |_| {}, |_| {}).unwrap_err().contains("cannot start engine"));
}

#[test]
fn a_resumed_run_scores_only_the_rest_and_ends_identical() {
    let dir = common::TempDir::new("labels-resume");
    let fake = script(&dir, "fake.sh", FAKE);
    let full = config(&dir, "full.csv", &fake);
    run(&full, |_| {}, |_| {}).unwrap();
    let text = std::fs::read_to_string(&full.out).unwrap();
    // A checkpoint as a kill leaves it: provenance (no count), header, 50 rows in another
    // order, and a torn last row.
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("# count=")).collect();
    let body = lines.split_off(lines.iter().position(|l| l.starts_with("game,")).unwrap() + 1);
    let mut rows: Vec<&str> = body[..50].to_vec();
    rows.reverse();
    let torn = &body[50][..body[50].len() / 2];
    let partial = format!("{}\n{}\n{torn}", lines.join("\n"), rows.join("\n"));
    let cfg = LabelConfig { resume: true, out: dir.join("resumed.csv"), ..full.clone() };
    std::fs::write(partial_path(&cfg.out), &partial).unwrap();
    let s = run(&cfg, |_| {}, |_| {}).unwrap();
    assert_eq!((s.resumed, s.scored), (50, 70));
    assert_eq!(std::fs::read_to_string(&cfg.out).unwrap(), text);
    assert!(!partial_path(&cfg.out).exists());
    // A checkpoint of another run's settings is refused, naming the difference.
    std::fs::write(partial_path(&cfg.out), &partial).unwrap();
    let other = LabelConfig { seed: 9, ..cfg.clone() };
    let e = run(&other, |_| {}, |_| {}).unwrap_err();
    assert!(e.contains("another run") && e.contains("seed"), "{e}");
    // A kill between the set's write and the checkpoint's removal: the set is checked and
    // kept, the checkpoint removed.
    let s = run(&cfg, |_| {}, |_| {}).unwrap();
    assert_eq!((s.resumed, s.scored), (120, 0));
    assert!(!partial_path(&cfg.out).exists());
    assert_eq!(std::fs::read_to_string(&cfg.out).unwrap(), text);
    // --resume without a checkpoint or a set starts from scratch.
    std::fs::remove_file(&cfg.out).unwrap();
    let s = run(&cfg, |_| {}, |_| {}).unwrap();
    assert_eq!((s.resumed, s.scored), (0, 120));
}

fn item(game: u32, ply: u16, result: Wdl, score: EngineScore, fen: &str) -> Labelled {
    Labelled { game, ply, result, score, pos: Position::from_fen(fen).unwrap() }
}

fn small_set() -> LabelSet {
    let mut s = LabelSet::default();
    s.set_meta("engine", "Test 1");
    s.set_meta("note", "two = signs = kept");
    s.items = vec![
        item(1, 10, Wdl::Win, EngineScore::Cp(34), "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
        item(1, 11, Wdl::Win, EngineScore::Mate(-4), "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1"),
        item(2, 40, Wdl::Draw, EngineScore::Cp(-120), "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1"),
        item(3, 12, Wdl::Loss, EngineScore::Mate(-7), "8/8/8/8/8/5k2/8/4K2q w - - 0 60"),
    ];
    s.set_meta("count", "4");
    s
}

#[test]
fn sets_round_trip_plain_and_compressed() {
    let dir = common::TempDir::new("labels-roundtrip");
    let set = small_set();
    for name in ["s.csv", "s.csv.xz"] {
        let p = dir.join(name);
        set.save(&p).unwrap();
        let back = LabelSet::load(&p).unwrap();
        assert_eq!(back, set, "{name}");
        assert_eq!(back.meta("note"), Some("two = signs = kept"));
        // Saving what was loaded gives the same bytes.
        let again = dir.join(format!("again-{name}"));
        back.save(&again).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&again).unwrap(), "{name}");
    }
    let text = std::fs::read_to_string(dir.join("s.csv")).unwrap();
    assert!(text.contains("\ngame,ply,result,score,fen\n1,10,1-0,34,r1bqkbnr/"), "{text}");
    assert!(text.contains(",0-1,#-7,8/8/8/8/8/5k2/8/4K2q w - - 0 60\n"), "{text}");
    assert_eq!(set.items[2].record().planes(), deepchess::data::dataset::Record::new(&set.items[2].pos, false, 40, 2).planes());
    // A corrupt .xz names the file and xz.
    std::fs::write(dir.join("bad.csv.xz"), b"not xz at all").unwrap();
    let e = LabelSet::load(&dir.join("bad.csv.xz")).unwrap_err();
    assert!(e.contains("bad.csv.xz") && e.contains("xz -dc failed"), "{e}");
}

#[test]
fn garbage_gets_the_file_line_and_field() {
    let dir = common::TempDir::new("labels-garbage");
    let good = small_set().to_csv();
    let header_line = good.lines().position(|l| l.starts_with("game,")).unwrap() + 1;
    let cases: Vec<(String, String)> = vec![
        (good.replace(",34,", ",abc,"), format!(":{}: score: expected an integer or #N, found \"abc\"", header_line + 1)),
        (good.replace(",#-4,", ",#0,"), format!(":{}: score: #0", header_line + 2)),
        (good.replace("2,40,1/2-1/2", "2,40,1/2"), format!(":{}: result:", header_line + 3)),
        (good.replace("3,12,", "3,-12,"), format!(":{}: ply:", header_line + 4)),
        (good.replace("3,12,", "x3,12,"), format!(":{}: game:", header_line + 4)),
        (good.replace("4K2q w", "4K2q x"), format!(":{}: fen:", header_line + 4)),
        (good.replace("1,11,", "1,10,"), format!(":{}: row: game 1 ply 10 appears twice (first on line {})", header_line + 2, header_line + 1)),
        (good.replace("game,ply,", "gam,ply,"), format!(":{header_line}: header:")),
        (good.replace("# count=4", "# count=5"), ": count: the provenance says 5 rows, the file has 4".to_string()),
        (good.replace(",-120,8/2p5", ",-120"), format!(":{}: row: expected 5 fields", header_line + 3)),
        (String::new(), ":1: header: no".to_string()),
        (format!("{good}5,20,1-0,1,\u{1}\u{7f}garbage\n"), format!(":{}: fen:", header_line + 5)),
    ];
    for (text, want) in cases {
        let p = dir.join("bad.csv");
        std::fs::write(&p, &text).unwrap();
        let e = LabelSet::load(&p).unwrap_err();
        assert!(e.contains("bad.csv") && e.contains(&want), "want '{want}' in: {e}");
        assert!(!e.contains('\u{1}'), "control characters are escaped: {e}");
    }
    let mut bytes = good.into_bytes();
    bytes.extend_from_slice(b"5,20,1-0,1,\xff\xfe\n");
    std::fs::write(dir.join("bin.csv"), bytes).unwrap();
    let e = LabelSet::load(&dir.join("bin.csv")).unwrap_err();
    assert!(e.contains("line: not UTF-8"), "{e}");
    let e = LabelSet::load(dir.path()).unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn the_shipped_set_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/dbn/labels-100k.csv.xz");
    let set = LabelSet::load(&path).unwrap();
    assert_eq!(set.items.len(), 100_000);
    assert_eq!(set.meta("engine"), Some("Stockfish 15.1"));
    assert!(set.meta("search").is_some_and(|s| s.starts_with("go depth 9,")));
    assert!(set.wdl_counts().iter().all(|&n| n > 20_000), "{:?}", set.wdl_counts());
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let o = common::command().args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn the_label_command() {
    let dir = common::TempDir::new("labels-cli");
    let (code, out, _) = cli(&["label", "--help"]);
    assert!(code == 0 && out.contains("--per-game") && out.contains("--resume") && out.contains("--show"), "{out}");
    let (code, _, err) = cli(&["label", "--pgn", SAMPLE_PGN]);
    assert!(code == 2 && err.contains("--out FILE is needed"), "{err}");
    let (code, _, err) = cli(&["label", "--pgn", SAMPLE_PGN, "--out", "x.csv", "--depth", "0"]);
    assert!(code == 2 && err.contains("--depth must be at least 1"), "{err}");
    let (code, _, err) = cli(&["label", "--pgn", SAMPLE_PGN, "--out", "x.csv", "--jobs", "two"]);
    assert!(code == 2 && err.contains("invalid value 'two' for --jobs"), "{err}");
    let (code, _, err) = cli(&["label", "--bogus"]);
    assert!(code == 2 && err.contains("unknown flag '--bogus'"), "{err}");
    let fake = script(&dir, "fake.sh", FAKE);
    let out_path = dir.join("cli.csv.xz");
    let out_s = out_path.to_str().unwrap();
    let (code, out, err) =
        cli(&["label", "--pgn", SAMPLE_PGN, "--out", out_s, "--engine", &fake, "--depth", "3", "--positions", "50", "--per-game", "5", "--jobs", "2"]);
    assert!(code == 0 && out.contains("wrote 50 positions"), "{out}{err}");
    assert!(err.contains("positions/s") && err.contains("ETA"), "progress on stderr: {err}");
    let set = LabelSet::load(&out_path).unwrap();
    assert!(set.items.iter().all(|it| it.score == expected(&it.pos, 3)));
    assert_eq!(
        set.meta("command"),
        Some(format!("deepchess label --pgn {SAMPLE_PGN} --depth 3 --per-game 5 --skip-plies 10 --positions 50 --seed 1").as_str())
    );
    let (code, out, _) = cli(&["label", "--show", out_s]);
    assert!(code == 0 && out.contains("engine: FakeLabeller") && out.contains("positions: 50 from 10 games"), "{out}");
    assert!(out.contains("mate for White") && out.contains("|score| > 300"), "{out}");
    let (code, _, err) = cli(&["label", "--show", dir.join("none.csv").to_str().unwrap()]);
    assert!(code == 1 && err.contains("none.csv"), "{err}");
}

/// `--out` writes only where nothing is, or over this run's own set with `--resume` (issue
/// 45: a PGN given as both `--pgn` and `--out` became CSV). An input, another program's
/// file, another run's set, a folder: each refused with exit 1, every byte kept.
#[test]
fn label_never_overwrites_what_it_did_not_write() {
    let dir = common::TempDir::new("labels-out");
    let fake = script(&dir, "fake.sh", FAKE);
    let games = dir.join("games.pgn");
    std::fs::copy(SAMPLE_PGN, &games).unwrap();
    let g = games.to_str().unwrap();
    let label = |pgn: &str, out: &str, extra: &[&str]| {
        let mut a = vec!["label", "--pgn", pgn, "--out", out, "--engine", &fake, "--depth", "2", "--positions", "20", "--quiet"];
        a.extend_from_slice(extra);
        cli(&a)
    };
    let pgn_bytes = std::fs::read(&games).unwrap();
    let alias = dir.join(".").join("games.pgn");
    #[cfg(unix)]
    let linked = {
        let l = dir.join("linked.pgn");
        std::os::unix::fs::symlink(&games, &l).unwrap();
        l
    };
    #[cfg(not(unix))]
    let linked = alias.clone();
    for (out, extra) in [(g, &[][..]), (alias.to_str().unwrap(), &["--resume"][..]), (linked.to_str().unwrap(), &[][..])] {
        let (code, _, err) = label(g, out, extra);
        assert!(code == 1 && err.contains("also the input --pgn"), "{out}: {code} {err}");
        assert_eq!(std::fs::read(&games).unwrap(), pgn_bytes, "{out}: the input was written");
    }
    // The checkpoint beside an output is an output too.
    let partial_in = dir.join("set.csv.partial");
    std::fs::copy(SAMPLE_PGN, &partial_in).unwrap();
    let (code, _, err) = label(partial_in.to_str().unwrap(), dir.join("set.csv").to_str().unwrap(), &[]);
    assert!(code == 1 && err.contains("checkpoint") && err.contains("also the input"), "{err}");
    // Files that are not a labelled set, with and without --resume.
    for (name, bytes) in [("notes.txt", &b"my notes, not labels\n"[..]), ("other.pgn", &pgn_bytes[..]), ("empty.csv", &b""[..]), ("bin.csv", &b"\x00\xff\x7fELF"[..])] {
        let f = dir.join(name);
        std::fs::write(&f, bytes).unwrap();
        for extra in [&[][..], &["--resume"][..]] {
            let (code, _, err) = label(g, f.to_str().unwrap(), extra);
            assert!(code == 1 && err.contains("not a labelled set") && err.contains(name), "{name} {extra:?}: {err}");
            assert_eq!(std::fs::read(&f).unwrap(), bytes, "{name} was written");
        }
    }
    let (code, _, err) = label(g, dir.path().to_str().unwrap(), &[]);
    assert!(code == 1 && err.contains("not a regular file"), "{err}");
    // A labelled set of another run (another seed) is kept; this run's is kept and checked.
    let mine = dir.join("mine.csv");
    let (code, out, err) = label(g, mine.to_str().unwrap(), &[]);
    assert!(code == 0 && out.contains("wrote 20 positions"), "{out}{err}");
    let mine_bytes = std::fs::read(&mine).unwrap();
    let (code, _, err) = label(g, mine.to_str().unwrap(), &["--seed", "2", "--resume"]);
    assert!(code == 1 && err.contains("made by another run") && err.contains("--seed 2"), "{err}");
    let (code, _, err) = label(g, mine.to_str().unwrap(), &[]);
    assert!(code == 1 && err.contains("--resume"), "{err}");
    let (code, out, err) = label(g, mine.to_str().unwrap(), &["--resume"]);
    assert!(code == 0 && out.contains("already holds this run's 20 positions"), "{out}{err}");
    assert_eq!(std::fs::read(&mine).unwrap(), mine_bytes);
}
