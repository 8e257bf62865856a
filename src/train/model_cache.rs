//! The model cache: a pre-training run is stored under a key that hashes everything that determines its
//! weights, so figures that need the same model train it once and an interrupted run resumes.
//!
//! `key = sha256(MODEL_CACHE_FORMAT [‖ SEP_EMB_FORMAT | SEP_LAYERS_FORMAT] ‖ run config as JSON ‖ sha256 of every
//! data file the run reads)`, first 16 hex digits; the second marker enters only for models with separate
//! embeddings ([`SEP_EMB_FORMAT`]) or, without them, separate bottom layers ([`SEP_LAYERS_FORMAT`]). In the key's copy of the config, `train.device` is left out and `train.precision` is resolved for
//! that device (`fp32` or `bf16`): where a model trains does not change what it is (beyond floating-point order),
//! its arithmetic does, so a run on the CPU and one on a GPU in fp32 share a key, and a bf16 run has its own; the folder is `<root>/<label>-<key>/` with the run's usual layout (`run.toml`, `corpora/`,
//! `tokenizer/`, `last/`, `best/`). The root is `$CROSSLING_MODELS`, else `<user cache>/crossling/models`.
//!
//! Processes share the cache: [`ensure_trained`] holds an exclusive advisory lock on `<label>-<key>.lock` beside
//! the folder while it checks and trains, so two figure runs that need the same model train it once — the second
//! waits, then finds it done.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::device::{Compute, Precision};
use crate::error::{Error, Result};
use crate::train::run::{run_pretraining, RunConfig};

/// Bumped whenever the model format, the trainer or the corpus builder changes what a config produces.
pub const MODEL_CACHE_FORMAT: &str = "crossling-model-v2";

/// Hashed into the key of every model with separate embeddings (`sharing.sep_emb`): since 2026-11-26 Sep Emb
/// separates the position embeddings too (Wu et al. 2020, §4.3), so a cached Sep Emb model of the same config has
/// other weights. A marker for these models alone keeps every other cached model valid, which bumping
/// [`MODEL_CACHE_FORMAT`] would not.
pub const SEP_EMB_FORMAT: &str = "crossling-sep-emb-positions-v1";

/// Hashed into the key of every model with separate bottom layers and shared embeddings (`sharing.sep_layers > 0`,
/// not `sep_emb`): since 2026-11-26 their random MLM replacements come from the language's own tokens (Wu et al.
/// 2020, §4.3), as Sep Emb models' always did.
pub const SEP_LAYERS_FORMAT: &str = "crossling-sep-layers-own-language-replacements-v1";

/// The format markers hashed into `cfg`'s key, in order.
fn format_markers(cfg: &RunConfig) -> Vec<&'static str> {
    let sharing = &cfg.train.model.sharing;
    let mut markers = vec![MODEL_CACHE_FORMAT];
    if sharing.sep_emb {
        markers.push(SEP_EMB_FORMAT);
    } else if sharing.sep_layers > 0 {
        markers.push(SEP_LAYERS_FORMAT);
    }
    markers
}

/// The cache root: `$CROSSLING_MODELS`, else `<user cache>/crossling/models`.
pub fn models_root() -> PathBuf {
    crate::paths::env_or_user_cache("CROSSLING_MODELS", "models")
}

/// A trained model in the cache.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CachedModel {
    /// Human-readable part of the folder name (e.g. `mono-en-smoke`).
    pub label: String,
    /// 16 hex digits of the cache key.
    pub key: String,
    /// The run folder.
    pub dir: PathBuf,
    /// The run config.
    pub config: RunConfig,
    /// Data files that determine the model: mirror path → sha256.
    pub data: BTreeMap<String, String>,
}

/// The data files a run reads: its corpus datasets (in its languages) and, with code-switching, the dictionary.
pub fn run_data_files(cfg: &RunConfig, catalog: &Catalog) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (lang, ids) in &cfg.corpus.datasets {
        // A pseudo-language reads another language's files (`[corpus.halves]`).
        let lang = cfg.corpus.halves.get(lang).map_or(lang, |h| &h.lang);
        for id in ids {
            for f in &catalog.get(id)?.files {
                if f.lang.as_deref().is_none_or(|l| l == lang) && f.role == crate::data::manifest::FileRole::Data {
                    out.insert(f.path.clone(), f.sha256.clone());
                }
            }
        }
    }
    if let Some(cs) = &cfg.codeswitch {
        let wanted = crate::text::evalsets::muse_path(&cs.dictionary);
        for f in catalog.get("muse")?.files.iter().filter(|f| f.path == wanted) {
            out.insert(f.path.clone(), f.sha256.clone());
        }
    }
    Ok(out)
}

