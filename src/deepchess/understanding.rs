//! §5.1 "Static understanding of chess positions": pairs of nearly identical positions, one
//! with a feature good for White and one without, asked of a comparator net; and Fig. 2, the
//! grandmasters' positional sacrifices, asked as "which move's position does the net prefer".
//!
//! The paper lists its concepts (piece values, imbalances such as a rook against a knight and
//! a bishop, king safety, the bishop pair, mobility, passed, isolated and doubled pawns,
//! castling rights) but not its positions: ours are built on one quiet Italian middlegame
//! (or, for pawn structure, a rook-less ending), changing one thing at a time, material equal
//! unless material is the concept. Each pair is asked in both orders, averaged
//! (`(p(A, B) + 1 − p(B, A)) / 2`), so a net's order bias cancels.

use super::features::Features;
use super::model::Net;
use crate::chess::{Move, Position};

/// One pair: `better` has the feature (good for White), `worse` has not.
pub struct Pair {
    pub group: &'static str,
    pub concept: &'static str,
    pub better: &'static str,
    pub worse: &'static str,
}

/// The Italian middlegame after 1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.c3 Nf6 5.d3 d6 6.O-O O-O.
pub const BASE: &str = "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RNBQ1RK1 w - - 0 7";

pub const PAIRS: &[Pair] = &[
    Pair { group: "piece values", concept: "a pawn more (White's a2 missing in B)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/1P3PPP/RNBQ1RK1 w - - 0 7" },
    Pair { group: "piece values", concept: "a knight more (b1)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/R1BQ1RK1 w - - 0 7" },
    Pair { group: "piece values", concept: "a bishop more (c1)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RN1Q1RK1 w - - 0 7" },
    Pair { group: "piece values", concept: "a rook more (a1)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/1NBQ1RK1 w - - 0 7" },
    Pair { group: "piece values", concept: "a queen more (d1)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RNB2RK1 w - - 0 7" },
    Pair { group: "piece values", concept: "Black's knight f6 missing (A) or not", better: "r1bq1rk1/ppp2ppp/2np4/2b1p3/2B1P3/2PP1N2/PP3PPP/RNBQ1RK1 w - - 0 7", worse: BASE },
    Pair {
        group: "imbalances",
        concept: "two minor pieces against a rook: White's (A) or Black's (B)",
        better: "r1bq1rk1/ppp2ppp/3p1n2/4p3/2B1P3/2PP1N2/PP3PPP/1NBQ1RK1 w - - 0 7",
        worse: "2bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/R2Q1RK1 w - - 0 7",
    },
    Pair {
        group: "imbalances",
        concept: "the exchange: White's rook against a knight (A) or the reverse (B)",
        better: "2bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/R1BQ1RK1 w - - 0 7",
        worse: "r1bq1rk1/ppp2ppp/3p1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/1NBQ1RK1 w - - 0 7",
    },
    Pair {
        group: "positional",
        concept: "bishop pair: White's (A) or Black's (B), knights for the missing bishop",
        better: "r2q1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/R1BQ1RK1 w - - 0 7",
        worse: "r1bq1rk1/ppp2ppp/3p1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RN1Q1RK1 w - - 0 7",
    },
    Pair { group: "positional", concept: "king safety: the castled king's g- and h-pawns at home (A) or pushed to g4, h4 (B)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P1PP/2PP1N2/PP3P2/RNBQ1RK1 w - - 0 7" },
    Pair { group: "positional", concept: "mobility: the bishop developed to g5 (A) or at home on c1 (B)", better: "r1bq1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P3/2PP1N2/PP3PPP/RN1Q1RK1 w - - 0 7", worse: BASE },
    Pair { group: "positional", concept: "castling rights: White keeps both (A) or has lost the king's side (B)", better: "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5", worse: "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w Qkq - 1 5" },
    Pair { group: "positional", concept: "castling rights: Black has lost both (A) or keeps them (B)", better: "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQ - 1 5", worse: "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5" },
    Pair { group: "pawn structure", concept: "doubled and isolated pawns: White's b-pawn on b2 (A) or on c2, doubling c2/c3 and isolating a2 (B)", better: BASE, worse: "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/P1P2PPP/RNBQ1RK1 w - - 0 7" },
    Pair { group: "pawn structure", concept: "passed pawn: White's d5 passed (A, Black's pawn on b7) or stopped by c7 (B)", better: "6k1/pp3ppp/8/3P4/8/8/P4PPP/6K1 w - - 0 1", worse: "6k1/p1p2ppp/8/3P4/8/8/P4PPP/6K1 w - - 0 1" },
    Pair { group: "pawn structure", concept: "isolated pawn: Black's (A: an e-pawn without d- or f-pawns) or White's (B: the same on e2)", better: "6k1/pp2p1pp/8/8/8/8/PP3PPP/6K1 w - - 0 1", worse: "6k1/pp3ppp/8/8/8/8/PP2P1PP/6K1 w - - 0 1" },
];

