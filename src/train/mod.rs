//! The shared trainer: the epoch loop every training phase of every system runs in
//! ([`stage::Ctx::run_stage`]: per-epoch random streams, a checkpoint after each epoch,
//! `--resume`), checkpoints and optimizer settings, the record of what defines a run
//! (`run.txt`, compared on `--resume`), the progress line, the CSV log and its SVG curves. It
//! knows no model: a phase gives it parameters and an epoch function.

pub mod checkpoint;
pub mod log;
pub mod settings;
pub mod stage;
pub mod system;
