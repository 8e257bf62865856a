//! Natural language inference for zero-shot cross-lingual transfer: fine-tune on English, test on other languages
//! with no target-language training (XNLI, Conneau et al. 2018; Wu, Conneau et al. 2020 §3 and Table 1).
//!
//! **Model.** A linear classifier on the final layer's first position (`[CLS]`) with dropout before it, as in XLM's
//! XNLI fine-tuning (Conneau & Lample 2019), the code base of Wu et al.:
//! ```text
//! logits = W · dropout(h_L[0]) + b,    W: [3, d]     classes: entailment 0, neutral 1, contradiction 2
//! L = −(1/B) Σ_b log softmax(logits_b)[y_b]
//! ```
//! ([`crate::data::formats::NliLabel::index`] gives the class of a label.) The encoder is fine-tuned with it: Adam
//! at a fixed learning rate, dropout on during training, the gradient clipped to a global norm, the language-specific
//! parameters (and optionally the embeddings and the bottom layers) frozen — see [`crate::tasks::finetune`]. The English dev
//! accuracy is measured at the end of every epoch (and every `eval_every` steps when set) and the state with the best
//! accuracy is kept (the first on ties).
//!
//! This file works on encoded pairs ([`NliItem`]); [`crate::tasks::nli::transfer`] reads MNLI / XNLI, encodes the pairs and
//! runs the zero-shot evaluation.
//!
//! **Presets** ([`NliConfig::at`]): `paper` trains batch 32 at 2e-5 for 3 epochs, best epoch by English dev accuracy
//! (Wu et al. search batch {4, 8} × encoder rate {1.25e-6, 2.5e-6, 5e-6} × classifier rate and train 200 epochs; the
//! table1 / fig3 scripts run that batch × encoder-rate grid over this preset's 3 epochs); `cpu` trains 20,000
//! pairs for 2 epochs at 2e-4, a rate for the project's small, briefly pre-trained `cpu` models (higher English dev
//! accuracy than 5e-5 on the 4 × 128 English `mono` model; measured: docs/performance.md, *Measurements behind
//! design choices*); `smoke` 300 pairs, 1 epoch. The dev set is 2,000 MNLI pairs held out with the seed (100 at
//! `smoke`); `cpu` and `paper` evaluate the whole XNLI dev set of each language (2,490 pairs), `smoke` its first 100.
pub mod transfer;
use serde::{Deserialize, Serialize};
use tch::{nn, nn::Module, nn::VarStore, Kind, Tensor};

use crate::analysis::language::{shifted_hidden, shifted_hiddens};
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::MlmModel;
use crate::nn::batch::padded;
use crate::nn::dropout::dropout;
use crate::scale::Scale;
use crate::tasks::finetune::{
    accuracy, apply_freeze, check_fit, mix, predict_classes, train_with_selection, FreezeReport, LrSchedule,
    TrainOutcome, HEAD_INIT,
};
use crate::tasks::finetune_config::FinetuneConfig;

/// Number of NLI classes.
pub const CLASSES: usize = 3;
/// Class names in index order (the order of [`crate::data::formats::NliLabel::index`]).
pub const CLASS_NAMES: [&str; CLASSES] = ["entailment", "neutral", "contradiction"];
/// Parameter-name prefix of the classifier (Hugging Face `BertForSequenceClassification` calls it `classifier`).
pub const CLASSIFIER: &str = "classifier";

/// Settings of an NLI fine-tuning run (see the module docs for the presets; the default is `cpu`). Its JSON is
/// complete and flat (records, cache keys); partial settings are overrides of a preset, through
/// [`crate::tasks::run::configured`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NliConfig {
    /// Optimiser, schedule, data caps and freezing (`max_train`: English training pairs after the dev hold-out;
    /// `max_eval`: the first XNLI dev pairs per language, the same rows in every language).
    #[serde(flatten)]
    pub finetune: FinetuneConfig,
    /// English dev pairs held out of MNLI with the seed, for model selection.
    pub dev_size: usize,
    /// Dropout before the classifier; `None` = the model's hidden dropout.
    pub classifier_dropout: Option<f64>,
    /// Also evaluate with the mean-difference shift at test time (Liu et al. 2020, Table 4); `None`: no.
    pub mds: Option<MdsEval>,
}

