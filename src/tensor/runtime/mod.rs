//! The parallel runtime: kept threads (`crew`) behind `threads`, data-parallel training
//! steps (`shards`) and the help between shards (`help`). Nothing here changes a bit of a
//! result: work is split so that every element is computed the same way.

pub(crate) mod crew;
pub mod help;
pub mod memory;
pub mod shards;
pub mod threads;