/// P(`a` is better for White than `b`), both orders averaged.
pub fn prefers(net: &Net, a: &Position, b: &Position) -> Result<f32, String> {
    let (fa, fb) = (Features::from_position(a), Features::from_position(b));
    let ab = net.prob_better(&[fa.as_slice()], &[fb.as_slice()]).map_err(|e| e.to_string())?[0];
    let ba = net.prob_better(&[fb.as_slice()], &[fa.as_slice()]).map_err(|e| e.to_string())?[0];
    Ok((ab + 1.0 - ba) / 2.0)
}

/// A Fig. 2 position: White to move, and the grandmaster's sacrifice.
pub struct Sacrifice {
    pub game: &'static str,
    pub fen: &'static str,
    pub uci: &'static str,
}

/// Where the net puts each legal move's position: each position's wins in the round robin of
/// all of them (both orders averaged, a win when above one half); returns the sacrifice's
/// rank (1 = preferred; ties share the better rank), the number of moves, and the net's
/// first choice.
pub fn rank_of_move(net: &Net, pos: &Position, mv: Move) -> Result<(usize, usize, Move), String> {
    let moves: Vec<Move> = pos.legal_moves().as_slice().to_vec();
    let i = moves.iter().position(|&m| m == mv).ok_or("the move is not legal there")?;
    let after: Vec<Position> = moves
        .iter()
        .map(|&m| {
            let mut p = *pos;
            p.play(m);
            p
        })
        .collect();
    let mut wins = vec![0usize; moves.len()];
    for x in 0..moves.len() {
        for y in (x + 1)..moves.len() {
            if prefers(net, &after[x], &after[y])? > 0.5 {
                wins[x] += 1;
            } else {
                wins[y] += 1;
            }
        }
    }
    let rank = 1 + wins.iter().filter(|&&w| w > wins[i]).count();
    let best = (0..moves.len()).max_by_key(|&k| (wins[k], std::cmp::Reverse(k))).expect("a move");
    Ok((rank, moves.len(), moves[best]))
}

/// Fig. 2's positions (White to move before the grandmaster's sacrifice; the paper names the
/// games and moves, not the positions: these are the games' positions before those moves,
/// replayed from public PGN collections).
pub const SACRIFICES: &[Sacrifice] = &[
    Sacrifice { game: "Tal – Larsen, Bled 1965 (match game 10), 16.Nd5", fen: "rqb2rk1/3nbppp/p2pp3/6P1/1p1BPP2/2NB1Q2/PPP4P/2KR3R w - - 0 16", uci: "c3d5" },
    Sacrifice { game: "Aronian – Leko, Nalchik 2009, 34.Re5", fen: "1r1r2k1/p4pp1/4p1np/1pP4q/3P3P/2n2PP1/P1B1RQK1/2B1R3 w - - 2 34", uci: "e2e5" },
    Sacrifice { game: "Alekhine – Golombek, Margate 1938, 19.d5", fen: "1r1r2k1/pp1b2pp/2nqp3/5pN1/3P4/P3P1P1/2Q2PBP/R1R3K1 w - - 0 19", uci: "d4d5" },
    Sacrifice { game: "Seirawan – Kozul, Wijk aan Zee 1991, 34.c5", fen: "8/7b/1p1p3k/pP1PrprP/2P1pKP1/4N3/P3B3/5R2 w - - 2 34", uci: "c4c5" },
];
