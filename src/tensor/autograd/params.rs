//! [`Params`]: the store of named trainable tensors and their gradients. Tape ops refer
//! to parameters by [`ParamId`], so one parameter used twice in a graph (the Siamese
//! network's tied towers) simply receives the sum of both gradients.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::matrix::Matrix;
use crate::tensor::weights::WeightFile;
use std::path::Path;

/// Handle of one parameter in a [`Params`] store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamId(pub(crate) usize);

impl ParamId {
    /// Position in the store (stable: parameters are never removed).
    pub fn index(self) -> usize {
        self.0
    }
}

/// Named parameters with their gradients and a frozen flag each.
#[derive(Clone, Debug, Default)]
pub struct Params {
    names: Vec<String>,
    values: Vec<Matrix>,
    pub(crate) grads: Vec<Matrix>,
    frozen: Vec<bool>,
}

impl Params {
    pub fn new() -> Self {
        Params::default()
    }

    /// Adds a parameter; names must be unique (they key the weight file).
    pub fn add(&mut self, name: &str, value: Matrix) -> Result<ParamId> {
        if self.find(name).is_some() {
            return Err(TensorError::shape("Params::add", format!("parameter '{name}' already exists")));
        }
        self.names.push(name.to_string());
        self.grads.push(Matrix::zeros(value.rows(), value.cols()));
        self.values.push(value);
        self.frozen.push(false);
        Ok(ParamId(self.names.len() - 1))
    }

    /// The parameter called `name`, if any.
    pub fn find(&self, name: &str) -> Option<ParamId> {
        self.names.iter().position(|n| n == name).map(ParamId)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    /// All ids in insertion order.
    pub fn ids(&self) -> impl Iterator<Item = ParamId> {
        (0..self.names.len()).map(ParamId)
    }
    pub fn name(&self, id: ParamId) -> &str {
        &self.names[id.0]
    }
    pub fn value(&self, id: ParamId) -> &Matrix {
        &self.values[id.0]
    }
    pub fn value_mut(&mut self, id: ParamId) -> &mut Matrix {
        &mut self.values[id.0]
    }
    pub fn grad(&self, id: ParamId) -> &Matrix {
        &self.grads[id.0]
    }
    pub fn grad_mut(&mut self, id: ParamId) -> &mut Matrix {
        &mut self.grads[id.0]
    }
    /// Value and gradient together (for optimizers).
    pub fn value_and_grad_mut(&mut self, id: ParamId) -> (&mut Matrix, &mut Matrix) {
        (&mut self.values[id.0], &mut self.grads[id.0])
    }

    /// Values, gradients and frozen flags of every parameter at once (optimizers that
    /// update several parameters on several threads).
    pub(crate) fn parts_mut(&mut self) -> (&mut [Matrix], &mut [Matrix], &[bool]) {
        (&mut self.values, &mut self.grads, &self.frozen)
    }

    /// A frozen parameter gets no gradient and is not updated (layer-wise pretraining).
    pub fn set_frozen(&mut self, id: ParamId, frozen: bool) {
        self.frozen[id.0] = frozen;
    }
    pub fn is_frozen(&self, id: ParamId) -> bool {
        self.frozen[id.0]
    }

    /// Sets every gradient to zero.
    pub fn zero_grads(&mut self) {
        self.grads.iter_mut().for_each(|g| g.fill(0.0));
    }

    /// Total parameter count.
    pub fn num_values(&self) -> usize {
        self.values.iter().map(|v| v.len()).sum()
    }

    /// Euclidean norm of all gradients (for logging and clipping).
    pub fn grad_norm(&self) -> f64 {
        self.grads.iter().flat_map(|g| g.data()).map(|&x| x as f64 * x as f64).sum::<f64>().sqrt()
    }

    /// Scales all gradients down so that their joint norm is at most `max`; returns the norm
    /// before (above `max`: it had to; one pass over the gradients serves the log too).
    /// (Gradient-norm clipping: one bad batch cannot throw the weights out of range.)
    pub fn clip_grad_norm(&mut self, max: f64) -> f64 {
        let n = self.grad_norm();
        if n > max {
            let s = (max / n) as f32;
            self.grads.iter_mut().for_each(|g| g.data_mut().iter_mut().for_each(|x| *x *= s));
        }
        n
    }

    /// Writes all parameters (and `meta` key/value pairs) atomically to `path`.
    pub fn save(&self, path: &Path, meta: &[(String, String)]) -> Result<()> {
        let wf = WeightFile {
            meta: meta.to_vec(),
            tensors: self.names.iter().cloned().zip(self.values.iter().cloned()).collect(),
        };
        wf.save(path)
    }

    /// Loads values from `path` into this store. Every parameter must be present with its
    /// exact shape and the file must hold nothing else; on error nothing is changed.
    /// Returns the file's metadata.
    pub fn load(&mut self, path: &Path) -> Result<Vec<(String, String)>> {
        let wf = WeightFile::load(path)?;
        self.assign_from(&wf, &path.display().to_string())?;
        Ok(wf.meta)
    }

    /// Copies tensors of `wf` into the parameters of the same names (checked first).
    pub fn assign_from(&mut self, wf: &WeightFile, origin: &str) -> Result<()> {
        for (i, name) in self.names.iter().enumerate() {
            let m = wf.get(name).ok_or_else(|| TensorError::format(origin, format!("tensor '{name}' is missing")))?;
            let want = self.values[i].shape();
            if m.shape() != want {
                return Err(TensorError::format(
                    origin,
                    format!("tensor '{name}' has shape {}×{}, expected {}×{}", m.rows(), m.cols(), want.0, want.1),
                ));
            }
        }
        if let Some((extra, _)) = wf.tensors.iter().find(|(n, _)| self.find(n).is_none()) {
            return Err(TensorError::format(origin, format!("unexpected tensor '{extra}'")));
        }
        for (i, name) in self.names.iter().enumerate() {
            if let Some(m) = wf.get(name) {
                self.values[i].copy_from(m);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_scales_the_joint_gradient_norm_down_only() {
        let mut p = Params::new();
        let a = p.add("a", Matrix::zeros(1, 2)).unwrap();
        let b = p.add("b", Matrix::zeros(1, 1)).unwrap();
        p.grad_mut(a).data_mut().copy_from_slice(&[3.0, 0.0]);
        p.grad_mut(b).data_mut()[0] = 4.0;
        assert_eq!(p.clip_grad_norm(5.0), 5.0, "norm 5 is within 5");
        assert_eq!((p.grad(a).data()[0], p.grad(b).data()[0]), (3.0, 4.0));
        assert_eq!(p.clip_grad_norm(1.0), 5.0);
        assert!((p.grad_norm() - 1.0).abs() < 1e-6);
        assert_eq!((p.grad(a).data()[0], p.grad(b).data()[0]), (0.6, 0.8));
    }
}
