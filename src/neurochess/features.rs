//! The board as NeuroChess sees it (seed §4, "Smoothness"): 175 hand-designed features in the
//! spirit of GNU Chess's evaluation terms, not the raw board. Eighty per side (White's block
//! first, then Black's, each from its own side: ranks counted from that side's back rank), then
//! fifteen about the whole position. Every feature is scaled to about [0, 1] (or [−1, 1] where
//! signed), so that a net sees them on one scale; [`TABLE`] names each with its meaning and range.
//!
//! | block | features (per side, own side's view) |
//! |---|---|
//! | material | pawns/8, knights/2, bishops/2, rooks/2, queens, the bishop pair |
//! | pawns per file a–h | count/4, doubled (count − 1)/3, isolated (count/4 when no own pawn on a neighbouring file), passed (1 when a pawn of the file is passed) |
//! | pawn structure | backward/8, islands/4, passed/8, the best passed pawn's rank/7, mean advancement/6, connected passed pawns |
//! | mobility | safe squares of knights/16, bishops/26, rooks/28, queens/27, the king/8; squares attacked/64 |
//! | king safety | pawn shield/3, enemy pieces attacking the king's zone/8, attacked zone squares/9, on an open file, on a half-open file, castled, may castle king side, queen side |
//! | centre, development | pawns on the four centre squares/2, pieces attacking them/8, minor pieces off the back rank/4, queen off it, rooks connected |
//! | rooks | on open files/2, half-open files/2, on the 7th rank/2, doubled |
//! | threats | material attacked/39, hanging (attacked, undefended)/39, pieces defended/16, enemy pieces attacked by pawns/8, own pieces pinned/4, attacked by a cheaper piece/8, squares controlled in the enemy half/32, knight outposts/2 |
//! | tropism, placement | pieces near the enemy king/40, the queen near it/7, knights on the rim/2, bad bishop (own pawns on its colour)/8, space behind the pawns/24 |
//!
//! Global: the side to move (+1 White, −1 Black), in check, game phase, material balance/39,
//! halfmove clock/100, en passant available, legal moves/40, opposite-coloured bishops, pawns
//! on the board/16, open files/8, captures available/8, queens on the board/2, no queens,
//! pawns and kings only, insufficient material.

use crate::chess::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, queen_attacks, rook_attacks};
use crate::chess::{Bitboard, Color, Position, Role, Square};

/// Features per side.
pub const PER_SIDE: usize = 80;
/// Features about the whole position.
pub const GLOBAL: usize = 15;
/// The input width of V and of the chess model M (the seed's 175).
pub const FEATURES: usize = 2 * PER_SIDE + GLOBAL;

/// Where each block of a side starts (offsets within the side's 80).
mod at {
    pub const MATERIAL: usize = 0; // 6
    pub const FILES: usize = 6; // 8 files × 4
    pub const PAWNS: usize = 38; // 6
    pub const MOBILITY: usize = 44; // 6
    pub const KING: usize = 50; // 8
    pub const CENTRE: usize = 58; // 5
    pub const ROOKS: usize = 63; // 4
    pub const THREATS: usize = 67; // 8
    pub const PLACEMENT: usize = 75; // 5
}

/// The blocks of a side's 80 features (name, first offset, count), for figures per group
/// (M's error is reported per block, both sides' features together).
pub const BLOCKS: [(&str, usize, usize); 9] = [
    ("material", at::MATERIAL, 6),
    ("pawns per file", at::FILES, 32),
    ("pawn structure", at::PAWNS, 6),
    ("mobility", at::MOBILITY, 6),
    ("king safety", at::KING, 8),
    ("centre, development", at::CENTRE, 5),
    ("rooks", at::ROOKS, 4),
    ("threats", at::THREATS, 8),
    ("tropism, placement", at::PLACEMENT, 5),
];

