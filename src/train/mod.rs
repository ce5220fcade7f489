//! The shared trainer: the epoch stage every training phase over a fixed sample set runs in
//! ([`stage::Ctx::run_stage`]: per-epoch random streams, a checkpoint after each epoch,
//! `--resume`), the episode stage of systems that learn from games they play themselves
//! ([`stage::Ctx::run_episodes`]: games in parallel, trajectories handed to the learner in
//! batches, a checkpoint after each batch), checkpoints and optimizer settings, the record of
//! what defines a run (`run.txt`, compared on `--resume`) and of what each part of a run
//! belongs to ([`part`]: checked before a resume takes a file up), the run every system's
//! `train` follows, its steps owned once ([`driver`]: a system supplies a recipe) and their
//! pieces ([`run`]: flags and profile overrides, admission, results), a
//! system as the command line sees it ([`system`]), the progress line, the CSV log and its
//! SVG curves. It knows no model, no search and no player: a phase gives it parameters and an
//! epoch function, an episode learner its own move-choosing code.

pub mod checkpoint;
pub mod driver;
pub mod episode;
pub mod log;
pub mod part;
pub mod run;
pub mod settings;
pub mod stage;
pub mod system;
