//! `deepchess bench-train`: DeepChess training throughput, the step the trainer runs
//! (`deepchess::step`: `PairStep`, `FirstLayerStep`), beside JAX training the same network
//! at the same batch on the same CPU, measured in the same run, interleaved round by round
//! (JAX stays loaded in one Python process that times a phase when asked). Each figure is
//! also given as a fraction of the machine's FMA peak, measured in the run. Both sides
//! also time each chunk of 8 steps, so that a second table compares them on the stretches
//! the host's other work left alone (its figures move by ±20 % between runs).
//!
//! Phase 2 is the paper's Siamese step: two tied 773-600-400-200-100 towers, 400-200-100-2
//! head, softmax cross-entropy, SGD. Phase 1 is Pos2Vec's first autoencoder (773-600-773,
//! sigmoid and binary cross-entropy). JAX computes the first layer densely (its inputs are
//! dense 0/1 rows); ours reads the ~30 set bits of each position.

use crate::io::args::{self, CliError, Flag};
use crate::chess::Position;
use crate::deepchess::features::{Features, INPUTS};
use crate::deepchess::model::{batch_of, Arch, Net};
use crate::deepchess::pairs::{pair_batch, Pools};
use crate::deepchess::step::{FirstLayerStep, PairStep, SHARDS};
use crate::tensor::kernels::peak::fma_peak_gflops;
use crate::tensor::{with_precision, Init, Matrix, Optimizer, Params, Precision, Rng, Sgd, SparseBatch};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use crate::train::system;
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "seconds", value: Some("S"), help: "time per figure per round (default 3)" },
    Flag { name: "rounds", value: Some("N"), help: "interleaved rounds, ours then JAX; medians are quoted (default 5)" },
    Flag { name: "batch", value: Some("N"), help: "pairs (phase 2) or positions (phase 1) per step (default 256)" },
    Flag { name: "threads", value: Some("T"), help: "threads of our numeric kernels (default all cores)" },
    Flag { name: "phase", value: Some("1|2|both"), help: "which phase to time (default both)" },
    Flag { name: "no-jax", value: None, help: "skip the JAX anchor" },
    Flag { name: "precision", value: Some("P"), help: "products in f32 (default), bf16 (bf16 operands, f32 sums: the opt-in mixed precision of train --precision bf16, JAX likewise) or both" },
    Flag { name: "breakdown", value: None, help: "also time the parts of our phase-2 step (pair drawing, forward, backward, optimizer)" },
];

const ABOUT: &str = "Training throughput of DeepChess's two phases (pairs/s, positions/s) beside JAX on the same\n\
network and batch, as a ratio measured in the same run, and as a fraction of the FMA peak.\n\
JAX is optional: 'make install-jax' installs it; without it the anchor is skipped with a message.";

/// JAX's side: compiles both phases' steps, prints `ready`, then for each line `p1 S` or
/// `p2 S` on stdin trains that phase for about S seconds and prints its rate.
const JAX_SCRIPT: &str = r#"
import sys, time
import numpy as np
import jax, jax.numpy as jnp
batch = int(sys.argv[1])
tower = [int(v) for v in sys.argv[2].split('-')]
head = [2 * tower[-1]] + [int(v) for v in sys.argv[3].split('-')]
active = int(sys.argv[4])
CHUNK = int(sys.argv[5])
def dense(key, sizes):
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        out.append((jax.random.normal(k, (a, b)) * np.sqrt(2.0 / a), jnp.zeros(b)))
    return out
def losses(bf):
    # bf: the products' operands in bf16, their sums in f32 (as ours with --precision bf16).
    def mm(x, w):
        if bf:
            return jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), preferred_element_type=jnp.float32)
        return x @ w
    def tower_f(tw, x):
        for w, b in tw:
            x = jax.nn.relu(mm(x, w) + b)
        return x
    def pair_loss(p, xa, xb, y):
        tw, hd = p
        h = jnp.concatenate([tower_f(tw, xa), tower_f(tw, xb)], axis=1)
        for i, (w, b) in enumerate(hd):
            h = mm(h, w) + b
            if i + 1 < len(hd):
                h = jax.nn.relu(h)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h), axis=1))
    def ae_loss(p, x):
        (w1, b1), (w2, b2) = p
        z = mm(jax.nn.relu(mm(x, w1) + b1), w2) + b2
        # Binary cross-entropy of sigmoid(z) against the bits, in the stable form.
        return jnp.mean(jnp.sum(jnp.maximum(z, 0) - z * x + jnp.log1p(jnp.exp(-jnp.abs(z))), axis=1))
    return pair_loss, ae_loss
