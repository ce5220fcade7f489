//! The CNN's part of `deepchess bench-tensor` (`--only conv`): the seed's two conv layers
//! and its max pool ([`Arch::SEED`]), at batch 1024 (training: forward + backward) and batch
//! 1 (one position per call, as a search evaluates), beside PyTorch on CPU with one thread
//! when `import torch` works (`make install-torch`), measured in the same run.

use super::model::Arch;
use crate::io::args::{rate, Flag};
use crate::tensor::layers::conv::{self, Conv2d};
use crate::tensor::layers::pool::{self, MaxPool2d};
use crate::tensor::{Init, Kernel, Matrix, Rng};
use crate::train::system::BenchPart;

/// `--only conv`, with its flag `--no-torch`.
pub const CONV: BenchPart = BenchPart {
    name: "conv",
    about: "convolution/pooling against PyTorch (1 thread)",
    flags: &[Flag { name: "no-torch", value: None, help: "skip the PyTorch comparison of the conv part" }],
    run: |a, rng| conv_bench(!a.parsed.has("no-torch"), a.reps, if a.quick { 0.02 } else { 0.1 }, a.threads, rng),
};

/// The seed's layers: 8×8×7 → 400 filters 4×4 (no input gradient: the first layer), and
/// the pooled 3×3×400 → 200 filters 2×2 (with it).
fn layers() -> [(String, Conv2d, bool); 2] {
    let name = |n: &str, s: &Conv2d| format!("{n} {}×{}×{}→{}@{}×{}", s.in_h, s.in_w, s.in_c, s.out_c, s.kh, s.kw);
    let (c1, c2) = (Arch::SEED.conv1_shape(), Arch::SEED.conv2_shape());
    [(name("conv1", &c1), c1, false), (name("conv2", &c2), c2, true)]
}
/// The seed's pooling between them: 5×5×400, 2×2 stride 2, ceil mode.
fn pool_shape() -> MaxPool2d {
    Arch::SEED.pool_shape()
}
const BATCH: usize = 1024;

/// PyTorch's side: one line per conv layer, `fwd fwd+bwd fwd@batch1` seconds per call
/// (medians), then the pool's `fwd fwd+bwd fwd@batch1`. NCHW float32 tensors (PyTorch's
/// native layout), one thread; the backward passes mirror ours (input gradient only where
/// ours computes one).
const TORCH_SCRIPT: &str = r#"
import sys, time
import torch
torch.set_num_threads(1)
reps = int(sys.argv[1]); min_s = float(sys.argv[2]); batch = int(sys.argv[3]); pool = sys.argv[4]
torch.manual_seed(1)
def median_time(f):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); calls = 0
        while calls == 0 or time.perf_counter() - t < min_s:
            f(); calls += 1
        ts.append((time.perf_counter() - t) / calls)
    ts.sort()
    return ts[len(ts) // 2]
def measure(layer, shape, dx):
    x = torch.randn(batch, *shape, requires_grad=dx)
    x1 = torch.randn(1, *shape)
    gy = torch.randn_like(layer(x))
    def fwd():
        with torch.no_grad(): layer(x)
    def fb():
        layer.zero_grad(set_to_none=False)
        layer(x).backward(gy)
    def fwd1():
        with torch.no_grad(): layer(x1)
    print(median_time(fwd), median_time(fb), median_time(fwd1), flush=True)
for spec in sys.argv[5:]:
    h, w, c, o, k, dx = (int(v) for v in spec.split(','))
    measure(torch.nn.Conv2d(c, o, k), (c, h, w), dx == 1)
# The pool: input gradient needed (it sits between two convolutions).
h, w, c, k, s, ceil = (int(v) for v in pool.split(','))
measure(torch.nn.MaxPool2d(k, s, ceil_mode=ceil == 1), (c, h, w), True)
"#;

/// PyTorch seconds per call, `[fwd, fwd+bwd, fwd@1]` per conv layer then the pool, or why not.
fn torch_times(reps: usize, min_s: f64) -> Result<Vec<[f64; 3]>, String> {
    use std::process::Command;
    match Command::new("python3").args(["-c", "import torch"]).output() {
        Ok(o) if o.status.success() => {}
        _ => return Err("torch is not importable by python3, anchor skipped (run 'make install-torch' to compare)".into()),
    }
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(TORCH_SCRIPT).arg(reps.to_string()).arg(min_s.to_string()).arg(BATCH.to_string());
    let p = pool_shape();
    cmd.arg(format!("{},{},{},{},{},{}", p.in_h, p.in_w, p.c, p.k, p.stride, p.ceil as u8));
    for (_, s, dx) in layers() {
        cmd.arg(format!("{},{},{},{},{},{}", s.in_h, s.in_w, s.in_c, s.out_c, s.kh, dx as u8));
    }
    for var in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"] {
        cmd.env(var, "1");
    }
    let out = cmd.output().map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("torch benchmark failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let v: Vec<[f64; 3]> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<f64> = l.split_whitespace().filter_map(|t| t.parse().ok()).collect();
            (f.len() == 3).then(|| [f[0], f[1], f[2]])
        })
        .collect();
    if v.len() != layers().len() + 1 {
        return Err(format!("torch benchmark printed {} lines for {} layers", v.len(), layers().len() + 1));
    }
    Ok(v)
}

