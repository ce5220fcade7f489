//! `deepchess bench-tensor`: GFLOPS of each GEMM kernel on the networks' real shapes
//! (and 1024³), side by side with numpy/OpenBLAS single-thread when numpy is
//! importable, plus the sparse input layer against the dense GEMM doing the same work,
//! restricted Boltzmann machine CD-1 training against scikit-learn's `BernoulliRBM`
//! when scikit-learn is importable, and seed 003's convolution and pooling layers against
//! PyTorch on one thread when torch is importable ([`super::bench_conv`]).

use crate::io::args::{self, rate, CliError, Flag};
use crate::tensor::{gemm_with, Trans};
use crate::tensor::Kernel;
use crate::dbn::rbm::Rbm;
use crate::tensor::layers::sparse::{self, SparseBatch};
use crate::tensor::{Init, Matrix, Rng};
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "reps", value: Some("N"), help: "repetitions per figure; medians are quoted (default 7)" },
    Flag { name: "threads", value: Some("T"), help: "threads for the 'threaded' column (default: all cores)" },
    Flag { name: "no-numpy", value: None, help: "skip the numpy/OpenBLAS comparison" },
    Flag { name: "no-sklearn", value: None, help: "skip the scikit-learn BernoulliRBM comparison" },
    Flag { name: "no-torch", value: None, help: "skip the PyTorch comparison of the conv part" },
    Flag { name: "only", value: Some("PART"), help: "run one part: gemm, sparse, rbm or conv (default: all)" },
    Flag { name: "quick", value: None, help: "fewer repetitions and shorter timings (smoke test)" },
];

const ABOUT: &str = "Benchmark the numeric kernels: GEMM GFLOPS per kernel on the network shapes, numpy/OpenBLAS\n\
single-thread ratio, the sparse 773-bit input layer against dense GEMM, RBM CD-1 training\n\
against scikit-learn's BernoulliRBM, and convolution/pooling against PyTorch (1 thread).";

/// One benchmarked product: `C[m×n] = op(A) · op(B)` with inner size `k`.
struct Shape {
    label: &'static str,
    ta: Trans,
    tb: Trans,
    m: usize,
    k: usize,
    n: usize,
}

