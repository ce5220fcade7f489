//! Transposition table. Generic over the comparator's key, because a stored bound is a
//! [`Value`] (a position key or a terminal outcome), not a number.

use crate::chess::Move;
use crate::eval::{Kind, Value};

/// How a stored value bounds the true one, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Exact,
    /// The true value is at least this good for the side to move (a cut-off).
    Lower,
    /// The true value is at most this good (no move improved alpha).
    Upper,
}

#[derive(Clone, Copy)]
pub struct Entry<K> {
    pub hash: u64,
    pub mv: u16,
    pub depth: i16,
    pub bound: Bound,
    age: u8,
    pub value: Value<K>,
}

pub struct Table<K> {
    entries: Vec<Option<Entry<K>>>,
    age: u8,
}

impl<K: Copy + Default> Table<K> {
    /// A table using about `mb` megabytes (at least one entry), or the largest half, quarter,
    /// … of it that can be allocated: building a searcher never aborts for its table.
    pub fn new(mb: usize) -> Self {
        let mut mb = mb.max(1);
        loop {
            match Self::try_new(mb) {
                Ok(t) => return t,
                Err(_) if mb > 1 => mb /= 2,
                Err(e) => panic!("transposition table of 1 MB: {e}"),
            }
        }
    }

    /// A table of about `mb` megabytes, or an error if the memory cannot be had (the caller
    /// keeps its previous table).
    pub fn try_new(mb: usize) -> Result<Self, String> {
        let bytes = mb.max(1).checked_mul(1 << 20).ok_or("the size overflows")?;
        let n = (bytes / std::mem::size_of::<Option<Entry<K>>>()).max(1);
        let mut entries = Vec::new();
        entries.try_reserve_exact(n).map_err(|_| format!("cannot allocate {mb} MB"))?;
        entries.resize(n, None);
        Ok(Table { entries, age: 0 })
    }

    pub fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = None);
        self.age = 0;
    }

    /// A new search: older entries become preferred victims.
    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(1);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    fn index(&self, hash: u64) -> usize {
        ((hash as u128 * self.entries.len() as u128) >> 64) as usize
    }

    /// Starts loading the entry for `hash` into cache.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        super::prefetch(&self.entries[self.index(hash)]);
    }

    /// The entry for `hash`, with mate distances made relative to the root again.
    #[inline]
    pub fn probe(&self, hash: u64, ply: usize) -> Option<Entry<K>> {
        let e = self.entries[self.index(hash)]?;
        if e.hash != hash {
            return None;
        }
        let mut e = e;
        e.value = shift_mate(e.value, ply as i32);
        Some(e)
    }

    /// Stores a result; mate distances are stored relative to this node so they stay right
    /// when the position recurs at another ply.
    #[inline]
    pub fn store(&mut self, hash: u64, ply: usize, depth: i32, bound: Bound, value: Value<K>, mv: Option<Move>) {
        let i = self.index(hash);
        let age = self.age;
        let keep_move = match &self.entries[i] {
            Some(old) if old.hash == hash => {
                if old.age == age && old.depth as i32 > depth + 2 && bound != Bound::Exact {
                    return;
                }
                old.mv
            }
            Some(old) if old.age == age && old.depth as i32 > depth + 3 => return,
            _ => 0,
        };
        let mv = mv.map(|m| m.to_u16()).unwrap_or(keep_move);
        let value = shift_mate(value, -(ply as i32));
        self.entries[i] = Some(Entry { hash, mv, depth: depth as i16, bound, age, value });
    }

    /// Permille of entries written by the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let n = self.entries.len().min(1000);
        let used = self.entries[..n].iter().filter(|e| matches!(e, Some(x) if x.age == self.age)).count();
        (used * 1000 / n.max(1)) as u32
    }
}

fn shift_mate<K: Copy>(mut v: Value<K>, by: i32) -> Value<K> {
    if let Kind::Mate { winner, ply } = v.kind {
        v.kind = Kind::Mate { winner, ply: (ply as i32 + by).clamp(0, u16::MAX as i32) as u16 };
    }
    v
}