/// (name, meaning, range) of every feature, in input order (`w.` White's block, `b.` Black's,
/// `g.` global). Built once.
pub fn table() -> &'static [(String, &'static str, &'static str)] {
    static T: std::sync::OnceLock<Vec<(String, &'static str, &'static str)>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let side: Vec<(String, &str, &str)> = {
            let mut v: Vec<(String, &str, &str)> = vec![
                ("pawns".into(), "own pawns / 8", "0..1"),
                ("knights".into(), "own knights / 2", "0..1 (more after promotions)"),
                ("bishops".into(), "own bishops / 2", "0..1"),
                ("rooks".into(), "own rooks / 2", "0..1"),
                ("queens".into(), "own queens", "0..1"),
                ("bishop_pair".into(), "two or more bishops", "0, 1"),
            ];
            for f in "abcdefgh".chars() {
                v.push((format!("file_{f}.pawns"), "own pawns on the file / 4", "0..1"));
                v.push((format!("file_{f}.doubled"), "(own pawns on the file − 1) / 3", "0..1"));
                v.push((format!("file_{f}.isolated"), "own pawns on the file / 4 when no own pawn on a neighbouring file", "0..1"));
                v.push((format!("file_{f}.passed"), "a pawn of the file has no enemy pawn ahead on its file or the neighbouring ones", "0, 1"));
            }
            v.extend([
                ("backward".into(), "pawns no own pawn can support and that cannot advance safely / 8", "0..1"),
                ("islands".into(), "groups of adjacent files with own pawns / 4", "0..1"),
                ("passed".into(), "passed pawns / 8", "0..1"),
                ("passed_rank".into(), "the most advanced passed pawn's rank (own side's view) / 7", "0..1"),
                ("advancement".into(), "mean (rank − 1) of own pawns / 6", "0..1"),
                ("connected_passed".into(), "two passed pawns on neighbouring files", "0, 1"),
                ("mob_knights".into(), "squares the knights reach that hold no own piece and no enemy pawn attack / 16", "0..1"),
                ("mob_bishops".into(), "as above, bishops / 26", "0..1"),
                ("mob_rooks".into(), "as above, rooks / 28", "0..1"),
                ("mob_queens".into(), "as above, queens / 27", "0..1"),
                ("mob_king".into(), "king moves to squares not attacked / 8", "0..1"),
                ("attacks".into(), "squares attacked by any own piece / 64", "0..1"),
                ("king_shield".into(), "own pawns in front of the king (three files, two ranks) / 3", "0..1"),
                ("king_attackers".into(), "enemy pieces attacking the king's zone / 8", "0..1"),
                ("king_zone_attacked".into(), "squares of the king's zone attacked by the enemy / 9", "0..1"),
                ("king_open_file".into(), "no pawn on the king's file", "0, 1"),
                ("king_half_open".into(), "no own pawn (but an enemy one) on the king's file", "0, 1"),
                ("castled".into(), "the king on its back rank on the b, c, g or h file", "0, 1"),
                ("can_castle_short".into(), "king-side castling right", "0, 1"),
                ("can_castle_long".into(), "queen-side castling right", "0, 1"),
                ("centre_pawns".into(), "own pawns on d4, e4, d5, e5 / 2", "0..1"),
                ("centre_attacks".into(), "own pieces attacking the centre squares / 8", "0..1"),
                ("developed".into(), "knights and bishops off the back rank / 4", "0..1"),
                ("queen_out".into(), "a queen off the back rank", "0, 1"),
                ("rooks_connected".into(), "two rooks that see each other along their rank", "0, 1"),
                ("rook_open".into(), "rooks on files without pawns / 2", "0..1"),
                ("rook_half_open".into(), "rooks on files with enemy pawns only / 2", "0..1"),
                ("rook_seventh".into(), "rooks on the 7th rank / 2", "0..1"),
                ("rooks_doubled".into(), "two rooks on one file", "0, 1"),
                ("attacked".into(), "material (1, 3, 3, 5, 9) attacked by the enemy / 39", "0..1"),
                ("hanging".into(), "material attacked and not defended / 39", "0..1"),
                ("defended".into(), "own pieces (not pawns, not the king) defended / 16", "0..1"),
                ("pawn_threats".into(), "enemy pieces attacked by own pawns / 8", "0..1"),
                ("pinned".into(), "own pieces pinned to the own king / 4", "0..1"),
                ("attacked_by_less".into(), "own pieces attacked by a cheaper enemy piece / 8", "0..1"),
                ("enemy_half".into(), "squares of the enemy half attacked / 32", "0..1"),
                ("outposts".into(), "knights in the enemy half, defended by a pawn, no enemy pawn able to attack them / 2", "0..1"),
                ("tropism".into(), "Σ (7 − distance to the enemy king) over knights, bishops, rooks, queens / 40", "0..1"),
                ("queen_tropism".into(), "(7 − the queen's distance to the enemy king) / 7", "0..1"),
                ("rim_knights".into(), "knights on the a or h file / 2", "0..1"),
                ("bad_bishop".into(), "own pawns on the squares of a lone bishop's colour / 8", "0..1"),
                ("space".into(), "safe squares behind own pawns in the own half / 24", "0..1"),
            ]);
            v
        };
        let mut t: Vec<(String, &'static str, &'static str)> = Vec::new();
        for (prefix, _) in [("w.", Color::White), ("b.", Color::Black)] {
            t.extend(side.iter().map(|(n, m, r)| (format!("{prefix}{n}"), *m, *r)));
        }
        t.extend([
            ("g.side_to_move".to_string(), "+1 White to move, −1 Black", "−1, 1"),
            ("g.in_check".into(), "the side to move is in check", "0, 1"),
            ("g.phase".into(), "non-pawn material (N, B 1, R 2, Q 4) / 24", "0..1"),
            ("g.material".into(), "(White − Black) material (1, 3, 3, 5, 9) / 39", "−1..1"),
            ("g.halfmove".into(), "the fifty-move clock / 100", "0..1"),
            ("g.en_passant".into(), "an en-passant capture is possible", "0, 1"),
            ("g.legal_moves".into(), "legal moves of the side to move / 40", "0..~2"),
            ("g.opposite_bishops".into(), "one bishop each, on squares of opposite colours", "0, 1"),
            ("g.pawns".into(), "pawns on the board / 16", "0..1"),
            ("g.open_files".into(), "files without pawns / 8", "0..1"),
            ("g.captures".into(), "captures of the side to move / 8", "0..~2"),
            ("g.queens".into(), "queens on the board / 2", "0..1"),
            ("g.no_queens".into(), "no queen on the board", "0, 1"),
            ("g.pawn_ending".into(), "kings and pawns only", "0, 1"),
            ("g.insufficient".into(), "insufficient material to mate", "0, 1"),
        ]);
        debug_assert_eq!(t.len(), FEATURES);
        t
    })
}

