//! The numeric engine, on std only: [`Matrix`], GEMM with run-time dispatched SIMD
//! kernels, the sparse binary input layer, threads, an autograd [`Tape`], optimizers,
//! seedable [`Rng`] and initialisers, and versioned weight files.
//!
//! Nothing here knows about chess: inputs are matrices and lists of active features.

pub mod error;
pub mod gemm;
pub mod matrix;
pub mod rng;
pub mod sparse;
pub mod threads;
pub mod vecops;

pub use error::{Result, TensorError};
pub use gemm::{active_kernel, gemm, gemm_with, set_kernel, Kernel, Trans};
pub use matrix::Matrix;
pub use rng::{Init, Rng};
pub use sparse::SparseBatch;
pub use threads::{set_threads, threads};
