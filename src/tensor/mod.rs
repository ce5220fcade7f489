//! The numeric engine, on std only: [`Matrix`], GEMM with run-time dispatched SIMD
//! kernels, the sparse binary input layer, threads, an autograd [`Tape`], optimizers,
//! seedable [`Rng`] and initialisers, and versioned weight files.
//!
//! Nothing here knows about chess: inputs are matrices and lists of active features.

pub mod backward;
pub mod error;
pub mod gemm;
pub mod layers;
pub mod matrix;
pub mod optim;
pub mod params;
pub mod rng;
pub mod sparse;
pub mod tape;
pub mod threads;
pub mod vecops;
pub mod weights;

pub use error::{Result, TensorError};
pub use gemm::{active_kernel, gemm, gemm_with, set_kernel, Kernel, Trans};
pub use matrix::Matrix;
pub use optim::{Adam, Optimizer, Sgd};
pub use params::{ParamId, Params};
pub use rng::{Init, Rng};
pub use sparse::SparseBatch;
pub use tape::{Tape, Var};
pub use weights::WeightFile;
pub use threads::{set_threads, threads};
