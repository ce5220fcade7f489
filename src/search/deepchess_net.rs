//! The trained DeepChess networks (src/net) behind [`SiameseNet`], for the search.
//!
//! Per position (cached by zobrist): the rest of the tower after the incremental first
//! layer, then the head's first layer split in two halves — the position as the left input
//! (`W_left · f`) and as the right one (`W_right · f`). A comparison then costs one add and
//! ReLU of width N plus the head's remaining layers (100→2 for the distilled net).
//! The loops are compiled twice, generic and under `avx2,fma`, chosen once at load time.

use super::net::SiameseNet;
use crate::data::encode::INPUTS;
use crate::net::Net;
use std::path::Path;

/// One dense layer, input-major (row i = weights from input i), as src/net stores them,
/// plus the copies the AVX2 kernels read: rows padded to whole 8-float vectors (`wp`, `bp`)
/// and, for outputs narrower than a vector (the head's last layer), the transpose (`wt`).
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    n_in: usize,
    n_out: usize,
    wp: Vec<f32>,
    bp: Vec<f32>,
    wt: Vec<f32>,
}

impl Dense {
    fn new(w: Vec<f32>, b: Vec<f32>, n_in: usize, n_out: usize) -> Dense {
        let pad = n_out.div_ceil(8) * 8;
        let mut wp = vec![0.0; n_in * pad];
        for i in 0..n_in {
            wp[i * pad..i * pad + n_out].copy_from_slice(&w[i * n_out..(i + 1) * n_out]);
        }
        let mut bp = b.clone();
        bp.resize(pad, 0.0);
        let mut wt = vec![0.0; n_in * n_out];
        for i in 0..n_in {
            for o in 0..n_out {
                wt[o * n_in + i] = w[i * n_out + o];
            }
        }
        Dense { w, b, n_in, n_out, wp, bp, wt }
    }
}

/// Per-position code: the head's first layer on this position as left and as right input.
#[derive(Clone, Copy)]
pub struct Halves<const N: usize> {
    pub left: [f32; N],
    pub right: [f32; N],
}

impl<const N: usize> Default for Halves<N> {
    fn default() -> Self {
        Halves { left: [0.0; N], right: [0.0; N] }
    }
}

/// A loaded net ready for search; `N` is the head's first hidden width (100 for the
/// distilled net, 400 for the big one), `W` the widest hidden tower layer (100, 600).
pub struct NetEval<const N: usize, const W: usize> {
    first: Vec<f32>,
    first_bias: Vec<f32>,
    tower: Vec<Dense>,
    head_left: Dense,
    head_right: Dense,
    head_rest: Vec<Dense>,
    simd: bool,
    pub description: String,
}

pub type Distilled = NetEval<100, 100>;
pub type Big = NetEval<400, 600>;

fn dense_of(net: &Net, (w, b): (crate::tensor::ParamId, crate::tensor::ParamId)) -> Dense {
    let (w, b) = (net.params.value(w), net.params.value(b));
    Dense::new(w.data().to_vec(), b.row(0).to_vec(), w.rows(), w.cols())
}

