//! `deepchess train --system dbn`: the deep belief network evaluators of seed 001 on a
//! labelled set (`deepchess label`), nine nets under two protocols, and their table.

use super::args::{parse, usage, CliError, Flag};
use crate::data::labels::LabelSet;
use crate::dbn::data::{Samples, Split};
use crate::dbn::features::Encoding;
use crate::dbn::model::{Arch, Head};
use crate::dbn::pipeline::{run, table, Plan, Profile};
use crate::train::settings::{Kind, RunSettings};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The committed labelled set.
pub const DEFAULT_LABELS: &str = "data/dbn/labels-100k.csv.xz";

const FLAGS: &[Flag] = &[
    Flag { name: "system", value: Some("dbn"), help: "the deep belief networks of seed 001 (this help)" },
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, ~30 min on 2 cores) | paper (the seed's schedule, 10 folds) | tiny (seconds)" },
    Flag { name: "labels", value: Some("FILE"), help: "labelled positions from 'deepchess label' (default data/dbn/labels-100k.csv.xz)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder (default runs/dbn-PROFILE)" },
    Flag { name: "configs", value: Some("LIST"), help: "hidden layers, comma list of small (100-100-100), medium (400-200-100), large (600-400-200-100) or W-W-… (default all three)" },
    Flag { name: "heads", value: Some("LIST"), help: "comma list of classify, regress, quantized (default all)" },
    Flag { name: "splits", value: Some("LIST"), help: "comma list of positions (the seed's folds), games (whole games held out) (default both)" },
    Flag { name: "folds", value: Some("N"), help: "folds of the position split to run, of ten (default: the profile's; paper 10, quick 1)" },
    Flag { name: "side-bit", value: Some("HEAD"), help: "also train the 773-bit variant of HEAD on the first config, or 'none' (default quantized)" },
    Flag { name: "rbm-epochs", value: Some("N"), help: "pretraining epochs per layer instead of the profile's (0: no pretraining, He-initialised layers)" },
    Flag { name: "fine-epochs", value: Some("N"), help: "fine-tuning epochs instead of the profile's" },
    Flag { name: "lr", value: Some("X"), help: "fine-tuning learning rate instead of the profile's" },
    Flag { name: "momentum", value: Some("X"), help: "fine-tuning momentum instead of the profile's" },
    Flag { name: "dropout", value: Some("X"), help: "dropout rate of the hidden layers in fine-tuning instead of the seed's 0.5" },
    Flag { name: "max-positions", value: Some("N"), help: "use only the first N labelled positions" },
    Flag { name: "seed", value: Some("N"), help: "seed of initialisation, sampling and folds (default 1)" },
    Flag { name: "resume", value: None, help: "continue the run in --out (same settings)" },
    Flag { name: "threads", value: Some("N"), help: "threads for the numeric kernels (default 1: batch 32 is too small to share)" },
];

fn list<T>(flag: &str, s: &str, f: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|x| f(x.trim()).ok_or_else(|| CliError::Usage(format!("deepchess train --system dbn: bad --{flag} entry '{x}'"))))
        .collect()
}

