//! Opening any model an analysis can use, for inference: a crossling checkpoint folder (`config.json` +
//! `model.safetensors`, tokenizer in `./tokenizer/` or the run's `../tokenizer/`), a crossling run folder (its
//! `best/` checkpoint, else `last/`), or a Hugging Face encoder folder ([`crate::model::hf::import`]: BERT,
//! RoBERTa, XLM-R, DistilBERT, ELECTRA; bare encoder, masked LM, pre-training or task model).
//!
//! Every analysis runs on the encoder alone; only decoding with the masked-LM head (MDS token translation) needs
//! the head, which a Hugging Face checkpoint may lack: [`LoadedModel::has_mlm_head`] tells, and
//! [`LoadedModel::require_mlm_head`] / [`LoadedModel::logits`] refuse in one line.
//!
//! The model is built on the requested device with frozen parameters; [`LoadedModel::hidden_states`] and
//! [`LoadedModel::logits`] run under `no_grad` with dropout off. [`ModelSource`] records where the weights came
//! from and their sha256, for provenance.
use std::path::{Path, PathBuf};

use tch::{nn::VarStore, Device, Tensor};

use super::checkpoint::{load_weights, recorded_model_sha256, sha256_file, CONFIG_FILE, MODEL_FILE};
use super::hf::config::is_hf_config;
use super::hf::import::{build_model, import_hf};
use super::tokenizer::{load_hf_tokenizer_with, ModelTokenizer};
use super::{EncoderOutput, MlmModel, ModelConfig};
use crate::error::{Error, Result};
use crate::text::tokenize::CrossTokenizer;

/// Where a model comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Crossling,
    HuggingFace,
}

impl ModelKind {
    /// `crossling` or `huggingface`.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Crossling => "crossling",
            ModelKind::HuggingFace => "huggingface",
        }
    }
}

/// Provenance of a loaded model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSource {
    pub kind: ModelKind,
    /// The folder whose weights were loaded (the checkpoint folder for a run).
    pub path: PathBuf,
    /// sha256 (hex) of the weights file.
    pub weights_sha256: String,
}

/// A model ready for inference, with its tokenizer.
#[derive(Debug)]
pub struct LoadedModel {
    pub model: MlmModel,
    pub vs: VarStore,
    pub tokenizer: ModelTokenizer,
    pub config: ModelConfig,
    pub source: ModelSource,
    /// Things the user should know (e.g. tensors of a HF checkpoint that were ignored).
    pub notes: Vec<String>,
}

impl LoadedModel {
    /// Opens a crossling checkpoint, a crossling run folder or a Hugging Face encoder folder on `device`; a
    /// registry name (`e5-small`, [`super::registry`]) that is not a folder here opens the registry's copy, fetched
    /// first when the model cache has none (not with `CROSSLING_OFFLINE`).
    pub fn open(dir: &Path, device: Device) -> Result<LoadedModel> {
        if !dir.exists() {
            if let Some(name) = dir.to_str().filter(|n| super::registry::is_registry_name(n)) {
                return LoadedModel::open(&super::registry::available(name)?, device);
            }
        }
        if !dir.is_dir() {
            return Err(Error::Invalid(format!("model folder {} does not exist", dir.display())));
        }
        let cfg_path = dir.join(CONFIG_FILE);
        if cfg_path.is_file() {
            let text = std::fs::read_to_string(&cfg_path).map_err(|e| Error::io(&cfg_path, e))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| Error::format_file(&cfg_path, format!("invalid JSON: {e}")))?;
            return if is_hf_config(&v) { open_hf(dir, device) } else { open_checkpoint(dir, device) };
        }
        if let Some(checkpoint) = run_checkpoint(dir) {
            return LoadedModel::open(&checkpoint, device);
        }
        Err(Error::Invalid(format!(
            "{} is not a model folder: expected config.json (a crossling checkpoint or a Hugging Face folder) \
             or best/ or last/ (a crossling training run)",
            dir.display()
        )))
    }

    /// The same architecture and tokenizer with freshly initialised weights drawn with `seed` (the "Random"
    /// baseline of Emerging Figure 7: an encoder of the same shape that never saw data); a model without a
    /// masked-LM head stays without one.
    pub fn reinitialised(self, seed: u64) -> Result<LoadedModel> {
        let device = self.device();
        let with_head = self.has_mlm_head();
        let (vs, model) = {
            let _rng = crate::device::torch_rng_lock(); // re-entrant: build_model takes it again
            tch::manual_seed(seed as i64);
            let (mut vs, model) = build_model(&self.config, device, with_head)?;
            vs.freeze();
            (vs, model)
        };
        let mut notes = self.notes;
        notes.push(format!(
            "weights randomly initialised with seed {seed} (architecture of {})",
            self.source.path.display()
        ));
        let source = ModelSource {
            weights_sha256: format!("random:seed={seed}:like={}", self.source.weights_sha256),
            ..self.source
        };
        Ok(LoadedModel { model, vs, tokenizer: self.tokenizer, config: self.config, source, notes })
    }

    /// Whether the model has a masked-LM head: always for crossling models; for a Hugging Face checkpoint, when
    /// it was saved with one (`…ForMaskedLM`, `BertForPreTraining`).
    pub fn has_mlm_head(&self) -> bool {
        self.vs.variables().keys().any(|n| n.starts_with("cls.predictions."))
    }

    /// `Ok` when the model has a masked-LM head, else the one-line error of a command that needs it for `what`.
    pub fn require_mlm_head(&self, what: &str) -> Result<()> {
        if self.has_mlm_head() {
            return Ok(());
        }
        if let Some(name) = super::registry::entry_of_folder(&self.source.path) {
            return Err(Error::Invalid(format!(
                "{what} needs a masked-LM head, and the registry's {name} has none (see `crossling models list`); \
                 give a model with its head, e.g. a …ForMaskedLM folder"
            )));
        }
        Err(Error::Invalid(format!(
            "{what} needs a masked-LM head, and the model in {} has none (it was saved without one, e.g. as \
             BertModel or a task model); use a checkpoint saved with its head (…ForMaskedLM)",
            self.source.path.display()
        )))
    }

    /// The device the parameters live on.
    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Every layer's hidden states in inference mode (no gradients, no dropout).
    ///
    /// # Shapes
    /// `input_ids`, `attention_mask`: `[batch, seq]` → `L + 1` × `[batch, seq, hidden]`
    pub fn hidden_states(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        lang: &str,
    ) -> Result<EncoderOutput> {
        tch::no_grad(|| self.model.encoder.forward(input_ids, attention_mask, lang, false))
    }

    /// MLM logits of hidden states (inference mode).
    ///
    /// # Shapes
    /// `hidden`: `[batch, seq, hidden]` → `[batch, seq, vocab]`
    pub fn logits(&self, hidden: &Tensor, lang: &str) -> Result<Tensor> {
        self.require_mlm_head("decoding hidden states into tokens")?;
        tch::no_grad(|| self.model.logits(hidden, lang))
    }
}

