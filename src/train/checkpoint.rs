//! Checkpoint directories.
//!
//! A checkpoint directory holds
//! - `model.safetensors` — every variable of the model's `VarStore`, under its Hugging Face name;
//! - `optimizer.safetensors` — Adam's first and second moments (`exp_avg.NAME`, `exp_avg_sq.NAME`);
//! - `config.json` — the [`ModelConfig`];
//! - `trainer_state.json` — [`TrainerState`]: format version, step, Adam's step count, best validation
//!   perplexity, each language's stream position, the RNG seeds, the language-sampling probabilities, the
//!   schedule, and the sha256 of both safetensors files.
//!
//! **Exact resume.** Every random choice of the trainer (language, masking, dropout) is drawn from a generator
//! seeded by a pure function of `(seed, purpose, step)`; data order lives in the stream positions; Adam's moments
//! and step count are saved. A run of `k` steps followed by a resume for `N − k` steps therefore takes the same
//! batches, masks and updates as an uninterrupted run of `N` steps (bit-identical on the CPU).
//!
//! **Atomic writes.** [`save`] writes into `DIR.tmp-<pid>/`, fsyncs every file and the folder, moves an existing
//! `DIR` to `DIR.old`, renames the temporary folder to `DIR`, and only then removes `DIR.old` (restoring it if the
//! rename failed). A crash leaves either the old or the new checkpoint, never a mix.
//!
//! **Verified loads.** [`load`] refuses — naming the file and the problem — a missing file, an unknown format
//! version, a config that differs from the model being resumed, and a safetensors file whose sha256 differs
//! from the one recorded (a corrupt or swapped file).
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tch::nn::VarStore;

use crate::error::{Error, Result};
use crate::model::ModelConfig;
use crate::nn::schedule::{Adam, Schedule};
use crate::text::stream::StreamPosition;

/// The version of the checkpoint layout written by [`save`].
pub const FORMAT_VERSION: u32 = 1;

use crate::model::checkpoint::load_weights;
pub use crate::model::checkpoint::{sha256_file, CONFIG_FILE, MODEL_FILE, OPTIMIZER_FILE, STATE_FILE};

/// Everything besides the tensors that a resumed run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainerState {
    pub format_version: u32,
    /// Optimiser steps completed.
    pub step: u64,
    /// Adam's update count `t` (equals `step` for the trainer).
    pub adam_step: u64,
    /// Best validation perplexity of the selection language so far, and the step it was reached at.
    pub best_valid_ppl: Option<f64>,
    pub best_step: Option<u64>,
    /// Per language, where its training stream stands.
    pub stream_positions: BTreeMap<String, StreamPosition>,
    /// The base seeds of the per-step generators (`sampler`, `masking`, `dropout`); with `step` they determine
    /// every later draw.
    pub rng_seeds: BTreeMap<String, u64>,
    /// The language-sampling distribution.
    pub sampler_probs: Vec<(String, f64)>,
    pub schedule: Schedule,
    /// sha256 (hex) of `model.safetensors` and of `optimizer.safetensors`.
    pub model_sha256: String,
    pub optimizer_sha256: String,
}

fn fsync(path: &Path) -> Result<()> {
    fs::File::open(path).and_then(|f| f.sync_all()).map_err(|e| Error::io(path, e))
}

fn sibling(dir: &Path, suffix: &str) -> Result<PathBuf> {
    let name = dir
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("checkpoint path {} has no folder name", dir.display())))?;
    let mut name = name.to_os_string();
    name.push(suffix);
    Ok(dir.with_file_name(name))
}

