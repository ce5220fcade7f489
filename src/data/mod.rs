//! Data: games to positions. PGN corpora read into sampled positions (sampling rules,
//! game-disjoint validation splits), W/L datasets on disk, and labelled sets (a game result
//! and an engine score per position, for seed 001). No engine play (datagen and the
//! labeller are in `arena`), no encoding (each system encodes a record's board itself).

pub mod build;
pub mod dataset;
pub mod escape;
pub mod labels;
pub mod sample;