def sgd(loss):
    def step(p, *args):
        l, g = jax.value_and_grad(loss)(p, *args)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), l
    return jax.jit(step)
rng = np.random.default_rng(1)
def bits(n):
    x = np.zeros((n, tower[0]), np.float32)
    for i in range(n):
        x[i, rng.choice(tower[0], active, replace=False)] = 1.0
    return jnp.asarray(x)
pairs = [(bits(batch), bits(batch), jnp.asarray(np.eye(2, dtype=np.float32)[rng.integers(0, 2, batch)])) for _ in range(8)]
positions = [(bits(batch),) for _ in range(8)]
key = jax.random.PRNGKey(0)
phases = {}
for suffix, bf in [('', False), ('b', True)]:
    pair_loss, ae_loss = losses(bf)
    phases['p2' + suffix] = [sgd(pair_loss), (dense(key, tower), dense(key, head)), pairs]
    phases['p1' + suffix] = [sgd(ae_loss), dense(key, [tower[0], tower[1], tower[0]]), positions]
for ph in phases.values():
    ph[1], l = ph[0](ph[1], *ph[2][0])
    l.block_until_ready()
print('ready', jax.__version__, flush=True)
for line in sys.stdin:
    name, secs = line.split()
    step, p, data = phases[name]
    # Chunks of CHUNK steps, each waited for: the rate of each chunk as well as the whole.
    t = time.perf_counter(); n = 0; chunks = []
    while n == 0 or time.perf_counter() - t < float(secs):
        c = time.perf_counter()
        for _ in range(CHUNK):
            p, l = step(p, *data[n % 8]); n += 1
        l.block_until_ready()
        chunks.append(batch * CHUNK / (time.perf_counter() - c))
    phases[name][1] = p
    print(batch * n / (time.perf_counter() - t), *chunks, flush=True)
"#;

/// The JAX process, loaded and compiled, waiting for `p1 S` / `p2 S`.
struct Jax {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    version: String,
}

impl Jax {
    fn start(batch: usize, arch: &Arch, active: usize) -> Result<Jax, String> {
        match Command::new("python3").args(["-c", "import jax"]).stderr(Stdio::null()).output() {
            Ok(o) if o.status.success() => {}
            _ => return Err("JAX is not importable by python3, anchor skipped (run 'make install-jax' to compare)".into()),
        }
        let join = |v: &[usize]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("-");
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(JAX_SCRIPT)
            .args([batch.to_string(), join(&arch.tower), join(&arch.head), active.to_string(), CHUNK.to_string()])
            .env("JAX_PLATFORMS", "cpu")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run python3: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin to the JAX process")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout from the JAX process")?);
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| format!("reading the JAX process: {e}"))?;
        let version = line.trim().strip_prefix("ready ").ok_or("the JAX script failed before it was ready (run it by hand to see why)")?.to_string();
        Ok(Jax { child, stdin, stdout, version })
    }

    /// JAX's rate on phase `name` over about `secs` seconds, and its rate on quiet
    /// stretches ([`quiet`] of its chunks' rates).
    fn rate(&mut self, name: &str, secs: f64) -> Result<Rate, String> {
        writeln!(self.stdin, "{name} {secs}").map_err(|e| format!("writing to the JAX process: {e}"))?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| format!("reading the JAX process: {e}"))?;
        let bad = || format!("the JAX process answered '{}'", line.trim());
        let v: Vec<f64> = line.split_whitespace().map(|x| x.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
        match v.split_first() {
            Some((&whole, chunks)) if !chunks.is_empty() => Ok(Rate { whole, quiet: quiet(chunks) }),
            _ => Err(bad()),
        }
    }
}

impl Drop for Jax {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// W and L pools of positions from random games (10 to 90 plies of random legal moves),
/// so the sparse layer sees real piece counts; labels are random. The same every run.
fn synthetic_pools(games: usize) -> Pools {
    let mut rng = Rng::new(29);
    let mut pools = Pools::default();
    for g in 0..games {
        let mut pos = Position::startpos();
        let plies = 10 + rng.below(80) as usize;
        for ply in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play(moves.as_slice()[rng.below(moves.len() as u64) as usize]);
            if ply >= 10 {
                let f = Features::from_position(&pos);
                if g % 2 == 0 { pools.w.push(f) } else { pools.l.push(f) }
            }
        }
    }
    pools
}

