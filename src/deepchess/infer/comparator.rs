//! The DeepChess comparator of the search (paper §4): [`SiameseNet`] is what it needs from a
//! net (`net.rs` implements it for every trained shape), and [`NetComparator`] turns any
//! such net into a [`Comparator`] with
//! - the paper's position hashing: each position's code (Pos2Vec output, or whatever the
//!   net precomputes per position) cached by zobrist key, and
//! - beyond the paper, an incremental first layer: the sparse layer's sums are updated from
//!   the nearest ancestor's accumulator with only the input bits the moves changed.

use super::key::NetKey;
use super::packed::PackedKey;
use super::FeatureCache;
use crate::chess::Position;
use crate::deepchess::features::{Features, MAX_ACTIVE};
use crate::eval::comparator::CP_PER_DRAW_LOGIT;
use crate::eval::line::{FirstLayer, Line};
use crate::eval::{Comparator, Counters, Handle, Kind, KeyStore, Value};
use crate::tensor::layers::sigmoid;
use std::cmp::Ordering;
use std::sync::Arc;

/// What the search needs from a Siamese comparator network (paper §3-4). The first layer is
/// a [`FirstLayer`] over the board's bits, so the search keeps it along its line
/// ([`crate::eval::line`]); the rest of the tower and the head are the net's own business.
pub trait SiameseNet: FirstLayer<Sum: Send> + Send + Sync {
    /// Per-position result cached by zobrist key (e.g. the 100 Pos2Vec features, or their
    /// projections through the head's first layer so a comparison costs only the remainder).
    type Code: Copy + Default + Send;
    /// The rest of the tower from the first layer's pre-activation sums.
    fn finish(&self, first: &[Self::Sum]) -> Self::Code;
    /// Two positions' codes, `(finish(a), finish(b))`: what the value reading asks for (a
    /// position and its mirror), so a net may run them as one pass (equal within float
    /// tolerance).
    fn finish_pair(&self, a: &[Self::Sum], b: &[Self::Sum]) -> (Self::Code, Self::Code) {
        (self.finish(a), self.finish(b))
    }
    /// The head on (a, b): the difference of its two softmax logits, so that
    /// P(`a` better for White than `b`) = sigmoid(`head_logit`).
    fn head_logit(&self, a: &Self::Code, b: &Self::Code) -> f32;
    /// Both orders, `(head_logit(a, b), head_logit(b, a))`: what every comparison asks for,
    /// so a net may run them as one pass (equal to the two calls within float tolerance).
    fn head_logit_pair(&self, a: &Self::Code, b: &Self::Code) -> (f32, f32) {
        (self.head_logit(a, b), self.head_logit(b, a))
    }
    /// Probability that `a` is better for White than `b` (the head, softmax output 0).
    fn head(&self, a: &Self::Code, b: &Self::Code) -> f32 {
        sigmoid(self.head_logit(a, b))
    }
}

/// Size of the comparison memo (KB). Repeated comparisons are close together in the tree,
/// so a memo that stays in L2 answers about as many as a large one, whose misses each cost
/// a trip to memory (docs/search.md, "Feature cache and incremental first layer").
const PAIR_CACHE_KB: usize = 64;

/// Widest first layer a code is rebuilt for on the stack (the big net's 600, padded).
const MAX_SUMS: usize = 1024;

/// A [`Comparator`] over a [`SiameseNet`].
pub struct NetComparator<N: SiameseNet> {
    /// Shared by the comparators of a search's threads ([`Comparator::fork`]).
    pub net: Arc<N>,
    cache_mb: usize,
    name: &'static str,
    cache: FeatureCache<N::Code>,
    /// P(position better than its colour-mirrored twin), by zobrist key.
    draw_cache: FeatureCache<f32>,
    /// Comparison margins by pair of zobrist keys (the same pairs recur across siblings and
    /// iterations), when `memo` is on.
    pair_cache: FeatureCache<f32>,
    /// Whether comparisons go through `pair_cache`: where the head's remainder on two
    /// cached codes costs less than the memo's probe, they do not (option `Memo`).
    memo: bool,
    /// Head margins (logit of (a, b) minus logit of (b, a)) smaller than this compare
    /// `Equal` (option `Resolution`; 0: every difference counts).
    tie: f32,
    /// The current line: the position at each ply and its first-layer sums when valid,
    /// updated incrementally unless [`Comparator::set_incremental`] turned that off.
    line: Line<N::Sum>,
    /// The positions behind the search's live values (the keys it holds are handles).
    store: KeyStore<NetKey>,
    stats: NetStats,
}

