//! Data: the 773-bit encoding, position sampling from games, W/L datasets on disk.

pub mod build;
pub mod dataset;
pub mod datagen;
pub mod sample;
