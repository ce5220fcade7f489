//! Data: games to positions. PGN corpora read into sampled positions (sampling rules,
//! game-disjoint validation splits) and W/L datasets on disk. No engine play (datagen is
//! in `arena`), no encoding (each system encodes a record's board itself).

pub mod build;
pub mod dataset;
pub mod sample;