/// The median of a copy of `v` (the figures keep their round order).
fn median(v: &[f64]) -> f64 {
    args::median(&mut v.to_vec())
}

/// `median [min, max]`.
fn spread(v: &[f64], decimals: usize) -> String {
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    format!("{:.decimals$} [{lo:.decimals$}, {hi:.decimals$}]", median(v))
}

/// Steps per chunk in [`timed_chunks`] and in the JAX script: each chunk's rate is taken
/// too, so the figures can also be compared on the stretches the host left alone.
const CHUNK: usize = 8;

/// A side's figure for one round: samples per second over the whole round, and on its
/// quiet stretches.
#[derive(Clone, Copy)]
struct Rate {
    whole: f64,
    quiet: f64,
}

/// The rate of the quiet stretches: the 90th percentile of the chunks' rates (the host's
/// other work slows some chunks down; none can run faster than the code does alone).
fn quiet(chunks: &[f64]) -> f64 {
    let mut v = chunks.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v[(v.len() - 1) * 9 / 10]
}

/// Calls `f` (one step of `units` samples) in chunks of [`CHUNK`] steps for about `secs`
/// seconds (after one call to warm up): samples per second over all of them, and on the
/// quiet stretches.
fn timed_chunks(secs: f64, units: usize, mut f: impl FnMut()) -> Rate {
    f();
    let t = Instant::now();
    let mut chunks = Vec::new();
    while chunks.is_empty() || t.elapsed().as_secs_f64() < secs {
        let c = Instant::now();
        for _ in 0..CHUNK {
            f();
        }
        chunks.push((CHUNK * units) as f64 / c.elapsed().as_secs_f64());
    }
    Rate { whole: (chunks.len() * CHUNK * units) as f64 / t.elapsed().as_secs_f64(), quiet: quiet(&chunks) }
}

/// [`timed_chunks`]'s rate over all the steps.
fn timed(secs: f64, units: usize, f: impl FnMut()) -> f64 {
    timed_chunks(secs, units, f).whole
}

/// Multiply-adds per sample of a phase: (ours, JAX's), forward + backward. Dense layers
/// cost three products (forward, dW, dX); first layers two (no dX: inputs are data).
fn macs(arch: &Arch, phase: &str, active: f64) -> (f64, f64) {
    let t = &arch.tower;
    let first_dense = (t[0] * t[1]) as f64;
    let first_sparse = active * t[1] as f64;
    match phase {
        "p2" => {
            let tower: f64 = t[1..].windows(2).map(|w| (w[0] * w[1]) as f64).sum();
            let mut head = 0.0;
            let mut n_in = 2 * arch.features();
            for &n in &arch.head {
                head += (n_in * n) as f64;
                n_in = n;
            }
            let dense = 3.0 * (2.0 * tower + head);
            (dense + 2.0 * 2.0 * first_sparse, dense + 2.0 * 2.0 * first_dense)
        }
        _ => {
            // The decoder is dense on both sides; the sigmoid and BCE are not counted.
            let dec = 3.0 * first_dense;
            (dec + 2.0 * first_sparse, dec + 2.0 * first_dense)
        }
    }
}

