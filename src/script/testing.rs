//! Test helpers: a smoke-scale session in a temporary folder, and running a script text in it.
use std::path::Path;

use super::engine::run_file;
use super::env::{RunLog, ScriptEnv};
use super::ns_common::Session;
use crate::error::Result;

/// A smoke-scale session whose scripts, outputs and model cache live under `dir`.
pub fn session(dir: &Path) -> Session {
    let roots = crate::data::resolve::DataRoots {
        mirror: crate::data::formats::test_mirror(),
        cache: dir.join("data-cache"),
        allow_download: false,
        progress: false,
    };
    let catalog = crate::data::manifest::Catalog::load_default().expect("manifests load");
    let env = ScriptEnv {
        scale: crate::Scale::Smoke,
        seed: 42,
        compute: crate::device::Compute::cpu(),
        figure: "demo".into(),
        registered_title: None,
        out_dir: dir.join("out"),
        scripts_dir: dir.to_path_buf(),
        fresh: false,
        models_dir: dir.join("models"),
        given_models: Default::default(),
        log: RunLog::default(),
    };
    Session::with_data(env, catalog, roots)
}

/// Writes `text` to `dir/name` and runs it in `s`.
pub fn run_text(s: &Session, dir: &Path, name: &str, text: &str) -> Result<rhai::Dynamic> {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write script");
    run_file(s, &p)
}
