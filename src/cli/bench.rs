//! `deepchess bench [--depth N] [--eval handcrafted]`

use super::args::{parse, usage, CliError, Flag};
use crate::search::bench::BenchReport;
use crate::deepchess::inference::{default_net_path, random_distilled, AnyNet, Kernel, NetComparator, SiameseNet};
use crate::eval::{handcrafted, Comparator};
use crate::search::{bench, Searcher};

/// Feature-cache size of the net path in bench (MB).
const NET_CACHE_MB: usize = 64;

fn random_net_searcher(hash: usize, incremental: bool) -> Searcher<NetComparator<crate::deepchess::inference::Distilled>> {
    let mut c = NetComparator::new(random_distilled(1), "random-distilled", NET_CACHE_MB);
    c.incremental = incremental;
    Searcher::new(c, hash)
}

fn run_one<C: Comparator>(mut s: Searcher<C>, depth: u32, verbose: bool) -> BenchReport
where
    Searcher<C>: Send,
{
    let r = bench::run(&mut s, depth, |i, fen, nodes| {
        if verbose {
            eprintln!("position {:>2}: {nodes:>10} nodes  {fen}", i + 1);
        }
    });
    eprintln!(
        "eval {} depth {depth}: {} positions, {} nodes, {:.3} s, {} nodes/s, {} comparisons/s ({:.1} % memoised), {} keys/s, feature cache hits {:.1} % ({} codes rebuilt from evicted keys)",
        s.comp.name(),
        r.positions,
        r.nodes,
        r.time.as_secs_f64(),
        r.nps(),
        r.comparisons_per_sec(),
        100.0 * r.stats.comparison_hits as f64 / r.stats.comparisons.max(1) as f64,
        (r.stats.keys as f64 / r.time.as_secs_f64().max(1e-9)) as u64,
        100.0 * r.cache_hit_rate(),
        r.stats.rebuilds
    );
    r
}

