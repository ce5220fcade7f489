//! The value student laid out for play (beyond the paper): one tower and a linear output
//! ([`ValueNet`], train phase `value`), the value its teacher gives a position against its
//! colour mirror ([`super::DrawValue`]) learned by a single tower, so a position costs one
//! tower instead of the teacher's two and its two head passes. Its first layer is kept
//! along the search's line ([`DenseFirst`]); the later layers are the shared dense layers,
//! run as one computation per kernel flavour.

use super::value::whole_centipawns;
use crate::chess::Position;
use crate::deepchess::features::{Features, BITS};
use crate::deepchess::model::{ValueArch, ValueNet};
use crate::eval::line::{DenseFirst, Line};
use crate::eval::Evaluator;
use crate::tensor::kernels::dispatch::FlavourFn;
use crate::tensor::kernels::simd::Flavour;
use crate::tensor::layers::dense::{Dense, LayerKernel, Portable};
use crate::tensor::Kernel;
use std::sync::Arc;
use crate::tensor::Architecture as _;

/// Widest padded hidden layer the value build takes (its scratch lives on the stack).
pub const MAX_WIDTH: usize = 256;

/// The student's layers: the first (read as rows along the line), then the rest, the last
/// with one output.
struct Layers {
    first: Dense,
    rest: Vec<Dense>,
}

impl Layers {
    /// The first layer as the line reads it, with `kernel`'s row additions.
    fn first_layer(&self, kernel: Kernel) -> DenseFirst<'_> {
        DenseFirst { d: &self.first, kernel, bits: BITS }
    }
}

/// A value student as an [`Evaluator`]: values in the teacher's logit units, rounded to
/// whole centipawns as the teacher's reading is.
pub struct ValueStudent {
    layers: Arc<Layers>,
    kernel: Kernel,
    line: Line<f32>,
    /// The hidden layers' values, two rows of [`MAX_WIDTH`]: kept here rather than zeroed on
    /// the stack at every node (2 kB of stores, a fifth of the layers' time).
    scratch: Vec<f32>,
    /// The player's name (`value-student`; `value-searched` for the student taught by its
    /// own search).
    name: &'static str,
    pub description: String,
}

impl ValueStudent {
    /// From a trained student; fails when a hidden layer is wider than [`MAX_WIDTH`].
    pub fn from_net(net: &ValueNet) -> Result<ValueStudent, String> {
        ValueStudent::fits(&net.arch)?;
        let arch = net.arch.describe();
        let dense = |&(w, b): &(crate::tensor::ParamId, crate::tensor::ParamId)| {
            let (w, b) = (net.params.value(w), net.params.value(b));
            Dense::new(w.data(), b.row(0), w.rows(), w.cols())
        };
        let first = dense(&net.layers[0]);
        let rest: Vec<Dense> = net.layers[1..].iter().map(dense).collect();
        let line = Line::new(first.cols());
        Ok(ValueStudent { layers: Arc::new(Layers { first, rest }), kernel: Kernel::best(), line, scratch: vec![0.0; 2 * MAX_WIDTH], name: "value-student", description: arch })
    }

    /// Whether this build plays a student of `arch`: no hidden layer wider than [`MAX_WIDTH`].
    pub fn fits(arch: &ValueArch) -> Result<(), String> {
        match arch.layers[1..].iter().find(|&&w| crate::tensor::layers::dense::pad(w) > MAX_WIDTH) {
            Some(w) => Err(format!("value student {}: a layer of {w} is wider than this build's {MAX_WIDTH}", arch.describe())),
            None => Ok(()),
        }
    }

    /// The same evaluator under another player's name.
    pub fn named(mut self, name: &'static str) -> ValueStudent {
        self.name = name;
        self
    }

    /// Forces a kernel (tests, benchmarks); false, and the current one kept, when this CPU
    /// lacks it.
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

    /// The value of `pos` from its bits, unrounded (off the line; tests compare it with the
    /// training forward pass).
    pub fn raw_value(&self, pos: &Position) -> f32 {
        let f = Features::from_position(pos);
        let active: Vec<usize> = f.as_slice().iter().map(|&i| i as usize).collect();
        let mut sums = vec![0.0; self.layers.first.cols()];
        crate::eval::line::FirstLayer::refresh(&self.layers.first_layer(self.kernel), &active, &mut sums);
        self.kernel.run(Finish(&self.layers, &sums, &mut vec![0.0; 2 * MAX_WIDTH]))
    }
}

/// The layers after the first, with layer kernel `K`, so every kernel shares this code;
/// `scratch` holds two rows of [`MAX_WIDTH`] (what they hold before does not matter).
///
/// Safety: `K`'s instructions are available (the caller is compiled for them).
#[inline(always)]
unsafe fn finish_with<K: LayerKernel>(layers: &Layers, sums: &[f32], scratch: &mut [f32]) -> f32 {
    let (mut x, mut y) = scratch.split_at_mut(MAX_WIDTH);
    for (a, &s) in x.iter_mut().zip(sums) {
        *a = s.max(0.0);
    }
    let (last, hidden) = layers.rest.split_last().expect("a value student has an output layer");
    for d in hidden {
        K::layer(d, &x[..d.rows()], &mut y[..d.cols()], true);
        std::mem::swap(&mut x, &mut y);
    }
    K::layer(last, &x[..last.rows()], &mut y[..last.cols()], false);
    y[0]
}

/// [`finish_with`] per flavour (`Kernel::run` compiles each for its instructions).
struct Finish<'a>(&'a Layers, &'a [f32], &'a mut [f32]);

