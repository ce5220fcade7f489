//! GNU Chess's evaluation as its authors described it in prose (seed 004: NeuroChess and its
//! opponent both "employ the same search mechanism which is adopted from GNU-Chess", and "both
//! learners used the original GNU-Chess features"), written here from that description: the
//! facts of John Stanback's `HEURISTICS` notes (GNU Chess 1.x, 12-16-87, kept in GNU Chess 4.0's
//! `doc/HEURISTICS`, 1991) and the 4.0 manual page (`gnuchess.1`: "A score of 100 is equivalent
//! to a 1 pawn advantage"; the total is "the sum of these individual piece scores"). No GNU
//! Chess code was read; where the prose gives no number ("about", "up to", "slightly", a value
//! only at the ends of the game) the number here is ours and the term's documentation says so.
//!
//! The evaluation is a table of named terms ([`TERMS`]): each is a centipawn contribution per
//! side (positive good for that side), and the score is White's sum minus Black's. The same
//! table is NeuroChess's "GNU" feature set (`neurochess::features`), so one list of terms serves
//! the opponent and the learner. docs/gnu-eval.md lists every term with its quotation.
//!
//! The stage ("a function of … the total non-pawn material remaining for both sides"; the prose
//! gives no formula): `s = (6680 − npm) / 5380` clamped to [0, 1], where npm is both sides'
//! non-pawn material at the values below (6680 at the start) — 0 in the opening, 1 once 1,300
//! or less remains. Terms that depend on the stage interpolate linearly in `s`.

use super::scalar::{Evaluator, ScoreComparator};
use crate::chess::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks};
use crate::chess::threats::en_prise;
use crate::chess::{Bitboard, Color, Position, Role, Square};

/// "Pawn 100, knight 330, bishop 330, rook 520, queen 980."
pub const MATERIAL: [i32; 6] = [100, 330, 330, 520, 980, 0];

/// One term of the table: its name and what the prose says (docs/gnu-eval.md has the quotation
/// and our fill for each).
pub struct TermDoc {
    pub name: &'static str,
    pub what: &'static str,
}

macro_rules! terms {
    ($($id:ident = $name:literal : $what:literal,)*) => {
        /// Term indices, in [`TERMS`] order.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum T { $($id,)* }
        /// Every term, in index order.
        pub const TERMS: &[TermDoc] = &[$(TermDoc { name: $name, what: $what },)*];
    };
}

terms! {
    Material = "material": "P 100, N 330, B 330, R 520, Q 980",
    PawnIsolated = "pawn.isolated": "−12, 14, 16, 20, 20, 16, 14, 12 by file a..h",
    PawnDoubled = "pawn.doubled": "−12 for each pawn sharing its file with another own pawn, unless isolated",
    PawnBackward = "pawn.backward": "−6 (no own pawn defends it or its stop square), −4 per enemy attack on it, −4 on a file without enemy pawns",
    PawnAdvance = "pawn.advance": "per rank advanced, 4 in the opening to 8 in the ending, less on the edges (ours: b, g ×¾; a, h ×½)",
    PawnCentreUnmoved = "pawn.centre_unmoved": "−10 for a d- or e-pawn on its 2nd rank, −15 more if blocked",
    PawnNearKing = "pawn.near_king": "+10 for each pawn within 2 squares of its king",
    PawnPassed = "pawn.passed": "by rank, about 15 on the 2nd to about 300 on the 7th when it cannot be stopped; less when blocked or attacked in front, and by stage (ours: see the table)",
    KnightCentre = "knight.centre": "0 in the corners to 30 in the centre",
    KnightNearEnemy = "knight.near_enemy": "for each enemy piece within 2 squares, by stage, 4 in the end game (ours: 2 in the opening; pawns and the king not counted)",
    KnightKingDistance = "knight.king_distance": "−1 per square of distance from either king",
    KnightOutpost = "knight.outpost": "up to 8 (by stage) where no enemy pawn can drive it away (ours: 8 in the opening to 0 in the ending)",
    BishopStage = "bishop.stage": "+10 in the end game as material falls off (ours: 10·s)",
    BishopMobility = "bishop.mobility": "−4 for a blocked bishop to 18 attacking 12 or more squares, x-ray through pieces but not pawns (ours: linear)",
    BishopXray = "bishop.xray": "+8 for each attack (x-ray included) on an enemy R, Q, K or an undefended piece",
    BishopPlacement = "bishop.placement": "14 on the edge to 22 in the centre",
    BishopKingAttack = "bishop.king_attack": "up to 5 for each attack on a square next to the enemy king (ours: 5)",
    RookMobility = "rook.mobility": "0 if blocked to 20 attacking 12 or more squares, x-ray as bishops (ours: linear)",
    RookXray = "rook.xray": "+8 for each attack (x-ray included) on an enemy R, Q, K or an undefended piece",
    RookFile = "rook.file": "+10 on a file with no own pawns, +4 more with no enemy pawns",
    RookKingDistance = "rook.king_distance": "after the opening, 'slightly' less for taxicab distance to the enemy king (ours: −1 per square × s)",
    QueenKingDistance = "queen.king_distance": "after the opening, 'slightly' less for taxicab distance to the enemy king (ours: −1 per square × s)",
    KingCentre = "king.centre": "about −24 in the centre in the opening, +36 in the end game; no bonus when the other side has only pawns",
    KingOpenFile = "king.open_file": "up to −23 in the opening, to 0 in the ending, on a file without own pawns or beside one toward the corner",
    KingShield = "king.shield": "up to −8 with no own pawn next to the king (ours: 8 in the opening to 0 in the ending)",
    KingSafeChecks = "king.safe_checks": "the enemy's safe checks: −6 for one to −50 for four or more (ours: −18, −32 for two, three)",
    KingCastling = "king.castling": "by stage, up to +10 for having castled, up to −40 for a king moved before castling (ours: ×(1 − s))",
    Hung = "hung": "−10 when more than one piece is hung (attacked and undefended, or attacked by a cheaper piece), pinned pieces counted alike",
}

