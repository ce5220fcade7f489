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

static KNIGHT: [u64; 64] =
    leaper_table(&[(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]);
static KING: [u64; 64] =
    leaper_table(&[(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]);
static PAWN: [[u64; 64]; 2] = [leaper_table(&[(-1, 1), (1, 1)]), leaper_table(&[(-1, -1), (1, -1)])];

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

/// Magic multipliers this very search found (with the seeds in `build_tables`), tried first so
/// start-up only verifies them instead of searching (tests and datagen start many processes).
/// A wrong entry is not trusted: verification fails and the search goes on.
const ROOK_MAGICS: [u64; 64] = [
    0x1080004008801020, 0x0840092002C03000, 0x1900200010400900, 0x0880100008000480,
    0x4200100420080200, 0x8100020100080400, 0x0200040110886200, 0x0200008040220411,
    0x0404800084400220, 0x0000401000402000, 0x0086001081220440, 0x0408800800100280,
    0x000A001201040820, 0x8848800200840080, 0x4001000100040200, 0x0442000102105084,
    0x9080010020804100, 0x0040404000201009, 0x0000808010002009, 0x2200090021D00100,
    0x0008008008040080, 0x0004004002010040, 0x0011040008015042, 0x00000A0001768104,
    0x0000800080204009, 0x2010004140002001, 0x9800200280100080, 0x1000100080080080,
    0x0442000A00049020, 0x2100040080020080, 0x0800120400900148, 0x0010040A00128541,
    0x2800804000800030, 0x1010002000400041, 0x4000200011004100, 0x0610008410800800,
    0x0400802402800800, 0xC100020080800400, 0x0002000802000401, 0x0182085882000401,
    0x0220204000808000, 0x2860100040024022, 0x0001002004110040, 0x99101042000A0020,
    0x0004080004008080, 0x0010040002008080, 0x2012004881020004, 0x8300842444820011,
    0x0088403882010200, 0x0820400080210100, 0x0110910040A00300, 0x0801100280080480,
    0x0242009008200600, 0x1002000489500200, 0x0040800200010080, 0x0091800041000080,
    0x0000209300488001, 0x04C1002414824001, 0x020020000B001041, 0x7000100004200901,
    0x8002002004100802, 0x30010002084C0007, 0x0888221800813004, 0x4000002840840112,
];
const BISHOP_MAGICS: [u64; 64] = [
    0x2048017020910100, 0x0044410424008008, 0x040828A400900000, 0x8002209200022000,
    0x0002021000540002, 0x0021018840000000, 0x00009E8420204002, 0x00A0920110084480,
    0x4003062018010110, 0x0221046812004E09, 0x01E11002958912A0, 0x0000044410804000,
    0x0000821210000080, 0x080201102210A800, 0x0080040411045004, 0x00704A1842021000,
    0x1005061070322800, 0x0018001010410444, 0x0010000800401420, 0x2204002844000800,
    0x2052020412022280, 0x000A020101008208, 0x0040400201042000, 0x03E1082040480410,
    0x1004200004208414, 0x08700400984808C8, 0x0088080004004410, 0x008C0240140100A2,
    0x0008840001822000, 0x0050088001080100, 0x98140840040A2200, 0x3002020900210110,
    0x1004040640206000, 0x1090909000840400, 0x9002444810100020, 0x4000020080080080,
    0x0028020400011010, 0x0290808300020100, 0x8010020882004410, 0x0604010040082C20,
    0x20040104C0801008, 0x6004208424001050, 0x1002840041000800, 0x0200042018000102,
    0xA8002000A0821C00, 0x0040080802201910, 0x0222620444000100, 0x0002080041020088,
    0x1500820110401050, 0x0000492090100080, 0x0900410041100000, 0x0302000420880000,
    0x0010501202020020, 0x0008200490049040, 0x0462080214A40120, 0x2421310102008100,
    0x2400420080884060, 0x0800804406184208, 0x0B0080124A084400, 0x082E082300840412,
    0x6051049040082200, 0xC610211002102101, 0x0000048808010433, 0x0010200804405440,
];

fn find_magics(
    dirs: &[(i8, i8); 4],
    known: &[u64; 64],
    seed: u64,
    attacks: &mut Vec<u64>,
) -> [Magic; 64] {
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
        let mut candidate = Some(known[sq.index()]);
        'search: loop {
            let magic = candidate.take().unwrap_or_else(|| next() & next() & next());
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
            magics[sq.index()] = Magic { mask, magic, shift, offset };
            break;
        }
    }
    magics
}

fn build_tables() -> Tables {
    let mut attacks = Vec::with_capacity(102_400 + 5_248);
    let rook = find_magics(
        &ROOK_DIRS,
        &ROOK_MAGICS,
        0x9E37_79B9_7F4A_7C15,
        &mut attacks,
    );
    let bishop = find_magics(
        &BISHOP_DIRS,
        &BISHOP_MAGICS,
        0xD1B5_4A32_D192_ED03,
        &mut attacks,
    );
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
                    line[a.index()][b.index()] =
                        (slider_attacks_slow(a, 0, dirs) & slider_attacks_slow(b, 0, dirs)) | ba | bb;
                    between[a.index()][b.index()] =
                        slider_attacks_slow(a, bb, dirs) & slider_attacks_slow(b, ba, dirs);
                }
            }
        }
    }
    Tables { rook, bishop, attacks, between, line }
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
    fn recorded_magics_are_the_ones_in_use() {
        // Start-up only verifies them; a recorded entry that failed would cost a search.
        let t = tables();
        for sq in 0..64 {
            assert_eq!(t.rook[sq].magic, ROOK_MAGICS[sq], "rook {sq}");
            assert_eq!(t.bishop[sq].magic, BISHOP_MAGICS[sq], "bishop {sq}");
        }
    }

    #[test]
    fn magic_lookup_matches_ray_walk() {
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let occ = x & x.rotate_left(17);
            for sq in Square::all() {
                assert_eq!(rook_attacks(sq, Bitboard(occ)).0, slider_attacks_slow(sq, occ, &ROOK_DIRS));
                assert_eq!(bishop_attacks(sq, Bitboard(occ)).0, slider_attacks_slow(sq, occ, &BISHOP_DIRS));
            }
        }
    }

    #[test]
    fn leapers_and_lines() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(king_attacks(Square::E1).count(), 5);
        assert_eq!(pawn_attacks(Color::White, Square::A1.flip_rank()).count(), 0);
        assert_eq!(pawn_attacks(Color::Black, Square::E8).count(), 2);
        assert_eq!(between(Square::A1, Square::H8).count(), 6);
        assert_eq!(line(Square::B1, Square::C1).count(), 8);
        assert!(between(Square::A1, Square::B8).is_empty());
        assert!(line(Square::A1, Square::B8).is_empty());
    }
}