/// The test-time mean-difference shift of Liu et al. (2020) §4 / Table 4 for a target language `x`: the means of
/// language at layer `l` over the same (parallel) XNLI dev premises, `D = R̄_l(en) − R̄_l(x)`, computed with the
/// pre-trained encoder before fine-tuning (so `l` should not exceed the frozen bottom layers, whose outputs
/// fine-tuning leaves unchanged), and `α·D` added at every position of layer `l` when classifying `x`. `α` is chosen
/// on the first `select_pairs` XNLI dev pairs of `x` (best accuracy; the smallest α on ties) and reported on the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MdsEval {
    /// The shifted layer (0 = the embedding output); `None`: the frozen bottom (`freeze_layers`) when some layers
    /// are frozen, else the middle, `L / 2`.
    pub layer: Option<usize>,
    /// Candidate α values (0 included, the unshifted model).
    pub alphas: Vec<f64>,
    /// XNLI dev pairs per language for choosing α (capped at half of the evaluated pairs).
    pub select_pairs: usize,
}

impl Default for MdsEval {
    fn default() -> Self {
        MdsEval { layer: None, alphas: vec![0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0], select_pairs: 1245 }
    }
}

impl Default for NliConfig {
    fn default() -> Self {
        NliConfig {
            finetune: FinetuneConfig::cpu(2e-4, LrSchedule::Fixed, 2, Some(20_000), None),
            dev_size: 2_000,
            classifier_dropout: None,
            mds: None,
        }
    }
}

impl NliConfig {
    /// The settings of `scale` (see the module docs).
    pub fn at(scale: Scale) -> Self {
        let cpu = NliConfig::default();
        let f = cpu.finetune.clone();
        match scale {
            Scale::Smoke => NliConfig {
                finetune: FinetuneConfig {
                    lr: 1e-4,
                    batch_size: 16,
                    epochs: 1,
                    max_train: Some(300),
                    max_eval: Some(100),
                    max_len: 64,
                    eval_batch_tokens: 4096,
                    ..f
                },
                dev_size: 100,
                ..cpu
            },
            Scale::Cpu => cpu,
            Scale::Paper => NliConfig {
                finetune: FinetuneConfig { lr: 2e-5, epochs: 3, max_train: None, max_len: 256, ..f },
                ..cpu
            },
        }
    }

    /// Checks the ranges of every setting.
    pub fn validate(&self) -> Result<()> {
        self.finetune.validate("NLI config")?;
        let bad = |what: &str| Err(Error::Invalid(format!("NLI config: {what}")));
        if self.dev_size == 0 {
            return bad("dev_size must be at least 1");
        }
        if matches!(self.classifier_dropout, Some(p) if !(0.0..1.0).contains(&p)) {
            return bad("classifier_dropout must be in [0, 1)");
        }
        if let Some(m) = &self.mds {
            if m.alphas.is_empty() || m.alphas.iter().any(|a| !a.is_finite()) || m.select_pairs == 0 {
                return bad("mds needs finite alphas and select_pairs ≥ 1");
            }
        }
        Ok(())
    }
}

/// One encoded pair: `[CLS] premise [SEP] hypothesis [SEP]` ids and the class (see [`CLASS_NAMES`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NliItem {
    pub ids: Vec<i64>,
    pub label: usize,
}

/// The linear classifier on the first position (see the module docs).
#[derive(Debug)]
pub struct NliClassifier {
    /// `classifier.weight` `[3, hidden]`, `classifier.bias` `[3]`.
    pub linear: nn::Linear,
    pub dropout: f64,
}

impl NliClassifier {
    /// A classifier under `p` with BERT initialisation (weights N(0, 0.02²), bias 0).
    pub fn new(p: &nn::Path, hidden: usize, dropout: f64) -> Self {
        NliClassifier { linear: crate::model::sharing::dense(p, hidden, CLASSES), dropout }
    }