/// The cache key of `cfg` (see the module docs); errors when its device is absent (it could not train there).
pub fn cache_key(cfg: &RunConfig, data: &BTreeMap<String, String>) -> Result<String> {
    key_of(cfg, cfg.train.compute()?, data)
}

/// The key of `cfg` trained with `compute` (its device dropped, its precision resolved).
fn key_of(cfg: &RunConfig, compute: Compute, data: &BTreeMap<String, String>) -> Result<String> {
    let json = |e: serde_json::Error| Error::Invalid(format!("run config: {e}"));
    let mut v = serde_json::to_value(cfg).map_err(json)?;
    let train =
        v.get_mut("train").and_then(|t| t.as_object_mut()).ok_or_else(|| Error::Invalid("run config".into()))?;
    train.remove("device");
    let precision = if compute.bf16 { Precision::Bf16 } else { Precision::Fp32 };
    train.insert("precision".into(), serde_json::to_value(precision).map_err(json)?);
    let mut h = Sha256::new();
    for marker in format_markers(cfg) {
        h.update(marker.as_bytes());
    }
    h.update(serde_json::to_vec(&v).map_err(json)?);
    for (path, sha) in data {
        h.update(path.as_bytes());
        h.update(sha.as_bytes());
    }
    Ok(hex::encode(h.finalize())[..16].to_string())
}

/// Where the cache keeps `cfg` under `label` (nothing is read or trained): its key, folder and data files.
pub fn locate(label: &str, cfg: &RunConfig, catalog: &Catalog, root: &Path) -> Result<CachedModel> {
    cfg.validate()?;
    let data = run_data_files(cfg, catalog)?;
    let key = cache_key(cfg, &data)?;
    let safe_label: String =
        label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let dir = folder(root, &safe_label, &key);
    Ok(CachedModel { label: safe_label, key, dir, config: cfg.clone(), data })
}

/// The cache folder `<root>/<label>-<key>` of a model whose (safe) label and key are known.
pub fn folder(root: &Path, label: &str, key: &str) -> PathBuf {
    root.join(format!("{label}-{key}"))
}

/// Whether the run of `cfg` in `dir` is complete: its last checkpoint at the config's step budget and every
/// snapshot it keeps.
pub fn is_trained(dir: &Path, cfg: &RunConfig) -> bool {
    let snapshots_kept =
        cfg.train.snapshot_steps.iter().all(|&step| {
            crate::train::checkpoint::read_state(&crate::train::TrainConfig::snapshot_dir(dir, step)).is_ok()
        });
    snapshots_kept && crate::train::checkpoint::read_state(&dir.join("last")).is_ok_and(|s| s.step >= cfg.train.steps)
}

/// Returns the cached model of `cfg`, training it first (or finishing an interrupted run) when needed; `fresh`
/// discards any cached copy and retrains.
pub fn ensure_trained(
    label: &str,
    cfg: &RunConfig,
    catalog: &Catalog,
    roots: &DataRoots,
    root: &Path,
    fresh: bool,
) -> Result<CachedModel> {
    let model = locate(label, cfg, catalog, root)?;
    let dir = &model.dir;
    let _lock = lock_model(root, &format!("{}-{}", model.label, model.key))?;
    if fresh && dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    if !is_trained(dir, cfg) {
        let resume = dir.join("run.toml").is_file();
        run_pretraining(cfg, catalog, roots, dir, resume)?;
    }
    Ok(model)
}