/// `deepchess bench-train`, a benchmark of DeepChess (`SYSTEM.commands`).
pub const COMMAND: system::Command = system::Command {
    name: "bench-train",
    synopsis: "[--rounds N]",
    about: "DeepChess training pairs/s beside JAX (if present) and the FMA peak",
    run,
};

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let help = args::usage("bench-train", "[--seconds S] [--rounds N] [--batch N] [--threads T] [--phase 1|2|both] [--precision f32|bf16|both] [--no-jax] [--breakdown]", ABOUT, FLAGS);
    let p = args::parse("bench-train", argv, FLAGS, &help)?;
    let secs: f64 = p.get_or("bench-train", "seconds", 3.0)?;
    let rounds: usize = p.get_or("bench-train", "rounds", 5)?;
    let batch: usize = p.get_or("bench-train", "batch", 256)?;
    let threads: usize = p.get_or("bench-train", "threads", crate::tensor::threads())?;
    if !(secs > 0.0 && secs.is_finite()) || rounds == 0 || batch == 0 || threads == 0 {
        return Err(CliError::Usage(format!("bench-train: --seconds, --rounds, --batch and --threads must be positive\n\n{help}")));
    }
    let phases: Vec<&str> = match p.get("phase").unwrap_or("both") {
        "1" => vec!["p1"],
        "2" => vec!["p2"],
        "both" => vec!["p2", "p1"],
        o => return Err(CliError::Usage(format!("bench-train: --phase takes 1, 2 or both, not '{o}'\n\n{help}"))),
    };
    let precisions: &[bool] = match p.get("precision").unwrap_or("f32") {
        "f32" => &[false],
        "bf16" => &[true],
        "both" => &[false, true],
        o => return Err(CliError::Usage(format!("bench-train: --precision takes f32, bf16 or both, not '{o}'\n\n{help}"))),
    };
    // Each figure: a phase and whether our products are in bf16 (JAX's always in f32).
    let phases: Vec<(&str, bool)> = phases.iter().flat_map(|&ph| precisions.iter().map(move |&bf| (ph, bf))).collect();
    crate::tensor::set_threads(threads);
    let kernel = crate::tensor::active_kernel();
    let arch = Arch::big();
    let pools = synthetic_pools(400);
    let active = pools.w.iter().chain(&pools.l).map(|f| f.as_slice().len()).sum::<usize>() as f64 / pools.len() as f64;
    let peak = fma_peak_gflops(kernel, threads, 1.0);
    println!("DeepChess training step, batch {batch}, {threads} thread(s), {} kernel; {active:.1} set bits per position", kernel.name());
    println!("FMA peak of this machine now, {threads} thread(s): {peak:.0} GFLOPS (a register-only FMA loop)");
    if precisions.contains(&true) {
        let how = match crate::tensor::kernels::gemm::bf16_path(kernel) {
            p if p.starts_with("AMX") => format!("{p}, 16 × 16 f32 sums of 32 bf16 products each per instruction (DEEPCHESS_AMX=off: the vector kernels)"),
            p if p.starts_with("AVX-512") => format!("{p}, two multiply-adds per f32 lane and instruction"),
            p => format!("no bf16 instructions here: {p}"),
        };
        println!("bf16 products: {how}; % of peak is quoted against the f32 FMA peak");
    }
    let mut jax = if p.has("no-jax") { Err("anchor skipped (--no-jax)".to_string()) } else { Jax::start(batch, &arch, active.round() as usize) };
    match &jax {
        Ok(j) => println!("JAX {} on CPU (XLA's own threads), same network and batch, dense first layer, SGD", j.version),
        Err(why) => println!("JAX: {why}"),
    }

    // Our two steps, each with its own state (the training loop's buffers); the precision
    // of their products is set around each figure, as a training stage sets it.
    let mut rng = Rng::new(5);
    let mut net = Net::new(arch.clone(), &mut rng);
    let mut opt2 = Sgd::new(0.01);
    let (mut stepper, mut xa, mut xb, mut labels) = (PairStep::new(), SparseBatch::new(INPUTS), SparseBatch::new(INPUTS), Vec::new());
    let mut target = Matrix::zeros(batch, 2);
    let mut draw = Rng::new(6);
    let mut step2 = || {
        pair_batch(&pools, &mut draw, batch, &mut xa, &mut xb, &mut labels);
        target.resize_zeroed(batch, 2);
        for (i, &l) in labels.iter().enumerate() {
            target.set(i, l, 1.0);
        }
        stepper.step(&mut net, &xa, &xb, &target, &labels, &mut opt2).expect("shapes are the net's own");
    };
    let mut ae = Params::new();
    let ids = [
        ae.add("enc.w", Init::HeNormal.matrix(INPUTS, arch.tower[1], &mut rng)).expect("new name"),
        ae.add("enc.b", Matrix::zeros(1, arch.tower[1])).expect("new name"),
        ae.add("dec.w", Init::XavierUniform.matrix(arch.tower[1], INPUTS, &mut rng)).expect("new name"),
        ae.add("dec.b", Matrix::zeros(1, INPUTS)).expect("new name"),
    ];
    let mut opt1 = Sgd::new(0.01);
    let (mut first, mut x1, mut rows) = (FirstLayerStep::new(), SparseBatch::new(INPUTS), Vec::new());
    let mut draw1 = Rng::new(7);
    let all: Vec<&Features> = pools.w.iter().chain(&pools.l).collect();
    let mut step1 = || {
        rows.clear();
        rows.extend((0..batch).map(|_| all[draw1.below(all.len() as u64) as usize].as_slice()));
        batch_of(&rows, &mut x1);
        first.step(&mut ae, ids, &x1, &mut opt1).expect("shapes are the autoencoder's own");
    };

    let mut ours: Vec<Vec<Rate>> = vec![Vec::new(); phases.len()];
    let mut theirs: Vec<Vec<Rate>> = vec![Vec::new(); phases.len()];
    let mut peaks = vec![peak];
    for round in 0..rounds {
        for (pi, &(ph, bf16)) in phases.iter().enumerate() {
            // A pause before each figure: the other side's threads may still be spinning
            // down (XLA's pool waits actively for a while after its work).
            std::thread::sleep(std::time::Duration::from_millis(300));
            let precision = if bf16 { Precision::Bf16 } else { Precision::F32 };
            let r = with_precision(precision, || if ph == "p2" { timed_chunks(secs, batch, &mut step2) } else { timed_chunks(secs, batch, &mut step1) });
            ours[pi].push(r);
            if let Ok(j) = jax.as_mut() {
                std::thread::sleep(std::time::Duration::from_millis(300));
                match j.rate(&format!("{ph}{}", if bf16 { "b" } else { "" }), secs) {
                    Ok(t) => theirs[pi].push(t),
                    Err(e) => {
                        println!("JAX: {e}; anchor dropped");
                        jax = Err(e);
                    }
                }
            }
        }
        eprint!("\rround {}/{rounds}", round + 1);
    }
    eprintln!();
    peaks.push(fma_peak_gflops(kernel, threads, 1.0));
    let peak = median(&peaks);
    println!("FMA peak again after the rounds: {:.0} GFLOPS; quoted against {peak:.0}", peaks[1]);
    println!();
    report(&arch, &phases, &ours, &theirs, peak, active);
    if p.has("breakdown") && phases.iter().any(|&(ph, _)| ph == "p2") {
        let peak1 = fma_peak_gflops(kernel, 1, 1.0);
        for &bf in precisions {
            let precision = if bf { Precision::Bf16 } else { Precision::F32 };
            with_precision(precision, || breakdown(&arch, &pools, batch, secs, threads, peak1, macs(&arch, "p2", active).0, precision));
        }
    }
    Ok(())
}

