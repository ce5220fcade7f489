//! Data: the 773-bit encoding, position sampling from games, W/L datasets on disk.

pub mod build;
pub mod datagen;
pub mod dataset;
pub mod encode;
pub mod sample;
