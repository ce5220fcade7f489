//! Products in bf16 on AMX tiles (Intel's Advanced Matrix Extensions), where the CPU and the
//! OS allow them: `tdpbf16ps` multiplies a 16 × 32 bf16 tile by a 32 × 16 one into 16 × 16
//! f32 sums, 8,192 multiply-adds in one instruction where an AVX-512 FMA does 16. The
//! precision is the bf16 path's ([`super::bf16`]): operands rounded to bf16 (to nearest even),
//! products exact, sums in f32 (in another order than the vector kernels', so the results agree
//! within float tolerance, not bit for bit).
//!
//! The tiles read the operands cut into tiles of their own, not the driver's packed panels:
//! each product converts A and B into bf16 pairs along k and cuts them into 1 KB tiles, zero
//! beyond the operands (rows and columns to 32, pairs to 16), so every tile is whole and is
//! read with a 64-byte stride. A's tile: 16 rows of A, 16 pairs each; B's: 16 pairs of k as
//! its rows, 16 columns across (the layout `tdpbf16ps` wants for its second operand); copied or
//! transposed in registers as the product's transposition needs. A block of 32 × 32 of C is
//! four tiles summed over all of k (no k blocks: C is read and written once), its epilogue (α,
//! β's C or a bias, a ReLU, a mask) done with AVX-512 on the stored sums; C's edges are cut in
//! those stores.
//!
//! The instructions are written with `asm!` (Rust has no stable AMX intrinsics); the tile
//! registers are named only inside these blocks, and each product configures them
//! (`ldtilecfg`) and releases them (`tilerelease`) on its own thread. Linux hands the tile
//! state to a process that asks for it (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), asked once.
//! `DEEPCHESS_AMX=off` keeps bf16 products on the vector kernels (to compare the two).

use super::bf16;
use super::driver::Epilogue;
use crate::tensor::runtime::threads::parallel_ranges;
use std::arch::asm;
use std::arch::x86_64::*;
use std::sync::OnceLock;

/// Whether bf16 products run on AMX tiles here: the CPU has AMX-TILE and AMX-BF16, the vector
/// conversions' AVX-512 BF16, the OS granted the tile state, and `DEEPCHESS_AMX` is not `off`.
pub fn available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        if std::env::var("DEEPCHESS_AMX").is_ok_and(|v| v == "off" || v == "0") {
            return false;
        }
        // CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE.
        let leaf = __cpuid_count(7, 0);
        let cpu = leaf.edx >> 22 & 1 == 1 && leaf.edx >> 24 & 1 == 1;
        cpu && bf16::bf16_instructions() && os_grants_tiles()
    })
}

