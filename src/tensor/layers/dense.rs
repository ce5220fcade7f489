//! The dense layer of every network's inference (no tape, one position at a time): `y = b +
//! x·W`, optionally ReLU'd, with a portable loop and SIMD kernels that agree within float
//! tolerance.
//!
//! Layers are stored padded with zero rows and columns to whole 16-float vectors, so
//! activations are whole vectors end to end (the padding stays 0 through ReLU) and no kernel
//! handles a remainder. Weights are rounded to half precision and read as such by the SIMD
//! kernels (`Flavour::load_half`): half the cache lines per layer, which is what these
//! small layers wait on. The portable loop reads the same values widened back to f32.
//!
//! In BLIS terms a layer is a 1×cols by cols×rows product: the jr loop walks blocks of output
//! vectors held in registers, the k loop streams only the inputs the previous ReLU left
//! nonzero (bits of a mask), each broadcast once per block. Layers narrower than a vector
//! are dot products over the transpose; a two-output (softmax) layer is read as one dot
//! product, the difference of its two logits.
//!
//! The kernels are `#[inline(always)]` and generic over the `Flavour`: a network hands its
//! whole forward pass, generic over the [`LayerKernel`], to `Kernel::run`
//! (`tensor::kernels::dispatch`), so its layers inline into one function per flavour.
//! [`forward_with`] dispatches a single layer so.

use crate::tensor::kernels::dispatch::FlavourFn;
use crate::tensor::kernels::simd::{f16_bits, f16_value, Flavour, Kernel};

/// Floats per padded vector: one zmm, two ymm.
pub const LANES: usize = 16;
/// Widest padded layer input whose nonzero mask the kernels keep on the stack; a wider
/// input (any width plays: a DBN of 1,100 hidden units has them) takes it from the heap.
pub const STACK_WIDTH: usize = 1024;

/// `n` rounded up to whole vectors.
pub const fn pad(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

/// One dense layer, input-major (row i = weights from input i), `rows × cols` padded with
/// zeros; the first `out` outputs are meaningful. Layers narrower than a vector also keep
/// `wt`, the transpose (`out × rows`); a two-output layer keeps `wd`, its logit difference.
pub struct Dense {
    w: Vec<f32>,
    /// `w` as IEEE half floats, what the SIMD kernels read (`w` holds the same values
    /// widened back, for the portable loop).
    wh: Vec<u16>,
    b: Vec<f32>,
    rows: usize,
    cols: usize,
    out: usize,
    wt: Vec<f32>,
    /// A 2-output (softmax) layer's logit difference, column 0 − column 1: P(output 0) =
    /// sigmoid(`bd` + x·`wd`), one dot product instead of two (length `rows`).
    wd: Vec<f32>,
    bd: f32,
}

impl Dense {
    /// A layer from its weights `w` (`n_in × n_out`, input-major, as training stores them)
    /// and bias `b` (`n_out`), padded and rounded to half precision.
    pub fn new(w: &[f32], b: &[f32], n_in: usize, n_out: usize) -> Dense {
        assert!(w.len() == n_in * n_out && b.len() == n_out, "dense layer {n_in}x{n_out}: {} weights, {} biases", w.len(), b.len());
        let (rows, cols) = (pad(n_in), pad(n_out));
        let mut d = Dense { w: vec![0.0; rows * cols], wh: Vec::new(), b: vec![0.0; cols], rows, cols, out: n_out, wt: Vec::new(), wd: Vec::new(), bd: 0.0 };
        for i in 0..n_in {
            d.w[i * cols..i * cols + n_out].copy_from_slice(&w[i * n_out..(i + 1) * n_out]);
        }
        d.b[..n_out].copy_from_slice(b);
        d.wh = d.w.iter().map(|&x| f16_bits(x)).collect();
        for (w, &h) in d.w.iter_mut().zip(&d.wh) {
            *w = f16_value(h);
        }
        if d.is_narrow() {
            let (w, rows, cols) = (&d.w, d.rows, d.cols);
            d.wt = (0..d.out).flat_map(|o| (0..rows).map(move |i| w[i * cols + o])).collect();
        }
        if d.out == 2 {
            d.wd = (0..d.rows).map(|i| d.w[i * d.cols] - d.w[i * d.cols + 1]).collect();
            d.bd = d.b[0] - d.b[1];
        }
        d
    }

    /// Padded inputs: the length `x` must have.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Padded outputs: what `y` must hold.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Meaningful outputs.
    pub fn outputs(&self) -> usize {
        self.out
    }

    /// The weights as f32 (the half-precision values widened), input-major and padded: row
    /// `i` (`cols()` long) holds input `i`'s weights. An incremental first layer adds rows.
    pub fn weights(&self) -> &[f32] {
        &self.w
    }

    /// The bias, `cols()` long (zero in the padding).
    pub fn bias(&self) -> &[f32] {
        &self.b
    }

    /// Narrower than a vector: computed as dot products.
    fn is_narrow(&self) -> bool {
        self.out < LANES
    }
}

/// `y = b + x·W` (ReLU'd when `relu`), skipping inputs the previous ReLU zeroed: the
/// portable loop. `x` has `d.rows()` entries, `y` at least `d.cols()`.
pub fn forward(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
    if d.is_narrow() {
        y[d.out..d.cols].fill(0.0);
        for (o, yo) in y[..d.out].iter_mut().enumerate() {
            let s = d.b[o] + x.iter().zip(&d.wt[o * d.rows..(o + 1) * d.rows]).map(|(a, w)| a * w).sum::<f32>();
            *yo = if relu { s.max(0.0) } else { s };
        }
        return;
    }
    let y = &mut y[..d.cols];
    y.copy_from_slice(&d.b);
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for (a, w) in y.iter_mut().zip(&d.w[i * d.cols..(i + 1) * d.cols]) {
                *a += xi * w;
            }
        }
    }
    if relu {
        y.iter_mut().for_each(|v| *v = v.max(0.0));
    }
}

