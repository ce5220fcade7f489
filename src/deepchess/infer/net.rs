//! A trained DeepChess net laid out for the search (paper §4), built from a loaded
//! [`Net`]. Per position (cached by zobrist): the rest of the tower after the incremental
//! first layer, then the head's first layer split in two halves — the position as the left
//! input (`W_left · f`) and as the right one (`W_right · f`), computed as one layer of twice
//! the width. A comparison then costs one add and ReLU of width N plus the head's remaining
//! layers (100→100→2 for the distilled net), and the search's comparisons ask for both orders
//! at once: one pass reads each weight vector once for the two and keeps two independent
//! accumulator chains. The last layer is one dot product, the difference of the two logits.
//!
//! Layers past the first are [`tensor::layers::dense`](crate::tensor::layers::dense) layers: padded to whole
//! vectors, half-precision weights (half the cache lines, which is what these layers wait
//! on). Three kernels, equal within float tolerance, chosen once at load ([`Kernel`]) and
//! forceable: the portable loop, AVX2 and AVX-512. Their effect on speed is measured in
//! docs/benchmarks.md.

use super::comparator::SiameseNet;
use crate::deepchess::features::{BITS, INPUTS};
use crate::eval::line::{BoardBits, FirstLayer};
use crate::deepchess::model::{Arch, Net};
use crate::tensor::kernels::dispatch::FlavourFn;
use crate::tensor::kernels::simd::Flavour;
use crate::tensor::layers::dense::{layer2, logit_diff_simd, pad, Dense, LayerKernel, Portable, LANES};
use crate::tensor::Rng;
use crate::tensor::kernels::vecops;
use crate::tensor::Kernel;
use std::path::Path;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

/// Per-position code: the head's first layer on this position as left and as right input,
/// `N` floats each (the padded width; `repr(C)` so the fused layer writes both as one slice;
/// aligned to cache lines so a cached code spans the fewest lines).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Halves<const N: usize> {
    pub left: [f32; N],
    pub right: [f32; N],
}

impl<const N: usize> Default for Halves<N> {
    fn default() -> Self {
        Halves { left: [0.0; N], right: [0.0; N] }
    }
}

impl<const N: usize> Halves<N> {
    /// Left then right as one slice of 2N: the fused layer's output.
    fn as_mut_slice(&mut self) -> &mut [f32] {
        // Safety: repr(C) with two [f32; N] fields is 2N contiguous floats (N is a multiple of
        // 16, so the alignment adds no padding).
        unsafe { std::slice::from_raw_parts_mut(self as *mut Self as *mut f32, 2 * N) }
    }
}

/// A loaded net ready for search. `N` is the head's first hidden width and `W` the widest
/// hidden tower layer, both padded to whole vectors: 112 and 112 for the distilled net
/// (100 wide), 400 and 608 for the big one (400 and 600).
pub struct NetEval<const N: usize, const W: usize> {
    first: Vec<f32>,
    first_bias: Vec<f32>,
    tower: Vec<Dense>,
    /// The head's first layer as `[left | right]`, `2N` columns.
    halves: Dense,
    head_rest: Vec<Dense>,
    kernel: Kernel,
    pub description: String,
}

pub type Distilled = NetEval<112, 112>;
pub type Big = NetEval<400, 608>;
/// Students narrower than the paper's distilled net (heads of 17 to 32, towers up to 128),
/// such as the compact net 773-32-32/32-2 (train phase `compact`, or `--distill-arch`).
pub type Compact = NetEval<32, 128>;

/// A net of the paper's distilled shape with seeded random weights (the model's own
/// initialisation). It plays nonsense; it exists to exercise the net path without a trained
/// file and to time it (`bench --eval random-distilled`: cost does not depend on values).
pub fn random_distilled(seed: u64) -> Distilled {
    Distilled::from_net(&Net::new(Arch::small(), &mut Rng::new(seed))).expect("the distilled shape fits its build")
}

fn dense_of(net: &Net, (w, b): (crate::tensor::ParamId, crate::tensor::ParamId)) -> Dense {
    let (w, b) = (net.params.value(w), net.params.value(b));
    Dense::new(w.data(), b.row(0), w.rows(), w.cols())
}

