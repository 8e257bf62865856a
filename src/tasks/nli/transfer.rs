//! Zero-shot cross-lingual NLI end to end (Wu, Conneau et al. 2020 §3, Table 1; XNLI, Conneau et al. 2018):
//! fine-tune a model on English MultiNLI pairs (Williams et al. 2018) with the classifier of [`crate::tasks::nli`], select
//! the state by accuracy on a held-out English dev set, then report accuracy on the XNLI dev set of each requested
//! language with no target-language training.
//!
//! **Data.** The bundle's MNLI subset ([`crate::data::formats::mnli::read_dedup`] over the four files of the `mnli`
//! manifest: 78,354 de-duplicated pairs with a consistent label) has no official dev split, so `dev_size` pairs
//! (2,000 by default) are drawn with the seed as the English dev set and the rest, capped at `max_train`, is the
//! training set. XNLI dev (`xnli/dev-{lang}.tsv`, 2,490 labelled pairs per language, parallel across languages) is
//! the evaluation set; XTREME's test files carry no labels.
//!
//! **Input.** A pair becomes `[CLS] premise [SEP] hypothesis [SEP]`, built from the tokenizer's own
//! single-sentence encoding of each side ([`crate::model::ModelTokenizer::encode_words`], which segments Chinese
//! with jieba for crossling models) rather than a tokenizer pair template: crossling tokenizers have none, and the
//! encoder takes no segment ids (a Hugging Face model gets token type 0 everywhere, see
//! [`crate::model::embeddings`]), so the `[SEP]` between the sides is what marks them — the same ids a BERT pair
//! template gives, without the segment embedding. Longer pairs are cut to `max_len` (capped by the model's
//! positions) longest-first: a token is dropped from the end of the longer side until the pair fits, as
//! `transformers`' `longest_first` truncation does.
use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::analysis::token_translation::language_means;
use crate::data::formats::{mnli, xnli, NliExample};
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::data::FilesRead;
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::{LoadedModel, ModelTokenizer};
use crate::tasks::common::{check_languages, model_languages, ModelInfo, TRAIN_LANG};
use crate::tasks::finetune::{mix, permutation, DevPoint, FreezeReport, LossSummary, SPLIT};
use crate::tasks::items::ItemScores;
use crate::tasks::nli::{MdsEval, NliConfig, NliFinetune, NliItem, Shift};
use tch::Tensor;

/// The NLI data of a run: English MNLI pairs and XNLI dev per language.
#[derive(Debug, Clone)]
pub struct NliData {
    /// De-duplicated MNLI pairs, in file order.
    pub mnli: Vec<NliExample>,
    /// XNLI dev pairs of each language, labelled rows only, in file order.
    pub xnli: BTreeMap<String, Vec<NliExample>>,
    /// Files read, as (mirror path, sha256).
    pub files: FilesRead,
}

/// The languages the bundle's XNLI covers.
pub fn xnli_languages(catalog: &Catalog) -> Result<Vec<String>> {
    Ok(crate::text::pseudo::with_synthetic(catalog.get("xnli")?.languages.clone()))
}

/// Reads MNLI (all its files, de-duplicated) and the XNLI dev files of `langs`; a synthetic language (`enx`) gets its
/// source's, rewritten.
pub fn load_nli_data(catalog: &Catalog, roots: &DataRoots, langs: &[String]) -> Result<NliData> {
    let mut files = Vec::new();
    let m = catalog.get("mnli")?;
    let mut paths = Vec::new();
    for f in m.files.iter().filter(|f| f.is_data()) {
        paths.push(roots.resolve(f)?);
        files.push((f.path.clone(), f.sha256.clone()));
    }
    let mnli = mnli::read_dedup(&paths)?.examples;
    let x = catalog.get("xnli")?;
    let mut per_lang = BTreeMap::new();
    // English is always read: the mean-difference shift needs its means (a small file).
    let mut wanted: Vec<&String> = langs.iter().collect();
    let en = TRAIN_LANG.to_string();
    if !langs.contains(&en) {
        wanted.push(&en);
    }
    for lang in wanted {
        // A synthetic language reads its source's dev file (the sentences English is scored on), rewritten.
        let want = format!("xnli/dev-{}.tsv", crate::text::pseudo::eval_file_language(lang));
        let entry = x.files.iter().find(|f| f.path == want).ok_or_else(|| unknown_xnli(lang, &x.languages))?;
        let path = roots.resolve(entry)?;
        files.push((entry.path.clone(), entry.sha256.clone()));
        let mut rows: Vec<NliExample> = xnli::read(&path)?.into_iter().filter(|e| e.label.is_some()).collect();
        if let Some((_, r)) = crate::text::pseudo::eval_source(lang) {
            r.nli_examples(&mut rows);
        }
        if rows.is_empty() {
            return Err(Error::format_file(&path, "no labelled rows (expected premise<TAB>hypothesis<TAB>label)"));
        }
        per_lang.insert(lang.clone(), rows);
    }
    Ok(NliData { mnli, xnli: per_lang, files })
}

