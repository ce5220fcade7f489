//! Moves and move lists. Castling is the king moving two squares (`e1g1`), as in UCI.

use super::bitboard::Bitboard;
use super::types::{Role, Square};
use std::fmt;
use std::mem::MaybeUninit;

/// A move: from, to, and the promotion role if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    pub promotion: Option<Role>,
}

impl Move {
    pub const fn new(from: Square, to: Square, promotion: Option<Role>) -> Move {
        Move { from, to, promotion }
    }

    /// Packs into 16 bits (from, to, promotion role + 1), e.g. for hash tables.
    pub const fn to_u16(self) -> u16 {
        let p = match self.promotion {
            Some(r) => r as u16 + 1,
            None => 0,
        };
        self.from.index() as u16 | (self.to.index() as u16) << 6 | p << 12
    }

    /// Inverse of [`Move::to_u16`]; `None` for codes no move produces.
    pub fn from_u16(v: u16) -> Option<Move> {
        let promotion = match v >> 12 {
            0 => None,
            p @ 2..=5 => Some(Role::from_index(p as usize - 1)),
            _ => return None,
        };
        Some(Move::new(Square::new((v & 63) as u8), Square::new((v >> 6 & 63) as u8), promotion))
    }
}

/// UCI long algebraic notation: `e2e4`, `e7e8q`, castling `e1g1`.
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion {
            write!(f, "{}", p.char())?;
        }
        Ok(())
    }
}

/// All moves of one piece: its role, origin and a set of destinations. Legal generation
/// produces these; leaf counting only needs their popcounts.
#[derive(Clone, Copy, Debug)]
pub struct PieceMoves {
    pub role: Role,
    pub from: Square,
    pub to: Bitboard,
}

impl PieceMoves {
    /// Whether these are pawn moves onto the last rank (each destination is four moves).
    #[inline(always)]
    pub fn is_promotion(&self) -> bool {
        self.role == Role::Pawn && (self.to & Bitboard::BACK_RANKS).any()
    }

    /// Number of moves, counting each promotion destination four times.
    #[inline(always)]
    pub fn len(&self) -> usize {
        let n = self.to.count() as usize;
        if self.is_promotion() {
            n * 4
        } else {
            n
        }
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.to.is_empty()
    }

    /// Calls `f` on each move.
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(Move)) {
        if self.is_promotion() {
            for to in self.to {
                for p in Role::PROMOTIONS {
                    f(Move::new(self.from, to, Some(p)));
                }
            }
        } else {
            for to in self.to {
                f(Move::new(self.from, to, None));
            }
        }
    }
}

/// A fixed-capacity list of moves (no legal position has more than 218). The slots past
/// `len` are left uninitialised: the search makes one list per node, and writing all 256
/// first was a visible share of it.
#[derive(Clone)]
pub struct MoveList {
    moves: [MaybeUninit<Move>; 256],
    len: usize,
}

impl Default for MoveList {
    #[inline(always)]
    fn default() -> Self {
        MoveList { moves: [MaybeUninit::uninit(); 256], len: 0 }
    }
}

impl MoveList {
    #[inline(always)]
    pub fn push(&mut self, m: Move) {
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        // Safety: the first `len` slots were written by `push` (and `len` <= 256, or `push`
        // would have panicked on the index).
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr() as *const Move, self.len) }
    }
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        // Safety: as in `as_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.moves.as_mut_ptr() as *mut Move, self.len) }
    }
    pub fn contains(&self, m: &Move) -> bool {
        self.as_slice().contains(m)
    }
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
