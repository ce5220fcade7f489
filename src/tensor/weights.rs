//! The weight file: one versioned binary format for nets and checkpoints.
//!
//! Layout (all integers little-endian):
//! ```text
//! magic    8 bytes  "DCHSWGT\0"
//! version  u32      (FORMAT_VERSION)
//! n_meta   u32, then n_meta × (key: u32 len + UTF-8, value: u32 len + UTF-8)
//! n_tensor u32, then n_tensor × (name: u32 len + UTF-8, rows u64, cols u64, rows·cols f32)
//! checksum u64      FNV-1a 64 of every byte before it
//! ```
//! Files are written to a temporary sibling, synced, then renamed over the target, so a
//! crash never leaves a half-written file under the real name.

use crate::tensor::error::{Result, TensorError};
use crate::tensor::matrix::Matrix;
use crate::io::atomic::write_atomic;
use crate::io::checksum::fnv1a64;
use std::path::Path;

/// The file's first 8 bytes.
pub const MAGIC: &[u8; 8] = b"DCHSWGT\0";
/// The version this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Longest name or metadata string accepted (guards against corrupt lengths).
const MAX_STR: usize = 1 << 16;
/// Largest weight file read: far above any net or checkpoint of this crate, low enough that
/// a wrong path (a corpus, a disk image) fails at once instead of filling memory.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// The largest magnitude a stored weight may have (optimizer state, tensors named `opt.*`,
/// aside). No training of this crate comes near it (the shipped nets' largest weight is
/// 1.4; an RBM's visible biases stop at ±6.9), and it is well inside a half float (at most
/// 65,504), which is what the search's layers read: a file beyond it is refused on load,
/// where it would play nonsense, and a run that drifts beyond it fails at its epoch.
pub const MAX_WEIGHT: f32 = 1.0e4;

/// The first value of tensor `name` that no run stores: not finite, or (outside the
/// optimizer's state) beyond ±[`MAX_WEIGHT`]. `(index, value, why)`.
fn first_bad_value(name: &str, data: &[f32]) -> Option<(usize, f32, String)> {
    let bounded = !name.starts_with("opt.");
    data.iter().position(|v| !v.is_finite() || (bounded && v.abs() > MAX_WEIGHT)).map(|i| {
        let v = data[i];
        let why = if v.is_finite() { format!("beyond ±{MAX_WEIGHT:e}, more than any training gives a weight") } else { "weights must be finite numbers".into() };
        (i, v, why)
    })
}

/// Named tensors plus free-form metadata (e.g. the architecture), as stored on disk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightFile {
    pub meta: Vec<(String, String)>,
    pub tensors: Vec<(String, Matrix)>,
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    origin: &'a str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.buf.len() - self.pos < n {
            return Err(TensorError::format(
                self.origin,
                format!("truncated: needed {n} bytes for {what} at byte {}, only {} left", self.pos, self.buf.len() - self.pos),
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }
    fn string(&mut self, what: &str) -> Result<String> {
        let at = self.pos;
        let n = self.u32(what)? as usize;
        if n > MAX_STR {
            return Err(TensorError::format(self.origin, format!("corrupt: {what} at byte {at} claims {n} bytes")));
        }
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| TensorError::format(self.origin, format!("corrupt: {what} at byte {at} is not UTF-8")))
    }
}

impl WeightFile {
    /// The tensor called `name`.
    pub fn get(&self, name: &str) -> Option<&Matrix> {
        self.tensors.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }

    /// The tensor called `name`, which must be `rows × cols`.
    pub fn get_shaped(&self, name: &str, rows: usize, cols: usize, origin: &str) -> Result<&Matrix> {
        let m = self.get(name).ok_or_else(|| TensorError::format(origin, format!("tensor '{name}' is missing")))?;
        if m.shape() != (rows, cols) {
            return Err(TensorError::format(
                origin,
                format!("tensor '{name}' has shape {}×{}, expected {rows}×{cols}", m.rows(), m.cols()),
            ));
        }
        Ok(m)
    }