impl<const N: usize, const W: usize> NetEval<N, W> {
    /// Builds from a loaded net; fails when its head's first width is not `N`.
    pub fn from_net(net: &Net) -> Result<Self, String> {
        let arch = net.arch.describe();
        if net.arch.head.first() != Some(&N) {
            return Err(format!("net {arch}: head width {:?}, expected {N}", net.arch.head.first()));
        }
        // The first layer is only read row by row (incremental sums): no kernel copies.
        let (first_w, first_b) = (net.params.value(net.tower[0].0), net.params.value(net.tower[0].1));
        if first_w.rows() != INPUTS {
            return Err(format!("net {arch}: first layer has {} inputs, expected {INPUTS}", first_w.rows()));
        }
        let tower: Vec<Dense> = net.tower[1..].iter().map(|&l| dense_of(net, l)).collect();
        let f = net.arch.features();
        let h0 = dense_of(net, net.head[0]);
        // Rows 0..f of the head's first layer see the left position, rows f..2f the right.
        let split = |rows: std::ops::Range<usize>, b: Vec<f32>| {
            Dense::new(h0.w[rows.start * N..rows.end * N].to_vec(), b, f, N)
        };
        let head_left = split(0..f, h0.b.clone());
        let head_right = split(f..2 * f, vec![0.0; N]);
        let head_rest: Vec<Dense> = net.head[1..].iter().map(|&l| dense_of(net, l)).collect();
        if net.arch.tower[1..].iter().any(|&w| w > W) || net.arch.head[1..].iter().any(|&w| w > N) || W > 1024 || N > 1024 {
            return Err(format!("net {arch}: layers wider than this build's buffers ({W} tower, {N} head)"));
        }
        Ok(NetEval {
            first_bias: first_b.row(0).to_vec(),
            first: first_w.data().to_vec(),
            tower,
            head_left,
            head_right,
            head_rest,
            simd: simd_available(),
            description: arch,
        })
    }

    /// Uses the AVX2+FMA kernels (when the CPU has them) or forces the portable path; for
    /// tests and benchmarks. Returns whether the SIMD path is now in use.
    pub fn set_simd(&mut self, on: bool) -> bool {
        self.simd = on && simd_available();
        self.simd
    }

    /// Loads a net file (`.dcw`).
    pub fn load(path: &Path) -> Result<Self, String> {
        let (net, _) = Net::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::from_net(&net).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `y = b + x·W`, skipping inputs the ReLU zeroed.
#[inline(always)]
fn dense_into(d: &Dense, x: &[f32], y: &mut [f32]) {
    y.copy_from_slice(&d.b);
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for (a, w) in y.iter_mut().zip(&d.w[i * d.n_out..(i + 1) * d.n_out]) {
                *a += xi * w;
            }
        }
    }
}

#[inline(always)]
fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

