//! Packing of the GEMM's operands into the contiguous micro-panels the micro-kernels read
//! (BLIS's `packm`): A in panels of `mr` rows, B in panels of `nr` columns, within a
//! panel the values of one k step adjacent. Each layout a product's operands come in
//! (row-major, transposed) has its own path, in 256-bit moves and register transposes
//! where the element-by-element loops cost more than the products they feed.

use super::view::View;

/// Copies `n` floats (a micro-panel row: at most 16 or so). An inline loop: the library
/// `memcpy` call that `copy_nonoverlapping` becomes for a run-time length cost more than
/// the copy at these sizes (a sixth of a batch-32 GEMM's time went to it).
#[inline(always)]
pub(super) unsafe fn copy_short(src: *const f32, dst: *mut f32, n: usize) {
    for i in 0..n {
        *dst.add(i) = *src.add(i);
    }
}

/// Packs the `mc × kc` block of A into micro-panels of `mr` rows: within a panel,
/// the `mr` values of one k step are adjacent. Short panels are zero-padded.
pub(super) unsafe fn pack_a(mc: usize, kc: usize, mr: usize, a: View, dst: *mut f32) {
    for i0 in (0..mc).step_by(mr) {
        let h = mr.min(mc - i0);
        let d = dst.add(i0 * kc);
        let src = a.ptr.add(i0 * a.rs);
        if a.rs == 1 {
            // op(A) = Aᵀ of a row-major matrix: the mr values of a k step are contiguous.
            #[cfg(target_arch = "x86_64")]
            if mr == 6 && h == 6 && std::arch::is_x86_feature_detected!("avx") {
                // Four and two floats per k step in two moves (the element loop below was
                // a third of the packing of a weight gradient's `Xᵀ·G`).
                copy6_avx(src, a.cs, d, kc);
                continue;
            }
            #[cfg(target_arch = "x86_64")]
            if mr == 12 && h == 12 && std::arch::is_x86_feature_detected!("avx") {
                copy12_avx(src, a.cs, d, kc);
                continue;
            }
            // A short last panel: its padding zeroed once, then its rows copied (zeroing
            // `mr - h` lanes a step became a library `memset` call a step).
            if h < mr {
                for i in 0..mr * kc {
                    *d.add(i) = 0.0;
                }
            }
            for p in 0..kc {
                copy_short(src.add(p * a.cs), d.add(p * mr), h);
            }
        } else {
            // Row-major A, a whole panel of the AVX2 tile's six rows or the AVX-512 tile's
            // twelve, eight k steps at a time: transposed in registers (the element-by-element
            // loop below was a quarter of the driver's time in training steps); the last
            // `kc % 8` steps go through that loop.
            #[cfg(target_arch = "x86_64")]
            if h == mr && a.cs == 1 && kc >= 8 && std::arch::is_x86_feature_detected!("avx") {
                let block: Option<unsafe fn(*const f32, usize, *mut f32)> = match mr {
                    6 => Some(transpose6x8_avx),
                    12 => Some(transpose12x8_avx),
                    _ => None,
                };
                if let Some(block) = block {
                    let k8 = kc - kc % 8;
                    for p in (0..k8).step_by(8) {
                        block(src.add(p), a.rs, d.add(p * mr));
                    }
                    for i in 0..mr {
                        let s = src.add(i * a.rs);
                        for p in k8..kc {
                            *d.add(p * mr + i) = *s.add(p);
                        }
                    }
                    continue;
                }
            }
            // Row-major A: read each row contiguously, scatter with stride mr.
            scatter(h, mr, kc, src, a.rs, a.cs, d);
        }
    }
}

/// One micro-panel `width` wide packed element by element: run `i < h` of the source
/// (starting `i·between` floats after `src`, one value every `step`) read in order and
/// scattered with stride `width` (`d[p·width + i]`); the lanes from `h` to `width` zeroed.
unsafe fn scatter(h: usize, width: usize, kc: usize, src: *const f32, between: usize, step: usize, d: *mut f32) {
    for i in 0..h {
        let s = src.add(i * between);
        for p in 0..kc {
            *d.add(p * width + i) = *s.add(p * step);
        }
    }
    for i in h..width {
        for p in 0..kc {
            *d.add(p * width + i) = 0.0;
        }
    }
}