/// Takes the cache lock of model `name` under `root`, waiting (with a message) while another process holds it.
/// The lock is released when the returned file is dropped, or when the process ends.
fn lock_model(root: &Path, name: &str) -> Result<std::fs::File> {
    std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
    let path = root.join(format!("{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!("model {name}: another process is preparing it; waiting for {}", path.display());
            file.lock().map_err(|e| Error::io(&path, e))?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
    }
    Ok(file)
}

/// The first `n` non-empty training sentences of `lang` of the model crossling trained in run folder `dir` (its
/// `corpora/LANG.train.txt`), `name` naming it in errors.
pub fn training_sentences(dir: &Path, name: &str, lang: &str, n: usize) -> Result<Vec<String>> {
    let path = dir.join("corpora").join(format!("{lang}.train.txt"));
    if !path.is_file() {
        return Err(Error::Invalid(format!(
            "model {} has no training corpus for '{lang}' ({} is missing): words::corpus needs a model crossling trained",
            name,
            path.display()
        )));
    }
    let mut reader = crate::data::text_file::LineReader::open(&path)?;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        match reader.next_line()? {
            Some(l) if !l.trim().is_empty() => out.push(l.to_string()),
            Some(_) => {}
            None => break,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::presets::preset;

    #[test]
    fn keys_change_with_config_and_data() {
        let catalog = Catalog::load_default().unwrap();
        let a = preset("mono", "en", crate::Scale::Smoke).unwrap();
        let data = run_data_files(&a, &catalog).unwrap();
        assert!(!data.is_empty() && data.keys().all(|p| p.starts_with("mono/en/")), "{data:?}");
        let k = cache_key(&a, &data).unwrap();
        assert_eq!(k.len(), 16);
        assert_eq!(k, cache_key(&a, &data).unwrap());
        let mut b = a.clone();
        b.train.seed += 1;
        assert_ne!(k, cache_key(&b, &data).unwrap());
        let mut d2 = data.clone();
        d2.insert("x".into(), "y".into());
        assert_ne!(k, cache_key(&a, &d2).unwrap());
        let cs = preset("extra-anchors", "en-fr", crate::Scale::Smoke).unwrap();
        assert!(run_data_files(&cs, &catalog).unwrap().contains_key("dict/muse/en-fr.dict"));
    }

    #[test]
    fn separated_models_carry_their_own_format_marker() {
        for ab in ["sep-emb", "sep-emb-l1-3", "sep-emb-l1-6"] {
            let cfg = preset(ab, "en-fr", crate::Scale::Cpu).unwrap();
            assert_eq!(format_markers(&cfg), [MODEL_CACHE_FORMAT, SEP_EMB_FORMAT], "{ab}");
        }
        for ab in ["sep-l1-3", "sep-l1-6"] {
            let cfg = preset(ab, "en-fr", crate::Scale::Cpu).unwrap();
            assert_eq!(format_markers(&cfg), [MODEL_CACHE_FORMAT, SEP_LAYERS_FORMAT], "{ab}");
        }
        for ab in ["default", "no-anchors", "default-anchors", "extra-anchors"] {
            let cfg = preset(ab, "en-fr", crate::Scale::Cpu).unwrap();
            assert_eq!(format_markers(&cfg), [MODEL_CACHE_FORMAT], "{ab}");
        }
    }

    #[test]
    fn the_device_is_not_in_the_key_and_the_precision_is() {
        let catalog = Catalog::load_default().unwrap();
        let mut cfg = preset("mono", "en", crate::Scale::Smoke).unwrap();
        let data = run_data_files(&cfg, &catalog).unwrap();
        let auto = cache_key(&cfg, &data).unwrap();
        cfg.train.device = "cpu".into();
        let cpu = cache_key(&cfg, &data).unwrap();
        cfg.train.precision = Precision::Fp32;
        assert_eq!([&cpu, &cache_key(&cfg, &data).unwrap()], [&auto, &auto], "auto resolves to the CPU here, in fp32");
        // A GPU run's key, computed without a GPU: fp32 there shares the CPU's key, bf16 has its own.
        let gpu = |bf16| Compute { device: tch::Device::Cuda(0), bf16 };
        assert_eq!(key_of(&cfg, gpu(false), &data).unwrap(), auto);
        assert_ne!(key_of(&cfg, gpu(true), &data).unwrap(), auto);
        cfg.train.device = "tpu".into();
        assert!(cache_key(&cfg, &data).is_err(), "a device that cannot train has no key");
    }

    #[test]
    fn the_model_lock_is_exclusive_and_released_on_drop() {
        let root = tempfile::tempdir().unwrap();
        let held = lock_model(root.path(), "m-0").unwrap();
        let other = std::fs::OpenOptions::new().write(true).open(root.path().join("m-0.lock")).unwrap();
        assert!(matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        assert!(lock_model(root.path(), "m-1").is_ok(), "locks are per model");
        drop(held);
        other.try_lock().unwrap();
    }
}
