//! A system's net as a file, written once for every system: the header names the net's
//! `kind` and its architecture (`arch`), the tensors follow in the architecture's order. A
//! system says what its kind is, which [`Architecture`] it has (the header's text and the
//! layers, declared as data in `net_arch.rs`) and how a net is assembled from its tensors;
//! saving and loading are provided, so every net file is checked the same way: the kind
//! first (another system's net is named as such), then the header's architecture, read
//! field by field, held against the tensors the file really has before anything is
//! allocated for it (a header may declare layers far larger than the file).

use super::autograd::params::Params;
use super::error::{Result, TensorError};
use super::matrix::Matrix;
use super::net_arch::Architecture;
use super::weights::WeightFile;
use std::path::Path;

pub trait NetFile: Sized {
    /// The header's `kind`, e.g. `cnn-net`.
    const KIND: &'static str;
    /// How a refusal names a net of this kind, e.g. "a CNN net".
    const WHAT: &'static str;
    /// Whether a header without `kind` is read (DeepChess's nets from before headers carried
    /// one); the architecture check then decides.
    const KIND_MAY_BE_MISSING: bool = false;
    /// Its architecture: the header's text and the tensors it declares.
    type Arch: Architecture;

    /// Its architecture.
    fn arch(&self) -> Self::Arch;
    /// The parameters, saved in their order.
    fn params(&self) -> &Params;
    /// The net from its architecture and its tensors (those of [`Architecture::shapes`], checked).
    fn from_tensors(arch: Self::Arch, tensors: Vec<(String, Matrix)>) -> Result<Self>;

    /// Saves the net (atomically) with its kind, architecture and `meta` in the header (a
    /// `kind` or `arch` in `meta` is the net's own, not overridden).
    fn save(&self, path: &Path, meta: &[(String, String)]) -> Result<()> {
        let mut m = vec![("kind".to_string(), Self::KIND.to_string()), ("arch".to_string(), self.arch().describe())];
        m.extend(meta.iter().filter(|(k, _)| k != "kind" && k != "arch").cloned());
        self.params().save(path, &m)
    }

    /// Loads a net saved by [`NetFile::save`], with its header.
    fn load(path: &Path) -> Result<(Self, Vec<(String, String)>)> {
        let wf = WeightFile::load(path)?;
        let origin = path.display().to_string();
        wf.check_kind(&origin, Self::KIND, Self::WHAT, Self::KIND_MAY_BE_MISSING)?;
        let text = wf.meta("arch").ok_or_else(|| TensorError::format(&origin, "no 'arch' in the header"))?.to_string();
        let arch = Self::Arch::read(&text).map_err(|e| TensorError::format(&origin, e))?;
        let meta = wf.meta.clone();
        let ordered = wf.into_layout(&arch.shapes(), &text, &origin)?;
        Ok((Self::from_tensors(arch, ordered)?, meta))
    }
}

/// Parameters holding `tensors` in their order, and each one's id: what most nets'
/// [`NetFile::from_tensors`] begins with.
pub fn params_of(tensors: Vec<(String, Matrix)>) -> Result<(Params, Vec<super::ParamId>)> {
    let mut params = Params::new();
    let ids = tensors.into_iter().map(|(name, m)| params.add(&name, m)).collect::<Result<Vec<_>>>()?;
    Ok((params, ids))
}
