//! A model request — a preset of [`super::presets`] for some languages, with optional changes (steps, seed, data
//! size, context window, shape, snapshots) — resolved to its run config and its model-cache folder. The script
//! functions `train::model` / `train::config` and notebooks make the same request.
use serde::Deserialize;

use super::presets::{preset_at, Pretraining};
use super::run::RunConfig;
use crate::device::Compute;
use crate::error::Result;
use crate::scale::Scale;

/// What a script (or a notebook) asks for: a named preset for some languages, optionally with another step budget,
/// seed, data size, context window or shape.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRequest {
    /// An ablation of Emerging Table 1, `mono` or `multilingual` (see [`crate::train::presets`]).
    pub preset: String,
    /// `en`, `en-fr`, `en-fr-de-ru-zh`, …
    pub langs: String,
    /// Step budget instead of the scale's.
    #[serde(default)]
    pub steps: Option<u64>,
    /// Seed instead of the run's `SEED` (e.g. `SEED + 1` for a second model of the same kind).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Seed of the training text (its sample, split and code-switching) instead of the model's seed: a model with
    /// another `seed` and the same `data_seed` sees the same sentences (Emerging §5.2's en′, "trained on the same data
    /// as en but with different random seed"). Equal to the model's seed, it changes nothing.
    #[serde(default)]
    pub data_seed: Option<u64>,
    /// Training sentences per language instead of the scale's (Liu et al.'s data sizes).
    #[serde(default)]
    pub max_sentences: Option<usize>,
    /// Context window: streams cut into segments of this many tokens instead of the scale's `seq_len`, with the
    /// batch grown so that a step still sees the scale's tokens (`batch · seq_len / window`, rounded) — Liu et
    /// al.'s 20-token context ablation on the same tokens.
    #[serde(default)]
    pub window: Option<usize>,
    /// Name in logs and provenance (default `PRESET-LANGS`, with `-sN` when `seed` is given).
    #[serde(default)]
    pub name: Option<String>,
    /// Changes to the scale's settings for this model (the shapes tried by `emergence`).
    #[serde(default)]
    pub shape: Option<ShapeChange>,
    /// Steps after which a copy of the model is kept ([`crate::train::TrainConfig::snapshot_steps`]); read them
    /// with `train::snapshot(model, step)`.
    #[serde(default)]
    pub snapshots: Option<Vec<u64>>,
}

/// Settings of a scale's [`Pretraining`] that a request may change; absent fields keep the scale's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeChange {
    pub layers: Option<usize>,
    pub heads: Option<usize>,
    pub hidden: Option<usize>,
    /// Vocabulary of a language pair (one language gets half, as in [`crate::train::presets`]).
    pub vocab: Option<usize>,
    pub seq_len: Option<usize>,
    /// Stream segments per step. The validation batches scale with it (`eval_batches · batch` stays the scale's),
    /// so every batch size is validated on the same segments: the validation batcher draws segments from one
    /// seeded permutation whatever the batch size ([`crate::text::stream::StreamBatcher`]).
    pub batch: Option<usize>,
    pub warmup: Option<u64>,
    /// Peak learning rate.
    pub lr: Option<f64>,
    /// Validation (and `last/` checkpoint) interval in steps.
    pub eval_every: Option<u64>,
    /// Dropout of the encoder (embeddings, attention probabilities, block outputs).
    pub dropout: Option<f64>,
    /// Pre-LN blocks ([`crate::model::ModelConfig::pre_ln`]).
    pub pre_ln: Option<bool>,
    /// Share of the tokens selected for the MLM loss ([`Pretraining::mask_prob`]).
    pub mask_prob: Option<f64>,
}