/// The table as Markdown (docs/neurochess-features.md is this text; a test keeps them equal):
/// a side's features once with White's and Black's input index, then the global ones.
pub fn table_markdown() -> String {
    let t = table();
    let mut s = String::from("| inputs (White, Black) | name | meaning | range |\n|---|---|---|---|\n");
    for (i, (n, m, r)) in t[..PER_SIDE].iter().enumerate() {
        s += &format!("| {i}, {} | {} | {m} | {r} |\n", i + PER_SIDE, &n[2..]);
    }
    s += "\n| input | name | meaning | range |\n|---|---|---|---|\n";
    for (i, (n, m, r)) in t[2 * PER_SIDE..].iter().enumerate() {
        s += &format!("| {} | {} | {m} | {r} |\n", i + 2 * PER_SIDE, &n[2..]);
    }
    s
}

const VALUE: [f32; 6] = [1.0, 3.0, 3.0, 5.0, 9.0, 0.0];

/// Everything a side's block needs once: attacks per piece type and in all.
struct Attacks {
    by_role: [Bitboard; 6],
    all: Bitboard,
    /// Squares the pawns attack (`by_role[0]`, named for reading).
    pawns: Bitboard,
}

fn attacks_of(pos: &Position, c: Color) -> Attacks {
    let occ = pos.occupied();
    let mut by_role = [Bitboard::EMPTY; 6];
    for role in Role::ALL {
        for sq in pos.pieces(c, role) {
            by_role[role.index()] |= piece_attacks(role, c, sq, occ);
        }
    }
    let all = by_role.iter().fold(Bitboard::EMPTY, |a, &b| a | b);
    Attacks { by_role, all, pawns: by_role[0] }
}

