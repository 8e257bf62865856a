//! The fine-tuning settings the encoder tasks share — NLI ([`crate::tasks::nli::NliConfig`]), NER
//! ([`crate::tasks::ner::NerConfig`]) and parsing ([`crate::tasks::parse::ParseConfig`]) — in one type, with one
//! range check and one conversion into the optimiser settings and epoch plan of
//! [`crate::tasks::finetune::train_with_selection`].
//!
//! Each task config holds a `FinetuneConfig` as `#[serde(flatten)]`ed field `finetune`, so a config's JSON — its
//! overrides (`{"lr": 3e-5}`), its records and the task cache key ([`crate::tasks::run::cache_file`]) — stays flat,
//! field for field what it was before the fields moved here. Each task sets its own values per scale (`NliConfig::at`,
//! …); the settings they share at `cpu` are [`FinetuneConfig::cpu`]'s.
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tasks::finetune::{EpochPlan, FreezePlan, HeadRate, LrSchedule, OptimSettings};

/// Optimiser, schedule, data caps, freezing and evaluation batching of a fine-tuning run (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinetuneConfig {
    /// Learning rate: the fixed rate, or the peak of `linear_decay`.
    pub lr: f64,
    /// `fixed` or `linear_decay` (see [`crate::tasks::finetune`]).
    pub schedule: LrSchedule,
    /// Warm-up share of the steps for `linear_decay`.
    pub warmup_fraction: f64,
    /// Training examples (pairs, sentences) per optimiser step.
    pub batch_size: usize,
    pub epochs: usize,
    /// Cap on the English training examples; `None` = all (which ones each task's docs say).
    pub max_train: Option<usize>,
    /// Cap on the evaluation examples per language; `None` = all (which ones each task's docs say).
    pub max_eval: Option<usize>,
    /// Longest input in subwords, specials included (also capped by the model's positions).
    pub max_len: usize,
    /// Also evaluate on the dev set every `eval_every` steps (0: only at the end of each epoch).
    pub eval_every: u64,
    /// Freeze the embeddings (language-specific parameters are always frozen).
    pub freeze_embeddings: bool,
    /// Freeze the bottom `freeze_layers` transformer layers.
    pub freeze_layers: usize,
    /// Maximum global gradient norm.
    pub clip_norm: f64,
    /// Padded subwords per evaluation forward pass.
    pub eval_batch_tokens: usize,
    /// Seed of the data order, dropout and head initialisation.
    pub seed: u64,
    /// The task head's own learning rate on the same schedule (`None`: the head trains at `lr`). Unset, it is
    /// absent from the config's JSON, so configs without it keep their task cache keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_lr: Option<f64>,
}

impl FinetuneConfig {
    /// A task's `cpu` preset: its own learning rate, schedule, epochs and data caps, and the settings every task
    /// shares at `cpu` (10 % warm-up, 32 examples a step, inputs up to 128 subwords, every epoch's end evaluated,
    /// nothing frozen, the gradient norm clipped at 1, 8,192 padded subwords per evaluation pass, seed 1).
    pub fn cpu(
        lr: f64,
        schedule: LrSchedule,
        epochs: usize,
        max_train: Option<usize>,
        max_eval: Option<usize>,
    ) -> Self {
        FinetuneConfig {
            lr,
            schedule,
            warmup_fraction: 0.1,
            batch_size: 32,
            epochs,
            max_train,
            max_eval,
            max_len: 128,
            eval_every: 0,
            freeze_embeddings: false,
            freeze_layers: 0,
            clip_norm: 1.0,
            eval_batch_tokens: 8192,
            seed: 1,
            head_lr: None,
        }
    }

