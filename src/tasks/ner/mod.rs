//! Named-entity recognition for zero-shot cross-lingual transfer: a BIO tagger on the first subword of each word,
//! fine-tuned on English and applied to other languages unchanged (Wu, Conneau et al. 2020 §3 and Table 1; the
//! tagger of Wu & Dredze 2019, "Beto, Bentz, Becas", which follows BERT's NER recipe, Devlin et al. 2019 §5.3).
//!
//! **Model.** The final layer's state at each word's first subword ([`crate::tasks::word_inputs`]), dropout, then a linear
//! layer over the tags [`TAGS`]:
//! ```text
//! logits_w = W · dropout(h_L[first(w)]) + b,    W: [|TAGS|, d]
//! L = −(1/N) Σ_w log softmax(logits_w)[y_w]     over the N kept words of the batch
//! ```
//! Predictions are the arg-max tag of each word, then repaired and scored as spans by [`crate::tasks::ner::metrics`]
//! (span F1 after the repair heuristic). Words dropped by truncation are tagged `O`.
//!
//! **Fine-tuning** as the studies do for NER: Adam with linear warm-up over the first 10% of the steps then linear
//! decay ([`LrSchedule::LinearDecay`]), gradient clipping, language-specific parameters frozen (optionally the
//! embeddings and bottom layers), the state with the best span F1 on the English dev set kept.
//!
//! **Presets** ([`NerConfig::at`]): `paper` — batch 32, peak rate 3e-5 (the middle of Wu et al.'s grid
//! {2e-5, 3e-5, 5e-5}), 10 epochs (the study's) over the 20,000 PAN-X English training sentences, dev and evaluation on all dev
//! sentences; `cpu` — 5,000 training sentences, 3 epochs, peak rate 1e-3 for the project's small `cpu` models, 1,000
//! English dev sentences, 2,000 evaluation sentences per language (higher PAN-X en dev F1 than 3e-4 for 2 epochs on
//! the 4 × 128 English `mono` model; measured: CHANGELOG.md, *Old measurements*); `smoke` — 200 sentences, 1 epoch,
//! 50 dev and 100 evaluation sentences.
pub mod metrics;
pub mod transfer;
pub mod zh_script;
use serde::{Deserialize, Serialize};
use tch::{nn, nn::Module, nn::VarStore, Kind, Tensor};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::nn::batch::length_batches;
use crate::nn::dropout::dropout;
use crate::scale::Scale;
use crate::tasks::backbone::Backbone;
use crate::tasks::finetune::{mix, train_with_selection, FreezeReport, LrSchedule, TrainOutcome, HEAD_INIT};
use crate::tasks::finetune_config::FinetuneConfig;
use crate::tasks::ner::metrics::{evaluate, NerEval};
use crate::tasks::ner::zh_script::ZhScript;
use crate::tasks::word_inputs::{gather_words, per_item, word_batch, word_labels, WordBatch, WordItem};

/// The BIO tags of PAN-X (PER, ORG, LOC), in class-index order.
pub const TAGS: [&str; 7] = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"];
/// Parameter-name prefix of the tagger (Hugging Face `BertForTokenClassification` calls it `classifier`).
pub const TAGGER: &str = "classifier";
/// Label index of words without a training label (dropped by truncation, padding).
pub const IGNORE: i64 = -100;

/// The class index of a tag; `MISC` tags (CoNLL-2003) have no PAN-X class and map to `O`.
pub fn tag_index(tag: &str) -> Result<i64> {
    if tag.ends_with("-MISC") {
        return Ok(0);
    }
    TAGS.iter()
        .position(|t| *t == tag)
        .map(|i| i as i64)
        .ok_or_else(|| Error::Invalid(format!("unknown NER tag '{tag}' (expected one of {})", TAGS.join(", "))))
}

/// Settings of an NER fine-tuning run (see the module docs for the presets; the default is `cpu`). Its JSON is
/// complete and flat (records, cache keys); partial settings are overrides of a preset, through
/// [`crate::tasks::run::configured`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NerConfig {
    /// Optimiser, schedule, data caps and freezing (`max_train`: the first English training sentences; `max_eval`:
    /// evaluation sentences per language — for English the dev sentences after `dev_size`).
    #[serde(flatten)]
    pub finetune: FinetuneConfig,
    /// English dev sentences used for model selection (the first ones of the dev file).
    pub dev_size: usize,
    /// Dropout before the tagger; `None` = the model's hidden dropout.
    pub classifier_dropout: Option<f64>,
    /// The script PAN-X Chinese is read in: `simplified` converts it from its traditional characters with OpenCC's
    /// tables ([`zh_script`]); absent (the default): as the file gives it. Left out of the JSON when absent, so the
    /// configs' JSON (and cache keys) of runs without it are what they were before the option existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zh_script: Option<ZhScript>,
}

