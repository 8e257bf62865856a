//! Zero-shot cross-lingual transfer (Wu, Conneau et al. 2020, §4 and Table 1): the fine-tuned tasks, and the
//! pure-Rust evaluation building blocks of the NER, dependency-parsing and word-alignment pipelines. Each task is a
//! folder: its model and fine-tuning in `mod.rs`, the zero-shot run in `transfer.rs`, its metrics beside them.
//!
//! - [`common`]: what every transfer task shares — the training language (English), the languages a model reads,
//!   the checks before any data is read, the fine-tuned model's provenance ([`common::ModelInfo`]).
//! - [`finetune`]: task fine-tuning machinery — freezing (language-specific parameters always, optionally the
//!   embeddings and bottom layers), Adam with a fixed or linear-decay schedule, seeded order and dropout, best-state
//!   snapshot, loss-curve summary.
//! - [`nli`]: the NLI classifier on `[CLS]` and its fine-tuning with best-epoch selection on English dev accuracy.
//!   [`nli::transfer`]: zero-shot XNLI — MNLI train / seeded dev split, pair encoding, accuracy per XNLI language.
//! - [`frozen_nli`]: one NLI classifier (BiLSTM-max, InferSent's pair features, an MLP) on frozen static vectors
//!   or a frozen encoder's layers (Liu et al. 2020 §3.1.2).
//!   [`frozen_nli::transfer`]: zero-shot XNLI with it — per-sentence encoding, token coverage of static vectors.
//! - [`lstm`]: a one-layer LSTM as an explicit loop over steps (libtorch's fused CPU LSTM stalls on 2 cores).
//! - [`run`]: one transfer run from a request (task, model, languages, overrides, scale, compute, stack), with the
//!   task-result cache; what the script namespace `task::`, the CLI and notebooks call.
//! - [`run_frozen`]: the same for one classifier on a frozen representation (Liu's XNLI), with the same cache.
//! - [`sweep`]: a batch × learning-rate grid ranked by English dev, reporting the mean of the best two.
//! - [`items`]: the per-item outcomes behind every test score (per pair, per sentence), for bootstrap intervals.
//! - [`ner`]: the BIO tagger on first subwords and its fine-tuning with best-span-F1 selection.
//!   [`ner::transfer`]: zero-shot NER — PAN-X (or CoNLL-2003) English training, span F1 on PAN-X dev per language.
//!   [`ner::metrics`]: BIO repair (standalone `I-X` → `B-X`; a span takes its final tag's type), span extraction,
//!   CoNLL-style micro span precision / recall / F1 with per-type counts.
//! - [`parse`]: the biaffine dependency parser (Dozat & Manning 2017) on first subwords, MST or greedy decoding, and its
//!   fine-tuning with best-LAS selection.
//!   [`parse::transfer`]: zero-shot parsing — English UD training (LinES + ParTUT, EWT dev), UAS / LAS on the GSD test
//!   treebanks of fr / de / ru and GSDSimp for zh.
//!   [`parse::metrics`]: UAS / LAS over a corpus; gold-`PUNCT` tokens excluded by default.
//!   [`parse::decode`]: heads from an arc-score matrix: greedy, and the maximum spanning arborescence with exactly one
//!   root child (Chu-Liu/Edmonds with an exact root penalty).
//! - [`word_align`]: fast_align (IBM Model 2 with a diagonal prior) trained by EM, Viterbi alignment, both directions.
//!   [`word_align::symmetrize`]: the grow-diag-final-and merge of two directional alignments.
//!   [`word_align::aer`]: alignment error rate against sure and possible links.
//! - [`backbone`]: what a head reads — a fine-tuned encoder, or fresh layers stacked on a frozen layer of
//!   pretrained encoders with a map per language (Emerging §5.1.2, Figure 5).
//! - [`aligned_stack`]: builds that stack for a run — each target language's model and its layer-`i` map.
//! - [`contextual_map`]: per-layer Procrustes maps between two encoders from word-aligned parallel sentences.
//! - [`word_inputs`]: gold words → subword ids and first-subword positions, batches and gathers for token tasks.
pub mod aligned_stack;
pub mod backbone;
pub mod common;
pub mod contextual_map;
pub mod finetune;
pub mod finetune_config;
pub mod frozen_nli;
pub mod items;
pub mod ner;
pub mod nli;
pub mod parse;
pub mod run;
pub mod run_frozen;
pub mod sweep;
pub mod word_align;
pub mod word_inputs;

