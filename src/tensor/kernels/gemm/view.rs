//! The operands as the GEMM's loops and packing see them: raw pointers with strides
//! (`A(i,p) = a[i*rs + p*cs]`), so transposed operands cost nothing extra.

/// A strided read-only operand. `Send` because the GEMM entry point checked bounds
/// and threads only read it.
#[derive(Clone, Copy)]
pub(crate) struct View {
    pub ptr: *const f32,
    pub rs: usize,
    pub cs: usize,
}
unsafe impl Send for View {}
unsafe impl Sync for View {}

/// The output: row-major with row stride `ld`; threads write disjoint tiles.
#[derive(Clone, Copy)]
pub(crate) struct OutView {
    pub ptr: *mut f32,
    pub ld: usize,
}
unsafe impl Send for OutView {}
unsafe impl Sync for OutView {}