/// Atomically write a checkpoint to `dir` (see the module docs). The hashes in `state` are filled in here.
pub fn save(dir: &Path, vs: &VarStore, cfg: &ModelConfig, adam: &Adam, state: &TrainerState) -> Result<()> {
    let tmp = sibling(dir, &format!(".tmp-{}", std::process::id()))?;
    let old = sibling(dir, ".old")?;
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    }
    fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let model = tmp.join(MODEL_FILE);
    vs.save(&model).map_err(|e| Error::format_file(&model, e.to_string()))?;
    let opt = tmp.join(OPTIMIZER_FILE);
    adam.save(&opt)?;
    cfg.save_json(tmp.join(CONFIG_FILE))?;
    copy_run_tokenizer(dir, &tmp)?;
    let mut state = state.clone();
    state.format_version = FORMAT_VERSION;
    state.adam_step = adam.step;
    state.model_sha256 = sha256_file(&model)?;
    state.optimizer_sha256 = sha256_file(&opt)?;
    let state_path = tmp.join(STATE_FILE);
    let json = serde_json::to_string_pretty(&state).map_err(|e| Error::format_file(&state_path, e.to_string()))?;
    let mut f = fs::File::create(&state_path).map_err(|e| Error::io(&state_path, e))?;
    f.write_all(json.as_bytes()).map_err(|e| Error::io(&state_path, e))?;
    drop(f);
    for name in [MODEL_FILE, OPTIMIZER_FILE, CONFIG_FILE, STATE_FILE] {
        fsync(&tmp.join(name))?;
    }
    fsync(&tmp)?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(|e| Error::io(&old, e))?;
    }
    let had_previous = dir.exists();
    if had_previous {
        fs::rename(dir, &old).map_err(|e| Error::io(dir, e))?;
    }
    if let Err(e) = fs::rename(&tmp, dir) {
        if had_previous {
            let _ = fs::rename(&old, dir);
        }
        return Err(Error::io(dir, e));
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fsync(parent)?;
    }
    if had_previous {
        fs::remove_dir_all(&old).map_err(|e| Error::io(&old, e))?;
    }
    Ok(())
}

/// Copies the run's tokenizer (`dir/../tokenizer/`, when there is one) into the checkpoint being written, so a
/// checkpoint folder is self-contained: weights, config, tokenizer, trainer state.
fn copy_run_tokenizer(dir: &Path, tmp: &Path) -> Result<()> {
    let Some(src) = dir.parent().map(|p| p.join("tokenizer")).filter(|p| p.is_dir()) else {
        return Ok(());
    };
    let dst = tmp.join("tokenizer");
    fs::create_dir_all(&dst).map_err(|e| Error::io(&dst, e))?;
    for entry in fs::read_dir(&src).map_err(|e| Error::io(&src, e))? {
        let entry = entry.map_err(|e| Error::io(&src, e))?;
        if entry.path().is_file() {
            let to = dst.join(entry.file_name());
            fs::copy(entry.path(), &to).map_err(|e| Error::io(&to, e))?;
            fsync(&to)?;
        }
    }
    Ok(())
}

fn require(path: &Path) -> Result<()> {
    if path.is_file() {
        Ok(())
    } else {
        Err(Error::format_file(path, "missing checkpoint file"))
    }
}

/// Read only `trainer_state.json` of `dir`, checking that it exists and has a known format version.
pub fn read_state(dir: &Path) -> Result<TrainerState> {
    let path = dir.join(STATE_FILE);
    require(&path)?;
    let text = fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::format_file(&path, format!("invalid JSON: {e}")))?;
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if version != Some(FORMAT_VERSION as u64) {
        return Err(Error::format_file(
            &path,
            format!("unknown checkpoint format version {version:?}; this build reads version {FORMAT_VERSION}"),
        ));
    }
    serde_json::from_value(value).map_err(|e| Error::format_file(&path, e.to_string()))
}

