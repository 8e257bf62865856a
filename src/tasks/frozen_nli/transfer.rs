//! Zero-shot XNLI with frozen representations (Liu et al. 2020, §3.1.2 and Figures 2, 4, 6): the classifier of
//! [`crate::tasks::frozen_nli`] trained on English MultiNLI on top of static vectors or a frozen encoder, the state kept by
//! English dev accuracy, then scored on the XNLI dev set of each language with no target-language training.
//!
//! The data and its split are those of fine-tuning ([`crate::tasks::nli::transfer`]: de-duplicated MNLI, a seeded English
//! dev hold-out, XNLI dev per language); each side of a pair is encoded on its own as `[CLS] sentence [SEP]` by the
//! representation's tokenizer (Chinese segmented with jieba for crossling models) and cut to `max_len` tokens
//! (keeping the final `[SEP]`). For static vectors the result counts, per language, the share of sentence tokens
//! that have a vector (the rest read as zeros).
use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::data::formats::NliExample;
use crate::data::FilesRead;
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::ModelTokenizer;
use crate::tasks::common::TRAIN_LANG;
use crate::tasks::finetune::{DevPoint, LossSummary};
use crate::tasks::frozen_nli::{Frozen, FrozenNli, FrozenNliConfig, PairItem};
use crate::tasks::items::ItemScores;
use crate::tasks::nli::transfer::{encode_labelled, split_train_dev, LangAccuracy, NliData};

/// `[CLS] sentence [SEP]` ids of `text`, cut to `max_len` ids (≥ 3) keeping `[SEP]`; also whether it was cut.
/// A sentence the tokenizer gives no token for reads as `[CLS] [UNK] [SEP]`.
pub fn encode_sentence(tok: &ModelTokenizer, text: &str, lang: &str, max_len: usize) -> Result<(Vec<i64>, bool)> {
    let mut content = tok.encode_content(text, lang)?;
    if content.is_empty() {
        content.push(tok.specials().unk as i64);
    }
    let budget = max_len.saturating_sub(tok.added_specials(false)).max(1);
    let cut = content.len() > budget;
    content.truncate(budget);
    Ok((tok.frame(&content, None)?.ids, cut))
}

/// Encodes labelled pairs; returns the items and how many sentences were cut. `what` names the data in errors.
pub fn encode_pairs(
    tok: &ModelTokenizer,
    examples: &[&NliExample],
    lang: &str,
    max_len: usize,
    what: &str,
) -> Result<(Vec<PairItem>, usize)> {
    encode_labelled(examples, what, |e, label| {
        let (premise, c1) = encode_sentence(tok, &e.premise, lang, max_len)?;
        let (hypothesis, c2) = encode_sentence(tok, &e.hypothesis, lang, max_len)?;
        Ok((PairItem { premise, hypothesis, label }, usize::from(c1) + usize::from(c2)))
    })
}

/// The share of the sentence tokens of `items` (specials excluded) whose id is `covered`.
pub fn token_coverage(items: &[PairItem], covered: &[bool]) -> f64 {
    let (mut hit, mut all) = (0usize, 0usize);
    for it in items {
        for side in [&it.premise, &it.hypothesis] {
            for &id in &side[1..side.len() - 1] {
                all += 1;
                hit += usize::from(covered.get(id as usize).copied().unwrap_or(false));
            }
        }
    }
    if all == 0 {
        0.0
    } else {
        hit as f64 / all as f64
    }
}

/// What was read: a name and provenance given by the caller (model weights or static vectors' cache key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepresentationInfo {
    pub name: String,
    /// `static` or `model`.
    pub kind: String,
    /// The model's weights sha256, or the static vectors' cache key.
    pub source: String,
    /// Feature layers read (1 for static vectors; `L + 1` for an encoder).
    pub layers: usize,
    pub dim: usize,
}

/// XNLI dev accuracy of one language, with the static vectors' token coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FrozenLangResult {
    #[serde(flatten)]
    pub accuracy: LangAccuracy,
    /// Static vectors: the share of the evaluated sentences' tokens that have a vector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_coverage: Option<f64>,
}

/// The result of [`run_frozen_nli`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrozenNliResult {
    /// `nli_frozen`.
    pub task: String,
    pub representation: RepresentationInfo,
    pub config: FrozenNliConfig,
    /// The `max_len` used (the config's, capped by an encoder's positions).
    pub max_len: usize,
    pub device: String,
    pub train_lang: String,
    pub mnli_pairs: usize,
    pub train_pairs: usize,
    pub dev_pairs: usize,
    /// Training sentences cut to `max_len`.
    pub truncated_train: usize,
    /// Parameters of the classifier (the only ones that train).
    pub trainable_parameters: usize,
    /// The learned scalar-mix weight of each feature layer (0 = embedding output for an encoder).
    pub layer_weights: Vec<f64>,
    pub steps: u64,
    pub epochs: usize,
    pub best_step: u64,
    pub en_dev_accuracy: f64,
    pub dev_history: Vec<DevPoint>,
    /// English training tokens with a static vector (static vectors only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub train_token_coverage: Option<f64>,
    pub xnli: BTreeMap<String, FrozenLangResult>,
    /// Per-pair outcomes behind `xnli` ([`ItemScores::hits`]: its mean is the accuracy); not in the JSON.
    #[serde(skip)]
    pub items: BTreeMap<String, ItemScores>,
    pub loss: LossSummary,
    pub files: FilesRead,
    pub train_seconds: f64,
    pub total_seconds: f64,
}

