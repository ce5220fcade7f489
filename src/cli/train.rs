//! `deepchess train`: the paper's three training phases on a dataset folder.

use super::args::{parse, usage, CliError, Flag};
use super::data::VALID_POSITIONS;
use crate::data::dataset::Dataset;
use crate::deepchess::pairs::{AuxPairs, Pools};
use crate::deepchess::pipeline::{run, Phases, Profile};
use crate::train::log::Log;
use crate::train::settings::{Kind, RunSettings};
use crate::train::stage::{Ctx, StageCfg};
use std::path::{Path, PathBuf};
use std::time::Instant;

const FLAGS: &[Flag] = &[
    Flag { name: "system", value: Some("NAME"), help: "deepchess (default: this help) | dbn (seed 001's deep belief networks: see --system dbn --help) | cnn (seed 003's convolutional classifier: --system cnn --help)" },
    Flag { name: "profile", value: Some("NAME"), help: "quick (default, ~10-30 min on 2 cores) | paper (the paper's schedule) | memorise (the paper's regime on a small corpus: training accuracy past 97 %) | curve | tiny (seconds)" },
    Flag { name: "data", value: Some("DIR"), help: "dataset folder with train.dcds and valid.dcds (default runs/dataset)" },
    Flag { name: "out", value: Some("DIR"), help: "run folder: nets, checkpoint, log.csv, curves.svg (default runs/PROFILE)" },
    Flag { name: "phases", value: Some("LIST"), help: "comma list of pos2vec,siamese,distill,compact,scratch (default all)" },
    Flag { name: "seed", value: Some("N"), help: "seed of initialisation and sampling (default 1)" },
    Flag { name: "resume", value: None, help: "continue an interrupted run in --out from its last checkpoint (same settings; see above)" },
    Flag { name: "threads", value: Some("N"), help: "threads for the numeric kernels (default 2)" },
    Flag { name: "max-positions", value: Some("N"), help: "use at most N training positions per class (data-size curves)" },
    Flag { name: "no-mirror", value: None, help: "no colour-mirror augmentation even if the profile uses it" },
    Flag { name: "siamese-epochs", value: Some("N"), help: "epochs of the DeepChess (Siamese) phase instead of the profile's" },
    Flag { name: "distill-arch", value: Some("ARCH"), help: "the distilled net's layers, e.g. 773-32-32-32/32-32-2 (default the paper's 773-100-100-100/100-100-2)" },
    Flag { name: "compact-aux", value: Some("SPEC"), help: "beyond the paper: mix same-game and material pairs into the compact phase, e.g. progress=0.3,gap=8,material=0.1 (default none)" },
    Flag { name: "distill-epochs", value: Some("N"), help: "epochs of the distillation's pair phase instead of the profile's" },
    Flag { name: "precision", value: Some("P"), help: "f32 (default) or bf16: the training products' operands in bf16, sums and weights in f32 (mixed precision; about 1.5x faster with AVX-512 BF16, docs/benchmarks.md)" },
];

fn dataset_file(dir: &Path, file: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(file);
    if !path.exists() {
        return Err(CliError::Failed(format!(
            "{} not found: build datasets first ('make dataset' or 'deepchess data --pgn FILE --out {}')",
            path.display(),
            dir.display()
        )));
    }
    Ok(path)
}

pub fn load_pools(dir: &Path, file: &str, mirror: bool) -> Result<(Pools, Dataset), CliError> {
    let path = dataset_file(dir, file)?;
    let d = Dataset::load(&path).map_err(|e| CliError::Failed(e.to_string()))?;
    let pools = Pools::from_dataset(&d, mirror);
    if pools.is_empty() {
        return Err(CliError::Failed(format!("{}: needs both W and L positions", path.display())));
    }
    Ok((pools, d))
}

