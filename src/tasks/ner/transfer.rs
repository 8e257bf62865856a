//! Zero-shot cross-lingual NER end to end (Wu, Conneau et al. 2020 §3, Table 1): fine-tune the tagger of
//! [`crate::tasks::ner`] on English, select the state by span F1 on English dev sentences, report span F1 on the PAN-X dev
//! set of each requested language with no target-language training.
//!
//! **Data.** WikiAnn / PAN-X in the XTREME layout ([`crate::data::formats::panx`]): `train-en.tsv` (20,000
//! sentences) is the training set, capped at `max_train` (the first sentences). PAN-X test files carry no tags, so
//! the dev files are the evaluation sets: English model selection uses the first `dev_size` sentences of
//! `dev-en.tsv`, and English evaluation (when asked for) the dev sentences after them, so the selection sentences
//! are never scored; every other language is evaluated on the first `max_eval` sentences of its `dev-{lang}.tsv`.
//! With [`NerTrainData::Conll2003`] the English training and selection sentences come from CoNLL-2003 `train.txt`
//! and `dev.txt` instead (Tjong Kim Sang & De Meulder 2003); its `MISC` entities have no PAN-X type and are trained
//! as `O` (see [`crate::tasks::ner::tag_index`]).
//!
//! **Input.** The corpus's own tokens are the words ([`crate::tasks::word_inputs`]): PAN-X Chinese is one character a
//! token, so Chinese words are single characters here whatever the tokenizer would segment. PAN-X records no spacing:
//! words are read as spaced, but in a language written without spaces (Chinese here), where each is glued to the one
//! before ([`crate::tasks::word_inputs::glued_by_language`]). PAN-X Chinese is in
//! traditional script; [`NerConfig::zh_script`] `simplified` converts it (characters only, tags and token boundaries
//! kept; [`crate::tasks::ner::zh_script`]) and says so in the result's notes.
use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::data::formats::{conll2003, panx, TaggedSentence};
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::data::FilesRead;
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::LoadedModel;
use crate::tasks::backbone::TaskModel;
use crate::tasks::common::{check_languages, ModelInfo, TRAIN_LANG};
use crate::tasks::finetune::{DevPoint, FreezeReport, LossSummary};
use crate::tasks::items::ItemScores;
use crate::tasks::ner::metrics::{NerEval, SpanCounts};
use crate::tasks::ner::zh_script::{self, ZhScript};
use crate::tasks::ner::{tag_index, NerConfig, NerFinetune, NerItem};
use crate::tasks::word_inputs::WordEncoder;

/// Chinese: the evaluation language whose PAN-X file [`NerConfig::zh_script`] converts.
pub const ZH: &str = "zh";

/// Where the English training and selection sentences come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NerTrainData {
    /// PAN-X `train-en.tsv` / `dev-en.tsv` (the study's setting).
    #[default]
    Panx,
    /// CoNLL-2003 `train.txt` / `dev.txt`.
    Conll2003,
}

impl NerTrainData {
    /// The name [`std::str::FromStr`] reads (`panx`, `conll2003`).
    pub fn name(self) -> &'static str {
        match self {
            NerTrainData::Panx => "panx",
            NerTrainData::Conll2003 => "conll2003",
        }
    }
}

impl std::str::FromStr for NerTrainData {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "panx" | "pan-x" | "wikiann" => Ok(NerTrainData::Panx),
            "conll2003" | "conll" => Ok(NerTrainData::Conll2003),
            _ => Err(Error::Invalid(format!("unknown NER training data '{s}': expected panx or conll2003"))),
        }
    }
}

/// The NER data of a run.
#[derive(Debug, Clone)]
pub struct NerData {
    pub source: NerTrainData,
    /// English training sentences, in file order.
    pub train: Vec<TaggedSentence>,
    /// English dev sentences (selection first, then English evaluation), in file order.
    pub dev_en: Vec<TaggedSentence>,
    /// PAN-X dev sentences of each evaluation language other than English.
    pub eval: BTreeMap<String, Vec<TaggedSentence>>,
    pub files: FilesRead,
}