    /// Checks the ranges of every setting; errors read `"{what}: …"`, `what` naming the task's config.
    pub fn validate(&self, what: &str) -> Result<()> {
        let bad = |msg: String| Err(Error::Invalid(format!("{what}: {msg}")));
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad(format!("lr must be a positive number, got {}", self.lr));
        }
        if !(0.0..=1.0).contains(&self.warmup_fraction) {
            return bad(format!("warmup_fraction must be in [0, 1], got {}", self.warmup_fraction));
        }
        if self.batch_size == 0 || self.epochs == 0 || self.eval_batch_tokens == 0 {
            return bad("batch_size, epochs and eval_batch_tokens must be at least 1".into());
        }
        if self.max_len < 3 {
            return bad(format!("max_len must be at least 3 ([CLS] … [SEP]), got {}", self.max_len));
        }
        if let Some(h) = self.head_lr.filter(|h| !(h.is_finite() && *h > 0.0)) {
            return bad(format!("head_lr must be a positive number, got {h}"));
        }
        if !(self.clip_norm.is_finite() && self.clip_norm > 0.0) {
            return bad(format!("clip_norm must be a positive number, got {}", self.clip_norm));
        }
        if self.max_train == Some(0) || self.max_eval == Some(0) {
            return bad("max_train and max_eval must be at least 1 when set".into());
        }
        Ok(())
    }

    /// Which shared parameters stay fixed besides the language-specific ones.
    pub fn freeze_plan(&self) -> FreezePlan {
        FreezePlan { embeddings: self.freeze_embeddings, layers: self.freeze_layers }
    }

    /// The optimiser settings and epoch plan for `n_train` training examples (`label` names the run in progress
    /// lines; `progress` shows a bar; `head` is the prefix of the task head's variables, which `head_lr` applies to).
    pub fn selection_setup(
        &self,
        n_train: usize,
        label: &'static str,
        head: &'static str,
        progress: bool,
    ) -> (OptimSettings, EpochPlan) {
        let settings = OptimSettings {
            lr: self.lr,
            schedule: self.schedule,
            warmup_fraction: self.warmup_fraction,
            clip_norm: self.clip_norm,
            total_steps: 0,
            seed: self.seed,
            head: self.head_lr.map(|lr| HeadRate { prefix: head, lr }),
        };
        let plan = EpochPlan {
            n_train,
            batch_size: self.batch_size,
            epochs: self.epochs,
            eval_every: self.eval_every,
            label,
            progress,
        };
        (settings, plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> FinetuneConfig {
        let cpu = FinetuneConfig::cpu(1e-3, LrSchedule::LinearDecay, 3, Some(100), None);
        FinetuneConfig { freeze_embeddings: true, freeze_layers: 2, seed: 7, ..cpu }
    }

    #[test]
    fn every_range_is_checked_and_named() {
        assert!(base().validate("X config").is_ok());
        type Break = fn(&mut FinetuneConfig);
        let cases: [(&str, Break); 8] = [
            ("lr", |c| c.lr = 0.0),
            ("head_lr", |c| c.head_lr = Some(-1.0)),
            ("warmup_fraction", |c| c.warmup_fraction = 1.5),
            ("batch_size", |c| c.epochs = 0),
            ("max_len", |c| c.max_len = 2),
            ("clip_norm", |c| c.clip_norm = f64::NAN),
            ("max_train", |c| c.max_train = Some(0)),
            ("max_eval", |c| c.max_eval = Some(0)),
        ];
        for (field, break_it) in cases {
            let mut c = base();
            break_it(&mut c);
            let e = c.validate("X config").unwrap_err().to_string();
            assert!(e.contains("X config: ") && e.contains(field), "{field}: {e}");
        }
    }

    #[test]
    fn the_settings_carry_over_to_the_optimiser_and_the_epoch_plan() {
        let c = base();
        let (s, p) = c.selection_setup(1000, "ner", "classifier", false);
        assert_eq!(
            (s.lr, s.schedule, s.warmup_fraction, s.clip_norm, s.seed, s.head),
            (1e-3, LrSchedule::LinearDecay, 0.1, 1.0, 7, None)
        );
        let with_head = FinetuneConfig { head_lr: Some(2e-3), ..c.clone() };
        let (s, _) = with_head.selection_setup(1000, "ner", "classifier", false);
        assert_eq!(s.head, Some(HeadRate { prefix: "classifier", lr: 2e-3 }));
        assert_eq!((p.n_train, p.batch_size, p.epochs, p.eval_every, p.label), (1000, 32, 3, 0, "ner"));
        assert_eq!(c.freeze_plan(), FreezePlan { embeddings: true, layers: 2 });
    }

    #[test]
    fn an_unset_head_rate_leaves_the_json_and_so_the_cache_key_as_it_was() {
        let json = serde_json::to_value(base()).unwrap();
        assert!(json.get("head_lr").is_none(), "{json}");
        let back: FinetuneConfig = serde_json::from_value(json).unwrap();
        assert_eq!(back, base());
        let set = serde_json::to_value(FinetuneConfig { head_lr: Some(1e-3), ..base() }).unwrap();
        assert_eq!(set["head_lr"], 1e-3);
    }
}