fn unknown_xnli(lang: &str, known: &[String]) -> Error {
    Error::Invalid(format!("no XNLI dev set for language '{lang}' (XNLI in the bundle: {})", known.join(", ")))
}

/// The XNLI languages `model` can read, in XNLI order (the default evaluation languages).
pub fn default_langs(model: &LoadedModel, xnli_langs: &[String]) -> Vec<String> {
    readable_langs(model_languages(model).as_deref(), xnli_langs)
}

/// The XNLI languages among `reads` (`None`: a reader of any language), in XNLI order.
pub fn readable_langs(reads: Option<&[String]>, xnli_langs: &[String]) -> Vec<String> {
    xnli_langs.iter().filter(|l| reads.is_none_or(|r| r.contains(l))).cloned().collect()
}

/// Checks, before any data is read, that `cfg` is valid for `model`, that XNLI has each of `langs` and that `model`
/// can read English and each of them.
pub fn check_setup(model: &LoadedModel, langs: &[String], xnli_langs: &[String], cfg: &NliConfig) -> Result<()> {
    cfg.validate()?;
    check_languages(model, langs, cfg.finetune.freeze_layers, "NLI", |l| has_xnli(l, xnli_langs))
}

/// `Ok` when the XNLI bundle (languages `xnli_langs`) has a dev set for `lang`.
pub fn has_xnli(lang: &str, xnli_langs: &[String]) -> Result<()> {
    if xnli_langs.iter().any(|x| x == lang) {
        Ok(())
    } else {
        Err(unknown_xnli(lang, xnli_langs))
    }
}

/// `[CLS] premise [SEP] hypothesis [SEP]` ids of language `lang` (a Hugging Face tokenizer: its own pair template,
/// e.g. XLM-R's `<s> p </s> </s> h </s>`), the two texts cut longest-first to fit `max_len` tokens; also whether
/// anything was cut (see the module docs).
pub fn encode_pair(
    tok: &ModelTokenizer,
    premise: &str,
    hypothesis: &str,
    lang: &str,
    max_len: usize,
) -> Result<(Vec<i64>, bool)> {
    let (mut p, mut h) = (tok.encode_content(premise, lang)?, tok.encode_content(hypothesis, lang)?);
    let budget = max_len.saturating_sub(tok.added_specials(true));
    let cut = p.len() + h.len() > budget;
    while p.len() + h.len() > budget {
        if p.len() >= h.len() {
            p.pop();
        } else {
            h.pop();
        }
    }
    Ok((tok.frame(&p, Some(&h))?.ids, cut))
}

/// Encodes labelled pairs; returns the items and how many were cut. `what` names the data in errors.
pub fn encode_examples(
    tok: &ModelTokenizer,
    examples: &[&NliExample],
    lang: &str,
    max_len: usize,
    what: &str,
) -> Result<(Vec<NliItem>, usize)> {
    encode_labelled(examples, what, |e, label| {
        let (ids, cut) = encode_pair(tok, &e.premise, &e.hypothesis, lang, max_len)?;
        Ok((NliItem { ids, label }, usize::from(cut)))
    })
}

/// Encodes each labelled pair with `encode(pair, class)`, which returns the item and how many cuts it made; returns
/// the items and the cuts. Errors name `what` and the pair's 1-based row.
pub fn encode_labelled<T>(
    examples: &[&NliExample],
    what: &str,
    mut encode: impl FnMut(&NliExample, usize) -> Result<(T, usize)>,
) -> Result<(Vec<T>, usize)> {
    let mut items = Vec::with_capacity(examples.len());
    let mut cut = 0;
    for (i, e) in examples.iter().enumerate() {
        let label = e.label.ok_or_else(|| Error::Invalid(format!("{what}: pair {} has no label", i + 1)))?;
        let (item, c) =
            encode(e, label.index()).map_err(|err| Error::Invalid(format!("{what}: pair {}: {err}", i + 1)))?;
        cut += c;
        items.push(item);
    }
    Ok((items, cut))
}