/// The languages the bundle's PAN-X covers, and the synthetic languages rewritten from them
/// ([`crate::text::pseudo::with_synthetic`]).
pub fn panx_languages(catalog: &Catalog) -> Result<Vec<String>> {
    Ok(crate::text::pseudo::with_synthetic(catalog.get("panx")?.languages.clone()))
}

fn read_manifest_file(
    catalog: &Catalog,
    roots: &DataRoots,
    id: &str,
    path: &str,
    files: &mut FilesRead,
    read: fn(&std::path::Path) -> Result<Vec<TaggedSentence>>,
) -> Result<Vec<TaggedSentence>> {
    let m = catalog.get(id)?;
    let entry = m.files.iter().find(|f| f.path == path).ok_or_else(|| {
        Error::Invalid(format!("the {id} manifest has no file {path} (languages: {})", m.languages.join(", ")))
    })?;
    let resolved = roots.resolve(entry)?;
    files.push((entry.path.clone(), entry.sha256.clone()));
    let rows = read(&resolved)?;
    if rows.is_empty() || rows.iter().all(|s| s.tags.is_empty()) {
        return Err(Error::format_file(&resolved, "no tagged sentences (expected token<TAB>tag lines)"));
    }
    Ok(rows)
}

/// Reads the English training / dev sentences and the PAN-X dev files of `langs` (English excluded: it comes from
/// the English dev file); a synthetic language (`enx`) gets its source's dev file, rewritten.
pub fn load_ner_data(catalog: &Catalog, roots: &DataRoots, source: NerTrainData, langs: &[String]) -> Result<NerData> {
    let mut files = Vec::new();
    let (train, dev_en) = match source {
        NerTrainData::Panx => (
            read_manifest_file(catalog, roots, "panx", "ner/panx/train-en.tsv", &mut files, panx::read)?,
            read_manifest_file(catalog, roots, "panx", "ner/panx/dev-en.tsv", &mut files, panx::read)?,
        ),
        NerTrainData::Conll2003 => (
            read_manifest_file(catalog, roots, "conll2003", "ner/conll2003/train.txt", &mut files, conll2003::read)?,
            read_manifest_file(catalog, roots, "conll2003", "ner/conll2003/dev.txt", &mut files, conll2003::read)?,
        ),
    };
    let mut eval = BTreeMap::new();
    for lang in langs.iter().filter(|l| l.as_str() != TRAIN_LANG) {
        // A synthetic language reads its source's dev file, rewritten; `run_ner` scores it on the sentences English
        // is scored on (those after the ones that select the model).
        let path = format!("ner/panx/dev-{}.tsv", crate::text::pseudo::eval_file_language(lang));
        let mut rows = read_manifest_file(catalog, roots, "panx", &path, &mut files, panx::read)?;
        if let Some((_, r)) = crate::text::pseudo::eval_source(lang) {
            r.tagged(&mut rows);
        }
        eval.insert(lang.clone(), rows);
    }
    Ok(NerData { source, train, dev_en, eval, files })
}

/// Checks, before any data is read, that `cfg` is valid for `model`, that PAN-X has each of `langs` and that `model`
/// reads English and each of them.
pub fn check_setup(model: &LoadedModel, langs: &[String], panx_langs: &[String], cfg: &NerConfig) -> Result<()> {
    cfg.validate()?;
    check_languages(model, langs, cfg.finetune.freeze_layers, "NER", |l| {
        if panx_langs.iter().any(|x| x == l) {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "no PAN-X dev set for language '{l}' (PAN-X in the bundle: {})",
                panx_langs.join(", ")
            )))
        }
    })
}

/// Encodes tagged sentences of language `lang`; `what` names the data in errors. Returns the items and how many
/// sentences lost words to truncation.
pub fn encode_sentences(
    enc: &mut WordEncoder,
    sentences: &[TaggedSentence],
    max_len: usize,
    what: &str,
) -> Result<(Vec<NerItem>, usize)> {
    let mut items = Vec::with_capacity(sentences.len());
    let mut cut = 0;
    for (i, s) in sentences.iter().enumerate() {
        if s.tags.len() != s.tokens.len() {
            return Err(Error::Invalid(format!(
                "{what}: sentence {} has {} tokens but {} tags",
                i + 1,
                s.tokens.len(),
                s.tags.len()
            )));
        }
        let tags = s
            .tags
            .iter()
            .map(|t| tag_index(t))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| Error::Invalid(format!("{what}: sentence {}: {e}", i + 1)))?;
        let input = enc
            .encode_in_language(&s.tokens, max_len)
            .map_err(|e| Error::Invalid(format!("{what}: sentence {}: {e}", i + 1)))?;
        cut += usize::from(input.kept() < input.words);
        items.push(NerItem { input, tags });
    }
    Ok((items, cut))
}