fn open_hf(dir: &Path, device: Device) -> Result<LoadedModel> {
    let imp = import_hf(dir, device)?;
    let tok = load_hf_tokenizer_with(dir, &imp.arch.special_names())?;
    let notes = imp.notes;
    let n = tok.tokenizer.get_vocab_size(true);
    if n > imp.config.vocab_size {
        return Err(Error::Invalid(format!(
            "{}: the tokenizer has {n} ids (tokenizer.json with its added tokens) but the model's embedding table only \
             {} rows (config.json vocab_size): ids {} to {} would index past it; the tokenizer does not belong to \
             these weights",
            dir.display(),
            imp.config.vocab_size,
            imp.config.vocab_size,
            n - 1
        )));
    }
    let weights_sha256 = imp.weights.sha256()?;
    let mut vs = imp.vs;
    vs.freeze();
    Ok(LoadedModel {
        model: imp.model,
        vs,
        tokenizer: ModelTokenizer::HuggingFace(tok),
        config: imp.config,
        source: ModelSource { kind: ModelKind::HuggingFace, path: dir.to_path_buf(), weights_sha256 },
        notes,
    })
}

/// The checkpoint of a crossling training run folder that [`LoadedModel::open`] reads: `best/` if it holds weights,
/// else `last/`; `None` when neither does.
pub fn run_checkpoint(run: &Path) -> Option<std::path::PathBuf> {
    ["best", "last"].into_iter().map(|sub| run.join(sub)).find(|c| c.join(MODEL_FILE).is_file())
}

