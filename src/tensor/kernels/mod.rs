//! Kernels: the SIMD instruction flavours and half floats (`simd`), GEMM with its micro-kernels (`gemm`),
//! vector operations (`vecops`) and the FMA peak the benchmarks compare with (`peak`). Every
//! kernel has a portable loop and SIMD flavours chosen at run time, equal within tolerance.

pub mod gemm;
pub mod peak;
pub mod precision;
pub mod simd;
pub mod vecops;