fn piece_attacks(role: Role, c: Color, sq: Square, occ: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(c, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occ),
        Role::Rook => rook_attacks(sq, occ),
        Role::Queen => queen_attacks(sq, occ),
        Role::King => king_attacks(sq),
    }
}

/// Files holding a pawn of `pawns`, as an 8-bit mask.
fn file_mask(pawns: Bitboard) -> u8 {
    (0..8).fold(0u8, |m, f| if (pawns & Bitboard::file(f)).any() { m | 1 << f } else { m })
}

/// Squares ahead of `sq` for colour `c` on its file and the neighbouring ones.
#[inline]
fn front_span(c: Color, sq: Square) -> Bitboard {
    Bitboard(FRONT_SPANS[c.index()][sq.index()])
}

/// [`front_span`] of every square, White's (higher ranks) then Black's: built at compile time,
/// so that the passed-pawn tests of every evaluation cost a load.
const FRONT_SPANS: [[u64; 64]; 2] = front_spans();

const fn front_spans() -> [[u64; 64]; 2] {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, sq / 8);
        let mut ff = f - 1;
        while ff <= f + 1 {
            if ff >= 0 && ff < 8 {
                let mut rr = 0;
                while rr < 8 {
                    let bit = 1u64 << (rr * 8 + ff as usize);
                    if rr > r {
                        t[0][sq] |= bit;
                    } else if rr < r {
                        t[1][sq] |= bit;
                    }
                    rr += 1;
                }
            }
            ff += 1;
        }
        sq += 1;
    }
    t
}

fn is_passed(pos: &Position, c: Color, sq: Square) -> bool {
    (front_span(c, sq) & pos.pieces(c.flip(), Role::Pawn)).is_empty()
}

fn chebyshev(a: Square, b: Square) -> i32 {
    (a.file() as i32 - b.file() as i32).abs().max((a.rank() as i32 - b.rank() as i32).abs())
}