impl<const N: usize, const W: usize> NetEval<N, W> {
    /// Whether a net of shape `arch` fits this build (its head's first width pads to `N`,
    /// the other layers fit the buffers), without building one: what the trainer checks
    /// before it trains a student.
    pub fn fits(arch: &Arch) -> Result<(), String> {
        let name = arch.describe();
        let h = arch.head[0];
        if pad(h) != N {
            return Err(format!("net {name}: head width {h}, this build takes {} to {N}", N + 1 - LANES));
        }
        if arch.head.len() < 2 {
            return Err(format!("net {name}: a head of one layer cannot be split for the search"));
        }
        if arch.tower[1..].iter().any(|&w| pad(w) > W) || arch.head[1..].iter().any(|&w| pad(w) > N) {
            return Err(format!("net {name}: layers wider than this build's buffers ({W} tower, {N} head)"));
        }
        Ok(())
    }

    /// Builds from a loaded net; fails when its widths do not pad to this type's `N` and
    /// fit `W`.
    pub fn from_net(net: &Net) -> Result<Self, String> {
        Self::fits(&net.arch)?;
        let arch = net.arch.describe();
        let h = net.arch.head[0];
        // The first layer is only read row by row (incremental sums): kept unpadded.
        let (first_w, first_b) = (net.params.value(net.tower[0].0), net.params.value(net.tower[0].1));
        if first_w.rows() != INPUTS {
            return Err(format!("net {arch}: first layer has {} inputs, expected {INPUTS}", first_w.rows()));
        }
        let tower: Vec<Dense> = net.tower[1..].iter().map(|&l| dense_of(net, l)).collect();
        // Rows 0..f of the head's first layer see the left position, rows f..2f the right.
        let f = net.arch.features();
        let (h0w, h0b) = (net.params.value(net.head[0].0), net.params.value(net.head[0].1));
        let (h0w, h0b) = (h0w.data(), h0b.row(0));
        let mut w = vec![0.0; f * 2 * N];
        for i in 0..f {
            let row = &mut w[i * 2 * N..(i + 1) * 2 * N];
            row[..h].copy_from_slice(&h0w[i * h..(i + 1) * h]);
            row[N..N + h].copy_from_slice(&h0w[(f + i) * h..(f + i + 1) * h]);
        }
        let mut b = vec![0.0; 2 * N];
        b[..h].copy_from_slice(h0b);
        let halves = Dense::new(&w, &b, f, 2 * N);
        let head_rest: Vec<Dense> = net.head[1..].iter().map(|&l| dense_of(net, l)).collect();
        if head_rest.last().map(|d| d.outputs()) != Some(2) {
            return Err(format!("net {arch}: the head must end in the two softmax outputs"));
        }
        Ok(NetEval {
            first_bias: first_b.row(0).to_vec(),
            first: first_w.data().to_vec(),
            tower,
            halves,
            head_rest,
            kernel: Kernel::best(),
            description: arch,
        })
    }

