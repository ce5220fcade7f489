//! DeepChess (David, Netanyahu & Wolf, 2016; seed 000): everything of the paper in one
//! folder.

pub mod features;
pub mod model;
pub mod pairs;
pub mod phases;
pub mod pipeline;
pub mod inference;