/// The 80 features of side `c` into `out`.
// One long body on purpose: the features are written in their index order, block by block
// as docs/neurochess-features.md lists them, so an index is found by reading down; split
// into functions, the running offset would pass through each.
fn side(pos: &Position, c: Color, own: &Attacks, enemy: &Attacks, out: &mut [f32]) {
    let them = c.flip();
    let occ = pos.occupied();
    let mine = pos.by_color(c);
    let pawns = pos.pieces(c, Role::Pawn);
    let their_pawns = pos.pieces(them, Role::Pawn);
    let count = |r: Role| pos.pieces(c, r).count() as f32;
    // Material.
    out[at::MATERIAL..at::MATERIAL + 6].copy_from_slice(&[
        count(Role::Pawn) / 8.0,
        count(Role::Knight) / 2.0,
        count(Role::Bishop) / 2.0,
        count(Role::Rook) / 2.0,
        count(Role::Queen),
        (count(Role::Bishop) >= 2.0) as u8 as f32,
    ]);
    // Pawns per file.
    let files = file_mask(pawns);
    let mut passed = Vec::new();
    for f in 0..8u8 {
        let on = pawns & Bitboard::file(f);
        let n = on.count() as f32;
        let neighbours = (if f > 0 { files >> (f - 1) & 1 } else { 0 }) | (if f < 7 { files >> (f + 1) & 1 } else { 0 });
        let file_passed = on.into_iter().filter(|&sq| is_passed(pos, c, sq)).count() > 0;
        if file_passed {
            passed.push(f);
        }
        let o = at::FILES + 4 * f as usize;
        out[o..o + 4].copy_from_slice(&[n / 4.0, (n - 1.0).max(0.0) / 3.0, if neighbours == 0 { n / 4.0 } else { 0.0 }, file_passed as u8 as f32]);
    }
    // Pawn structure.
    let forward = |sq: Square| -> Option<Square> {
        let r = sq.rank() as i32 + if c == Color::White { 1 } else { -1 };
        (0..8).contains(&r).then(|| Square::from_coords(sq.file(), r as u8))
    };
    let mut backward = 0;
    let mut best_passed = 0;
    let mut advancement = 0;
    let mut n_passed = 0;
    for sq in pawns {
        let rel = sq.relative_rank(c) as i32;
        advancement += rel - 1;
        if is_passed(pos, c, sq) {
            n_passed += 1;
            best_passed = best_passed.max(rel);
        }
        // Backward: no own pawn on a neighbouring file level or behind, and the square in
        // front attacked by an enemy pawn.
        let support = (0..8u8).filter(|&f| (f as i32 - sq.file() as i32).abs() == 1).any(|f| {
            (pawns & Bitboard::file(f)).into_iter().filter(|p| p.relative_rank(c) as i32 <= rel).count() > 0
        });
        if !support {
            if let Some(front) = forward(sq) {
                if enemy.pawns.has(front) {
                    backward += 1;
                }
            }
        }
    }
    let islands = (0..8).filter(|&f| files >> f & 1 == 1 && (f == 0 || files >> (f - 1) & 1 == 0)).count();
    let connected = passed.windows(2).any(|w| w[1] == w[0] + 1);
    let np = pawns.count().max(1) as f32;
    out[at::PAWNS..at::PAWNS + 6].copy_from_slice(&[
        backward as f32 / 8.0,
        islands as f32 / 4.0,
        n_passed as f32 / 8.0,
        best_passed as f32 / 7.0,
        advancement as f32 / np / 6.0,
        connected as u8 as f32,
    ]);
    // Mobility: squares without an own piece and not attacked by an enemy pawn.
    let safe = !mine & !enemy.pawns;
    let mob = |r: Role| -> f32 {
        pos.pieces(c, r).into_iter().map(|sq| (piece_attacks(r, c, sq, occ) & safe).count()).sum::<u32>() as f32
    };
    let king = pos.king(c);
    out[at::MOBILITY..at::MOBILITY + 6].copy_from_slice(&[
        mob(Role::Knight) / 16.0,
        mob(Role::Bishop) / 26.0,
        mob(Role::Rook) / 28.0,
        mob(Role::Queen) / 27.0,
        (king_attacks(king) & !mine & !enemy.all).count() as f32 / 8.0,
        own.all.count() as f32 / 64.0,
    ]);
    // King safety.
    let zone = king_attacks(king) | Bitboard::from_square(king);
    let shield = {
        let mut s = Bitboard::EMPTY;
        for df in -1i32..=1 {
            for dr in 1i32..=2 {
                let (f, r) = (king.file() as i32 + df, king.rank() as i32 + if c == Color::White { dr } else { -dr });
                if (0..8).contains(&f) && (0..8).contains(&r) {
                    s |= Bitboard::from_square(Square::from_coords(f as u8, r as u8));
                }
            }
        }
        s
    };
    let attackers = Role::ALL[1..5]
        .iter()
        .flat_map(|&r| pos.pieces(them, r).into_iter().map(move |sq| (r, sq)))
        .filter(|&(r, sq)| (piece_attacks(r, them, sq, occ) & zone).any())
        .count();
    let king_file = Bitboard::file(king.file());
    let castled = king.relative_rank(c) == 0 && matches!(king.file(), 1 | 2 | 6 | 7);
    let rights = pos.castling_rights();
    let (short, long) = if c == Color::White { (rights & 1 != 0, rights & 2 != 0) } else { (rights & 4 != 0, rights & 8 != 0) };
    out[at::KING..at::KING + 8].copy_from_slice(&[
        ((shield & pawns).count() as f32 / 3.0).min(1.0),
        attackers as f32 / 8.0,
        (zone & enemy.all).count() as f32 / 9.0,
        ((pawns | their_pawns) & king_file).is_empty() as u8 as f32,
        ((pawns & king_file).is_empty() && (their_pawns & king_file).any()) as u8 as f32,
        castled as u8 as f32,
        short as u8 as f32,
        long as u8 as f32,
    ]);
    // Centre and development.
    let centre = Bitboard::from_square(Square::from_coords(3, 3))
        | Bitboard::from_square(Square::from_coords(4, 3))
        | Bitboard::from_square(Square::from_coords(3, 4))
        | Bitboard::from_square(Square::from_coords(4, 4));
    let back = if c == Color::White { Bitboard::RANK_1 } else { Bitboard::RANK_8 };
    let minors = pos.pieces(c, Role::Knight) | pos.pieces(c, Role::Bishop);
    let centre_attackers = Role::ALL
        .iter()
        .flat_map(|&r| pos.pieces(c, r).into_iter().map(move |sq| (r, sq)))
        .filter(|&(r, sq)| (piece_attacks(r, c, sq, occ) & centre).any())
        .count();
    let rooks = pos.pieces(c, Role::Rook);
    let rooks_connected = {
        let v: Vec<Square> = rooks.into_iter().collect();
        v.len() >= 2 && v[0].rank() == v[1].rank() && rook_attacks(v[0], occ).has(v[1])
    };
    out[at::CENTRE..at::CENTRE + 5].copy_from_slice(&[
        (pawns & centre).count() as f32 / 2.0,
        centre_attackers as f32 / 8.0,
        (minors & !back).count() as f32 / 4.0,
        (pos.pieces(c, Role::Queen) & !back).any() as u8 as f32,
        rooks_connected as u8 as f32,
    ]);
    // Rooks.
    let seventh = Bitboard::rank(if c == Color::White { 6 } else { 1 });
    let (mut open, mut half) = (0, 0);
    for sq in rooks {
        let f = Bitboard::file(sq.file());
        if ((pawns | their_pawns) & f).is_empty() {
            open += 1;
        } else if (pawns & f).is_empty() {
            half += 1;
        }
    }
    let doubled = (0..8).any(|f| (rooks & Bitboard::file(f)).more_than_one());
    out[at::ROOKS..at::ROOKS + 4].copy_from_slice(&[open as f32 / 2.0, half as f32 / 2.0, (rooks & seventh).count() as f32 / 2.0, doubled as u8 as f32]);
    // Threats.
    let (mut attacked, mut hanging, mut defended, mut by_less) = (0.0, 0.0, 0, 0);
    for r in Role::ALL[..5].iter().copied() {
        for sq in pos.pieces(c, r) {
            let hit = enemy.all.has(sq);
            let guarded = own.all.has(sq);
            if hit {
                attacked += VALUE[r.index()];
                if !guarded {
                    hanging += VALUE[r.index()];
                }
                if Role::ALL[..r.index()].iter().any(|&l| enemy.by_role[l.index()].has(sq)) {
                    by_less += 1;
                }
            }
            if guarded && r != Role::Pawn {
                defended += 1;
            }
        }
    }
    let their_pieces = pos.by_color(them) & !their_pawns & !pos.pieces(them, Role::King);
    let pinned = if pos.turn() == c { (pos.pinned() & mine).count() } else { pinned_of(pos, c) };
    let enemy_half = if c == Color::White { Bitboard(0xFFFF_FFFF_0000_0000) } else { Bitboard(0x0000_0000_FFFF_FFFF) };
    let outposts = pos
        .pieces(c, Role::Knight)
        .into_iter()
        .filter(|&sq| enemy_half.has(sq) && own.pawns.has(sq) && (front_span(c, sq) & !Bitboard::file(sq.file()) & their_pawns).is_empty())
        .count();
    out[at::THREATS..at::THREATS + 8].copy_from_slice(&[
        attacked / 39.0,
        hanging / 39.0,
        defended as f32 / 16.0,
        (own.pawns & their_pieces).count() as f32 / 8.0,
        pinned as f32 / 4.0,
        by_less as f32 / 8.0,
        (own.all & enemy_half).count() as f32 / 32.0,
        outposts as f32 / 2.0,
    ]);
    // Tropism and placement.
    let their_king = pos.king(them);
    let tropism: i32 = Role::ALL[1..5].iter().flat_map(|&r| pos.pieces(c, r).into_iter()).map(|sq| 7 - chebyshev(sq, their_king)).sum();
    let queen_tropism = pos.pieces(c, Role::Queen).into_iter().map(|sq| 7 - chebyshev(sq, their_king)).max().unwrap_or(0);
    let rim = (pos.pieces(c, Role::Knight) & (Bitboard::FILE_A | Bitboard::FILE_H)).count();
    let bishops = pos.pieces(c, Role::Bishop);
    let bad_bishop = match bishops.single() {
        Some(b) => {
            let light = (b.file() + b.rank()) % 2;
            pawns.into_iter().filter(|p| (p.file() + p.rank()) % 2 == light).count()
        }
        None => 0,
    };
    let own_half = !enemy_half;
    let behind = {
        let mut s = Bitboard::EMPTY;
        for p in pawns {
            let mut sq = p;
            while let Some(b) = {
                let r = sq.rank() as i32 + if c == Color::White { -1 } else { 1 };
                (0..8).contains(&r).then(|| Square::from_coords(sq.file(), r as u8))
            } {
                s |= Bitboard::from_square(b);
                sq = b;
            }
        }
        s & own_half & !enemy.all & !occ
    };
    out[at::PLACEMENT..at::PLACEMENT + 5].copy_from_slice(&[
        tropism as f32 / 40.0,
        queen_tropism as f32 / 7.0,
        rim as f32 / 2.0,
        bad_bishop as f32 / 8.0,
        behind.count() as f32 / 24.0,
    ]);
}