    /// Forces a kernel (tests, benchmarks); returns false and keeps the current one when
    /// this CPU lacks it.
    pub fn set_kernel(&mut self, k: Kernel) -> bool {
        let ok = k.available();
        if ok {
            self.kernel = k;
        }
        ok
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Loads a net file (`.dcw`).
    pub fn load(path: &Path) -> Result<Self, String> {
        let (net, _) = Net::load(path).map_err(|e| e.to_string())?;
        Self::from_net(&net).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The tower after the first layer, then the head's fused halves, with layer kernel `K`, so
/// every kernel shares this code.
///
/// Safety: `K`'s instructions are available (the caller is compiled for them).
#[inline(always)]
unsafe fn finish_with<K: LayerKernel, const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32]) -> Halves<N> {
    let (mut xa, mut ya) = ([0.0f32; W], [0.0f32; W]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    for (a, &s) in x.iter_mut().zip(first) {
        *a = s.max(0.0);
    }
    for d in &n.tower {
        K::layer(d, &x[..d.rows()], &mut y[..d.cols()], true);
        std::mem::swap(&mut x, &mut y);
    }
    let mut h = Halves::<N>::default();
    K::layer(&n.halves, &x[..n.halves.rows()], h.as_mut_slice(), false);
    h
}

/// [`finish_with`] on two positions at once (a position and its mirror, for the value
/// reading): each weight vector is read once for the two, and the two chains interleave.
///
/// Safety: as [`finish_with`].
#[inline(always)]
unsafe fn finish_pair_with<F: Flavour, const N: usize, const W: usize>(n: &NetEval<N, W>, a: &[f32], b: &[f32]) -> (Halves<N>, Halves<N>) {
    let (mut xa, mut xb, mut ya, mut yb) = ([0.0f32; W], [0.0f32; W], [0.0f32; W], [0.0f32; W]);
    for (x, &s) in xa.iter_mut().zip(a) {
        *x = s.max(0.0);
    }
    for (x, &s) in xb.iter_mut().zip(b) {
        *x = s.max(0.0);
    }
    let (mut x, mut y) = ([&mut xa[..], &mut xb[..]], [&mut ya[..], &mut yb[..]]);
    for d in &n.tower {
        let [y0, y1] = &mut y;
        layer2::<F>(d, [&x[0][..d.rows()], &x[1][..d.rows()]], [&mut y0[..d.cols()], &mut y1[..d.cols()]], true);
        std::mem::swap(&mut x, &mut y);
    }
    let (mut ha, mut hb) = (Halves::<N>::default(), Halves::<N>::default());
    let rows = n.halves.rows();
    layer2::<F>(&n.halves, [&x[0][..rows], &x[1][..rows]], [ha.as_mut_slice(), hb.as_mut_slice()], false);
    (ha, hb)
}

/// The head's remaining layers on a pair of codes: the logit difference, sigmoid of which is
/// P(a better than b for White), with layer kernel `K`.
///
/// Safety: as [`finish_with`].
#[inline(always)]
unsafe fn head_with<K: LayerKernel, const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> f32 {
    // Later head layers are no wider than the first (checked at load): N-sized scratch.
    let (mut xa, mut ya) = ([0.0f32; N], [0.0f32; N]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    for i in 0..N {
        x[i] = (a.left[i] + b.right[i]).max(0.0);
    }
    let (last, hidden) = n.head_rest.split_last().expect("checked at load");
    for d in hidden {
        K::layer(d, &x[..d.rows()], &mut y[..d.cols()], true);
        std::mem::swap(&mut x, &mut y);
    }
    K::logit_diff(last, x)
}

/// Both orders of a comparison, the logits of (a, b) and (b, a), through one pass of the
/// head: each weight vector is read once for the two.
///
/// Safety: as [`finish_with`].
#[inline(always)]
unsafe fn head_pair<F: Flavour, const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> (f32, f32) {
    let (mut xa, mut xb, mut ya, mut yb) = ([0.0f32; N], [0.0f32; N], [0.0f32; N], [0.0f32; N]);
    for i in 0..N {
        xa[i] = (a.left[i] + b.right[i]).max(0.0);
        xb[i] = (b.left[i] + a.right[i]).max(0.0);
    }
    let (mut x, mut y) = ([&mut xa[..], &mut xb[..]], [&mut ya[..], &mut yb[..]]);
    let (last, hidden) = n.head_rest.split_last().expect("checked at load");
    for d in hidden {
        let [y0, y1] = &mut y;
        layer2::<F>(d, [&x[0][..d.rows()], &x[1][..d.rows()]], [&mut y0[..d.cols()], &mut y1[..d.cols()]], true);
        std::mem::swap(&mut x, &mut y);
    }
    (logit_diff_simd::<F>(last, x[0]), logit_diff_simd::<F>(last, x[1]))
}

/// The whole tower and head as one computation per flavour (`Kernel::run` compiles each
/// for its instructions), so that every layer's kernel (tensor::layers::dense, generic over
/// the flavour) inlines into one function.
struct Finish<'a, const N: usize, const W: usize>(&'a NetEval<N, W>, &'a [f32]);

impl<const N: usize, const W: usize> FlavourFn for Finish<'_, N, W> {
    type Output = Halves<N>;
    #[inline(always)]
    unsafe fn simd<F: Flavour>(self) -> Halves<N> {
        finish_with::<F, N, W>(self.0, self.1)
    }
    #[inline(always)]
    fn portable(self) -> Halves<N> {
        // Safety: the portable loop needs no instruction beyond the base set.
        unsafe { finish_with::<Portable, N, W>(self.0, self.1) }
    }
}

/// [`finish_pair_with`], or two passes of the portable loop.
struct FinishPair<'a, const N: usize, const W: usize>(&'a NetEval<N, W>, &'a [f32], &'a [f32]);

impl<const N: usize, const W: usize> FlavourFn for FinishPair<'_, N, W> {
    type Output = (Halves<N>, Halves<N>);
    #[inline(always)]
    unsafe fn simd<F: Flavour>(self) -> (Halves<N>, Halves<N>) {
        finish_pair_with::<F, N, W>(self.0, self.1, self.2)
    }
    #[inline(always)]
    fn portable(self) -> (Halves<N>, Halves<N>) {
        // Safety: the portable loop needs no instruction beyond the base set.
        unsafe { (finish_with::<Portable, N, W>(self.0, self.1), finish_with::<Portable, N, W>(self.0, self.2)) }
    }
}