/// Asks Linux for the tile data state (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`):
/// without it the first tile instruction faults. A kernel without AMX support refuses.
#[cfg(target_os = "linux")]
fn os_grants_tiles() -> bool {
    const SYS_ARCH_PRCTL: i64 = 158;
    const ARCH_REQ_XCOMP_PERM: i64 = 0x1023;
    const XFEATURE_XTILEDATA: i64 = 18;
    let ret: i64;
    // Safety: a system call that changes only this process's permitted state components.
    unsafe {
        asm!("syscall", inlateout("rax") SYS_ARCH_PRCTL => ret, in("rdi") ARCH_REQ_XCOMP_PERM, in("rsi") XFEATURE_XTILEDATA,
             lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ret == 0
}

#[cfg(not(target_os = "linux"))]
fn os_grants_tiles() -> bool {
    false
}

/// Rows and columns of C per block (2 × 2 tiles), and the words of one tile: 16 rows of 16
/// 32-bit words (bf16 pairs), 1 KB read with a 64-byte stride.
const BLOCK: usize = 32;
const TILE: usize = 256;

/// `C = alpha · op(A) · op(B) + (overwrite ? 0 : C)` with `ep`'s epilogue, on AMX tiles,
/// the column blocks shared over up to `nthreads` threads (each element's sums are the same
/// whatever the split). `abuf` and `bbuf` hold the operands as tiles.
///
/// Safety: [`available`] is true; the operands are valid for their shapes and strides (A
/// stored `m × k` when its flag says k runs along its rows, else `k × m`; B `n × k` when
/// its flag says so, else `k × n`); C holds `m` rows of `n` with stride `ldc`; `ep` covers C.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm(
    nthreads: usize,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: (*const f32, usize, bool),
    b: (*const f32, usize, bool),
    c: *mut f32,
    ldc: usize,
    overwrite: bool,
    ep: &Epilogue,
    abuf: &mut Vec<f32>,
    bbuf: &mut Vec<f32>,
) {
    let k2 = k.div_ceil(2);
    // Tiles along m and n (16 rows or columns each, an even number) and along k (16 pairs).
    let (mt, nt, kt) = (2 * m.div_ceil(BLOCK), 2 * n.div_ceil(BLOCK), k2.div_ceil(16));
    abuf.resize(mt * kt * TILE, 0.0);
    bbuf.resize(nt * kt * TILE, 0.0);
    // A's tile (R, C): rows 16R.. of A, pairs 16C.. along k, a row of A per tile row.
    cut(a, m, k, abuf.as_mut_ptr(), mt, kt, false);
    // B's tile (J, C): pairs 16C.. along k as its rows, columns 16J.. of B.
    cut(b, n, k, bbuf.as_mut_ptr(), nt, kt, true);
    let (ap, bp) = (abuf.as_ptr() as usize, bbuf.as_ptr() as usize);
    let (cp, epv) = (c as usize, *ep);
    let threads = if 2 * m * n * k < super::PAR_MIN_FLOPS { 1 } else { nthreads.max(1) };
    parallel_ranges(nt * 16, threads, BLOCK, |r| {
        // Safety: each thread writes its own columns of C; the tiles are read only.
        unsafe { blocks(m, n, kt, alpha, ap as *const f32, bp as *const f32, cp as *mut f32, ldc, overwrite, &epv, r) }
    });
}

/// An operand as `n_other × kt` tiles of bf16 pairs: A's (`b_side` false: a row of A per tile
/// row) or B's (a pair of k per tile row, the columns of B across it). The operand is `other`
/// rows (of A) or columns (of B) by k, stored with k along its rows when its flag says so.
///
/// Safety: as [`gemm`]'s for the operand; `dst` holds `n_other·kt·TILE` values.
unsafe fn cut((src, ld, k_in_rows): (*const f32, usize, bool), other: usize, k: usize, dst: *mut f32, n_other: usize, kt: usize, b_side: bool) {
    let k2 = k.div_ceil(2);
    with_scratch(other * k2, |t| {
        if k_in_rows {
            bf16::pairs_along_into(src, ld, other, k, t, k2);
            tiles(t, other, k2, dst, n_other, kt, false, b_side);
        } else {
            bf16::pairs_across_into(src, ld, k, other, t, other);
            tiles(t, k2, other, dst, n_other, kt, true, !b_side);
        }
    });
}

/// Runs `f` on this thread's scratch buffer of at least `len` values (kept between products).
fn with_scratch(len: usize, f: impl FnOnce(*mut f32)) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < len {
            s.resize(len, 0.0);
        }
        f(s.as_mut_ptr())
    })
}

/// A row-major `rows × cols` matrix of 32-bit words `s` cut into `na × nb` tiles in `dst`,
/// tile (a, b) at `(a·nb + b)·TILE`, zero beyond `s`. Tile (a, b) holds the 16 × 16 block
/// (a, b) of `s`, or block (b, a) when `swap`; transposed when `transpose`. Words are moved
/// as bits.
///
/// Safety: `s` holds `rows·cols` words, `dst` `na·nb·TILE`; the CPU has AVX-512F.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn tiles(s: *const f32, rows: usize, cols: usize, dst: *mut f32, na: usize, nb: usize, swap: bool, transpose: bool) {
    let (s, dst) = (s as *const u32, dst as *mut u32);
    for ta in 0..na {
        for tb in 0..nb {
            let (br, bc) = if swap { (tb, ta) } else { (ta, tb) };
            let (r0, c0) = (16 * br, 16 * bc);
            let d = dst.add((ta * nb + tb) * TILE);
            let (h, w) = (rows.saturating_sub(r0).min(16), cols.saturating_sub(c0).min(16));
            if !transpose {
                // Row x of the tile is row r0 + x of the block: one masked copy each.
                let mk: __mmask16 = ((1u32 << w) - 1) as __mmask16;
                for x in 0..16 {
                    let v = if x < h { _mm512_maskz_loadu_epi32(mk, s.add((r0 + x) * cols + c0) as *const i32) } else { _mm512_setzero_si512() };
                    _mm512_storeu_si512(d.add(16 * x) as *mut _, v);
                }
            } else if h == 16 && w == 16 {
                transpose16(s.add(r0 * cols + c0), cols, d);
            } else {
                for x in 0..16 {
                    for y in 0..16 {
                        *d.add(16 * x + y) = if y < h && x < w { *s.add((r0 + y) * cols + c0 + x) } else { 0 };
                    }
                }
            }
        }
    }
}