/// The tower after the first layer, then the head's split first layer; `dense` is the
/// layer kernel (the portable loop or the AVX2 one), so both paths share this code.
#[inline(always)]
fn finish_with<const N: usize, const W: usize>(
    n: &NetEval<N, W>,
    first: &[f32],
    dense: impl Fn(&Dense, &[f32], &mut [f32]),
) -> Halves<N> {
    // Scratch of the widest hidden tower layer (W, checked at load).
    let (mut xa, mut ya) = ([0.0f32; W], [0.0f32; W]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    let mut len = first.len();
    x[..len].copy_from_slice(first);
    relu(&mut x[..len]);
    for d in &n.tower {
        dense(d, &x[..len], &mut y[..d.n_out]);
        relu(&mut y[..d.n_out]);
        len = d.n_out;
        std::mem::swap(&mut x, &mut y);
    }
    let mut h = Halves::<N>::default();
    dense(&n.head_left, &x[..len], &mut h.left);
    dense(&n.head_right, &x[..len], &mut h.right);
    h
}

/// The head's remaining layers on a pair of codes: P(a better than b for White).
#[inline(always)]
fn head_with<const N: usize, const W: usize>(
    n: &NetEval<N, W>,
    a: &Halves<N>,
    b: &Halves<N>,
    dense: impl Fn(&Dense, &[f32], &mut [f32]),
) -> f32 {
    // Later head layers are no wider than the first (checked at load): N-sized scratch.
    let (mut xa, mut ya) = ([0.0f32; N], [0.0f32; N]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    for i in 0..N {
        x[i] = (a.left[i] + b.right[i]).max(0.0);
    }
    let mut len = N;
    for (k, d) in n.head_rest.iter().enumerate() {
        dense(d, &x[..len], &mut y[..d.n_out]);
        if k + 1 < n.head_rest.len() {
            relu(&mut y[..d.n_out]);
        }
        len = d.n_out;
        std::mem::swap(&mut x, &mut y);
    }
    // Softmax over the two logits = sigmoid of their difference.
    1.0 / (1.0 + (x[1] - x[0]).exp())
}

/// The AVX2+FMA path: each dense layer as blocks of up to 13 output vectors held in
/// registers while the nonzero inputs (after ReLU) stream past — a 1×(8·13) micro-kernel in
/// BLIS terms, with the loop over inputs as the k loop; the 2-wide last layer as dot products.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Dense, Halves, NetEval};
    use std::arch::x86_64::*;

    /// Output vectors per register block: 13 accumulators + the broadcast input fit in 16 ymm.
    const BLOCK: usize = 13;

    #[inline(always)]
    unsafe fn block<const V: usize>(d: &Dense, x: &[f32], idx: &[u16], c: usize, y: &mut [f32]) {
        let pad = d.bp.len();
        let mut acc = [_mm256_setzero_ps(); V];
        for (v, a) in acc.iter_mut().enumerate() {
            *a = _mm256_loadu_ps(d.bp.as_ptr().add(c + 8 * v));
        }
        for &i in idx {
            let i = i as usize;
            let xb = _mm256_set1_ps(*x.get_unchecked(i));
            let row = d.wp.as_ptr().add(i * pad + c);
            for (v, a) in acc.iter_mut().enumerate() {
                *a = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row.add(8 * v)), *a);
            }
        }
        for (v, a) in acc.iter().enumerate() {
            let o = c + 8 * v;
            if o + 8 <= d.n_out {
                _mm256_storeu_ps(y.as_mut_ptr().add(o), *a);
            } else {
                let mut t = [0.0f32; 8];
                _mm256_storeu_ps(t.as_mut_ptr(), *a);
                y[o..d.n_out].copy_from_slice(&t[..d.n_out - o]);
            }
        }
    }

    /// `y = b + x·W` (y has `d.n_out` entries); `M` bounds the inputs (the index list's size).
    #[inline(always)]
    unsafe fn dense<const M: usize>(d: &Dense, x: &[f32], y: &mut [f32]) {
        assert!(x.len() == d.n_in && d.n_in <= M && y.len() >= d.n_out);
        if d.n_out < 8 {
            for (o, yo) in y[..d.n_out].iter_mut().enumerate() {
                *yo = d.b[o] + dot(x, &d.wt[o * d.n_in..(o + 1) * d.n_in]);
            }
            return;
        }
        // The inputs the ReLU left nonzero, once for all blocks (branch-free compaction).
        let mut idx = [0u16; M];
        let mut n = 0;
        for (i, &xi) in x.iter().enumerate() {
            *idx.get_unchecked_mut(n) = i as u16;
            n += (xi != 0.0) as usize;
        }
        let idx = &idx[..n];
        let vectors = d.bp.len() / 8;
        let mut c = 0;
        while c < vectors * 8 {
            match (vectors - c / 8).min(BLOCK) {
                13 => block::<13>(d, x, idx, c, y),
                12 => block::<12>(d, x, idx, c, y),
                11 => block::<11>(d, x, idx, c, y),
                10 => block::<10>(d, x, idx, c, y),
                9 => block::<9>(d, x, idx, c, y),
                8 => block::<8>(d, x, idx, c, y),
                7 => block::<7>(d, x, idx, c, y),
                6 => block::<6>(d, x, idx, c, y),
                5 => block::<5>(d, x, idx, c, y),
                4 => block::<4>(d, x, idx, c, y),
                3 => block::<3>(d, x, idx, c, y),
                2 => block::<2>(d, x, idx, c, y),
                _ => block::<1>(d, x, idx, c, y),
            }
            c += BLOCK * 8;
        }
    }

    #[inline(always)]
    unsafe fn dot(x: &[f32], w: &[f32]) -> f32 {
        let n = x.len().min(w.len());
        let mut acc = _mm256_setzero_ps();
        let mut i = 0;
        while i + 8 <= n {
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(x.as_ptr().add(i)), _mm256_loadu_ps(w.as_ptr().add(i)), acc);
            i += 8;
        }
        let mut t = [0.0f32; 8];
        _mm256_storeu_ps(t.as_mut_ptr(), acc);
        let mut s = (t[0] + t[4]) + (t[1] + t[5]) + ((t[2] + t[6]) + (t[3] + t[7]));
        while i < n {
            s += x[i] * w[i];
            i += 1;
        }
        s
    }

    /// One dense layer through the kernel, for the comparison with the portable loop.
    #[cfg(test)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dense_layer(d: &Dense, x: &[f32], y: &mut [f32]) {
        dense::<1024>(d, x, y)
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn finish<const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32]) -> Halves<N> {
        super::finish_with(n, first, |d, x, y| dense::<W>(d, x, y))
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn head<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> f32 {
        super::head_with(n, a, b, |d, x, y| dense::<N>(d, x, y))
    }
}