/// [`head_with`] on one order of a pair of codes.
struct HeadLogit<'a, const N: usize, const W: usize>(&'a NetEval<N, W>, &'a Halves<N>, &'a Halves<N>);

impl<const N: usize, const W: usize> FlavourFn for HeadLogit<'_, N, W> {
    type Output = f32;
    #[inline(always)]
    unsafe fn simd<F: Flavour>(self) -> f32 {
        head_with::<F, N, W>(self.0, self.1, self.2)
    }
    #[inline(always)]
    fn portable(self) -> f32 {
        // Safety: as above.
        unsafe { head_with::<Portable, N, W>(self.0, self.1, self.2) }
    }
}

/// Both orders of a pair of codes: one pass of [`head_pair`], or two of the portable loop.
struct HeadLogitPair<'a, const N: usize, const W: usize>(&'a NetEval<N, W>, &'a Halves<N>, &'a Halves<N>);

impl<const N: usize, const W: usize> FlavourFn for HeadLogitPair<'_, N, W> {
    type Output = (f32, f32);
    #[inline(always)]
    unsafe fn simd<F: Flavour>(self) -> (f32, f32) {
        head_pair::<F, N, W>(self.0, self.1, self.2)
    }
    #[inline(always)]
    fn portable(self) -> (f32, f32) {
        let (n, a, b) = (self.0, self.1, self.2);
        (HeadLogit(n, a, b).portable(), HeadLogit(n, b, a).portable())
    }
}

impl<const N: usize, const W: usize> FirstLayer for NetEval<N, W> {
    type Sum = f32;
    fn bits(&self) -> BoardBits {
        BITS
    }
    fn width(&self) -> usize {
        self.first_bias.len()
    }
    fn refresh(&self, active: &[usize], out: &mut [f32]) {
        vecops::update_with(self.kernel, out, &self.first_bias, &self.first, self.first_bias.len(), active, &[]);
    }
    fn update(&self, dst: &mut [f32], src: &[f32], added: &[usize], removed: &[usize]) {
        vecops::update_with(self.kernel, dst, src, &self.first, self.first_bias.len(), added, removed);
    }
}

impl<const N: usize, const W: usize> SiameseNet for NetEval<N, W> {
    type Code = Halves<N>;