/// A two-output layer's logit difference (output 0 − output 1) on `x`: the portable loop.
pub fn logit_diff(d: &Dense, x: &[f32]) -> f32 {
    d.bd + x[..d.rows].iter().zip(&d.wd).map(|(a, b)| a * b).sum::<f32>()
}

/// [`forward`] with flavour `k`'s kernel (the portable loop for [`Kernel::Scalar`], or when
/// this CPU lacks `k`).
pub fn forward_with(k: Kernel, d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
    struct Layer<'a> {
        d: &'a Dense,
        x: &'a [f32],
        y: &'a mut [f32],
        relu: bool,
    }
    impl FlavourFn for Layer<'_> {
        type Output = ();
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) {
            layer::<F>(self.d, self.x, self.y, self.relu)
        }
        fn portable(self) {
            forward(self.d, self.x, self.y, self.relu)
        }
    }
    k.run(Layer { d, x, y, relu })
}

/// Output vectors accumulated in registers per pass: the register file less the broadcast
/// input and a spare.
const fn max_acc(registers: usize) -> usize {
    registers - 2
}

/// `B` output vectors from column `c`: bias, then one FMA per vector for each nonzero input
/// (the micro-kernel), then ReLU and store.
#[inline(always)]
unsafe fn block<F: Flavour, const B: usize>(d: &Dense, x: &[f32], words: &[u64], c: usize, y: &mut [f32], relu: bool) {
    // Two accumulator sets taking alternate inputs (two dependency chains of half the
    // length: the layer is bound by FMA latency, not throughput), when they fit.
    let two = 2 * B <= max_acc(F::REGISTERS);
    let mut acc = [F::zero(); B];
    let mut acc2 = [F::zero(); B];
    for (v, a) in acc.iter_mut().enumerate() {
        *a = F::load(d.b.as_ptr().add(c + v * F::LANES));
    }
    for (k, &word) in words.iter().enumerate() {
        let mut m = word;
        while m != 0 {
            fma_row::<F, B>(d, x, k * 64 + m.trailing_zeros() as usize, c, &mut acc);
            m &= m - 1;
            if two && m != 0 {
                fma_row::<F, B>(d, x, k * 64 + m.trailing_zeros() as usize, c, &mut acc2);
                m &= m - 1;
            }
        }
    }
    for (v, &a) in acc.iter().enumerate() {
        let a = if two { F::add(a, acc2[v]) } else { a };
        F::store(y.as_mut_ptr().add(c + v * F::LANES), if relu { F::max0(a) } else { a });
    }
}