impl ShapeChange {
    /// `sc` with the given fields replaced.
    pub fn apply(&self, mut sc: Pretraining) -> Pretraining {
        let pick = |v: Option<usize>, d: usize| v.unwrap_or(d);
        sc.layers = pick(self.layers, sc.layers);
        sc.heads = pick(self.heads, sc.heads);
        sc.hidden = pick(self.hidden, sc.hidden);
        sc.vocab = pick(self.vocab, sc.vocab);
        sc.seq_len = pick(self.seq_len, sc.seq_len);
        if let Some(batch) = self.batch {
            // (0 is left for the run config's check to refuse.)
            if batch > 0 && batch != sc.batch {
                sc.eval_batches = (sc.eval_batches * sc.batch).div_ceil(batch);
            }
            sc.batch = batch;
        }
        sc.warmup = self.warmup.unwrap_or(sc.warmup);
        sc.peak_lr = self.lr.unwrap_or(sc.peak_lr);
        sc.eval_every = self.eval_every.unwrap_or(sc.eval_every);
        sc.dropout = self.dropout.unwrap_or(sc.dropout);
        sc.pre_ln = self.pre_ln.unwrap_or(sc.pre_ln);
        sc.mask_prob = self.mask_prob.unwrap_or(sc.mask_prob);
        sc
    }
}

impl ModelRequest {
    /// The run config at `scale` with `seed`, trained on `device` (the script's; see [`crate::train::model_cache`] for why
    /// the device is not part of a model's cache key and its precision is).
    pub fn run_config(&self, scale: Scale, seed: u64, compute: &Compute) -> Result<RunConfig> {
        let sc = Pretraining::at(scale);
        let sc = match &self.shape {
            Some(change) => change.apply(sc),
            None => sc,
        };
        let mut cfg = preset_at(&self.preset, &self.langs, &sc)?;
        cfg.train.seed = self.seed.unwrap_or(seed);
        cfg.corpus.seed = self.data_seed.filter(|&d| d != cfg.train.seed);
        cfg.train.device = compute.device_name();
        cfg.train.precision = compute.precision();
        if let Some(steps) = self.steps {
            cfg.train.steps = steps;
            // The scale's snapshots past a shorter budget are dropped (a longer one keeps them all).
            cfg.train.snapshot_steps.retain(|&t| t <= steps);
        }
        if let Some(snapshots) = &self.snapshots {
            let mut steps = snapshots.clone();
            steps.sort_unstable();
            steps.dedup();
            cfg.train.snapshot_steps = steps;
        }
        if let Some(n) = self.max_sentences {
            if n == 0 {
                return Err(crate::error::Error::Invalid("max_sentences must be at least 1".into()));
            }
            cfg.corpus.max_sentences = Some(n);
        }
        if let Some(w) = self.window {
            if w < 4 || w > cfg.train.seq_len {
                return Err(crate::error::Error::Invalid(format!(
                    "window {w}: expected 4 to {} tokens (the scale's stream length)",
                    cfg.train.seq_len
                )));
            }
            let tokens = cfg.train.batch_size * cfg.train.seq_len;
            cfg.train.batch_size = ((tokens as f64 / w as f64).round() as usize).max(1);
            cfg.train.seq_len = w;
        }
        cfg.validate()?;
        cfg.train.validate()?;
        Ok(cfg)
    }

    /// The request for preset `preset` on `langs` with nothing changed (the scale's budget, the run's seed).
    pub fn new(preset: &str, langs: &str) -> Self {
        ModelRequest {
            preset: preset.into(),
            langs: langs.into(),
            steps: None,
            seed: None,
            data_seed: None,
            max_sentences: None,
            window: None,
            name: None,
            shape: None,
            snapshots: None,
        }
    }

    /// The name in logs and provenance: `name`, else `PRESET-LANGS` (with `-sN` when `seed` is given and `-dN`
    /// when `data_seed` is and differs from `seed`, as in [`Self::label`]).
    pub fn name(&self) -> String {
        let seed = self.seed.map(|s| format!("-s{s}")).unwrap_or_default();
        let data = self.data_seed.filter(|&d| Some(d) != self.seed).map(|s| format!("-d{s}")).unwrap_or_default();
        self.name.clone().unwrap_or_else(|| format!("{}-{}{seed}{data}", self.preset, self.langs))
    }