fn config(s: &str) -> Option<Vec<usize>> {
    let [small, medium, large] = Arch::configs();
    match s {
        "small" => Some(small),
        "medium" => Some(medium),
        "large" => Some(large),
        _ => Arch::parse(&format!("772-{s}/classify")).map(|a| a.hidden),
    }
}

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    let help = usage(
        "train --system dbn",
        "[--profile quick|paper|tiny] [--labels FILE] [--out DIR] [--resume] [options]",
        "Trains the deep belief networks of seed 001: for each hidden-layer configuration, the\n\
         layers pretrained as RBMs (CD-1), then one net per head (classify W/D/L, regress the\n\
         engine score, quantized score) fine-tuned with dropout 0.5. Each is judged under the\n\
         seed's protocol (folds over positions) and on whole held-out games. Writes the nets,\n\
         log.csv and curves.svg per net folder, and results.md with the table.",
        FLAGS,
    );
    let p = parse("train", args, FLAGS, &help)?;
    if let Some(extra) = p.positional.first() {
        return Err(CliError::Usage(format!("deepchess train: unexpected argument '{extra}'")));
    }
    let pname = p.get("profile").unwrap_or("quick");
    let mut prof = Profile::by_name(pname).ok_or_else(|| CliError::Usage(format!("deepchess train --system dbn: unknown profile '{pname}' (quick, paper, tiny)")))?;
    if p.get("folds").is_some() {
        let f: usize = p.get_or("train", "folds", 1)?;
        if !(1..=10).contains(&f) {
            return Err(CliError::Usage("deepchess train --system dbn: --folds must be 1 to 10".into()));
        }
        prof.folds = f;
    }
    if p.get("rbm-epochs").is_some() {
        prof.rbm.epochs = p.get_or("train", "rbm-epochs", 0)?;
    }
    if p.get("fine-epochs").is_some() {
        prof.fine.epochs = p.get_or("train", "fine-epochs", 1)?;
    }
    if p.get("lr").is_some() {
        prof.fine.lr = p.get_or("train", "lr", 0.0)?;
    }
    if p.get("momentum").is_some() {
        prof.fine.momentum = p.get_or("train", "momentum", 0.0)?;
    }
    if p.get("dropout").is_some() {
        prof.fine.dropout = p.get_or("train", "dropout", 0.5)?;
        if !(0.0..1.0).contains(&prof.fine.dropout) {
            return Err(CliError::Usage("deepchess train --system dbn: --dropout must be in [0, 1)".into()));
        }
    }
    let configs = match p.get("configs") {
        Some(s) => list("configs", s, config)?,
        None => Arch::configs().to_vec(),
    };
    let heads = match p.get("heads") {
        Some(s) => list("heads", s, Head::parse)?,
        None => Head::ALL.to_vec(),
    };
    let mut splits = Vec::new();
    for s in list("splits", p.get("splits").unwrap_or("positions,games"), |s| ["positions", "games"].contains(&s).then(|| s.to_string()))? {
        match s.as_str() {
            "positions" => splits.extend((0..prof.folds).map(|fold| Split::Positions { fold, folds: 10 })),
            _ => splits.push(Split::Games { per_mille: 100 }),
        }
    }
    let side_bit = match p.get("side-bit").unwrap_or("quantized") {
        "none" => None,
        h => Some(Head::parse(h).ok_or_else(|| CliError::Usage(format!("deepchess train --system dbn: bad --side-bit '{h}'")))?),
    };
    let threads: usize = p.get_or("train", "threads", 1)?;
    crate::tensor::set_threads(threads.clamp(1, 64));
    let seed: u64 = p.get_or("train", "seed", 1)?;
    let max_positions: Option<usize> = match p.get("max-positions") {
        Some(_) => Some(p.get_or("train", "max-positions", usize::MAX)?),
        None => None,
    };
    let labels = PathBuf::from(p.get("labels").unwrap_or(DEFAULT_LABELS));
    let out = PathBuf::from(p.get("out").map(String::from).unwrap_or(format!("runs/dbn-{pname}")));
    let resume = p.has("resume");
    let plan = Plan { configs, heads, splits, side_bit };

    let settings = run_settings(&prof, &plan, seed, &labels, max_positions)?;
    let recorded = settings.admit(&out, resume).map_err(CliError::Failed)?;
    if !labels.is_file() {
        return Err(CliError::Failed(format!("{} not found: make a labelled set with 'deepchess label' (see 'make labels-dbn')", labels.display())));
    }
    let t = Instant::now();
    let mut set = LabelSet::load(&labels).map_err(CliError::Failed)?;
    if let Some(n) = max_positions {
        set.items.truncate(n);
    }
    if set.items.is_empty() {
        return Err(CliError::Failed(format!("{}: no labelled positions", labels.display())));
    }
    let s772 = Samples::from_labels(&set, Encoding::Bits772);
    let s773 = side_bit.map(|_| Samples::from_labels(&set, Encoding::Bits773));
    eprintln!("profile {pname}: {} labelled positions from {} ({:.1}s to load)", s772.items.len(), labels.display(), t.elapsed().as_secs_f64());
    std::fs::create_dir_all(&out).map_err(|e| CliError::Failed(format!("cannot create {}: {e}", out.display())))?;
    if recorded.is_none() {
        settings.save(&out).map_err(|e| CliError::Failed(format!("writing {}: {e}", out.join(crate::train::settings::FILE).display())))?;
    }
    let meta = vec![("profile".to_string(), pname.to_string()), ("labels".to_string(), labels.display().to_string())];
    let outcomes = run(&out, &prof, &plan, &s772, s773.as_ref(), seed, resume, &meta).map_err(CliError::Failed)?;
    let md = format!(
        "# DBN run `{}`\n\nProfile `{pname}`, seed {seed}, {} labelled positions from `{}`.\n\
         Accuracy: classify and quantized = argmax equals the class; regress = output within 0.1\n\
         of the normalised target (±30 cp). Seed protocol = fold(s) of a 10-fold split over\n\
         positions (positions of one game on both sides); held-out games = 10 % of games held\n\
         out whole.\n\n{}\nWall time of this invocation: {:.1} min.\n",
        out.display(),
        s772.items.len(),
        labels.display(),
        table(&outcomes),
        t.elapsed().as_secs_f64() / 60.0
    );
    crate::io::write_atomic(&out.join("results.md"), md.as_bytes()).map_err(|e| CliError::Failed(format!("writing results.md: {e}")))?;
    print!("{md}");
    Ok(())
}