/// Span scores of one language.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LangNer {
    pub sentences: usize,
    /// Sentences that lost words to truncation (their dropped words are tagged `O`).
    pub truncated: usize,
    #[serde(flatten)]
    pub scores: NerEval,
}

/// The result of [`run_ner`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NerResult {
    /// `ner`.
    pub task: String,
    pub model: ModelInfo,
    pub config: NerConfig,
    pub train_data: NerTrainData,
    pub max_len: usize,
    pub device: String,
    pub train_lang: String,
    pub train_sentences: usize,
    pub dev_sentences: usize,
    pub truncated_train: usize,
    pub freeze: FreezeReport,
    pub steps: u64,
    pub epochs: usize,
    pub best_step: u64,
    /// Span F1 on the English selection sentences at the kept step.
    pub en_dev_f1: f64,
    pub dev_history: Vec<DevPoint>,
    /// Zero-shot span scores per language on PAN-X dev (`en`: the English dev sentences not used for selection).
    pub eval: BTreeMap<String, LangNer>,
    /// Per-sentence `[2·tp, 2·tp + fp + fn]` behind each language's span F1 ([`ItemScores::Ratio`]); not in the JSON.
    #[serde(skip)]
    pub items: BTreeMap<String, ItemScores>,
    pub loss: LossSummary,
    pub files: FilesRead,
    pub train_seconds: f64,
    pub total_seconds: f64,
    pub notes: Vec<String>,
}

