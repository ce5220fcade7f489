//! A position bound as the transposition table keeps it for the net comparator: the leaf's
//! zobrist key and its board packed into 36 bytes (a [`NetKey`] is 80), so that a table
//! slot is 64 bytes, one cache line (issue 81, docs/notebook/plan-81-handles.md, step 6).
//!
//! The board is exact, so a stored bound can rebuild its code after the feature cache lost
//! it, as a whole key could. Packing: the occupied squares (8 bytes), then four bit-planes
//! over the occupied squares in square order (a square's piece code, 4 × 4 bytes: bits 0-2
//! the role, bit 3 black), then side to move and castling (1 byte). A plane is a parallel
//! bit extract of the board's bitboards by the occupancy (PEXT where the CPU has BMI2, a
//! loop over the occupied squares elsewhere), and unpacking deposits it back (PDEP).

use super::key::NetKey;
use crate::chess::Bitboard;
use crate::tensor::kernels::bits::{deposit, extract};

/// See the module's comment. Only `u32` fields, so that it aligns to 4 and a table entry
/// holding it fits a cache line.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct PackedKey {
    hash: [u32; 2],
    occupied: [u32; 2],
    /// Bit `i` of plane `b`: bit `b` of the piece code on the `i`-th occupied square.
    planes: [u32; 4],
    /// Bit 7: White to move; bits 0-3: castling rights.
    meta: u8,
}

/// The squares of a role code's bit `b` (roles in `Role::ALL` order: pawn, knight, bishop,
/// rook, queen, king are codes 0-5).
const ROLES_WITH_BIT: [[bool; 6]; 3] = [
    [false, true, false, true, false, true],
    [false, false, true, true, false, false],
    [false, false, false, false, true, true],
];

impl PackedKey {
    pub fn pack(k: &NetKey) -> PackedKey {
        let (hash, by_role, by_color, white_to_move, castling) = k.parts();
        let occ = by_color[0].0 | by_color[1].0;
        let mut planes = [0u32; 4];
        for (b, roles) in ROLES_WITH_BIT.iter().enumerate() {
            let plane = (0..6).filter(|&r| roles[r]).fold(0u64, |p, r| p | by_role[r].0);
            planes[b] = extract(plane, occ) as u32;
        }
        planes[3] = extract(by_color[1].0, occ) as u32;
        PackedKey {
            hash: split(hash),
            occupied: split(occ),
            planes,
            meta: ((white_to_move as u8) << 7) | castling,
        }
    }

    pub fn unpack(&self) -> NetKey {
        let occ = join(self.occupied);
        let plane = |b: usize| deposit(self.planes[b] as u64, occ);
        let (p0, p1, p2, black) = (plane(0), plane(1), plane(2), plane(3));
        let by_role = [
            occ & !p0 & !p1 & !p2,
            p0 & !p1 & !p2,
            !p0 & p1 & !p2,
            p0 & p1,
            !p0 & !p1 & p2,
            p0 & p2,
        ]
        .map(Bitboard);
        NetKey::from_parts(join(self.hash), by_role, [Bitboard(occ & !black), Bitboard(black)], self.meta & 0x80 != 0, self.meta & 0x0f)
    }
}

#[inline(always)]
fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

#[inline(always)]
fn join(x: [u32; 2]) -> u64 {
    x[0] as u64 | (x[1] as u64) << 32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;
    use crate::tensor::rng::SplitMix64;

    /// The layouts the table's size rests on (a byte more in `Kind` or here and a slot
    /// spans two cache lines): 16 MB hold 262,144 packed entries, 149,796 whole keys.
    #[test]
    fn a_packed_key_is_36_bytes_and_its_table_slot_a_cache_line() {
        use crate::eval::{Handle, Kind, Value};
        use crate::search::tt::Table;
        assert_eq!(std::mem::size_of::<PackedKey>(), 36);
        assert_eq!(std::mem::align_of::<PackedKey>(), 4);
        assert_eq!(std::mem::size_of::<Kind>(), 4);
        assert_eq!(std::mem::size_of::<Value<PackedKey>>(), 40);
        assert_eq!(std::mem::size_of::<Value<NetKey>>(), 88);
        assert_eq!(std::mem::size_of::<Value<Handle>>(), 8);
        assert_eq!((Table::<PackedKey>::slot_bytes(), Table::<NetKey>::slot_bytes(), Table::<f32>::slot_bytes()), (64, 112, 32));
    }

    /// Every position of random games: unpacked, the same key (board, side, castling,
    /// hash), so the same input bits.
    #[test]
    fn pack_then_unpack_is_the_key() {
        let mut r = SplitMix64(11);
        for _ in 0..40 {
            let mut p = Position::startpos();
            for _ in 0..120 {
                let k = NetKey::of(&p);
                let back = PackedKey::pack(&k).unpack();
                assert_eq!(back.parts(), k.parts());
                assert_eq!(back.features().as_slice(), k.features().as_slice());
                let moves = p.legal_moves();
                if moves.is_empty() {
                    break;
                }
                p.play(moves.as_slice()[(r.next_u64() % moves.len() as u64) as usize]);
            }
        }
    }
}
