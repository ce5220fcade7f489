//! The numeric engine, on std only, in floors by role; a module imports its own floor or
//! lower ones, never a higher one (docs/architecture.md, "Numerics"):
//! - [`runtime`], [`error`], [`rng`]: the thread floor under the kernels (the thread count
//!   and splits of work, kept threads, the help between threads, how freed memory is kept),
//!   errors, seedable random streams ([`Rng`]);
//! - [`kernels`]: the SIMD instruction flavours and half floats every kernel is written
//!   against ([`kernels::simd`]), GEMM on slices with run-time dispatched micro-kernels
//!   ([`kernels::gemm`]), the products' [`Precision`] ([`with_precision`]), vector
//!   operations, the FMA peak;
//! - [`matrix`]: [`Matrix`], its initialisers ([`Init`]) and the products on matrices
//!   ([`gemm`]); versioned [`weights`] files (written and read through `crate::io`);
//! - [`layers`]: forward functions shared by the tape and tape-free inference (affine,
//!   activations, losses), the sparse binary input layer, 2-D convolution and max pooling
//!   over NHWC rows, the padded half-precision dense layer of one-position inference;
//! - [`autograd`]: the [`Tape`] (with dropout), its backward pass, the [`Params`] store;
//! - [`optim`]: SGD, Adam, learning-rate policies, and [`optim::shards`], the data-parallel
//!   training step; [`NetFile`], a system's net as a file (kind and architecture in the
//!   header, save and load provided), its [`Architecture`] declared as data ([`net_arch`]:
//!   the header's fields and the layers, read, written and shape-checked once).
//!
//! Nothing here knows about chess: inputs are matrices and lists of active features.
//!
//! A training step (the shape the three training phases use):
//! ```
//! use deepchess::tensor::{Adam, Init, Matrix, Optimizer, Params, Rng, SparseBatch, Tape};
//! let mut rng = Rng::new(1);
//! let mut params = Params::new();
//! let w1 = params.add("l1.w", Init::HeNormal.matrix(773, 16, &mut rng)).unwrap();
//! let b1 = params.add("l1.b", Matrix::zeros(1, 16)).unwrap();
//! let w2 = params.add("out.w", Init::XavierUniform.matrix(32, 2, &mut rng)).unwrap();
//! let b2 = params.add("out.b", Matrix::zeros(1, 2)).unwrap();
//! // Two positions per example (set-bit indices), one tower applied to both (tied weights).
//! let a = SparseBatch::from_rows(773, &[vec![0u32, 100, 772]]).unwrap();
//! let b = SparseBatch::from_rows(773, &[vec![5u32, 300]]).unwrap();
//! let mut opt = Adam::new(1e-3);
//! let mut tape = Tape::new();
//! tape.reset(); // every step: same graph, buffers reused
//! let fa = tape.sparse_affine(&params, &a, w1, b1).unwrap();
//! let fa = tape.relu(fa).unwrap();
//! let fb = tape.sparse_affine(&params, &b, w1, b1).unwrap();
//! let fb = tape.relu(fb).unwrap();
//! let h = tape.concat(fa, fb).unwrap();
//! let z = tape.affine(&params, h, w2, b2).unwrap();
//! let y = tape.one_hot(&[0], 2).unwrap();
//! let loss = tape.softmax_cross_entropy(z, y).unwrap();
//! tape.backward(loss, &mut params).unwrap(); // w1 receives both towers' gradients
//! opt.step(&mut params); // updates, then clears the gradients
//! ```
//! Batches without a tape use the tape's own forward functions: [`layers::sparse::forward`],
//! [`layers::affine`], [`layers::relu_inplace`], [`layers::softmax_rows_inplace`]; one
//! position at a time (a search's evaluator), the padded half-precision [`layers::dense`] layer.

pub mod autograd;
pub mod error;
pub mod kernels;
pub mod layers;
mod lines;
pub mod matrix;
pub mod net_arch;
mod net_file;
pub mod optim;
pub mod rng;
pub mod runtime;
pub mod weights;

pub use autograd::params::{ParamId, Params};
pub use autograd::tape::{Tape, Var};
pub use error::{Result, TensorError};
pub use kernels::gemm::Trans;
pub use kernels::precision::{with_precision, Precision};
pub use kernels::simd::{active_kernel, set_kernel, Kernel};
pub use layers::conv::Conv2d;
pub use layers::pool::MaxPool2d;
pub use layers::sparse::SparseBatch;
pub use matrix::{gemm, gemm_with, Init, Matrix};
pub use optim::{Adam, LrPolicy, Optimizer, Sgd};
pub use rng::Rng;
pub use runtime::threads::{set_threads, threads};
pub use net_arch::{Architecture, Field, Layer, Value, Values};
pub use net_file::{params_of, NetFile};
pub use weights::WeightFile;