    fn finish(&self, first: &[f32]) -> Halves<N> {
        self.kernel.run(Finish(self, first))
    }
    fn finish_pair(&self, a: &[f32], b: &[f32]) -> (Halves<N>, Halves<N>) {
        self.kernel.run(FinishPair(self, a, b))
    }
    fn head_logit(&self, a: &Halves<N>, b: &Halves<N>) -> f32 {
        self.kernel.run(HeadLogit(self, a, b))
    }
    fn head_logit_pair(&self, a: &Halves<N>, b: &Halves<N>) -> (f32, f32) {
        self.kernel.run(HeadLogitPair(self, a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;
    use crate::deepchess::infer::load_searcher;
    use crate::search::PlayerSettings;
    use crate::deepchess::features::Features;

    /// The split head and incremental-ready tower give the same probability as the model's
    /// own forward pass (the training tape), with every kernel this CPU has.
    #[test]
    fn matches_the_reference_inference() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
        ];
        for file in ["distilled.dcw", "deepchess.dcw"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets").join(file);
            let (net, _) = Net::load(&path).unwrap();
            let check = |p: &dyn Fn(&[f32], &[f32]) -> f32| {
                for a in fens {
                    for b in fens {
                        let (fa, fb) = (Features::from_position(&Position::from_fen(a).unwrap()), Features::from_position(&Position::from_fen(b).unwrap()));
                        let want = net.prob_better(&[fa.as_slice()], &[fb.as_slice()]).unwrap()[0];
                        let got = p(&first_sums(&net, &fa), &first_sums(&net, &fb));
                        // Weights past the first layer are half floats (2^-11 relative).
                        assert!((want - got).abs() < 1e-3, "{file}: {want} vs {got}");
                    }
                }
            };
            for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
                if net.arch.head[0] == 100 {
                    let mut e = Distilled::from_net(&net).unwrap();
                    assert!(e.set_kernel(k));
                    check(&|a, b| both_orders(&e, a, b));
                } else {
                    let mut e = Big::from_net(&net).unwrap();
                    assert!(e.set_kernel(k));
                    check(&|a, b| both_orders(&e, a, b));
                    assert!(Distilled::from_net(&net).is_err());
                }
            }
        }
    }