/// `acc += x[i] · W[i, c..]` over `B` vectors.
#[inline(always)]
unsafe fn fma_row<F: Flavour, const B: usize>(d: &Dense, x: &[f32], i: usize, c: usize, acc: &mut [F::V; B]) {
    let xi = F::splat(*x.get_unchecked(i));
    let row = d.wh.as_ptr().add(i * d.cols + c);
    for (v, a) in acc.iter_mut().enumerate() {
        *a = F::fmadd(xi, F::load_half(row.add(v * F::LANES)), *a);
    }
}

/// A layer narrower than a vector: dot products over the (padded) inputs; the padding
/// outputs are written 0 (the next layer's nonzero mask reads them).
#[inline(always)]
unsafe fn narrow<F: Flavour>(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
    y[d.out..d.cols].fill(0.0);
    for (o, yo) in y[..d.out].iter_mut().enumerate() {
        let w = d.wt.as_ptr().add(o * d.rows);
        let mut acc = F::zero();
        for v in 0..d.rows / F::LANES {
            acc = F::fmadd(F::load(x.as_ptr().add(v * F::LANES)), F::load(w.add(v * F::LANES)), acc);
        }
        let s = d.b[o] + F::sum(acc);
        *yo = if relu { s.max(0.0) } else { s };
    }
}

/// The inputs nonzero in any of `xs` (the ReLU left the rest at 0), as bits in `words`
/// (`rows.div_ceil(64)` of them, zeroed): the k loop visits only those. Inputs past
/// [`STACK_WIDTH`] take their mask from the heap.
#[inline(always)]
unsafe fn nonzero_words<F: Flavour, const K: usize>(xs: [&[f32]; K], rows: usize, words: &mut [u64]) {
    for j in (0..rows).step_by(F::LANES) {
        let nz = xs.iter().fold(0, |m, x| m | F::nonzero(F::load(x.as_ptr().add(j))));
        words[j / 64] |= nz << (j % 64);
    }
}

/// Room for a nonzero mask: on the stack up to [`STACK_WIDTH`] inputs, else on the heap (a
/// layer that wide costs far more than the allocation). A plain value, not a closure: a
/// closure would not inherit the caller's target features, and its intrinsics would become
/// calls.
struct Mask {
    stack: [u64; STACK_WIDTH / 64],
    heap: Vec<u64>,
}

impl Mask {
    #[inline(always)]
    fn new() -> Mask {
        Mask { stack: [0; STACK_WIDTH / 64], heap: Vec::new() }
    }

    /// The mask of the inputs nonzero in any of `xs` over `rows` inputs.
    #[inline(always)]
    unsafe fn of<F: Flavour, const K: usize>(&mut self, xs: [&[f32]; K], rows: usize) -> &[u64] {
        let n = rows.div_ceil(64);
        let words: &mut [u64] = if n <= self.stack.len() {
            &mut self.stack[..n]
        } else {
            self.heap.resize(n, 0);
            &mut self.heap
        };
        nonzero_words::<F, K>(xs, rows, words);
        words
    }
}

/// The jr loop: `(first column, vectors)` of blocks covering `vectors` output vectors as
/// evenly as blocks of at most `cap` vectors allow.
#[inline(always)]
fn blocks(vectors: usize, cap: usize, lanes: usize) -> impl Iterator<Item = (usize, usize)> {
    let n = vectors.div_ceil(cap);
    (0..n).scan(0, move |done, k| {
        let size = (vectors - *done).div_ceil(n - k);
        let c = *done * lanes;
        *done += size;
        Some((c, size))
    })
}