/// Pieces of `c` pinned to its king when it is not `c`'s turn (`Position::pinned` is the side
/// to move's).
fn pinned_of(pos: &Position, c: Color) -> u32 {
    let king = pos.king(c);
    let occ = pos.occupied();
    let them = c.flip();
    let mut n = 0;
    let snipers = (rook_attacks(king, Bitboard::EMPTY) & (pos.pieces(them, Role::Rook) | pos.pieces(them, Role::Queen)))
        | (bishop_attacks(king, Bitboard::EMPTY) & (pos.pieces(them, Role::Bishop) | pos.pieces(them, Role::Queen)));
    for s in snipers {
        let between = crate::chess::attacks::between(king, s) & occ;
        if between.count() == 1 && (between & pos.by_color(c)).any() {
            n += 1;
        }
    }
    n
}

/// The 175 features of `pos`.
pub fn features(pos: &Position) -> [f32; FEATURES] {
    let mut out = [0.0f32; FEATURES];
    features_into(pos, &mut out);
    out
}

/// [`features`] into `out` (at least [`FEATURES`] long).
pub fn features_into(pos: &Position, out: &mut [f32]) {
    let (w, b) = (attacks_of(pos, Color::White), attacks_of(pos, Color::Black));
    side(pos, Color::White, &w, &b, &mut out[..PER_SIDE]);
    side(pos, Color::Black, &b, &w, &mut out[PER_SIDE..2 * PER_SIDE]);
    let g = &mut out[2 * PER_SIDE..FEATURES];
    let material = |c: Color| Role::ALL[..5].iter().map(|&r| VALUE[r.index()] * pos.pieces(c, r).count() as f32).sum::<f32>();
    let phase: u32 = [(Role::Knight, 1), (Role::Bishop, 1), (Role::Rook, 2), (Role::Queen, 4)].iter().map(|&(r, p)| p * pos.by_role(r).count()).sum();
    let moves = pos.legal_moves();
    let captures = moves.iter().filter(|&&m| pos.is_capture(m)).count();
    let en_passant = pos.ep_square().is_some_and(|ep| moves.iter().any(|m| m.to == ep && pos.role_on(m.from) == Some(Role::Pawn)));
    let pawns_all = pos.by_role(Role::Pawn);
    let bishops = (pos.pieces(Color::White, Role::Bishop).single(), pos.pieces(Color::Black, Role::Bishop).single());
    let opposite = match bishops {
        (Some(a), Some(b)) => (a.file() + a.rank()) % 2 != (b.file() + b.rank()) % 2,
        _ => false,
    };
    let queens = pos.by_role(Role::Queen).count();
    let pieces = pos.occupied() & !pawns_all & !pos.by_role(Role::King);
    g.copy_from_slice(&[
        if pos.turn() == Color::White { 1.0 } else { -1.0 },
        pos.is_check() as u8 as f32,
        (phase as f32 / 24.0).min(1.0),
        (material(Color::White) - material(Color::Black)) / 39.0,
        pos.halfmove_clock() as f32 / 100.0,
        en_passant as u8 as f32,
        moves.len() as f32 / 40.0,
        opposite as u8 as f32,
        pawns_all.count() as f32 / 16.0,
        (0..8).filter(|&f| (pawns_all & Bitboard::file(f)).is_empty()).count() as f32 / 8.0,
        captures as f32 / 8.0,
        queens as f32 / 2.0,
        (queens == 0) as u8 as f32,
        pieces.is_empty() as u8 as f32,
        pos.is_insufficient_material() as u8 as f32,
    ]);
}

