//! A model folder from the Hugging Face hub at a pinned revision: each file is fetched from
//! `{endpoint}/{repo}/resolve/{revision}/{path}` — the hub's own download URL, which redirects large (LFS) files to
//! its storage — and checked against its pinned byte count and sha256 (for an LFS file the sha256 of its pointer,
//! which is the sha256 of the content). The endpoint is `https://huggingface.co`, or `HF_ENDPOINT` when set (the
//! variable `huggingface_hub` reads, so a mirror serves both). Files land in the caller's staging folder; the
//! registry renames it into place only when every file checks.
use std::path::Path;

use crate::data::download::{fetch_checked, Failure};
use crate::error::{Error, Result};

/// One file of a pinned revision.
#[derive(Debug, Clone, Copy)]
pub struct HubFile {
    /// Its path in the repository.
    pub path: &'static str,
    pub bytes: u64,
    pub sha256: &'static str,
}

/// The hub's public endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// `HF_ENDPOINT` when set (without a trailing `/`), else [`DEFAULT_ENDPOINT`].
pub fn endpoint_from_env() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().trim_end_matches('/').to_string())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
}

/// The download URL of `path` in `repo` at `revision`.
pub fn file_url(endpoint: &str, repo: &str, revision: &str, path: &str) -> String {
    format!("{endpoint}/{repo}/resolve/{revision}/{path}")
}

/// Fetches every file of `files` into `dir` (an existing folder), each checked; the first failure is an error that
/// names the file, its URL and what went wrong, and the file's partial copy is removed.
pub fn download(
    endpoint: &str,
    repo: &str,
    revision: &str,
    files: &[HubFile],
    dir: &Path,
    progress: bool,
) -> Result<()> {
    for f in files {
        let url = file_url(endpoint, repo, revision, f.path);
        let target = dir.join(f.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        if progress {
            eprintln!(
                "models: {repo}@{} {} ({:.1} MB)",
                &revision[..revision.len().min(8)],
                f.path,
                f.bytes as f64 / 1e6
            );
        }
        let label = format!("{repo}/{}", f.path);
        fetch_checked(&url, &target, f.bytes, f.sha256, &label, progress).map_err(|failure| match failure {
            Failure::Mismatch { got, sha256 } => Error::Checksum {
                path: url.clone().into(),
                expected: format!("{} ({} bytes)", f.sha256, f.bytes),
                found: format!("{sha256} ({got} bytes)"),
                hint: format!(
                    "; {repo} at revision {revision} should hold exactly the pinned {} — nothing was written to the \
                     model cache",
                    f.path
                ),
            },
            Failure::Io(e) => e,
            other => Error::Invalid(format!(
                "cannot fetch {} of {repo}@{revision} from {url}: {}; nothing was written to the model cache \
                 (offline, give a local model folder by its path instead)",
                f.path,
                other.describe(f.bytes, f.sha256)
            )),
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_the_hub_layout() {
        assert_eq!(
            file_url(DEFAULT_ENDPOINT, "FacebookAI/xlm-roberta-base", "e73636d", "config.json"),
            "https://huggingface.co/FacebookAI/xlm-roberta-base/resolve/e73636d/config.json"
        );
    }
}