impl Default for NerConfig {
    fn default() -> Self {
        NerConfig {
            finetune: FinetuneConfig::cpu(1e-3, LrSchedule::LinearDecay, 3, Some(5_000), Some(2_000)),
            dev_size: 1_000,
            classifier_dropout: None,
            zh_script: None,
        }
    }
}

impl NerConfig {
    /// The settings of `scale` (see the module docs).
    pub fn at(scale: Scale) -> Self {
        let cpu = NerConfig::default();
        let f = cpu.finetune.clone();
        match scale {
            Scale::Smoke => NerConfig {
                finetune: FinetuneConfig {
                    lr: 1e-4,
                    batch_size: 16,
                    epochs: 1,
                    max_train: Some(200),
                    max_eval: Some(100),
                    max_len: 64,
                    eval_batch_tokens: 4096,
                    ..f
                },
                dev_size: 50,
                ..cpu
            },
            Scale::Cpu => cpu,
            Scale::Paper => NerConfig {
                finetune: FinetuneConfig { lr: 3e-5, epochs: 10, max_train: None, max_eval: None, max_len: 256, ..f },
                ..cpu
            },
        }
    }

    /// Checks the ranges of every setting.
    pub fn validate(&self) -> Result<()> {
        self.finetune.validate("NER config")?;
        let bad = |what: &str| Err(Error::Invalid(format!("NER config: {what}")));
        if self.dev_size == 0 {
            return bad("dev_size must be at least 1");
        }
        if matches!(self.classifier_dropout, Some(p) if !(0.0..1.0).contains(&p)) {
            return bad("classifier_dropout must be in [0, 1)");
        }
        Ok(())
    }
}

/// One encoded sentence with the class index of every word (kept or not; see [`tag_index`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NerItem {
    pub input: WordItem,
    pub tags: Vec<i64>,
}

/// An encoder (or a stack on frozen layers) with a BIO tagger, ready to fine-tune.
#[derive(Debug)]
pub struct NerFinetune {
    pub backbone: Backbone,
    /// The variables that train (the tagger is added to them).
    pub vs: VarStore,
    /// `classifier.weight` `[|TAGS|, d]`, `classifier.bias`.
    pub tagger: nn::Linear,
    pub dropout: f64,
    pub compute: Compute,
    pub pad: i64,
    pub freeze: FreezeReport,
}

impl NerFinetune {
    /// Adds a tagger (initialised from the seed) to `vs` and sets which parameters train.
    pub fn new(backbone: Backbone, vs: VarStore, pad: i64, compute: Compute, cfg: &NerConfig) -> Result<Self> {
        cfg.validate()?;
        let mc = backbone.config();
        let dropout = cfg.classifier_dropout.unwrap_or(mc.dropout);
        let tagger = {
            let _rng = crate::device::torch_rng_lock();
            tch::manual_seed(mix(cfg.finetune.seed, HEAD_INIT, 0) as i64);
            crate::model::sharing::dense(&(vs.root() / TAGGER), mc.hidden, TAGS.len())
        };
        let freeze = backbone.freeze(&vs, &cfg.finetune.freeze_plan(), &[&format!("{TAGGER}.")], &compute)?;
        Ok(NerFinetune { backbone, vs, tagger, dropout, compute, pad, freeze })
    }

    /// Tag logits of every kept word of a batch of language `lang`.
    /// # Shapes
    /// → `[batch, words, |TAGS|]`
    pub fn logits(&self, batch: &WordBatch, lang: &str, train: bool) -> Result<Tensor> {
        let hidden = self.backbone.hidden(&batch.ids, &batch.mask, lang, train)?; // [batch, seq, d]
        let words = gather_words(&hidden, &batch.first); // [batch, words, d]
        Ok(self.tagger.forward(&dropout(&words, self.dropout, train)))
    }

