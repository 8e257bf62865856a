//! One file streamed from a URL into a temporary path while it is hashed, with a progress bar, then checked against
//! its pinned byte count and sha256 and synced — the step that dataset files ([`super::resolve`]) and registry models
//! ([`crate::model::registry`]) share. The caller renames the file into place on success and removes it on failure,
//! so a cache holds a file only when it is complete and verified.
//!
//! URLs: `https://`, `http://` (redirects followed, as the Hugging Face hub's `resolve/` URLs need) and `file://`.
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::Error;

/// Why a download did not produce the pinned file.
#[derive(Debug)]
pub enum Failure {
    /// The URL could not be opened (offline, refused, HTTP error): the reason.
    Unreachable(String),
    /// The body ended early or the connection broke after `got` of `want` bytes.
    Cut { got: u64, want: u64, reason: String },
    /// The body was complete in length terms but its content differs: what arrived.
    Mismatch { got: u64, sha256: String },
    /// Writing the temporary file failed.
    Io(Error),
}

impl Failure {
    /// One line for an error message.
    pub fn describe(&self, want_bytes: u64, want_sha256: &str) -> String {
        match self {
            Failure::Unreachable(r) => r.clone(),
            Failure::Cut { got, want, reason } => {
                format!("the connection was cut after {got} of {want} bytes ({reason})")
            }
            Failure::Mismatch { got, sha256 } => {
                format!("sha256 {sha256} ({got} bytes), expected {want_sha256} ({want_bytes} bytes)")
            }
            Failure::Io(e) => e.to_string(),
        }
    }
}

/// Streams `url` into `tmp` (created or truncated), checking `want_bytes` and `want_sha256`; `label` names the bar.
/// On failure `tmp` is removed.
pub fn fetch_checked(
    url: &str,
    tmp: &Path,
    want_bytes: u64,
    want_sha256: &str,
    label: &str,
    progress: bool,
) -> std::result::Result<(), Failure> {
    let stream = || -> std::result::Result<(), Failure> {
        let (mut body, len) = open_url(url).map_err(Failure::Unreachable)?;
        let bar = progress_bar(progress, len.unwrap_or(want_bytes), label);
        let mut out = File::create(tmp).map_err(|e| Failure::Io(Error::io(tmp, e)))?;
        let mut hasher = Sha256::new();
        let mut total = 0u64;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match body.read(&mut buf) {
                Ok(n) => n,
                Err(e) => return Err(Failure::Cut { got: total, want: want_bytes, reason: e.to_string() }),
            };
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(|e| Failure::Io(Error::io(tmp, e)))?;
            total += n as u64;
            bar.set_position(total);
        }
        out.sync_all().map_err(|e| Failure::Io(Error::io(tmp, e)))?;
        bar.finish_and_clear();
        if total < want_bytes && len.is_some_and(|l| total < l) {
            return Err(Failure::Cut { got: total, want: want_bytes, reason: "the body ended early".into() });
        }
        let sha256 = hex::encode(hasher.finalize());
        if total != want_bytes || sha256 != want_sha256 {
            return Err(Failure::Mismatch { got: total, sha256 });
        }
        Ok(())
    };
    let result = stream();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result
}

/// Opens an `https://`, `http://` or `file://` URL for streaming; returns the body and its length when known.
fn open_url(url: &str) -> std::result::Result<(Box<dyn Read>, Option<u64>), String> {
    if let Some(path) = url.strip_prefix("file://") {
        let f = File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let len = f.metadata().ok().map(|m| m.len());
        return Ok((Box::new(f), len));
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(std::time::Duration::from_secs(20)))
        .timeout_recv_body(Some(std::time::Duration::from_secs(600)))
        .build()
        .into();
    let resp = agent.get(url).call().map_err(|e| format!("download failed (offline?): {e}"))?;
    let len = resp.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    Ok((Box::new(resp.into_body().into_reader()), len))
}

fn progress_bar(enabled: bool, len: u64, name: &str) -> indicatif::ProgressBar {
    if !enabled {
        return indicatif::ProgressBar::hidden();
    }
    let bar = crate::progress::bar(len, "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}");
    bar.set_message(name.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_url_is_fetched_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.txt");
        std::fs::write(&src, b"abc").unwrap();
        let sha = hex::encode(Sha256::digest(b"abc"));
        let tmp = dir.path().join("out.tmp");
        let url = format!("file://{}", src.display());
        fetch_checked(&url, &tmp, 3, &sha, "src", false).unwrap();
        assert_eq!(std::fs::read(&tmp).unwrap(), b"abc");
        let err = fetch_checked(&url, &tmp, 3, &"0".repeat(64), "src", false).unwrap_err();
        assert!(matches!(err, Failure::Mismatch { got: 3, .. }), "{err:?}");
        assert!(!tmp.exists(), "a failed fetch removes its temporary file");
        assert!(err.describe(3, &"0".repeat(64)).contains(&sha));
    }
}