pub fn run_cli(args: &[String]) -> Result<(), CliError> {
    // `--system dbn` / `--system cnn` hand the whole command to that system's trainer (its own flags).
    let system = args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix("--system") {
        Some("") => Some(args.get(i + 1).map(String::as_str).unwrap_or("")),
        Some(v) => v.strip_prefix('='),
        None => None,
    });
    match system {
        None | Some("deepchess") => {}
        Some("dbn") => return super::train_dbn::run_cli(args),
        Some("cnn") => return super::train_cnn::run_cli(args),
        Some(other) => return Err(CliError::Usage(format!("deepchess train: unknown --system '{other}' (deepchess, dbn, cnn)"))),
    }
    let help = usage(
        "train",
        "[--profile quick|paper|tiny] [--data DIR] [--out DIR] [--resume] [options]",
        "Trains Pos2Vec (stacked autoencoders), the DeepChess Siamese comparator, the distilled\n\
         net and the small net from scratch, checkpointing every epoch. Writes log.csv,\n\
         curves.svg and results.md (accuracy on held-out games) into the run folder.\n\
         \n\
         The run's settings are recorded in its folder (run.txt). --resume refuses to continue\n\
         with a different profile, dataset content, seed, --max-positions, --no-mirror,\n\
         --siamese-epochs, --distill-epochs, --distill-arch, --compact-aux or --precision. --threads and\n\
         --phases may change between invocations, and --data may name a moved copy of the\n\
         same dataset files.",
        FLAGS,
    );
    let p = parse("train", args, FLAGS, &help)?;
    if !p.positional.is_empty() {
        return Err(CliError::Usage(format!("deepchess train: unexpected argument '{}'", p.positional[0])));
    }
    let pname = p.get("profile").unwrap_or("quick");
    let mut prof = Profile::by_name(pname)
        .ok_or_else(|| CliError::Usage(format!("deepchess train: unknown profile '{pname}' (quick, paper, memorise, curve, tiny)")))?;
    if p.has("no-mirror") {
        prof.mirror = false;
    }
    if p.get("siamese-epochs").is_some() {
        let e: usize = p.get_or("train", "siamese-epochs", 1)?;
        if e == 0 {
            return Err(CliError::Usage("deepchess train: --siamese-epochs must be at least 1".into()));
        }
        prof.siamese.epochs = e;
    }
    if let Some(a) = p.get("distill-arch") {
        prof.distill_arch = crate::deepchess::model::Arch::parse(a).ok_or_else(|| {
            CliError::Usage(format!("deepchess train: bad --distill-arch '{a}' (want 773-W-...-F/H-...-2, e.g. 773-32-32-32/32-32-2)"))
        })?;
        // A student the search could not play is refused before hours of training.
        crate::deepchess::inference::playable(&prof.distill_arch)
            .map_err(|e| CliError::Usage(format!("deepchess train: --distill-arch '{a}' cannot play: {e}")))?;
    }
    if p.get("distill-epochs").is_some() {
        let e: usize = p.get_or("train", "distill-epochs", 1)?;
        if e == 0 {
            return Err(CliError::Usage("deepchess train: --distill-epochs must be at least 1".into()));
        }
        prof.distill_full.epochs = e;
    }
    if let Some(a) = p.get("compact-aux") {
        prof.compact_aux = AuxPairs::parse(a)
            .map_err(|e| CliError::Usage(format!("deepchess train: bad --compact-aux '{a}': {e}")))?;
    }
    let phases = match p.get("phases") {
        Some(s) => Phases::parse(s).ok_or_else(|| CliError::Usage(format!("deepchess train: bad --phases '{s}'")))?,
        None => Phases::ALL,
    };
    let threads: usize = p.get_or("train", "threads", 2)?;
    crate::tensor::set_threads(threads.clamp(1, 64));
    let seed: u64 = p.get_or("train", "seed", 1)?;
    let max_positions: Option<usize> = match p.get("max-positions") {
        Some(_) => Some(p.get_or("train", "max-positions", usize::MAX)?),
        None => None,
    };
    let data = PathBuf::from(p.get("data").unwrap_or("runs/dataset"));
    let out = PathBuf::from(p.get("out").map(String::from).unwrap_or(format!("runs/{pname}")));
    let resume = p.has("resume");
    let bf16_products = match p.get("precision").unwrap_or("f32") {
        "f32" => false,
        "bf16" => true,
        o => return Err(CliError::Usage(format!("deepchess train: --precision takes f32 or bf16, not '{o}'"))),
    };

    // The settings are checked before the data is loaded: a refusal should not wait for it.
    let settings = run_settings(&prof, seed, &data, max_positions, bf16_products)?;
    let recorded = RunSettings::read(&out).map_err(CliError::Failed)?;
    if !resume && (recorded.is_some() || out.join("log.csv").exists()) {
        return Err(CliError::Failed(format!(
            "{} already holds a training run: add --resume to continue it, or choose another --out",
            out.display()
        )));
    }
    if resume {
        check_resume(&out, &settings, recorded.as_deref())?;
    }
    std::fs::create_dir_all(&out).map_err(|e| CliError::Failed(format!("cannot create {}: {e}", out.display())))?;

    let (mut train, tds) = load_pools(&data, "train.dcds", prof.mirror)?;
    if let Some(n) = max_positions {
        train.truncate(n);
    }
    let (valid, vds) = load_pools(&data, "valid.dcds", false)?;
    if let (Some(a), Some(b)) = (tds.meta("pair"), vds.meta("pair")) {
        if a != b {
            return Err(CliError::Failed(format!(
                "{}: train.dcds and valid.dcds come from different 'deepchess data' runs (pair {a} and {b}; one write of a run was cut short?): build them again",
                data.display()
            )));
        }
    }
    // `deepchess data --split both`: single positions of training games, the other protocol.
    let positions = if data.join(VALID_POSITIONS).exists() {
        let pds = Dataset::load(&data.join(VALID_POSITIONS)).map_err(|e| CliError::Failed(e.to_string()))?;
        let pools = Pools::from_dataset(&pds, false);
        if pds.meta("pair") != tds.meta("pair") {
            return Err(CliError::Failed(format!(
                "{}: {VALID_POSITIONS} does not come from the 'deepchess data' run of train.dcds (pair {:?} and {:?}): build them again",
                data.display(),
                pds.meta("pair"),
                tds.meta("pair")
            )));
        }
        if pools.is_empty() {
            // Few games can leave one class without a held-out position: judge on valid.dcds alone.
            eprintln!("warning: {VALID_POSITIONS} has {} W and {} L positions (both are needed): judged on valid.dcds only", pools.w.len(), pools.l.len());
            None
        } else {
            eprintln!("second validation set {VALID_POSITIONS}: {} W + {} L held-out positions of training games", pools.w.len(), pools.l.len());
            Some(pools)
        }
    } else {
        None
    };
    let split = vds.meta("split").unwrap_or("unknown split").to_string();
    eprintln!(
        "profile {pname}: {} W + {} L training positions{}, {} W + {} L validation positions (held-out games)",
        train.w.len(),
        train.l.len(),
        if prof.mirror { " (with mirrored twins)" } else { "" },
        valid.w.len(),
        valid.l.len()
    );
    let mut meta = vec![
        ("profile".to_string(), pname.to_string()),
        ("data".to_string(), data.display().to_string()),
        ("data_source".to_string(), tds.meta("source").unwrap_or("?").to_string()),
        ("split".to_string(), split.clone()),
        ("mirror".to_string(), prof.mirror.to_string()),
        ("train_positions".to_string(), format!("{} W + {} L", train.w.len(), train.l.len())),
    ];
    if !prof.compact_aux.is_none() {
        let a = prof.compact_aux;
        meta.push(("compact_aux".to_string(), format!("progress={},gap={},material={}", a.progress, a.gap, a.material)));
    }
    if recorded.is_none() {
        settings.save(&out).map_err(|e| CliError::Failed(format!("writing {}: {e}", out.join(crate::train::settings::FILE).display())))?;
    }
    let mut ctx = Ctx { dir: out.clone(), seed, resume, log: Log::open(&out).map_err(CliError::Failed)?, meta, bf16_products };
    let t = Instant::now();
    let summary = run(&mut ctx, &prof, phases, &train, &valid, positions.as_ref()).map_err(CliError::Failed)?;
    let mut md = format!(
        "# Training run `{}`\n\nProfile `{pname}`, seed {seed}{}, data `{}` ({} W + {} L training positions{}).\n\
         Accuracy = fraction of random (W, L) pairs of the **validation set** ordered correctly;\n\
         validation = {split}; {} W + {} L validation positions.\n\n",
        out.display(),
        if bf16_products { ", products in bf16 (f32 sums and weights)" } else { "" },
        data.display(),
        train.w.len(),
        train.l.len(),
        if prof.mirror { ", with mirrored twins" } else { "" },
        valid.w.len(),
        valid.l.len()
    );
    // Every accuracy column names its protocol.
    let protocol = match vds.meta("protocol") {
        Some("positions") => "position split",
        _ => "game split",
    };
    let pct = |x: f64| format!("{:.2} %", 100.0 * x);
    if positions.is_some() {
        md.push_str(&format!("| network | layers | validation [{protocol}] | validation [position split] ({VALID_POSITIONS}) | training positions |\n|---|---|---|---|---|\n"));
    } else {
        md.push_str(&format!("| network | layers | validation pair accuracy [{protocol}] | training positions |\n|---|---|---|---|\n"));
    }
    for r in &summary.rows {
        let pos = r.positions.map_or(String::new(), |p| format!(" {} |", pct(p)));
        md.push_str(&format!("| {} | {} | {} |{pos} {} |\n", r.name, r.arch, pct(r.valid), pct(r.train)));
    }
    md.push_str(&format!("\nWall time of this invocation: {:.1} min.\n", t.elapsed().as_secs_f64() / 60.0));
    crate::io::write_atomic(&out.join("results.md"), md.as_bytes())
        .map_err(|e| CliError::Failed(format!("writing results.md: {e}")))?;
    print!("{md}");
    Ok(())
}

