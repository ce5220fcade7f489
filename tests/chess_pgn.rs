//! PGN reader and writer: hand-made files for each feature, the shared self-play sample,
//! the export format, and proptests (write/read round trip, garbage never panics).

mod common;

use deepchess::chess::pgn::{
    open_pgn, write_game, EngineEval, PgnGame, PgnReader, PgnSkip, Score, SkipReason, MAX_COLUMNS,
};
use deepchess::chess::{Color, Ending, Outcome, Position};
use proptest::prelude::*;
use std::io::Cursor;

fn read_all(text: &str) -> (Vec<PgnGame>, Vec<PgnSkip>, PgnReader<Cursor<Vec<u8>>>) {
    read_bytes(text.as_bytes().to_vec())
}

fn read_bytes(bytes: Vec<u8>) -> (Vec<PgnGame>, Vec<PgnSkip>, PgnReader<Cursor<Vec<u8>>>) {
    let mut r = PgnReader::new(Cursor::new(bytes));
    let games: Vec<PgnGame> = r.by_ref().collect();
    let skips = r.take_skips();
    (games, skips, r)
}

/// The SAN of every move, replayed from the start.
fn sans(g: &PgnGame) -> Vec<String> {
    let mut pos = g.start;
    g.moves
        .iter()
        .map(|&m| {
            let s = pos.san(m);
            pos.play(m);
            s
        })
        .collect()
}

