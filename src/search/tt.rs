//! Transposition table. Generic over the comparator's key, because a stored bound is a
//! [`Value`] (a position key or a terminal outcome), not a number. Shared by the threads
//! of a search (Lazy SMP): each entry behind its own sequence lock.

use crate::chess::Move;
use crate::io::pages::LargeBuf;
use crate::eval::{Kind, Value};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{fence, AtomicU32, AtomicU8, Ordering as AtomicOrdering};

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

/// One slot: an entry behind a sequence lock, so threads share the table without a lock
/// per probe. `seq` is even when the entry is whole (0: never written), odd while a writer
/// holds it; a reader copies the entry and keeps it only if `seq` was even and unchanged
/// across the copy. A comparator's entries hold a position (DeepChess's: a packed board,
/// 64 bytes a slot), so they cannot be one atomic word, as a scalar engine's are.
struct Slot<K> {
    seq: AtomicU32,
    entry: UnsafeCell<MaybeUninit<Entry<K>>>,
}

// Safety: every access to `entry` goes through the sequence lock (`read`, `write`); a torn
// copy is detected and dropped before it is used.
unsafe impl<K: Send> Sync for Slot<K> {}

impl<K: Copy> Slot<K> {
    fn empty() -> Self {
        Slot { seq: AtomicU32::new(0), entry: UnsafeCell::new(MaybeUninit::uninit()) }
    }

    /// The entry, if one is stored and no writer overlapped the copy.
    #[inline]
    fn read(&self) -> Option<Entry<K>> {
        let s1 = self.seq.load(AtomicOrdering::Acquire);
        if s1 == 0 || s1 & 1 == 1 {
            return None;
        }
        // Safety: a copy as bytes (MaybeUninit), possibly torn by a concurrent writer; it is
        // only read as an entry below, once the sequence shows no writer overlapped it.
        let copy = unsafe { std::ptr::read_volatile(self.entry.get()) };
        fence(AtomicOrdering::Acquire);
        if self.seq.load(AtomicOrdering::Relaxed) != s1 {
            return None;
        }
        // Safety: written whole by `write` (seq even and non-zero) and unchanged since.
        Some(unsafe { copy.assume_init() })
    }

    /// Stores `e` unless another thread is writing this slot (a lost store only costs a
    /// re-search, as an overwritten entry does).
    #[inline]
    fn write(&self, e: Entry<K>) {
        let s = self.seq.load(AtomicOrdering::Relaxed);
        if s & 1 == 1 || self.seq.compare_exchange(s, s + 1, AtomicOrdering::Acquire, AtomicOrdering::Relaxed).is_err() {
            return;
        }
        // Safety: this thread holds the slot (seq odd); readers drop what they copy meanwhile.
        unsafe { std::ptr::write_volatile(self.entry.get(), MaybeUninit::new(e)) };
        // 0 stays "never written", even after the counter wraps.
        self.seq.store(if s + 2 == 0 { 2 } else { s + 2 }, AtomicOrdering::Release);
    }

    fn clear(&self) {
        self.seq.store(0, AtomicOrdering::Relaxed);
    }
}

/// The transposition table, shared by the threads of one search (Lazy SMP) through an
/// `Arc`: every method takes `&self`.
pub struct Table<K> {
    /// In large pages where the system gives them (`io::pages`): every probe is random.
    entries: LargeBuf<Slot<K>>,
    age: AtomicU8,
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
        Self::try_with_len(bytes / Self::slot_bytes()).map_err(|_| format!("cannot allocate {mb} MB"))
    }

    /// A table of `n` entries (at least one), whatever their size: trees of two key forms
    /// compared at an equal entry count (`bench --tt-entries`) are the same tree.
    pub fn try_with_len(n: usize) -> Result<Self, String> {
        let entries = LargeBuf::try_new(n.max(1), Slot::empty).map_err(|_| format!("cannot allocate {n} entries"))?;
        Ok(Table { entries, age: AtomicU8::new(0) })
    }

    /// Bytes an entry takes (with its sequence lock).
    pub fn slot_bytes() -> usize {
        std::mem::size_of::<Slot<K>>()
    }

    /// Empties the table (between games: no search is running).
    pub fn clear(&self) {
        self.entries.iter().for_each(Slot::clear);
        self.age.store(0, AtomicOrdering::Relaxed);
    }

    /// A new search: older entries become preferred victims.
    pub fn new_search(&self) {
        self.age.fetch_add(1, AtomicOrdering::Relaxed);
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
        let mut e = self.entries[self.index(hash)].read()?;
        if e.hash != hash {
            return None;
        }
        e.value = shift_mate(e.value, ply as i32);
        Some(e)
    }

    /// Stores a result; mate distances are stored relative to this node so they stay right
    /// when the position recurs at another ply.
    #[inline]
    pub fn store(&self, hash: u64, ply: usize, depth: i32, bound: Bound, value: Value<K>, mv: Option<Move>) {
        let slot = &self.entries[self.index(hash)];
        let age = self.age.load(AtomicOrdering::Relaxed);
        let keep_move = match slot.read() {
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
        slot.write(Entry { hash, mv, depth: depth as i16, bound, age, value });
    }

    /// Permille of entries written by the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let n = self.entries.len().min(1000);
        let age = self.age.load(AtomicOrdering::Relaxed);
        let used = self.entries[..n].iter().filter(|e| matches!(e.read(), Some(x) if x.age == age)).count();
        (used * 1000 / n.max(1)) as u32
    }
}

fn shift_mate<K: Copy>(mut v: Value<K>, by: i32) -> Value<K> {
    if let Kind::Mate { winner, ply } = v.kind {
        v.kind = Kind::Mate { winner, ply: (ply as i32 + by).clamp(0, u16::MAX as i32) as u16 };
    }
    v
}
