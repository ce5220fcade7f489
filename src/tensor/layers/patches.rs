//! A convolution's geometry ([`Conv2d`]) and its patch matrix ([`super::conv`]'s module doc):
//! im2col copies each window's rows of the input into a row of `P`, col2im adds a row of `dP`
//! back onto the input values it came from. Both run in the kernel flavour's vectors: as
//! library `memcpy` calls or one dispatched call per window segment (18 to 384 floats for
//! seed 002's net) they cost more than the moves themselves.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::kernels::dispatch::FlavourFn;
use crate::tensor::kernels::simd::{Flavour, Kernel, Scalar};

/// The geometry of a convolution layer (square strides and padding on both axes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2d {
    pub in_h: usize,
    pub in_w: usize,
    pub in_c: usize,
    pub out_c: usize,
    pub kh: usize,
    pub kw: usize,
    pub stride: usize,
    /// Zero padding added on every side.
    pub pad: usize,
}

impl Conv2d {
    /// Output rows: `(in_h + 2·pad - kh) / stride + 1` (meaningful once [`Conv2d::check`] passed).
    pub fn out_h(&self) -> usize {
        (self.in_h + 2 * self.pad).saturating_sub(self.kh) / self.stride.max(1) + 1
    }
    /// Output columns, as [`Conv2d::out_h`].
    pub fn out_w(&self) -> usize {
        (self.in_w + 2 * self.pad).saturating_sub(self.kw) / self.stride.max(1) + 1
    }
    /// Values per input sample: `in_h·in_w·in_c`.
    pub fn in_len(&self) -> usize {
        self.in_h * self.in_w * self.in_c
    }
    /// Values per output sample: `out_h·out_w·out_c`.
    pub fn out_len(&self) -> usize {
        self.out_h() * self.out_w() * self.out_c
    }
    /// Shape of the weight matrix: `(kh·kw·in_c, out_c)`, row `(ky·kw + kx)·in_c + c`.
    pub fn weight_shape(&self) -> (usize, usize) {
        (self.patch_len(), self.out_c)
    }
    /// Length of one row of the patch matrix.
    pub(super) fn patch_len(&self) -> usize {
        self.kh * self.kw * self.in_c
    }
    /// Output pixels per sample (rows of the patch matrix per sample).
    pub(super) fn pixels(&self) -> usize {
        self.out_h() * self.out_w()
    }

    /// Rejects zero sizes, a zero stride, a kernel larger than the padded input, and sizes
    /// whose products do not fit in memory indices.
    pub fn check(&self) -> Result<()> {
        let bad = |d: String| Err(TensorError::argument("conv2d", d));
        let dims = [("in_h", self.in_h), ("in_w", self.in_w), ("in_c", self.in_c), ("out_c", self.out_c), ("kh", self.kh), ("kw", self.kw), ("stride", self.stride)];
        if let Some((n, _)) = dims.iter().find(|(_, v)| *v == 0) {
            return bad(format!("{n} is 0 in {self:?}"));
        }
        let (ph, pw) = (self.in_h.checked_add(self.pad.saturating_mul(2)), self.in_w.checked_add(self.pad.saturating_mul(2)));
        match (ph, pw) {
            (Some(ph), Some(pw)) if self.kh <= ph && self.kw <= pw => {}
            _ => return bad(format!("kernel {}×{} larger than the padded input in {self:?}", self.kh, self.kw)),
        }
        let fits = [self.in_h, self.in_w, self.in_c].iter().try_fold(1usize, |a, &v| a.checked_mul(v)).is_some()
            && [self.kh, self.kw, self.in_c, self.out_c].iter().try_fold(1usize, |a, &v| a.checked_mul(v)).is_some()
            && [self.out_h(), self.out_w(), self.out_c.max(self.patch_len())].iter().try_fold(1usize, |a, &v| a.checked_mul(v)).is_some();
        if !fits {
            return bad(format!("sizes overflow in {self:?}"));
        }
        Ok(())
    }

    /// Forward flops per sample: 2 per multiply-add.
    pub fn flops(&self) -> f64 {
        2.0 * self.pixels() as f64 * self.patch_len() as f64 * self.out_c as f64
    }

    /// Whether a sample's patch matrix is its input as stored, so im2col can be skipped:
    /// a 1×1 kernel at stride 1 without padding, or one window covering the whole input.
    pub(super) fn patches_are_input(&self) -> bool {
        self.pad == 0 && ((self.kh == 1 && self.kw == 1 && self.stride == 1) || (self.kh == self.in_h && self.kw == self.in_w))
    }
}

/// Patch rows of `x` (whole samples, `in_len` values each) into `p` (see the module doc),
/// each window row moved with `k`'s vectors: as `copy_from_slice` each became a library
/// `memcpy` call, which cost more than the copy at these lengths (18 to 384 floats for
/// seed 002's net: 9 % of its training step).
pub(super) fn im2col(k: Kernel, s: &Conv2d, x: &[f32], p: &mut [f32]) {
    struct Job<'a>(&'a Conv2d, &'a [f32], &'a mut [f32]);
    impl FlavourFn for Job<'_> {
        type Output = ();
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) {
            im2col_rows::<F>(self.0, self.1, self.2)
        }
        fn portable(self) {
            // Safety: the scalar flavour runs everywhere.
            unsafe { im2col_rows::<Scalar>(self.0, self.1, self.2) }
        }
    }
    k.run(Job(s, x, p))
}

