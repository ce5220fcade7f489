//! `deepchess bench-dbn`: fine-tuning throughput of seed 001's three configurations at
//! batch 32 (the seed's) and 256, in positions/s and in GFLOPS, beside the GEMM's GFLOPS on
//! the configuration's widest dense layer at the same batch, measured in the same run.

use crate::io::args::{self, CliError, Flag};
use crate::dbn::features::Encoding;
use crate::dbn::model::{Arch, Dbn, Head};
use crate::tensor::{gemm, Trans};
use crate::tensor::{Init, Matrix, Optimizer, Rng, Sgd, SparseBatch, Tape};
use crate::train::system::Command;
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "seconds", value: Some("S"), help: "time per figure (default 2)" },
    Flag { name: "threads", value: Some("T"), help: "threads of the numeric kernels (default 1, as training)" },
];

/// Set bits of a typical position (32 pieces less captures, castling rights).
const ACTIVE: usize = 34;

/// Multiply-adds of one position's forward pass: the sparse first layer reads `ACTIVE` rows.
fn macs(arch: &Arch) -> f64 {
    let w = arch.widths();
    let mut m = (ACTIVE * w[1]) as f64;
    for p in w[1..].windows(2) {
        m += (p[0] * p[1]) as f64;
    }
    m + (w[w.len() - 1] * arch.head.outputs()) as f64
}

/// `deepchess bench-dbn`, a benchmark of the DBN (`SYSTEM.commands`).
pub const COMMAND: Command = Command {
    name: "bench-dbn",
    synopsis: "[--seconds S]",
    about: "DBN fine-tuning positions/s beside the GEMM's GFLOPS",
    run,
};

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let help = args::usage("bench-dbn", "[--seconds S] [--threads T]", "Fine-tuning throughput of the DBN configurations beside the GEMM's GFLOPS.", FLAGS);
    let p = args::parse("bench-dbn", argv, FLAGS, &help)?;
    let secs: f64 = p.get_or("bench-dbn", "seconds", 2.0)?;
    let threads: usize = p.get_or("bench-dbn", "threads", 1)?;
    crate::tensor::set_threads(threads.clamp(1, 64));
    let mut rng = Rng::new(1);
    println!("fine-tuning (forward + backward + SGD step, dropout 0.5, quantized head), {threads} thread(s), {} kernel", crate::tensor::active_kernel().name());
    println!("{:<22} {:>6} {:>12} {:>9} {:>15} {:>7}", "config", "batch", "positions/s", "GFLOPS", "GEMM GFLOPS", "ratio");
    for hidden in Arch::configs() {
        let arch = Arch::new(Encoding::Bits772, hidden.clone(), Head::Quantized);
        let mut net = Dbn::new(arch.clone(), &mut rng);
        for batch in [32usize, 256] {
            let rows: Vec<Vec<u32>> = (0..batch)
                .map(|_| {
                    let mut r: Vec<u32> = (0..ACTIVE).map(|_| (rng.next_u64() % 772) as u32).collect();
                    r.sort_unstable();
                    r.dedup();
                    r
                })
                .collect();
            let x = SparseBatch::from_rows(772, &rows).expect("indices below 772");
            let classes: Vec<usize> = (0..batch).map(|i| i % 7).collect();
            let scores = Matrix::zeros(batch, 1);
            let mut tape = Tape::new();
            let mut opt = Sgd::new(0.001).with_momentum(0.9);
            let mut drop = Rng::new(2);
            let mut step = || {
                tape.reset();
                let z = net.logits_on_tape(&mut tape, &x, Some((0.5, &mut drop))).expect("shapes");
                let (l, _) = net.loss_on_tape(&mut tape, z, &classes, &scores).expect("shapes");
                tape.backward(l, &mut net.params).expect("shapes");
                opt.step(&mut net.params);
            };
            step();
            let (t, mut n) = (Instant::now(), 0usize);
            while t.elapsed().as_secs_f64() < secs {
                step();
                n += 1;
            }
            let pos_s = (n * batch) as f64 / t.elapsed().as_secs_f64();
            // Forward 1×, backward 2× (input and weight gradients), 2 flops per multiply-add.
            let gflops = pos_s * macs(&arch) * 6.0 / 1e9;
            let (i, o) = (hidden[0], hidden[1]);
            let a = Init::HeNormal.matrix(batch, i, &mut rng);
            let b = Init::HeNormal.matrix(i, o, &mut rng);
            let mut c = Matrix::zeros(batch, o);
            let (t, mut m) = (Instant::now(), 0usize);
            while t.elapsed().as_secs_f64() < secs / 2.0 {
                gemm(Trans::N, Trans::N, 1.0, &a, &b, 0.0, &mut c).expect("shapes");
                m += 1;
            }
            let gemm_gflops = (m * 2 * batch * i * o) as f64 / t.elapsed().as_secs_f64() / 1e9;
            println!(
                "{:<22} {:>6} {:>12.0} {:>9.2} {:>9.2} ({i}-{o}) {:>6.0} %",
                arch.layers(),
                batch,
                pos_s,
                gflops,
                gemm_gflops,
                100.0 * gflops / gemm_gflops
            );
        }
    }
    Ok(())
}