/// The networks' layers at batch 256 (forward `X·W`, backward `dY·Wᵀ` and `Xᵀ·dY`), and 1024³.
fn shapes() -> Vec<Shape> {
    let layers = [(773, 600, "773-600"), (600, 400, "600-400"), (400, 200, "400-200"), (200, 100, "200-100")];
    let mut v = Vec::new();
    for &(i, o, name) in &layers {
        v.push(Shape { label: leak(format!("fwd {name}   X·W")), ta: Trans::N, tb: Trans::N, m: 256, k: i, n: o });
    }
    for &(i, o, name) in &layers {
        v.push(Shape { label: leak(format!("bwd {name} dY·Wᵀ")), ta: Trans::N, tb: Trans::T, m: 256, k: o, n: i });
    }
    for &(i, o, name) in &layers {
        v.push(Shape { label: leak(format!("bwd {name} Xᵀ·dY")), ta: Trans::T, tb: Trans::N, m: i, k: 256, n: o });
    }
    v.push(Shape { label: "square 1024³  A·B", ta: Trans::N, tb: Trans::N, m: 1024, k: 1024, n: 1024 });
    v
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn median(mut v: Vec<f64>) -> f64 {
    crate::io::args::median(&mut v)
}

fn operands(s: &Shape, rng: &mut Rng) -> (Matrix, Matrix, Matrix) {
    let (ar, ac) = if s.ta == Trans::N { (s.m, s.k) } else { (s.k, s.m) };
    let (br, bc) = if s.tb == Trans::N { (s.k, s.n) } else { (s.n, s.k) };
    let a = Init::XavierUniform.matrix(ar, ac, rng);
    let b = Init::XavierUniform.matrix(br, bc, rng);
    (a, b, Matrix::zeros(s.m, s.n))
}

const NUMPY_SCRIPT: &str = r#"
import sys, time
import numpy as np
reps = int(sys.argv[1]); min_s = float(sys.argv[2])
rng = np.random.default_rng(1)
for line in sys.argv[3:]:
    ta, tb, m, k, n = line.split(',')
    m, k, n = int(m), int(k), int(n)
    a = rng.standard_normal((m, k) if ta == 'N' else (k, m), dtype=np.float32)
    b = rng.standard_normal((k, n) if tb == 'N' else (n, k), dtype=np.float32)
    A = a if ta == 'N' else a.T
    B = b if tb == 'N' else b.T
    c = np.empty((m, n), dtype=np.float32)
    np.matmul(A, B, out=c)
    rates = []
    for _ in range(reps):
        t = time.perf_counter(); calls = 0
        while calls == 0 or time.perf_counter() - t < min_s:
            np.matmul(A, B, out=c); calls += 1
        rates.append(2.0 * m * n * k * calls / (time.perf_counter() - t) / 1e9)
    rates.sort()
    print(rates[len(rates) // 2], flush=True)
"#;

/// numpy/OpenBLAS single-thread GFLOPS per shape, or why it is unavailable.
fn numpy_gflops(shapes: &[Shape], reps: usize, min_s: f64) -> Result<Vec<f64>, String> {
    use std::process::Command;
    let probe = Command::new("python3").args(["-c", "import numpy"]).output();
    match probe {
        Ok(o) if o.status.success() => {}
        _ => return Err("numpy is not importable by python3 (run 'make install-numpy' to compare with OpenBLAS)".into()),
    }
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(NUMPY_SCRIPT).arg(reps.to_string()).arg(min_s.to_string());
    for s in shapes {
        let t = |t: Trans| if t == Trans::N { "N" } else { "T" };
        cmd.arg(format!("{},{},{},{},{}", t(s.ta), t(s.tb), s.m, s.k, s.n));
    }
    for var in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"] {
        cmd.env(var, "1");
    }
    let out = cmd.output().map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("numpy benchmark failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    if v.len() != shapes.len() {
        return Err(format!("numpy benchmark printed {} figures for {} shapes", v.len(), shapes.len()));
    }
    Ok(v)
}

/// Runs the subcommand.
pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = args::usage(
        "bench-tensor",
        "[--reps N] [--threads T] [--no-numpy] [--no-sklearn] [--no-torch] [--only gemm|sparse|rbm|conv] [--quick]",
        ABOUT,
        FLAGS,
    );
    let p = args::parse("bench-tensor", args, FLAGS, &help)?;
    let only = p.get("only");
    if let Some(o) = only {
        if !["gemm", "sparse", "rbm", "conv"].contains(&o) {
            return Err(CliError::Usage(format!("bench-tensor: --only takes gemm, sparse, rbm or conv, not '{o}'\n\n{help}")));
        }
    }
    let part = |name: &str| only.is_none_or(|o| o == name);
    let quick = p.has("quick");
    let reps: usize = p.get_or("bench-tensor", "reps", if quick { 3 } else { 7 })?;
    let reps = reps.max(1);
    let nthreads: usize = p.get_or("bench-tensor", "threads", crate::tensor::threads())?;
    let min_s = if quick { 0.02 } else { 0.1 };
    let best = Kernel::best();
    let mut rng = Rng::new(7);
    if part("gemm") {
        gemm_bench(!p.has("no-numpy"), reps, min_s, nthreads, &mut rng);
    }
    if part("sparse") {
        sparse_bench(reps, min_s, nthreads, best, &mut rng);
    }
    if part("rbm") {
        rbm_bench(reps, quick, nthreads, !p.has("no-sklearn"), &mut rng);
    }
    if part("conv") {
        super::bench_conv::conv_bench(!p.has("no-torch"), reps, min_s, nthreads, &mut rng);
    }
    Ok(())
}

/// The GEMM table: every kernel on every shape, threaded best kernel, numpy when present.
fn gemm_bench(with_numpy: bool, reps: usize, min_s: f64, nthreads: usize, rng: &mut Rng) {
    let kernels = Kernel::available_kernels();
    let best = Kernel::best();
    let shapes = shapes();
    println!("Numeric kernels benchmark (GFLOPS, median of {reps}; 1 thread unless said)");
    println!("kernels available: {}", kernels.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "));
    let numpy = if !with_numpy { Err("skipped (--no-numpy)".to_string()) } else { numpy_gflops(&shapes, reps, min_s) };
    if let Err(why) = &numpy {
        println!("numpy/OpenBLAS: {why}");
    }
    let mut head = format!("{:<22}", "shape (M×K×N)");
    for k in &kernels {
        head += &format!(" {:>8}", k.name());
    }
    head += &format!(" {:>11}", format!("{}×{}thr", best.name(), nthreads));
    if numpy.is_ok() {
        head += &format!(" {:>8} {:>11}", "numpy", "best/numpy");
    }
    println!("{head}");
    for (si, s) in shapes.iter().enumerate() {
        let (a, b, mut c) = operands(s, rng);
        let gflop = 2.0 * (s.m * s.n * s.k) as f64 / 1e9;
        let mut line = format!("{:<22}", format!("{} {}×{}×{}", s.label, s.m, s.k, s.n));
        let mut best_1t: f64 = 0.0;
        for &k in &kernels {
            let g = rate(reps, min_s, gflop, || {
                let _ = gemm_with(k, 1, s.ta, s.tb, 1.0, &a, &b, 0.0, &mut c);
            });
            best_1t = best_1t.max(g);
            line += &format!(" {g:>8.1}");
        }
        let gt = rate(reps, min_s, gflop, || {
            let _ = gemm_with(best, nthreads, s.ta, s.tb, 1.0, &a, &b, 0.0, &mut c);
        });
        line += &format!(" {gt:>11.1}");
        if let Ok(np) = &numpy {
            line += &format!(" {:>8.1} {:>10.2}×", np[si], best_1t / np[si]);
        }
        println!("{line}");
    }
    println!();
}

/// The first layer (773 → 600) forward + backward at batch 256: sparse (rows of the
/// ~32 set bits) against dense GEMM on the same one-hot matrix.
fn sparse_bench(reps: usize, min_s: f64, nthreads: usize, best: Kernel, rng: &mut Rng) {
    let (batch, inputs, outputs, active) = (256usize, 773usize, 600usize, 32usize);
    let mut rows: Vec<Vec<u32>> = Vec::with_capacity(batch);
    for _ in 0..batch {
        let mut idx: Vec<u32> = Vec::with_capacity(active);
        while idx.len() < active {
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
    println!("Sparse input layer {inputs}→{outputs}, batch {batch}, {active} bits set per position (forward + backward)");
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
            ours[ti][si] = median(mine);
            if sk.is_some() {
                theirs_t.push(median(sks));
            }
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
        head += &format!(" {:>17}", "best ours/sklearn");
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
            line += &format!(" {:>16.2}×", best_ours / best_theirs);
        }
        println!("{line}");
    }
    if !theirs.is_empty() {
        println!("(BernoulliRBM: persistent CD-1, sampled negative visibles, dense products; ours: CD-1 of dbn::rbm, sparse input products)");
    }
    println!();
}