/// The table of the rounds: each figure's rate on both sides, their ratio and their share
/// of the FMA peak, for whole rounds and for their quiet stretches.
fn report(arch: &Arch, phases: &[(&str, bool)], ours: &[Vec<Rate>], theirs: &[Vec<Rate>], peak: f64, active: f64) {
    // The whole rounds (the figure quoted), then their quiet stretches.
    for (i, (title, pick)) in [("phase (median [min, max] of rounds)", (|r: &Rate| r.whole) as fn(&Rate) -> f64), ("quiet stretches (90th pct of chunks)", |r: &Rate| r.quiet)].into_iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("{title:<36} {:>26} {:>26} {:>18} {:>9} {:>9}", "ours /s", "JAX /s", "ours/JAX", "ours %pk", "JAX %pk");
        for (pi, &(ph, bf16)) in phases.iter().enumerate() {
            let (m_ours, m_jax) = macs(arch, ph, active);
            let name = match (ph, bf16) {
                ("p2", false) => "2: DeepChess pairs (Siamese)",
                ("p2", true) => "2: DeepChess pairs, bf16 products",
                (_, false) => "1: Pos2Vec 773-600-773 positions",
                (_, true) => "1: Pos2Vec positions, bf16 products",
            };
            let (o, t): (Vec<f64>, Vec<f64>) = (ours[pi].iter().map(pick).collect(), theirs[pi].iter().map(pick).collect());
            let pct = |rate: f64, m: f64| 100.0 * rate * 2.0 * m / 1e9 / peak;
            let (jcol, ratio, jpk) = if t.len() == o.len() {
                let ratios: Vec<f64> = o.iter().zip(&t).map(|(a, b)| a / b).collect();
                (spread(&t, 0), format!("{}×", spread(&ratios, 2)), format!("{:.0}%", pct(median(&t), m_jax)))
            } else {
                ("-".into(), "-".into(), "-".into())
            };
            println!("{name:<36} {:>26} {jcol:>26} {ratio:>18} {:>8.0}% {jpk:>9}", spread(&o, 0), pct(median(&o), m_ours));
        }
    }
    // Ours in bf16 against JAX in f32 (its default), round by round, when both were taken.
    for (pi, &(ph, bf16)) in phases.iter().enumerate() {
        let f32_row = phases.iter().position(|&q| q == (ph, false));
        if let (true, Some(fi)) = (bf16, f32_row) {
            if theirs[fi].len() == ours[pi].len() {
                let r: Vec<f64> = ours[pi].iter().zip(&theirs[fi]).map(|(a, b)| a.whole / b.whole).collect();
                println!("ours with bf16 products against JAX in f32, phase {}: {}×", &ph[1..], spread(&r, 2));
            }
        }
    }
    if phases.iter().any(|&(_, bf16)| bf16) {
        println!("(bf16 rows: both sides' products take bf16 operands and sum in f32; weights, activations and the optimizer stay f32)");
    }
    println!("(% of peak counts each side's own arithmetic: ours reads the set bits of the first layer, JAX multiplies all 773 inputs;");
    println!(" a quiet stretch is a chunk of {CHUNK} steps, waited for on both sides, at the 90th percentile of a round's chunk rates)");
}

