//! The files of a checkpoint folder, as far as a model reader needs them: `model.safetensors` (the weights, under
//! Hugging Face names), `config.json` (the [`ModelConfig`](super::ModelConfig)), and, in a crossling training run,
//! `trainer_state.json`, whose `model_sha256` (hex sha256 of `model.safetensors`) lets a reader refuse a corrupt
//! or swapped weights file. The trainer's side of the folder (the optimiser's moments, the resume state) is
//! [`crate::train::checkpoint`].
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::ModelConfig;
use crate::error::{Error, Result};

pub const MODEL_FILE: &str = "model.safetensors";
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
pub const CONFIG_FILE: &str = "config.json";
pub const STATE_FILE: &str = "trainer_state.json";

/// Loads `model.safetensors` at `path` into `vs`, built from `cfg`; a failure names the file, and a Sep Emb model
/// whose file lacks per-language position embeddings is told why: before 2026-11-26 Sep Emb shared them (Wu et al.
/// 2020, §4.3 separate "the embedding layers (including positional embeddings)").
pub fn load_weights(vs: &mut tch::nn::VarStore, path: &Path, cfg: &ModelConfig) -> Result<()> {
    vs.load(path).map_err(|e| {
        let message = e.to_string();
        let hint = if cfg.sharing.sep_emb && message.contains("position_embeddings") {
            " (a Sep Emb checkpoint written before 2026-11-26 shares its position embeddings; Sep Emb now separates \
             them per language, as Wu et al. 2020 §4.3 do: pre-train it again)"
        } else {
            ""
        };
        Error::format_file(path, format!("{message}{hint}"))
    })
}

/// sha256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// The weights' sha256 recorded in `dir/trainer_state.json`, or `None` when the folder has no trainer state (an
/// imported or exported model).
pub fn recorded_model_sha256(dir: &Path) -> Result<Option<String>> {
    #[derive(Deserialize)]
    struct Recorded {
        model_sha256: String,
    }
    let path = dir.join(STATE_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let recorded: Recorded =
        serde_json::from_str(&text).map_err(|e| Error::format_file(&path, format!("no model_sha256: {e}")))?;
    Ok(Some(recorded.model_sha256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_hash_is_read_when_there_is_a_state() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(recorded_model_sha256(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join(STATE_FILE), r#"{"step": 3, "model_sha256": "ab"}"#).unwrap();
        assert_eq!(recorded_model_sha256(dir.path()).unwrap().as_deref(), Some("ab"));
        std::fs::write(dir.path().join(STATE_FILE), "{}").unwrap();
        let e = recorded_model_sha256(dir.path()).unwrap_err().to_string();
        assert!(e.contains("trainer_state.json") && e.contains("model_sha256"), "{e}");
        std::fs::write(dir.path().join(MODEL_FILE), b"abc").unwrap();
        assert_eq!(
            sha256_file(&dir.path().join(MODEL_FILE)).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
