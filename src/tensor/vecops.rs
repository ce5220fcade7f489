//! Small vector loops (row additions for the sparse layer, optimizer updates) compiled
//! three times: generic Rust, and under `#[target_feature]` wrappers so the compiler
//! vectorises them for AVX2 / AVX-512. Dispatched with the same [`Kernel`] as GEMM.

use super::gemm::Kernel;

#[inline(always)]
fn add_generic(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_avx2(dst: &mut [f32], src: &[f32]) {
    add_generic(dst, src)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn add_avx512(dst: &mut [f32], src: &[f32]) {
    add_generic(dst, src)
}

/// `dst += src` elementwise (over the shorter length) with the given kernel flavour.
#[inline]
pub fn add_assign_with(k: Kernel, dst: &mut [f32], src: &[f32]) {
    match k {
        // Safety: the flavour was checked available when it was selected.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { add_avx2(dst, src) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { add_avx512(dst, src) },
        _ => add_generic(dst, src),
    }
}

/// Adds the rows `rows` of row-major `w` (row length `len` taken from `dst`, starting at
/// column `col0`) into `dst`. The inner loop of the sparse layer's forward pass.
#[inline(always)]
fn gather_add_generic(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    let len = dst.len();
    for &r in rows {
        let s = &w[r as usize * ld + col0..r as usize * ld + col0 + len];
        for (d, x) in dst.iter_mut().zip(s) {
            *d += *x;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gather_add_avx2(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    gather_add_generic(dst, w, ld, col0, rows)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather_add_avx512(dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    gather_add_generic(dst, w, ld, col0, rows)
}

/// `dst += Σ_r w[r, col0 .. col0+dst.len()]` for each `r` in `rows` (indices already checked).
#[inline]
pub fn gather_add_with(k: Kernel, dst: &mut [f32], w: &[f32], ld: usize, col0: usize, rows: &[u32]) {
    match k {
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 if k.available() => unsafe { gather_add_avx2(dst, w, ld, col0, rows) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 if k.available() => unsafe { gather_add_avx512(dst, w, ld, col0, rows) },
        _ => gather_add_generic(dst, w, ld, col0, rows),
    }
}
