//! The library's one error type. Every variant that comes from user input names the file (and line, where
//! there is one) and says what was expected, so a researcher can fix the input without reading the code.
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed content in a data file: `file:line: message`.
    #[error("{}{}: {msg}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Format { file: PathBuf, line: Option<usize>, msg: String },

    /// An I/O failure on a named path (open, read, write, rename).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A data file whose content does not match its manifest.
    #[error("{}: sha256 mismatch: expected {expected}, found {found}{hint}", path.display())]
    Checksum { path: PathBuf, expected: String, found: String, hint: String },

    /// A dataset id that no manifest declares.
    #[error("unknown dataset '{id}'; known ids: {known}")]
    UnknownDataset { id: String, known: String },

    /// A file that is in no mirror or cache and could not be downloaded.
    #[error("cannot obtain {file}: {reason}\n  upstream: {url}\n  mirror: set CROSSLING_DATA to a folder laid out like shared/data (looked for {mirror_hint})")]
    Unavailable { file: String, url: String, reason: String, mirror_hint: String },

    /// A manifest that is itself malformed or inconsistent.
    #[error("manifest {}: {msg}", path.display())]
    Manifest { path: PathBuf, msg: String },

    /// A Rhai script failed: `script:line:column: message` (the Rust cause is part of the message).
    #[error("{}:{line}:{column}: {msg}", script.display())]
    Script { script: PathBuf, line: usize, column: usize, msg: String },

    /// Invalid argument or configuration from the user.
    #[error("{0}")]
    Invalid(String),

    /// A lookup-only request (planning, [`crate::grid`]) found no cached result at this path.
    #[error("not cached yet: {}", .0.display())]
    NotCached(PathBuf),
}

impl Error {
    /// A format error at `file:line`.
    pub fn format(file: impl AsRef<Path>, line: usize, msg: impl Into<String>) -> Self {
        Error::Format { file: file.as_ref().to_path_buf(), line: Some(line), msg: msg.into() }
    }

    /// A format error about a whole file (no line).
    pub fn format_file(file: impl AsRef<Path>, msg: impl Into<String>) -> Self {
        Error::Format { file: file.as_ref().to_path_buf(), line: None, msg: msg.into() }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io { path: path.as_ref().to_path_buf(), source }
    }
}