const FLAGS: &[Flag] = &[
    Flag { name: "depth", value: Some("N"), help: "search depth per position (default 10)" },
    Flag { name: "hash", value: Some("MB"), help: "transposition table size (default 16)" },
    Flag { name: "eval", value: Some("NAME"), help: "handcrafted (default), compact, distilled, deepchess, random-distilled" },
    Flag { name: "net", value: Some("FILE"), help: "net file for compact/distilled/deepchess (default: data/nets/)" },
    Flag { name: "vs-net", value: None, help: "then the same bench with the compact and distilled nets: nodes/s ratios" },
    Flag { name: "rounds", value: Some("N"), help: "with --vs-net: rounds of handcrafted and net benches, interleaved; the median ratio is reported (default 5)" },
    Flag { name: "no-incremental", value: None, help: "net path: recompute the first layer per position" },
    Flag { name: "kernel", value: Some("NAME"), help: "net layers: scalar (the portable loop), avx2 or avx512 (default: the best this CPU has)" },
    Flag { name: "verbose", value: None, help: "print the node count of each position" },
];

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "bench",
        "[--depth N] [--hash MB] [--eval NAME] [--vs-net [--rounds N]] [--verbose]",
        "Fixed-depth search over the built-in positions (single thread, table cleared between\n\
         positions). Prints 'Nodes searched: N' (the same on every run) and 'Nodes/second: N'.",
        FLAGS,
    );
    let p = parse("bench", args, FLAGS, &help)?;
    if let Some(x) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess bench: unexpected argument '{x}'")));
    }
    let depth: u32 = p.get_or("bench", "depth", bench::DEFAULT_DEPTH)?;
    if !(1..=60).contains(&depth) {
        return Err(CliError::Usage(format!("deepchess bench: --depth {depth} out of range 1..60")));
    }
    let rounds: usize = p.get_or("bench", "rounds", 5)?;
    if !(1..=100).contains(&rounds) {
        return Err(CliError::Usage(format!("deepchess bench: --rounds {rounds} out of range 1..100")));
    }
    let eval = p.get("eval").unwrap_or("handcrafted");
    let vs_net = p.has("vs-net") && eval == "handcrafted";
    if p.get("rounds").is_some() && !vs_net {
        return Err(CliError::Usage("deepchess bench: --rounds goes with --vs-net (and the handcrafted --eval)".into()));
    }
    let hash: usize = p.get_or("bench", "hash", 16)?;
    let incremental = !p.has("no-incremental");
    let verbose = p.has("verbose");
    let net_file = |default: &str| -> Result<std::path::PathBuf, CliError> {
        match p.get("net") {
            Some(f) => Ok(f.into()),
            None => default_net_path(default).ok_or_else(|| CliError::Failed(format!("bench: data/nets/{default} not found (give --net FILE)"))),
        }
    };
    let cache = hash.max(16);
    let kernel = match p.get("kernel") {
        None => Kernel::best(),
        Some(k) => match Kernel::from_name(k) {
            Some(x) if x.available() => x,
            Some(_) => return Err(CliError::Failed(format!("deepchess bench: this CPU cannot run the {k} kernel"))),
            None => return Err(CliError::Usage(format!("deepchess bench: unknown --kernel '{k}' (scalar, avx2, avx512)"))),
        },
    };
    // Searches recurse deeply with position-sized values: run on a thread with a big stack.
    let big_stack = |f: Box<dyn FnOnce() -> BenchReport + Send>| -> BenchReport {
        std::thread::Builder::new().stack_size(256 << 20).spawn(f).expect("bench thread").join().expect("bench thread panicked")
    };
    // A net file in whichever search build fits its shape.
    let net_bench = |file: std::path::PathBuf, name: &'static str| -> Result<BenchReport, CliError> {
        fn go<N: SiameseNet + Send + 'static>(n: N, name: &'static str, cache: usize, hash: usize, incremental: bool) -> Box<dyn FnOnce(u32, bool) -> BenchReport + Send>
        where
            N::Code: Send,
        {
            let mut c = NetComparator::new(n, name, cache);
            c.incremental = incremental;
            let s = Searcher::new(c, hash);
            Box::new(move |depth, verbose| run_one(s, depth, verbose))
        }
        let mut net = AnyNet::load(&file).map_err(CliError::Failed)?;
        net.set_kernel(kernel);
        eprintln!("net {} ({} kernel)", net.description(), kernel.name());
        let run = match net {
            AnyNet::Distilled(n) => go(n, name, cache, hash, incremental),
            AnyNet::Compact(n) => go(n, name, cache, hash, incremental),
            AnyNet::Big(n) => go(n, name, cache, hash, incremental),
        };
        Ok(big_stack(Box::new(move || run(depth, verbose))))
    };
    let first = match eval {
        "handcrafted" => big_stack(Box::new(move || run_one(Searcher::new(handcrafted(), hash), depth, verbose))),
        "random-distilled" => big_stack(Box::new(move || run_one(random_net_searcher(hash, incremental), depth, verbose))),
        "compact" => net_bench(net_file("compact.dcw")?, "compact")?,
        "distilled" => net_bench(net_file("distilled.dcw")?, "distilled")?,
        "deepchess" => net_bench(net_file("deepchess.dcw")?, "deepchess")?,
        e => return Err(CliError::Usage(format!("deepchess bench: unknown --eval '{e}' (handcrafted, compact, distilled, deepchess, random-distilled)"))),
    };
    println!("Nodes searched: {}", first.nodes);
    println!("Nodes/second: {}", first.nps());
    if vs_net {
        // The engine's default net, then the paper-sized distilled one (or just --net).
        let nets: &[(&str, &'static str)] = if p.get("net").is_some() { &[("", "net")] } else { &[("compact.dcw", "compact"), ("distilled.dcw", "distilled")] };
        // This machine's speed drifts by ±20 % within seconds: rounds of handcrafted then
        // each net, a ratio per round, the median of the rounds.
        let mut ratios = vec![Vec::new(); nets.len()];
        for round in 0..rounds {
            let hc = if round == 0 { first.clone() } else { big_stack(Box::new(move || run_one(Searcher::new(handcrafted(), hash), depth, verbose))) };
            for (k, &(file, name)) in nets.iter().enumerate() {
                let net = net_bench(net_file(file)?, name)?;
                ratios[k].push(hc.nps() as f64 / net.nps().max(1) as f64);
            }
        }
        for (r, &(_, name)) in ratios.iter_mut().zip(nets) {
            r.sort_by(f64::total_cmp);
            let median = (r[(r.len() - 1) / 2] + r[r.len() / 2]) / 2.0;
            eprintln!(
                "{name} net vs handcrafted, same positions, same run: {:.2}x slower in nodes/s (median of {rounds} interleaved rounds, {:.2}-{:.2})",
                median,
                r[0],
                r[r.len() - 1]
            );
        }
    }
    Ok(())
}