/// `d[16x + y] = s[y·ld + x]` for a whole 16 × 16 block of 32-bit words, in registers:
/// pairs of rows interleaved by words, then by double words, then 128-bit lanes gathered.
///
/// Safety: `s` holds 16 rows of 16 words with stride `ld`, `d` 256 words.
#[target_feature(enable = "avx512f")]
unsafe fn transpose16(s: *const u32, ld: usize, d: *mut u32) {
    let mut r = [_mm512_setzero_si512(); 16];
    for (y, v) in r.iter_mut().enumerate() {
        *v = _mm512_loadu_si512(s.add(y * ld) as *const _);
    }
    // t[2i], t[2i+1]: rows 2i and 2i+1 interleaved (words 0, 1 and 2, 3 of each lane).
    let mut t = [_mm512_setzero_si512(); 16];
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // u[4q + j], lane L: rows 4q..4q+4 of column 4L + j.
    let mut u = [_mm512_setzero_si512(); 16];
    for q in 0..4 {
        let b = 4 * q;
        u[b] = _mm512_unpacklo_epi64(t[b], t[b + 2]);
        u[b + 1] = _mm512_unpackhi_epi64(t[b], t[b + 2]);
        u[b + 2] = _mm512_unpacklo_epi64(t[b + 1], t[b + 3]);
        u[b + 3] = _mm512_unpackhi_epi64(t[b + 1], t[b + 3]);
    }
    // Column 4L + j: lane L of u[j], u[4 + j], u[8 + j], u[12 + j].
    for j in 0..4 {
        let x0 = _mm512_shuffle_i32x4::<0x88>(u[j], u[4 + j]);
        let x1 = _mm512_shuffle_i32x4::<0xdd>(u[j], u[4 + j]);
        let y0 = _mm512_shuffle_i32x4::<0x88>(u[8 + j], u[12 + j]);
        let y1 = _mm512_shuffle_i32x4::<0xdd>(u[8 + j], u[12 + j]);
        _mm512_storeu_si512(d.add(16 * j) as *mut _, _mm512_shuffle_i32x4::<0x88>(x0, y0));
        _mm512_storeu_si512(d.add(16 * (4 + j)) as *mut _, _mm512_shuffle_i32x4::<0x88>(x1, y1));
        _mm512_storeu_si512(d.add(16 * (8 + j)) as *mut _, _mm512_shuffle_i32x4::<0xdd>(x0, y0));
        _mm512_storeu_si512(d.add(16 * (12 + j)) as *mut _, _mm512_shuffle_i32x4::<0xdd>(x1, y1));
    }
}

/// The tile configuration: palette 1, tiles 0–7 of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct Config([u8; 64]);

impl Config {
    fn new() -> Config {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..8 {
            c[16 + 2 * t] = 64; // bytes per row (u16, little-endian)
            c[48 + t] = 16; // rows
        }
        Config(c)
    }
}

/// The blocks of C in columns `cols` (a range of the padded width, from a multiple of 32).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn blocks(
    m: usize,
    n: usize,
    kt: usize,
    alpha: f32,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    overwrite: bool,
    ep: &Epilogue,
    cols: std::ops::Range<usize>,
) {
    let cfg = Config::new();
    let mut sums = Sums([0.0; BLOCK * BLOCK]);
    let (st, ss) = (64usize, BLOCK * 4);
    asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
    let mut j0 = cols.start;
    while j0 < cols.end && j0 < n {
        let b0 = b.add((j0 / 16) * kt * TILE);
        let mut i0 = 0;
        while i0 < m {
            asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nostack, nomem));
            let (mut pa, mut pb) = (a.add((i0 / 16) * kt * TILE), b0);
            for _ in 0..kt {
                asm!(
                    "tileloadd tmm4, [{a} + {st}*1]",
                    "tileloadd tmm6, [{b} + {st}*1]",
                    "tdpbf16ps tmm0, tmm4, tmm6",
                    "tileloadd tmm7, [{b2} + {st}*1]",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    "tileloadd tmm5, [{a2} + {st}*1]",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7",
                    a = in(reg) pa, a2 = in(reg) pa.add(kt * TILE), b = in(reg) pb, b2 = in(reg) pb.add(kt * TILE),
                    st = in(reg) st, options(nostack, readonly),
                );
                pa = pa.add(TILE);
                pb = pb.add(TILE);
            }
            let s = sums.0.as_mut_ptr();
            asm!(
                "tilestored [{s0} + {ss}*1], tmm0",
                "tilestored [{s1} + {ss}*1], tmm1",
                "tilestored [{s2} + {ss}*1], tmm2",
                "tilestored [{s3} + {ss}*1], tmm3",
                s0 = in(reg) s, s1 = in(reg) s.add(16), s2 = in(reg) s.add(16 * BLOCK), s3 = in(reg) s.add(16 * BLOCK + 16),
                ss = in(reg) ss, options(nostack),
            );
            store(&sums, (m - i0).min(BLOCK), (n - j0).min(BLOCK), alpha, c.add(i0 * ldc + j0), ldc, overwrite, &ep.at(i0, j0));
            i0 += BLOCK;
        }
        j0 += BLOCK;
    }
    asm!("tilerelease", options(nostack, nomem));
}

