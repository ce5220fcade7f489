//! [`Lines`]: the storage of a [`super::Matrix`], `f32`s starting on a 64-byte cache line.
//!
//! A `Vec<f32>` of a large matrix starts 16 bytes into a line (the allocator's header), so
//! every 64-byte vector load of a row straddles two lines. The sparse first layer reads
//! whole weight rows and gradient rows this way, and pays for the split loads (measured in
//! docs/notebook/benchmarks.md); with the start on a line, rows whose length is a multiple of 16
//! floats never straddle, and others straddle half as often.

/// One cache line of floats: the unit of allocation, so the buffer inherits its alignment.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; LINE]);

const LINE: usize = 16;

/// A growable run of `f32`s whose first value is 64-byte aligned.
#[derive(Clone, Default)]
pub struct Lines {
    lines: Vec<Line>,
    len: usize,
}

impl Lines {
    /// `n` copies of `v`.
    pub fn filled(n: usize, v: f32) -> Lines {
        Lines { lines: vec![Line([v; LINE]); n.div_ceil(LINE)], len: n }
    }

    pub fn from_slice(s: &[f32]) -> Lines {
        let mut l = Lines::default();
        l.resize(s.len(), 0.0);
        l.as_mut_slice().copy_from_slice(s);
        l
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets the length to `n`; values past the old length are `v`. Keeps the allocation
    /// when shrinking, as `Vec::resize` does.
    pub fn resize(&mut self, n: usize, v: f32) {
        let old = self.len;
        self.lines.resize(n.div_ceil(LINE), Line([v; LINE]));
        self.len = n;
        if n > old {
            // The tail of the line that held the old end keeps stale values: set it too.
            let end = n.min(old.div_ceil(LINE) * LINE);
            self.as_mut_slice()[old..end].fill(v);
        }
    }

    pub fn as_slice(&self) -> &[f32] {
        // Safety: `Line` is `repr(C)` over `[f32; LINE]`, so the lines are `lines.len() *
        // LINE` contiguous initialised floats, and `len` never exceeds that.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<f32>(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        // Safety: as in `as_slice`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<f32>(), self.len) }
    }
}

impl PartialEq for Lines {
    fn eq(&self, other: &Lines) -> bool {
        self.as_slice() == other.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_line_and_resizes_like_a_vec() {
        let mut l = Lines::filled(37, 1.5);
        let mut v = vec![1.5f32; 37];
        assert_eq!(l.as_slice().as_ptr() as usize % 64, 0);
        for (i, &n) in [40usize, 3, 50, 16, 0, 33, 64, 65].iter().enumerate() {
            let x = i as f32;
            l.resize(n, x);
            v.resize(n, x);
            assert_eq!(l.as_slice(), &v[..], "after resize to {n}");
            l.as_mut_slice().iter_mut().enumerate().for_each(|(j, y)| *y = j as f32 * x);
            v.iter_mut().enumerate().for_each(|(j, y)| *y = j as f32 * x);
            if n > 0 {
                assert_eq!(l.as_slice().as_ptr() as usize % 64, 0);
            }
        }
        assert!(Lines::from_slice(&v) == l);
        assert!(Lines::default().is_empty());
    }
}