/// Trains the classifier on English MNLI over `frozen` and scores XNLI dev of `langs` (see the module docs).
/// `compute.device` must be the representation's device; `info` names what `frozen` is.
pub fn run_frozen_nli(
    frozen: Frozen,
    info: RepresentationInfo,
    data: &NliData,
    langs: &[String],
    cfg: &FrozenNliConfig,
    compute: Compute,
    progress: bool,
) -> Result<FrozenNliResult> {
    let started = Instant::now();
    cfg.validate()?;
    if let Some(l) = langs.iter().find(|l| !data.xnli.contains_key(*l)) {
        return Err(Error::Invalid(format!("no XNLI dev set loaded for language '{l}'")));
    }
    let max_len = frozen.max_positions().map_or(cfg.max_len, |p| cfg.max_len.min(p));
    if max_len < 3 {
        return Err(Error::Invalid(format!("the model has {max_len} positions; a sentence needs at least 3")));
    }
    let (train_idx, dev_idx) = split_train_dev(data.mnli.len(), cfg.dev_size, cfg.max_train, cfg.seed)?;
    let tok = frozen.tokenizer();
    let pick = |idx: &[usize]| idx.iter().map(|&i| &data.mnli[i]).collect::<Vec<_>>();
    let (train, truncated_train) = encode_pairs(tok, &pick(&train_idx), TRAIN_LANG, max_len, "MNLI train")?;
    let (dev, _) = encode_pairs(tok, &pick(&dev_idx), TRAIN_LANG, max_len, "MNLI dev")?;
    let mut eval = BTreeMap::new();
    for lang in langs {
        let rows = &data.xnli[lang];
        let rows: Vec<&NliExample> = rows.iter().take(cfg.max_eval.unwrap_or(rows.len())).collect();
        eval.insert(lang.clone(), encode_pairs(tok, &rows, lang, max_len, &format!("XNLI dev {lang}"))?);
    }
    let coverage = |items: &[PairItem]| match &frozen {
        Frozen::Static { covered, .. } => Some(token_coverage(items, covered)),
        Frozen::Contextual(_) => None,
    };
    let train_token_coverage = coverage(&train);
    let mut model = FrozenNli::new(frozen, compute, cfg)?;
    let trainable_parameters = model.vs.trainable_variables().iter().map(|t| t.numel()).sum();
    let outcome = model.train(&train, &dev, TRAIN_LANG, cfg, progress)?;
    let mut xnli = BTreeMap::new();
    let mut per_item = BTreeMap::new();
    for (lang, (items, truncated)) in &eval {
        let hits = ItemScores::hits(&model.hits(items, lang, cfg.eval_batch_tokens)?);
        let accuracy = hits.estimate();
        per_item.insert(lang.clone(), hits);
        let token_coverage = match &model.frozen {
            Frozen::Static { covered, .. } => Some(token_coverage(items, covered)),
            Frozen::Contextual(_) => None,
        };
        xnli.insert(
            lang.clone(),
            FrozenLangResult {
                accuracy: LangAccuracy { accuracy, pairs: items.len(), truncated: *truncated },
                token_coverage,
            },
        );
    }
    Ok(FrozenNliResult {
        task: "nli_frozen".into(),
        representation: info,
        config: cfg.clone(),
        max_len,
        device: compute.describe(),
        train_lang: TRAIN_LANG.into(),
        mnli_pairs: data.mnli.len(),
        train_pairs: train.len(),
        dev_pairs: dev.len(),
        truncated_train,
        trainable_parameters,
        layer_weights: model.classifier.layer_weights(),
        steps: outcome.steps,
        epochs: outcome.epochs,
        best_step: outcome.best_step,
        en_dev_accuracy: outcome.best_dev_score,
        dev_history: outcome.dev_history,
        train_token_coverage,
        xnli,
        items: per_item,
        loss: outcome.loss,
        files: data.files.clone(),
        train_seconds: outcome.seconds,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_wrapped_cut_and_never_empty() {
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        let tok = ModelTokenizer::HuggingFace(crate::model::tokenizer::load_hf_tokenizer(dir.path()).unwrap());
        assert_eq!(encode_sentence(&tok, "the cat sat", "en", 64).unwrap(), (vec![2, 5, 6, 7, 3], false));
        assert_eq!(encode_sentence(&tok, "the cat sat", "en", 4).unwrap(), (vec![2, 5, 6, 3], true));
        assert_eq!(encode_sentence(&tok, "", "en", 4).unwrap(), (vec![2, 1, 3], false));
        let items = [PairItem { premise: vec![2, 5, 6, 3], hypothesis: vec![2, 7, 3], label: 0 }];
        let covered = [false, false, false, false, false, true, false, true];
        assert!((token_coverage(&items, &covered) - 2.0 / 3.0).abs() < 1e-12);
    }
}