fn data(name: &str) -> String {
    format!("{}/tests/data/pgn/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn hand_file_features_and_summary() {
    let r = PgnReader::new(open_pgn(&data("hand.pgn")).unwrap());
    let mut r = r;
    let games: Vec<PgnGame> = r.by_ref().collect();
    let skips = r.take_skips();
    let s = r.summary().clone();
    assert_eq!((s.games, s.skipped()), (5, 2), "{s}");
    assert_eq!(s.skipped_for(SkipReason::BadMove), 1);
    assert_eq!(s.skipped_for(SkipReason::BadFen), 1);
    assert_eq!(s.to_string(), "5 games read, 2 skipped (bad move: 1, bad FEN: 1)");

    // Game 1: escaped tags, NAGs, variations two deep, both comment kinds, mate.
    let g = &games[0];
    assert_eq!(g.number, 1);
    assert_eq!(g.tag("Event"), Some("Features"));
    assert_eq!(g.tag("White"), Some("A \"quoted\" name"));
    assert_eq!(g.tag("Black"), Some("Back\\slash"));
    assert_eq!(g.tags.len(), 8, "escape lines must not add tags: {:?}", g.tags);
    assert_eq!(sans(g), ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
    assert_eq!(g.comments[2].as_deref(), Some("+0.32/12"));
    assert_eq!(g.comments[3].as_deref(), Some("a line comment { with a brace"));
    assert_eq!(g.comments[6].as_deref(), Some("-M0/1"));
    assert_eq!(g.comments.iter().filter(|c| c.is_some()).count(), 3);
    assert_eq!(g.eval(2), Some(EngineEval { score: Score::Cp(32), depth: 12 }));
    assert_eq!(g.result, Some(Outcome::Win(Color::White)));
    assert_eq!(g.to_game().outcome(), Some((Outcome::Win(Color::White), Ending::Checkmate)));

    // Game 2 skipped with its number, ply and move; game 3 read.
    assert_eq!(skips.len(), 2);
    assert_eq!(
        (skips[0].number, skips[0].reason, skips[0].ply, skips[0].token.as_str()),
        (2, SkipReason::BadMove, Some(3), "Ke3")
    );
    let msg = skips[0].to_string();
    assert!(msg.starts_with("game 2: skipped (bad move) at ply 3 (2. Ke3)"), "{msg}");
    assert_eq!((games[1].number, games[1].tag("Event")), (3, Some("Good after bad")));
    assert_eq!(sans(&games[1]), ["f3", "e5", "g4", "Qh4#"]);
    assert_eq!(games[1].result, Some(Outcome::Win(Color::Black)));

    // Game 4: no blank line before it, FEN with Black to move, `1...`.
    let g = &games[2];
    assert_eq!(g.number, 4);
    assert_eq!(g.start.turn(), Color::Black);
    assert_eq!(sans(g), ["e5", "Nf3", "Nc6"]);
    assert_eq!(g.eval(1), Some(EngineEval { score: Score::Cp(10), depth: 5 }));
    assert_eq!(g.result, None);

    // Game 5: bad FEN; 6 and 7 have no tags, odd move numbers, no blank line.
    assert_eq!((skips[1].number, skips[1].reason), (5, SkipReason::BadFen));
    assert!(games[3].tags.is_empty());
    assert_eq!(sans(&games[3]), ["e4", "e5", "Nf3"]);
    assert_eq!(games[3].result, Some(Outcome::Draw));
    assert_eq!((games[4].number, sans(&games[4]).len(), games[4].result), (7, 3, None));
}

#[test]
fn move_number_forms() {
    let (games, skips, _) = read_all("1.e4 1...e5 2 . Nf3 2 ... Nc6 3.Bb5 3. ..a6 4.\nBa4 *");
    assert!(skips.is_empty(), "{skips:?}");
    assert_eq!(sans(&games[0]), ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4"]);
}

#[test]
fn variations_nested_and_comments_inside_are_skipped() {
    let pgn =
        "1. e4 (1. d4 {in var} d5 (1... Nf6 2. c4 (2. Nf3 g6) e6) 2. c4) 1... e5 {main} (1... c5 ; var\n) 2. Nf3 *";
    let (games, skips, _) = read_all(pgn);
    assert!(skips.is_empty(), "{skips:?}");
    assert_eq!(sans(&games[0]), ["e4", "e5", "Nf3"]);
    assert_eq!(games[0].comments, [None, Some("main".to_string()), None]);
}

#[test]
fn several_comments_on_one_move_are_joined_and_multiline_comments_unfolded() {
    let (games, _, _) = read_all("1. e4 {first\r\n line} ; second\n{third} e5 *");
    assert_eq!(games[0].comment(0), Some("first  line second third"));
}

#[test]
fn crlf_bom_and_annotation_suffixes() {
    let text = "\u{feff}[Event \"E\"]\r\n[Result \"1-0\"]\r\n\r\n1. e4! e5?! 2. Nf3!! ! Nc6 $14 1-0\r\n\u{feff}[Event \"F\"]\r\n\r\n1. d4 *\r\n";
    let (games, skips, r) = read_all(text);
    assert!(skips.is_empty(), "{skips:?}");
    assert_eq!(r.summary().games, 2);
    assert_eq!(games[0].tag("Event"), Some("E"));
    assert_eq!(sans(&games[0]), ["e4", "e5", "Nf3", "Nc6"]);
    assert_eq!(games[1].tag("Event"), Some("F"));
}

#[test]
fn missing_result_ends_game_at_next_tags_and_result_tag_is_used() {
    let (games, _, _) = read_all("[Result \"0-1\"]\n1. e4 e5\n[Event \"next\"]\n1. d4 *\n");
    assert_eq!(games.len(), 2);
    assert_eq!((sans(&games[0]).len(), games[0].result), (2, Some(Outcome::Win(Color::Black))));
    assert_eq!(games[1].tag("Event"), Some("next"));
}

#[test]
fn a_second_event_tag_starts_a_new_game_and_glyphs_are_ignored() {
    let (games, skips, _) = read_all("[Event \"a\"]\n\n[Event \"b\"]\n1. e4 += e5 -+ 2. Nf3 +/- *\n");
    assert!(skips.is_empty(), "{skips:?}");
    assert_eq!((games.len(), games[0].tag("Event"), games[1].tag("Event")), (2, Some("a"), Some("b")));
    assert_eq!((games[0].moves.len(), games[0].result, games[1].moves.len()), (0, None, 3));
}

#[test]
fn skip_message_numbers_moves_from_the_fen() {
    let pgn = "[FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 7\"]\n7... e5 8. Nf3 Nf3 *";
    let (_, skips, _) = read_all(pgn);
    assert!(skips[0].to_string().starts_with("game 1: skipped (bad move) at ply 3 (8... Nf3): "), "{}", skips[0]);
    let (_, skips, _) = read_all("\n\n1. e4 *\n\n1. e4 e5 2. Qxf7 *\n");
    assert!(skips[0].to_string().starts_with("game 2: skipped (bad move) at ply 3 (2. Qxf7): "), "{}", skips[0]);
}

#[test]
fn bad_games_are_reported_and_counted_without_stopping() {
    let pgn = "[Variant \"Chess960\"]\n1. e4 *\n\
               [SetUp \"1\"]\n1. e4 *\n\
               1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 Qq7 *\n\
               1. e4 { unterminated comment at the end";
    let mut r = PgnReader::new(Cursor::new(pgn.as_bytes().to_vec()));
    let mut results = Vec::new();
    while let Some(x) = r.next_game() {
        results.push(x.map(|g| g.moves.len()).map_err(|s| (s.number, s.reason, s.ply, s.token)));
    }
    assert_eq!(
        results,
        [
            Err((1, SkipReason::Variant, None, "Chess960".to_string())),
            Err((2, SkipReason::BadFen, None, String::new())),
            Err((3, SkipReason::BadMove, Some(8), "Qq7".to_string())),
            Ok(1),
        ]
    );
}

#[test]
fn skip_callback_receives_warnings() {
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let r = PgnReader::new(Cursor::new(b"1. e5 *\n1. e4 *\n1. Nf6 *\n".to_vec()))
        .on_skip(move |s| sink.lock().unwrap().push(s.to_string()));
    let mut r = r;
    assert_eq!(r.by_ref().count(), 1);
    assert_eq!(r.summary().skipped(), 2);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].starts_with("game 1: skipped (bad move) at ply 1 (1. e5)"), "{}", seen[0]);
    assert!(seen[1].starts_with("game 3: skipped (bad move) at ply 1 (1. Nf6)"), "{}", seen[1]);
}

#[test]
fn engine_eval_forms() {
    let cp = |cp, depth| Some(EngineEval { score: Score::Cp(cp), depth });
    let mate = |n, depth| Some(EngineEval { score: Score::Mate(n), depth });
    assert_eq!(EngineEval::parse("+0.32/12"), cp(32, 12));
    assert_eq!(EngineEval::parse("-1.5/3"), cp(-150, 3));
    assert_eq!(EngineEval::parse("0.00/9"), cp(0, 9));
    assert_eq!(EngineEval::parse("+0.39/8 0.12s"), cp(39, 8));
    assert_eq!(EngineEval::parse("-M3/20"), mate(-3, 20));
    assert_eq!(EngineEval::parse("+M1/22"), mate(1, 22));
    for bad in ["", "book", "+0.3x/2", "+/3", "1/", "+M/2", "99999999999/1", "--1/2", "+0.32", "/"] {
        assert_eq!(EngineEval::parse(bad), None, "{bad}");
    }
    assert_eq!(EngineEval::parse("-0.05/7").unwrap().to_string(), "-0.05/7");
}

#[test]
fn shared_sample_reads_without_skips_and_results_follow_the_rules() {
    let mut r = PgnReader::new(open_pgn(&data("sf15-sample.pgn")).unwrap());
    let games: Vec<PgnGame> = r.by_ref().collect();
    assert_eq!(r.summary().skipped(), 0, "{:?}", r.take_skips());
    assert_eq!(games.len(), 30);
    let mut mates = 0;
    for g in &games {
        assert_eq!(g.tag("PlyCount").and_then(|n| n.parse().ok()), Some(g.moves.len()), "game {}", g.number);
        assert_eq!(g.tag("Result").and_then(Outcome::from_pgn), g.result);
        assert_eq!(g.comments.len(), g.moves.len());
        // Engine moves carry evals; opening plies carry none.
        let evals = (0..g.moves.len()).filter(|&i| g.eval(i).is_some()).count();
        assert_eq!(evals, g.comments.iter().flatten().count(), "game {}", g.number);
        let game = g.to_game();
        if let Some((outcome, ending)) = game.outcome() {
            mates += (ending == Ending::Checkmate) as usize;
            assert_eq!(Some(outcome), g.result, "game {} ended by {ending:?}", g.number);
        }
        if g.tag("Termination") == Some("rules") {
            // The corpus ends games on a claimable draw too (a move reaching a threefold).
            let claimable = game.position().legal_moves().iter().any(|&m| {
                let mut next = game.clone();
                next.play_unchecked(m);
                next.ending() == Some(Ending::Repetition)
            });
            assert!(game.outcome().is_some() || claimable, "game {} ended by the rules but not by ours", g.number);
        }
    }
    assert!(mates >= 1);
}

#[test]
fn sample_round_trips_through_the_writer() {
    let games: Vec<PgnGame> = PgnReader::new(open_pgn(&data("sf15-sample.pgn")).unwrap()).collect();
    let mut out = Vec::new();
    for g in &games {
        write_game(&mut out, g).unwrap();
    }
    let text = String::from_utf8(out).unwrap();
    for line in text.lines() {
        assert!(line.len() <= MAX_COLUMNS, "{} columns: {line}", line.len());
    }
    let (again, skips, _) = read_all(&text);
    assert!(skips.is_empty());
    assert_eq!(again, games);
}

#[test]
fn writer_export_format() {
    let start = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").unwrap();
    let mut g = PgnGame::new(start);
    g.set_tag("Annotator", "me");
    g.set_tag("Black", "B");
    g.set_tag("White", "W \"x\"");
    let mut pos = start;
    for (san, comment) in [("e5", None), ("Nf3", Some("+0.10/5")), ("Nc6", None), ("Bb5", None)] {
        let m = pos.parse_san(san).unwrap();
        pos.play(m);
        g.push(m, comment.map(String::from));
    }
    g.result = Some(Outcome::Draw);
    let text = g.to_pgn().unwrap();
    let expected = "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"W \\\"x\\\"\"]\n\
                    [Black \"B\"]\n[Result \"1/2-1/2\"]\n[Annotator \"me\"]\n[SetUp \"1\"]\n\
                    [FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\"]\n\n\
                    1... e5 2. Nf3 { +0.10/5 } 2... Nc6 3. Bb5 1/2-1/2\n\n";
    assert_eq!(text, expected);
    let (back, _, _) = read_all(&text);
    assert_eq!(
        (back[0].start, &back[0].moves, &back[0].comments, back[0].result),
        (start, &g.moves, &g.comments, g.result)
    );
}

#[test]
fn writer_wraps_long_comments_at_80_columns_and_rejects_illegal_moves() {
    let mut g = PgnGame::new(Position::startpos());
    let mut pos = Position::startpos();
    let long = "word ".repeat(60) + "x";
    for san in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"] {
        let m = pos.parse_san(san).unwrap();
        pos.play(m);
        g.push(m, Some(long.clone()));
    }
    let text = g.to_pgn().unwrap();
    assert!(text.lines().all(|l| l.len() <= MAX_COLUMNS), "{text}");
    let (back, _, _) = read_all(&text);
    assert_eq!(back[0].comments, g.comments);
    g.moves.push(g.moves[0]);
    g.comments.push(None);
    assert_eq!(g.to_pgn().unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn open_pgn_reads_xz() {
    let Ok(status) = std::process::Command::new("xz").arg("--version").output() else { return };
    assert!(status.status.success());
    let dir = common::TempDir::new("pgn");
    let path = dir.join("hand.pgn.xz");
    let xz = std::process::Command::new("xz").args(["-c", &data("hand.pgn")]).output().unwrap();
    std::fs::write(&path, xz.stdout).unwrap();
    let n = PgnReader::new(open_pgn(path.to_str().unwrap()).unwrap()).count();
    assert_eq!(n, 5);
    assert!(open_pgn("/nonexistent/x.pgn.xz").is_err());
    assert!(open_pgn("/nonexistent/x.pgn").is_err());
}

const STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 37",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
];

const EXTRA_TAGS: &[&str] = &["Annotator", "ECO", "Opening", "TimeControl", "Termination", "PlyCount"];

fn comment() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop::collection::vec("[a-zA-Z0-9+./#=:%;()\\[\\]é-]{1,10}", 1..8).prop_map(|w| w.join(" ")))
}

