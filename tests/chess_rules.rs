//! Hand-made cases: FEN errors name the field, SAN printing and tolerant parsing,
//! game endings by rule.

use deepchess::chess::{Ending, Game, Outcome, Color, Position};

fn field_of(fen: &str) -> &'static str {
    match Position::from_fen(fen) {
        Ok(p) => panic!("accepted bad FEN {fen} as {}", p.fen()),
        Err(e) => {
            assert!(!e.message.is_empty());
            e.field
        }
    }
}

#[test]
fn fen_errors_name_the_field() {
    let ok = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    assert!(Position::from_fen(ok).is_ok());
    // Relaxed form without clocks.
    assert!(Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -").is_ok());
    let cases: &[(&str, &str)] = &[
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq", "fen"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra", "fen"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "board"),
        ("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "board"),
        ("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "board"),
        ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "board"),
        ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "board"),
        ("rnbqqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "board"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w kq - 0 1", "board"),
        ("rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQq - 0 1", "board"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side"),
        // Black king attacked with White to move: the side not to move is in check.
        ("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", "side"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqK - 0 1", "castling"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkz - 0 1", "castling"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "castling"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w KQkq - 0 1", "board"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w KQkq - 0 1", "castling"),
        ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e4 0 1", "en passant"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1", "en passant"),
        ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e9 0 1", "en passant"),
        ("rnbqkbnr/pppppppp/8/8/4P3/4P3/PPP2PPP/RNBQKBNR b KQkq e3 0 1", "en passant"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "halfmove clock"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 -3", "fullmove number"),
    ];
    for (fen, field) in cases {
        assert_eq!(field_of(fen), *field, "{fen}");
    }
    // Counters beyond 16 bits are numbers out of range, not "not a number".
    for fen in ["8/8/4k3/8/8/3K4/8/8 w - - 65536 1", "8/8/4k3/8/8/3K4/8/8 w - - 0 99999999999999999999"] {
        let e = Position::from_fen(fen).unwrap_err().to_string();
        assert!(e.contains("out of range") && e.contains("65535"), "{fen}: {e}");
    }
    assert!(Position::from_fen("8/8/4k3/8/8/3K4/8/8 w - - 65535 65535").is_ok());
}

#[test]
fn en_passant_square_is_kept_only_when_capturable() {
    // After 1.e4 no black pawn can take: the square is dropped (Polyglot convention).
    let p = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
    assert_eq!(p.ep_square(), None);
    let p = Position::from_fen("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3").unwrap();
    assert_eq!(p.ep_square().map(|s| s.to_string()), Some("e3".into()));
    assert_eq!(p.fen(), "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3");
}

#[test]
fn san_printing_disambiguates_and_marks_check() {
    let p = Position::from_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1").unwrap();
    let san = |u: &str| p.san(p.parse_uci(u).unwrap());
    assert_eq!(san("e1g1"), "O-O");
    assert_eq!(san("e1c1"), "O-O-O");
    assert_eq!(san("e5f7"), "Nxf7");
    assert_eq!(san("g2h3"), "gxh3");
    assert_eq!(san("c3b1"), "Nb1");
    assert_eq!(san("a1b1"), "Rb1");
    // The king on e1 blocks h1-d1, so no disambiguation; with the king away both rooks reach d1.
    let q = Position::from_fen("4k3/8/8/8/8/8/8/R3K2R w - - 0 1").unwrap();
    assert_eq!(q.san(q.parse_uci("a1d1").unwrap()), "Rd1");
    let q = Position::from_fen("4k3/8/8/8/8/8/4K3/R6R w - - 0 1").unwrap();
    assert_eq!(q.san(q.parse_uci("a1d1").unwrap()), "Rad1");
    let r = Position::from_fen("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1").unwrap();
    assert_eq!(r.san(r.parse_uci("a1a3").unwrap()), "R1a3");
    let s = Position::from_fen("2k5/8/8/8/Q6Q/8/8/Q3K3 w - - 0 1").unwrap();
    assert_eq!(s.san(s.parse_uci("a4d4").unwrap()), "Qa4d4");
    let mate = Position::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap();
    assert_eq!(mate.san(mate.parse_uci("a1a8").unwrap()), "Ra8#");
    let promo = Position::from_fen("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    assert_eq!(promo.san(promo.parse_uci("b7b8q").unwrap()), "b8=Q+");
    assert_eq!(promo.san(promo.parse_uci("b7b8n").unwrap()), "b8=N");
}

#[test]
fn san_parsing_is_tolerant_but_strict_about_legality() {
    let p = Position::startpos();
    for s in ["e4", "e4!?", "e4!!", "Pe4", "e2e4", "e2-e4"] {
        assert_eq!(p.parse_san(s).unwrap().to_string(), "e2e4", "{s}");
    }
    assert_eq!(p.parse_san("Nf3").unwrap().to_string(), "g1f3");
    assert_eq!(p.parse_san("Ng1f3").unwrap().to_string(), "g1f3");
    let e = p.parse_san("e5").unwrap_err();
    assert!(e.message.contains("illegal"), "{e}");
    assert!(p.parse_san("Nd2").unwrap_err().message.contains("illegal"));
    assert!(p.parse_san("").is_err());
    assert!(p.parse_san("Zf3").is_err());
    let amb = Position::from_fen("4k3/8/8/8/8/8/4K3/R6R w - - 0 1").unwrap();
    let e = amb.parse_san("Rd1").unwrap_err();
    assert!(e.message.contains("ambiguous"), "{e}");
    assert_eq!(amb.parse_san("Rhd1").unwrap().to_string(), "h1d1");
    let castles = Position::from_fen("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1").unwrap();
    assert_eq!(castles.parse_san("0-0").unwrap().to_string(), "e1g1");
    assert_eq!(castles.parse_san("O-O-O").unwrap().to_string(), "e1c1");
    assert!(amb.parse_san("O-O").is_err());
    let promo = Position::from_fen("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    assert_eq!(promo.parse_san("b8Q").unwrap().to_string(), "b7b8q");
    assert_eq!(promo.parse_san("b8=N").unwrap().to_string(), "b7b8n");
    assert!(promo.parse_san("b8").unwrap_err().message.contains("promote"));
    let ep = Position::from_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2").unwrap();
    assert_eq!(ep.parse_san("exd6").unwrap().to_string(), "e5d6");
    assert_eq!(ep.san(ep.parse_uci("e5d6").unwrap()), "exd6");
    // UCI errors.
    assert!(p.parse_uci("e2e5").unwrap_err().message.contains("illegal"));
    assert!(p.parse_uci("e7e8x").is_err());
    assert!(p.parse_uci("zz").is_err());
}

#[test]
fn tricky_legality() {
    // En passant that would expose the king along the rank is illegal.
    let p = Position::from_fen("8/8/8/KPp4r/8/8/8/6k1 w - c6 0 2").unwrap();
    assert!(p.parse_uci("b5c6").is_err());
    // En passant that captures the checking pawn is legal.
    let p = Position::from_fen("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1").unwrap();
    assert!(p.is_check());
    assert!(p.parse_uci("e4d3").is_ok());
    // Castling through an attacked square is illegal; out of check too.
    let p = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K1r1 w Qkq - 0 1").unwrap();
    assert!(p.is_check());
    assert!(p.parse_uci("e1c1").is_err());
    let p = Position::from_fen("4k3/8/8/8/8/8/5r2/R3K2R w KQ - 0 1").unwrap();
    assert!(p.parse_uci("e1g1").is_err(), "f1 attacked? no: f2 rook attacks f1");
    assert!(p.parse_uci("e1c1").is_ok());
    // Double check: only king moves.
    let p = Position::from_fen("4k3/8/8/8/8/5n2/8/4K2r w - - 0 1").unwrap();
    assert_eq!(p.checkers().count(), 2);
    assert!(p.legal_moves().iter().all(|m| m.from == p.king(Color::White)));
}

#[test]
fn game_endings_by_rule() {
    // Fool's mate.
    let mut g = Game::default();
    for s in ["f3", "e5", "g4", "Qh4#"] {
        g.play_san(s).unwrap();
    }
    assert_eq!(g.outcome(), Some((Outcome::Win(Color::Black), Ending::Checkmate)));

    // Threefold repetition by knight shuffles (start position occurs 3 times).
    let mut g = Game::default();
    for _ in 0..2 {
        for s in ["Nf3", "Nf6", "Ng1", "Ng8"] {
            assert_eq!(g.outcome(), None);
            g.play_san(s).unwrap();
        }
    }
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.outcome(), Some((Outcome::Draw, Ending::Repetition)));

    let stalemate = Position::from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap();
    assert_eq!(stalemate.ending(), Some(Ending::Stalemate));
    let fifty = Position::from_fen("4k3/8/8/8/8/8/4P3/R3K3 w - - 100 80").unwrap();
    assert_eq!(fifty.ending(), Some(Ending::FiftyMoves));
    // Mate on the 100th half-move is still mate.
    let mate50 = Position::from_fen("R3k3/8/4K3/8/8/8/8/8 b - - 100 80").unwrap();
    assert_eq!(mate50.ending(), Some(Ending::Checkmate));
    for (fen, insufficient) in [
        ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", true),
        ("4k3/8/8/8/8/8/8/4KN2 w - - 0 1", true),
        ("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", true),
        ("4kb2/8/8/8/8/8/8/4KB2 w - - 0 1", false), // f8 and f1: opposite colours
        ("4k1b1/8/8/8/8/8/8/4KB2 w - - 0 1", true), // g8 and f1: both light
        ("4k3/8/8/8/8/8/8/3NKN2 w - - 0 1", false),
        ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", false),
        ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", false),
    ] {
        assert_eq!(Position::from_fen(fen).unwrap().is_insufficient_material(), insufficient, "{fen}");
    }
    // Game::play rejects an illegal move.
    let mut g = Game::default();
    let bad = deepchess::chess::Move::new(deepchess::chess::Square::E1, deepchess::chess::Square::E8, None);
    assert!(g.play(bad).is_err());
    assert!(g.moves().is_empty());
}

/// `Position::without`: a piece taken off, the rest of the board kept; castling rights that
/// named a corner rook and an en-passant square whose pawn it was go with it; a king, an empty
/// square or a board `from_fen` would refuse give `None`.
#[test]
fn taking_a_piece_off_keeps_the_rest_of_the_board() {
    use deepchess::chess::Square;
    let start = Position::startpos();
    let q = start.without(Square::D1).unwrap();
    assert_eq!(q.fen(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1");
    let r = start.without(Square::H8).unwrap();
    assert_eq!(r.fen(), "rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQq - 0 1");
    assert_eq!(r.hash(), r.compute_hash());
    assert!(start.without(Square::E1).is_none(), "a king stays");
    assert!(start.without(Square::new(27)).is_none(), "an empty square");
    // Taking off the piece that shields the side not to move from check: not a board.
    let p = Position::from_fen("4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1").unwrap();
    assert!(p.without(Square::new(52)).is_none());
    // The pawn that just moved two squares: its en-passant square goes with it.
    let ep = Position::from_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1").unwrap();
    assert_eq!(ep.ep_square(), Some(Square::new(43)));
    assert_eq!(ep.without(Square::new(35)).unwrap().ep_square(), None);
}