/// Fine-tunes `model` on English and evaluates on PAN-X dev of `langs` (see the module docs); the model's weights
/// are consumed. Each language is encoded by the tokenizer of the encoder that reads it. `compute.device` must be
/// the model's device.
pub fn run_ner(
    model: TaskModel,
    data: &NerData,
    langs: &[String],
    cfg: &NerConfig,
    compute: Compute,
    progress: bool,
) -> Result<NerResult> {
    let started = Instant::now();
    model.check_langs(langs)?;
    let max_len = cfg.finetune.max_len.min(model.backbone.max_positions());
    if max_len < 3 {
        return Err(Error::Invalid(format!("the model has {max_len} positions; NER inputs need at least 3")));
    }
    if data.dev_en.len() <= cfg.dev_size && langs.iter().any(|l| l == TRAIN_LANG) {
        return Err(Error::Invalid(format!(
            "the English dev file has {} sentences: not enough to hold out {} for selection and evaluate on the rest",
            data.dev_en.len(),
            cfg.dev_size
        )));
    }
    let backbone = &model.backbone;
    let mut en = WordEncoder::new(backbone.tokenizer(TRAIN_LANG)?, TRAIN_LANG);
    let train_rows = &data.train[..cfg.finetune.max_train.unwrap_or(usize::MAX).min(data.train.len())];
    let (train, truncated_train) = encode_sentences(&mut en, train_rows, max_len, "English training data")?;
    let split = cfg.dev_size.min(data.dev_en.len());
    let (dev, _) = encode_sentences(&mut en, &data.dev_en[..split], max_len, "English dev data")?;
    let cap = |rows: &[TaggedSentence]| rows.len().min(cfg.finetune.max_eval.unwrap_or(usize::MAX));
    let mut eval_items = BTreeMap::new();
    let mut script_notes = Vec::new();
    for lang in langs {
        let rows = match data.eval.get(lang) {
            // A synthetic language (`enx`): English's evaluation sentences, rewritten (none of the selection ones).
            Some(r) if crate::text::pseudo::eval_source(lang).is_some() => {
                let rest = &r[split.min(r.len())..];
                &rest[..cap(rest)]
            }
            Some(r) => &r[..cap(r)],
            None if lang == TRAIN_LANG => {
                let rest = &data.dev_en[split..];
                &rest[..cap(rest)]
            }
            None => return Err(Error::Invalid(format!("no NER evaluation data was read for '{lang}'"))),
        };
        // PAN-X zh in simplified script when the config asks for it (see `zh_script`): the same sentences and tags.
        let converted;
        let rows = match cfg.zh_script {
            Some(ZhScript::Simplified) if lang == ZH => {
                let mut copy = rows.to_vec();
                script_notes.push(zh_script::to_simplified(&mut copy)?.note(lang));
                converted = copy;
                &converted[..]
            }
            _ => rows,
        };
        let mut enc = WordEncoder::new(backbone.tokenizer(lang)?, lang);
        eval_items.insert(lang.clone(), encode_sentences(&mut enc, rows, max_len, &format!("PAN-X dev {lang}"))?);
    }
    let pad = backbone.pad()?;
    let TaskModel { backbone, vs, info: model_info, mut notes } = model;
    notes.extend(script_notes);
    let mut ft = NerFinetune::new(backbone, vs, pad, compute, cfg)?;
    let outcome = ft.train(&train, &dev, TRAIN_LANG, cfg, progress)?;
    let mut eval = BTreeMap::new();
    let mut per_item = BTreeMap::new();
    for (lang, (items, truncated)) in &eval_items {
        let scores = ft.evaluate(items, lang, cfg.finetune.eval_batch_tokens)?;
        per_item.insert(lang.clone(), ItemScores::counts(scores.sentences.iter().map(SpanCounts::f1_terms)));
        eval.insert(lang.clone(), LangNer { sentences: items.len(), truncated: *truncated, scores });
    }
    Ok(NerResult {
        task: "ner".into(),
        model: model_info,
        config: cfg.clone(),
        train_data: data.source,
        max_len,
        device: compute.describe(),
        train_lang: TRAIN_LANG.into(),
        train_sentences: train.len(),
        dev_sentences: dev.len(),
        truncated_train,
        freeze: ft.freeze.clone(),
        steps: outcome.steps,
        epochs: outcome.epochs,
        best_step: outcome.best_step,
        en_dev_f1: outcome.best_dev_score,
        dev_history: outcome.dev_history,
        eval,
        items: per_item,
        loss: outcome.loss,
        files: data.files.clone(),
        train_seconds: outcome.seconds,
        total_seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelTokenizer;

    #[test]
    fn sentences_encode_with_their_tags_and_errors_name_the_sentence() {
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "paris", "is", "big", "##ger"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        let tok = ModelTokenizer::HuggingFace(crate::model::tokenizer::load_hf_tokenizer(dir.path()).unwrap());
        let mut enc = WordEncoder::new(&tok, "en");
        let s = |t: &[&str], g: &[&str]| TaggedSentence {
            tokens: t.iter().map(|x| x.to_string()).collect(),
            tags: g.iter().map(|x| x.to_string()).collect(),
        };
        let rows = [s(&["paris", "is", "bigger"], &["B-LOC", "O", "O"]), s(&["paris"], &["B-MISC"])];
        let (items, cut) = encode_sentences(&mut enc, &rows, 64, "test").unwrap();
        assert_eq!(cut, 0);
        assert_eq!(items[0].tags, [5, 0, 0]);
        assert_eq!(items[0].input.first, [1, 2, 3]);
        assert_eq!(items[1].tags, [0]);
        let (items, cut) = encode_sentences(&mut enc, &rows, 4, "test").unwrap();
        assert_eq!((cut, items[0].input.kept()), (1, 2));
        let e = encode_sentences(&mut enc, &[s(&["paris"], &["B-DATE"])], 64, "PAN-X dev fr").unwrap_err();
        assert!(e.to_string().contains("PAN-X dev fr: sentence 1"), "{e}");
        let e = encode_sentences(&mut enc, &[s(&["paris", "is"], &["O"])], 64, "x").unwrap_err();
        assert!(e.to_string().contains("2 tokens but 1 tags"), "{e}");
        assert_eq!("conll2003".parse::<NerTrainData>().unwrap(), NerTrainData::Conll2003);
        assert!("ontonotes".parse::<NerTrainData>().is_err());
    }
}
