//! The DBN's part of `deepchess bench-tensor` (`--only rbm`, `SYSTEM.bench_tensor`):
//! restricted Boltzmann machine CD-1 training, positions per second, against scikit-learn's
//! `BernoulliRBM` when scikit-learn is importable.

use super::Rbm;
use crate::io::args::Flag;
use crate::tensor::{Matrix, Rng};
use crate::train::system::BenchPart;
use std::time::Instant;

/// `bench-tensor --only rbm`, a part of bench-tensor the DBN brings.
pub const PART: BenchPart = BenchPart {
    name: "rbm",
    about: "RBM CD-1 training\nagainst scikit-learn's BernoulliRBM",
    flags: &[Flag { name: "no-sklearn", value: None, help: "skip the scikit-learn BernoulliRBM comparison" }],
    run: |a, rng| rbm_bench(a.reps, a.quick, a.threads, !a.parsed.has("no-sklearn"), rng),
};

fn median(mut v: Vec<f64>) -> f64 {
    crate::io::args::median(&mut v)
}

/// The RBM shapes: the seed's first layer (772 → 100) and the bigger first layers.
const RBM_SHAPES: [(usize, usize); 3] = [(772, 100), (772, 400), (772, 600)];
const RBM_BATCH: usize = 32;
/// Fraction of inputs set, like a chess encoding (~32 of 772 bits).
const RBM_DENSITY: f64 = 0.04;
const RBM_LR: f32 = 0.01;

/// scikit-learn's side, driven line by line so that its passes and ours alternate (this VM's
/// speed drifts with other work; alternating keeps both sides under the same conditions).
/// Each input line `visible hidden rows density lr seed` runs `BernoulliRBM.fit` with
/// `n_iter=1` and `batch_size=32` on `rows` random binary rows of that density (made once
/// per shape, float32, which `BernoulliRBM` keeps; float64 measured slower) with a fresh
/// estimator, and prints rows per second. `fit` includes its one-off set-up (input checks,
/// drawing the initial weights): under 3 % of a pass here.
const SKLEARN_SCRIPT: &str = r#"
import sys, time
import numpy as np
from sklearn.neural_network import BernoulliRBM
data = {}
print('ready', flush=True)
for line in sys.stdin:
    v, h, rows, density, lr, seed = line.split()
    v, h, rows, density, lr, seed = int(v), int(h), int(rows), float(density), float(lr), int(seed)
    if (v, rows, density) not in data:
        data[(v, rows, density)] = (np.random.default_rng(1).random((rows, v)) < density).astype(np.float32)
    X = data[(v, rows, density)]
    m = BernoulliRBM(n_components=h, batch_size=32, learning_rate=lr, n_iter=1, random_state=seed)
    t = time.perf_counter()
    m.fit(X)
    print(rows / (time.perf_counter() - t), flush=True)
"#;

/// A running scikit-learn benchmark process (see [`SKLEARN_SCRIPT`]).
struct Sklearn {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl Sklearn {
    /// Starts python3 with BLAS limited to `threads`, or says why it cannot.
    fn start(threads: usize) -> Result<Sklearn, String> {
        use std::process::{Command, Stdio};
        match Command::new("python3").args(["-c", "import sklearn"]).output() {
            Ok(o) if o.status.success() => {}
            _ => return Err("not importable by python3, anchor skipped (run 'make install-sklearn' to compare)".into()),
        }
        let mut cmd = Command::new("python3");
        cmd.arg("-c").arg(SKLEARN_SCRIPT).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        for var in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"] {
            cmd.env(var, threads.to_string());
        }
        let mut child = cmd.spawn().map_err(|e| format!("cannot run python3: {e}"))?;
        let out = std::io::BufReader::new(child.stdout.take().ok_or("no stdout from python3")?);
        let mut sk = Sklearn { child, out };
        let first = sk.read_line()?;
        if first != "ready" {
            return Err(format!("scikit-learn benchmark did not start: '{first}'"));
        }
        Ok(sk)
    }

    fn read_line(&mut self) -> Result<String, String> {
        use std::io::BufRead;
        let mut line = String::new();
        match self.out.read_line(&mut line) {
            Ok(n) if n > 0 => Ok(line.trim().to_string()),
            _ => Err("the scikit-learn benchmark stopped (its error is above)".into()),
        }
    }

    /// One `fit` pass; rows per second.
    fn pass(&mut self, nv: usize, nh: usize, rows: usize, seed: usize) -> Result<f64, String> {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().ok_or("python3 has no stdin")?;
        writeln!(stdin, "{nv} {nh} {rows} {RBM_DENSITY} {RBM_LR} {seed}").map_err(|e| format!("scikit-learn benchmark: {e}"))?;
        stdin.flush().map_err(|e| format!("scikit-learn benchmark: {e}"))?;
        let line = self.read_line()?;
        line.parse().map_err(|_| format!("scikit-learn benchmark printed '{line}'"))
    }
}

impl Drop for Sklearn {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // end of input: the script's loop ends
        let _ = self.child.wait();
    }
}