    /// Class logits from the final layer.
    ///
    /// # Shapes
    /// `last`: `[batch, seq, hidden]` → `[batch, 3]`
    pub fn forward(&self, last: &Tensor, train: bool) -> Tensor {
        let cls = last.select(1, 0); // [batch, hidden]
        self.linear.forward(&dropout(&cls, self.dropout, train))
    }
}

/// A test-time shift of one layer's hidden states: `alpha · vector` added at every position.
#[derive(Debug)]
pub struct Shift {
    /// 0 = the embedding output, `L` = the last layer's output.
    pub layer: usize,
    /// [hidden]
    pub vector: Tensor,
    pub alpha: f64,
}

/// An encoder with an NLI classifier, ready to fine-tune.
#[derive(Debug)]
pub struct NliFinetune {
    pub model: MlmModel,
    pub vs: VarStore,
    pub classifier: NliClassifier,
    pub compute: Compute,
    /// Padding id.
    pub pad: i64,
    /// Which parameters train.
    pub freeze: FreezeReport,
}

impl NliFinetune {
    /// Adds a classifier (initialised from the seed) to `vs` and sets which parameters train (`cfg`'s freezing plan;
    /// language-specific parameters and the MLM head never train). `vs` must live on `compute.device`.
    pub fn new(model: MlmModel, vs: VarStore, pad: i64, compute: Compute, cfg: &NliConfig) -> Result<Self> {
        cfg.validate()?;
        let mc = model.config();
        check_fit(cfg.finetune.freeze_layers, mc.layers, &vs, &compute)?;
        let dropout = cfg.classifier_dropout.unwrap_or(mc.dropout);
        let classifier = {
            let _rng = crate::device::torch_rng_lock();
            tch::manual_seed(mix(cfg.finetune.seed, HEAD_INIT, 0) as i64);
            NliClassifier::new(&(vs.root() / CLASSIFIER), mc.hidden, dropout)
        };
        let freeze = apply_freeze(&vs, &cfg.finetune.freeze_plan(), &[&format!("{CLASSIFIER}.")])?;
        Ok(NliFinetune { model, vs, classifier, compute, pad, freeze })
    }

    /// Class logits of a padded batch of language `lang`; `train` turns dropout on.
    ///
    /// # Shapes
    /// `ids`, `mask`: `[batch, seq]` i64 → `[batch, 3]`
    pub fn logits(&self, ids: &Tensor, mask: &Tensor, lang: &str, train: bool) -> Result<Tensor> {
        let out = self.model.encoder.forward(ids, Some(mask), lang, train)?;
        Ok(self.classifier.forward(out.last(), train))
    }

    /// The predicted class of each item (no dropout, no gradients), in input order.
    pub fn predict(&self, items: &[NliItem], lang: &str, batch_tokens: usize) -> Result<Vec<usize>> {
        self.predict_with(items, lang, batch_tokens, None)
    }

    /// [`NliFinetune::predict`] with `shift.alpha · shift.vector` added to every position of the layer-`shift.layer`
    /// hidden states (Liu et al. 2020 §4: the mean-difference shift at test time; see
    /// [`crate::analysis::language::shifted_hidden`]).
    pub fn predict_with(
        &self,
        items: &[NliItem],
        lang: &str,
        batch_tokens: usize,
        shift: Option<&Shift>,
    ) -> Result<Vec<usize>> {
        let lens: Vec<usize> = items.iter().map(|it| it.ids.len()).collect();
        predict_classes(&lens, batch_tokens, |batch| {
            let rows: Vec<&[i64]> = batch.iter().map(|&i| items[i].ids.as_slice()).collect();
            let (ids, mask, _) = padded(&rows, self.pad, self.compute.device);
            self.compute.forward(|| match shift {
                None => self.logits(&ids, &mask, lang, false),
                Some(s) => {
                    let last = shifted_hidden(&self.model, &ids, Some(&mask), lang, s.layer, &s.vector, s.alpha)?;
                    Ok(self.classifier.forward(&last, false))
                }
            })
        })
    }

    /// Accuracy on `items` of language `lang`.
    pub fn accuracy(&self, items: &[NliItem], lang: &str, batch_tokens: usize) -> Result<f64> {
        self.accuracy_with(items, lang, batch_tokens, None)
    }