impl FlavourFn for Finish<'_> {
    type Output = f32;
    #[inline(always)]
    unsafe fn simd<F: Flavour>(self) -> f32 {
        finish_with::<F>(self.0, self.1, self.2)
    }
    #[inline(always)]
    fn portable(self) -> f32 {
        // Safety: the portable loop needs no instruction beyond the base set.
        unsafe { finish_with::<Portable>(self.0, self.1, self.2) }
    }
}

impl Evaluator for ValueStudent {
    fn name(&self) -> &'static str {
        self.name
    }

    fn evaluate(&mut self, pos: &Position) -> f32 {
        whole_centipawns(self.raw_value(pos))
    }

    fn set_node(&mut self, ply: usize, pos: &Position) {
        self.line.set_node(ply, pos);
    }

    fn set_root(&mut self, pos: &Position) {
        self.line.set_root(pos, &self.layers.first_layer(self.kernel));
    }

    fn evaluate_at(&mut self, ply: usize, pos: &Position) -> f32 {
        if !self.line.holds(ply, pos) {
            return self.evaluate(pos);
        }
        let sums = self.line.ensure(ply, &self.layers.first_layer(self.kernel));
        whole_centipawns(self.kernel.run(Finish(&self.layers, sums, &mut self.scratch)))
    }

    fn clear(&mut self) {
        self.line.clear();
    }

    /// The first layer along the line (on by default); off, from each position's bits.
    fn set_incremental(&mut self, on: bool) -> bool {
        self.line.incremental = on;
        true
    }

    fn fork(&self) -> Option<Self> {
        let line = Line::new(self.layers.first.cols());
        Some(ValueStudent { layers: Arc::clone(&self.layers), kernel: self.kernel, line, scratch: vec![0.0; 2 * MAX_WIDTH], name: self.name, description: self.description.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deepchess::model::ValueArch;
    use crate::eval::CP_PER_LOGIT;
    use crate::tensor::Rng;

    /// Positions along `n` random games from the start, 40 plies each at most.
    fn positions_along_random_games(n: usize, seed: u64) -> Vec<Vec<Position>> {
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                let mut pos = Position::startpos();
                let mut line = vec![pos];
                for _ in 0..40 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    pos.play(moves.as_slice()[(rng % moves.len() as u64) as usize]);
                    line.push(pos);
                }
                line
            })
            .collect()
    }

    /// The search's values (along the line, every kernel) are the training forward pass's,
    /// within the half-precision rounding of the layers, and rounded to whole centipawns.
    #[test]
    fn values_along_the_line_equal_the_training_forward_pass() {
        crate::chess::attacks::init();
        let net = ValueNet::new(ValueArch::compact(), &mut Rng::new(7));
        for (seed, k) in [(0x9E37, Kernel::Scalar), (0x51ED, Kernel::best())] {
            let mut e = ValueStudent::from_net(&net).unwrap();
            assert!(e.set_kernel(k));
            for game in positions_along_random_games(4, seed) {
                e.set_root(&game[0]);
                let feats: Vec<Features> = game.iter().map(Features::from_position).collect();
                let rows: Vec<&[u16]> = feats.iter().map(|f| f.as_slice()).collect();
                let want = net.values(&rows).unwrap();
                for (ply, pos) in game.iter().enumerate() {
                    e.set_node(ply, pos);
                    let got = e.evaluate_at(ply, pos);
                    assert_eq!(got, whole_centipawns(got), "whole centipawns");
                    let tol = 0.02 * want[ply].abs().max(1.0);
                    assert!((e.raw_value(pos) - want[ply]).abs() < tol, "ply {ply} {k:?}: {} against {}", e.raw_value(pos), want[ply]);
                    assert!((got - want[ply]).abs() < tol + 0.5 / CP_PER_LOGIT, "ply {ply} {k:?}: {got} against {}", want[ply]);
                    assert!((got - e.evaluate(pos)).abs() < 1.01 / CP_PER_LOGIT, "ply {ply} {k:?}: incremental {got}, from scratch {}", e.evaluate(pos));
                }
            }
        }
    }

    /// The shipped student: more material is worth more, a position's mirror is worth about
    /// the opposite (it was taught both), and the start is about level.
    #[test]
    fn the_shipped_student_values_material_and_mirrors_about_negate() {
        crate::chess::attacks::init();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nets/value-student.dcw");
        let mut e = ValueStudent::from_net(&<ValueNet as crate::tensor::NetFile>::load(&path).unwrap().0).unwrap();
        let up = e.evaluate(&Position::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap());
        let level = e.evaluate(&Position::startpos());
        assert!(up > level + 2.0 && level.abs() < 0.5, "a queen up {up}, the start {level}");
        let (mut sum, mut n) = (0.0, 0);
        for game in positions_along_random_games(8, 3) {
            for pos in &game {
                sum += (e.evaluate(pos) + e.evaluate(&pos.mirror())).abs();
                n += 1;
            }
        }
        let mean = sum / n as f32;
        assert!(mean < 0.25, "mean |v(p) + v(mirror p)| {mean} over {n} positions");
    }

    #[test]
    fn too_wide_a_student_is_refused_with_its_shape() {
        let net = ValueNet::new(ValueArch { layers: vec![crate::deepchess::features::INPUTS, 300, 1] }, &mut Rng::new(1));
        let e = ValueStudent::from_net(&net).err().unwrap();
        assert!(e.contains("773-300-1"), "{e}");
    }
}
