//! One pre-training run from one TOML file: corpora → tokenizer → token streams → MLM training.
//!
//! ```toml
//! languages = ["en", "fr"]
//! [corpus]                       # applies to every language
//! max_sentences = 20000          # training sentences per language (validation: valid_per_mille of it)
//! valid_per_mille = 20
//! [corpus.datasets]              # running-text dataset ids per language
//! en = ["eltec-en"]
//! fr = ["eltec-fr"]
//! [tokenizer]                    # crossling::text::tokenize::TokenizerSpec
//! scheme = "joint"               # joint | per_language_union | no_anchors
//! vocab_size = 8000
//! [train]                        # crossling::train::TrainConfig (model, seq_len, steps, …)
//! steps = 1000
//! [train.model]
//! hidden = 128
//! ```
//! An optional `[corpus.halves]` table (`en2 = { lang = "en", half = 1 }`) makes a language read one half of another
//! language's documents (pseudo-languages: [`crate::text::pseudo`]).
//! An optional `[codeswitch]` section (`dictionary = "en-fr"`, `p`, `max_fraction`, `group`) code-switches the
//! training text of both languages before tokenization (Extra anchors).
//! `train.model.vocab_size` and `train.model.languages` are filled in from the tokenizer and `languages`.
//! The output folder holds `run.toml` (the resolved config), `corpora/`, `tokenizer/`, `metrics.jsonl`, `last/`
//! and `best/`. With `resume`, existing corpora and the tokenizer are reused and training continues from `last/`;
//! only `train.steps` (to extend a finished run), `train.snapshot_steps` and `train.device` may differ from the
//! recorded `run.toml`, anything else is refused.
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};
use crate::text::corpus::{build_corpus, CorpusSpec, DocumentHalf, DEFAULT_VALID_PER_MILLE};
use crate::text::stream::encode_corpus;
use crate::text::tokenize::{CrossTokenizer, TokenizerSpec};
use crate::train::extra_anchors::{muse_train_pairs, switch_file, CodeSwitchConfig};
use crate::train::trainer::{train, TokenInfo, TrainConfig, TrainSummary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Corpus settings shared by every language of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCorpus {
    /// Running-text dataset ids per language.
    pub datasets: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub max_sentences: Option<usize>,
    #[serde(default)]
    pub max_bytes: Option<u64>,
    #[serde(default = "default_valid_per_mille")]
    pub valid_per_mille: u32,
    /// Pseudo-languages: language → the language whose documents it reads and which half of them
    /// ([`crate::text::pseudo`]). Omitted when empty, so runs without a pseudo-language keep their cache keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub halves: BTreeMap<String, DocumentHalf>,
    /// Seed of the corpus sample, its train/valid split and the code-switching draws, when it differs from
    /// `train.seed` (the default): Emerging §5.2's en′ is "trained on the same data as en but with different random
    /// seed". Omitted when absent, so runs without it keep their cache keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

fn default_valid_per_mille() -> u32 {
    DEFAULT_VALID_PER_MILLE
}

/// A whole pre-training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub languages: Vec<String>,
    pub corpus: RunCorpus,
    pub tokenizer: TokenizerSpec,
    pub train: TrainConfig,
    /// Extra anchors: code-switch the training text with a MUSE dictionary (see [`crate::train::extra_anchors`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codeswitch: Option<CodeSwitchConfig>,
}

impl RunConfig {
    /// Parse a run config; errors name the file, line and column.
    pub fn from_toml(text: &str, path: &Path) -> Result<RunConfig> {
        let cfg: RunConfig = toml::from_str(text).map_err(|e| Error::format_file(path, e.to_string()))?;
        cfg.check().map_err(|msg| Error::format_file(path, msg))?;
        Ok(cfg)
    }

    /// Read a run config from a TOML file.
    pub fn load(path: &Path) -> Result<RunConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        RunConfig::from_toml(&text, path)
    }

    /// Check the cross-field rules (languages, datasets, dictionary, selection language).
    pub fn validate(&self) -> Result<()> {
        self.check().map_err(Error::Invalid)
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.languages.is_empty() {
            return Err("`languages` is empty (expected e.g. [\"en\", \"fr\"])".into());
        }
        for lang in &self.languages {
            if !self.corpus.datasets.contains_key(lang) {
                return Err(format!("no [corpus.datasets] entry for language '{lang}'"));
            }
        }
        if let Some(extra) = self.corpus.datasets.keys().find(|l| !self.languages.contains(l)) {
            return Err(format!("[corpus.datasets] names '{extra}', which is not in `languages`"));
        }
        if let Some((lang, h)) = self.corpus.halves.iter().find(|(l, h)| !self.languages.contains(l) || h.half > 1) {
            return Err(format!(
                "[corpus.halves] {lang} = half {} of '{}': expected a run language and half 0 or 1",
                h.half, h.lang
            ));
        }
        if let Some(cs) = &self.codeswitch {
            let (a, b) = cs.languages().map_err(|e| e.to_string())?;
            if !self.languages.contains(&a) || !self.languages.contains(&b) {
                return Err(format!("codeswitch.dictionary '{}' needs both languages in `languages`", cs.dictionary));
            }
        }
        if !self.languages.contains(&self.train.select_lang) {
            return Err(format!("train.select_lang '{}' is not in `languages`", self.train.select_lang));
        }
        self.tokenizer.validate().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The seed of the training text: `corpus.seed`, else `train.seed`.
    pub fn data_seed(&self) -> u64 {
        self.corpus.seed.unwrap_or(self.train.seed)
    }

    fn corpus_spec(&self, lang: &str) -> CorpusSpec {
        CorpusSpec {
            max_sentences: self.corpus.max_sentences,
            max_bytes: self.corpus.max_bytes,
            valid_per_mille: self.corpus.valid_per_mille,
            seed: self.data_seed(),
            half: self.corpus.halves.get(lang).cloned(),
            ..CorpusSpec::new(lang, &self.corpus.datasets[lang].iter().map(String::as_str).collect::<Vec<_>>())
        }
    }
}

/// Run (or resume) the pre-training described by `cfg` in `out_dir`.
pub fn run_pretraining(
    cfg: &RunConfig,
    catalog: &Catalog,
    roots: &DataRoots,
    out_dir: &Path,
    resume: bool,
) -> Result<TrainSummary> {
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let record = out_dir.join("run.toml");
    let text =
        toml::to_string_pretty(cfg).map_err(|e| Error::Invalid(format!("cannot serialise the run config: {e}")))?;
    let reuse = match std::fs::read_to_string(&record) {
        Ok(previous) => {
            // Only the step budget may change between runs in one folder, so a finished run can be extended or a
            // running one cut shorter, with the snapshot steps (they do not change the weights), and the device, so a
            // run can continue elsewhere (the model cache's key leaves the device out too).
            let mut previous = RunConfig::from_toml(&previous, &record)?;
            previous.train.steps = cfg.train.steps;
            previous.train.snapshot_steps = cfg.train.snapshot_steps.clone();
            previous.train.device = cfg.train.device.clone();
            // `auto` and the precision it resolves to on this device are the same arithmetic.
            if previous.train.compute()?.precision() == cfg.train.compute()?.precision() {
                previous.train.precision = cfg.train.precision;
            }
            if previous != *cfg {
                return Err(Error::Invalid(format!(
                    "{} holds a different run config (only train.steps, train.snapshot_steps and train.device may change on resume); \
                     use a new output folder",
                    record.display()
                )));
            }
            resume
        }
        Err(_) if resume => {
            return Err(Error::Invalid(format!("nothing to resume: {} does not exist", record.display())))
        }
        Err(_) => false,
    };
    if !reuse && out_dir.join("last").exists() {
        return Err(Error::Invalid(format!(
            "{} already holds a trained model; pass --resume to continue it, or choose a new folder",
            out_dir.display()
        )));
    }
    crate::atomic_file::write_atomic(&record, &text)?;

    let corpora = out_dir.join("corpora");
    let switch_record = corpora.join("codeswitch.json");
    let corpora_done = |train: &Path, valid: &Path| {
        reuse && train.is_file() && valid.is_file() && (cfg.codeswitch.is_none() || switch_record.is_file())
    };
    let mut files: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    let mut rebuilt = false;
    for lang in &cfg.languages {
        let train_path = corpora.join(format!("{lang}.train.txt"));
        let valid_path = corpora.join(format!("{lang}.valid.txt"));
        if !corpora_done(&train_path, &valid_path) {
            let summary = build_corpus(catalog, roots, &cfg.corpus_spec(lang), &corpora)?;
            eprintln!("corpus {lang}: {} train / {} valid sentences", summary.train.sentences, summary.valid.sentences);
            if summary.train.sentences == 0 || summary.valid.sentences == 0 {
                return Err(Error::Invalid(format!(
                    "corpus {lang}: {} training and {} validation sentences from datasets [{}] \
                     (max_sentences = {}, valid_per_mille = {}); both must be non-empty",
                    summary.train.sentences,
                    summary.valid.sentences,
                    cfg.corpus.datasets[lang].join(", "),
                    cfg.corpus.max_sentences.map_or("unset".to_string(), |n| n.to_string()),
                    cfg.corpus.valid_per_mille
                )));
            }
            rebuilt = true;
        }
        files.push((lang.clone(), train_path, valid_path));
    }
    if let (Some(cs), true) = (&cfg.codeswitch, rebuilt) {
        code_switch_corpora(cs, catalog, roots, &corpora, cfg.data_seed())?;
    }

    let tok_dir = out_dir.join("tokenizer");
    let tok = if reuse && tok_dir.is_dir() {
        CrossTokenizer::load(&tok_dir)?
    } else {
        let train_files: Vec<(String, PathBuf)> = files.iter().map(|(l, t, _)| (l.clone(), t.clone())).collect();
        let tok = CrossTokenizer::train(&cfg.tokenizer, &train_files)?;
        tok.check_vocab_filled()?;
        tok.save(&tok_dir)?;
        tok
    };

    let mut train_cfg = cfg.train.clone();
    train_cfg.model.vocab_size = tok.vocab_size();
    train_cfg.model.languages = cfg.languages.clone();
    let mut train_streams = Vec::new();
    let mut valid_streams = Vec::new();
    for (lang, train_path, valid_path) in &files {
        train_streams.push(encode_corpus(&tok, lang, train_path, None)?);
        valid_streams.push(encode_corpus(&tok, lang, valid_path, None)?);
    }
    // Wu et al. 2020, §4.3, of the Sep models: "we only sample random words within one language".
    let info = TokenInfo::from_tokenizer(&tok, train_cfg.model.sharing.is_separated());
    // A run killed before its first checkpoint resumes from step 0 with the corpora and tokenizer it built.
    let from_checkpoint = reuse && out_dir.join("last").is_dir();
    train(&train_cfg, train_streams, valid_streams, &info, out_dir, from_checkpoint)
}

/// Code-switch the training corpora of both languages of `cs.dictionary` and record the counts.
fn code_switch_corpora(
    cs: &CodeSwitchConfig,
    catalog: &Catalog,
    roots: &DataRoots,
    corpora: &Path,
    seed: u64,
) -> Result<()> {
    let (a, b) = cs.languages()?;
    let forward = muse_train_pairs(catalog, roots, &cs.dictionary)?;
    let backward: Vec<(String, String)> = forward.iter().map(|(s, t)| (t.clone(), s.clone())).collect();
    let n_pairs = forward.len();
    let mut record = BTreeMap::new();
    for (i, (lang, pairs)) in [(a, forward), (b, backward)].into_iter().enumerate() {
        let stats = switch_file(&corpora.join(format!("{lang}.train.txt")), &pairs, cs, seed ^ (0xC0DE + i as u64))?;
        eprintln!(
            "code-switched {lang}: {} of {} words ({} dictionary words)",
            stats.switched, stats.words, stats.dictionary_words
        );
        record.insert(lang, stats);
    }
    let json = serde_json::json!({ "config": cs, "dictionary_pairs": n_pairs, "stats": record });
    let path = corpora.join("codeswitch.json");
    let text = serde_json::to_string_pretty(&json).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::atomic_file::write_atomic(&path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
languages = ["en", "fr"]
[corpus]
max_sentences = 100
[corpus.datasets]
en = ["eltec-en"]
fr = ["eltec-fr"]
[tokenizer]
scheme = "joint"
vocab_size = 300
[train]
steps = 3
"#;

    #[test]
    fn parses_and_checks_a_run_config() {
        let cfg = RunConfig::from_toml(SMALL, Path::new("run.toml")).unwrap();
        assert_eq!(cfg.languages, ["en", "fr"]);
        assert_eq!(cfg.corpus_spec("fr").datasets, ["eltec-fr"]);
        let bad = SMALL.replace("max_sentences", "max_sentense");
        let err = RunConfig::from_toml(&bad, Path::new("run.toml")).unwrap_err().to_string();
        assert!(err.contains("run.toml") && err.contains("unknown field"), "{err}");
        let missing = SMALL.replace("fr = [\"eltec-fr\"]\n", "");
        let err = RunConfig::from_toml(&missing, Path::new("run.toml")).unwrap_err().to_string();
        assert!(err.contains("no [corpus.datasets] entry for language 'fr'"), "{err}");
    }
}
