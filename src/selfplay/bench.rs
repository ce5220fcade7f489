//! `deepchess bench-selfplay`: seed 002's costs. A training update of one of the agents' nets
//! (the seed's conv 32-128-32, dense 128, 64 outputs) on a batch of positions — forward, the
//! squared error of the chosen outputs, backward, an Adam step — beside PyTorch on CPU doing
//! the same update on the same network and batch with the same thread count, measured in the
//! same run in interleaved rounds (medians), when `import torch` works (`make install-torch`);
//! and self-play: greedy games of the two agents, games/s and positions/s on all threads.

use crate::chess::Color;
use crate::io::args::{self, median, CliError, Flag};
use crate::selfplay::features::INPUTS;
use crate::selfplay::model::{Agents, Arch, Init, Layout, Net};
use crate::selfplay::measure::{score_against, Baseline};
use crate::tensor::autograd::with_tape;
use crate::tensor::{Adam, Matrix, Optimizer, Rng};
use crate::train::system;
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "batch", value: Some("N"), help: "positions per training update (default 256, the quick profile's)" },
    Flag { name: "rounds", value: Some("N"), help: "interleaved rounds, medians reported (default 5)" },
    Flag { name: "seconds", value: Some("S"), help: "time per figure and round (default 1)" },
    Flag { name: "threads", value: Some("N"), help: "threads for both sides (default: all cores)" },
];

