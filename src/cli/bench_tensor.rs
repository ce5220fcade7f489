//! `deepchess bench-tensor`: GFLOPS of each GEMM kernel on the networks' real shapes
//! (and 1024³), side by side with numpy/OpenBLAS single-thread when numpy is
//! importable, plus the sparse input layer against the dense GEMM doing the same work, the
//! parts the systems bring (`System::bench_tensor`: the DBN's RBM training against
//! scikit-learn), and seed 003's convolution and pooling layers against PyTorch on one
//! thread when torch is importable ([`super::bench_conv`]).

use crate::io::args::{self, rate, CliError, Flag};
use crate::tensor::{gemm_with, Trans};
use crate::tensor::Kernel;
use crate::tensor::layers::sparse::{self, SparseBatch};
use crate::tensor::{Init, Matrix, Rng};
use crate::train::system::{BenchArgs, BenchPart};

/// The flags before and after those of the systems' parts (`SYSTEM.bench_tensor`).
const FLAGS: &[Flag] = &[
    Flag { name: "reps", value: Some("N"), help: "repetitions per figure; medians are quoted (default 7)" },
    Flag { name: "threads", value: Some("T"), help: "threads for the 'threaded' column (default: all cores)" },
    Flag { name: "no-numpy", value: None, help: "skip the numpy/OpenBLAS comparison" },
];
const FLAGS_END: &[Flag] = &[
    Flag { name: "no-torch", value: None, help: "skip the PyTorch comparison of the conv part" },
    Flag { name: "quick", value: None, help: "fewer repetitions and shorter timings (smoke test)" },
];

/// The description, the systems' parts between its two halves.
const ABOUT: &str = "Benchmark the numeric kernels: GEMM GFLOPS per kernel on the network shapes, numpy/OpenBLAS\n\
single-thread ratio, the sparse 773-bit input layer against dense GEMM, ";
const ABOUT_END: &str = "convolution/pooling against PyTorch (1 thread).";

/// The parts of bench-tensor the systems bring, in the order of `SYSTEMS`.
fn system_parts() -> impl Iterator<Item = &'static BenchPart> {
    crate::players::SYSTEMS.iter().flat_map(|s| s.bench_tensor.iter())
}

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

fn copy_flag(f: &Flag) -> Flag {
    Flag { name: f.name, value: f.value, help: f.help }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
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
    let parts: Vec<&str> = ["gemm", "sparse"].into_iter().chain(system_parts().map(|b| b.name)).chain(["conv"]).collect();
    let (last, firsts) = parts.split_last().expect("parts");
    let parts_text = format!("{} or {last}", firsts.join(", "));
    let only_help = leak(format!("run one part: {parts_text} (default: all)"));
    let mut flags: Vec<Flag> = FLAGS.iter().map(copy_flag).collect();
    flags.extend(system_parts().flat_map(|b| b.flags.iter()).map(copy_flag));
    flags.extend(FLAGS_END[..1].iter().map(copy_flag));
    flags.push(Flag { name: "only", value: Some("PART"), help: only_help });
    flags.extend(FLAGS_END[1..].iter().map(copy_flag));
    let own: String = system_parts().flat_map(|b| b.flags.iter()).map(|f| format!(" [--{}{}]", f.name, f.value.map_or(String::new(), |v| format!(" {v}")))).collect();
    let synopsis = format!("[--reps N] [--threads T] [--no-numpy]{own} [--no-torch] [--only {}] [--quick]", parts.join("|"));
    let about: String = system_parts().map(|b| format!("{}, ", b.about)).collect();
    let about = format!("{ABOUT}{about}and {ABOUT_END}");
    let help = args::usage("bench-tensor", &synopsis, &about, &flags);
    let p = args::parse("bench-tensor", args, &flags, &help)?;
    let only = p.get("only");
    if let Some(o) = only {
        if !parts.contains(&o) {
            return Err(CliError::Usage(format!("bench-tensor: --only takes {parts_text}, not '{o}'\n\n{help}")));
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
    let part_args = BenchArgs { reps, quick, threads: nthreads, parsed: &p };
    for b in system_parts() {
        if part(b.name) {
            (b.run)(&part_args, &mut rng);
        }
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