/// Restricted Boltzmann machine CD-1 training, positions per second: one pass over `rows`
/// random binary rows (4 % ones) in batches of 32 per repetition, at 1 thread and at
/// `nthreads`; scikit-learn's BernoulliRBM on the same shapes and row count (1 BLAS thread),
/// its passes alternating with our 1-thread ones. Medians; the ratio is our best against it.
fn rbm_bench(reps: usize, quick: bool, nthreads: usize, with_sklearn: bool, rng: &mut Rng) {
    let rows = if quick { 640 } else { 3200 };
    let thread_counts: Vec<usize> = if nthreads > 1 { vec![1, nthreads] } else { vec![1] };
    println!(
        "RBM CD-1 training, batch {RBM_BATCH}, {} % of inputs set, {rows} rows a pass (positions/s, median of {reps} passes)",
        RBM_DENSITY * 100.0
    );
    let mut sk_note = if with_sklearn { None } else { Some("anchor skipped (--no-sklearn)".to_string()) };
    // ours[t][shape], theirs[t][shape]
    let mut ours = vec![vec![0.0; RBM_SHAPES.len()]; thread_counts.len()];
    let mut theirs: Vec<Vec<f64>> = Vec::new();
    // Our 1-thread rate over scikit-learn's, pass pair by pass pair (each pair ran back to
    // back, so drift in the machine's speed moves both): its median, per shape.
    let mut paired = vec![f64::NAN; RBM_SHAPES.len()];
    let saved = crate::tensor::threads();
    for (ti, &t) in thread_counts.iter().enumerate() {
        crate::tensor::set_threads(t);
        // scikit-learn runs with one BLAS thread, beside our 1-thread round: at batch 32 its
        // products are too small to split (2 threads measured 4-40× slower on this VM), and
        // idle OpenBLAS threads spin for a while after each call, which slowed our passes.
        let mut sk = match &sk_note {
            None if t == 1 => match Sklearn::start(1) {
                Ok(sk) => Some(sk),
                Err(why) => {
                    sk_note = Some(why);
                    None
                }
            },
            _ => None,
        };
        let mut theirs_t = Vec::new();
        for (si, &(nv, nh)) in RBM_SHAPES.iter().enumerate() {
            let batches: Vec<Matrix> = (0..rows / RBM_BATCH)
                .map(|_| {
                    let mut m = Matrix::zeros(RBM_BATCH, nv);
                    m.data_mut().iter_mut().for_each(|x| *x = if rng.next_f64() < RBM_DENSITY { 1.0 } else { 0.0 });
                    m
                })
                .collect();
            let mut rbm = Rbm::new(nv, nh, rng);
            let mut r = Rng::new(1);
            let (mut mine, mut sks) = (Vec::new(), Vec::new());
            // Pass 0 warms up both sides (caches, buffers, imports) and is not counted.
            for rep in 0..=reps {
                if let Some(s) = sk.as_mut() {
                    match s.pass(nv, nh, rows, rep) {
                        Ok(v) if rep > 0 => sks.push(v),
                        Ok(_) => {}
                        Err(why) => {
                            sk_note = Some(why);
                            sk = None;
                        }
                    }
                }
                let t0 = Instant::now();
                for b in &batches {
                    let _ = rbm.cd_k(b, 1, RBM_LR, &mut r);
                }
                if rep > 0 {
                    mine.push(rows as f64 / t0.elapsed().as_secs_f64());
                }
            }
            if sk.is_some() {
                paired[si] = median(mine.iter().zip(&sks).map(|(a, b)| a / b).collect());
                theirs_t.push(median(sks));
            }
            ours[ti][si] = median(mine);
        }
        if sk.is_some() {
            theirs.push(theirs_t);
        }
    }
    crate::tensor::set_threads(saved);
    match &sk_note {
        Some(why) => println!("scikit-learn: {why}"),
        None => println!("scikit-learn: BernoulliRBM.fit(n_iter=1), float32 input, 1 BLAS thread, passes alternating with our 1-thread ones"),
    }
    let theirs: Vec<Vec<f64>> = if sk_note.is_some() { Vec::new() } else { theirs };
    let mut head = format!("{:<12}", "shape");
    for &t in &thread_counts {
        head += &format!(" {:>11}", format!("ours {t}thr"));
    }
    for &t in thread_counts.iter().take(theirs.len()) {
        head += &format!(" {:>13}", format!("sklearn {t}thr"));
    }
    if !theirs.is_empty() {
        head += &format!(" {:>17} {:>18}", "best ours/sklearn", "1thr/sklearn pairs");
    }
    println!("{head}");
    for (si, &(nv, nh)) in RBM_SHAPES.iter().enumerate() {
        let mut line = format!("{:<12}", format!("{nv}→{nh}"));
        for o in &ours {
            line += &format!(" {:>11.0}", o[si]);
        }
        for th in &theirs {
            line += &format!(" {:>13.0}", th[si]);
        }
        if !theirs.is_empty() {
            let best_ours = ours.iter().map(|o| o[si]).fold(0.0, f64::max);
            let best_theirs = theirs.iter().map(|o| o[si]).fold(0.0, f64::max);
            line += &format!(" {:>16.2}× {:>17.2}×", best_ours / best_theirs, paired[si]);
        }
        println!("{line}");
    }
    if !theirs.is_empty() {
        println!("(BernoulliRBM: persistent CD-1, sampled negative visibles, dense products; ours: CD-1 of dbn::rbm, sparse input products;");
        println!(" pairs: the median over passes of our 1-thread pass's rate over the scikit-learn pass run just before it)");
    }
    println!();
}