    /// Accuracy with an optional test-time shift (see [`NliFinetune::predict_with`]).
    pub fn accuracy_with(
        &self,
        items: &[NliItem],
        lang: &str,
        batch_tokens: usize,
        shift: Option<&Shift>,
    ) -> Result<f64> {
        let pred = self.predict_with(items, lang, batch_tokens, shift)?;
        let gold: Vec<usize> = items.iter().map(|it| it.label).collect();
        Ok(accuracy(&pred, &gold))
    }

    /// Whether each item is classified correctly, with an optional test-time shift; the accuracy is the share of
    /// `true` ([`crate::tasks::items::ItemScores::hits`]).
    pub fn hits_with(
        &self,
        items: &[NliItem],
        lang: &str,
        batch_tokens: usize,
        shift: Option<&Shift>,
    ) -> Result<Vec<bool>> {
        let pred = self.predict_with(items, lang, batch_tokens, shift)?;
        Ok(pred.iter().zip(items).map(|(&p, it)| p == it.label).collect())
    }

    /// [`NliFinetune::hits_with`] at each weight of `alphas` for one shift `vector` at `layer`: per batch the layers
    /// up to `layer` run once and the layers above it once per weight, so a grid of α costs one bottom pass (the
    /// outcomes are those of one `hits_with` call per α: the same batches and operations). Element i: `alphas[i]`.
    pub fn hits_per_alpha(
        &self,
        items: &[NliItem],
        lang: &str,
        batch_tokens: usize,
        layer: usize,
        vector: &Tensor,
        alphas: &[f64],
    ) -> Result<Vec<Vec<bool>>> {
        let lens: Vec<usize> = items.iter().map(|it| it.ids.len()).collect();
        let mut hits = vec![vec![false; items.len()]; alphas.len()];
        for batch in crate::nn::batch::length_batches(&lens, batch_tokens) {
            let rows: Vec<&[i64]> = batch.iter().map(|&i| items[i].ids.as_slice()).collect();
            let (ids, mask, _) = padded(&rows, self.pad, self.compute.device);
            let classes = tch::no_grad(|| {
                self.compute.forward(|| -> Result<Vec<Tensor>> {
                    let lasts = shifted_hiddens(&self.model, &ids, Some(&mask), lang, layer, vector, alphas)?;
                    Ok(lasts.iter().map(|h| self.classifier.forward(h, false).argmax(-1, false)).collect())
                })
            })?;
            for (a, c) in classes.iter().enumerate() {
                let best = Vec::<i64>::try_from(c.to_device(tch::Device::Cpu))
                    .map_err(|e| Error::Invalid(format!("reading predictions: {e}")))?;
                for (&i, &k) in batch.iter().zip(&best) {
                    hits[a][i] = k as usize == items[i].label;
                }
            }
        }
        Ok(hits)
    }