    /// The model cache folder's label at `scale` for the resolved `cfg`: `NAME-SCALE` for a named request, else
    /// `PRESET-LANGS-sSEED-SCALE` (`PRESET-LANGS-sSEED-dDATA-SCALE` when the text's seed differs). It names the
    /// effective seeds, so a model asked for as `seed: SEED + 1` at seed 0 and as the run's own model at seed 1 is one
    /// folder (the key, a hash of the config, agrees too).
    pub fn label(&self, cfg: &RunConfig, scale: Scale) -> String {
        let data = cfg.corpus.seed.map(|d| format!("-d{d}")).unwrap_or_default();
        match &self.name {
            Some(n) => format!("{n}-{scale}"),
            None => format!("{}-{}-s{}{data}-{scale}", self.preset, self.langs, cfg.train.seed),
        }
    }

    /// Where the model cache under `root` keeps (or will keep) this request's model at `scale` and `seed`, trained
    /// on `compute` — the folder a script's `train::model` uses ([`super::model_cache::locate`]; nothing is trained).
    pub fn locate(
        &self,
        scale: Scale,
        seed: u64,
        compute: &Compute,
        catalog: &crate::data::manifest::Catalog,
        root: &std::path::Path,
    ) -> Result<super::model_cache::CachedModel> {
        let cfg = self.run_config(scale, seed, compute)?;
        super::model_cache::locate(&self.label(&cfg, scale), &cfg, catalog, root)
    }
}

/// A scale's pre-training in words, for captions: "4-layer, 128-wide models (4 heads) pre-trained for 1,500 steps of
/// 32 × 64 tokens on up to 100,000 sentences per language".
pub fn describe(p: &Pretraining) -> String {
    describe_parts(
        (p.layers, p.pre_ln, p.hidden, p.heads),
        (p.steps, p.batch, p.seq_len, p.mask_prob),
        Some(p.max_sentences),
    )
}

/// [`describe`] of one run config: the shape, step budget, batch and data cap of that very model, its request's
/// changes included (the multilingual model's three-fold budget at cpu, a `steps` or `shape` change), so that a
/// caption states what ran rather than the scale's presets.
pub fn describe_run(cfg: &RunConfig) -> String {
    let (m, t) = (&cfg.train.model, &cfg.train);
    describe_parts(
        (m.layers, m.pre_ln, m.hidden, m.heads),
        (t.steps, t.batch_size, t.seq_len, t.masking.mask_prob),
        cfg.corpus.max_sentences,
    )
}