impl<const N: usize, const W: usize> SiameseNet for NetEval<N, W> {
    type Code = Halves<N>;

    fn first_width(&self) -> usize {
        self.first_bias.len()
    }
    fn first_row(&self, feature: usize) -> &[f32] {
        let h = self.first_bias.len();
        &self.first[feature * h..(feature + 1) * h]
    }
    fn first_bias(&self) -> &[f32] {
        &self.first_bias
    }
    fn finish(&self, first: &[f32]) -> Halves<N> {
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // Safety: avx2 and fma were detected at load time.
            return unsafe { avx2::finish(self, first) };
        }
        finish_with(self, first, dense_into)
    }
    fn head(&self, a: &Halves<N>, b: &Halves<N>) -> f32 {
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // Safety: as above.
            return unsafe { avx2::head(self, a, b) };
        }
        head_with(self, a, b, dense_into)
    }
}

/// Where the shipped nets are looked for when no file is given: `data/nets/` under the
/// working directory, beside the executable's build tree, then under the source tree.
pub fn default_net_path(file: &str) -> Option<std::path::PathBuf> {
    let mut dirs = vec![std::path::PathBuf::from("data/nets")];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            dirs.push(d.join("../../data/nets"));
        }
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets"));
    dirs.into_iter().map(|d| d.join(file)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Position;
    use crate::data::encode::Features;

    /// The split head and incremental-ready tower give the same probability as src/net.
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
                        let want = net.compare(&net.features(fa.as_slice()), &net.features(fb.as_slice()));
                        let got = p(&first_sums(&net, &fa), &first_sums(&net, &fb));
                        assert!((want - got).abs() < 1e-4, "{file}: {want} vs {got}");
                    }
                }
            };
            if net.arch.head[0] == 100 {
                for simd in [false, true] {
                    let mut e = Distilled::from_net(&net).unwrap();
                    e.set_simd(simd);
                    check(&|a, b| e.head(&e.finish(a), &e.finish(b)));
                }
            } else {
                for simd in [false, true] {
                    let mut e = Big::from_net(&net).unwrap();
                    e.set_simd(simd);
                    check(&|a, b| e.head(&e.finish(a), &e.finish(b)));
                }
                assert!(Distilled::from_net(&net).is_err());
            }
        }
    }

    proptest::proptest! {
        /// The AVX2 dense kernel against the portable loop on odd shapes, with ReLU-like zeros.
        #[test]
        fn avx2_dense_matches_portable(n_in in 1usize..140, n_out in 1usize..230, seed in 0u64..1000) {
            if !simd_available() {
                return Ok(());
            }
            let mut r = crate::tensor::rng::Rng::new(seed);
            let mut u = || r.uniform(-0.5, 0.5);
            let w: Vec<f32> = (0..n_in * n_out).map(|_| u()).collect();
            let b: Vec<f32> = (0..n_out).map(|_| u()).collect();
            let x: Vec<f32> = (0..n_in).map(|_| u().max(0.0)).collect();
            let d = Dense::new(w, b, n_in, n_out);
            let (mut want, mut got) = (vec![0.0; n_out], vec![0.0; n_out]);
            dense_into(&d, &x, &mut want);
            unsafe { avx2::dense_layer(&d, &x, &mut got) };
            for (a, b) in want.iter().zip(&got) {
                proptest::prop_assert!((a - b).abs() < 1e-4, "{n_in}x{n_out}: {a} vs {b}");
            }
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
