//! The action (seed 002, "selecting the action"): "composing the piece selector network
//! (pCNN) with all move selector networks (mCNN) by multiplying the values in the pCNN with the
//! highest value of the corresponding mCNN, and taking the largest value obtained over the
//! entire composition". So in two stages: for each square holding one of the agent's pieces
//! with a legal move, the best legal destination by that piece type's move selector; then the
//! from-square whose piece-selector value composed with that best destination's value is
//! largest. Both selectors are masked to legal squares (own pieces that can move; the chosen
//! piece's legal destinations): masked squares are never candidates.
//!
//! Composition: the plain product ranks two negative values above everything, and Q values
//! start negative here (−0.1 for every move that captures nothing). The author's code
//! (`calculate_action_value`) composes by sign: p·m when both are positive or p < 0 < m,
//! 1.5·p·m when m < 0 < p, −2·p·m when both are negative. That is [`Compose::Signed`], the
//! default; [`Compose::Product`] is the text's product, kept for comparison.
//!
//! Special moves are moves like any other: castling is the king's move to g1/c1 (g8/c8), so
//! the king's selector scores it; en passant is the pawn's move to the passed square.
//! Promotion: the pawn's selector scores the square, and the piece it becomes is the one whose
//! own move selector values that square most among queen, rook, bishop and knight (the seed's
//! "how desirable it is to have a piece … in the given square"; it has no promotions).
//! Ties go to the first candidate in move-generation order, so a choice is a function of the
//! position and the nets.

use crate::chess::{Move, Position, Role};

/// How a piece-selector value and a move-selector value combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compose {
    Signed,
    Product,
}

impl Compose {
    pub fn name(self) -> &'static str {
        match self {
            Compose::Signed => "signed",
            Compose::Product => "product",
        }
    }

    pub fn parse(s: &str) -> Option<Compose> {
        match s {
            "signed" => Some(Compose::Signed),
            "product" => Some(Compose::Product),
            _ => None,
        }
    }

    pub fn apply(self, p: f32, m: f32) -> f32 {
        match self {
            Compose::Product => p * m,
            Compose::Signed => {
                if p < 0.0 && m < 0.0 {
                    -2.0 * p * m
                } else if m < 0.0 && p > 0.0 {
                    1.5 * p * m
                } else {
                    p * m
                }
            }
        }
    }
}

/// The agent's action and the two values it was chosen by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    pub mv: Move,
    /// The piece selector's value of the from-square, the moved piece's selector's value of
    /// the destination, and their composition.
    pub p: f32,
    pub m: f32,
    pub score: f32,
}

/// The outputs of the side to move's nets for one position (64 values each, by square).
pub struct Values {
    pub nets: [[f32; 64]; 7],
}

impl Default for Values {
    fn default() -> Self {
        Values { nets: [[0.0; 64]; 7] }
    }
}

/// The promotion piece for a pawn reaching `to`: the one whose move selector values `to` most.
fn promotion_piece(values: &Values, to: usize) -> Role {
    let mut best = (f32::NEG_INFINITY, Role::Queen);
    for r in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
        let v = values.nets[1 + r.index()][to];
        if v > best.0 {
            best = (v, r);
        }
    }
    best.1
}

/// For each from-square, the legal move of the best destination (index into `moves`), with
/// its m; promotions resolved to one piece.
fn best_per_from(pos: &Position, values: &Values, moves: &[Move]) -> Vec<(usize, f32)> {
    let mut best: Vec<Option<(usize, f32)>> = vec![None; 64];
    for (i, &m) in moves.iter().enumerate() {
        if let Some(r) = m.promotion {
            if r != promotion_piece(values, m.to.index()) {
                continue;
            }
        }
        let role = pos.role_on(m.from).expect("a legal move has a piece");
        let v = values.nets[1 + role.index()][m.to.index()];
        let slot = &mut best[m.from.index()];
        if slot.map_or(true, |(_, b)| v > b) {
            *slot = Some((i, v));
        }
    }
    // In move-generation order of the first move of each from-square, for the tie rule.
    let mut out: Vec<(usize, f32)> = best.into_iter().flatten().collect();
    out.sort_by_key(|&(i, _)| i);
    out
}

/// The agent's action in `pos` (which has a legal move) from its nets' `values`.
pub fn choose(pos: &Position, values: &Values, rule: Compose) -> Choice {
    choose_among(pos, values, rule, pos.legal_moves().as_slice())
}