fn random(rows: usize, cols: usize, rng: &mut Rng) -> Matrix {
    let mut m = Matrix::zeros(rows, cols);
    m.data_mut().iter_mut().for_each(|v| *v = rng.uniform(-1.0, 1.0));
    m
}

/// Ours beside PyTorch's, as `ours (ratio×)` when the anchor ran.
fn cell(ours: f64, theirs: Option<f64>, decimals: usize) -> String {
    match theirs {
        Some(t) => format!("{ours:>9.decimals$} ({:.2}×)", ours / t),
        None => format!("{ours:>9.decimals$}"),
    }
}

/// The conv table: per layer, GFLOPS and positions/s at 1 thread and `nthreads`, PyTorch
/// single-thread beside our single-thread figures.
fn conv_bench(with_torch: bool, reps: usize, min_s: f64, nthreads: usize, rng: &mut Rng) {
    let k = Kernel::best();
    println!("Convolution and pooling, seed 003's layers (kernel {}, median of {reps}; ratios: ours/PyTorch, both 1 thread)", k.name());
    let torch = if with_torch { torch_times(reps, min_s) } else { Err("anchor skipped (--no-torch)".into()) };
    match &torch {
        Ok(_) => println!("PyTorch: CPU, torch.set_num_threads(1), NCHW float32, same shapes and batch"),
        Err(why) => println!("PyTorch: {why}"),
    }
    let theirs = |row: usize, col: usize| torch.as_ref().ok().map(|t| t[row][col]);
    let threads: Vec<usize> = if nthreads > 1 { vec![1, nthreads] } else { vec![1] };
    for (li, (name, s, with_dx)) in layers().into_iter().enumerate() {
        let (wr, wc) = s.weight_shape();
        let x = random(BATCH, s.in_len(), rng);
        let x1 = random(1, s.in_len(), rng);
        let w = Init::HeNormal.matrix(wr, wc, rng);
        let b = random(1, wc, rng);
        let dy = random(BATCH, s.out_len(), rng);
        let (mut y, mut dw, mut db, mut dx) = (Matrix::default(), Matrix::zeros(wr, wc), Matrix::zeros(1, wc), Matrix::zeros(BATCH, s.in_len()));
        let gflop = s.flops() * BATCH as f64 / 1e9;
        let passes = if with_dx { 3.0 } else { 2.0 };
        println!("{name}: {:.2} GFLOP forward at batch {BATCH}; backward {}", gflop, if with_dx { "dW, db and dX" } else { "dW and db (no dX: first layer)" });
        for &t in &threads {
            let fwd = rate(reps, min_s, 1.0, || {
                let _ = conv::forward_with(k, t, &s, &x, &w, &b, &mut y);
            });
            let fb = rate(reps, min_s, 1.0, || {
                let _ = conv::forward_with(k, t, &s, &x, &w, &b, &mut y);
                let _ = conv::backward_with(k, t, &s, &x, &w, &dy, &mut dw, &mut db, if with_dx { Some(&mut dx) } else { None });
            });
            let f1 = rate(reps, min_s, 1.0, || {
                let _ = conv::forward_with(k, t, &s, &x1, &w, &b, &mut y);
            });
            let one = t == 1;
            println!(
                "  {t} thread(s): fwd {} GFLOPS   fwd+bwd {} GFLOPS {} pos/s   batch-1 fwd {} pos/s",
                cell(gflop * fwd, theirs(li, 0).filter(|_| one).map(|s| gflop / s), 1),
                cell(passes * gflop * fb, theirs(li, 1).filter(|_| one).map(|s| passes * gflop / s), 1),
                cell(BATCH as f64 * fb, theirs(li, 1).filter(|_| one).map(|s| BATCH as f64 / s), 0),
                cell(f1, theirs(li, 2).filter(|_| one).map(|s| 1.0 / s), 0),
            );
        }
    }
    // The pool is single-threaded (a few µs a position); the training form saves the argmax.
    let pool_s = pool_shape();
    let x = random(BATCH, pool_s.in_len(), rng);
    let x1 = random(1, pool_s.in_len(), rng);
    let dy = random(BATCH, pool_s.out_len(), rng);
    let (mut y, mut dx, mut arg) = (Matrix::default(), Matrix::zeros(BATCH, pool_s.in_len()), Vec::new());
    let fwd = rate(reps, min_s, BATCH as f64, || {
        let _ = pool::forward(&pool_s, &x, &mut y);
    });
    let fb = rate(reps, min_s, BATCH as f64, || {
        let _ = pool::forward_argmax(&pool_s, &x, &mut y, &mut arg);
        let _ = pool::backward(&pool_s, &arg, &dy, &mut dx);
    });
    let f1 = rate(reps, min_s, 1.0, || {
        let _ = pool::forward(&pool_s, &x1, &mut y);
    });
    let pi = layers().len();
    println!(
        "max pool {}×{}×{} k{} s{}{}→{}×{}: fwd {} pos/s   fwd+bwd {} pos/s   batch-1 fwd {} pos/s",
        pool_s.in_h,
        pool_s.in_w,
        pool_s.c,
        pool_s.k,
        pool_s.stride,
        if pool_s.ceil { " ceil" } else { "" },
        pool_s.out_h(),
        pool_s.out_w(),
        cell(fwd, theirs(pi, 0).map(|s| BATCH as f64 / s), 0),
        cell(fb, theirs(pi, 1).map(|s| BATCH as f64 / s), 0),
        cell(f1, theirs(pi, 2).map(|s| 1.0 / s), 0),
    );
    println!();
}