#[repr(C, align(64))]
struct Sums([f32; BLOCK * BLOCK]);

/// A block's sums into C (`rows × cols` of it): `alpha·s` added to C's values, or to the
/// bias (or zero) when `overwrite`; then the ReLU and the mask, as the vector kernels' stores
/// ([`super::kernels`]) do them.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn store(sums: &Sums, rows: usize, cols: usize, alpha: f32, c: *mut f32, ldc: usize, overwrite: bool, ep: &Epilogue) {
    let al = _mm512_set1_ps(alpha);
    let zero = _mm512_setzero_ps();
    for h in 0..2 {
        let w = cols.saturating_sub(16 * h).min(16);
        if w == 0 {
            break;
        }
        let mk: __mmask16 = ((1u32 << w) - 1) as __mmask16;
        let init = if overwrite && !ep.bias.is_null() { _mm512_maskz_loadu_ps(mk, ep.bias.add(16 * h)) } else { zero };
        for i in 0..rows {
            let p = c.add(i * ldc + 16 * h);
            let old = if overwrite { init } else { _mm512_maskz_loadu_ps(mk, p) };
            let mut y = _mm512_fmadd_ps(al, _mm512_load_ps(sums.0.as_ptr().add(i * BLOCK + 16 * h)), old);
            if ep.relu {
                y = _mm512_max_ps(y, zero);
            }
            if !ep.mask.is_null() {
                let x = _mm512_maskz_loadu_ps(mk, ep.mask.add(i * ep.mask_ld + 16 * h));
                y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, zero), y);
            }
            _mm512_mask_storeu_ps(p, mk, y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector transpose and copies give the words the tiles' definition says, on shapes
    /// with whole and partial blocks, for every layout.
    #[test]
    fn tiles_hold_their_blocks() {
        if !is_x86_feature_detected!("avx512f") {
            return;
        }
        for (rows, cols) in [(16usize, 16usize), (32, 48), (17, 5), (40, 33), (1, 1)] {
            let s: Vec<f32> = (0..rows * cols).map(|i| f32::from_bits(0x1000_0000 + i as u32)).collect();
            for (swap, transpose) in [(false, false), (true, false), (false, true), (true, true)] {
                let (ra, rb) = (rows.div_ceil(16), cols.div_ceil(16));
                let (na, nb) = if swap { (rb, ra) } else { (ra, rb) };
                let mut got = vec![f32::NAN; na * nb * TILE];
                unsafe { tiles(s.as_ptr(), rows, cols, got.as_mut_ptr(), na, nb, swap, transpose) };
                for a in 0..na {
                    for b in 0..nb {
                        let (br, bc) = if swap { (b, a) } else { (a, b) };
                        for x in 0..16 {
                            for y in 0..16 {
                                let (r, c) = if transpose { (16 * br + y, 16 * bc + x) } else { (16 * br + x, 16 * bc + y) };
                                let want = if r < rows && c < cols { s[r * cols + c].to_bits() } else { 0 };
                                let at = (a * nb + b) * TILE + 16 * x + y;
                                assert_eq!(got[at].to_bits(), want, "{rows}×{cols} swap {swap} transpose {transpose}: tile ({a}, {b}) ({x}, {y})");
                            }
                        }
                    }
                }
            }
        }
    }
}
