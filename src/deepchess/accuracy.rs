//! `deepchess accuracy`: pair accuracy of a net on a dataset's validation set.

use crate::io::args::{parse, usage, CliError, Flag};
use crate::deepchess::pairs::load_pools;
use crate::deepchess::features::Features;
use crate::deepchess::model::{Net, ValueNet};
use crate::deepchess::pairs::pair_accuracies;
use crate::train::system::Command;
use std::path::PathBuf;
use crate::tensor::NetFile;
use crate::tensor::Architecture as _;

const FLAGS: &[Flag] = &[
    Flag { name: "net", value: Some("FILE[,FILE…]"), help: "network file (.dcw); several, comma-separated, are judged as an ensemble (probabilities averaged)" },
    Flag { name: "data", value: Some("DIR"), help: "dataset folder (default runs/dataset)" },
    Flag { name: "set", value: Some("NAME"), help: "valid (default), valid-positions (the position split of 'data --split both') or train" },
    Flag { name: "pairs", value: Some("N"), help: "random (W, L) pairs drawn with a fixed seed (default 100000)" },
    Flag { name: "seed", value: Some("SEED"), help: "seed of the pairs (default 1)" },
];

/// `deepchess accuracy`, a subcommand of DeepChess (`SYSTEM.commands`).
pub const COMMAND: Command = Command {
    name: "accuracy",
    synopsis: "--net FILE [--data DIR]",
    about: "pair accuracy on held-out games",
    run,
};