/// How many terms.
pub const N: usize = TERMS.len();

/// The terms of a position: `side[c][t]`, term t's contribution for colour c (positive good for
/// c), in centipawns.
#[derive(Clone, Debug, PartialEq)]
pub struct Terms {
    pub side: [[f32; N]; 2],
    /// The stage, 0 (opening) to 1 (ending).
    pub stage: f32,
}

impl Terms {
    /// Term `t` for White minus for Black.
    pub fn net(&self, t: T) -> f32 {
        self.side[0][t as usize] - self.side[1][t as usize]
    }

    /// The score for White: every term, White's minus Black's.
    pub fn score(&self) -> f32 {
        (0..N).map(|t| self.side[0][t] - self.side[1][t]).sum()
    }
}

/// One side's running total of a term, kept in f64: a side's pieces are visited in square
/// order, which the colour mirror reverses, and f32 sums of a dozen non-integer pieces in two
/// orders can round apart (by enough to move the rounded score by one centipawn). In f64 the
/// same sums are exact, so a position and its mirror score exactly the negation of each other.
#[derive(Clone, Copy, Default)]
struct Total(f64);

impl std::ops::AddAssign<f32> for Total {
    fn add_assign(&mut self, x: f32) {
        self.0 += x as f64;
    }
}

impl std::ops::SubAssign<f32> for Total {
    fn sub_assign(&mut self, x: f32) {
        self.0 -= x as f64;
    }
}

/// The stage of `pos` (module documentation).
pub fn stage(pos: &Position) -> f32 {
    let npm: i32 = Color::ALL.iter().flat_map(|&c| [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].map(|r| pos.pieces(c, r).count() as i32 * MATERIAL[r.index()])).sum();
    ((6680 - npm) as f32 / 5380.0).clamp(0.0, 1.0)
}

const ISOLATED: [f32; 8] = [12.0, 14.0, 16.0, 20.0, 20.0, 16.0, 14.0, 12.0];
const EDGE: [f32; 8] = [0.5, 0.75, 1.0, 1.0, 1.0, 1.0, 0.75, 0.5];
/// Passed pawns by relative rank (1 = the 2nd rank … 6 = the 7th): in the ending; half of it in
/// the opening; half again when the stop square is blocked or a square in front attacked.
const PASSED: [f32; 8] = [0.0, 15.0, 20.0, 30.0, 50.0, 80.0, 130.0, 0.0];
/// A passed pawn the enemy king cannot catch while the enemy has no pieces.
const UNSTOPPABLE: [f32; 8] = [0.0, 100.0, 120.0, 150.0, 190.0, 240.0, 300.0, 0.0];
const SAFE_CHECKS: [f32; 5] = [0.0, 6.0, 18.0, 32.0, 50.0];

fn chebyshev(a: Square, b: Square) -> i32 {
    (a.file() as i32 - b.file() as i32).abs().max((a.rank() as i32 - b.rank() as i32).abs())
}

fn taxicab(a: Square, b: Square) -> i32 {
    (a.file() as i32 - b.file() as i32).abs() + (a.rank() as i32 - b.rank() as i32).abs()
}