fn tag_value() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .?\"\\\\é-]{0,20}"
}

/// A random legal game with random tags, comments and result.
fn game_strategy() -> impl Strategy<Value = PgnGame> {
    (
        0..STARTS.len(),
        prop::collection::vec((any::<u16>(), comment()), 0..80),
        prop::collection::vec(tag_value(), 6),
        prop::collection::vec((0..EXTRA_TAGS.len(), tag_value()), 0..4),
        0..4u8,
    )
        .prop_map(|(s, plies, roster, extra, result)| {
            let start = Position::from_fen(STARTS[s]).unwrap();
            let mut g = PgnGame::new(start);
            g.number = 1;
            g.result = [None, Some(Outcome::Win(Color::White)), Some(Outcome::Win(Color::Black)), Some(Outcome::Draw)]
                [result as usize];
            for (name, value) in ["Event", "Site", "Date", "Round", "White", "Black"].iter().zip(roster) {
                g.tags.push((name.to_string(), value));
            }
            g.tags.push(("Result".into(), g.result.map_or("*", |r| r.pgn()).into()));
            for (i, value) in extra {
                if g.tag(EXTRA_TAGS[i]).is_none() {
                    g.tags.push((EXTRA_TAGS[i].into(), value));
                }
            }
            if s != 0 {
                g.tags.push(("SetUp".into(), "1".into()));
                g.tags.push(("FEN".into(), STARTS[s].into()));
            }
            let mut pos = start;
            for (pick, c) in plies {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves.as_slice()[pick as usize % moves.len()];
                pos.play(m);
                g.push(m, c);
            }
            g
        })
}