/// What defines a run, written to `run.txt` when it starts and compared on `--resume`.
/// Left out on purpose, because they may change between invocations: `--threads` (it does
/// not change what is computed), `--phases` (each phase's net depends only on earlier ones)
/// and `--out` (the run folder itself).
fn run_settings(prof: &Profile, seed: u64, data: &Path, max_positions: Option<usize>, bf16_products: bool) -> Result<RunSettings, CliError> {
    let mut s = RunSettings { profile_key: Some("profile".into()), ..Default::default() };
    s.add("profile", prof.name, "--profile", Kind::Defining);
    s.add("seed", seed, "--seed", Kind::Defining);
    for file in ["train.dcds", "valid.dcds"] {
        let print = Dataset::fingerprint(&dataset_file(data, file)?).map_err(|e| CliError::Failed(e.to_string()))?;
        s.add(&format!("data.{file}"), print, &format!("--data ({file})"), Kind::Defining);
    }
    if data.join(VALID_POSITIONS).exists() {
        let print = Dataset::fingerprint(&data.join(VALID_POSITIONS)).map_err(|e| CliError::Failed(e.to_string()))?;
        s.add(&format!("data.{VALID_POSITIONS}"), print, &format!("--data ({VALID_POSITIONS})"), Kind::Defining);
    }
    // A moved or differently spelled folder holding the same files is the same data.
    let path = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
    s.add("data.path", path.display(), "--data", Kind::Note);
    s.add("max_positions", max_positions.map_or("all".to_string(), |n| n.to_string()), "--max-positions", Kind::Defining);
    s.add("mirror", prof.mirror, "--no-mirror (or the profile)", Kind::FromProfile);
    s.add("precision", if bf16_products { "bf16" } else { "f32" }, "--precision", Kind::Defining);
    s.add("val_pairs", prof.val_pairs, "validation pairs (the profile)", Kind::FromProfile);
    let stages: [(&str, &StageCfg, &str); 7] = [
        ("pos2vec", &prof.pos2vec, ""),
        ("siamese", &prof.siamese, "--siamese-epochs or "),
        ("distill_tower", &prof.distill_tower, ""),
        ("distill_full", &prof.distill_full, "--distill-epochs or "),
        ("compact", &prof.compact, ""),
        ("scratch_pos2vec", &prof.scratch_pos2vec, ""),
        ("scratch_siamese", &prof.scratch_siamese, ""),
    ];
    for (name, c, flag) in stages {
        s.add(&format!("{name}.epochs"), c.epochs, &format!("{name} epochs ({flag}the profile)"), Kind::FromProfile);
        let rest = format!("samples {}, batch {}, {}", c.samples, c.batch, c.opt.describe());
        s.add(name, rest, &format!("{name} schedule (the profile)"), Kind::FromProfile);
    }
    s.add("distill_arch", prof.distill_arch.describe(), "--distill-arch", Kind::FromProfile);
    let a = prof.compact_aux;
    let aux = if a.is_none() { "none".to_string() } else { format!("progress={},gap={},material={}", a.progress, a.gap, a.material) };
    s.add("compact_aux", aux, "--compact-aux", Kind::FromProfile);
    Ok(s)
}

/// Refuses to resume the run in `out` with settings other than its own. A run folder from
/// before `run.txt` existed is checked against what its checkpoint recorded.
fn check_resume(out: &Path, settings: &RunSettings, recorded: Option<&[(String, String)]>) -> Result<(), CliError> {
    let legacy;
    let recorded = match recorded {
        Some(r) => r,
        None => {
            let ck = out.join("checkpoint.dcw");
            if !ck.exists() {
                return Ok(());
            }
            let wf = crate::tensor::WeightFile::load(&ck).map_err(|e| CliError::Failed(e.to_string()))?;
            // Only the keys the checkpoint wrote in the same form as run.txt.
            legacy = wf.meta.into_iter().filter(|(k, _)| ["profile", "seed", "mirror"].contains(&k.as_str())).collect::<Vec<_>>();
            &legacy
        }
    };
    match settings.check(recorded) {
        Ok(notes) => {
            for n in notes {
                eprintln!("note: {n} (the same dataset files: continuing)");
            }
            Ok(())
        }
        Err(refused) => Err(CliError::Failed(format!(
            "deepchess train --resume: {} was made with other settings; resume with its own, or choose another --out\n{refused}",
            out.display()
        ))),
    }
}
