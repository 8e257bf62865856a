//! What every script run knows: its scale, seed, device and figure id (the constants `SCALE`, `SEED`, `DEVICE`,
//! `FIGURE` of DESIGN.md), where it may write, and the run log that captures `print` and `debug`.
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::scale::Scale;

/// Settings of one script run.
#[derive(Debug, Clone)]
pub struct ScriptEnv {
    pub scale: Scale,
    /// The seed every random choice derives from.
    pub seed: u64,
    /// Device and precision of every model the script trains, fine-tunes or encodes (resolved once, where the
    /// command started).
    pub compute: Compute,
    /// The figure id (or the script's file stem for `crossling run`).
    pub figure: String,
    /// The registry's title when the script is a registered figure's own (`scripts/ID.rhai`): the record's title,
    /// which `results::title` may not contradict. `None` for any other script (and in planning runs).
    pub registered_title: Option<&'static str>,
    /// The only folder the script's outputs go to.
    pub out_dir: PathBuf,
    /// Folder searched by `import "lib/…"` (the `scripts/` folder).
    pub scripts_dir: PathBuf,
    /// Retrain / re-extract instead of using cached models and features.
    pub fresh: bool,
    /// The model cache (see [`crate::train::model_cache::models_root`]).
    pub models_dir: PathBuf,
    /// Models given on the command line (`--model NAME=DIR`), for `model::given(NAME)`.
    pub given_models: std::collections::BTreeMap<String, PathBuf>,
    /// Captured `print` / `debug` lines and runtime notes, in order.
    pub log: RunLog,
}

impl ScriptEnv {
    /// `relative` resolved inside the outputs folder; absolute paths and `..` are refused so that a script writes
    /// only there.
    pub fn output_path(&self, relative: &str) -> Result<PathBuf> {
        let rel = Path::new(relative);
        let ok = !relative.is_empty() && rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !ok {
            return Err(Error::Invalid(format!(
                "output path '{relative}' must be a relative path inside the outputs folder (no '..', not absolute)"
            )));
        }
        Ok(self.out_dir.join(rel))
    }
}

/// Lines captured during a run; shared by the engine's callbacks.
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    lines: Arc<Mutex<Vec<String>>>,
    /// Keep lines without echoing them (planning runs, [`crate::grid`]).
    quiet: bool,
}

impl RunLog {
    /// A log that keeps its lines without echoing them to stderr.
    pub fn quiet() -> Self {
        RunLog { quiet: true, ..Default::default() }
    }

    /// Appends a line (and echoes it to stderr so long runs show progress).
    pub fn push(&self, line: impl Into<String>) {
        let line = line.into();
        if !self.quiet {
            eprintln!("{line}");
        }
        if let Ok(mut v) = self.lines.lock() {
            v.push(line);
        }
    }

    /// Every line so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> ScriptEnv {
        ScriptEnv {
            scale: Scale::Smoke,
            seed: 1,
            compute: Compute::cpu(),
            figure: "t".into(),
            registered_title: None,
            out_dir: PathBuf::from("/tmp/out"),
            scripts_dir: PathBuf::from("scripts"),
            fresh: false,
            models_dir: PathBuf::from("/tmp/models"),
            given_models: Default::default(),
            log: RunLog::default(),
        }
    }

    #[test]
    fn outputs_stay_inside_the_folder() {
        let e = env();
        assert_eq!(e.output_path("a/b.json").unwrap(), PathBuf::from("/tmp/out/a/b.json"));
        for bad in ["../x", "/etc/passwd", "a/../../x", ""] {
            assert!(e.output_path(bad).unwrap_err().to_string().contains("inside the outputs folder"), "{bad}");
        }
    }
}
