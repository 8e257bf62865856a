//! Finding a dataset file: the `$CROSSLING_DATA` mirror first, then the user cache, then a download from the
//! upstream URL at its pinned commit.
//!
//! * Mirror (`$CROSSLING_DATA`): laid out like `shared/data`; a file whose manifest says `gzip_in_mirror` is stored
//!   gzip-compressed there, and its `bytes`/`sha256` are those of the decompressed upstream file.
//! * Cache (`$CROSSLING_CACHE`, else the platform cache folder + `crossling/data`): holds upstream bytes exactly as
//!   downloaded, at [`FileEntry::cache_path`].
//! * Download ([`super::download`]): streamed to `<cache>/.partial/…` while hashing, with a progress bar; the byte count and sha256 are
//!   checked, the file is synced, then renamed into place — so a cache file is either complete and verified or
//!   absent, never half-written. `CROSSLING_OFFLINE=1` forbids downloads.
use crate::data::download::{fetch_checked, Failure};
use crate::data::manifest::FileEntry;
use crate::data::text_file::open_maybe_gz;
use crate::error::{Error, Result};
use crate::paths;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where dataset files are looked for, in order.
#[derive(Debug, Clone)]
pub struct DataRoots {
    /// A mirror folder laid out like `shared/data` (`$CROSSLING_DATA`).
    pub mirror: Option<PathBuf>,
    /// The download cache.
    pub cache: PathBuf,
    /// Whether a missing file may be downloaded.
    pub allow_download: bool,
    /// Whether to draw progress bars.
    pub progress: bool,
}

/// Where a file was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// In the mirror; `gzipped` when the mirror stores it compressed (`gzip_in_mirror`).
    Mirror { path: PathBuf, gzipped: bool },
    /// In the cache, as the upstream bytes.
    Cache { path: PathBuf },
}

impl Found {
    /// The path to open (readers detect gzip by magic bytes).
    pub fn path(&self) -> &Path {
        match self {
            Found::Mirror { path, .. } | Found::Cache { path } => path,
        }
    }

    /// Short name of the location, for listings.
    pub fn kind(&self) -> &'static str {
        match self {
            Found::Mirror { .. } => "mirror",
            Found::Cache { .. } => "cache",
        }
    }
}

/// The workspace's data mirror relative to the crate (`shared/` beside the project checkout).
pub const WORKSPACE_MIRROR: &str = "../shared/data";

/// Whether `CROSSLING_OFFLINE` forbids downloads (set, not empty and not `0`): data files and registry models alike.
pub fn offline() -> bool {
    std::env::var("CROSSLING_OFFLINE").map(|v| !v.is_empty() && v != "0").unwrap_or(false)
}

impl DataRoots {
    /// Roots from the environment: `CROSSLING_DATA` (else the workspace mirror `../shared/data` beside the project,
    /// when it exists), `CROSSLING_CACHE`, `CROSSLING_OFFLINE`.
    pub fn from_env() -> Self {
        let beside = paths::beside_crate(WORKSPACE_MIRROR);
        let mirror =
            paths::env_path("CROSSLING_DATA").or_else(|| beside.join("SOURCES.tsv").is_file().then_some(beside));
        let cache = paths::env_or_user_cache("CROSSLING_CACHE", "data");
        DataRoots { mirror, cache, allow_download: !offline(), progress: true }
    }

    /// Look for `entry` in the mirror, then the cache, without hashing.
    pub fn locate(&self, entry: &FileEntry) -> Option<Found> {
        if let Some(mirror) = &self.mirror {
            let p = mirror.join(&entry.path);
            if p.is_file() {
                return Some(Found::Mirror { path: p, gzipped: entry.gzip_in_mirror });
            }
        }
        let p = self.cache.join(entry.cache_path());
        p.is_file().then_some(Found::Cache { path: p })
    }

    /// The path of `entry`, downloading it into the cache when it is in neither the mirror nor the cache.
    pub fn resolve(&self, entry: &FileEntry) -> Result<PathBuf> {
        match self.locate(entry) {
            Some(found) => Ok(found.path().to_path_buf()),
            None => self.download(entry),
        }
    }

    fn mirror_hint(&self, entry: &FileEntry) -> String {
        match &self.mirror {
            Some(m) => format!("{}", m.join(&entry.path).display()),
            None => format!("CROSSLING_DATA is not set; cache {}", self.cache.join(entry.cache_path()).display()),
        }
    }

