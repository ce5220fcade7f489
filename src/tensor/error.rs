//! Errors of the numeric engine. Bad input never panics: it becomes a
//! [`TensorError`] that names what is wrong and where.

use std::fmt;

/// What went wrong in a tensor operation or while reading/writing a weight file.
#[derive(Debug)]
pub enum TensorError {
    /// Two operands do not fit together (`what` names the operation).
    Shape { what: String, detail: String },
    /// A sparse input index is out of range.
    Index { what: String, detail: String },
    /// An argument is outside its allowed range (a dropout rate of 1, a Huber delta of 0).
    Argument { what: String, detail: String },
    /// A kernel or feature this CPU does not have was asked for.
    Unavailable(String),
    /// A weight file could not be read or written.
    Io { path: String, source: std::io::Error },
    /// A weight file is malformed: truncated, corrupt, wrong version or wrong contents.
    Format { path: String, detail: String },
}

impl TensorError {
    pub(crate) fn shape(what: &str, detail: impl Into<String>) -> Self {
        TensorError::Shape { what: what.to_string(), detail: detail.into() }
    }
    pub(crate) fn argument(what: &str, detail: impl Into<String>) -> Self {
        TensorError::Argument { what: what.to_string(), detail: detail.into() }
    }
    pub(crate) fn format(path: &str, detail: impl Into<String>) -> Self {
        TensorError::Format { path: path.to_string(), detail: detail.into() }
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::Shape { what, detail } => write!(f, "{what}: shape mismatch: {detail}"),
            TensorError::Index { what, detail } => write!(f, "{what}: index out of range: {detail}"),
            TensorError::Argument { what, detail } => write!(f, "{what}: invalid argument: {detail}"),
            TensorError::Unavailable(m) => write!(f, "{m}"),
            TensorError::Io { path, source } => write!(f, "{path}: {source}"),
            TensorError::Format { path, detail } => write!(f, "{path}: invalid weight file: {detail}"),
        }
    }
}

impl std::error::Error for TensorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TensorError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result alias of the tensor module.
pub type Result<T> = std::result::Result<T, TensorError>;