/// Splits `n` MNLI pairs with `seed`: `(train, dev)` indices, dev = `dev_size` pairs, train = the rest capped at
/// `max_train`.
pub fn split_train_dev(
    n: usize,
    dev_size: usize,
    max_train: Option<usize>,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if n <= dev_size {
        return Err(Error::Invalid(format!(
            "MNLI has {n} pairs, not enough to hold out a dev set of {dev_size} and train on the rest"
        )));
    }
    let order = permutation(n, mix(seed, SPLIT, 0));
    let (dev, rest) = order.split_at(dev_size);
    let train = rest[..max_train.unwrap_or(rest.len()).min(rest.len())].to_vec();
    Ok((train, dev.to_vec()))
}

/// XNLI dev accuracy of one language.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LangAccuracy {
    pub accuracy: f64,
    pub pairs: usize,
    /// Pairs cut to `max_len`.
    pub truncated: usize,
}

/// The test-time mean-difference shift on one language (see [`crate::tasks::nli::MdsEval`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdsResult {
    pub layer: usize,
    /// ‖D‖ of the shift vector.
    pub shift_norm: f64,
    pub select_pairs: usize,
    pub test_pairs: usize,
    /// (α, accuracy on the selection pairs), in the config's order.
    pub selection: Vec<(f64, f64)>,
    pub best_alpha: f64,
    /// Accuracy on the test pairs without and with the shift at the chosen α.
    pub test_accuracy_without: f64,
    pub test_accuracy_with: f64,
}

/// The per-pair outcomes behind an [`MdsResult`]'s accuracies ([`ItemScores::hits`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdsItems {
    /// The test pairs without the shift (`test_accuracy_without`) and with it at the chosen α (`test_accuracy_with`).
    /// (Not `without` / `with`: `with` is reserved in Rhai.)
    pub test_without: ItemScores,
    pub test_with: ItemScores,
    /// The selection pairs at each α, in the order of `selection`.
    pub selection: Vec<ItemScores>,
}

/// The result of [`run_nli`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NliResult {
    /// `nli`.
    pub task: String,
    pub model: ModelInfo,
    pub config: NliConfig,
    /// The `max_len` used (the config's, capped by the model's positions).
    pub max_len: usize,
    pub device: String,
    pub train_lang: String,
    /// MNLI pairs after de-duplication.
    pub mnli_pairs: usize,
    pub train_pairs: usize,
    pub dev_pairs: usize,
    pub truncated_train: usize,
    pub freeze: FreezeReport,
    pub steps: u64,
    pub epochs: usize,
    /// The step whose state was kept (best English dev accuracy).
    pub best_step: u64,
    pub en_dev_accuracy: f64,
    pub dev_history: Vec<DevPoint>,
    /// Zero-shot accuracy on XNLI dev per language (`en`, when asked for, is the in-language reference).
    pub xnli: BTreeMap<String, LangAccuracy>,
    /// With `config.mds`: the mean-difference shift per evaluated language other than English.
    pub mds: BTreeMap<String, MdsResult>,
    /// Per-pair outcomes behind `xnli` ([`ItemScores::hits`]: its mean is the accuracy); not in the JSON.
    #[serde(skip)]
    pub items: BTreeMap<String, ItemScores>,
    /// Per-pair outcomes behind `mds`; not in the JSON.
    #[serde(skip)]
    pub mds_items: BTreeMap<String, MdsItems>,
    pub loss: LossSummary,
    pub files: FilesRead,
    pub train_seconds: f64,
    pub total_seconds: f64,
    /// Notes from loading the model.
    pub notes: Vec<String>,
}