    /// Refuses a file whose header's `kind` is not `kind` (`what` names it, e.g. "a CNN
    /// net"), naming the kind found; a header with no `kind` passes when `missing_ok` (files
    /// written before headers carried one).
    pub fn check_kind(&self, origin: &str, kind: &str, what: &str, missing_ok: bool) -> Result<()> {
        match self.meta("kind") {
            Some(k) if k == kind => Ok(()),
            None if missing_ok => Ok(()),
            found => Err(TensorError::format(origin, format!("kind '{}' in the header: not {what} ({kind})", found.unwrap_or("none")))),
        }
    }

    /// The tensors `shapes` names (name, rows, columns), in that order, each checked against
    /// its shape, and no other: how a net file's declared layout (`layout`, from its header) is
    /// held against the tensors the file really has, before anything is built for it (a header
    /// may declare layers far larger than the file).
    pub fn into_layout(self, shapes: &[(String, usize, usize)], layout: &str, origin: &str) -> Result<Vec<(String, Matrix)>> {
        let mut tensors: std::collections::HashMap<String, Matrix> = self.tensors.into_iter().collect();
        let mut ordered = Vec::with_capacity(shapes.len());
        for (name, rows, cols) in shapes {
            let m = tensors
                .remove(name)
                .ok_or_else(|| TensorError::format(origin, format!("the header declares {layout} but tensor '{name}' is missing")))?;
            if m.shape() != (*rows, *cols) {
                return Err(TensorError::format(
                    origin,
                    format!("the header declares {layout}, so tensor '{name}' should be {rows}×{cols}, but it is {}×{}", m.rows(), m.cols()),
                ));
            }
            ordered.push((name.clone(), m));
        }
        if let Some(extra) = tensors.keys().min() {
            return Err(TensorError::format(origin, format!("unexpected tensor '{extra}' for {layout}")));
        }
        Ok(ordered)
    }

