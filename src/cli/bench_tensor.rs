//! `deepchess bench-tensor`: GFLOPS of each GEMM kernel on the systems' layer shapes
//! (`System::gemm_layers`) and 1024³, side by side with numpy/OpenBLAS single-thread when
//! numpy is importable, then the parts the systems bring (`System::bench_tensor`, in the
//! order of `SYSTEMS`: DeepChess's sparse input layer, the DBN's RBM training against
//! scikit-learn, the CNN's convolutions against PyTorch). Nothing here names a system.

use crate::io::args::{self, rate, CliError, Flag};
use crate::tensor::{gemm_with, Trans};
use crate::tensor::Kernel;
use crate::tensor::{Init, Matrix, Rng};
use crate::train::system::{BenchArgs, BenchPart};

/// The flags before those of the systems' parts (`SYSTEM.bench_tensor`), and after them.
const FLAGS: &[Flag] = &[
    Flag { name: "reps", value: Some("N"), help: "repetitions per figure; medians are quoted (default 7)" },
    Flag { name: "threads", value: Some("T"), help: "threads for the 'threaded' column (default: all cores)" },
    Flag { name: "no-numpy", value: None, help: "skip the numpy/OpenBLAS comparison" },
];
const FLAGS_END: &[Flag] = &[Flag { name: "quick", value: None, help: "fewer repetitions and shorter timings (smoke test)" }];

/// The description of the GEMM part, the systems' parts after it.
const ABOUT: &str = "Benchmark the numeric kernels: GEMM GFLOPS per kernel on the network shapes, numpy/OpenBLAS\n\
single-thread ratio";

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

/// The systems' layers at batch 256 (forward `X·W`, backward `dY·Wᵀ` and `Xᵀ·dY`), and 1024³.
fn shapes() -> Vec<Shape> {
    let layers: Vec<(usize, usize, String)> =
        crate::players::SYSTEMS.iter().flat_map(|s| s.gemm_layers.iter()).map(|&(i, o)| (i, o, format!("{i}-{o}"))).collect();
    let mut v = Vec::new();
    for (i, o, name) in &layers {
        let (i, o) = (*i, *o);
        v.push(Shape { label: leak(format!("fwd {name}   X·W")), ta: Trans::N, tb: Trans::N, m: 256, k: i, n: o });
    }
    for (i, o, name) in &layers {
        let (i, o) = (*i, *o);
        v.push(Shape { label: leak(format!("bwd {name} dY·Wᵀ")), ta: Trans::N, tb: Trans::T, m: 256, k: o, n: i });
    }
    for (i, o, name) in &layers {
        let (i, o) = (*i, *o);
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
    let parts: Vec<&str> = ["gemm"].into_iter().chain(system_parts().map(|b| b.name)).collect();
    let (last, firsts) = parts.split_last().expect("parts");
    let parts_text = format!("{} or {last}", firsts.join(", "));
    let only_help = leak(format!("run one part: {parts_text} (default: all)"));
    let mut flags: Vec<Flag> = FLAGS.iter().map(copy_flag).collect();
    flags.extend(system_parts().flat_map(|b| b.flags.iter()).map(copy_flag));
    flags.push(Flag { name: "only", value: Some("PART"), help: only_help });
    flags.extend(FLAGS_END.iter().map(copy_flag));
    let own: String = system_parts().flat_map(|b| b.flags.iter()).map(|f| format!(" [--{}{}]", f.name, f.value.map_or(String::new(), |v| format!(" {v}")))).collect();
    let synopsis = format!("[--reps N] [--threads T] [--no-numpy]{own} [--only {}] [--quick]", parts.join("|"));
    let abouts: Vec<&str> = system_parts().map(|b| b.about).collect();
    let about = match abouts.split_last() {
        None => format!("{ABOUT}."),
        Some((last, [])) => format!("{ABOUT} and {last}."),
        Some((last, firsts)) => format!("{ABOUT}, {}, and {last}.", firsts.join(", ")),
    };
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
    let mut rng = Rng::new(7);
    if part("gemm") {
        gemm_bench(!p.has("no-numpy"), reps, min_s, nthreads, &mut rng);
    }
    let part_args = BenchArgs { reps, quick, threads: nthreads, parsed: &p };
    for b in system_parts() {
        if part(b.name) {
            (b.run)(&part_args, &mut rng);
        }
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