/// What defines a run (see `train::settings`).
fn run_settings(prof: &Profile, plan: &Plan, seed: u64, labels: &Path, max_positions: Option<usize>) -> Result<RunSettings, CliError> {
    let mut s = RunSettings { profile_key: Some("profile".into()), ..Default::default() };
    s.add("system", "dbn", "--system", Kind::Defining);
    s.add("profile", prof.name, "--profile", Kind::Defining);
    s.add("seed", seed, "--seed", Kind::Defining);
    // The file's bytes as stored: the same set compressed otherwise is another run.
    let bytes = crate::io::files::read_regular(labels, 1 << 30, "labelled set").map_err(|e| CliError::Failed(format!("{}: {e}", labels.display())))?;
    let print = format!("{:016x}", crate::io::fnv1a64(&bytes));
    s.add("labels", print, "--labels", Kind::Defining);
    s.add("max_positions", max_positions.map_or("all".to_string(), |n| n.to_string()), "--max-positions", Kind::Defining);
    s.add("rbm", format!("{:?}", prof.rbm), "pretraining schedule (the profile)", Kind::FromProfile);
    s.add("fine", format!("{:?}", prof.fine), "fine-tuning schedule (the profile)", Kind::FromProfile);
    // The plan defines the run too: results.md is the table of this plan's nets, so a resume
    // with another plan would write a table without the earlier nets' rows.
    let describe = |v: &[String]| v.join(",");
    s.add("configs", describe(&plan.configs.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>()), "--configs", Kind::Defining);
    s.add("heads", describe(&plan.heads.iter().map(|h| h.name().to_string()).collect::<Vec<_>>()), "--heads", Kind::Defining);
    s.add("splits", describe(&plan.splits.iter().map(|x| x.name()).collect::<Vec<_>>()), "--splits / --folds", Kind::Defining);
    s.add("side_bit", plan.side_bit.map_or("none", |h| h.name()), "--side-bit", Kind::Defining);
    Ok(s)
}