    /// Fine-tunes on `train` (language `lang`), selects the state with the best accuracy on `dev` and leaves the
    /// weights in that state (see the module docs). Holds [`crate::device::torch_rng_lock`] while it runs.
    pub fn train(
        &mut self,
        train: &[NliItem],
        dev: &[NliItem],
        lang: &str,
        cfg: &NliConfig,
        progress: bool,
    ) -> Result<TrainOutcome> {
        cfg.validate()?;
        if train.is_empty() || dev.is_empty() {
            return Err(Error::Invalid(format!(
                "NLI fine-tuning needs training and dev pairs (got {} and {})",
                train.len(),
                dev.len()
            )));
        }
        if let Some(it) = train.iter().chain(dev).find(|it| it.label >= CLASSES || it.ids.is_empty()) {
            return Err(Error::Invalid(format!("NLI item with class {} and {} ids", it.label, it.ids.len())));
        }
        let _rng = crate::device::torch_rng_lock();
        let (settings, plan) = cfg.finetune.selection_setup(train.len(), "nli", CLASSIFIER, progress);
        let device = self.compute.device;
        let this = &*self;
        let loss_of = |chunk: &[usize]| -> Result<Tensor> {
            let rows: Vec<&[i64]> = chunk.iter().map(|&i| train[i].ids.as_slice()).collect();
            let labels: Vec<i64> = chunk.iter().map(|&i| train[i].label as i64).collect();
            let labels = Tensor::from_slice(&labels).to_device(device); // [batch]
            let (ids, mask, _) = padded(&rows, this.pad, device); // [batch, seq]
            let logits = this.logits(&ids, &mask, lang, true)?; // [batch, 3]
            Ok(logits.to_kind(Kind::Float).cross_entropy_for_logits(&labels))
        };
        let dev_score = || this.accuracy(dev, lang, cfg.finetune.eval_batch_tokens);
        train_with_selection(&this.vs, this.compute, settings, plan, loss_of, dev_score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SharingPlan;
    use crate::text::codeswitch::SplitMix64;
    use std::collections::HashMap;

    /// Ids 0..5 are specials (pad 0, cls 2, sep 3); 5, 6, 7 are the class markers; filler ids are 8..vocab.
    const VOCAB: usize = 24;

    fn tiny(sharing: SharingPlan) -> (MlmModel, VarStore) {
        crate::tasks::tiny_model(VOCAB, 32, sharing, 17)
    }

    /// `[CLS] random filler with one marker somewhere [SEP]`; the class is the marker (5, 6, 7 → 0, 1, 2).
    fn synthetic(n: usize, seed: u64) -> Vec<NliItem> {
        let mut rng = SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let len = 4 + rng.below(8) as usize;
                let mut ids: Vec<i64> = (0..len).map(|_| 8 + rng.below(VOCAB as u64 - 8) as i64).collect();
                let label = rng.below(3) as usize;
                ids[rng.below(len as u64) as usize] = 5 + label as i64;
                ids.insert(0, 2);
                ids.push(3);
                NliItem { ids, label }
            })
            .collect()
    }

    fn cfg(lr: f64, epochs: usize) -> NliConfig {
        let d = NliConfig::default();
        let finetune =
            FinetuneConfig { lr, batch_size: 16, epochs, max_len: 32, eval_batch_tokens: 512, seed: 5, ..d.finetune };
        NliConfig { finetune, ..d }
    }

    #[test]
    fn fine_tuning_learns_a_trivially_learnable_task() {
        let (model, vs) = tiny(SharingPlan::default());
        let c = cfg(1e-3, 4);
        let mut ft = NliFinetune::new(model, vs, 0, Compute::cpu(), &c).unwrap();
        let (train, dev, test) = (synthetic(640, 1), synthetic(160, 2), synthetic(300, 3));
        let before = ft.accuracy(&test, "en", 512).unwrap();
        let out = ft.train(&train, &dev, "en", &c, false).unwrap();
        let after = ft.accuracy(&test, "en", 512).unwrap();
        assert_eq!(out.steps, 4 * 40);
        assert_eq!(out.dev_history.len(), 4);
        assert!(after > 0.9, "accuracy {before:.3} → {after:.3} (chance 1/3); {out:?}");
        assert!(out.best_dev_score > 0.9, "{out:?}");
        let (first, last) = (out.loss.first.unwrap(), out.loss.last.unwrap());
        assert!(last < 0.5 * first, "loss {first} → {last}");
        // The kept state is the best dev state: evaluating again gives its accuracy.
        assert_eq!(ft.accuracy(&dev, "en", 512).unwrap(), out.best_dev_score);
    }

    /// The α grid in one bottom pass gives, weight by weight, the outcomes of one shifted evaluation per weight.
    #[test]
    fn hits_per_alpha_match_one_shifted_evaluation_per_alpha() {
        let (model, vs) = tiny(SharingPlan::default());
        let c = cfg(1e-3, 1);
        let ft = NliFinetune::new(model, vs, 0, Compute::cpu(), &c).unwrap();
        let items = synthetic(90, 6);
        let vector = Tensor::randn([32], (Kind::Float, tch::Device::Cpu));
        let alphas = [0.0, 0.5, 2.0, 8.0];
        for layer in [0, 1, 2] {
            let grid = ft.hits_per_alpha(&items, "en", 128, layer, &vector, &alphas).unwrap();
            assert_eq!(grid.len(), alphas.len());
            for (&alpha, hits) in alphas.iter().zip(&grid) {
                let shift = Shift { layer, vector: vector.shallow_clone(), alpha };
                assert_eq!(hits, &ft.hits_with(&items, "en", 128, Some(&shift)).unwrap(), "layer {layer}, α {alpha}");
            }
            // A large shift changes some outcomes, so the comparison above is not between identical evaluations.
            assert_ne!(grid[0], grid[3], "layer {layer}");
        }
    }