/// Packs the `kc × nc` panel of B into micro-panels of `nr` columns: within a panel,
/// the `nr` values of one k step are adjacent. Short panels are zero-padded.
pub(super) unsafe fn pack_b(kc: usize, nc: usize, nr: usize, b: View, dst: *mut f32) {
    if b.cs == 1 {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            // Whole 256-bit moves (the portable loop below compiles to 128-bit ones, and its
            // stores were most of the packing of `X·W`).
            return deal_rows_avx(kc, nc, nr, b, dst);
        }
        return deal_rows(kc, nc, nr, b, dst);
    }
    for j0 in (0..nc).step_by(nr) {
        let w = nr.min(nc - j0);
        let d = dst.add(j0 * kc);
        let src = b.ptr.add(j0 * b.cs);
        // op(B) = Bᵀ of a row-major matrix: read each stored row contiguously.
        #[cfg(target_arch = "x86_64")]
        if b.rs == 1 && w == nr && nr.is_multiple_of(8) && kc >= 8 && std::arch::is_x86_feature_detected!("avx") {
            // Whole 8×8 blocks in registers (a third of a batch-32 `h·Wᵀ` went to the
            // element-by-element loop below); the last `kc % 8` steps go through it.
            let k8 = kc - kc % 8;
            for jb in (0..nr).step_by(8) {
                for p in (0..k8).step_by(8) {
                    transpose8x8_avx(src.add(jb * b.cs + p), b.cs, d.add(p * nr + jb), nr);
                }
            }
            for j in 0..w {
                let s = src.add(j * b.cs);
                for p in k8..kc {
                    *d.add(p * nr + j) = *s.add(p);
                }
            }
            continue;
        }
        scatter(w, nr, kc, src, b.cs, b.rs, d);
    }
}

/// Row-major B read row by row (one sequential stream, which the prefetcher follows) and
/// dealt out to the micro-panels: panel by panel, each k step would touch a new line of a
/// matrix that is usually out of L2 by now.
#[inline(always)]
unsafe fn deal_rows(kc: usize, nc: usize, nr: usize, b: View, dst: *mut f32) {
    for p in 0..kc {
        let src = b.ptr.add(p * b.rs);
        for j0 in (0..nc).step_by(nr) {
            let w = nr.min(nc - j0);
            let dp = dst.add(j0 * kc + p * nr);
            copy_short(src.add(j0), dp, w);
            for j in w..nr {
                *dp.add(j) = 0.0;
            }
        }
    }
}

/// [`deal_rows`] with whole panels moved eight floats at a time.
///
/// Safety: as [`deal_rows`]'s, and AVX is available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn deal_rows_avx(kc: usize, nc: usize, nr: usize, b: View, dst: *mut f32) {
    use std::arch::x86_64::{_mm256_loadu_ps, _mm256_storeu_ps};
    if !nr.is_multiple_of(8) {
        return deal_rows(kc, nc, nr, b, dst);
    }
    let whole = nc - nc % nr;
    for p in 0..kc {
        let src = b.ptr.add(p * b.rs);
        for j0 in (0..whole).step_by(nr) {
            let dp = dst.add(j0 * kc + p * nr);
            for j in (0..nr).step_by(8) {
                _mm256_storeu_ps(dp.add(j), _mm256_loadu_ps(src.add(j0 + j)));
            }
        }
        if whole < nc {
            let w = nc - whole;
            let dp = dst.add(whole * kc + p * nr);
            copy_short(src.add(whole), dp, w);
            for j in w..nr {
                *dp.add(j) = 0.0;
            }
        }
    }
}

/// Eight rows of eight floats transposed in registers: `out[c]` holds column `c`.
///
/// Safety: AVX is available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn transpose8(r: [std::arch::x86_64::__m256; 8]) -> [std::arch::x86_64::__m256; 8] {
    use std::arch::x86_64::*;
    // Pairs of rows interleaved, then pairs of pairs, then the 128-bit halves swapped.
    let (t0, t1) = (_mm256_unpacklo_ps(r[0], r[1]), _mm256_unpackhi_ps(r[0], r[1]));
    let (t2, t3) = (_mm256_unpacklo_ps(r[2], r[3]), _mm256_unpackhi_ps(r[2], r[3]));
    let (t4, t5) = (_mm256_unpacklo_ps(r[4], r[5]), _mm256_unpackhi_ps(r[4], r[5]));
    let (t6, t7) = (_mm256_unpacklo_ps(r[6], r[7]), _mm256_unpackhi_ps(r[6], r[7]));
    let (s0, s1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2));
    let (s2, s3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
    let (s4, s5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6));
    let (s6, s7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
    [
        _mm256_permute2f128_ps::<0x20>(s0, s4),
        _mm256_permute2f128_ps::<0x20>(s1, s5),
        _mm256_permute2f128_ps::<0x20>(s2, s6),
        _mm256_permute2f128_ps::<0x20>(s3, s7),
        _mm256_permute2f128_ps::<0x31>(s0, s4),
        _mm256_permute2f128_ps::<0x31>(s1, s5),
        _mm256_permute2f128_ps::<0x31>(s2, s6),
        _mm256_permute2f128_ps::<0x31>(s3, s7),
    ]
}

