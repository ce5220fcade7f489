//! Property tests over random legal games: incremental zobrist, FEN and notation round
//! trips, king safety of every generated move, mirror symmetry of perft, divide sums.

use deepchess::chess::perft::{divide, perft};
use deepchess::chess::{Bitboard, Color, Move, Position, Role};
use proptest::prelude::*;

/// Plays a random legal game of up to `plies` moves chosen by `picks`; returns every position.
fn random_game(start: Position, picks: &[u16]) -> Vec<(Position, Option<Move>)> {
    let mut out = Vec::new();
    let mut pos = start;
    for &pick in picks {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves.as_slice()[pick as usize % moves.len()];
        out.push((pos, Some(m)));
        pos.play(m);
    }
    out.push((pos, None));
    out
}

const STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
];

fn game_strategy() -> impl Strategy<Value = Vec<(Position, Option<Move>)>> {
    (0..STARTS.len(), prop::collection::vec(any::<u16>(), 0..120))
        .prop_map(|(s, picks)| random_game(Position::from_fen(STARTS[s]).unwrap(), &picks))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn incremental_zobrist_equals_recomputed(game in game_strategy()) {
        for (pos, _) in &game {
            prop_assert_eq!(pos.hash(), pos.compute_hash(), "{}", pos.fen());
        }
    }

    #[test]
    fn fen_round_trip(game in game_strategy()) {
        for (pos, _) in &game {
            let fen = pos.fen();
            let back = Position::from_fen(&fen).map_err(|e| TestCaseError::fail(format!("{fen}: {e}")))?;
            prop_assert_eq!(back, *pos, "{}", fen);
            prop_assert_eq!(back.fen(), fen);
        }
    }

    #[test]
    fn no_move_leaves_own_king_attacked(game in game_strategy()) {
        for (pos, _) in &game {
            let us = pos.turn();
            for &m in pos.legal_moves().iter() {
                let mut after = *pos;
                after.play(m);
                let k = after.king(us);
                prop_assert!(!after.is_attacked(k, us.flip(), after.occupied()), "{} {}", pos.fen(), m);
            }
        }
    }

    #[test]
    fn every_move_round_trips_through_uci_and_san(game in game_strategy()) {
        for (pos, _) in &game {
            for &m in pos.legal_moves().iter() {
                let uci = m.to_string();
                prop_assert_eq!(pos.parse_uci(&uci).unwrap(), m);
                let san = pos.san(m);
                prop_assert_eq!(pos.parse_san(&san).map_err(|e| TestCaseError::fail(e.to_string()))?, m, "{} {}", pos.fen(), san);
            }
        }
    }

    #[test]
    fn generated_moves_are_exactly_the_legal_ones(game in game_strategy()) {
        // Cross-check: every from/to/promotion combination is legal iff it was generated,
        // and legality agrees with "make it and see if the king is attacked".
        for (pos, _) in game.iter().step_by(7) {
            let list = pos.legal_moves();
            prop_assert_eq!(list.len(), pos.count_legal());
            for from in pos.by_color(pos.turn()) {
                for to in deepchess::chess::Square::all() {
                    let promos: &[Option<Role>] = if pos.pieces(pos.turn(), Role::Pawn).has(from) && (to.rank() == 0 || to.rank() == 7) {
                        &[Some(Role::Queen), Some(Role::Knight)]
                    } else {
                        &[None]
                    };
                    for &p in promos {
                        let m = Move::new(from, to, p);
                        prop_assert_eq!(pos.is_legal(m), list.contains(&m), "{} {}", pos.fen(), m);
                    }
                }
            }
        }
    }

    #[test]
    fn mirrored_perft_equals_perft_and_divide_sums(game in game_strategy()) {
        let (pos, _) = game[game.len() / 2];
        let m = pos.mirror();
        prop_assert_eq!(m.mirror(), pos);
        prop_assert_eq!(m.turn(), pos.turn().flip());
        prop_assert_eq!(perft(&m, 3), perft(&pos, 3), "{}", pos.fen());
        let total: u64 = divide(&pos, 3).iter().map(|(_, n)| n).sum();
        prop_assert_eq!(total, perft(&pos, 3));
    }

    #[test]
    fn garbage_into_fen_never_panics(s in ".{0,100}") {
        let _ = Position::from_fen(&s);
    }

    #[test]
    fn fen_like_garbage_never_panics(s in "[rnbqkpRNBQKP1-9/ wb-]{0,60}( [wb])?( [KQkq-]{1,4})?( [a-h1-8-]{1,2})?( [0-9]{1,6}){0,2}") {
        if let Ok(p) = Position::from_fen(&s) {
            // Anything accepted must print and parse back to itself.
            prop_assert_eq!(Position::from_fen(&p.fen()).unwrap(), p);
        }
    }

    /// Generation restricted to target squares (quiescence's captures and promotions) is
    /// the full generation filtered, in the same order (the search's ties depend on it).
    #[test]
    fn masked_generation_is_filtered_generation(game in game_strategy(), mask in any::<u64>()) {
        for (pos, _) in &game {
            let theirs = pos.by_color(pos.turn().flip());
            let ep = pos.ep_square().map_or(Bitboard::EMPTY, Bitboard::from_square);
            for (to, pawn_to) in [(theirs, theirs | ep | Bitboard::BACK_RANKS), (Bitboard(mask), Bitboard(mask.rotate_left(17)))] {
                let mut want = Vec::new();
                pos.for_each_piece_moves(|pm| {
                    let keep = if pm.role == Role::Pawn { pawn_to } else { to };
                    pm.for_each(|m| if keep.has(m.to) { want.push(m) });
                    false
                });
                let mut got = Vec::new();
                pos.for_each_piece_moves_to(to, pawn_to, |pm| {
                    pm.for_each(|m| got.push(m));
                    false
                });
                prop_assert_eq!(got, want, "{}", pos.fen());
            }
        }
    }

    #[test]
    fn garbage_into_san_and_uci_never_panics(s in "[a-hKQRBNOPx0-9=+#!?o-]{0,10}|.{0,12}", g in game_strategy()) {
        let (pos, _) = g[g.len() / 2];
        if let Ok(m) = pos.parse_san(&s) { prop_assert!(pos.is_legal(m)); }
        if let Ok(m) = pos.parse_uci(&s) { prop_assert!(pos.is_legal(m)); }
    }
}

#[test]
fn color_enum_flips() {
    assert_eq!(Color::White.flip(), Color::Black);
}