/// PGN-like fragments, so garbage reaches deep into the reader rather than failing early.
const FRAGMENTS: &[&str] = &[
    "[Event \"x\"]",
    "[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]",
    "[SetUp \"1\"]",
    "[FEN \"",
    "[",
    "]",
    "\"",
    "\\",
    "{",
    "}",
    "(",
    ")",
    ";",
    "%",
    "$",
    "$12",
    ".",
    "...",
    "1.",
    "12",
    "e4",
    "e5",
    "Nf3",
    "Nc6",
    "O-O",
    "Qxf7#",
    "exd6",
    "e8=Q",
    "--",
    "1-0",
    "0-1",
    "1/2-1/2",
    "*",
    "\n",
    "\r\n",
    " ",
    "\u{feff}",
    "é",
    "\0",
    "[Variant \"x\"]",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn written_games_read_back_identically(g in game_strategy()) {
        let text = g.to_pgn().unwrap();
        for line in text.lines() {
            prop_assert!(line.chars().count() <= MAX_COLUMNS, "line too long: {}", line);
        }
        let mut r = PgnReader::new(Cursor::new(text.clone().into_bytes()));
        let back: Vec<PgnGame> = r.by_ref().collect();
        prop_assert_eq!(r.summary().skipped(), 0, "{:?}\n{}", r.take_skips(), text);
        prop_assert_eq!(back.len(), 1);
        prop_assert_eq!(&back[0], &g, "\n{}", text);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let _ = EngineEval::parse(&String::from_utf8_lossy(&bytes));
        let (games, _, r) = read_bytes(bytes);
        prop_assert_eq!(r.summary().games, games.len() as u64);
    }

    #[test]
    fn pgn_like_garbage_never_panics_and_games_read_are_sound(
        parts in prop::collection::vec((0..FRAGMENTS.len(), 0..3usize), 0..200)
    ) {
        let text: String = parts.iter().map(|&(i, sep)| format!("{}{}", FRAGMENTS[i], [" ", "", "\n"][sep])).collect();
        let (games, skips, r) = read_all(&text);
        let s = r.summary();
        prop_assert_eq!(s.games, games.len() as u64);
        prop_assert_eq!(s.skipped(), skips.len() as u64);
        let mut last = 0;
        for g in &games {
            prop_assert!(g.number > last);
            last = g.number;
            prop_assert_eq!(g.comments.len(), g.moves.len());
            // Every game read is legal and survives a write/read cycle.
            let text = g.to_pgn().unwrap();
            let (again, _, _) = read_all(&text);
            prop_assert_eq!((&again[0].moves, again[0].start, again[0].result), (&g.moves, g.start, g.result));
        }
    }
}

