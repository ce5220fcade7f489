//! Live keys as handles: a comparator whose key is a position (DeepChess's net) keeps the
//! positions of the search's live values in a [`KeyStore`] and hands the search a 4-byte
//! [`Handle`], so a value is 8 bytes and a bound 12, as a handcrafted score's are, instead of
//! a board copied at every node (issue 81, docs/notebook/plan-81-handles.md).
//!
//! The store is a stack, one per search thread, released node by node (the search's
//! [`Comparator::mark`](super::Comparator::mark) discipline): a node's keys sit above the
//! mark it took on entry, and on return only the one it returns survives, moved down to the
//! mark. Bounds a node received sit below its mark, so they are never moved or dropped while
//! it runs. The transposition table cannot hold handles (it is shared and outlives a
//! search): it keeps the comparator's self-contained stored form.

/// A live key: an index into the thread's [`KeyStore`]. The default (`u32::MAX`) points at
/// nothing: the key of a draw, a mate or an initial bound, which is never read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(u32);

impl Default for Handle {
    #[inline(always)]
    fn default() -> Self {
        Handle(u32::MAX)
    }
}

/// The live positions of one search thread (see the module's comment).
#[derive(Clone, Debug, Default)]
pub struct KeyStore<E> {
    entries: Vec<E>,
}

impl<E: Copy> KeyStore<E> {
    pub fn new() -> Self {
        // A few plies' worth of bounds, children and table values: it rarely grows.
        KeyStore { entries: Vec::with_capacity(1024) }
    }

    /// Stores `e`; its handle stays valid until a release or truncation below it.
    #[inline]
    pub fn push(&mut self, e: E) -> Handle {
        let h = Handle(self.entries.len() as u32);
        self.entries.push(e);
        h
    }

    /// The entry behind `h`, which must be live (never a default handle, never one
    /// released: in a debug build either panics here).
    #[inline]
    pub fn get(&self, h: Handle) -> &E {
        debug_assert!((h.0 as usize) < self.entries.len(), "a released or default handle read");
        &self.entries[h.0 as usize]
    }

    /// Where the next entry goes: a node's mark.
    #[inline]
    pub fn mark(&self) -> u32 {
        self.entries.len() as u32
    }

    /// Drops every entry from `mark` up but `keep`'s, which moves to `mark` (and `keep` with
    /// it). A `keep` below the mark (a bound the node returned as it came) stays where it is.
    #[inline]
    pub fn release(&mut self, mark: u32, keep: &mut Handle) {
        let m = mark as usize;
        if keep.0 != u32::MAX && keep.0 >= mark {
            if keep.0 != mark {
                self.entries[m] = *self.get(*keep);
                keep.0 = mark;
            }
            self.entries.truncate(m + 1);
        } else {
            self.entries.truncate(m);
        }
    }

    /// Drops every entry from `mark` up.
    #[inline]
    pub fn truncate(&mut self, mark: u32) {
        self.entries.truncate(mark as usize);
    }

    /// Drops every entry (a new game).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Value;

    #[test]
    fn a_value_of_a_handle_is_a_word() {
        assert_eq!(std::mem::size_of::<Value<Handle>>(), 8);
        assert_eq!(std::mem::size_of::<Value<f32>>(), 8);
    }

    #[test]
    fn release_keeps_the_returned_entry_and_drops_the_rest() {
        let mut s = KeyStore::new();
        let bound = s.push(10u64);
        let mark = s.mark();
        let _dead = s.push(20);
        let mut kept = s.push(30);
        let _after = s.push(40);
        s.release(mark, &mut kept);
        assert_eq!((s.len(), *s.get(kept), *s.get(bound)), (2, 30, 10));
        assert_eq!(kept, Handle(mark));
        // A returned bound from below the mark stays put; everything above goes.
        let mark = s.mark();
        s.push(50);
        let mut same = bound;
        s.release(mark, &mut same);
        assert_eq!((s.len(), same, *s.get(same)), (2, bound, 10));
        // A default handle (a draw, a mate) keeps nothing.
        s.push(60);
        let mut none = Handle::default();
        s.release(1, &mut none);
        assert_eq!((s.len(), none), (1, Handle::default()));
    }
}