/// [`choose`] among `moves` (not empty): the pseudo-legal moves in an environment without
/// check.
pub fn choose_among(pos: &Position, values: &Values, rule: Compose, moves: &[Move]) -> Choice {
    let mut best: Option<Choice> = None;
    for (i, m) in best_per_from(pos, values, moves) {
        let mv = moves[i];
        let p = values.nets[0][mv.from.index()];
        let score = rule.apply(p, m);
        if best.map_or(true, |b| score > b.score) {
            best = Some(Choice { mv, p, m, score });
        }
    }
    best.expect("a position with a legal move")
}

/// Below every candidate's score: what a move that is not its square's best destination gets.
const NOT_A_CANDIDATE: f32 = -1e9;

/// A score per move of `moves` whose maximum is [`choose`]'s move: each from-square's best
/// destination gets its composed value; other moves rank below all of those, in the order of
/// their own composition.
pub fn move_scores(pos: &Position, values: &Values, rule: Compose, moves: &[Move], scores: &mut Vec<f32>) {
    scores.clear();
    let legal = pos.legal_moves();
    let chosen: Vec<Move> = best_per_from(pos, values, legal.as_slice()).into_iter().map(|(i, _)| legal.as_slice()[i]).collect();
    for &mv in moves {
        let role = pos.role_on(mv.from).expect("a legal move has a piece");
        let s = rule.apply(values.nets[0][mv.from.index()], values.nets[1 + role.index()][mv.to.index()]);
        scores.push(if chosen.contains(&mv) { s } else { NOT_A_CANDIDATE + s.clamp(-1e6, 1e6) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Square;

    fn sq(s: &str) -> usize {
        Square::parse(s).unwrap().index()
    }

    #[test]
    fn the_signed_rule_never_lets_two_negatives_win() {
        let c = Compose::Signed;
        assert_eq!(c.apply(2.0, 3.0), 6.0);
        assert_eq!(c.apply(-2.0, 3.0), -6.0);
        assert_eq!(c.apply(2.0, -3.0), -9.0);
        assert_eq!(c.apply(-2.0, -3.0), -12.0);
        assert_eq!(Compose::Product.apply(-2.0, -3.0), 6.0);
        assert!(c.apply(-0.1, -0.1) < c.apply(-0.1, 0.0));
    }

    /// The two stages on a hand-made position: the best destination per piece, then the
    /// best composition; masked (illegal) squares are never chosen however high their value.
    #[test]
    fn choice_is_the_seed_composition_over_legal_squares() {
        let pos = Position::from_fen("4k3/8/8/8/8/8/3P4/R3K3 w Q - 0 1").unwrap();
        let mut v = Values::default();
        v.nets[0][sq("a1")] = 1.0;
        v.nets[0][sq("d2")] = 2.0;
        v.nets[0][sq("e8")] = 100.0; // the opponent's king: masked
        v.nets[0][sq("h5")] = 100.0; // an empty square: masked
        let rook = 1 + Role::Rook.index();
        v.nets[rook][sq("a8")] = 3.0;
        v.nets[rook][sq("h1")] = 50.0; // behind the king: illegal for the rook
        v.nets[1 + Role::Pawn.index()][sq("d3")] = 1.0;
        v.nets[1 + Role::Pawn.index()][sq("d4")] = 1.2;
        let c = choose(&pos, &v, Compose::Signed);
        assert_eq!(c.mv, pos.parse_uci("a1a8").unwrap(), "{c:?}");
        assert_eq!((c.p, c.m, c.score), (1.0, 3.0, 3.0));
        // The move scores put the same move first.
        let moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
        let mut s = Vec::new();
        move_scores(&pos, &v, Compose::Signed, &moves, &mut s);
        let top = (0..moves.len()).max_by(|&a, &b| s[a].partial_cmp(&s[b]).unwrap().then(b.cmp(&a))).unwrap();
        assert_eq!(moves[top], c.mv);
        // Castling is the king's move: valued by the king's selector.
        v.nets[0][sq("e1")] = 10.0;
        v.nets[1 + Role::King.index()][sq("c1")] = 1.0;
        assert_eq!(choose(&pos, &v, Compose::Signed).mv, pos.parse_uci("e1c1").unwrap());
    }

    #[test]
    fn a_promotion_becomes_the_piece_that_wants_the_square() {
        let pos = Position::from_fen("8/4P2k/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let mut v = Values::default();
        v.nets[0][sq("e7")] = 1.0;
        v.nets[1 + Role::Pawn.index()][sq("e8")] = 1.0;
        v.nets[1 + Role::Knight.index()][sq("e8")] = 0.5;
        v.nets[1 + Role::Queen.index()][sq("e8")] = 0.2;
        let c = choose(&pos, &v, Compose::Signed);
        assert_eq!(c.mv, pos.parse_uci("e7e8n").unwrap());
    }
}