/// What the net comparator counts: comparisons (and how many a memo answered), keys (and
/// how many the feature cache answered), codes rebuilt from a key's input bits because their
/// cache slot had been reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    pub comparisons: u64,
    pub comparison_hits: u64,
    pub keys: u64,
    pub cache_hits: u64,
    pub rebuilds: u64,
}

impl<N: SiameseNet> NetComparator<N> {
    /// Its counters, typed (tests; `bench` reads them named, through [`Comparator::counters`]).
    pub fn stats(&self) -> NetStats {
        self.stats
    }

    pub fn new(net: N, name: &'static str, cache_mb: usize) -> Self {
        Self::from_shared(Arc::new(net), name, cache_mb)
    }

    fn from_shared(net: Arc<N>, name: &'static str, cache_mb: usize) -> Self {
        Self::try_from_shared(net, name, cache_mb).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`NetComparator::from_shared`], or an error when its caches cannot be had.
    fn try_from_shared(net: Arc<N>, name: &'static str, cache_mb: usize) -> Result<Self, String> {
        let h = net.width();
        Ok(NetComparator {
            net,
            cache_mb,
            name,
            cache: FeatureCache::try_new(cache_mb)?,
            draw_cache: FeatureCache::try_new(1)?,
            pair_cache: FeatureCache::try_with_bytes(PAIR_CACHE_KB << 10)?,
            line: Line::new(h),
            store: KeyStore::new(),
            memo: true,
            tie: 0.0,
            stats: NetStats::default(),
        })
    }

    /// First-layer sums of `features` from scratch.
    fn refresh(net: &N, features: &Features, out: &mut [N::Sum]) {
        let mut rows = [0usize; MAX_ACTIVE];
        let f = features.as_slice();
        rows.iter_mut().zip(f).for_each(|(r, &i)| *r = i as usize);
        net.refresh(&rows[..f.len()], out);
    }

    /// The code of a position from its input bits, without the cache.
    fn code_from_features(&self, f: &Features) -> N::Code {
        let mut acc = [N::Sum::default(); MAX_SUMS];
        let acc = &mut acc[..self.net.width()];
        Self::refresh(&self.net, f, acc);
        self.net.finish(acc)
    }

    /// The cache slot holding live key `h`'s code, rebuilt from its board if the slot was
    /// reused.
    fn slot(&mut self, h: Handle) -> usize {
        let hash = self.store.get(h).hash;
        if let Some(i) = self.cache.find(hash) {
            return i;
        }
        self.stats.rebuilds += 1;
        let code = self.code_from_features(&self.store.get(h).features());
        self.cache.put(hash, code);
        self.cache.find(hash).expect("just stored")
    }

    /// P(a better than b for White) from both orders of the head (see `prob_white_better`).
    #[inline]
    fn antisymmetric(&self, a: &N::Code, b: &N::Code) -> f32 {
        let (ab, ba) = self.net.head_logit_pair(a, b);
        0.5 * (sigmoid(ab) + 1.0 - sigmoid(ba))
    }

    /// The sign of `antisymmetric(a, b) − ½` without an exponential: the average of
    /// sigmoid(l(a, b)) and 1 − sigmoid(l(b, a)) exceeds ½ exactly when l(a, b) > l(b, a).
    #[inline]
    fn margin(&self, a: &N::Code, b: &N::Code) -> f32 {
        let (ab, ba) = self.net.head_logit_pair(a, b);
        ab - ba
    }

    /// A margin's order: `Equal` within the resolution's band.
    #[inline(always)]
    fn order(&self, m: f32) -> Ordering {
        if m.abs() < self.tie {
            return Ordering::Equal;
        }
        m.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
    }

