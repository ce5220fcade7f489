//! `deepchess bench-tensor`: GFLOPS of each GEMM kernel on the networks' real shapes
//! (and 1024³), side by side with numpy/OpenBLAS single-thread when numpy is
//! importable, plus the sparse input layer against the dense GEMM doing the same work,
//! and restricted Boltzmann machine CD-1 training against scikit-learn's `BernoulliRBM`
//! when scikit-learn is importable.

use super::args::{self, CliError, Flag};
use crate::tensor::gemm::{gemm_with, Trans};
use crate::tensor::Kernel;
use crate::tensor::rbm::Rbm;
use crate::tensor::sparse::{self, SparseBatch};
use crate::tensor::{Init, Matrix, Rng};
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "reps", value: Some("N"), help: "repetitions per figure; medians are quoted (default 7)" },
    Flag { name: "threads", value: Some("T"), help: "threads for the 'threaded' column (default: all cores)" },
    Flag { name: "no-numpy", value: None, help: "skip the numpy/OpenBLAS comparison" },
    Flag { name: "no-sklearn", value: None, help: "skip the scikit-learn BernoulliRBM comparison" },
    Flag { name: "only", value: Some("PART"), help: "run one part: gemm, sparse or rbm (default: all)" },
    Flag { name: "quick", value: None, help: "fewer repetitions and shorter timings (smoke test)" },
];

const ABOUT: &str = "Benchmark the numeric kernels: GEMM GFLOPS per kernel on the network shapes, numpy/OpenBLAS\n\
single-thread ratio, the sparse 773-bit input layer against dense GEMM, and RBM CD-1 training\n\
against scikit-learn's BernoulliRBM.";

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
    super::args::median(&mut v)
}