/// Fine-tunes `loaded` on English MNLI and evaluates on XNLI dev of `langs` (see the module docs); the model's
/// weights are consumed (fine-tuned in place). `compute.device` must be the model's device.
pub fn run_nli(
    loaded: LoadedModel,
    data: &NliData,
    langs: &[String],
    cfg: &NliConfig,
    compute: Compute,
    progress: bool,
) -> Result<NliResult> {
    let started = Instant::now();
    let xnli_langs: Vec<String> = data.xnli.keys().cloned().collect();
    check_setup(&loaded, langs, &xnli_langs, cfg)?;
    let max_len = cfg.finetune.max_len.min(loaded.config.max_positions);
    if max_len < 3 {
        return Err(Error::Invalid(format!("the model has {max_len} positions; NLI pairs need at least 3")));
    }
    let (train_idx, dev_idx) =
        split_train_dev(data.mnli.len(), cfg.dev_size, cfg.finetune.max_train, cfg.finetune.seed)?;
    let tok = &loaded.tokenizer;
    let pick = |idx: &[usize]| idx.iter().map(|&i| &data.mnli[i]).collect::<Vec<_>>();
    let (train, truncated_train) = encode_examples(tok, &pick(&train_idx), TRAIN_LANG, max_len, "MNLI train")?;
    let (dev, _) = encode_examples(tok, &pick(&dev_idx), TRAIN_LANG, max_len, "MNLI dev")?;
    let mut eval = BTreeMap::new();
    for lang in langs {
        let rows = &data.xnli[lang];
        let rows: Vec<&NliExample> = rows.iter().take(cfg.finetune.max_eval.unwrap_or(rows.len())).collect();
        eval.insert(lang.clone(), encode_examples(tok, &rows, lang, max_len, &format!("XNLI dev {lang}"))?);
    }
    let model_info = ModelInfo::of(&loaded);
    let shifts = match &cfg.mds {
        Some(m) => mds_shifts(&loaded, data, langs, cfg, m)?,
        None => BTreeMap::new(),
    };
    let pad = tok.specials().pad as i64;
    let LoadedModel { model, vs, notes, .. } = loaded;
    let mut ft = NliFinetune::new(model, vs, pad, compute, cfg)?;
    let outcome = ft.train(&train, &dev, TRAIN_LANG, cfg, progress)?;
    let mut xnli_acc = BTreeMap::new();
    let mut per_item = BTreeMap::new();
    for (lang, (items, truncated)) in &eval {
        let hits = ItemScores::hits(&ft.hits_with(items, lang, cfg.finetune.eval_batch_tokens, None)?);
        let accuracy = hits.estimate();
        xnli_acc.insert(lang.clone(), LangAccuracy { accuracy, pairs: items.len(), truncated: *truncated });
        per_item.insert(lang.clone(), hits);
    }
    let mut mds = BTreeMap::new();
    let mut mds_items = BTreeMap::new();
    for (lang, (layer, vector, select)) in shifts {
        let items = &eval[&lang].0;
        let (result, outcomes) = mds_evaluate(&ft, items, &lang, layer, vector, select, cfg)?;
        mds.insert(lang.clone(), result);
        mds_items.insert(lang, outcomes);
    }
    Ok(NliResult {
        task: "nli".into(),
        model: model_info,
        config: cfg.clone(),
        max_len,
        device: compute.describe(),
        train_lang: TRAIN_LANG.into(),
        mnli_pairs: data.mnli.len(),
        train_pairs: train.len(),
        dev_pairs: dev.len(),
        truncated_train,
        freeze: ft.freeze.clone(),
        steps: outcome.steps,
        epochs: outcome.epochs,
        best_step: outcome.best_step,
        en_dev_accuracy: outcome.best_dev_score,
        dev_history: outcome.dev_history,
        xnli: xnli_acc,
        mds,
        items: per_item,
        mds_items,
        loss: outcome.loss,
        files: data.files.clone(),
        train_seconds: outcome.seconds,
        total_seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

/// The number of XNLI dev pairs of a language used to choose α: the config's, at most half of the evaluated pairs.
fn select_count(evaluated: usize, m: &MdsEval) -> usize {
    m.select_pairs.min(evaluated / 2)
}

/// The shift layer and `D = R̄(en) − R̄(x)` per evaluated language other than English, from the pre-trained model and
/// the premises of the α-selection pairs (parallel across languages); with the selection size.
#[allow(clippy::type_complexity)]
fn mds_shifts(
    loaded: &LoadedModel,
    data: &NliData,
    langs: &[String],
    cfg: &NliConfig,
    m: &MdsEval,
) -> Result<BTreeMap<String, (usize, Tensor, usize)>> {
    let layers = loaded.config.layers;
    let layer = m.layer.unwrap_or(if cfg.finetune.freeze_layers > 0 { cfg.finetune.freeze_layers } else { layers / 2 });
    if layer > layers {
        return Err(Error::Invalid(format!("mds layer {layer} is beyond the model's {layers} layers")));
    }
    let en_rows = data.xnli.get(TRAIN_LANG).ok_or_else(|| Error::Invalid("the MDS shift needs XNLI dev en".into()))?;
    let mut out = BTreeMap::new();
    // English means depend only on how many premises are used: computed once per count (normally once).
    let mut en_means: BTreeMap<usize, Tensor> = BTreeMap::new();
    for lang in langs.iter().filter(|l| l.as_str() != TRAIN_LANG) {
        let rows = &data.xnli[lang];
        let evaluated = rows.len().min(cfg.finetune.max_eval.unwrap_or(rows.len()));
        let select = select_count(evaluated, m);
        if select == 0 {
            return Err(Error::Invalid(format!("XNLI dev {lang}: too few pairs ({evaluated}) to choose α for MDS")));
        }
        let premises =
            |r: &[NliExample]| r[..select.min(r.len())].iter().map(|e| e.premise.clone()).collect::<Vec<_>>();
        let mean_en = match en_means.get(&select) {
            Some(m) => m.shallow_clone(),
            None => {
                let (m, _) = language_means(loaded, &premises(en_rows), TRAIN_LANG, cfg.finetune.eval_batch_tokens)?;
                en_means.insert(select, m.shallow_clone());
                m
            }
        };
        let (mean_x, _) = language_means(loaded, &premises(rows), lang, cfg.finetune.eval_batch_tokens)?;
        out.insert(lang.clone(), (layer, mean_en.get(layer as i64) - mean_x.get(layer as i64), select));
    }
    Ok(out)
}

/// Chooses α on the first `select` items and reports the rest without and with the shift; with the per-pair
/// outcomes behind each accuracy.
fn mds_evaluate(
    ft: &NliFinetune,
    items: &[NliItem],
    lang: &str,
    layer: usize,
    vector: Tensor,
    select: usize,
    cfg: &NliConfig,
) -> Result<(MdsResult, MdsItems)> {
    let m = cfg.mds.clone().unwrap_or_default();
    let (sel, test) = items.split_at(select.min(items.len()));
    let shift_norm = vector.norm().double_value(&[]);
    let hits = |items: &[NliItem], shift: Option<&Shift>| -> Result<ItemScores> {
        Ok(ItemScores::hits(&ft.hits_with(items, lang, cfg.finetune.eval_batch_tokens, shift)?))
    };
    let per_alpha = ft.hits_per_alpha(sel, lang, cfg.finetune.eval_batch_tokens, layer, &vector, &m.alphas)?;
    let mut selection = Vec::with_capacity(m.alphas.len());
    let mut selection_items = Vec::with_capacity(m.alphas.len());
    for (&alpha, h) in m.alphas.iter().zip(per_alpha) {
        let h = ItemScores::hits(&h);
        selection.push((alpha, h.estimate()));
        selection_items.push(h);
    }
    let best_alpha = selection
        .iter()
        .fold(None::<(f64, f64)>, |best, &(a, acc)| match best {
            Some((ba, bacc)) if bacc > acc || (bacc == acc && ba.abs() <= a.abs()) => Some((ba, bacc)),
            _ => Some((a, acc)),
        })
        .map_or(0.0, |(a, _)| a);
    let shift = Shift { layer, vector, alpha: best_alpha };
    let (test_without, test_with) = (hits(test, None)?, hits(test, Some(&shift))?);
    let result = MdsResult {
        layer,
        shift_norm,
        select_pairs: sel.len(),
        test_pairs: test.len(),
        selection,
        best_alpha,
        test_accuracy_without: test_without.estimate(),
        test_accuracy_with: test_with.estimate(),
    };
    Ok((result, MdsItems { test_without, test_with, selection: selection_items }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_joined_and_cut_longest_first() {
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s", "-", ".", "on"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        let tok = ModelTokenizer::HuggingFace(crate::model::tokenizer::load_hf_tokenizer(dir.path()).unwrap());
        let (ids, cut) = encode_pair(&tok, "the cat sat", "the cat", "en", 64).unwrap();
        assert_eq!((ids, cut), (vec![2, 5, 6, 7, 3, 5, 6, 3], false));
        let (ids, cut) = encode_pair(&tok, "the cat sat on the cat", "on", "en", 7).unwrap();
        assert_eq!((ids, cut), (vec![2, 5, 6, 7, 3, 11, 3], true));
        let (ids, _) = encode_pair(&tok, "the cat", "the cat sat", "en", 5).unwrap();
        assert_eq!(ids, [2, 5, 3, 5, 3]);
        let (ids, _) = encode_pair(&tok, "", "", "en", 3).unwrap();
        assert_eq!(ids, [2, 3, 3]);
    }

    #[test]
    fn the_split_is_seeded_and_disjoint() {
        let (train, dev) = split_train_dev(100, 10, Some(30), 5).unwrap();
        assert_eq!((train.len(), dev.len()), (30, 10));
        assert!(train.iter().all(|i| !dev.contains(i)));
        assert_eq!(split_train_dev(100, 10, Some(30), 5).unwrap(), (train, dev.clone()));
        assert_ne!(split_train_dev(100, 10, Some(30), 9).unwrap().1, dev);
        assert!(split_train_dev(10, 10, Some(30), 5).unwrap_err().to_string().contains("not enough"));
    }
}
