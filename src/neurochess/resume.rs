//! What a NeuroChess run takes up from its folder instead of training it again: M
//! (`model/m.dcw`), each variant's V (`VARIANT/v.dcw`), their checkpoints and V's snapshots.
//! Each records what it belongs to ([`Parts`]: the seed, the expert games, its schedule, its
//! variant; a snapshot its games), and all are checked before the run writes anything, so a
//! refusal leaves the folder as it was (bp's checkpoint copied over ebnn's was finished as
//! an `ebnn/v.dcw` holding bp's tensors; M of a `--seed 2` run was taken by a `--seed 1` one).
//!
//! A final net that does not load (cut short, a byte changed under its checksum) is not taken
//! as done: it is made again from its checkpoint, which holds the parameters it was saved
//! from (the same bits), or trained again from the start when there is none. A snapshot can
//! only be made again by training its variant again, so `snapshots.txt` lists the snapshots
//! that are there and load, and names the others.

use super::model::{Model, Value};
use super::train::{snapshot_name, Variant};
use crate::tensor::WeightFile;
use crate::train::part::Part;
use std::path::{Path, PathBuf};
use crate::tensor::NetFile;

type Meta = Vec<(String, String)>;

/// What each part of a run belongs to.
/// What of a run's profile its parts are a function of (the pipeline's `Profile` read down to
/// it, so this file need not know the profile).
pub struct Schedule {
    pub batches: usize,
    pub games_per_batch: usize,
    /// M's schedule, as `Profile::describe_model` writes it.
    pub model: String,
    /// V's schedule, as `Profile::describe_value` writes it.
    pub value: String,
}

pub struct Parts {
    pub model: Part,
    values: Vec<(Variant, Part)>,
}

impl Parts {
    /// `expert`: the expert games as `run.txt` records them (path and checksum of each file),
    /// not compared when absent (a caller that does not record them).
    pub fn new(prof: &Schedule, seed: u64, expert: Option<&str>, variants: &[Variant]) -> Parts {
        let base = || {
            let p = Part::new().with("seed", seed, "--seed", true);
            match expert {
                Some(e) => p.with("expert", e, "--expert", false),
                None => p,
            }
        };
        let m_schedule = |p: Part| p.with("m.schedule", prof.model.clone(), "M's schedule (--profile and its flags)", false);
        let values = variants
            .iter()
            .map(|&v| {
                let p = base().with("variant", v.name(), "variant", true).with("v.schedule", prof.value.clone(), "V's schedule (--profile and its flags)", false);
                // EBNN's V is a function of M as well; bp's is not.
                (v, if v == Variant::Ebnn { m_schedule(p) } else { p })
            })
            .collect();
        Parts { model: m_schedule(base()), values }
    }

    pub fn value(&self, v: Variant) -> &Part {
        &self.values.iter().find(|(x, _)| *x == v).expect("a part per variant of the run").1
    }
}

/// What a run folder holds that the run takes up, checked.
pub struct Found {
    /// M, when `model/m.dcw` loads.
    pub model: Option<Model>,
    /// The variants whose `v.dcw` loads.
    pub done: Vec<Variant>,
}

/// Checks every part in `out` the run would take up (`resume`: checkpoints too), then prints
/// what becomes of a final net that does not load. `Err` before anything is written.
pub fn survey(out: &Path, prof: &Schedule, variants: &[Variant], parts: &Parts, resume: bool) -> Result<Found, String> {
    let mut notes = Vec::new();
    let dir = out.join("model");
    let model = final_net(&dir.join("m.dcw"), &parts.model, Model::load, "model", resume, &mut notes)?;
    let mut done = Vec::new();
    for &v in variants {
        let dir = out.join(v.name());
        let part = parts.value(v);
        if final_net(&dir.join("v.dcw"), part, Value::load, "v", resume, &mut notes)?.is_some() {
            done.push(v);
        }
        for b in 1..=prof.batches {
            let games = b * prof.games_per_batch;
            let file = dir.join("snapshots").join(snapshot_name(games));
            // One that does not load is left out of the list (or written again by the batch).
            if let Ok((_, meta)) = Value::load(&file) {
                part.clone().with("games", games, "games (the snapshot's name)", true).check(&file, &meta)?;
            }
        }
    }
    for n in notes {
        eprintln!("note: {n}");
    }
    Ok(Found { model, done })
}

/// The final net `file` of a part whose stage (and checkpoint's `stage`) is `stage`: `Some`
/// when it loads and belongs to the run; `None` when it is absent or does not load (a note
/// says how it is made again). The checkpoint beside it is checked when a resume reads it.
fn final_net<T>(file: &Path, part: &Part, load: fn(&Path) -> crate::tensor::Result<(T, Meta)>, stage: &str, resume: bool, notes: &mut Vec<String>) -> Result<Option<T>, String> {
    let (net, broken) = match load(file) {
        Ok((net, meta)) => {
            part.check(file, &meta)?;
            (Some(net), None)
        }
        Err(_) if !file.exists() => (None, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let ck = file.with_file_name("checkpoint.dcw");
    let mut from_checkpoint = false;
    if resume && ck.exists() {
        match WeightFile::load(&ck) {
            Ok(wf) => {
                part.clone().with("stage", stage, "stage", true).check(&ck, &wf.meta)?;
                from_checkpoint = true;
            }
            Err(e) if net.is_none() => return Err(format!("{e}\n(the part's checkpoint, which the resume goes on from: move it away to train the part again from its start)")),
            Err(e) => notes.push(format!("{e}: not needed, the part's final net {} is there", file.display())),
        }
    }
    if let Some(e) = broken {
        let how = if from_checkpoint { format!("making it again from {}", ck.display()) } else { "training it again from the start".to_string() };
        notes.push(format!("{} does not load ({e}): {how}", file.display()));
    }
    Ok(net)
}

/// `snapshots.txt` for the variants in `done`: the snapshots there that load, the others
/// (deleted, cut short) left out with a note on stderr. Returns the list and those left out.
pub fn snapshot_list(out: &Path, prof: &Schedule, done: &[Variant]) -> (String, Vec<PathBuf>) {
    let mut list = String::from("# variant games net (relative to this file's folder; written by deepchess train --system neurochess)\n");
    let mut left_out = Vec::new();
    for &v in done {
        for b in 1..=prof.batches {
            let games = b * prof.games_per_batch;
            let rel = format!("{}/snapshots/{}", v.name(), snapshot_name(games));
            let file = out.join(&rel);
            match Value::load(&file) {
                Ok(_) => list.push_str(&format!("{} {games} {rel}\n", v.name())),
                Err(e) => {
                    let why = if file.exists() { format!("does not load ({e})") } else { "is missing".to_string() };
                    eprintln!("note: {} {why}: left out of snapshots.txt (only training {} again makes it again)", file.display(), v.name());
                    left_out.push(file);
                }
            }
        }
    }
    (list, left_out)
}