/// 0 in the four centre squares to 3 on the edge.
fn ring(sq: Square) -> i32 {
    let d = |x: u8| (2 * x as i32 - 7).abs() / 2;
    d(sq.file()).max(d(sq.rank()))
}

/// Manhattan distance to the centre, 0 (d4, e4, d5, e5) to 6 (a corner).
fn centre_taxicab(sq: Square) -> i32 {
    let d = |x: u8| (2 * x as i32 - 7).abs() / 2;
    d(sq.file()) + d(sq.rank())
}

fn pawn_attack_set(c: Color, pawns: Bitboard) -> Bitboard {
    pawns.fold(Bitboard::EMPTY, |b, s| b | pawn_attacks(c, s))
}

/// Squares attacked by `c` (every piece, the king included).
fn attack_set(pos: &Position, c: Color) -> Bitboard {
    let occ = pos.occupied();
    let mut a = pawn_attack_set(c, pos.pieces(c, Role::Pawn));
    for s in pos.pieces(c, Role::Knight) {
        a = a | knight_attacks(s);
    }
    for s in pos.pieces(c, Role::Bishop) {
        a = a | bishop_attacks(s, occ);
    }
    for s in pos.pieces(c, Role::Rook) {
        a = a | rook_attacks(s, occ);
    }
    for s in pos.pieces(c, Role::Queen) {
        a = a | queen_attacks(s, occ);
    }
    a | king_attacks(pos.king(c))
}

/// `c`'s pieces pinned to its king by an enemy slider.
fn pinned(pos: &Position, c: Color) -> Bitboard {
    let k = pos.king(c);
    let occ = pos.occupied();
    let them = c.flip();
    let diag = pos.pieces(them, Role::Bishop) | pos.pieces(them, Role::Queen);
    let line = pos.pieces(them, Role::Rook) | pos.pieces(them, Role::Queen);
    let mut out = Bitboard::EMPTY;
    let snipers = (bishop_attacks(k, Bitboard::EMPTY) & diag) | (rook_attacks(k, Bitboard::EMPTY) & line);
    for s in snipers {
        let between = crate::chess::attacks::between(k, s) & occ;
        if let Some(p) = between.single() {
            if pos.by_color(c).has(p) {
                out = out.with(p);
            }
        }
    }
    out
}

