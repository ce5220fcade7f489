//! Zobrist keys, generated at compile time by SplitMix64 from a fixed seed.
//! A position's key covers pieces, side to move, castling rights and the en-passant
//! file (only when an en-passant capture is possible, as Polyglot does).

use super::types::{Color, Role, Square};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

const N: usize = 768 + 1 + 16 + 8;

const KEYS: [u64; N] = {
    let mut k = [0u64; N];
    let mut s = 0x0DEE_7C4E_55u64;
    let mut i = 0;
    while i < N {
        let (ns, v) = splitmix(s);
        s = ns;
        k[i] = v;
        i += 1;
    }
    k
};

#[inline(always)]
pub fn piece(color: Color, role: Role, sq: Square) -> u64 {
    KEYS[(color.index() * 6 + role.index()) * 64 + sq.index()]
}

#[inline(always)]
pub fn side() -> u64 {
    KEYS[768]
}

const CASTLING: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut r = 0;
    while r < 16 {
        let mut i = 0;
        while i < 4 {
            if r >> i & 1 != 0 {
                t[r] ^= KEYS[769 + i];
            }
            i += 1;
        }
        r += 1;
    }
    t
};

/// Key of a whole castling-rights set (4 bits), so a change costs one xor pair.
#[inline(always)]
pub fn castling(rights: u8) -> u64 {
    CASTLING[rights as usize & 15]
}

#[inline(always)]
pub fn ep_file(file: u8) -> u64 {
    KEYS[785 + file as usize]
}