/// `y = b + x·W`, ReLU'd when `relu`; `x` has `d.rows()` entries, `y` at least `d.cols()`.
///
/// Safety: flavour `F`'s instructions are available (the caller is compiled for them).
#[inline(always)]
pub(crate) unsafe fn layer<F: Flavour>(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
    assert!(x.len() == d.rows && y.len() >= d.cols && d.rows % LANES == 0 && d.cols % LANES == 0);
    if d.is_narrow() {
        return narrow::<F>(d, x, y, relu);
    }
    let mut mask = Mask::new();
    let words = mask.of::<F, 1>([x], d.rows);
    for (c, size) in blocks(d.cols / F::LANES, max_acc(F::REGISTERS), F::LANES) {
        macro_rules! by_size {
            ($($n:literal)*) => {
                match size {
                    $($n => block::<F, $n>(d, x, words, c, y, relu),)*
                    _ => unreachable!("block of {size} vectors"),
                }
            };
        }
        by_size!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30);
    }
}

/// `x · w` over whole vectors (`x.len()` a multiple of `LANES`).
#[inline(always)]
unsafe fn dot<F: Flavour>(x: &[f32], w: &[f32]) -> f32 {
    debug_assert!(x.len() % F::LANES == 0 && w.len() >= x.len());
    let mut acc = F::zero();
    for v in 0..x.len() / F::LANES {
        acc = F::fmadd(F::load(x.as_ptr().add(v * F::LANES)), F::load(w.as_ptr().add(v * F::LANES)), acc);
    }
    F::sum(acc)
}

/// [`logit_diff`] with flavour `F`.
///
/// Safety: as [`layer`]; `d` has two outputs and `x` at least `d.rows()` entries.
#[inline(always)]
pub(crate) unsafe fn logit_diff_simd<F: Flavour>(d: &Dense, x: &[f32]) -> f32 {
    d.bd + dot::<F>(&x[..d.rows], &d.wd)
}

/// [`block`] on two inputs at once: each weight vector is loaded and widened once for
/// both, and the two accumulator sets are independent chains.
#[inline(always)]
unsafe fn block2<F: Flavour, const B: usize>(d: &Dense, x: [&[f32]; 2], words: &[u64], c: usize, y: [&mut [f32]; 2], relu: bool) {
    let mut acc = [[F::zero(); B]; 2];
    for v in 0..B {
        let bias = F::load(d.b.as_ptr().add(c + v * F::LANES));
        acc[0][v] = bias;
        acc[1][v] = bias;
    }
    for (k, &word) in words.iter().enumerate() {
        let mut m = word;
        while m != 0 {
            let i = k * 64 + m.trailing_zeros() as usize;
            m &= m - 1;
            let (x0, x1) = (F::splat(*x[0].get_unchecked(i)), F::splat(*x[1].get_unchecked(i)));
            let row = d.wh.as_ptr().add(i * d.cols + c);
            for v in 0..B {
                let w = F::load_half(row.add(v * F::LANES));
                acc[0][v] = F::fmadd(x0, w, acc[0][v]);
                acc[1][v] = F::fmadd(x1, w, acc[1][v]);
            }
        }
    }
    for (out, acc) in y.into_iter().zip(acc) {
        for (v, a) in acc.into_iter().enumerate() {
            F::store(out.as_mut_ptr().add(c + v * F::LANES), if relu { F::max0(a) } else { a });
        }
    }
}