    /// The tag of every word of every item (words dropped by truncation: `O`), in input order.
    pub fn predict(&self, items: &[NerItem], lang: &str, batch_tokens: usize) -> Result<Vec<Vec<String>>> {
        let lens: Vec<usize> = items.iter().map(|it| it.input.ids.len()).collect();
        let mut out = vec![Vec::new(); items.len()];
        for group in length_batches(&lens, batch_tokens) {
            let inputs: Vec<&WordItem> = group.iter().map(|&i| &items[i].input).collect();
            let batch = word_batch(&inputs, self.pad, self.compute.device);
            let logits = tch::no_grad(|| self.compute.forward(|| self.logits(&batch, lang, false)))?;
            for (&i, best) in group.iter().zip(per_item(&logits.argmax(-1, false), &inputs)?) {
                let mut tags: Vec<String> = best.iter().map(|&c| TAGS[c as usize].to_string()).collect();
                tags.resize(items[i].input.words, TAGS[0].to_string());
                out[i] = tags;
            }
        }
        Ok(out)
    }

    /// Span precision / recall / F1 on `items` of language `lang`.
    pub fn evaluate(&self, items: &[NerItem], lang: &str, batch_tokens: usize) -> Result<NerEval> {
        let pred = self.predict(items, lang, batch_tokens)?;
        let gold: Vec<Vec<&str>> = items.iter().map(|it| it.tags.iter().map(|&c| TAGS[c as usize]).collect()).collect();
        evaluate(&gold, &pred)
    }

