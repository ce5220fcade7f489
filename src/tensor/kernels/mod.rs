//! Kernels: the SIMD instruction flavours and half floats (`simd`), GEMM with its micro-kernels (`gemm`),
//! vector operations (`vecops`), the optimizers' passes (`update`) and the FMA peak the benchmarks compare with (`peak`). Every
//! kernel has a portable loop and SIMD flavours chosen at run time, equal within tolerance.
//!
//! Every decision about instruction sets is taken here (`tests/house_layering.rs` checks that no
//! `#[target_feature]` or `is_x86_feature_detected!` appears elsewhere): code outside that is
//! generic over the flavour runs through `dispatch` (`Kernel::run`).

pub(crate) mod dispatch;
pub mod bits;
pub mod gemm;
pub mod int8;
pub mod peak;
pub mod precision;
pub mod simd;
pub mod update;
pub mod vecops;
