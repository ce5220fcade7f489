//! The hyper-parameters of a DeepChess run ([`Profile`]), the profiles `--profile` names and
//! the flags that override them ([`overrides`]).

use super::features::Features;
use super::model::{Arch, ValueArch};
use super::pairs::AuxPairs;
use crate::io::args::CliError;
use crate::tensor::{Architecture as _, Precision};
use crate::train::run::TrainCli;
use crate::train::checkpoint::OptCfg;
use crate::train::stage::StageCfg;

/// Hyper-parameters of a whole run.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: &'static str,
    /// Add each position's colour-mirrored twin to the other class.
    pub mirror: bool,
    /// Validation pairs per epoch (fixed seed).
    pub val_pairs: usize,
    /// Per autoencoder layer.
    pub pos2vec: StageCfg,
    pub siamese: StageCfg,
    pub distill_tower: StageCfg,
    pub distill_full: StageCfg,
    /// The student's layers (the paper's distilled shape unless `--distill-arch`).
    pub distill_arch: Arch,
    /// The compact student (Arch::compact), soft targets only: it has no tower phase.
    pub compact: StageCfg,
    /// Beyond the paper: same-game and material pairs mixed into the compact phase (none by
    /// default; `--compact-aux`).
    pub compact_aux: AuxPairs,
    /// Beyond the paper: the value student, taught by the compact net's draw-referenced
    /// value; it starts from the compact net's tower where their shapes agree.
    pub value: StageCfg,
    /// The value student's layers (`ValueArch::compact`, 773-32-32-1, unless `--value-arch`);
    /// the searched rounds keep them.
    pub value_arch: ValueArch,
    /// Beyond the paper: the value student taught by its own search (phase `searched`):
    /// `searched_positions` training positions, each searched to `searched_depth` plies by
    /// the value student, whose values it then learns (`searched`). Each of
    /// `searched_rounds` rounds searches new positions with the previous round's net and
    /// trains it further on them.
    pub searched: StageCfg,
    pub searched_positions: usize,
    pub searched_depth: u32,
    pub searched_rounds: u32,
    /// The weight of the search's value in each target, the rest the game's result
    /// (`bootstrap::blend_result`; 1: the search alone).
    pub searched_lambda: f32,
    /// Pos2Vec's positions: `Some(n)`, a fixed subset of n won-game and n lost-game positions
    /// drawn once (the paper's 1M + 1M); `None`, fresh draws from both pools each epoch, in
    /// proportion to their sizes.
    pub pos2vec_subset: Option<usize>,
    pub scratch_pos2vec: StageCfg,
    pub scratch_siamese: StageCfg,
}

/// The profiles `--profile` takes, in the order help lists them.
pub const PROFILES: &[(&str, fn() -> Profile)] = &[("quick", Profile::quick), ("paper", Profile::paper), ("memorise", Profile::memorise), ("curve", Profile::curve), ("tiny", Profile::tiny)];

impl Profile {
    /// The paper's hyper-parameters (section 3). Batch size is not given in the paper: 256.
    /// Distillation schedules are not given either: the Siamese phase's, shorter.
    pub fn paper() -> Profile {
        let p2v = StageCfg { epochs: 200, samples: 2_000_000, batch: 256, opt: OptCfg::Sgd { lr: 0.005, decay: 0.98, momentum: 0.0 }, precision: Precision::F32 };
        let sia = StageCfg { epochs: 1000, samples: 1_000_000, batch: 256, opt: OptCfg::Sgd { lr: 0.01, decay: 0.99, momentum: 0.0 }, precision: Precision::F32 };
        Profile {
            name: "paper",
            mirror: false,
            val_pairs: 100_000,
            pos2vec: p2v,
            siamese: sia,
            distill_tower: StageCfg { epochs: 100, ..p2v },
            distill_full: StageCfg { epochs: 300, ..sia },
            distill_arch: Arch::small(),
            compact: StageCfg { epochs: 300, ..sia },
            compact_aux: AuxPairs::NONE,
            value: Profile::quick().value,
            value_arch: ValueArch::compact(),
            searched: Profile::quick().searched,
            searched_positions: Profile::quick().searched_positions,
            searched_depth: Profile::quick().searched_depth,
            searched_rounds: Profile::quick().searched_rounds,
            searched_lambda: Profile::quick().searched_lambda,
            pos2vec_subset: Some(1_000_000),
            scratch_pos2vec: p2v,
            scratch_siamese: sia,
        }
    }