fn describe_parts(
    (layers, pre_ln, hidden, heads): (usize, bool, usize, usize),
    (steps, batch, seq_len, mask_prob): (u64, usize, usize, f64),
    max_sentences: Option<usize>,
) -> String {
    let thousands = |n: usize| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let masked = if mask_prob == super::presets::bert_mask_prob() {
        String::new()
    } else {
        format!(", {:.0} % masked", 100.0 * mask_prob)
    };
    let data = match max_sentences {
        Some(n) => format!("on up to {} sentences per language", thousands(n)),
        None => "on every sentence of its corpora".to_string(),
    };
    format!(
        "{layers}-layer{}, {hidden}-wide models ({heads} heads) pre-trained for {} steps of {batch} × {seq_len} \
         tokens{masked} {data}",
        if pre_ln { " pre-LN" } else { "" },
        thousands(steps as usize),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_change_reaches_the_model_and_leaves_the_rest() {
        let plain = ModelRequest::new("default", "en-fr").run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap();
        let m = &plain.train.model;
        assert_eq!((m.dropout, m.attention_dropout, m.pre_ln, m.layers), (0.0, 0.0, true, 4));
        assert_eq!(plain.train.snapshot_steps, [250, 500, 1_500, 3_000, 6_000]);
        assert_eq!(plain.train.masking.mask_prob, 0.4);
        let smoke = ModelRequest::new("default", "en-fr").run_config(Scale::Smoke, 0, &Compute::cpu()).unwrap();
        assert!(!smoke.train.model.to_json().unwrap().contains("pre_ln") && smoke.train.snapshot_steps.is_empty());
        let change: ShapeChange =
            serde_json::from_str(r#"{"layers": 2, "dropout": 0.1, "pre_ln": false, "lr": 0.002, "warmup": 100}"#)
                .unwrap();
        let req = ModelRequest { shape: Some(change), ..ModelRequest::new("default", "en-fr") };
        let cfg = req.run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap();
        let m = &cfg.train.model;
        assert_eq!((m.dropout, m.attention_dropout, m.pre_ln, m.layers), (0.1, 0.1, false, 2));
        assert_eq!((cfg.train.peak_lr, cfg.train.warmup_steps), (0.002, 100));
        assert_eq!((m.hidden, cfg.train.batch_size, cfg.train.steps), (128, 32, 6_000), "the rest is the scale's");
        let sc = req.shape.as_ref().unwrap().apply(Pretraining::at(Scale::Cpu));
        assert!(describe(&sc).starts_with("2-layer, 128-wide models (4 heads)"), "{}", describe(&sc));
        assert!(describe(&Pretraining::at(Scale::Cpu)).starts_with("4-layer pre-LN, 128-wide"));
        // A shorter budget drops the snapshots past it; a longer one keeps them all.
        let short = ModelRequest { steps: Some(1_500), ..ModelRequest::new("default", "en-fr") };
        let cfg = short.run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap();
        assert_eq!(cfg.train.snapshot_steps, [250, 500, 1_500]);
        let long = ModelRequest { steps: Some(30_000), ..ModelRequest::new("multilingual", "en-fr-de-ru-zh") };
        assert_eq!(long.run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap().train.snapshot_steps.len(), 5);
        // Another batch size is validated on the scale's validation segments: 10 batches of 32 become 80 of 4.
        let small: ShapeChange = serde_json::from_str(r#"{"batch": 4}"#).unwrap();
        let cfg = ModelRequest { shape: Some(small), ..ModelRequest::new("mono", "en") }
            .run_config(Scale::Cpu, 0, &Compute::cpu())
            .unwrap();
        assert_eq!((cfg.train.batch_size, cfg.train.eval_batches), (4, 80));
        assert_eq!(cfg.train.eval_batches * cfg.train.batch_size, plain.train.eval_batches * plain.train.batch_size);
        let masked: ShapeChange = serde_json::from_str(r#"{"mask_prob": 0.3}"#).unwrap();
        let cfg = ModelRequest { shape: Some(masked), ..ModelRequest::new("mono", "en") }
            .run_config(Scale::Cpu, 0, &Compute::cpu())
            .unwrap();
        assert_eq!((cfg.train.masking.mask_prob, cfg.train.masking.replace_mask), (0.3, 0.8));
        let sc =
            serde_json::from_str::<ShapeChange>(r#"{"mask_prob": 0.3}"#).unwrap().apply(Pretraining::at(Scale::Cpu));
        assert!(describe(&sc).contains("64 tokens, 30 % masked on up to"), "{}", describe(&sc));
        assert!(!describe(&Pretraining::at(Scale::Smoke)).contains("masked"), "BERT's 15 % is not named");
        let over: ShapeChange = serde_json::from_str(r#"{"mask_prob": 1.5}"#).unwrap();
        let req = ModelRequest { shape: Some(over), ..ModelRequest::new("mono", "en") };
        assert!(req.run_config(Scale::Cpu, 0, &Compute::cpu()).is_err(), "a share above 1 is refused");
        let bad = serde_json::from_str::<ShapeChange>(r#"{"pre_LN": true}"#).unwrap_err().to_string();
        assert!(bad.contains("unknown field `pre_LN`"), "{bad}");
    }

    #[test]
    fn a_run_is_described_by_its_own_config_not_the_scale_presets() {
        // Issue 69: Liu's captions said the scale's 1,500 steps for a multilingual model trained three times as long.
        let plain = ModelRequest::new("default", "en-fr").run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap();
        assert_eq!(describe_run(&plain), describe(&Pretraining::at(Scale::Cpu)));
        let long = ModelRequest { steps: Some(18_000), ..ModelRequest::new("multilingual", "en-fr-de-ru-zh") };
        let text = describe_run(&long.run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap());
        assert!(text.contains("pre-trained for 18,000 steps of 32 × 64 tokens"), "{text}");
        let narrow: ShapeChange = serde_json::from_str(r#"{"layers": 2, "pre_ln": false}"#).unwrap();
        let req = ModelRequest { shape: Some(narrow), ..ModelRequest::new("mono", "en") };
        let text = describe_run(&req.run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap());
        assert!(text.starts_with("2-layer, 128-wide models (4 heads)"), "{text}");
    }
}
