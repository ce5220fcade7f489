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

/// One dense layer, input-major (row i = weights from input i), as src/net stores them.
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    n_in: usize,
    n_out: usize,
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
    Dense { w: w.data().to_vec(), b: b.row(0).to_vec(), n_in: w.rows(), n_out: w.cols() }
}

impl<const N: usize, const W: usize> NetEval<N, W> {
    /// Builds from a loaded net; fails when its head's first width is not `N`.
    pub fn from_net(net: &Net) -> Result<Self, String> {
        let arch = net.arch.describe();
        if net.arch.head.first() != Some(&N) {
            return Err(format!("net {arch}: head width {:?}, expected {N}", net.arch.head.first()));
        }
        let first = dense_of(net, net.tower[0]);
        if first.n_in != INPUTS {
            return Err(format!("net {arch}: first layer has {} inputs, expected {INPUTS}", first.n_in));
        }
        let tower: Vec<Dense> = net.tower[1..].iter().map(|&l| dense_of(net, l)).collect();
        let f = net.arch.features();
        let h0 = dense_of(net, net.head[0]);
        // Rows 0..f of the head's first layer see the left position, rows f..2f the right.
        let split = |rows: std::ops::Range<usize>, b: Vec<f32>| Dense {
            w: h0.w[rows.start * N..rows.end * N].to_vec(),
            b,
            n_in: f,
            n_out: N,
        };
        let head_left = split(0..f, h0.b.clone());
        let head_right = split(f..2 * f, vec![0.0; N]);
        let head_rest: Vec<Dense> = net.head[1..].iter().map(|&l| dense_of(net, l)).collect();
        if net.arch.tower[1..].iter().any(|&w| w > W) || net.arch.head[1..].iter().any(|&w| w > N) {
            return Err(format!("net {arch}: layers wider than this build's buffers ({W} tower, {N} head)"));
        }
        Ok(NetEval {
            first_bias: first.b,
            first: first.w,
            tower,
            head_left,
            head_right,
            head_rest,
            simd: simd_available(),
            description: arch,
        })
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

#[inline(always)]
fn finish_generic<const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32]) -> Halves<N> {
    // Scratch of the widest hidden tower layer (W, checked at load).
    let (mut xa, mut ya) = ([0.0f32; W], [0.0f32; W]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    let mut len = first.len();
    x[..len].copy_from_slice(first);
    relu(&mut x[..len]);
    for d in &n.tower {
        dense_into(d, &x[..len], &mut y[..d.n_out]);
        relu(&mut y[..d.n_out]);
        len = d.n_out;
        std::mem::swap(&mut x, &mut y);
    }
    let mut h = Halves::<N>::default();
    dense_into(&n.head_left, &x[..len], &mut h.left);
    dense_into(&n.head_right, &x[..len], &mut h.right);
    h
}

#[inline(always)]
fn head_generic<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> f32 {
    // Later head layers are no wider than the first (checked at load): N-sized scratch.
    let (mut xa, mut ya) = ([0.0f32; N], [0.0f32; N]);
    let (mut x, mut y) = (&mut xa[..], &mut ya[..]);
    for i in 0..N {
        x[i] = (a.left[i] + b.right[i]).max(0.0);
    }
    let mut len = N;
    for (k, d) in n.head_rest.iter().enumerate() {
        dense_into(d, &x[..len], &mut y[..d.n_out]);
        if k + 1 < n.head_rest.len() {
            relu(&mut y[..d.n_out]);
        }
        len = d.n_out;
        std::mem::swap(&mut x, &mut y);
    }
    // Softmax over the two logits = sigmoid of their difference.
    1.0 / (1.0 + (x[1] - x[0]).exp())
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn finish_avx2<const N: usize, const W: usize>(n: &NetEval<N, W>, first: &[f32]) -> Halves<N> {
    finish_generic(n, first)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn head_avx2<const N: usize, const W: usize>(n: &NetEval<N, W>, a: &Halves<N>, b: &Halves<N>) -> f32 {
    head_generic(n, a, b)
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
            return unsafe { finish_avx2(self, first) };
        }
        finish_generic(self, first)
    }
    fn head(&self, a: &Halves<N>, b: &Halves<N>) -> f32 {
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // Safety: as above.
            return unsafe { head_avx2(self, a, b) };
        }
        head_generic(self, a, b)
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
                let e = Distilled::from_net(&net).unwrap();
                check(&|a, b| e.head(&e.finish(a), &e.finish(b)));
            } else {
                let e = Big::from_net(&net).unwrap();
                check(&|a, b| e.head(&e.finish(a), &e.finish(b)));
                assert!(Distilled::from_net(&net).is_err());
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