/// Verify the checkpoint in `dir` and load it into `vs` and `adam`, built from `cfg`; returns the trainer state.
pub fn load(dir: &Path, vs: &mut VarStore, cfg: &ModelConfig, adam: &mut Adam) -> Result<TrainerState> {
    for name in [MODEL_FILE, OPTIMIZER_FILE, CONFIG_FILE, STATE_FILE] {
        require(&dir.join(name))?;
    }
    let state = read_state(dir)?;
    let cfg_path = dir.join(CONFIG_FILE);
    let saved = ModelConfig::load_json(&cfg_path)?;
    if &saved != cfg {
        return Err(Error::format_file(
            &cfg_path,
            format!("model config does not match the model being resumed: saved {saved:?}, expected {cfg:?}"),
        ));
    }
    for (name, expected) in [(MODEL_FILE, &state.model_sha256), (OPTIMIZER_FILE, &state.optimizer_sha256)] {
        let path = dir.join(name);
        let found = sha256_file(&path)?;
        if &found != expected {
            return Err(Error::Checksum {
                path,
                expected: expected.clone(),
                found,
                hint: " (corrupt checkpoint: the file differs from the one recorded in trainer_state.json)".into(),
            });
        }
    }
    let model = dir.join(MODEL_FILE);
    load_weights(vs, &model, cfg)?;
    adam.load(&dir.join(OPTIMIZER_FILE), state.adam_step)?;
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MlmModel;
    use crate::train::trainer::tests::tiny_model;

    fn build(cfg: &ModelConfig, seed: i64) -> (VarStore, Adam) {
        let _rng = crate::train::trainer::torch_rng_lock();
        tch::manual_seed(seed);
        let vs = VarStore::new(tch::Device::Cpu);
        MlmModel::new(&vs.root(), cfg).unwrap();
        let adam = Adam::new(&vs);
        (vs, adam)
    }

    fn state() -> TrainerState {
        TrainerState {
            format_version: FORMAT_VERSION,
            step: 3,
            adam_step: 0,
            best_valid_ppl: Some(12.5),
            best_step: Some(2),
            stream_positions: [("en".to_string(), StreamPosition { epoch: 1, cursor: 2, seed: 9 })].into(),
            rng_seeds: [("masking".to_string(), 5u64)].into(),
            sampler_probs: vec![("en".into(), 1.0)],
            schedule: Schedule { peak_lr: 1e-4, warmup_steps: 10 },
            model_sha256: String::new(),
            optimizer_sha256: String::new(),
        }
    }

    fn err_text(r: Result<TrainerState>) -> String {
        r.expect_err("load should fail").to_string()
    }

    #[test]
    fn round_trip_and_refusals() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("last");
        let cfg = tiny_model(40);
        let (vs, mut adam) = build(&cfg, 1);
        adam.step = 3;
        save(&dir, &vs, &cfg, &adam, &state()).unwrap();
        save(&dir, &vs, &cfg, &adam, &state()).unwrap(); // overwrite: previous moved aside, then removed
        assert!(!tmp.path().join("last.old").exists());
        let (mut vs2, mut adam2) = build(&cfg, 2);
        let loaded = load(&dir, &mut vs2, &cfg, &mut adam2).unwrap();
        assert_eq!((loaded.step, loaded.best_valid_ppl, adam2.step), (3, Some(12.5), 3));
        assert_eq!(loaded.stream_positions, state().stream_positions);
        let (a, b) = (vs.variables(), vs2.variables());
        assert_eq!(a.len(), b.len());
        for (name, t) in &a {
            assert!(t.equal(&b[name]), "{name}");
        }

        // Mismatched config.
        let mut other = cfg.clone();
        other.hidden = 64;
        let (mut vs3, mut adam3) = build(&other, 1);
        let msg = err_text(load(&dir, &mut vs3, &other, &mut adam3));
        assert!(msg.contains("config.json") && msg.contains("does not match"), "{msg}");

        // Corrupt model: flip one byte.
        let model = dir.join(MODEL_FILE);
        let mut bytes = fs::read(&model).unwrap();
        let i = bytes.len() - 5;
        bytes[i] ^= 0xFF;
        fs::write(&model, &bytes).unwrap();
        let msg = err_text(load(&dir, &mut vs2, &cfg, &mut adam2));
        assert!(msg.contains("model.safetensors") && msg.contains("sha256"), "{msg}");

        // Unknown format version.
        save(&dir, &vs, &cfg, &adam, &state()).unwrap();
        let sp = dir.join(STATE_FILE);
        let text = fs::read_to_string(&sp).unwrap().replace("\"format_version\": 1", "\"format_version\": 99");
        fs::write(&sp, text).unwrap();
        let msg = err_text(load(&dir, &mut vs2, &cfg, &mut adam2));
        assert!(msg.contains("trainer_state.json") && msg.contains("99"), "{msg}");

        // Missing file.
        fs::remove_file(dir.join(OPTIMIZER_FILE)).unwrap();
        let msg = err_text(load(&dir, &mut vs2, &cfg, &mut adam2));
        assert!(msg.contains("optimizer.safetensors") && msg.contains("missing"), "{msg}");
    }
}