/// Every term of `pos`.
pub fn terms(pos: &Position) -> Terms {
    let s = stage(pos);
    let mut totals = [[Total::default(); N]; 2];
    let occ = pos.occupied();
    let all_pawns = pos.pieces(Color::White, Role::Pawn) | pos.pieces(Color::Black, Role::Pawn);
    let attacks = [attack_set(pos, Color::White), attack_set(pos, Color::Black)];
    for c in Color::ALL {
        let them = c.flip();
        let v = &mut totals[c.index()];
        let own_pawns = pos.pieces(c, Role::Pawn);
        let enemy_pawns = pos.pieces(them, Role::Pawn);
        let own_pawn_attacks = pawn_attack_set(c, own_pawns);
        let king = pos.king(c);
        let enemy_king = pos.king(them);
        let enemy_has_pieces = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].iter().any(|&r| pos.pieces(them, r).any());

        for r in Role::ALL {
            v[T::Material as usize] += (pos.pieces(c, r).count() as i32 * MATERIAL[r.index()]) as f32;
        }

        // Pawns.
        let forward = |sq: Square, n: i32| -> Option<Square> {
            let rank = sq.rank() as i32 + if c == Color::White { n } else { -n };
            (0..8).contains(&rank).then(|| Square::from_coords(sq.file(), rank as u8))
        };
        for p in own_pawns {
            let f = p.file();
            let file = Bitboard::file(f);
            let neighbours = (if f > 0 { Bitboard::file(f - 1) } else { Bitboard::EMPTY }) | (if f < 7 { Bitboard::file(f + 1) } else { Bitboard::EMPTY });
            let rr = p.relative_rank(c);
            let isolated = (own_pawns & neighbours).is_empty();
            if isolated {
                v[T::PawnIsolated as usize] -= ISOLATED[f as usize];
            } else if (own_pawns & file).more_than_one() {
                v[T::PawnDoubled as usize] -= 12.0;
            }
            let stop = forward(p, 1);
            let backward = !own_pawn_attacks.has(p) && stop.is_some_and(|st| !own_pawn_attacks.has(st));
            if backward {
                v[T::PawnBackward as usize] -= 6.0 + 4.0 * pos.attackers(p, them, occ).count() as f32;
                if (enemy_pawns & file).is_empty() {
                    v[T::PawnBackward as usize] -= 4.0;
                }
            }
            v[T::PawnAdvance as usize] += (rr as f32 - 1.0).max(0.0) * (4.0 + 4.0 * s) * EDGE[f as usize];
            if (f == 3 || f == 4) && rr == 1 {
                v[T::PawnCentreUnmoved as usize] -= 10.0;
                if stop.is_some_and(|st| occ.has(st)) {
                    v[T::PawnCentreUnmoved as usize] -= 15.0;
                }
            }
            if chebyshev(p, king) <= 2 {
                v[T::PawnNearKing as usize] += 10.0;
            }
            // Passed: no enemy pawn in front on its file or a neighbouring one.
            let front: Bitboard = (1..8).filter_map(|n| forward(p, n)).fold(Bitboard::EMPTY, |b, q| b.with(q));
            let front_span = Bitboard((1..8).filter_map(|n| forward(p, n)).map(|q| (Bitboard::file(q.file()) | neighbours) & Bitboard::rank(q.rank())).fold(0u64, |b, x| b | x.0));
            if (enemy_pawns & front_span).is_empty() {
                let mut bonus = PASSED[rr as usize] * (0.5 + 0.5 * s);
                if stop.is_some_and(|st| pos.by_color(them).has(st)) || (front & attacks[them.index()]).any() {
                    bonus *= 0.5;
                }
                let promo = Square::from_coords(f, if c == Color::White { 7 } else { 0 });
                let steps = 7 - rr as i32 - (rr == 1) as i32;
                let king_steps = chebyshev(enemy_king, promo) - (pos.turn() == them) as i32;
                if !enemy_has_pieces && king_steps > steps && (front & occ).is_empty() {
                    bonus = bonus.max(UNSTOPPABLE[rr as usize]);
                }
                v[T::PawnPassed as usize] += bonus;
            }
        }

        // Knights.
        let enemy_pieces = pos.by_color(them) & !enemy_pawns & !pos.pieces(them, Role::King);
        for n in pos.pieces(c, Role::Knight) {
            v[T::KnightCentre as usize] += 30.0 * (6 - centre_taxicab(n)) as f32 / 6.0;
            let near = enemy_pieces.filter(|&e| chebyshev(n, e) <= 2).count() as f32;
            v[T::KnightNearEnemy as usize] += near * (2.0 + 2.0 * s);
            v[T::KnightKingDistance as usize] -= (chebyshev(n, king) + chebyshev(n, enemy_king)) as f32;
            // An enemy pawn could attack it later: one on a neighbouring file behind the
            // knight's rank from the enemy's side (in front of it from ours).
            let ahead = (1..8).filter_map(|k| forward(n, k)).fold(Bitboard::EMPTY, |b, q| b | Bitboard::rank(q.rank()));
            let neighbours = (if n.file() > 0 { Bitboard::file(n.file() - 1) } else { Bitboard::EMPTY }) | (if n.file() < 7 { Bitboard::file(n.file() + 1) } else { Bitboard::EMPTY });
            if (enemy_pawns & neighbours & ahead).is_empty() {
                v[T::KnightOutpost as usize] += 8.0 * (1.0 - s);
            }
        }

        // Bishops and rooks: mobility and x-ray through pieces but not pawns.
        let targets = pos.pieces(them, Role::Rook) | pos.pieces(them, Role::Queen) | pos.pieces(them, Role::King) | pos.by_color(them).filter(|&e| !pos.attackers(e, them, occ).any()).fold(Bitboard::EMPTY, |b, e| b.with(e));
        let enemy_king_zone = king_attacks(enemy_king);
        for b in pos.pieces(c, Role::Bishop) {
            let reach = bishop_attacks(b, all_pawns);
            let squares = (reach & !own_pawns).count().min(12) as f32;
            v[T::BishopStage as usize] += 10.0 * s;
            v[T::BishopMobility as usize] += -4.0 + 22.0 * squares / 12.0;
            v[T::BishopXray as usize] += 8.0 * (reach & targets).count() as f32;
            v[T::BishopPlacement as usize] += 14.0 + 8.0 * (3 - ring(b)) as f32 / 3.0;
            v[T::BishopKingAttack as usize] += 5.0 * (reach & enemy_king_zone).count() as f32;
        }
        for r in pos.pieces(c, Role::Rook) {
            let reach = rook_attacks(r, all_pawns);
            let squares = (reach & !own_pawns).count().min(12) as f32;
            v[T::RookMobility as usize] += 20.0 * squares / 12.0;
            v[T::RookXray as usize] += 8.0 * (reach & targets).count() as f32;
            let file = Bitboard::file(r.file());
            if (own_pawns & file).is_empty() {
                v[T::RookFile as usize] += 10.0;
                if (enemy_pawns & file).is_empty() {
                    v[T::RookFile as usize] += 4.0;
                }
            }
            v[T::RookKingDistance as usize] -= s * taxicab(r, enemy_king) as f32;
        }
        for q in pos.pieces(c, Role::Queen) {
            v[T::QueenKingDistance as usize] -= s * taxicab(q, enemy_king) as f32;
        }

        // The king.
        let centrality = (6 - centre_taxicab(king)) as f32 / 6.0;
        v[T::KingCentre as usize] += -24.0 * centrality * (1.0 - s) + if enemy_has_pieces { 36.0 * centrality * s } else { 0.0 };
        let kf = king.file();
        let toward_corner = if kf <= 3 { kf.checked_sub(1) } else { (kf < 7).then_some(kf + 1) };
        if (own_pawns & Bitboard::file(kf)).is_empty() || toward_corner.is_some_and(|f| (own_pawns & Bitboard::file(f)).is_empty()) {
            v[T::KingOpenFile as usize] -= 23.0 * (1.0 - s);
        }
        if (own_pawns & king_attacks(king)).is_empty() {
            v[T::KingShield as usize] -= 8.0 * (1.0 - s);
        }
        v[T::KingSafeChecks as usize] -= SAFE_CHECKS[safe_checks(pos, c, &attacks).min(4)];
        let back = if c == Color::White { 0 } else { 7 };
        let rights = pos.castling_rights() & if c == Color::White { 0b0011 } else { 0b1100 };
        if rights == 0 && king.rank() == back {
            let rook_on = |f: u8| pos.pieces(c, Role::Rook).has(Square::from_coords(f, back));
            let castled = (kf == 6 && rook_on(5)) || ((kf == 2 || kf == 1) && rook_on(3));
            if castled {
                v[T::KingCastling as usize] += 10.0 * (1.0 - s);
            } else if kf != 4 {
                v[T::KingCastling as usize] -= 40.0 * (1.0 - s);
            }
        } else if rights == 0 && king.rank() != back {
            v[T::KingCastling as usize] -= 40.0 * (1.0 - s);
        }

        // Hung and pinned pieces, each piece counted once.
        let en_prise_set = (pos.by_color(c) & !pos.pieces(c, Role::King)).filter(|&p| en_prise(pos, p)).fold(Bitboard::EMPTY, |b, p| b.with(p));
        if (en_prise_set | pinned(pos, c)).more_than_one() {
            v[T::Hung as usize] -= 10.0;
        }
    }
    Terms { side: totals.map(|side| side.map(|x| x.0 as f32)), stage: s }
}

