//! Attack tables. Leapers (pawn, knight, king) are built by `const fn` at compile time;
//! sliders use "fancy" magic bitboards whose magics are searched once at start-up with a
//! fixed seed (a few milliseconds), so a lookup is one multiply, one shift and one load.

use super::bitboard::Bitboard;
use super::types::{Color, Square};
use std::sync::OnceLock;

const fn leaper_table(deltas: &[(i8, i8)]) -> [u64; 64] {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                t[sq] |= 1u64 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    t
}

static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static KING: [u64; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
static PAWN: [[u64; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

const ROOK_DIRS: [(i8, i8); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
const BISHOP_DIRS: [(i8, i8); 4] = [(1, 1), (-1, 1), (-1, -1), (1, -1)];

/// Slider attacks by walking rays; used to build the tables and in tests.
pub fn slider_attacks_slow(sq: Square, occ: u64, dirs: &[(i8, i8); 4]) -> u64 {
    let mut att = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (sq.file() as i8 + df, sq.rank() as i8 + dr);
        while (0..8).contains(&f) && (0..8).contains(&r) {
            let b = 1u64 << (r * 8 + f);
            att |= b;
            if occ & b != 0 {
                break;
            }
            f += df;
            r += dr;
        }
    }
    att
}

/// Relevant occupancy: the rays without their last square (the edge never blocks further).
fn relevant_mask(sq: Square, dirs: &[(i8, i8); 4]) -> u64 {
    let mut m = 0u64;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (sq.file() as i8 + df, sq.rank() as i8 + dr);
        while (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)) {
            m |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
    }
    m
}

#[derive(Clone, Copy, Default)]
struct Magic {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

struct Tables {
    rook: [Magic; 64],
    bishop: [Magic; 64],
    attacks: Vec<u64>,
    between: Vec<[u64; 64]>,
    line: Vec<[u64; 64]>,
}

static TABLES: OnceLock<Tables> = OnceLock::new();

#[inline(always)]
fn tables() -> &'static Tables {
    TABLES.get_or_init(build_tables)
}

/// Builds all start-up tables now rather than on first use (e.g. before timing).
pub fn init() {
    let _ = tables();
}

fn find_magics(dirs: &[(i8, i8); 4], seed: u64, attacks: &mut Vec<u64>) -> [Magic; 64] {
    let mut magics = [Magic::default(); 64];
    let mut rng = seed;
    let mut next = move || {
        // xorshift64*: deterministic, good enough to find magics quickly.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut occs = Vec::with_capacity(4096);
    let mut refs = Vec::with_capacity(4096);
    let mut epoch = vec![0u32; 4096];
    let mut cur = 0u32;
    for sq in Square::all() {
        let mask = relevant_mask(sq, dirs);
        let bits = mask.count_ones();
        occs.clear();
        refs.clear();
        // Carry-rippler: enumerate every subset of the mask.
        let mut sub = 0u64;
        loop {
            occs.push(sub);
            refs.push(slider_attacks_slow(sq, sub, dirs));
            sub = sub.wrapping_sub(mask) & mask;
            if sub == 0 {
                break;
            }
        }
        let size = 1usize << bits;
        let offset = attacks.len();
        attacks.resize(offset + size, 0);
        let shift = 64 - bits;
        'search: loop {
            let magic = next() & next() & next();
            if (mask.wrapping_mul(magic) >> 56).count_ones() < 6 {
                continue;
            }
            cur += 1;
            for (o, a) in occs.iter().zip(&refs) {
                let idx = (o.wrapping_mul(magic) >> shift) as usize;
                if epoch[idx] < cur {
                    epoch[idx] = cur;
                    attacks[offset + idx] = *a;
                } else if attacks[offset + idx] != *a {
                    continue 'search;
                }
            }
            magics[sq.index()] = Magic {
                mask,
                magic,
                shift,
                offset,
            };
            break;
        }
    }
    magics
}

fn build_tables() -> Tables {
    let mut attacks = Vec::with_capacity(102_400 + 5_248);
    let rook = find_magics(&ROOK_DIRS, 0x9E37_79B9_7F4A_7C15, &mut attacks);
    let bishop = find_magics(&BISHOP_DIRS, 0xD1B5_4A32_D192_ED03, &mut attacks);
    let mut between = vec![[0u64; 64]; 64];
    let mut line = vec![[0u64; 64]; 64];
    for a in Square::all() {
        for b in Square::all() {
            if a == b {
                continue;
            }
            let (ba, bb) = (1u64 << a.index(), 1u64 << b.index());
            for dirs in [&ROOK_DIRS, &BISHOP_DIRS] {
                if slider_attacks_slow(a, 0, dirs) & bb != 0 {
                    line[a.index()][b.index()] = (slider_attacks_slow(a, 0, dirs)
                        & slider_attacks_slow(b, 0, dirs))
                        | ba
                        | bb;
                    between[a.index()][b.index()] =
                        slider_attacks_slow(a, bb, dirs) & slider_attacks_slow(b, ba, dirs);
                }
            }
        }
    }
    Tables {
        rook,
        bishop,
        attacks,
        between,
        line,
    }
}

#[inline(always)]
fn magic_lookup(t: &Tables, m: &Magic, occ: Bitboard) -> Bitboard {
    let idx = ((occ.0 & m.mask).wrapping_mul(m.magic) >> m.shift) as usize;
    // SAFETY: idx < 2^bits by construction of the shift, and the slot range was allocated.
    Bitboard(unsafe { *t.attacks.get_unchecked(m.offset + idx) })
}

#[inline(always)]
pub fn rook_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let t = tables();
    magic_lookup(t, &t.rook[sq.index()], occ)
}

#[inline(always)]
pub fn bishop_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let t = tables();
    magic_lookup(t, &t.bishop[sq.index()], occ)
}

#[inline(always)]
pub fn queen_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    rook_attacks(sq, occ) | bishop_attacks(sq, occ)
}

/// Squares strictly between `a` and `b` when they share a line, else empty.
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(tables().between[a.index()][b.index()])
}

/// The whole line (edge to edge) through `a` and `b` when they share one, else empty.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(tables().line[a.index()][b.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_lookup_matches_ray_walk() {
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let occ = x & x.rotate_left(17);
            for sq in Square::all() {
                assert_eq!(
                    rook_attacks(sq, Bitboard(occ)).0,
                    slider_attacks_slow(sq, occ, &ROOK_DIRS)
                );
                assert_eq!(
                    bishop_attacks(sq, Bitboard(occ)).0,
                    slider_attacks_slow(sq, occ, &BISHOP_DIRS)
                );
            }
        }
    }

    #[test]
    fn leapers_and_lines() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(king_attacks(Square::E1).count(), 5);
        assert_eq!(
            pawn_attacks(Color::White, Square::A1.flip_rank()).count(),
            0
        );
        assert_eq!(pawn_attacks(Color::Black, Square::E8).count(), 2);
        assert_eq!(between(Square::A1, Square::H8).count(), 6);
        assert_eq!(line(Square::B1, Square::C1).count(), 8);
        assert!(between(Square::A1, Square::B8).is_empty());
        assert!(line(Square::A1, Square::B8).is_empty());
    }
}