    /// Other shapes (random weights): each loads into the build that fits it, and agrees
    /// with the model's forward pass under every kernel.
    #[test]
    fn other_shapes_load_and_match() {
        let fens = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11"];
        let dir = std::env::temp_dir().join(format!("deepchess-shapes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (arch, want) in [("773-128-32-32/32-32-2", "compact"), ("773-120-24-17/20-9-2", "compact"), ("773-100-100-100/100-100-2", "distilled"), ("773-90-100/97-2", "distilled")] {
            let net = Net::new(Arch::parse(arch).unwrap(), &mut Rng::new(7));
            let path = dir.join("n.dcw");
            net.save(&path, &[]).unwrap();
            // The loader picks the build (and names the comparator after it).
            let (s, what) = load_searcher(&path, &PlayerSettings::new(1), 1).unwrap();
            assert_eq!(s.name(), want, "{arch}");
            assert!(what.starts_with(arch), "{what}");
            let loaded = Net::load(&path).unwrap().0;
            for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
                let probs: Vec<f32> = if want == "distilled" {
                    let mut e = Distilled::from_net(&loaded).unwrap();
                    e.set_kernel(k);
                    pairs(&net, &fens, |a, b| both_orders(&e, a.0, b.0))
                } else {
                    assert!(Distilled::from_net(&loaded).is_err());
                    let mut e = Compact::from_net(&loaded).unwrap();
                    e.set_kernel(k);
                    pairs(&net, &fens, |a, b| both_orders(&e, a.0, b.0))
                };
                let want = pairs(&net, &fens, |a, b| net.prob_better(&[a.1], &[b.1]).unwrap()[0]);
                for (w, g) in want.iter().zip(&probs) {
                    assert!((w - g).abs() < 1e-3, "{arch} {k:?}: {w} vs {g}");
                }
            }
        }
        let net = Net::new(Arch::parse("773-300-32/2").unwrap(), &mut Rng::new(7));
        let path = dir.join("n.dcw");
        net.save(&path, &[]).unwrap();
        let e = load_searcher(&path, &PlayerSettings::new(1), 1).err().expect("no build takes a one-layer head");
        assert!(e.contains("n.dcw"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// P(a, b) through the fused two-order pass, checked against the single-order head both
    /// ways round.
    fn both_orders<const N: usize, const W: usize>(e: &NetEval<N, W>, a: &[f32], b: &[f32]) -> f32 {
        let (ca, cb) = (e.finish(a), e.finish(b));
        let (ab, ba) = e.head_logit_pair(&ca, &cb);
        let (ab1, ba1) = (e.head_logit(&ca, &cb), e.head_logit(&cb, &ca));
        assert!((ab - ab1).abs() < 1e-4 && (ba - ba1).abs() < 1e-4, "{:?}: pair ({ab}, {ba}), single ({ab1}, {ba1})", e.kernel);
        e.head(&ca, &cb)
    }

    /// `f` on every ordered pair of the positions, given first-layer sums and input bits.
    fn pairs(net: &Net, fens: &[&str], f: impl Fn((&[f32], &[u16]), (&[f32], &[u16])) -> f32) -> Vec<f32> {
        let feats: Vec<Features> = fens.iter().map(|f| Features::from_position(&Position::from_fen(f).unwrap())).collect();
        let sums: Vec<Vec<f32>> = feats.iter().map(|f| first_sums(net, f)).collect();
        let mut out = Vec::new();
        for i in 0..fens.len() {
            for j in 0..fens.len() {
                out.push(f((&sums[i], feats[i].as_slice()), (&sums[j], feats[j].as_slice())));
            }
        }
        out
    }

    /// Two positions' codes in one pass equal two passes, under every kernel and shape.
    #[test]
    fn a_pair_of_codes_equals_two_codes() {
        let fens = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 10"];
        for file in ["compact.dcw", "distilled.dcw", "deepchess.dcw"] {
            let (net, _) = Net::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets").join(file)).unwrap();
            let sums: Vec<Vec<f32>> = fens.iter().map(|f| first_sums(&net, &Features::from_position(&Position::from_fen(f).unwrap()))).collect();
            for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
                match file {
                    "compact.dcw" => pair_equals_two(Compact::from_net(&net).unwrap(), k, &sums, file),
                    "distilled.dcw" => pair_equals_two(Distilled::from_net(&net).unwrap(), k, &sums, file),
                    _ => pair_equals_two(Big::from_net(&net).unwrap(), k, &sums, file),
                }
            }
        }
    }

    fn pair_equals_two<const N: usize, const W: usize>(mut e: NetEval<N, W>, k: Kernel, sums: &[Vec<f32>], file: &str) {
        e.set_kernel(k);
        let (a, b) = e.finish_pair(&sums[0], &sums[1]);
        for (got, want) in [(a, e.finish(&sums[0])), (b, e.finish(&sums[1]))] {
            let close = |g: &[f32; N], w: &[f32; N]| g.iter().zip(w).all(|(g, w)| (g - w).abs() <= 1e-4 * (1.0 + w.abs()));
            assert!(close(&got.left, &want.left) && close(&got.right, &want.right), "{file} {k:?}");
        }
    }

    /// Padding columns of a layer's output stay zero (the next layer's mask relies on it).
    #[test]
    fn padded_outputs_stay_zero() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/distilled.dcw");
        let (net, _) = Net::load(&path).unwrap();
        let fa = Features::from_position(&Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap());
        for k in Kernel::ALL.into_iter().filter(|k| k.available()) {
            let mut e = Distilled::from_net(&net).unwrap();
            e.set_kernel(k);
            let h = e.finish(&first_sums(&net, &fa));
            assert!(h.left[100..].iter().chain(&h.right[100..]).all(|&v| v == 0.0), "{k:?}");
            assert!(h.left[..100].iter().any(|&v| v != 0.0), "{k:?}");
        }
    }

    fn first_sums(net: &Net, f: &Features) -> Vec<f32> {
        let (w, b) = net.tower[0];
        let mut h = net.params.value(b).row(0).to_vec();
        for &i in f.as_slice() {
            for (a, x) in h.iter_mut().zip(net.params.value(w).row(i as usize)) {
                *a += x;
            }
        }
        h
    }
}