/// [`layer`] on two inputs (e.g. the two orders of a comparison): the k loop visits inputs
/// nonzero in either.
///
/// Safety: as [`layer`].
#[inline(always)]
pub(crate) unsafe fn layer2<F: Flavour>(d: &Dense, x: [&[f32]; 2], y: [&mut [f32]; 2], relu: bool) {
    assert!(x.iter().all(|x| x.len() == d.rows) && y.iter().all(|y| y.len() >= d.cols) && d.rows % LANES == 0 && d.cols % LANES == 0);
    if d.is_narrow() {
        let [y0, y1] = y;
        narrow::<F>(d, x[0], y0, relu);
        return narrow::<F>(d, x[1], y1, relu);
    }
    let [y0, y1] = y;
    let mut mask = Mask::new();
    let words = mask.of::<F, 2>(x, d.rows);
    // Two accumulator sets, two broadcasts and the weight vector within the registers.
    for (c, size) in blocks(d.cols / F::LANES, (F::REGISTERS - 3) / 2, F::LANES) {
        macro_rules! by_size {
            ($($n:literal)*) => {
                match size {
                    $($n => block2::<F, $n>(d, x, words, c, [&mut *y0, &mut *y1], relu),)*
                    _ => unreachable!("block of {size} vectors"),
                }
            };
        }
        by_size!(1 2 3 4 5 6 7 8 9 10 11 12 13 14);
    }
}

/// A layer kernel as a type: a network's whole forward pass, generic over it, inlines into
/// one function per flavour (`Kernel::run`, which says why a type and not a closure). Every
/// SIMD flavour is one; [`Portable`] is the portable loop.
pub trait LayerKernel {
    /// [`forward`] with this kernel. Safety: its instructions are available.
    unsafe fn layer(d: &Dense, x: &[f32], y: &mut [f32], relu: bool);
    /// [`logit_diff`] with this kernel. Safety: as `layer`.
    unsafe fn logit_diff(d: &Dense, x: &[f32]) -> f32;
}

/// The portable loop as a [`LayerKernel`].
pub struct Portable;

impl LayerKernel for Portable {
    #[inline(always)]
    unsafe fn layer(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
        forward(d, x, y, relu)
    }
    #[inline(always)]
    unsafe fn logit_diff(d: &Dense, x: &[f32]) -> f32 {
        logit_diff(d, x)
    }
}

