//! The static-model cache: vectors trained on an MLM run's corpora are stored under a key that hashes everything
//! that determines them, so figures that share a baseline train it once.
//!
//! `key = sha256(WORDVEC_CACHE_FORMAT ‖ the source run's cache key ‖ the request as JSON)`, first 16 hex digits;
//! the folder is `<models root>/wordvec/<label>-<key>/` holding `vectors.safetensors` (the vectors, with the
//! request, the training report and the source run in its metadata) and `report.json`. A folder without
//! `vectors.safetensors` (an interrupted run) is trained again.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::train::{train_static, StaticKind};
use super::training_text::{read_run_corpus, Unit};
use super::vectors::WordVectors;
use crate::error::{Error, Result};

/// Bumped whenever a trainer or the corpus reading changes what a request produces.
pub const WORDVEC_CACHE_FORMAT: &str = "crossling-wordvec-v1";

/// What to train: the model kind and its settings, the unit, and which of the run's languages and sentences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticRequest {
    pub kind: StaticKind,
    pub unit: Unit,
    /// Languages of the run to train on jointly (all of the run's when empty).
    #[serde(default)]
    pub langs: Vec<String>,
    /// At most this many sentences per language (all of the run's training sentences when unset).
    #[serde(default)]
    pub max_sentences: Option<usize>,
    pub min_count: u64,
    /// The kind's settings (`Word2VecConfig`, `FastTextConfig` or `GloveConfig` fields); defaults where absent.
    #[serde(default)]
    pub config: serde_json::Map<String, serde_json::Value>,
}

/// Trained vectors in the cache.
#[derive(Debug, Clone)]
pub struct CachedVectors {
    pub key: String,
    pub dir: PathBuf,
    pub vectors: WordVectors,
    pub report: serde_json::Value,
}

/// The cache key of `req` on the run whose cache key is `source_key`.
pub fn cache_key(source_key: &str, req: &StaticRequest) -> Result<String> {
    let mut h = Sha256::new();
    h.update(WORDVEC_CACHE_FORMAT.as_bytes());
    h.update(source_key.as_bytes());
    h.update(serde_json::to_vec(req).map_err(|e| Error::Invalid(format!("static request: {e}")))?);
    Ok(hex::encode(h.finalize())[..16].to_string())
}

/// Returns the vectors of `req` trained on the run folder `run_dir` (cache key `source_key`), training them first
/// when the cache has none; `fresh` retrains.
pub fn ensure_static(
    label: &str,
    run_dir: &Path,
    source_key: &str,
    req: &StaticRequest,
    root: &Path,
    fresh: bool,
    progress: bool,
) -> Result<CachedVectors> {
    let key = cache_key(source_key, req)?;
    let safe: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let dir = root.join("wordvec").join(format!("{safe}-{key}"));
    let file = dir.join("vectors.safetensors");
    if fresh && dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    if file.is_file() {
        let vectors = WordVectors::load_safetensors(&file)?;
        let report = serde_json::from_str(vectors.metadata.get("report").map_or("null", String::as_str))
            .map_err(|e| Error::format_file(&file, format!("metadata `report` is not JSON: {e}")))?;
        return Ok(CachedVectors { key, dir, vectors, report });
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let langs = if req.langs.is_empty() { run_languages(run_dir)? } else { req.langs.clone() };
    let started = std::time::Instant::now();
    let corpus = read_run_corpus(run_dir, &langs, req.unit, req.max_sentences, req.min_count)?;
    let (mut vectors, trainer_report) = train_static(req.kind, &corpus, &req.config, &dir, progress)?;
    let report = serde_json::json!({
        "kind": req.kind,
        "unit": req.unit,
        "langs": langs,
        "sentences": corpus.n_sentences(),
        "tokens": corpus.n_tokens(),
        "vocabulary": corpus.vocab.len(),
        "seconds": started.elapsed().as_secs_f64(),
        "trainer": trainer_report,
    });
    vectors.metadata.insert("request".into(), serde_json::to_string(req).unwrap_or_default());
    vectors.metadata.insert("source_run_key".into(), source_key.to_string());
    vectors.metadata.insert("report".into(), report.to_string());
    vectors.save_safetensors(&file)?;
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    std::fs::write(dir.join("report.json"), text).map_err(|e| Error::io(dir.join("report.json"), e))?;
    Ok(CachedVectors { key, dir, vectors, report })
}

/// The languages of a run folder (from its `run.toml`).
fn run_languages(run_dir: &Path) -> Result<Vec<String>> {
    Ok(crate::train::run::RunConfig::load(&run_dir.join("run.toml"))?.languages)
}
