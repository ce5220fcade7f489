//! 2-D max pooling over NHWC activations (one sample per matrix row, columns
//! `(y·W + x)·C + c`), each channel on its own.
//!
//! Ceil mode (Caffe's and Mocha's rounding, PyTorch's `ceil_mode=True`) adds a last,
//! partial window along an axis when the input does not divide evenly: 5×5 with a 2×2
//! window at stride 2 gives 3×3, the last row and column of windows covering only the
//! input's edge row and column. The windows are clipped to the input, so the implicit
//! padding never wins the max. As in PyTorch, a window that would start past the input
//! is not created.
//!
//! Ties go to the first maximum in the window's row-major scan (a strictly greater value
//! replaces it), so forward values and backward routing are deterministic. The backward
//! pass sends each output's gradient to the input element its forward pass picked.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::matrix::Matrix;

/// The geometry of a max pooling layer (square window and stride).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxPool2d {
    pub in_h: usize,
    pub in_w: usize,
    /// Channels (pooled independently).
    pub c: usize,
    /// Window side.
    pub k: usize,
    pub stride: usize,
    /// Round the output size up (partial last windows) instead of down.
    pub ceil: bool,
}

impl MaxPool2d {
    fn out_dim(&self, n: usize) -> usize {
        if n < self.k || self.stride == 0 {
            return 0;
        }
        let span = n - self.k;
        let mut o = if self.ceil { span.div_ceil(self.stride) + 1 } else { span / self.stride + 1 };
        // A ceil-mode window starting past the input would hold only padding.
        if self.ceil && (o - 1) * self.stride >= n {
            o -= 1;
        }
        o
    }
    /// Output rows (0 when [`MaxPool2d::check`] fails).
    pub fn out_h(&self) -> usize {
        self.out_dim(self.in_h)
    }
    /// Output columns (0 when [`MaxPool2d::check`] fails).
    pub fn out_w(&self) -> usize {
        self.out_dim(self.in_w)
    }
    /// Values per input sample: `in_h·in_w·c`.
    pub fn in_len(&self) -> usize {
        self.in_h * self.in_w * self.c
    }
    /// Values per output sample: `out_h·out_w·c`.
    pub fn out_len(&self) -> usize {
        self.out_h() * self.out_w() * self.c
    }

    /// Rejects zero sizes, a window larger than the input, and inputs too large for the
    /// 32-bit argmax indices.
    pub fn check(&self) -> Result<()> {
        let bad = |d: String| Err(TensorError::argument("max_pool2d", d));
        let dims = [("in_h", self.in_h), ("in_w", self.in_w), ("c", self.c), ("k", self.k), ("stride", self.stride)];
        if let Some((n, _)) = dims.iter().find(|(_, v)| *v == 0) {
            return bad(format!("{n} is 0 in {self:?}"));
        }
        if self.k > self.in_h || self.k > self.in_w {
            return bad(format!("window {} larger than the {}×{} input", self.k, self.in_h, self.in_w));
        }
        let len = [self.in_h, self.in_w, self.c].iter().try_fold(1usize, |a, &v| a.checked_mul(v));
        if len.is_none_or(|l| l > u32::MAX as usize) {
            return bad(format!("input of {}×{}×{} values is too large", self.in_h, self.in_w, self.c));
        }
        Ok(())
    }
}

fn check_input(s: &MaxPool2d, x: &Matrix) -> Result<()> {
    s.check()?;
    if x.cols() != s.in_len() {
        return Err(TensorError::shape("max_pool2d", format!("input rows have {} values, {}×{}×{} needs {}", x.cols(), s.in_h, s.in_w, s.c, s.in_len())));
    }
    Ok(())
}

/// Runs `f(window rows, window columns, output offset)` for every output pixel of a sample.
#[inline(always)]
fn windows(s: &MaxPool2d, mut f: impl FnMut(std::ops::Range<usize>, std::ops::Range<usize>, usize)) {
    let (oh, ow) = (s.out_h(), s.out_w());
    for oy in 0..oh {
        let y0 = oy * s.stride;
        let ys = y0..(y0 + s.k).min(s.in_h);
        for ox in 0..ow {
            let x0 = ox * s.stride;
            f(ys.clone(), x0..(x0 + s.k).min(s.in_w), (oy * ow + ox) * s.c);
        }
    }
}