    fn values(vs: &VarStore) -> HashMap<String, Tensor> {
        vs.variables().into_iter().map(|(k, v)| (k, v.detach().copy())).collect()
    }

    #[test]
    fn frozen_parameters_stay_and_trainable_ones_move() {
        for (plan, frozen_prefixes) in [
            (crate::tasks::finetune::FreezePlan::default(), vec![]),
            (
                crate::tasks::finetune::FreezePlan { embeddings: true, layers: 1 },
                vec!["bert.embeddings.", "bert.encoder.layer.0."],
            ),
        ] {
            let (model, vs) = tiny(SharingPlan { sep_emb: true, sep_layers: 1 });
            let mut c = cfg(1e-3, 1);
            (c.finetune.freeze_embeddings, c.finetune.freeze_layers) = (plan.embeddings, plan.layers);
            let mut ft = NliFinetune::new(model, vs, 0, Compute::cpu(), &c).unwrap();
            let before = values(&ft.vs);
            ft.train(&synthetic(48, 4), &synthetic(16, 5), "en", &c, false).unwrap();
            let after = values(&ft.vs);
            assert!(before.keys().any(|k| k.contains(".lang.fr.")) && before.contains_key("classifier.weight"));
            for (name, b) in &before {
                let frozen = name.contains(".lang.")
                    || name.starts_with("cls.")
                    || frozen_prefixes.iter().any(|p| name.starts_with(p));
                let moved = !b.equal(&after[name]);
                // A key bias shifts every score of a query equally, so softmax attention gives it no gradient.
                if frozen || !name.ends_with("attention.self.key.bias") {
                    assert_eq!(moved, !frozen, "{name}: moved {moved}, frozen {frozen} under {plan:?}");
                }
            }
            assert_eq!(ft.freeze.trainable_tensors + ft.freeze.frozen_tensors, before.len());
            assert!(ft.freeze.language_specific_tensors > 0);
        }
    }

    #[test]
    fn one_seed_gives_one_run() {
        let run = |seed: u64| {
            let (model, vs) = tiny(SharingPlan::default());
            let mut c = cfg(1e-3, 1);
            c.finetune.seed = seed;
            let mut ft = NliFinetune::new(model, vs, 0, Compute::cpu(), &c).unwrap();
            let out = ft.train(&synthetic(64, 6), &synthetic(16, 7), "en", &c, false).unwrap();
            out.loss.curve.iter().map(|p| p.loss).collect::<Vec<_>>()
        };
        crate::tasks::assert_seed_determines_curve(run);
    }

    #[test]
    fn configs_validate() {
        for s in Scale::ALL {
            NliConfig::at(s).validate().unwrap();
        }
        let mut c = NliConfig::default();
        c.finetune.lr = 0.0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("lr"), "{e}");
        let over = |v: serde_json::Value| v.as_object().unwrap().clone();
        let e = crate::tasks::run::configured(NliConfig::default(), &over(serde_json::json!({"learning_rate": 1e-5})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `learning_rate`"), "{e}");
        let c = crate::tasks::run::configured(
            NliConfig::default(),
            &over(serde_json::json!({"lr": 3e-5, "schedule": "linear_decay"})),
        )
        .unwrap();
        assert_eq!((c.finetune.lr, c.finetune.schedule, c.finetune.batch_size), (3e-5, LrSchedule::LinearDecay, 32));
        let (model, vs) = tiny(SharingPlan::default());
        let mut c = NliConfig::default();
        c.finetune.freeze_layers = 3;
        let e = NliFinetune::new(model, vs, 0, Compute::cpu(), &c).unwrap_err().to_string();
        assert!(e.contains("cannot freeze 3 layers"), "{e}");
    }
}
