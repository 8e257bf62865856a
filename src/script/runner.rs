//! Runs one figure or experiment script end to end: the engine, the record with provenance, the run log, and the
//! outputs (`ID.json`, then the rendered charts and tables) in the outputs folder.
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::engine::{run_file, Session};
use super::env::{RunLog, ScriptEnv};
use super::provenance::{git_revision, now_utc};
use super::record::FigureRecord;
use crate::error::{Error, Result};

/// How to run a script.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub scale: String,
    pub seed: u64,
    pub device: String,
    /// Retrain / re-extract instead of using cached models and features.
    pub fresh: bool,
    /// The outputs folder (`figures/` for the registry's figures).
    pub out_dir: PathBuf,
    /// Where `import "lib/…"` looks.
    pub scripts_dir: PathBuf,
    /// Models given on the command line, by name.
    pub given_models: std::collections::BTreeMap<String, PathBuf>,
}

impl RunOptions {
    /// What `crossling figure ID --scale SCALE --out OUT_DIR` runs with: seed 0 on the cpu, cached models, the
    /// project's `scripts/`, no given models (notebooks start from this and change fields).
    pub fn figure(scale: &str, out_dir: PathBuf) -> Self {
        RunOptions {
            scale: scale.to_string(),
            seed: 0,
            device: "cpu".into(),
            fresh: false,
            out_dir,
            scripts_dir: crate::figures::scripts_dir(),
            given_models: Default::default(),
        }
    }
}

/// Runs `script` as figure `id`; writes `out_dir/ID.json` and `out_dir/logs/ID.log`, then renders the record.
pub fn run_script(script: &Path, id: &str, opts: &RunOptions) -> Result<FigureRecord> {
    let env = ScriptEnv {
        scale: opts.scale.clone(),
        seed: opts.seed,
        device: opts.device.clone(),
        figure: id.to_string(),
        out_dir: opts.out_dir.clone(),
        scripts_dir: opts.scripts_dir.clone(),
        fresh: opts.fresh,
        models_dir: crate::train::zoo::models_root(),
        given_models: opts.given_models.clone(),
        log: RunLog::default(),
    };
    env.validate()?;
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| Error::io(&opts.out_dir, e))?;
    let session = Session::new(env.clone())?;
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The revision of the code as the run starts (edits made while it runs do not describe it).
    let revision = git_revision(project);
    let started_at = now_utc();
    let t0 = Instant::now();
    let outcome = run_file(&session, script);
    let log_dir = opts.out_dir.join("logs");
    std::fs::create_dir_all(&log_dir).map_err(|e| Error::io(&log_dir, e))?;
    let log_path = log_dir.join(format!("{id}.log"));
    let mut log_text = env.log.lines().join("\n");
    if let Err(e) = &outcome {
        log_text.push_str(&format!("\nerror: {e}"));
    }
    std::fs::write(&log_path, log_text + "\n").map_err(|e| Error::io(&log_path, e))?;
    let _script_value = outcome?;

    let mut record = session.with_record(|r| r.clone());
    if record.caption.trim().is_empty() {
        return Err(Error::Invalid(format!(
            "{}: the script set no caption (results::caption): every figure states what it shows, its scale and any \
             substitution",
            script.display()
        )));
    }
    if record.title.is_empty() {
        record.title = crate::figures::info(id).map(|f| f.title.to_string()).unwrap_or_else(|_| id.to_string());
    }
    let p = &mut record.provenance;
    p.revision = revision;
    p.crossling_version = env!("CARGO_PKG_VERSION").to_string();
    p.libtorch = crate::device::torch_info().libtorch_lib.to_string();
    p.scale = opts.scale.clone();
    p.seed = opts.seed;
    p.device = opts.device.clone();
    p.script = script.strip_prefix(project).unwrap_or(script).display().to_string();
    p.script_sha256 = crate::data::resolve::hash_file(script, false)?.1;
    p.started_at = started_at;
    p.wall_time_s = (t0.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    p.log = env.log.lines();
    record.save(&opts.out_dir.join(format!("{id}.json")))?;
    super::render::render_record(&record, &opts.out_dir)?;
    Ok(record)
}