    /// The codes of two keys (`a`'s rebuilt aside when both map to one cache slot), to `f`.
    #[inline]
    fn with_codes<T>(&mut self, a: Handle, b: Handle, f: impl Fn(&Self, &N::Code, &N::Code) -> T) -> T {
        let (ia, ib) = (self.slot(a), self.slot(b));
        if ia != ib {
            f(self, self.cache.at(ia), self.cache.at(ib))
        } else {
            // Both map to one slot (b's code evicted a's): rebuild a's aside.
            let ca = self.code_from_features(&self.store.get(a).features());
            f(self, &ca, self.cache.at(ib))
        }
    }

    /// The code behind a key (tests, diagnostics).
    pub fn code(&mut self, k: &Handle) -> N::Code {
        let i = self.slot(*k);
        *self.cache.at(i)
    }

    /// Comparisons that call two positions equal when their margin is below `centipawns`
    /// on the scale of [`Comparator::centipawns`] (91 per unit of the antisymmetric logit,
    /// which is half the margin of the two orders' logits).
    pub fn with_resolution(mut self, centipawns: f32) -> Self {
        self.tie = 2.0 * centipawns / CP_PER_DRAW_LOGIT;
        self
    }

    /// Comparisons through the memo of pairs (`true`, the default) or always by the head.
    pub fn with_memo(mut self, on: bool) -> Self {
        self.memo = on;
        self
    }

    /// The live positions held (tests: the search leaves none of its own behind).
    pub fn live_keys(&self) -> usize {
        self.store.len()
    }
}

impl<N: SiameseNet> Comparator for NetComparator<N> {
    type Key = Handle;
    /// The board packed (36 bytes; a table slot is then one cache line): exact, so a bound
    /// from the table rebuilds its code as a whole key would.
    type Stored = PackedKey;

    #[inline]
    fn stored(&mut self, k: &Handle) -> PackedKey {
        PackedKey::pack(self.store.get(*k))
    }

    /// Live again without touching the feature cache: its contents, and so every later
    /// comparison, stay what they were when the table held whole keys.
    #[inline]
    fn from_stored(&mut self, s: &PackedKey) -> Option<Handle> {
        Some(self.store.push(s.unpack()))
    }

    #[inline]
    fn mark(&self) -> u32 {
        self.store.mark()
    }

    #[inline]
    fn release(&mut self, mark: u32, keep: &mut Value<Handle>) {
        if keep.kind == Kind::Pos {
            self.store.release(mark, &mut keep.key);
        } else {
            self.store.truncate(mark);
        }
    }