/// Where a phase-2 step's time goes: pair drawing and the optimizer step timed alone, and
/// the whole step on one thread and on `threads` (their ratio is what the threads bring).
#[allow(clippy::too_many_arguments)]
fn breakdown(arch: &Arch, pools: &Pools, batch: usize, secs: f64, threads: usize, peak1: f64, m_ours: f64, precision: Precision) {
    let mut rng = Rng::new(5);
    let mut net = Net::new(arch.clone(), &mut rng);
    let (mut stepper, mut xa, mut xb, mut labels) = (PairStep::new(), SparseBatch::new(INPUTS), SparseBatch::new(INPUTS), Vec::new());
    let mut draw = Rng::new(6);
    let ms = |rate: f64| 1000.0 * batch as f64 / rate;
    let t_draw = ms(timed(secs, batch, || pair_batch(pools, &mut draw, batch, &mut xa, &mut xb, &mut labels)));
    let mut target = Matrix::zeros(batch, 2);
    for (i, &l) in labels.iter().enumerate() {
        target.set(i, l, 1.0);
    }
    let mut opt = Sgd::new(0.0);
    let t_opt = ms(timed(secs, batch, || opt.step(&mut net.params)));
    // Each run's rate and its join: the workers' wait at the steps' ends, ms per step.
    let mut whole = |t: usize| {
        crate::tensor::set_threads(t);
        let mut steps = 0usize;
        stepper.take_idle();
        let r = timed(secs, batch, || {
            stepper.step(&mut net, &xa, &xb, &target, &labels, &mut opt).expect("shapes are the net's own");
            steps += 1;
        });
        crate::tensor::set_threads(threads);
        (r, 1000.0 * stepper.take_idle().as_secs_f64() / steps.max(1) as f64)
    };
    let ((r1, _), (rt, join)) = (whole(1), whole(threads));
    let parts = parts_on_one_thread(arch, pools, batch, secs);
    println!();
    println!("phase 2, our step's parts, {} products (ms per batch of {batch} pairs):", precision.name());
    println!("  pair drawing and batch encoding          {t_draw:>7.3}");
    println!("  optimizer step (SGD, one thread)         {t_opt:>7.3}");
    println!(
        "  whole step on 1 thread                   {:>7.3}  ({:.0}% of one core's peak, {peak1:.0} GFLOPS)",
        ms(r1),
        100.0 * r1 * 2.0 * m_ours / 1e9 / peak1
    );
    println!("  whole step on {threads} threads                  {:>7.3}  ({:.2}× the 1-thread step)", ms(rt), rt / r1);
    println!(
        "    of which the join (workers waiting at the step's end, summed)  {join:>7.3}  ({:.1}% of the {threads} workers' time)",
        100.0 * join / (threads as f64 * ms(rt))
    );
    println!("the same step's products timed alone on one thread, at its shapes ({} shards of {} pairs; ms per batch):", SHARDS, batch.div_ceil(SHARDS));
    let mut sum = 0.0;
    for (name, t, gflops) in &parts {
        println!("  {name:<40} {t:>7.3}  ({gflops:.0} GFLOPS)");
        sum += t;
    }
    println!("  rest of the 1-thread step (activations, loss, copies, zeroing, sums, optimizer) {:>7.3}", ms(r1) - sum);
}