/// The whole shipped corpus (run with `--ignored`): no skips, and timing. The files are part
/// of the repository, so a missing one fails rather than passing with nothing read.
#[test]
#[ignore]
fn full_shared_corpus() {
    for name in ["sf15-selfplay-1.pgn.xz", "sf15-selfplay-2.pgn.xz"] {
        let path = format!("{}/data/{name}", env!("CARGO_MANIFEST_DIR"));
        let path = path.as_str();
        let input = open_pgn(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let t = std::time::Instant::now();
        let mut r = PgnReader::new(input);
        let plies: usize = r.by_ref().map(|g| g.moves.len()).sum();
        println!("{path}: {} ({plies} plies) in {:.2?}", r.summary(), t.elapsed());
        assert_eq!(r.summary().skipped(), 0, "{:?}", r.take_skips());
        assert!(r.summary().io_error.is_none());
        assert!(plies > 100_000, "{path}: only {plies} plies read");
    }
}

/// A move token holding control bytes is reported with them escaped, never raw.
#[test]
fn bad_tokens_are_shown_escaped() {
    let (games, skips, _) = read_bytes(b"[Event \"x\"]\n\n1. e4 \x1b[2Je5\x07 2. Nf3 1-0\n\n".to_vec());
    assert!(games.is_empty(), "{games:?}");
    let text = format!("{:?} {}", skips[0], skips[0]);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text}");
    assert!(skips[0].to_string().contains("\\x1b"), "{}", skips[0]);
}