    #[inline]
    fn truncate(&mut self, mark: u32) {
        self.store.truncate(mark);
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn set_node(&mut self, ply: usize, pos: &Position) {
        // The key is asked for after the child's move generation: load its slot meanwhile.
        self.cache.prefetch(pos.hash());
        self.line.set_node(ply, pos);
    }

    fn key(&mut self, ply: usize, pos: &Position) -> Self::Key {
        self.stats.keys += 1;
        let k = NetKey::of(pos);
        let hash = k.hash;
        let on_line = self.line.holds(ply, pos);
        // The first layer before the cache probe: its work overlaps the probe's trip to
        // memory (which the prefetch in `set_node` only starts). Wasted when the code turns
        // out cached unless the children update from these sums; a net gain (docs/search.md).
        // (Not without increments: there it would be a whole refresh.)
        if on_line && self.line.incremental {
            self.line.ensure(ply, &*self.net);
        }
        if self.cache.find(hash).is_some() {
            self.stats.cache_hits += 1;
            return self.store.push(k);
        }
        let code = if on_line {
            let net = &*self.net;
            net.finish(self.line.ensure(ply, net)) // (computed above when incremental)
        } else {
            // Not on the current line (a caller outside the search): compute from scratch.
            self.code_from_features(&k.features())
        };
        self.cache.put(hash, code);
        self.store.push(k)
    }

    /// Antisymmetric by construction, `(P(a, b) + 1 − P(b, a)) / 2`: the trained head is
    /// not (P(a, a) ≠ ½, P(a, b) + P(b, a) ≠ 1), and alpha-beta compares a value returned
    /// as a bound with that very bound, so "equal" must come out equal and the order of
    /// the two operands must not change the answer.
    fn prob_white_better(&mut self, a: &Self::Key, b: &Self::Key) -> f32 {
        if self.store.get(*a).hash == self.store.get(*b).hash {
            return 0.5;
        }
        self.with_codes(*a, *b, |c, ca, cb| c.antisymmetric(ca, cb))
    }

    /// The search's comparisons: the sign of the margin (the same side of ½ as the averaged
    /// probability, except where float sigmoids saturate or round to ½), memoised per pair.
    fn compare(&mut self, a: &Self::Key, b: &Self::Key) -> Ordering {
        // Equal positions by hash, never by handle: two handles may hold one position (a
        // transposition, a table bound against a fresh key), and must compare equal.
        let (a, b) = (*a, *b);
        let (ha, hb) = (self.store.get(a).hash, self.store.get(b).hash);
        if ha == hb {
            return Ordering::Equal;
        }
        self.stats.comparisons += 1;
        // Memo by unordered pair: the margin of the pair in hash order, negated for the other
        // order, so the two orders agree exactly while the entry lives (even if a code was
        // rebuilt meanwhile, with other rounding) and the reversed pair is a hit.
        let (lo, hi, sign) = if ha < hb { ((a, ha), (b, hb), 1.0) } else { ((b, hb), (a, ha), -1.0) };
        if !self.memo {
            // The same margin in the same order as the memo would keep: exactly antisymmetric.
            let m = sign * self.with_codes(lo.0, hi.0, |c, ca, cb| c.margin(ca, cb));
            return self.order(m);
        }
        let pair = lo.1.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi.1.rotate_left(29);
        let m = match self.pair_cache.get(pair) {
            Some(m) => {
                self.stats.comparison_hits += 1;
                m
            }
            None => {
                let m = self.with_codes(lo.0, hi.0, |c, ca, cb| c.margin(ca, cb));
                self.pair_cache.put(pair, m);
                m
            }
        };
        self.order(sign * m)
    }

    /// The draw reference: a draw lies halfway between a position and its colour-mirrored
    /// twin, so "better than a draw" is "better than its own mirror" (docs/search.md).
    fn prob_better_than_draw(&mut self, a: &Self::Key) -> f32 {
        let hash = self.store.get(*a).hash;
        if let Some(p) = self.draw_cache.get(hash) {
            return p;
        }
        let mirror = self.code_from_features(&self.store.get(*a).features().mirrored());
        let ia = self.slot(*a);
        self.stats.comparisons += 1;
        let p = self.antisymmetric(self.cache.at(ia), &mirror);
        self.draw_cache.put(hash, p);
        p
    }

    fn set_root(&mut self, pos: &Position) {
        self.cache.prefetch(pos.hash());
        self.line.set_root(pos, &*self.net);
    }

    fn clear(&mut self) {
        self.cache.clear();
        self.draw_cache.clear();
        self.pair_cache.clear();
        self.line.clear();
        self.store.clear();
    }

    /// The incremental first layer (on by default); off, each position's sums are
    /// recomputed from its input bits.
    fn set_incremental(&mut self, on: bool) -> bool {
        self.line.incremental = on;
        true
    }

    /// The same net (shared), caches and line of its own, incremental as this one is.
    fn fork(&self) -> Option<Self> {
        // Caches the machine cannot give: no fork (the search runs on fewer threads).
        let mut c = NetComparator::try_from_shared(self.net.clone(), self.name, self.cache_mb).ok()?;
        c.line.incremental = self.line.incremental;
        c.memo = self.memo;
        c.tie = self.tie;
        Some(c)
    }

    fn counters(&self) -> Counters {
        let s = self.stats;
        Counters::default()
            .with("comparisons", s.comparisons, None)
            .with("memoised", s.comparison_hits, Some("comparisons"))
            .with("keys", s.keys, None)
            .with("feature cache hits", s.cache_hits, Some("keys"))
            .with("codes rebuilt from evicted keys", s.rebuilds, None)
    }
}