/// The feature block of the other side: a colour-mirrored position's features are these
/// with the two sides' blocks swapped and the signed globals negated.
pub fn mirrored(f: &[f32; FEATURES]) -> [f32; FEATURES] {
    let mut m = *f;
    m[..PER_SIDE].copy_from_slice(&f[PER_SIDE..2 * PER_SIDE]);
    m[PER_SIDE..2 * PER_SIDE].copy_from_slice(&f[..PER_SIDE]);
    for g in [0, 3] {
        m[2 * PER_SIDE + g] = -f[2 * PER_SIDE + g];
    }
    m
}

/// Quiescent: the side to move is not in check and has no capture that wins material by
/// static exchange (the seed trains V on quiescent boards only).
pub fn is_quiescent(pos: &Position) -> bool {
    !pos.is_check() && !pos.legal_moves().iter().any(|&m| pos.is_capture(m) && crate::search::see::see_ge(pos, m, 1))
}

/// Quiescent for both sides: [`is_quiescent`], and the side not to move would have no
/// capture winning material either were it to move (the seed's criterion "detects material
/// threats"; a threat is the other side's). Filtering on the mover alone keeps the boards
/// where only the side to move is threatened, so V learns that having the move loses.
pub fn is_quiescent_both(pos: &Position) -> bool {
    if !is_quiescent(pos) {
        return false;
    }
    let mut other = *pos;
    other.play_null();
    is_quiescent(&other)
}

#[cfg(test)]
mod tests;
