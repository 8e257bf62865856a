//! Where the project finds its folders at run time. Each folder has an environment variable that names it, used
//! when it is set and not empty (so `VAR=` in a shell means "unset"), and a default: the project's own files
//! (scripts, manifests, the PyTorch reference scripts, the virtual environment, the workspace data mirror) beside
//! the crate as it was built, the caches under the user cache folder.
//!
//! A binary run away from its build folder (a GPU node, a copied binary) sees none of the defaults beside the crate,
//! so every such folder has its variable: `CROSSLING_SCRIPTS`, `CROSSLING_MANIFESTS`, `CROSSLING_BENCH_REFERENCE`,
//! `CROSSLING_PYTHON`, `CROSSLING_DATA`; the caches: `CROSSLING_MODELS`, `CROSSLING_CACHE`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The crate's folder as it was built (`CARGO_MANIFEST_DIR`): the project checkout.
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `rel` inside the crate's folder.
pub fn beside_crate(rel: &str) -> PathBuf {
    crate_dir().join(rel)
}

/// `value` as a path, unless it is absent or empty.
pub fn non_empty(value: Option<OsString>) -> Option<PathBuf> {
    value.filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The environment variable `var` as a path, when it is set and not empty.
pub fn env_path(var: &str) -> Option<PathBuf> {
    non_empty(std::env::var_os(var))
}

/// `$var` when set and not empty, else `rel` beside the crate.
pub fn env_or_beside_crate(var: &str, rel: &str) -> PathBuf {
    env_path(var).unwrap_or_else(|| beside_crate(rel))
}

/// `$var` when set and not empty, else `<user cache folder>/crossling/<rel>` (the system's temporary folder when
/// the user has no cache folder).
pub fn env_or_user_cache(var: &str, rel: &str) -> PathBuf {
    env_path(var).unwrap_or_else(|| dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("crossling").join(rel))
}

/// The Python that runs the PyTorch / gensim references: `explicit` (a `--python` flag), else `$CROSSLING_PYTHON`,
/// else the project's `.venv/bin/python` (made by `setup.sh`).
pub fn python(explicit: Option<&Path>) -> PathBuf {
    explicit.map(Path::to_path_buf).unwrap_or_else(|| env_or_beside_crate("CROSSLING_PYTHON", ".venv/bin/python"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_value_counts_as_unset() {
        assert_eq!(non_empty(None), None);
        assert_eq!(non_empty(Some("".into())), None);
        assert_eq!(non_empty(Some("/opt/x".into())), Some(PathBuf::from("/opt/x")));
    }

    #[test]
    fn defaults_lie_beside_the_crate() {
        assert!(beside_crate("Cargo.toml").is_file());
        assert!(beside_crate("scripts").join("fig7.rhai").is_file());
        // A variable no one sets falls back to the folder beside the crate.
        assert_eq!(env_or_beside_crate("CROSSLING_TEST_NEVER_SET", "scripts"), crate_dir().join("scripts"));
        assert!(env_or_user_cache("CROSSLING_TEST_NEVER_SET", "models").ends_with("crossling/models"));
    }

    #[test]
    fn an_explicit_python_wins() {
        assert_eq!(python(Some(Path::new("/usr/bin/python3"))), PathBuf::from("/usr/bin/python3"));
    }
}