/// The enemy's safe checks against `c`'s king: moves of an enemy knight, bishop, rook or queen to
/// a square from which it checks, onto a square `c` does not attack and the enemy does not hold.
fn safe_checks(pos: &Position, c: Color, attacks: &[Bitboard; 2]) -> usize {
    let them = c.flip();
    let occ = pos.occupied();
    let k = pos.king(c);
    let free = !pos.by_color(them) & !attacks[c.index()];
    let mut n = 0;
    for (role, from_king) in [(Role::Knight, knight_attacks(k)), (Role::Bishop, bishop_attacks(k, occ)), (Role::Rook, rook_attacks(k, occ)), (Role::Queen, queen_attacks(k, occ))] {
        for p in pos.pieces(them, role) {
            let reach = match role {
                Role::Knight => knight_attacks(p),
                Role::Bishop => bishop_attacks(p, occ),
                Role::Rook => rook_attacks(p, occ),
                _ => queen_attacks(p, occ),
            };
            n += (reach & from_king & free).count() as usize;
        }
    }
    n
}

/// The score for White, in centipawns.
pub fn evaluate(pos: &Position) -> i32 {
    terms(pos).score().round() as i32
}

/// The GNU Chess evaluation as an [`Evaluator`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Gnu;

impl Evaluator for Gnu {
    fn name(&self) -> &'static str {
        "gnu"
    }

    fn evaluate(&mut self, pos: &Position) -> f32 {
        evaluate(pos) as f32
    }

    fn cp_per_unit(&self) -> f32 {
        1.0
    }
    fn fork(&self) -> Option<Self> {
        Some(*self)
    }
}

/// The GNU evaluation as a comparator, the way the search takes it.
pub fn gnu() -> ScoreComparator<Gnu> {
    ScoreComparator::new(Gnu)
}