    /// Fine-tunes on `train` (language `lang`), keeps the state with the best span F1 on `dev`.
    pub fn train(
        &mut self,
        train: &[NerItem],
        dev: &[NerItem],
        lang: &str,
        cfg: &NerConfig,
        progress: bool,
    ) -> Result<TrainOutcome> {
        cfg.validate()?;
        if train.is_empty() || dev.is_empty() {
            return Err(Error::Invalid(format!(
                "NER fine-tuning needs training and dev sentences (got {} and {})",
                train.len(),
                dev.len()
            )));
        }
        if let Some(it) = train
            .iter()
            .chain(dev)
            .find(|it| it.tags.len() != it.input.words || it.tags.iter().any(|&c| c < 0 || c as usize >= TAGS.len()))
        {
            return Err(Error::Invalid(format!(
                "NER item with {} words but {} tags (or a tag out of range)",
                it.input.words,
                it.tags.len()
            )));
        }
        let _rng = crate::device::torch_rng_lock();
        let (settings, plan) = cfg.finetune.selection_setup(train.len(), "ner", TAGGER, progress);
        let device = self.compute.device;
        let this = &*self;
        let loss_of = |chunk: &[usize]| -> Result<Tensor> {
            let inputs: Vec<&WordItem> = chunk.iter().map(|&i| &train[i].input).collect();
            let tags: Vec<&[i64]> = chunk.iter().map(|&i| train[i].tags.as_slice()).collect();
            let batch = word_batch(&inputs, this.pad, device);
            let labels = word_labels(&inputs, &tags, batch.words, IGNORE, device); // [batch, words]
            let logits = this.logits(&batch, lang, true)?.to_kind(Kind::Float); // [batch, words, tags]
            Ok(logits.view([-1, TAGS.len() as i64]).cross_entropy_loss::<Tensor>(
                &labels.view([-1]),
                None,
                tch::Reduction::Mean,
                IGNORE,
                0.0,
            ))
        };
        let dev_score = || Ok(this.evaluate(dev, lang, cfg.finetune.eval_batch_tokens)?.f1);
        train_with_selection(&this.vs, this.compute, settings, plan, loss_of, dev_score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MlmModel, SharingPlan};
    use crate::tasks::word_inputs::WordItem;
    use crate::text::codeswitch::SplitMix64;

    const VOCAB: usize = 24;

    fn tiny() -> (MlmModel, VarStore) {
        crate::tasks::tiny_model(VOCAB, 32, SharingPlan::default(), 17)
    }

    fn encoder(model: MlmModel) -> Backbone {
        Backbone::Encoder { model, tokenizer: crate::tasks::tiny_tokenizer(&["en"]) }
    }

    /// One subword a word (ids 5..VOCAB); ids 5–7 start a PER/ORG/LOC entity, 8 continues the current one, the rest
    /// are outside. `max_words` below the sentence length drops the tail (as truncation would).
    fn synthetic(n: usize, seed: u64, max_words: usize) -> Vec<NerItem> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let len = 3 + rng.below(8) as usize;
                let (mut ids, mut tags) = (vec![2i64], Vec::new());
                let mut open: Option<i64> = None;
                for _ in 0..len {
                    let w = 5 + rng.below(VOCAB as u64 - 5) as i64;
                    let w = if w == 8 && open.is_none() { 9 } else { w };
                    let tag = match w {
                        5..=7 => {
                            open = Some(w - 5);
                            1 + 2 * (w - 5)
                        }
                        8 => 2 + 2 * open.unwrap(),
                        _ => {
                            open = None;
                            0
                        }
                    };
                    ids.push(w);
                    tags.push(tag);
                }
                let kept = len.min(max_words);
                let first: Vec<i64> = (1..=kept as i64).collect();
                ids.truncate(kept + 1);
                ids.push(3);
                NerItem { input: WordItem { ids, first, words: len }, tags }
            })
            .collect()
    }

    fn cfg(lr: f64, epochs: usize) -> NerConfig {
        let d = NerConfig::default();
        let finetune =
            FinetuneConfig { lr, batch_size: 16, epochs, max_len: 32, eval_batch_tokens: 512, seed: 5, ..d.finetune };
        NerConfig { finetune, ..d }
    }

    #[test]
    fn fine_tuning_learns_a_trivially_learnable_task() {
        let (model, vs) = tiny();
        let c = cfg(2e-3, 4);
        let mut ft = NerFinetune::new(encoder(model), vs, 0, Compute::cpu(), &c).unwrap();
        let (train, dev, test) = (synthetic(480, 1, 99), synthetic(96, 2, 99), synthetic(200, 3, 99));
        let out = ft.train(&train, &dev, "en", &c, false).unwrap();
        let after = ft.evaluate(&test, "en", 512).unwrap();
        assert_eq!(out.steps, 4 * 30);
        assert!(after.f1 > 0.9, "test span F1 {:.3}; {out:?}", after.f1);
        let (first, last) = (out.loss.first.unwrap(), out.loss.last.unwrap());
        assert!(last < 0.3 * first, "loss {first} → {last}");
        assert_eq!(ft.evaluate(&dev, "en", 512).unwrap().f1, out.best_dev_score);
        // Truncated words are tagged O: their entities count as missed, so recall falls.
        let cut = synthetic(200, 3, 2);
        let pred = ft.predict(&cut, "en", 512).unwrap();
        assert!(pred.iter().zip(&cut).all(|(p, it)| p.len() == it.input.words && p[2..].iter().all(|t| t == "O")));
        let e = ft.evaluate(&cut, "en", 512).unwrap();
        assert!(e.recall < 0.9 * after.recall, "{e:?} vs {after:?}");
    }

    #[test]
    fn one_seed_gives_one_run() {
        let run = |seed: u64| {
            let (model, vs) = tiny();
            let mut c = cfg(1e-3, 1);
            c.finetune.seed = seed;
            let mut ft = NerFinetune::new(encoder(model), vs, 0, Compute::cpu(), &c).unwrap();
            let out = ft.train(&synthetic(64, 6, 99), &synthetic(16, 7, 99), "en", &c, false).unwrap();
            out.loss.curve.iter().map(|p| p.loss).collect::<Vec<_>>()
        };
        crate::tasks::assert_seed_determines_curve(run);
    }

    #[test]
    fn tags_and_configs() {
        assert_eq!(tag_index("B-LOC").unwrap(), 5);
        assert_eq!(tag_index("I-MISC").unwrap(), 0);
        assert!(tag_index("B-DATE").unwrap_err().to_string().contains("unknown NER tag"));
        for s in Scale::ALL {
            NerConfig::at(s).validate().unwrap();
        }
        let over = serde_json::json!({"rate": 1e-5}).as_object().unwrap().clone();
        let e = crate::tasks::run::configured(NerConfig::default(), &over).unwrap_err().to_string();
        assert!(e.contains("unknown field `rate`") && e.contains("dev_size"), "{e}");
        let (model, vs) = tiny();
        let bad = synthetic(4, 1, 99).into_iter().map(|mut it| {
            it.tags.pop();
            it
        });
        let bad: Vec<NerItem> = bad.collect();
        let c = cfg(1e-3, 1);
        let mut ft = NerFinetune::new(encoder(model), vs, 0, Compute::cpu(), &c).unwrap();
        assert!(ft.train(&bad, &bad, "en", &c, false).unwrap_err().to_string().contains("tags"));
    }
}
