//! Helpers shared by the integration tests: the real-data mirror and running the `crossling` binary.
#![allow(dead_code)] // each test crate uses a subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real-data mirror: `$CROSSLING_DATA`, else `../shared/data` beside the crate; `None` when absent (tests
/// that need real data then return early).
pub fn mirror() -> Option<PathBuf> {
    let p = std::env::var_os("CROSSLING_DATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    p.join("SOURCES.tsv").is_file().then_some(p)
}

/// Run the binary offline with `data` as the mirror (or none) and `cache` as the cache.
pub fn crossling(args: &[&str], data: Option<&Path>, cache: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crossling"));
    cmd.args(args).env("CROSSLING_CACHE", cache).env("CROSSLING_OFFLINE", "1");
    match data {
        Some(d) => cmd.env("CROSSLING_DATA", d),
        None => cmd.env_remove("CROSSLING_DATA"),
    };
    cmd.output().expect("run crossling")
}

/// stdout and stderr together, for assertion messages.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}