    /// Download `entry` into the cache (atomic; verified), returning the cache path.
    pub fn download(&self, entry: &FileEntry) -> Result<PathBuf> {
        let unavailable = |reason: String| Error::Unavailable {
            file: entry.path.clone(),
            url: entry.url.clone(),
            reason,
            mirror_hint: self.mirror_hint(entry),
        };
        if !self.allow_download {
            return Err(unavailable("not in the mirror or the cache, and CROSSLING_OFFLINE forbids downloads".into()));
        }
        let target = self.cache.join(entry.cache_path());
        let partial_dir = self.cache.join(".partial");
        std::fs::create_dir_all(&partial_dir).map_err(|e| Error::io(&partial_dir, e))?;
        let file_name =
            target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "download".into());
        let tmp = partial_dir.join(format!("{file_name}.{}.tmp", std::process::id()));
        if let Err(failure) = fetch_checked(&entry.url, &tmp, entry.bytes, &entry.sha256, &entry.path, self.progress) {
            return Err(match failure {
                Failure::Mismatch { got, sha256 } => Error::Checksum {
                    path: PathBuf::from(&entry.url),
                    expected: format!("{} ({} bytes)", entry.sha256, entry.bytes),
                    found: format!("{sha256} ({got} bytes)"),
                    hint:
                        "; the upstream file changed or the download was corrupted — nothing was written to the cache"
                            .into(),
                },
                Failure::Io(e) => e,
                other => unavailable(other.describe(entry.bytes, &entry.sha256)),
            });
        }
        let result = (|| -> Result<()> {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            std::fs::rename(&tmp, &target).map_err(|e| Error::io(&target, e))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map(|()| target)
    }

    /// Hash the located copy of `entry` and compare with the manifest.
    pub fn verify(&self, entry: &FileEntry) -> Result<Found> {
        let found = self.locate(entry).ok_or_else(|| Error::Unavailable {
            file: entry.path.clone(),
            url: entry.url.clone(),
            reason: "not in the mirror or the cache (run `crossling data fetch`)".into(),
            mirror_hint: self.mirror_hint(entry),
        })?;
        let decompress = matches!(found, Found::Mirror { gzipped: true, .. });
        let (bytes, sha) = hash_file(found.path(), decompress)?;
        if bytes != entry.bytes || sha != entry.sha256 {
            let what = if decompress { " (of the decompressed content)" } else { "" };
            return Err(Error::Checksum {
                path: found.path().to_path_buf(),
                expected: format!("{} ({} bytes)", entry.sha256, entry.bytes),
                found: format!("{sha} ({bytes} bytes){what}"),
                hint: format!("; upstream copy: {}", entry.url),
            });
        }
        Ok(found)
    }
}

/// Byte count and hex sha256 of a file; `decompress` hashes the gunzipped content.
pub fn hash_file(path: &Path, decompress: bool) -> Result<(u64, String)> {
    let mut reader: Box<dyn Read> =
        if decompress { open_maybe_gz(path)? } else { Box::new(File::open(path).map_err(|e| Error::io(path, e))?) };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf).map_err(|e| {
            Error::format_file(
                path,
                format!("cannot read{}: {e}", if decompress { " (corrupt or truncated gzip?)" } else { "" }),
            )
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((total, hex::encode(hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::manifest::FileRole;
    use std::io::Write;

    fn entry_for(content: &[u8], path: &str, url: String) -> FileEntry {
        FileEntry {
            path: path.into(),
            bytes: content.len() as u64,
            sha256: hex::encode(Sha256::digest(content)),
            url,
            gzip_in_mirror: false,
            lang: None,
            role: FileRole::Data,
        }
    }

    fn roots(dir: &Path, mirror: Option<PathBuf>) -> DataRoots {
        DataRoots { mirror, cache: dir.join("cache"), allow_download: true, progress: false }
    }

    #[test]
    fn downloads_atomically_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let upstream = dir.path().join("up.txt");
        std::fs::write(&upstream, b"hello world\n").unwrap();
        let e = entry_for(b"hello world\n", "x/y.txt", format!("file://{}", upstream.display()));
        let r = roots(dir.path(), None);
        assert!(r.locate(&e).is_none());
        let p = r.resolve(&e).unwrap();
        assert_eq!(p, dir.path().join("cache/x/y.txt"));
        assert_eq!(r.verify(&e).unwrap().kind(), "cache");
        assert_eq!(std::fs::read_dir(dir.path().join("cache/.partial")).unwrap().count(), 0);
    }

    #[test]
    fn bad_hash_leaves_nothing_in_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let upstream = dir.path().join("up.txt");
        std::fs::write(&upstream, b"tampered\n").unwrap();
        let e = entry_for(b"original\n", "a.txt", format!("file://{}", upstream.display()));
        let r = roots(dir.path(), None);
        let err = r.resolve(&e).unwrap_err().to_string();
        assert!(err.contains("sha256 mismatch") && err.contains("nothing was written"), "{err}");
        assert!(!dir.path().join("cache/a.txt").exists());
        assert_eq!(std::fs::read_dir(dir.path().join("cache/.partial")).unwrap().count(), 0);
    }

    #[test]
    fn offline_error_names_file_url_and_mirror_variable() {
        let dir = tempfile::tempdir().unwrap();
        let e = entry_for(b"x", "mono/en/a.xml.gz", "http://127.0.0.1:9/a.xml".into());
        let r = roots(dir.path(), None);
        let err = r.resolve(&e).unwrap_err().to_string();
        assert!(err.contains("mono/en/a.xml.gz") && err.contains("http://127.0.0.1:9/a.xml"), "{err}");
        assert!(err.contains("CROSSLING_DATA"), "{err}");
    }

    #[test]
    fn mirror_gzip_is_verified_on_decompressed_content() {
        let dir = tempfile::tempdir().unwrap();
        let mirror = dir.path().join("mirror");
        std::fs::create_dir_all(mirror.join("mono")).unwrap();
        let content = b"<TEI>text</TEI>\n";
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(content).unwrap();
        std::fs::write(mirror.join("mono/a.xml.gz"), enc.finish().unwrap()).unwrap();
        let mut e = entry_for(content, "mono/a.xml.gz", "http://127.0.0.1:9/a.xml".into());
        e.gzip_in_mirror = true;
        let r = roots(dir.path(), Some(mirror.clone()));
        assert_eq!(r.verify(&e).unwrap(), Found::Mirror { path: mirror.join("mono/a.xml.gz"), gzipped: true });
        e.sha256 = "0".repeat(64);
        let err = r.verify(&e).unwrap_err().to_string();
        assert!(err.contains("a.xml.gz") && err.contains("decompressed"), "{err}");
    }
}
