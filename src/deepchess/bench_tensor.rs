//! DeepChess's share of `deepchess bench-tensor`: the paper's Pos2Vec tower as the GEMM
//! table's shapes ([`GEMM_LAYERS`]), and its sparse first layer against the dense GEMM doing
//! the same work ([`SPARSE`], `--only sparse`).

use super::features::INPUTS;
use crate::io::args::rate;
use crate::tensor::layers::sparse::{self, SparseBatch};
use crate::tensor::{gemm_with, Init, Kernel, Matrix, Rng, Trans};
use crate::train::system::{BenchArgs, BenchPart};

/// The paper's Pos2Vec tower, 773-600-400-200-100 ([`super::model::Arch::big`]): the layers whose products
/// dominate DeepChess's training, so the GEMM table times them.
pub const GEMM_LAYERS: &[(usize, usize)] = &[(INPUTS, 600), (600, 400), (400, 200), (200, 100)];

/// Set bits of a position: about 32 of the 773 (pieces, side to move, castling rights).
const ACTIVE: usize = 32;

/// The sparse first layer (773 → 600, the big tower's) forward + backward at batch 256.
pub const SPARSE: BenchPart = BenchPart {
    name: "sparse",
    about: "the sparse 773-bit input layer against dense GEMM",
    flags: &[],
    run: |a, rng| {
        let (inputs, outputs) = GEMM_LAYERS[0];
        sparse_bench(inputs, outputs, a, rng)
    },
};

/// Rows of ~32 set bits (sparse) against dense GEMM on the same one-hot matrix.
fn sparse_bench(inputs: usize, outputs: usize, a: &BenchArgs, rng: &mut Rng) {
    let (reps, nthreads, best) = (a.reps, a.threads, Kernel::best());
    let min_s = if a.quick { 0.02 } else { 0.1 };
    let batch = 256usize;
    let mut rows: Vec<Vec<u32>> = Vec::with_capacity(batch);
    for _ in 0..batch {
        let mut idx: Vec<u32> = Vec::with_capacity(ACTIVE);
        while idx.len() < ACTIVE {
            let i = rng.below(inputs as u64) as u32;
            if !idx.contains(&i) {
                idx.push(i);
            }
        }
        idx.sort_unstable();
        rows.push(idx);
    }
    let x = SparseBatch::from_rows(inputs, &rows).expect("valid indices");
    let dense = x.to_dense();
    let w = Init::HeNormal.matrix(inputs, outputs, rng);
    let bias = Matrix::zeros(1, outputs);
    let dy = Init::XavierUniform.matrix(batch, outputs, rng);
    let mut y = Matrix::zeros(batch, outputs);
    let mut dw = Matrix::zeros(inputs, outputs);
    let mut db = Matrix::zeros(1, outputs);
    println!("Sparse input layer {inputs}→{outputs}, batch {batch}, {ACTIVE} bits set per position (forward + backward)");
    for &t in &[1usize, nthreads.max(1)] {
        let fwd = rate(reps, min_s, batch as f64, || {
            let _ = sparse::forward_with(best, t, &x, &w, &bias, &mut y);
        });
        let bwd = rate(reps, min_s, batch as f64, || {
            let _ = sparse::backward_with(best, t, &x, &dy, &mut dw, &mut db);
        });
        let sp = 1.0 / (1.0 / fwd + 1.0 / bwd);
        let de = rate(reps, min_s, batch as f64, || {
            let _ = gemm_with(best, t, Trans::N, Trans::N, 1.0, &dense, &w, 0.0, &mut y);
            let _ = gemm_with(best, t, Trans::T, Trans::N, 1.0, &dense, &dy, 1.0, &mut dw);
        });
        println!(
            "  {t} thread(s): sparse {sp:>9.0} positions/s (fwd {fwd:.0}, bwd {bwd:.0})   dense GEMM ({}) {de:>8.0} positions/s   sparse/dense {:.1}×",
            best.name(),
            sp / de
        );
        if t == nthreads {
            break;
        }
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deepchess::model::Arch;

    /// The table's shapes are the paper's tower, not a copy that could drift from it.
    #[test]
    fn gemm_layers_are_the_big_tower() {
        let tower: Vec<(usize, usize)> = Arch::big().tower.windows(2).map(|w| (w[0], w[1])).collect();
        assert_eq!(GEMM_LAYERS, &tower[..]);
    }
}