fn open_checkpoint(dir: &Path, device: Device) -> Result<LoadedModel> {
    let config = ModelConfig::load_json(dir.join(CONFIG_FILE))?;
    let weights = dir.join(MODEL_FILE);
    if !weights.is_file() {
        return Err(Error::format_file(&weights, "missing checkpoint file"));
    }
    let weights_sha256 = sha256_file(&weights)?;
    if let Some(recorded) = recorded_model_sha256(dir)? {
        if recorded != weights_sha256 {
            return Err(Error::Checksum {
                path: weights,
                expected: recorded,
                found: weights_sha256,
                hint: " (corrupt checkpoint: the file differs from the one recorded in trainer_state.json)".into(),
            });
        }
    }
    let candidates = [dir.join("tokenizer"), dir.join("..").join("tokenizer")];
    let tok_dir = candidates.iter().find(|d| d.join("crossling-tokenizer.json").is_file()).ok_or_else(|| {
        Error::Invalid(format!(
            "no crossling tokenizer for {}: looked for crossling-tokenizer.json in {} and {}",
            dir.display(),
            candidates[0].display(),
            candidates[1].display()
        ))
    })?;
    let tokenizer = CrossTokenizer::load(tok_dir)?;
    if tokenizer.vocab_size() > config.vocab_size {
        return Err(Error::Invalid(format!(
            "tokenizer {} has {} tokens but the model in {} only {} ids",
            tok_dir.display(),
            tokenizer.vocab_size(),
            dir.display(),
            config.vocab_size
        )));
    }
    let mut vs = VarStore::new(device);
    let model = MlmModel::new(&vs.root(), &config)?;
    load_weights(&mut vs, &weights, &config)?;
    vs.freeze();
    Ok(LoadedModel {
        model,
        vs,
        tokenizer: ModelTokenizer::crossling(tokenizer),
        config,
        source: ModelSource { kind: ModelKind::Crossling, path: dir.to_path_buf(), weights_sha256 },
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::{AnchorScheme, TokenizerSpec};

    /// A run folder `run/` with `tokenizer/` and a checkpoint in `run/{sub}`.
    fn run_folder(root: &Path, sub: &str) -> PathBuf {
        let files = crate::text::tokenize::tests::write_corpora(root, 50);
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 60), &files).unwrap();
        let run = root.join("run");
        tok.save(&run.join("tokenizer")).unwrap();
        let cfg = ModelConfig { vocab_size: tok.vocab_size(), hidden: 8, layers: 1, heads: 2, ..Default::default() };
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), &cfg).unwrap();
        let ck = run.join(sub);
        std::fs::create_dir_all(&ck).unwrap();
        vs.save(ck.join(MODEL_FILE)).unwrap();
        cfg.save_json(ck.join(CONFIG_FILE)).unwrap();
        run
    }

    #[test]
    fn opens_runs_and_checkpoints_with_the_run_tokenizer() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_folder(dir.path(), "last");
        let m = LoadedModel::open(&run, Device::Cpu).unwrap();
        assert_eq!(m.source.kind, ModelKind::Crossling);
        assert!(m.source.path.ends_with("last"), "{}", m.source.path.display());
        assert_eq!(m.source.weights_sha256, sha256_file(&run.join("last").join(MODEL_FILE)).unwrap());
        assert!(matches!(m.tokenizer, ModelTokenizer::Crossling { .. }));
        let e = m.tokenizer.encode_words("the cat", "en").unwrap().tokenized;
        let hs = m.hidden_states(&Tensor::from_slice(&e.ids).view([1, -1]), None, "en").unwrap();
        assert_eq!(hs.hidden_states.len(), 2);
        assert!(!hs.last().requires_grad());
        // best/ wins over last/ once it exists.
        std::fs::create_dir_all(run.join("best")).unwrap();
        for f in [MODEL_FILE, CONFIG_FILE] {
            std::fs::copy(run.join("last").join(f), run.join("best").join(f)).unwrap();
        }
        assert!(LoadedModel::open(&run, Device::Cpu).unwrap().source.path.ends_with("best"));
    }

    #[test]
    fn refusals_name_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let e = LoadedModel::open(&dir.path().join("nope"), Device::Cpu).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        let e = LoadedModel::open(dir.path(), Device::Cpu).unwrap_err().to_string();
        assert!(e.contains("is not a model folder"), "{e}");
        let run = run_folder(dir.path(), "last");
        std::fs::remove_dir_all(run.join("tokenizer")).unwrap();
        let e = LoadedModel::open(&run, Device::Cpu).unwrap_err().to_string();
        assert!(e.contains("no crossling tokenizer"), "{e}");
    }

    #[test]
    fn an_old_sep_emb_checkpoint_is_refused_with_the_reason() {
        // Weights with shared position embeddings (the layout before Sep Emb separated them) under a Sep Emb config.
        let dir = tempfile::tempdir().unwrap();
        let run = run_folder(dir.path(), "last");
        let ck = run.join("last");
        let mut cfg = ModelConfig::load_json(ck.join(CONFIG_FILE)).unwrap();
        let vs = VarStore::new(Device::Cpu);
        MlmModel::new(&vs.root(), &cfg).unwrap();
        let shared = vs.variables();
        let mut old: Vec<(String, Tensor)> = Vec::new();
        for (name, t) in &shared {
            let per_language = |lang: &str| match name.as_str() {
                "bert.embeddings.word_embeddings.weight" => {
                    Some(format!("bert.embeddings.lang.{lang}.word_embeddings.weight"))
                }
                "cls.predictions.bias" => Some(format!("cls.predictions.lang.{lang}.bias")),
                _ => None,
            };
            match per_language("en") {
                Some(_) => old.extend(["en", "fr"].map(|l| (per_language(l).unwrap(), t.copy()))),
                None => old.push((name.clone(), t.copy())),
            }
        }
        cfg.languages = vec!["en".into(), "fr".into()];
        cfg.sharing.sep_emb = true;
        Tensor::write_safetensors(&old, ck.join(MODEL_FILE)).unwrap();
        cfg.save_json(ck.join(CONFIG_FILE)).unwrap();
        let e = LoadedModel::open(&run, Device::Cpu).unwrap_err().to_string();
        assert!(e.contains("position_embeddings") && e.contains("pre-train it again"), "{e}");
    }
}