    /// The default: `make train` finishes in about eight minutes on 2 cores with a net that plays.
    /// AdamW, colour-mirror augmentation, short schedules.
    pub fn quick() -> Profile {
        let adam = |lr: f32| OptCfg::Adam { lr, decay: 0.9, weight_decay: 1e-4 };
        Profile {
            name: "quick",
            mirror: true,
            val_pairs: 20_000,
            pos2vec: StageCfg { epochs: 2, samples: 100_000, batch: 256, opt: adam(1e-3), precision: Precision::F32 },
            // Epochs chosen where held-out accuracy stopped rising on the shipped corpus
            // (docs/results.md, table 1).
            siamese: StageCfg { epochs: 16, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            distill_tower: StageCfg { epochs: 4, samples: 200_000, batch: 256, opt: adam(1e-3), precision: Precision::F32 },
            distill_full: StageCfg { epochs: 12, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            distill_arch: Arch::small(),
            // Compact students keep improving long after the paper-sized one has settled
            // (docs/results.md, table 1).
            compact: StageCfg { epochs: 30, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            compact_aux: AuxPairs::NONE,
            value: StageCfg { epochs: 20, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
            value_arch: ValueArch::compact(),
            // Depth 8: labels of depth 6 played worse than the student they came from, those
            // of depth 8 better (docs/notebook/results.md, "Taught by its own search").
            searched: StageCfg { epochs: 10, samples: 300_000, batch: 256, opt: adam(2e-4), precision: Precision::F32 },
            searched_positions: 200_000,
            searched_depth: 8,
            searched_rounds: 1,
            searched_lambda: 1.0,
            pos2vec_subset: None,
            scratch_pos2vec: StageCfg { epochs: 2, samples: 100_000, batch: 256, opt: adam(1e-3), precision: Precision::F32 },
            scratch_siamese: StageCfg { epochs: 12, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 },
        }
    }

    /// A seconds-long run for tests and smoke checks.
    pub fn tiny() -> Profile {
        let s = |epochs, samples| StageCfg { epochs, samples, batch: 64, opt: OptCfg::Adam { lr: 1e-3, decay: 1.0, weight_decay: 0.0 }, precision: Precision::F32 };
        Profile {
            name: "tiny",
            mirror: true,
            val_pairs: 2_000,
            pos2vec: s(1, 2_000),
            siamese: s(3, 4_000),
            distill_tower: s(1, 2_000),
            distill_full: s(2, 4_000),
            distill_arch: Arch::small(),
            compact: s(2, 4_000),
            compact_aux: AuxPairs::NONE,
            value: s(2, 4_000),
            value_arch: ValueArch::compact(),
            searched: s(1, 1_000),
            searched_positions: 64,
            searched_depth: 2,
            searched_rounds: 1,
            searched_lambda: 1.0,
            pos2vec_subset: None,
            scratch_pos2vec: s(1, 2_000),
            scratch_siamese: s(2, 4_000),
        }
    }

    /// The DeepChess phase alone, short, for accuracy-against-data-size curves
    /// (`--phases siamese --max-positions N`).
    pub fn curve() -> Profile {
        let mut p = Profile::quick();
        p.name = "curve";
        p.siamese = StageCfg { epochs: 6, samples: 100_000, ..p.siamese };
        p
    }

    /// The paper's regime on a small corpus (docs/results.md, "The paper's 98 %"): no
    /// mirroring, and a Siamese phase long enough that training accuracy passes 97 %
    /// (the paper's 98.2 %), to see where the two validation protocols part.
    pub fn memorise() -> Profile {
        let adam = |lr: f32| OptCfg::Adam { lr, decay: 0.98, weight_decay: 1e-4 };
        let mut p = Profile::quick();
        p.name = "memorise";
        p.mirror = false;
        p.siamese = StageCfg { epochs: 100, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 };
        p.distill_full = StageCfg { epochs: 40, samples: 200_000, batch: 256, opt: adam(5e-4), precision: Precision::F32 };
        p
    }

    /// The profile with `precision` for the products of every stage that trains a comparator
    /// or an autoencoder layer (`--precision`). The tower's distillation keeps f32: it ran in
    /// f32 before the setting was a stage's, and its nets stay as they were.
    pub fn with_precision(mut self, precision: Precision) -> Profile {
        for c in [&mut self.pos2vec, &mut self.siamese, &mut self.distill_full, &mut self.compact, &mut self.scratch_pos2vec, &mut self.scratch_siamese] {
            c.precision = precision;
        }
        self
    }
}

/// `profile` with the flags' overrides (`deepchess train`'s), each checked.
pub fn overrides(cli: &TrainCli, mut prof: Profile) -> Result<Profile, CliError> {
    let p = cli.p;
    if p.has("no-mirror") {
        prof.mirror = false;
    }
    cli.set("siamese-epochs", &mut prof.siamese.epochs, |&e| e >= 1, "must be at least 1")?;
    if let Some(a) = p.get("distill-arch") {
        prof.distill_arch = Arch::parse(a)
            .ok_or_else(|| cli.usage(format!("bad --distill-arch '{a}' (want 773-W-...-F/H-...-2, e.g. 773-32-32-32/32-32-2)")))?;
        // A student the search could not play is refused before hours of training.
        super::infer::playable(&prof.distill_arch).map_err(|e| cli.usage(format!("--distill-arch '{a}' cannot play: {e}")))?;
    }
    if let Some(a) = p.get("value-arch") {
        prof.value_arch = ValueArch::parse(a).ok_or_else(|| cli.usage(format!("bad --value-arch '{a}' (want 773-W-...-1, e.g. 773-64-32-1)")))?;
        super::infer::ValueStudent::fits(&prof.value_arch).map_err(|e| cli.usage(format!("--value-arch '{a}' cannot play: {e}")))?;
    }
    cli.set("distill-epochs", &mut prof.distill_full.epochs, |&e| e >= 1, "must be at least 1")?;
    cli.set("searched-rounds", &mut prof.searched_rounds, |&r| (1..=100).contains(&r), "must be 1 to 100")?;
    cli.set("searched-depth", &mut prof.searched_depth, |&d| (1..=30).contains(&d), "must be 1 to 30")?;
    cli.set("searched-positions", &mut prof.searched_positions, |&n| n >= 1, "must be at least 1")?;
    // The positions, their searches and the examples are held at once (searched_examples).
    let each = 3 * std::mem::size_of::<(Features, f32)>() + std::mem::size_of::<(Features, bool)>();
    crate::io::pages::check_fits(&format!("--searched-positions {}", prof.searched_positions), prof.searched_positions as u128 * each as u128)
        .map_err(|e| cli.usage(e))?;
    cli.set("searched-lambda", &mut prof.searched_lambda, |&l| l > 0.0 && l <= 1.0, "must be above 0 and at most 1")?;
    if p.get("pos2vec-subset").is_some() {
        let n: usize = p.get_or("train", "pos2vec-subset", 0)?;
        prof.pos2vec_subset = (n > 0).then_some(n);
    }
    if let Some(a) = p.get("compact-aux") {
        prof.compact_aux = AuxPairs::parse(a).map_err(|e| cli.usage(format!("bad --compact-aux '{a}': {e}")))?;
    }
    // A timing run: every stage's epochs capped, so a long schedule's wall time can be
    // computed from measured epochs (docs/benchmarks.md, the paper profile's wall time).
    let mut cap = usize::MAX;
    cli.set("epochs-cap", &mut cap, |&e| e >= 1, "must be at least 1")?;
    for c in [
        &mut prof.pos2vec,
        &mut prof.siamese,
        &mut prof.distill_tower,
        &mut prof.distill_full,
        &mut prof.compact,
        &mut prof.value,
        &mut prof.searched,
        &mut prof.scratch_pos2vec,
        &mut prof.scratch_siamese,
    ] {
        c.epochs = c.epochs.min(cap);
    }
    Ok(prof)
}
