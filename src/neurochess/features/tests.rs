//! The features on hand-made positions, by colour mirroring, and the table.
use super::*;

fn feature(f: &[f32; FEATURES], name: &str) -> f32 {
    let i = table().iter().position(|(n, _, _)| n == name).unwrap_or_else(|| panic!("no feature {name}"));
    f[i]
}

fn of(fen: &str) -> [f32; FEATURES] {
    features(&Position::from_fen(fen).unwrap())
}

#[test]
fn the_table_names_every_feature_once() {
    let t = table();
    assert_eq!(t.len(), FEATURES);
    assert_eq!(FEATURES, 175);
    let mut names: Vec<&str> = t.iter().map(|(n, _, _)| n.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), FEATURES, "names are unique");
}

#[test]
fn the_start_position() {
    let f = of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    for side in ["w.", "b."] {
        for (name, want) in [
            ("pawns", 1.0),
            ("knights", 1.0),
            ("queens", 1.0),
            ("bishop_pair", 1.0),
            ("file_e.pawns", 0.25),
            ("file_e.doubled", 0.0),
            ("file_e.isolated", 0.0),
            ("file_e.passed", 0.0),
            ("mob_knights", 4.0 / 16.0),
            ("mob_bishops", 0.0),
            ("king_shield", 1.0),
            ("castled", 0.0),
            ("can_castle_short", 1.0),
            ("centre_pawns", 0.0),
            ("developed", 0.0),
            ("hanging", 0.0),
            ("islands", 0.25),
        ] {
            assert_eq!(feature(&f, &format!("{side}{name}")), want, "{side}{name}");
        }
    }
    assert_eq!(feature(&f, "g.side_to_move"), 1.0);
    assert_eq!(feature(&f, "g.legal_moves"), 0.5);
    assert_eq!((feature(&f, "g.phase"), feature(&f, "g.material"), feature(&f, "g.pawns")), (1.0, 0.0, 1.0));
    assert!(f.iter().all(|v| v.is_finite() && (-1.0..=2.0).contains(v)));
}

#[test]
fn pawn_structure() {
    // White: a2, a3 (doubled and isolated), d5 (passed: no black pawn on c, d, e ahead);
    // Black: h7, g6 (one island), e7 (stops nothing on d: d5's span is c6-e8).
    let f = of("4k3/4p2p/6p1/3P4/8/P7/P7/4K3 w - - 0 1");
    assert_eq!(feature(&f, "w.file_a.doubled"), 1.0 / 3.0);
    assert_eq!(feature(&f, "w.file_a.isolated"), 0.5);
    assert_eq!(feature(&f, "w.file_d.passed"), 0.0, "e7 watches d6");
    assert_eq!(feature(&f, "w.islands"), 0.5);
    let f = of("4k3/7p/6p1/3P4/8/P7/P7/4K3 w - - 0 1");
    assert_eq!(feature(&f, "w.file_d.passed"), 1.0);
    assert_eq!(feature(&f, "w.passed_rank"), 4.0 / 7.0);
    assert_eq!(feature(&f, "b.islands"), 0.25);
    assert_eq!(feature(&f, "b.file_g.passed"), 1.0, "no white pawn on f, g, h");
}

#[test]
fn king_safety_and_threats() {
    // White castled short behind f2 g2 h2; the black pawn on a6 attacks the undefended
    // white knight on b5.
    let f = of("4k3/8/p7/1N6/8/8/5PPP/6K1 w - - 0 1");
    assert_eq!(feature(&f, "w.king_shield"), 1.0);
    assert_eq!(feature(&f, "w.castled"), 1.0);
    assert_eq!(feature(&f, "w.hanging"), 3.0 / 39.0);
    assert_eq!(feature(&f, "w.attacked_by_less"), 1.0 / 8.0);
    assert_eq!(feature(&f, "b.pawn_threats"), 1.0 / 8.0);
    assert_eq!(feature(&f, "g.material"), 5.0 / 39.0, "knight and three pawns against a pawn");
    // A rook on an open file and on the 7th rank, a queen near the enemy king.
    let f = of("6k1/R7/8/8/8/8/8/4K2Q b - - 0 1");
    assert_eq!((feature(&f, "w.rook_open"), feature(&f, "w.rook_seventh")), (0.5, 0.5));
    assert_eq!(feature(&f, "w.queen_tropism"), 0.0, "h1 is 7 squares from g8");
    assert_eq!(feature(&f, "g.side_to_move"), -1.0);
    assert_eq!(feature(&f, "b.king_open_file"), 1.0);
}

/// The two blocks are computed alike from each side: a colour-mirrored position's
/// features are the position's with the blocks swapped and the signed globals negated.
#[test]
fn colour_mirroring_swaps_the_blocks() {
    let fens = [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
        "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    ];
    for fen in fens {
        let p = Position::from_fen(fen).unwrap();
        let (a, b) = (features(&p), features(&p.mirror()));
        let want = mirrored(&a);
        for i in 0..FEATURES {
            assert!((b[i] - want[i]).abs() < 1e-6, "{fen}: {} is {} mirrored, {} here", table()[i].0, want[i], b[i]);
        }
    }
}

#[test]
fn quiescence_is_no_check_and_no_winning_capture() {
    assert!(is_quiescent(&Position::startpos()));
    assert!(!is_quiescent(&Position::from_fen("4k3/8/p7/1N6/8/8/5PPP/6K1 b - - 0 1").unwrap()), "axb5 wins a knight");
    assert!(!is_quiescent(&Position::from_fen("4k3/8/8/8/8/8/4q3/4K3 w - - 0 1").unwrap()), "in check");
    assert!(is_quiescent(&Position::from_fen("4k3/8/p7/1N6/8/8/5PPP/6K1 w - - 0 1").unwrap()), "White has no capture");
}

#[test]
fn quiescence_for_both_sides_sees_the_threat_of_the_side_not_to_move() {
    assert!(is_quiescent_both(&Position::startpos()));
    let threatened = Position::from_fen("4k3/8/p7/1N6/8/8/5PPP/6K1 w - - 0 1").unwrap();
    assert!(is_quiescent(&threatened) && !is_quiescent_both(&threatened), "Black's axb5 would win a knight");
    assert!(!is_quiescent_both(&Position::from_fen("4k3/8/p7/1N6/8/8/5PPP/6K1 b - - 0 1").unwrap()), "axb5 wins a knight");
    assert!(!is_quiescent_both(&Position::from_fen("4k3/8/8/8/8/8/4q3/4K3 w - - 0 1").unwrap()), "in check");
}

/// The compile-time front spans are the squares ahead on the pawn's file and its neighbours,
/// checked square by square against the definition.
#[test]
fn front_spans_are_the_squares_ahead() {
    for sq in (0..64).map(|i| Square::from_coords(i % 8, i / 8)) {
        for c in Color::ALL {
            let want = (0..64u8).map(|i| Square::from_coords(i % 8, i / 8)).filter(|t| {
                (t.file() as i32 - sq.file() as i32).abs() <= 1 && if c == Color::White { t.rank() > sq.rank() } else { t.rank() < sq.rank() }
            });
            let want = want.fold(Bitboard::EMPTY, |b, t| b | Bitboard::from_square(t));
            assert_eq!(front_span(c, sq), want, "{c:?} {sq:?}");
        }
    }
}