    /// A metadata value.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Serialises to the on-disk bytes (checksum included).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes_with(&self.meta)
    }

    /// The bytes with `meta` as the header.
    fn bytes_with(&self, meta: &[(String, String)]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let put_str = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        for (k, v) in meta {
            put_str(&mut out, k);
            put_str(&mut out, v);
        }
        out.extend_from_slice(&(self.tensors.len() as u32).to_le_bytes());
        for (name, m) in &self.tensors {
            put_str(&mut out, name);
            out.extend_from_slice(&(m.rows() as u64).to_le_bytes());
            out.extend_from_slice(&(m.cols() as u64).to_le_bytes());
            out.reserve(m.len() * 4);
            for v in m.data() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        let h = fnv1a64(&out);
        out.extend_from_slice(&h.to_le_bytes());
        out
    }

    /// Parses on-disk bytes; `origin` (usually the path) names the file in errors.
    pub fn from_bytes(bytes: &[u8], origin: &str) -> Result<Self> {
        let mut r = Reader { buf: bytes, pos: 0, origin };
        let magic = r.take(8, "the magic number")?;
        if magic != MAGIC {
            return Err(TensorError::format(origin, "not a deepchess weight file (bad magic number)"));
        }
        let version = r.u32("the version")?;
        if version != FORMAT_VERSION {
            return Err(TensorError::format(origin, format!("format version {version}, this build reads version {FORMAT_VERSION}")));
        }
        let mut wf = WeightFile::default();
        let n_meta = r.u32("the metadata count")?;
        for i in 0..n_meta {
            let k = r.string(&format!("metadata key {i}"))?;
            let v = r.string(&format!("metadata value '{k}'"))?;
            wf.meta.push((k, v));
        }
        let n_tensors = r.u32("the tensor count")?;
        // Names seen so far: a linear search per tensor would make a file of many tiny
        // tensors quadratic to read.
        let mut seen = std::collections::HashSet::new();
        // The first value no run stores, reported once the checksum has passed (a damaged
        // file is better described as damaged).
        let mut bad_value: Option<(String, usize, f32, String)> = None;
        for i in 0..n_tensors {
            let name = r.string(&format!("the name of tensor {i}"))?;
            let rows = r.u64(&format!("the rows of tensor '{name}'"))?;
            let cols = r.u64(&format!("the cols of tensor '{name}'"))?;
            let bytes_needed = rows.checked_mul(cols).and_then(|n| n.checked_mul(4)).filter(|&n| n <= (r.buf.len() - r.pos) as u64);
            let Some(nb) = bytes_needed else {
                return Err(TensorError::format(
                    origin,
                    format!("truncated or corrupt: tensor '{name}' claims {rows}×{cols} values, more than the file holds"),
                ));
            };
            let raw = r.take(nb as usize, &format!("the values of tensor '{name}'"))?;
            let data: Vec<f32> = raw.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
            if bad_value.is_none() {
                if let Some((at, v, why)) = first_bad_value(&name, &data) {
                    bad_value = Some((name.clone(), at, v, why));
                }
            }
            let m = Matrix::from_vec(rows as usize, cols as usize, data)?;
            if !seen.insert(name.clone()) {
                return Err(TensorError::format(origin, format!("corrupt: tensor '{name}' appears twice")));
            }
            wf.tensors.push((name, m));
        }
        let body_end = r.pos;
        let stored = r.u64("the checksum")?;
        if r.pos != bytes.len() {
            return Err(TensorError::format(origin, format!("corrupt: {} unexpected bytes after the checksum", bytes.len() - r.pos)));
        }
        let actual = fnv1a64(&bytes[..body_end]);
        if stored != actual {
            return Err(TensorError::format(origin, format!("checksum mismatch (stored {stored:016x}, computed {actual:016x}): file is corrupt")));
        }
        // Every loader (nets, checkpoints) comes through here. No healthy run stores a NaN or
        // an infinity, not even in the optimizer's moments, nor a weight past MAX_WEIGHT; a
        // net holding one would make every comparison NaN or nonsense, and a resumed run
        // would train on it.
        if let Some((name, at, v, why)) = bad_value {
            let cols = wf.get(&name).map_or(1, |m| m.cols().max(1));
            return Err(TensorError::format(origin, format!("tensor '{name}' holds {v} at index {at} (row {}, column {}): {why}", at / cols, at % cols)));
        }
        Ok(wf)
    }

    /// Reads and validates a weight file.
    pub fn load(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        let bytes = crate::io::files::read_regular(path, MAX_FILE_BYTES, "weight file")
            .map_err(|e| TensorError::Io { path: origin.clone(), source: e })?;
        WeightFile::from_bytes(&bytes, &origin)
    }

    /// Writes atomically: temporary sibling file, fsync, rename over `path`. A tensor holding
    /// NaN, infinity or a weight beyond [`MAX_WEIGHT`] is refused here, as loading would
    /// refuse it: a diverged run fails at its epoch instead of leaving a checkpoint it cannot
    /// resume from. The header gains what made the file (`made.*`, see
    /// [`crate::io::provenance`]) when the program recorded it and the header has none.
    pub fn save(&self, path: &Path) -> Result<()> {
        for (name, m) in &self.tensors {
            if let Some((i, v, why)) = first_bad_value(name, m.data()) {
                let (r, c) = (i / m.cols().max(1), i % m.cols().max(1));
                return Err(TensorError::format(
                    &path.display().to_string(),
                    format!("refusing to write tensor '{name}': value {v} at row {r}, column {c}: {why} (training diverged?)"),
                ));
            }
        }
        write_atomic(path, &self.bytes_with(&crate::io::provenance::stamp(&self.meta))).map_err(|e| TensorError::Io { path: path.display().to_string(), source: e })
    }
}

