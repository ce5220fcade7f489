//! Per-position results kept by zobrist key: DeepChess's position hashing (paper §4, its
//! Pos2Vec codes), and the values of the scalar evaluators that cost more than a handcrafted
//! evaluation ([`ScoreComparator::cached`](super::ScoreComparator::cached)).

use crate::io::pages::{prefetch, LargeBuf};
use crate::tensor::rng::SplitMix64;

/// A direct-mapped table from zobrist key to value (always replace: the newest is likeliest
/// to be asked for again). Slots hold keys XORed with a salt that [`PositionCache::clear`]
/// changes, so clearing is O(1) instead of rewriting the table (16 MB of codes: `bench`
/// clears between its 30 positions, a GUI on every `ucinewgame`).
pub struct PositionCache<V> {
    /// In large pages where the system gives them (`io::pages`): every probe is random.
    slots: LargeBuf<(u64, V)>,
    salt: u64,
    salts: SplitMix64,
}

impl<V: Copy + Default> PositionCache<V> {
    pub fn new(mb: usize) -> Self {
        Self::with_bytes(mb << 20)
    }
    pub fn with_bytes(bytes: usize) -> Self {
        Self::try_with_bytes(bytes).unwrap_or_else(|e| panic!("{e}"))
    }
    /// [`PositionCache::new`], or an error when the memory cannot be had (a helper thread
    /// asked for at run time does without its help rather than abort the engine).
    pub fn try_new(mb: usize) -> Result<Self, String> {
        Self::try_with_bytes(mb << 20)
    }
    pub fn try_with_bytes(bytes: usize) -> Result<Self, String> {
        let n = (bytes / std::mem::size_of::<(u64, V)>()).max(1);
        let slots = LargeBuf::try_new(n, || (0, V::default())).map_err(|e| format!("a position cache of {} MB: {e}", bytes >> 20))?;
        Ok(PositionCache { slots, salt: 0, salts: SplitMix64(0) })
    }
    #[inline]
    fn index(&self, hash: u64) -> usize {
        ((hash as u128 * self.slots.len() as u128) >> 64) as usize
    }
    #[inline]
    pub fn get(&self, hash: u64) -> Option<V> {
        self.find(hash).map(|i| self.slots[i].1)
    }
    /// Starts loading `hash`'s slot into cache.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        let slot = &self.slots[self.index(hash)] as *const (u64, V) as *const u8;
        for line in (0..std::mem::size_of::<(u64, V)>()).step_by(64) {
            prefetch(slot.wrapping_add(line));
        }
    }
    /// The slot holding `hash`, if it does. (An empty slot holds 0, which no salted key equals.)
    #[inline]
    pub fn find(&self, hash: u64) -> Option<usize> {
        let i = self.index(hash);
        let stored = hash ^ self.salt;
        (self.slots[i].0 == stored && stored != 0).then_some(i)
    }
    /// The value in slot `i` (a slot [`PositionCache::find`] returned).
    #[inline]
    pub fn at(&self, i: usize) -> &V {
        &self.slots[i].1
    }
    #[inline]
    pub fn put(&mut self, hash: u64, v: V) {
        let i = self.index(hash);
        self.slots[i] = (hash ^ self.salt, v);
    }
    /// Forgets every entry: a new salt, so no stored key matches any more (up to the same
    /// 2^-64 chance per probe as a zobrist collision).
    pub fn clear(&mut self) {
        self.salt = self.salts.next_u64();
    }
}
