//! Writing a whole file so that readers — other processes sharing the cache, a run interrupted mid-write — see
//! either the old content or the new one, never a prefix: the bytes go to a hidden sibling `.NAME.tmp-PID` (unique
//! per process, so concurrent writers do not clobber each other's temporary file), which is then renamed over
//! `NAME` (atomic on one POSIX file system). Parent folders are created; on failure the temporary file is removed.
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = temporary_sibling(path)?;
    let written = std::fs::write(&tmp, bytes)
        .map_err(|e| Error::io(&tmp, e))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn temporary_sibling(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{}: not a file path", path.display())))?
        .to_string_lossy();
    Ok(path.with_file_name(format!(".{name}.tmp-{}", std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_creates_folders_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/out.json");
        write_atomic(&path, "one").unwrap();
        write_atomic(&path, b"two".as_slice()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["out.json"]);
    }

    #[test]
    fn a_failed_write_names_the_path_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap(); // renaming a file over a non-empty folder fails
        std::fs::write(target.join("x"), "x").unwrap();
        let e = write_atomic(&target, "text").unwrap_err().to_string();
        assert!(e.contains("taken"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(write_atomic(Path::new("/"), "x").unwrap_err().to_string().contains("not a file path"));
    }
}