/// Median over `reps` of (work units per second), each repetition running `f` for at least `min_s`.
fn rate(reps: usize, min_s: f64, units_per_call: f64, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: caches, buffers, page faults
    let mut rates = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        let mut calls = 0u64;
        while calls == 0 || t.elapsed().as_secs_f64() < min_s {
            f();
            calls += 1;
        }
        rates.push(units_per_call * calls as f64 / t.elapsed().as_secs_f64());
    }
    median(rates)
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
        "[--reps N] [--threads T] [--no-numpy] [--no-sklearn] [--only gemm|sparse|rbm] [--quick]",
        ABOUT,
        FLAGS,
    );
    let p = args::parse("bench-tensor", args, FLAGS, &help)?;
    let only = p.get("only");
    if let Some(o) = only {
        if !["gemm", "sparse", "rbm"].contains(&o) {
            return Err(CliError::Usage(format!("bench-tensor: --only takes gemm, sparse or rbm, not '{o}'\n\n{help}")));
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

/// scikit-learn's `BernoulliRBM.fit` with `n_iter=1` on `rows` random binary rows of the same
/// density, once per repetition (a fresh estimator each time), rows per second per shape.
/// `fit` includes its one-off set-up (input checks, drawing the initial weights): under 3 %
/// of a run here. Data are float32, which `BernoulliRBM` keeps (float64 measured slower).
const SKLEARN_SCRIPT: &str = r#"
import sys, time
import numpy as np
from sklearn.neural_network import BernoulliRBM
reps, rows, density, lr = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rng = np.random.default_rng(1)
for shape in sys.argv[5:]:
    v, h = (int(x) for x in shape.split(','))
    X = (rng.random((rows, v)) < density).astype(np.float32)
    rates = []
    for rep in range(reps + 1):
        m = BernoulliRBM(n_components=h, batch_size=32, learning_rate=lr, n_iter=1, random_state=rep)
        t = time.perf_counter()
        m.fit(X)
        if rep > 0:  # the first fit warms up
            rates.append(rows / (time.perf_counter() - t))
    rates.sort()
    print(rates[len(rates) // 2], flush=True)
"#;

/// sklearn rows/s per [`RBM_SHAPES`] entry with BLAS limited to `threads`, or why not.
fn sklearn_rates(reps: usize, rows: usize, threads: usize) -> Result<Vec<f64>, String> {
    use std::process::Command;
    match Command::new("python3").args(["-c", "import sklearn"]).output() {
        Ok(o) if o.status.success() => {}
        _ => {
            return Err("not importable by python3, anchor skipped (run 'make install-sklearn' to compare)".into())
        }
    }
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(SKLEARN_SCRIPT);
    cmd.args([reps.to_string(), rows.to_string(), RBM_DENSITY.to_string(), RBM_LR.to_string()]);
    cmd.args(RBM_SHAPES.iter().map(|(v, h)| format!("{v},{h}")));
    for var in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"] {
        cmd.env(var, threads.to_string());
    }
    let out = cmd.output().map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("scikit-learn benchmark failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let v: Vec<f64> = String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect();
    if v.len() != RBM_SHAPES.len() {
        return Err(format!("scikit-learn benchmark printed {} figures for {} shapes", v.len(), RBM_SHAPES.len()));
    }
    Ok(v)
}

/// Restricted Boltzmann machine CD-1 training, positions per second: one pass over `rows`
/// random binary rows (4 % ones) in batches of 32, per repetition, at 1 thread and at
/// `nthreads`; scikit-learn's BernoulliRBM on the same shapes and row count, same run.
fn rbm_bench(reps: usize, quick: bool, nthreads: usize, with_sklearn: bool, rng: &mut Rng) {
    let rows = if quick { 640 } else { 3200 };
    let thread_counts: Vec<usize> = if nthreads > 1 { vec![1, nthreads] } else { vec![1] };
    println!(
        "RBM CD-1 training, batch {RBM_BATCH}, {} % of inputs set, {rows} rows a pass (positions/s, median of {reps} passes)",
        RBM_DENSITY * 100.0
    );
    // sklearn at each thread count; its best is the anchor.
    let mut sk: Vec<Result<Vec<f64>, String>> = Vec::new();
    if with_sklearn {
        for &t in &thread_counts {
            let r = sklearn_rates(reps, rows, t);
            let skip = r.is_err();
            sk.push(r);
            if skip {
                break;
            }
        }
    } else {
        sk.push(Err("anchor skipped (--no-sklearn)".into()));
    }
    if let Some(Err(why)) = sk.first() {
        println!("scikit-learn: {why}");
    } else {
        println!("scikit-learn: BernoulliRBM.fit(n_iter=1), float32 input (PCD-1 with sampled negative visibles; same products per batch)");
    }
    let sk: Vec<Vec<f64>> = sk.into_iter().filter_map(|r| r.ok()).collect();
    let mut head = format!("{:<12}", "shape");
    for &t in &thread_counts {
        head += &format!(" {:>11}", format!("ours {t}thr"));
    }
    for &t in thread_counts.iter().take(sk.len()) {
        head += &format!(" {:>13}", format!("sklearn {t}thr"));
    }
    if !sk.is_empty() {
        head += &format!(" {:>17}", "best ours/sklearn");
    }
    println!("{head}");
    let saved = crate::tensor::threads();
    for (si, &(nv, nh)) in RBM_SHAPES.iter().enumerate() {
        let batches: Vec<Matrix> = (0..rows / RBM_BATCH)
            .map(|_| {
                let mut m = Matrix::zeros(RBM_BATCH, nv);
                m.data_mut().iter_mut().for_each(|x| *x = if rng.next_f64() < RBM_DENSITY { 1.0 } else { 0.0 });
                m
            })
            .collect();
        let mut line = format!("{:<12}", format!("{nv}→{nh}"));
        let mut ours: f64 = 0.0;
        for &t in &thread_counts {
            crate::tensor::set_threads(t);
            let mut rbm = Rbm::new(nv, nh, rng);
            let mut r = Rng::new(1);
            let v = rate(reps, 0.0, rows as f64, || {
                for b in &batches {
                    let _ = rbm.cd_k(b, 1, RBM_LR, &mut r);
                }
            });
            ours = ours.max(v);
            line += &format!(" {v:>11.0}");
        }
        let mut theirs: f64 = 0.0;
        for s in &sk {
            theirs = theirs.max(s[si]);
            line += &format!(" {:>13.0}", s[si]);
        }
        if !sk.is_empty() {
            line += &format!(" {:>16.2}×", ours / theirs);
        }
        println!("{line}");
    }
    crate::tensor::set_threads(saved);
}