/// The products of a phase-2 step, each timed alone on one thread at the shapes one shard
/// runs (both towers stacked), times the shards: (what, ms per batch, GFLOPS).
fn parts_on_one_thread(arch: &Arch, pools: &Pools, batch: usize, secs: f64) -> Vec<(String, f64, f64)> {
    use crate::tensor::{gemm_with, Trans};
    let kernel = crate::tensor::active_kernel();
    let pairs = batch.div_ceil(SHARDS);
    let mut rng = Rng::new(8);
    let mut x = SparseBatch::new(INPUTS);
    let rows: Vec<&[u16]> = pools.w.iter().chain(&pools.l).take(2 * pairs).map(|f| f.as_slice()).collect();
    batch_of(&rows, &mut x);
    let t = &arch.tower;
    let w1 = Init::HeNormal.matrix(t[0], t[1], &mut rng);
    let b1 = Matrix::zeros(1, t[1]);
    let (mut y1, mut dw1, mut db1) = (Matrix::default(), Matrix::zeros(t[0], t[1]), Matrix::zeros(1, t[1]));
    let dy1 = Init::HeNormal.matrix(2 * pairs, t[1], &mut rng);
    let per_call = |f: &mut dyn FnMut()| 1000.0 * SHARDS as f64 / timed(secs / 4.0, 1, f);
    let mut out = Vec::new();
    let sparse_fwd = per_call(&mut || crate::tensor::layers::sparse::forward_with(kernel, 1, &x, &w1, &b1, &mut y1).expect("shapes"));
    let sparse_bwd = per_call(&mut || crate::tensor::layers::sparse::backward_with(kernel, 1, &x, &dy1, &mut dw1, &mut db1).expect("shapes"));
    let active = x.nnz() as f64 * t[1] as f64 * 2.0 * 2.0 * SHARDS as f64 / 1e9;
    out.push((format!("sparse layer {}-{}, forward + dW", t[0], t[1]), sparse_fwd + sparse_bwd, active / ((sparse_fwd + sparse_bwd) / 1000.0)));
    // Dense layers: (part, rows, in, out). Every one needs dX: the first head layer's feeds
    // the towers, the first dense tower layer's the sparse layer's dW.
    let mut layers: Vec<(&str, usize, usize, usize)> = t[1..].windows(2).map(|w| ("tower", 2 * pairs, w[0], w[1])).collect();
    let mut n_in = 2 * arch.features();
    for &n in &arch.head {
        layers.push(("head", pairs, n_in, n));
        n_in = n;
    }
    for (part, m, k, n) in layers {
        let a = Init::HeNormal.matrix(m, k, &mut rng);
        let w = Init::HeNormal.matrix(k, n, &mut rng);
        let g = Init::HeNormal.matrix(m, n, &mut rng);
        let (mut y, mut dw, mut da) = (Matrix::zeros(m, n), Matrix::zeros(k, n), Matrix::zeros(m, k));
        let ms = per_call(&mut || {
            gemm_with(kernel, 1, Trans::N, Trans::N, 1.0, &a, &w, 0.0, &mut y).expect("shapes");
            gemm_with(kernel, 1, Trans::T, Trans::N, 1.0, &a, &g, 1.0, &mut dw).expect("shapes");
            gemm_with(kernel, 1, Trans::N, Trans::T, 1.0, &g, &w, 1.0, &mut da).expect("shapes");
        });
        let gflop = 2.0 * (m * k * n) as f64 * 3.0 * SHARDS as f64 / 1e9;
        out.push((format!("{part} {k}-{n} ({m} rows): X·W, Xᵀ·G, G·Wᵀ"), ms, gflop / (ms / 1000.0)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::quiet;

    #[test]
    fn quiet_is_the_90th_percentile_of_the_chunks_whatever_their_order() {
        let v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        assert_eq!(quiet(&v), 9.0);
        assert_eq!(quiet(&[3.0]), 3.0);
        assert_eq!(quiet(&[2.0, 1.0]), 1.0);
        let many: Vec<f64> = (0..21).map(|i| f64::from((i * 5) % 21)).collect();
        assert_eq!(quiet(&many), 18.0);
    }
}