/// `dst = src` (the same length) in `F`'s vectors, then the last values one by one.
///
/// Safety: `F` runs on this CPU.
#[inline(always)]
unsafe fn copy_row<F: Flavour>(dst: &mut [f32], src: &[f32]) {
    let n = dst.len().min(src.len());
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let mut i = 0;
    while i + F::LANES <= n {
        F::store(d.add(i), F::load(s.add(i)));
        i += F::LANES;
    }
    while i < n {
        *d.add(i) = *s.add(i);
        i += 1;
    }
}

/// [`im2col`]'s loops.
///
/// Safety: `F` runs on this CPU.
#[inline(always)]
unsafe fn im2col_rows<F: Flavour>(s: &Conv2d, x: &[f32], p: &mut [f32]) {
    let (oh, ow, c) = (s.out_h(), s.out_w(), s.in_c);
    let seg = s.kw * c;
    let (ih, iw, pad) = (s.in_h as isize, s.in_w as isize, s.pad as isize);
    let mut rows = p.chunks_exact_mut(seg);
    for xs in x.chunks_exact(s.in_len()) {
        for oy in 0..oh {
            for ox in 0..ow {
                let ix0 = (ox * s.stride) as isize - pad;
                for ky in 0..s.kh {
                    let Some(dst) = rows.next() else { return };
                    let iy = (oy * s.stride + ky) as isize - pad;
                    if iy < 0 || iy >= ih {
                        dst.fill(0.0);
                    } else if ix0 >= 0 && ix0 + s.kw as isize <= iw {
                        let at = (iy * iw + ix0) as usize * c;
                        copy_row::<F>(dst, &xs[at..at + seg]);
                    } else {
                        for (kx, d) in dst.chunks_exact_mut(c).enumerate() {
                            let ix = ix0 + kx as isize;
                            if ix < 0 || ix >= iw {
                                d.fill(0.0);
                            } else {
                                let at = (iy * iw + ix) as usize * c;
                                copy_row::<F>(d, &xs[at..at + c]);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The adjoint of [`im2col`]: adds each patch value back onto the input value it came
/// from (values that came from the padding are dropped), in `k`'s vectors as [`im2col`]
/// moves them (a call per window segment cost more than its adds).
pub(super) fn col2im_add(k: Kernel, s: &Conv2d, dp: &[f32], dx: &mut [f32]) {
    struct Job<'a>(&'a Conv2d, &'a [f32], &'a mut [f32]);
    impl FlavourFn for Job<'_> {
        type Output = ();
        #[inline(always)]
        unsafe fn simd<F: Flavour>(self) {
            col2im_rows::<F>(self.0, self.1, self.2)
        }
        fn portable(self) {
            // Safety: the scalar flavour runs everywhere.
            unsafe { col2im_rows::<Scalar>(self.0, self.1, self.2) }
        }
    }
    k.run(Job(s, dp, dx))
}

/// `dst += src` (the same length) in `F`'s vectors, then the last values one by one: the
/// bits of the scalar sums (each lane one rounded addition).
///
/// Safety: `F` runs on this CPU.
#[inline(always)]
unsafe fn add_row<F: Flavour>(dst: &mut [f32], src: &[f32]) {
    let n = dst.len().min(src.len());
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let mut i = 0;
    while i + F::LANES <= n {
        F::store(d.add(i), F::add(F::load(d.add(i)), F::load(s.add(i))));
        i += F::LANES;
    }
    while i < n {
        *d.add(i) += *s.add(i);
        i += 1;
    }
}

/// [`col2im_add`]'s loops.
///
/// Safety: `F` runs on this CPU.
#[inline(always)]
unsafe fn col2im_rows<F: Flavour>(s: &Conv2d, dp: &[f32], dx: &mut [f32]) {
    let (oh, ow, c) = (s.out_h(), s.out_w(), s.in_c);
    let seg = s.kw * c;
    let (ih, iw, pad) = (s.in_h as isize, s.in_w as isize, s.pad as isize);
    let mut rows = dp.chunks_exact(seg);
    for xs in dx.chunks_exact_mut(s.in_len()) {
        for oy in 0..oh {
            for ox in 0..ow {
                let ix0 = (ox * s.stride) as isize - pad;
                for ky in 0..s.kh {
                    let Some(src) = rows.next() else { return };
                    let iy = (oy * s.stride + ky) as isize - pad;
                    if iy < 0 || iy >= ih {
                        continue;
                    }
                    if ix0 >= 0 && ix0 + s.kw as isize <= iw {
                        // The window's row lies inside the input: one run of kw·c values.
                        let at = (iy * iw + ix0) as usize * c;
                        add_row::<F>(&mut xs[at..at + seg], src);
                        continue;
                    }
                    for (kx, v) in src.chunks_exact(c).enumerate() {
                        let ix = ix0 + kx as isize;
                        if ix >= 0 && ix < iw {
                            let at = (iy * iw + ix) as usize * c;
                            add_row::<F>(&mut xs[at..at + c], v);
                        }
                    }
                }
            }
        }
    }
}