/// `dst[c·ld_dst + r] = src[r·ld_src + c]` for an 8×8 block (unaligned loads and stores).
///
/// Safety: AVX is available, and both blocks are valid for 8 rows of 8 floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose8x8_avx(src: *const f32, ld_src: usize, dst: *mut f32, ld_dst: usize) {
    use std::arch::x86_64::*;
    let r = |i: usize| src.add(i * ld_src);
    let rows = [
        _mm256_loadu_ps(r(0)), _mm256_loadu_ps(r(1)), _mm256_loadu_ps(r(2)), _mm256_loadu_ps(r(3)),
        _mm256_loadu_ps(r(4)), _mm256_loadu_ps(r(5)), _mm256_loadu_ps(r(6)), _mm256_loadu_ps(r(7)),
    ];
    for (c, v) in transpose8(rows).into_iter().enumerate() {
        _mm256_storeu_ps(dst.add(c * ld_dst), v);
    }
}

/// Six rows of eight floats (row stride `ld_src`) transposed into eight groups of six at
/// `dst` (`dst[c·6 + r] = src[r·ld_src + c]`). Each group is stored as eight floats, the
/// last two of which the next group overwrites; the last group's two spill into the next
/// six floats after the block, which the caller writes later or leaves in slack.
///
/// Safety: AVX is available, the six rows are valid for eight floats, and `dst` for 50.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose6x8_avx(src: *const f32, ld_src: usize, dst: *mut f32) {
    use std::arch::x86_64::*;
    let r = |i: usize| src.add(i * ld_src);
    let z = _mm256_setzero_ps();
    let rows = [
        _mm256_loadu_ps(r(0)), _mm256_loadu_ps(r(1)), _mm256_loadu_ps(r(2)), _mm256_loadu_ps(r(3)),
        _mm256_loadu_ps(r(4)), _mm256_loadu_ps(r(5)), z, z,
    ];
    for (c, v) in transpose8(rows).into_iter().enumerate() {
        _mm256_storeu_ps(dst.add(c * 6), v);
    }
}

/// Twelve rows of eight floats (row stride `ld_src`) transposed into eight groups of twelve
/// at `dst` (`dst[c·12 + r] = src[r·ld_src + c]`): rows 0–7 as one 8×8 block, rows 8–11 as
/// the first halves of another (whose other rows are zero and not stored).
///
/// Safety: AVX is available, the twelve rows are valid for eight floats, `dst` for 96.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose12x8_avx(src: *const f32, ld_src: usize, dst: *mut f32) {
    use std::arch::x86_64::*;
    let r = |i: usize| _mm256_loadu_ps(src.add(i * ld_src));
    let z = _mm256_setzero_ps();
    let top = transpose8([r(0), r(1), r(2), r(3), r(4), r(5), r(6), r(7)]);
    let bottom = transpose8([r(8), r(9), r(10), r(11), z, z, z, z]);
    for c in 0..8 {
        _mm256_storeu_ps(dst.add(c * 12), top[c]);
        _mm_storeu_ps(dst.add(c * 12 + 8), _mm256_castps256_ps128(bottom[c]));
    }
}

/// `dst[p·12 .. p·12+12] = src[p·ld .. p·ld+12]` for `p < kc`: an 8-float and a 4-float
/// move a step.
///
/// Safety: AVX is available, each source run is valid for twelve floats, `dst` for `12·kc`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy12_avx(src: *const f32, ld: usize, dst: *mut f32, kc: usize) {
    use std::arch::x86_64::*;
    for p in 0..kc {
        let s = src.add(p * ld);
        let d = dst.add(p * 12);
        _mm256_storeu_ps(d, _mm256_loadu_ps(s));
        _mm_storeu_ps(d.add(8), _mm_loadu_ps(s.add(8)));
    }
}

/// `dst[p·6 .. p·6+6] = src[p·ld .. p·ld+6]` for `p < kc`: six floats a step as a 4-float
/// and a 2-float move, reading nothing past the six.
///
/// Safety: AVX is available, each source run is valid for six floats, `dst` for `6·kc`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy6_avx(src: *const f32, ld: usize, dst: *mut f32, kc: usize) {
    use std::arch::x86_64::*;
    for p in 0..kc {
        let s = src.add(p * ld);
        let d = dst.add(p * 6);
        _mm_storeu_ps(d, _mm_loadu_ps(s));
        _mm_store_sd(d.add(4) as *mut f64, _mm_load_sd(s.add(4) as *const f64));
    }
}