pub fn run(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "accuracy",
        "--net FILE [--data DIR] [--pairs N]",
        "Fraction of random (W, L) pairs a net orders correctly, and the single-position sign\n\
         accuracy (a position judged against its colour-mirrored twin), on held-out games.",
        FLAGS,
    );
    let p = parse("accuracy", args, FLAGS, &help)?;
    let net_path = p.get("net").ok_or_else(|| CliError::Usage("deepchess accuracy: --net FILE is needed".into()))?;
    // A value student (one number per position) is judged by its own lines below.
    let student = match crate::tensor::WeightFile::load(std::path::Path::new(net_path)) {
        Ok(wf) if !net_path.contains(',') && wf.meta("kind") == Some(<ValueNet as NetFile>::KIND) => {
            Some(ValueNet::load(&PathBuf::from(net_path)).map_err(|e| CliError::Failed(e.to_string()))?.0)
        }
        _ => None,
    };
    let mut nets = Vec::new();
    for f in net_path.split(',').filter(|_| student.is_none()) {
        nets.push(Net::load(&PathBuf::from(f)).map_err(|e| CliError::Failed(e.to_string()))?.0);
    }
    let data = PathBuf::from(p.get("data").unwrap_or("runs/dataset"));
    let set = match p.get("set").unwrap_or("valid") {
        "valid" => "valid.dcds",
        "valid-positions" => crate::data::build::VALID_POSITIONS,
        "train" => "train.dcds",
        s => return Err(CliError::Usage(format!("deepchess accuracy: --set is valid, valid-positions or train, not '{s}'"))),
    };
    let pairs: usize = p.get_or("accuracy", "pairs", 100_000)?;
    let seed: u64 = p.get_or("accuracy", "seed", 1)?;
    let (pools, d) = load_pools(&data, set, false).map_err(CliError::Failed)?;
    // Every figure names its protocol: held-out games, or held-out positions of trained games.
    let protocol = match (set, d.meta("protocol")) {
        ("train.dcds", _) => "training positions",
        (_, Some("positions")) => "position split",
        (_, Some("games") | None) => "game split",
        (_, Some(_)) => "split unknown",
    };
    let all: Vec<(bool, &Features)> = pools.w.iter().map(|f| (true, f)).chain(pools.l.iter().map(|f| (false, f))).collect();
    if let Some(s) = student {
        println!("net: {net_path} ({}, a value student)", s.arch.describe());
        println!("set: {} — {}", data.join(set).display(), d.meta("split").unwrap_or("split unknown"));
        let rows: Vec<&[u16]> = all.iter().map(|(_, f)| f.as_slice()).collect();
        let value = s.values(&rows).map_err(|e| CliError::Failed(format!("{net_path}: {e}")))?;
        let right = all.iter().zip(&value).filter(|((is_w, _), &v)| (v > 0.0) == *is_w).count();
        let pair_right = scalar_pairs(&value, pools.w.len(), pools.l.len(), pairs, seed);
        println!("single-position sign accuracy [{protocol}]: {:.2} % over {} positions (value above the draw's 0)", 100.0 * right as f64 / all.len().max(1) as f64, all.len());
        println!(
            "pair accuracy of the value student [{protocol}]: {:.2} % over {pairs} random (W, L) pairs (seed {seed}; the pairs of a comparator's draw-referenced value line, compared as numbers)",
            100.0 * pair_right as f64 / pairs.max(1) as f64
        );
        return Ok(());
    }
    let net = &nets[0];
    let (acc, acc_both) = pair_accuracies(&nets.iter().collect::<Vec<_>>(), &pools, pairs.max(1), seed);
    // Sign: P(position better than its mirror) > 1/2 means "White is better": right for W.
    let mirrors: Vec<Features> = all.iter().map(|(_, f)| f.mirrored()).collect();
    let (a, b): (Vec<&[u16]>, Vec<&[u16]>) = all.iter().zip(&mirrors).map(|((_, f), m)| (f.as_slice(), m.as_slice())).unzip();
    let probs = net.prob_better(&a, &b).map_err(|e| CliError::Failed(format!("{net_path}: {e}")))?;
    let right = all.iter().zip(&probs).filter(|((is_w, _), &p)| (p > 0.5) == *is_w).count();
    // Each position's value against its own mirror, both orders averaged: one number per
    // position, the comparator read as an evaluation (docs/search.md, "The draw-referenced
    // value"). Its pair accuracy, on pairs drawn as above, says what ordering by that number
    // gives up against comparing the pair itself.
    let back = net.prob_better(&b, &a).map_err(|e| CliError::Failed(format!("{net_path}: {e}")))?;
    let value: Vec<f32> = probs.iter().zip(&back).map(|(p, q)| 0.5 * (p + 1.0 - q)).collect();
    let scalar_right = scalar_pairs(&value, pools.w.len(), pools.l.len(), pairs, seed);
    println!("net: {net_path} ({})", nets.iter().map(|n| n.arch.describe()).collect::<Vec<_>>().join(", "));
    println!("set: {} — {}", data.join(set).display(), d.meta("split").unwrap_or("split unknown"));
    println!("pair accuracy{} [{protocol}]: {:.2} % over {pairs} random (W, L) pairs (seed {seed})", if nets.len() > 1 { " (ensemble)" } else { "" }, 100.0 * acc);
    println!("pair accuracy, both orders averaged [{protocol}]: {:.2} % (the same pairs)", 100.0 * acc_both);
    println!(
        "single-position sign accuracy{} [{protocol}]: {:.2} % over {} positions (position vs its colour-mirrored twin)",
        if nets.len() > 1 { " (first net)" } else { "" },
        100.0 * right as f64 / all.len().max(1) as f64,
        all.len()
    );
    println!(
        "pair accuracy of the draw-referenced value [{protocol}]: {:.2} % over {pairs} random (W, L) pairs (each position's value against its mirror, compared as numbers)",
        100.0 * scalar_right as f64 / pairs.max(1) as f64
    );
    Ok(())
}

/// Of `pairs` random (W, L) pairs (seed `seed`) of per-position values (the `nw` W positions
/// first, then the `nl` L ones), how many the values order correctly.
fn scalar_pairs(value: &[f32], nw: usize, nl: usize, pairs: usize, seed: u64) -> usize {
    let mut rng = crate::tensor::Rng::new(seed);
    (0..pairs)
        .filter(|_| {
            let w = rng.below(nw as u64) as usize;
            let l = nw + rng.below(nl as u64) as usize;
            value[w] > value[l]
        })
        .count()
}
