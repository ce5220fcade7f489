//! A net of the distilled shape (773-100-100-100 towers, 100+100 → 100 → 2 head) with
//! seeded random weights. It plays nonsense; it exists to measure what the net path of the
//! search costs (cost does not depend on weight values) and to test the [`SiameseNet`] seam
//! and the incremental first layer without a trained net. Never offered as an `Eval`.

use super::net::SiameseNet;
use crate::deepchess::features::INPUTS;

pub const WIDTH: usize = 100;

/// Per position: the head's first layer applied to the tower output, once as the left
/// input and once as the right one, so a comparison costs 100 adds + 100 MACs.
#[derive(Clone, Copy)]
pub struct Projections {
    pub left: [f32; WIDTH],
    pub right: [f32; WIDTH],
}

impl Default for Projections {
    fn default() -> Self {
        Projections { left: [0.0; WIDTH], right: [0.0; WIDTH] }
    }
}

pub struct RandomNet {
    first: Vec<f32>, // INPUTS rows × WIDTH
    first_bias: Vec<f32>,
    /// Dense layers stored input-major (column i = weights from input i) so a matrix-vector
    /// product is a sum of scaled columns: vectorises without reordering a reduction, and
    /// skips inputs the ReLU zeroed.
    layers: [(Vec<f32>, Vec<f32>); 2],
    head_left: Vec<f32>,
    head_right: Vec<f32>,
    head_bias: Vec<f32>,
    /// Output-0 minus output-1 weights: softmax over 2 is a sigmoid of the difference.
    out_diff: Vec<f32>,
    out_bias_diff: f32,
}

fn rng(seed: u64) -> impl FnMut() -> f32 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

impl RandomNet {
    pub fn new(seed: u64) -> RandomNet {
        let mut r = rng(seed);
        let mut mat = |n: usize, fan_in: usize| -> Vec<f32> {
            let s = (6.0 / fan_in as f32).sqrt();
            (0..n).map(|_| r() * s).collect()
        };
        let first = mat(INPUTS * WIDTH, 37);
        let first_bias = mat(WIDTH, 100);
        let layers = [(mat(WIDTH * WIDTH, WIDTH), mat(WIDTH, 100)), (mat(WIDTH * WIDTH, WIDTH), mat(WIDTH, 100))];
        let head_left = mat(WIDTH * WIDTH, 2 * WIDTH);
        let head_right = mat(WIDTH * WIDTH, 2 * WIDTH);
        let head_bias = mat(WIDTH, 100);
        let out_diff = mat(WIDTH, WIDTH);
        RandomNet { first, first_bias, layers, head_left, head_right, head_bias, out_diff, out_bias_diff: 0.0 }
    }
}

/// y = W x (+ y's initial value), W input-major, skipping zero inputs.
#[inline]
fn matvec_acc(w: &[f32], x: &[f32], y: &mut [f32; WIDTH]) {
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            let col = &w[i * WIDTH..(i + 1) * WIDTH];
            for (yo, &c) in y.iter_mut().zip(col) {
                *yo += xi * c;
            }
        }
    }
}

fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

impl SiameseNet for RandomNet {
    type Code = Projections;

    fn first_width(&self) -> usize {
        WIDTH
    }
    fn first_weights(&self) -> &[f32] {
        &self.first
    }
    fn first_bias(&self) -> &[f32] {
        &self.first_bias
    }

    fn finish(&self, first: &[f32]) -> Projections {
        let mut x = [0.0f32; WIDTH];
        x.copy_from_slice(first);
        relu(&mut x);
        for (w, b) in &self.layers {
            let mut y = [0.0f32; WIDTH];
            y.copy_from_slice(b);
            matvec_acc(w, &x, &mut y);
            relu(&mut y);
            x = y;
        }
        let mut p = Projections::default();
        matvec_acc(&self.head_left, &x, &mut p.left);
        matvec_acc(&self.head_right, &x, &mut p.right);
        p
    }

    fn head_logit(&self, a: &Projections, b: &Projections) -> f32 {
        let mut d = self.out_bias_diff;
        for i in 0..WIDTH {
            let h = (a.left[i] + b.right[i] + self.head_bias[i]).max(0.0);
            d += h * self.out_diff[i];
        }
        d
    }
}