impl<F: Flavour> LayerKernel for F {
    #[inline(always)]
    unsafe fn layer(d: &Dense, x: &[f32], y: &mut [f32], relu: bool) {
        layer::<F>(d, x, y, relu)
    }
    #[inline(always)]
    unsafe fn logit_diff(d: &Dense, x: &[f32]) -> f32 {
        logit_diff_simd::<F>(d, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Each SIMD layer kernel against the portable loop on odd shapes (narrow ones
        /// included), with ReLU-like zeros in the input, with and without ReLU.
        #[test]
        fn simd_layers_match_portable(n_in in 1usize..140, n_out in 1usize..500, seed in 0u64..1000, relu: bool) {
            let mut r = crate::tensor::rng::Rng::new(seed);
            let mut u = || r.uniform(-0.5, 0.5);
            let w: Vec<f32> = (0..n_in * n_out).map(|_| u()).collect();
            let b: Vec<f32> = (0..n_out).map(|_| u()).collect();
            let d = Dense::new(&w, &b, n_in, n_out);
            let mut x = vec![0.0; d.rows()];
            x[..n_in].iter_mut().for_each(|v| *v = u().max(0.0));
            let mut want = vec![0.0; d.cols()];
            forward(&d, &x, &mut want, relu);
            for k in [Kernel::Avx2, Kernel::Avx512].into_iter().filter(|k| k.available()) {
                let mut got = vec![f32::NAN; d.cols()];
                forward_with(k, &d, &x, &mut got, relu);
                for (o, (a, b)) in want.iter().zip(&got).take(n_out).enumerate() {
                    proptest::prop_assert!((a - b).abs() < 1e-4, "{k:?} {n_in}x{n_out} output {o}: {a} vs {b}");
                }
                if !d.is_narrow() {
                    proptest::prop_assert!(got[n_out..].iter().all(|&v| v == 0.0), "{k:?}: padding not zero");
                }
            }
        }
    }

    /// Inputs wider than the stack mask (a DBN's 1,100 hidden units, issue 45: the kernels
    /// asserted on them and the search panicked) go through every kernel, one input and two,
    /// and agree with the portable loop, with nonzero inputs past the stack's reach.
    #[test]
    fn inputs_wider_than_the_stack_mask() {
        let mut r = crate::tensor::rng::Rng::new(45);
        for (n_in, n_out) in [(1100, 100), (STACK_WIDTH + 1, 17), (2500, 40), (1030, 3)] {
            let mut u = || r.uniform(-0.5, 0.5);
            let w: Vec<f32> = (0..n_in * n_out).map(|_| u()).collect();
            let b: Vec<f32> = (0..n_out).map(|_| u()).collect();
            let d = Dense::new(&w, &b, n_in, n_out);
            assert!(d.rows() > STACK_WIDTH);
            let xs: [Vec<f32>; 2] = std::array::from_fn(|_| (0..d.rows()).map(|i| if i < n_in && i % 3 != 0 { u().abs() } else { 0.0 }).collect());
            assert!(xs[0][STACK_WIDTH..].iter().any(|&v| v != 0.0));
            let want: [Vec<f32>; 2] = std::array::from_fn(|j| {
                let mut y = vec![0.0; d.cols()];
                forward(&d, &xs[j], &mut y, true);
                y
            });
            for k in [Kernel::Avx2, Kernel::Avx512].into_iter().filter(|k| k.available()) {
                let mut got = vec![f32::NAN; d.cols()];
                forward_with(k, &d, &xs[0], &mut got, true);
                let close = |a: &[f32], b: &[f32]| a.iter().zip(b).take(n_out).all(|(a, b)| (a - b).abs() < 1e-3);
                assert!(close(&want[0], &got), "{k:?} {n_in}x{n_out}");
                let mut two = [vec![f32::NAN; d.cols()], vec![f32::NAN; d.cols()]];
                let [y0, y1] = &mut two;
                pair_with(k, &d, [&xs[0], &xs[1]], [y0, y1]);
                assert!(close(&want[0], &two[0]) && close(&want[1], &two[1]), "{k:?} two inputs {n_in}x{n_out}");
            }
        }
    }

    /// [`layer2`] with flavour `k` (what DeepChess's head runs), for the test above.
    fn pair_with(k: Kernel, d: &Dense, x: [&[f32]; 2], y: [&mut [f32]; 2]) {
        struct Pair<'a> {
            d: &'a Dense,
            x: [&'a [f32]; 2],
            y: [&'a mut [f32]; 2],
        }
        impl FlavourFn for Pair<'_> {
            type Output = ();
            #[inline(always)]
            unsafe fn simd<F: Flavour>(self) {
                layer2::<F>(self.d, self.x, self.y, true)
            }
            fn portable(self) {
                unreachable!("asked for SIMD flavours only")
            }
        }
        k.run(Pair { d, x, y })
    }

    /// The portable loop is `b + x·W` with the weights rounded to half precision, and a
    /// two-output layer's logit difference is output 0 − output 1.
    #[test]
    fn portable_layer_is_the_affine_map_in_half_precision() {
        let (n_in, n_out) = (5, 2);
        let w: Vec<f32> = (0..n_in * n_out).map(|i| 0.1 * i as f32 - 0.3).collect();
        let b = [0.25, -0.5];
        let d = Dense::new(&w, &b, n_in, n_out);
        let x: Vec<f32> = (0..d.rows()).map(|i| if i < n_in { 1.0 - 0.3 * i as f32 } else { 0.0 }).collect();
        let mut y = vec![0.0; d.cols()];
        forward(&d, &x, &mut y, false);
        for o in 0..n_out {
            let want = b[o] + (0..n_in).map(|i| x[i] * f16_value(f16_bits(w[i * n_out + o]))).sum::<f32>();
            assert!((y[o] - want).abs() < 1e-6, "output {o}: {} vs {want}", y[o]);
        }
        assert!((logit_diff(&d, &x) - (y[0] - y[1])).abs() < 1e-6);
        assert!(y[n_out..].iter().all(|&v| v == 0.0));
    }
}