/// PyTorch's update: the same network in NCHW, MSE on one chosen output per row (the others'
/// targets equal to the outputs, as ours), Adam; prints updates per second of each round.
const TORCH_SCRIPT: &str = r#"
import sys, time
import torch
threads = int(sys.argv[1]); batch = int(sys.argv[2]); secs = float(sys.argv[3]); rounds = int(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(1)
net = torch.nn.Sequential(
    torch.nn.Conv2d(6, 32, 3), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 128, 3), torch.nn.ReLU(),
    torch.nn.Conv2d(128, 32, 3), torch.nn.ReLU(),
    torch.nn.Flatten(), torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randint(-1, 2, (batch, 6, 8, 8)).float()
idx = torch.randint(0, 64, (batch,))
q = torch.randn(batch)
def step():
    y = net(x)
    t = y.detach().clone()
    t[torch.arange(batch), idx] = q
    loss = torch.nn.functional.mse_loss(y, t)
    opt.zero_grad(set_to_none=False)
    loss.backward()
    opt.step()
for _ in range(3): step()
for _ in range(rounds):
    t = time.perf_counter(); n = 0
    while n == 0 or time.perf_counter() - t < secs:
        step(); n += 1
    print(n / (time.perf_counter() - t), flush=True)
"#;

fn torch_rates(threads: usize, batch: usize, secs: f64, rounds: usize) -> Result<Vec<f64>, String> {
    use std::process::Command;
    match Command::new("python3").args(["-c", "import torch"]).output() {
        Ok(o) if o.status.success() => {}
        _ => return Err("torch is not importable by python3, anchor skipped (run 'make install-torch' to compare)".into()),
    }
    let out = Command::new("python3")
        .arg("-c")
        .arg(TORCH_SCRIPT)
        .args([threads.to_string(), batch.to_string(), secs.to_string(), rounds.to_string()])
        .envs(["OMP_NUM_THREADS", "MKL_NUM_THREADS"].map(|v| (v, threads.to_string())))
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("torch benchmark failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect())
}

/// Our update's rate (updates per second) over `secs`.
fn our_rate(agents: &mut Agents, opt: &mut Adam, x: &Matrix, chosen: &[(usize, f32)], secs: f64) -> Result<f64, String> {
    let t = Instant::now();
    let mut n = 0usize;
    while n == 0 || t.elapsed().as_secs_f64() < secs {
        // As training records each net's step: on a pooled tape.
        with_tape(|tape| -> Result<(), String> {
            let xv = tape.input(x);
            let y = agents.layout.net_on_tape(&agents.params, tape, xv, Color::White, Net::Piece).map_err(|e| e.to_string())?;
            let mut target = tape.value(y).clone();
            for (r, &(k, q)) in chosen.iter().enumerate() {
                target.row_mut(r)[k] = q;
            }
            let tv = tape.input(&target);
            let loss = tape.mse(y, tv).map_err(|e| e.to_string())?;
            tape.backward(loss, &mut agents.params).map_err(|e| e.to_string())
        })?;
        opt.step(&mut agents.params);
        n += 1;
    }
    Ok(n as f64 / t.elapsed().as_secs_f64())
}

/// `deepchess bench-selfplay`, a benchmark of seed 002's agents (`SYSTEM.commands`).
pub const COMMAND: system::Command = system::Command {
    name: "bench-selfplay",
    synopsis: "[--batch N]",
    about: "seed 002's training update beside PyTorch, self-play speed",
    run,
};

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let help = args::usage("bench-selfplay", "[--batch N] [--rounds N] [--seconds S] [--threads N]", "Seed 002's training update beside PyTorch, and self-play speed.", FLAGS);
    let p = args::parse("bench-selfplay", argv, FLAGS, &help)?;
    let batch: usize = p.get_or("bench-selfplay", "batch", 256)?;
    let rounds: usize = p.get_or("bench-selfplay", "rounds", 5)?;
    let secs: f64 = p.get_or("bench-selfplay", "seconds", 1.0)?;
    let threads: usize = p.get_or("bench-selfplay", "threads", 0)?;
    let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads.min(256) };
    if batch == 0 || batch > 65_536 || rounds == 0 || !(secs > 0.0 && secs < 1e4) {
        return Err(CliError::Usage("deepchess bench-selfplay: --batch 1 to 65536, --rounds at least 1, --seconds positive".into()));
    }
    crate::tensor::runtime::threads::set_threads(threads);
    let mut rng = Rng::new(1);
    // One net's tensors only, so that Adam steps the parameters of the net updated (as
    // PyTorch's optimizer does), not the thirteen others'. Initialised as training's recipe
    // does by default, at the scale of PyTorch's defaults (U(±1/√fan_in)): the seed's 1e-7
    // weights would leave Adam's moments subnormal, which times the CPU's slow path for them.
    let all = Agents::with_init(Arch::SEED, Init::Lecun, &mut rng);
    let mut params = crate::tensor::Params::new();
    for id in all.layout.tensors(Color::White, Net::Piece) {
        params.add(all.params.name(id), all.params.value(id).clone()).map_err(|e| CliError::Failed(e.to_string()))?;
    }
    let layout = Layout::single(&params, Arch::SEED, "white.piece").map_err(|e| CliError::Failed(e.to_string()))?;
    let mut agents = Agents { layout, params };
    let mut x = Matrix::zeros(batch, INPUTS);
    x.data_mut().iter_mut().for_each(|v| *v = [-1.0, 0.0, 0.0, 0.0, 1.0][rng.below(5) as usize]);
    let chosen: Vec<(usize, f32)> = (0..batch).map(|_| (rng.below(64) as usize, rng.uniform(-1.0, 1.0))).collect();
    let mut opt = Adam::new(1e-3);
    println!("seed 002, one net's training update (forward, chosen-output MSE, backward, Adam) at batch {batch}, {threads} thread(s), medians of {rounds} rounds of {secs} s");
    // Rounds interleaved with PyTorch's: one torch process per round, so both sides share
    // the machine's state round by round.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut why = None;
    // Per round, ours over PyTorch's (the two ran back to back): the median of those ratios
    // is steadier than the ratio of the medians when the machine's speed drifts.
    let mut paired = Vec::new();
    for _ in 0..rounds {
        let mine = our_rate(&mut agents, &mut opt, &x, &chosen, secs).map_err(CliError::Failed)?;
        ours.push(mine);
        match torch_rates(threads, batch, secs, 1) {
            Ok(v) => {
                paired.extend(v.first().map(|t| mine / t));
                theirs.extend(v);
            }
            Err(e) => why = Some(e),
        }
    }
    let o = median(&mut ours) * batch as f64;
    println!("{:<34} {:>12.0} positions/s ({:.1} updates/s)", "ours", o, o / batch as f64);
    match why {
        Some(w) if theirs.is_empty() => println!("PyTorch: {w}"),
        _ => {
            let t = median(&mut theirs) * batch as f64;
            println!("{:<34} {:>12.0} positions/s", "PyTorch (CPU, same threads)", t);
            println!("ours / PyTorch: {:.2}x (rounds: ours {:.0}–{:.0}, PyTorch {:.0}–{:.0} updates/s)", o / t, ours[0], ours[ours.len() - 1], theirs[0], theirs[theirs.len() - 1]);
            println!("ours / PyTorch, round by round: median {:.2}x", median(&mut paired));
        }
    }
    // Self-play speed: the greedy agents against a random mover, games cut at 100 plies.
    let q = crate::selfplay::recipe::QCfg::seed();
    let games = 40 * threads;
    let cfg = crate::selfplay::recipe::QCfg { eval_games: games, eval_plies: 100, ..q };
    let t = Instant::now();
    score_against(&agents, Baseline::Random, &cfg, 1, threads);
    let s = t.elapsed().as_secs_f64();
    println!("self-play speed: {games} games of the (untrained) greedy agents against a random mover, cut at 100 plies, in {s:.2} s on {threads} thread(s): {:.1} games/s (training's own figures, plies included, are in its log)", games as f64 / s);
    Ok(())
}