/// Max over each window; `y` is resized to `batch × out_len`. For inference (nothing saved).
pub fn forward(s: &MaxPool2d, x: &Matrix, y: &mut Matrix) -> Result<()> {
    check_input(s, x)?;
    let c = s.c;
    y.resize(x.rows(), s.out_len());
    for (xs, ys) in x.data().chunks_exact(s.in_len()).zip(y.data_mut().chunks_exact_mut(s.out_len().max(1))) {
        windows(s, |wy, wx, o| {
            let out = &mut ys[o..o + c];
            let first = (wy.start * s.in_w + wx.start) * c;
            out.copy_from_slice(&xs[first..first + c]);
            for iy in wy {
                for ix in wx.clone() {
                    let at = (iy * s.in_w + ix) * c;
                    for (m, &v) in out.iter_mut().zip(&xs[at..at + c]) {
                        // Strictly greater: the first maximum stays (as in forward_argmax).
                        // Written as a select so it vectorises (a search pools one position
                        // per call).
                        *m = if v > *m { v } else { *m };
                    }
                }
            }
        });
    }
    Ok(())
}

/// [`forward`], also saving in `argmax` (resized to `batch × out_len`) the index within its
/// sample's row of the input value each output took, for [`backward`].
pub fn forward_argmax(s: &MaxPool2d, x: &Matrix, y: &mut Matrix, argmax: &mut Vec<u32>) -> Result<()> {
    check_input(s, x)?;
    let c = s.c;
    y.resize(x.rows(), s.out_len());
    argmax.clear();
    argmax.resize(y.len(), 0);
    let per = s.out_len().max(1);
    for ((xs, ys), am) in x.data().chunks_exact(s.in_len()).zip(y.data_mut().chunks_exact_mut(per)).zip(argmax.chunks_exact_mut(per)) {
        windows(s, |wy, wx, o| {
            let (out, arg) = (&mut ys[o..o + c], &mut am[o..o + c]);
            let first = (wy.start * s.in_w + wx.start) * c;
            out.copy_from_slice(&xs[first..first + c]);
            for (j, a) in arg.iter_mut().enumerate() {
                *a = (first + j) as u32;
            }
            for iy in wy {
                for ix in wx.clone() {
                    let at = (iy * s.in_w + ix) * c;
                    for (j, ((m, a), &v)) in out.iter_mut().zip(arg.iter_mut()).zip(&xs[at..at + c]).enumerate() {
                        if v > *m {
                            *m = v;
                            *a = (at + j) as u32;
                        }
                    }
                }
            }
        });
    }
    Ok(())
}

/// Backward of [`forward_argmax`]: **adds** each `dy` value to the `dx` element its output
/// took (`dx` is `batch × in_len`, `dy` and `argmax` are `batch × out_len`).
pub fn backward(s: &MaxPool2d, argmax: &[u32], dy: &Matrix, dx: &mut Matrix) -> Result<()> {
    s.check()?;
    let (ol, il) = (s.out_len(), s.in_len());
    if dy.cols() != ol || argmax.len() != dy.len() || dx.shape() != (dy.rows(), il) {
        return Err(TensorError::shape(
            "max_pool2d backward",
            format!("dY {}×{}, {} indices, dX {}×{} for {ol} outputs and {il} inputs a sample", dy.rows(), dy.cols(), argmax.len(), dx.rows(), dx.cols()),
        ));
    }
    for ((g, a), d) in dy.data().chunks_exact(ol.max(1)).zip(argmax.chunks_exact(ol.max(1))).zip(dx.data_mut().chunks_exact_mut(il)) {
        for (&gv, &i) in g.iter().zip(a) {
            match d.get_mut(i as usize) {
                Some(v) => *v += gv,
                None => return Err(TensorError::Index { what: "max_pool2d backward".into(), detail: format!("argmax {i} >= {il}") }),
            }
        }
    }
    Ok(())
}
