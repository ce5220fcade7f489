//! Training (paper section 3): Pos2Vec pretraining, the DeepChess Siamese comparator,
//! and distillation into a small network. See `run.rs` for the whole pipeline.

pub mod common;
pub mod log;
pub mod phases;
pub mod run;
pub mod stage;