/// Checks that one seed gives one loss curve and another seed another.
///
/// Bits are not compared: with tests running side by side, MKL may give a GEMM fewer threads
/// (`MKL_DYNAMIC`) and sum in another order, which moves a loss slightly (seen in CI; measured: docs/performance.md,
/// *Measurements behind design choices*). The bounds sit between the two effects as measured on 2026-11-27: alone,
/// the same seed gave identical curves and seeds 1 and 2 differed by 0.018–0.20 (the four task tests); under load
/// the same seed differed by 1.1e-4 (parsing), which the earlier bound of 1e-4 failed.
#[cfg(test)]
pub(crate) fn assert_seed_determines_curve(run: impl Fn(u64) -> Vec<f64>) {
    let gap = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    let (a, b, other) = (run(1), run(1), run(2));
    assert_eq!(a.len(), b.len());
    assert!(gap(&a, &b) < 1e-3, "same seed: {a:?} vs {b:?}");
    assert!(gap(&a, &other) > 5e-3, "seeds 1 and 2: {a:?} vs {other:?}");
}

/// A tiny encoder (2 layers × 32, 2 heads, en and fr) for the task heads' tests.
#[cfg(test)]
pub(crate) fn tiny_model(
    vocab_size: usize,
    max_positions: usize,
    sharing: crate::model::SharingPlan,
    seed: i64,
) -> (crate::model::MlmModel, tch::nn::VarStore) {
    let cfg = crate::model::ModelConfig {
        vocab_size,
        hidden: 32,
        layers: 2,
        heads: 2,
        max_positions,
        languages: vec!["en".into(), "fr".into()],
        sharing,
        ..crate::model::ModelConfig::default()
    };
    let _rng = crate::device::torch_rng_lock();
    tch::manual_seed(seed);
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let model = crate::model::MlmModel::new(&vs.root(), &cfg).unwrap();
    (model, vs)
}

/// A crossling tokenizer trained on a toy corpus of `langs` (en, fr).
#[cfg(test)]
pub(crate) fn tiny_tokenizer(langs: &[&str]) -> crate::model::ModelTokenizer {
    use crate::text::tokenize::{AnchorScheme, CrossTokenizer, TokenizerSpec};
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = crate::text::tokenize::tests::write_corpora(dir.path(), 60)
        .into_iter()
        .filter(|(l, _)| langs.contains(&l.as_str()))
        .collect();
    crate::model::ModelTokenizer::crossling(
        CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 60), &files).unwrap(),
    )
}

/// A tiny loaded model (2 layers × 32) with a [`tiny_tokenizer`] of `langs`.
#[cfg(test)]
pub(crate) fn tiny_loaded(seed: i64, langs: &[&str]) -> crate::model::LoadedModel {
    let tokenizer = tiny_tokenizer(langs);
    let (model, vs) = tiny_model(tokenizer.vocab_size(), 32, crate::model::SharingPlan::default(), seed);
    let config = crate::model::ModelConfig {
        languages: langs.iter().map(|s| s.to_string()).collect(),
        ..model.config().clone()
    };
    let source = crate::model::ModelSource {
        kind: crate::model::ModelKind::Crossling,
        path: format!("/models/tiny-{seed}").into(),
        weights_sha256: format!("sha-{seed}"),
    };
    crate::model::LoadedModel { model, vs, tokenizer, config, source, notes: vec![] }
}
