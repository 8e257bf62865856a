//! The MLM pre-training loop of Wu, Conneau et al. (2020, §3), after XLM (Conneau & Lample 2019).
//!
//! Step `t = 1, 2, …`:
//! 1. draw a language with `p_i ∝ (n_i / Σ n)^α` (`n_i` = the language's training-stream length in tokens,
//!    `α = 0.7`; [`LanguageSampler`]);
//! 2. take that language's next batch of `seq_len`-token stream segments ([`StreamBatcher`]);
//! 3. apply BERT masking (15%, 80/10/10; [`mask_batch`]);
//! 4. cross-entropy on the selected positions (dropout on), backward, clip the global gradient norm to
//!    `clip_norm`, and one [`Adam`] update with `lr(t)` from the warm-up + inverse square-root [`Schedule`]
//!    (one [`TrainStep`], on `device` in `precision` — bf16 autocast on CUDA by default, fp32 on the CPU).
//!
//! Validation perplexity of a language is `exp(Σ_b n_b·L_b / Σ_b n_b)` — the exponential of the mean masked-token
//! cross-entropy over `eval_batches` batches masked BERT's way (15 %, whatever the training's share) (`L_b` the batch's mean loss, `n_b` its number of selected
//! positions). The validation batches and their masks are drawn once from fixed seeds, so every evaluation
//! sees the same inputs. As in the study, the best checkpoint (`out_dir/best/`) is the one with the lowest
//! validation perplexity of `select_lang` (English); `out_dir/last/` is written every `checkpoint_every`
//! steps and at the end. `metrics.jsonl` gets one JSON object per step (`step`, `lang`, `loss`, `lr`,
//! `tokens_per_s`, and `valid_ppl` — a map language → perplexity — at evaluation steps).
//!
//! **Determinism.** `tch::manual_seed(seed)` precedes model construction. The language, the masking and the
//! dropout of step `t` come from generators seeded with `mix(seed, purpose, t)`, so no generator state has to be
//! carried: the same seed gives the same loss curve on the CPU, and resuming from `out_dir/last/` (stream
//! positions, weights, Adam moments and step) continues exactly as the uninterrupted run would have.
//! libtorch's generator is process-global: [`train`] holds [`torch_rng_lock`] while it runs, and code on other
//! threads that draws from libtorch's generator meanwhile (without that lock) breaks bit-reproducibility.
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tch::nn::VarStore;

use crate::device::{Compute, Precision};
use crate::error::{Error, Result};
use crate::model::{MlmModel, ModelConfig};
use crate::nn::schedule::{Adam, Schedule};
use crate::text::codeswitch::SplitMix64;
use crate::text::masking::{mask_batch, MaskedBatch, MaskingConfig};
use crate::text::sampling::{sampling_probs, LanguageSampler};
use crate::text::stream::{StreamBatcher, TokenStream};
use crate::text::tokenize::{CrossTokenizer, Special, SPECIAL_TOKENS};
use crate::train::checkpoint::{self, TrainerState, FORMAT_VERSION};
use crate::train::step::{eval_loss, TrainStep};

/// Everything that determines a pre-training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    pub model: ModelConfig,
    /// Tokens per stream segment (256 in the study).
    pub seq_len: usize,
    /// Segments per batch.
    pub batch_size: usize,
    /// Total optimiser steps.
    pub steps: u64,
    /// Peak learning rate (1e-4 in the study).
    pub peak_lr: f64,
    pub warmup_steps: u64,
    /// Maximum global gradient norm.
    pub clip_norm: f64,
    pub masking: MaskingConfig,
    /// Language-sampling exponent (0.7).
    pub alpha: f64,
    pub seed: u64,
    /// Evaluate every this many steps (0: only at the end).
    pub eval_every: u64,
    /// Validation batches per language.
    pub eval_batches: usize,
    /// Write `last/` every this many steps (0: only at the end).
    pub checkpoint_every: u64,
    /// Language whose validation perplexity selects `best/`.
    pub select_lang: String,
    /// `auto` (CUDA when available, else the CPU), `cpu`, `cuda` or `cuda:N`.
    pub device: String,
    /// `auto` (bf16 autocast on CUDA, fp32 on the CPU), `fp32` or `bf16` (CUDA only); see [`crate::train::step`].
    pub precision: Precision,
    /// Steps after which a copy of the model is kept in `out_dir/step-N/` (and validation perplexity logged), for
    /// curves over the training budget. The learning-rate schedule does not depend on `steps`, so `step-N/` holds
    /// the weights that a run of `N` steps ends with. Omitted when empty, so runs without snapshots keep their
    /// cache keys.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshot_steps: Vec<u64>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            model: ModelConfig::default(),
            seq_len: 256,
            batch_size: 32,
            steps: 100_000,
            peak_lr: 1e-4,
            warmup_steps: 10_000,
            clip_norm: 1.0,
            masking: MaskingConfig::default(),
            alpha: 0.7,
            seed: 0,
            eval_every: 5_000,
            eval_batches: 20,
            checkpoint_every: 5_000,
            select_lang: "en".into(),
            device: "auto".into(),
            precision: Precision::Auto,
            snapshot_steps: Vec::new(),
        }
    }
}

impl TrainConfig {
    /// The learning-rate schedule.
    pub fn schedule(&self) -> Schedule {
        Schedule { peak_lr: self.peak_lr, warmup_steps: self.warmup_steps }
    }

    /// The resolved device and precision (errors for an unknown or absent device, or bf16 on the CPU).
    pub fn compute(&self) -> Result<Compute> {
        Compute::resolve(&self.device, self.precision).map_err(|e| Error::Invalid(format!("train config: {e}")))
    }

    /// Checks the fields the trainer relies on (including that the device exists).
    pub fn validate(&self) -> Result<()> {
        self.model.validate()?;
        self.compute()?;
        self.masking.validate()?;
        if self.seq_len > self.model.max_positions {
            return Err(Error::Invalid(format!(
                "train config: seq_len {} exceeds model.max_positions {}",
                self.seq_len, self.model.max_positions
            )));
        }
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(self.peak_lr) || !positive(self.clip_norm) {
            return Err(Error::Invalid("train config: peak_lr and clip_norm must be positive".into()));
        }
        if self.eval_batches == 0 {
            return Err(Error::Invalid("train config: eval_batches must be at least 1".into()));
        }
        if let Some(bad) = self.snapshot_steps.iter().find(|&&s| s == 0 || s > self.steps) {
            return Err(Error::Invalid(format!(
                "train config: snapshot step {bad} is outside 1..={} (the run's steps)",
                self.steps
            )));
        }
        Ok(())
    }

    /// The folder of the snapshot after `step` in a run folder (see [`TrainConfig::snapshot_steps`]).
    pub fn snapshot_dir(out_dir: &Path, step: u64) -> std::path::PathBuf {
        out_dir.join(format!("step-{step}"))
    }
}

/// What masking needs from the tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub mask_id: u32,
    /// Never selected for masking.
    pub special_ids: Vec<u32>,
    /// Per language, the ids random replacements are drawn from.
    pub random_pools: BTreeMap<String, Vec<u32>>,
}

impl TokenInfo {
    /// From a tokenizer: with `per_language_pools`, each language replaces with the ids of its own training text
    /// (the Sep models of Wu et al. 2020, §4.3: "we only sample random words within one language"); otherwise
    /// with every non-special id.
    pub fn from_tokenizer(tok: &CrossTokenizer, per_language_pools: bool) -> Self {
        let special_ids: Vec<u32> = (0..SPECIAL_TOKENS.len() as u32).collect();
        let all: Vec<u32> = (SPECIAL_TOKENS.len() as u32..tok.vocab_size() as u32).collect();
        let random_pools = tok
            .langs()
            .iter()
            .map(|l| (l.clone(), if per_language_pools { tok.lang_token_ids(l) } else { all.clone() }))
            .collect();
        TokenInfo { mask_id: tok.special_id(Special::Mask), special_ids, random_pools }
    }
}

/// The outcome of [`train`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainSummary {
    /// The step the run ended at.
    pub final_step: u64,
    /// The step this call started from (0, or the resumed step).
    pub start_step: u64,
    /// `(step, lang, loss)` of every step taken in this call.
    pub losses: Vec<(u64, String, f64)>,
    /// The last validation perplexity per language.
    pub valid_ppl: BTreeMap<String, f64>,
    pub best_valid_ppl: Option<f64>,
    pub best_step: Option<u64>,
    /// Per language, the stream position at the end.
    pub positions: BTreeMap<String, crate::text::stream::StreamPosition>,
    /// Updates of this call that ran on Adam's flat buffers ([`crate::nn::schedule::Adam::flat_steps`]; the others went
    /// parameter by parameter while some parameter had no gradient yet).
    pub adam_flat_steps: u64,
}

const SAMPLER: u64 = 1;
const MASKING: u64 = 2;
const DROPOUT: u64 = 3;
const SHUFFLE: u64 = 4;
const VALID: u64 = 5;

pub use crate::device::torch_rng_lock;

/// A seed from `(seed, purpose, index)`: two SplitMix64 finalisations, so nearby inputs give unrelated seeds.
fn mix(seed: u64, purpose: u64, index: u64) -> u64 {
    let a = SplitMix64::new(seed ^ purpose.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64();
    SplitMix64::new(a ^ index).next_u64()
}

/// FNV-1a of the language code.
fn lang_index(lang: &str) -> u64 {
    crate::text::corpus::fnv1a(0, lang.as_bytes())
}

/// Validation perplexity over prepared batches: `exp` of the mean masked-token loss.
///
/// # Shapes
/// Each batch's tensors are `[batch, seq]`.
fn perplexity(model: &MlmModel, batches: &[MaskedBatch], lang: &str, compute: &Compute) -> Result<f64> {
    let (mut total, mut count) = (0.0f64, 0usize);
    for b in batches {
        let n = b.num_selected();
        if n == 0 {
            continue;
        }
        total += eval_loss(model, b, lang, compute)? * n as f64;
        count += n;
    }
    if count == 0 {
        return Err(Error::Invalid(format!("validation for '{lang}': no maskable tokens")));
    }
    Ok((total / count as f64).exp())
}

fn append_jsonl(path: &Path, value: &serde_json::Value) -> Result<()> {
    let mut f = OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
    writeln!(f, "{value}").map_err(|e| Error::io(path, e))
}

/// The random-replacement pool of `lang` (the ids masking may put in at random).
fn random_pool<'a>(tok_info: &'a TokenInfo, lang: &str) -> Result<&'a [u32]> {
    tok_info
        .random_pools
        .get(lang)
        .map(|v| v.as_slice())
        .ok_or_else(|| Error::Invalid(format!("train: no random-replacement pool for language '{lang}'")))
}

/// One batcher per training stream, each shuffled from `mix(seed, SHUFFLE, language)`.
fn training_batchers(cfg: &TrainConfig, streams: Vec<TokenStream>) -> Result<BTreeMap<String, StreamBatcher>> {
    let mut batchers = BTreeMap::new();
    for s in streams {
        let seed = mix(cfg.seed, SHUFFLE, lang_index(&s.lang));
        let lang = s.lang.clone();
        batchers.insert(lang, StreamBatcher::new(s, cfg.seq_len, cfg.batch_size, seed)?);
    }
    Ok(batchers)
}

/// Share of tokens the validation batches select, whatever the training's `mask_prob`: BERT's, so that perplexities
/// of runs trained with other shares are measured on the same task.
pub const VALID_MASK_PROB: f64 = 0.15;

/// The fixed validation batches of every language, masked once from seeds of `VALID` (see the module docs), with
/// [`VALID_MASK_PROB`] of the tokens selected.
fn validation_batches(
    cfg: &TrainConfig,
    streams: Vec<TokenStream>,
    tok_info: &TokenInfo,
) -> Result<BTreeMap<String, Vec<MaskedBatch>>> {
    let mut valid = BTreeMap::new();
    for s in streams {
        let lang = s.lang.clone();
        let mut b = StreamBatcher::new(s, cfg.seq_len, cfg.batch_size, mix(cfg.seed, VALID, lang_index(&lang)))?;
        let n = cfg.eval_batches.min(b.batches_per_epoch());
        let mut rng = SplitMix64::new(mix(cfg.seed, VALID, lang_index(&lang) ^ 1));
        let p = random_pool(tok_info, &lang)?;
        let masking = MaskingConfig { mask_prob: VALID_MASK_PROB, ..cfg.masking };
        let list = (0..n)
            .map(|_| mask_batch(&b.next_batch(), &masking, tok_info.mask_id, p, &tok_info.special_ids, &mut rng))
            .collect();
        valid.insert(lang, list);
    }
    Ok(valid)
}

/// Validation perplexity of every language.
fn evaluate(
    model: &MlmModel,
    valid: &BTreeMap<String, Vec<MaskedBatch>>,
    compute: &Compute,
) -> Result<BTreeMap<String, f64>> {
    valid.iter().map(|(l, batches)| Ok((l.clone(), perplexity(model, batches, l, compute)?))).collect()
}

/// Loads `last_dir` into `vs` and `adam`, checks that it was written by this config, and moves every batcher to
/// its saved stream position; returns the saved state.
fn resume_from(
    last_dir: &Path,
    cfg: &TrainConfig,
    fresh: &TrainerState,
    vs: &mut VarStore,
    adam: &mut Adam,
    batchers: &mut BTreeMap<String, StreamBatcher>,
) -> Result<TrainerState> {
    let state = checkpoint::load(last_dir, vs, &cfg.model, adam)?;
    let state_file = last_dir.join(checkpoint::STATE_FILE);
    if state.rng_seeds != fresh.rng_seeds || state.schedule != fresh.schedule {
        return Err(Error::format_file(&state_file, "seed or schedule differs from the train config"));
    }
    for (lang, b) in batchers.iter_mut() {
        let pos = state
            .stream_positions
            .get(lang)
            .ok_or_else(|| Error::format_file(&state_file, format!("no stream position for language '{lang}'")))?;
        b.restore(*pos)?;
    }
    Ok(state)
}

/// The state of a run at step 0.
fn fresh_state(cfg: &TrainConfig, probs: &[(String, f64)]) -> TrainerState {
    let rng_seeds = [("sampler", SAMPLER), ("masking", MASKING), ("dropout", DROPOUT)]
        .into_iter()
        .map(|(name, purpose)| (name.to_string(), mix(cfg.seed, purpose, 0)))
        .collect();
    TrainerState {
        format_version: FORMAT_VERSION,
        step: 0,
        adam_step: 0,
        best_valid_ppl: None,
        best_step: None,
        stream_positions: BTreeMap::new(),
        rng_seeds,
        sampler_probs: probs.to_vec(),
        schedule: cfg.schedule(),
        model_sha256: String::new(),
        optimizer_sha256: String::new(),
    }
}

/// Pre-train (or, with `resume`, continue from `out_dir/last/`) an MLM; see the module docs.
///
/// `train_streams` and `valid_streams` hold one stream per language (the same languages); the model is
/// built from `cfg.model` on `cfg.device` (`auto`: CUDA when available, else the CPU) and each step is a
/// [`TrainStep`] in `cfg.precision`.
pub fn train(
    cfg: &TrainConfig,
    train_streams: Vec<TokenStream>,
    valid_streams: Vec<TokenStream>,
    tok_info: &TokenInfo,
    out_dir: &Path,
    resume: bool,
) -> Result<TrainSummary> {
    cfg.validate()?;
    let _rng_guard = torch_rng_lock();
    let compute = cfg.compute()?;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let counts: Vec<(String, u64)> = train_streams.iter().map(|s| (s.lang.clone(), s.ids.len() as u64)).collect();
    let probs = sampling_probs(&counts, cfg.alpha)?;
    if !valid_streams.iter().any(|s| s.lang == cfg.select_lang) {
        return Err(Error::Invalid(format!("train: no validation stream for select_lang '{}'", cfg.select_lang)));
    }
    let mut batchers = training_batchers(cfg, train_streams)?;
    let valid = validation_batches(cfg, valid_streams, tok_info)?;

    tch::manual_seed(cfg.seed as i64);
    let mut vs = VarStore::new(compute.device);
    let model = MlmModel::new(&vs.root(), &cfg.model)?;
    let mut adam = Adam::new(&vs);
    let step = TrainStep { compute, clip_norm: cfg.clip_norm };
    let schedule = cfg.schedule();
    let mut state = fresh_state(cfg, &probs);
    let metrics = out_dir.join("metrics.jsonl");
    let last_dir = out_dir.join("last");
    if resume {
        state = resume_from(&last_dir, cfg, &state, &mut vs, &mut adam, &mut batchers)?;
        truncate_metrics(&metrics, state.step)?;
    } else {
        let _ = std::fs::remove_file(&metrics);
    }
    let start_step = state.step;

    let pb = crate::progress::bar(cfg.steps, "{bar:30} {pos}/{len} [{elapsed_precise}<{eta}] {msg}");
    pb.set_position(start_step);
    let mut summary = TrainSummary {
        final_step: start_step,
        start_step,
        losses: Vec::new(),
        valid_ppl: BTreeMap::new(),
        best_valid_ppl: state.best_valid_ppl,
        best_step: state.best_step,
        positions: BTreeMap::new(),
        adam_flat_steps: 0,
    };
    let tokens_per_step = (cfg.batch_size * cfg.seq_len) as f64;
    while state.step < cfg.steps {
        let t = state.step + 1;
        let started = Instant::now();
        let lang = LanguageSampler::from_probs(&probs, mix(cfg.seed, SAMPLER, t))?.next().to_string();
        let batcher =
            batchers.get_mut(&lang).ok_or_else(|| Error::Invalid(format!("train: no training stream for '{lang}'")))?;
        let batch = batcher.next_batch();
        let mut rng = SplitMix64::new(mix(cfg.seed, MASKING, t));
        let pool = random_pool(tok_info, &lang)?;
        let masked = mask_batch(&batch, &cfg.masking, tok_info.mask_id, pool, &tok_info.special_ids, &mut rng);
        tch::manual_seed(mix(cfg.seed, DROPOUT, t) as i64);
        let lr = schedule.lr_at(t);
        let loss_v = step.run(&model, &mut adam, &masked, &lang, lr)?.loss;
        if !loss_v.is_finite() {
            return Err(Error::Invalid(format!("train: loss became {loss_v} at step {t} ({lang})")));
        }
        state.step = t;
        let tps = tokens_per_step / started.elapsed().as_secs_f64().max(1e-9);
        summary.losses.push((t, lang.clone(), loss_v));
        let mut record = serde_json::json!({"step": t, "lang": lang, "loss": loss_v, "lr": lr, "tokens_per_s": tps});
        let snapshot = cfg.snapshot_steps.contains(&t);
        let eval_now = (cfg.eval_every > 0 && t.is_multiple_of(cfg.eval_every)) || t == cfg.steps || snapshot;
        let mut improved = false;
        if eval_now {
            let ppl = evaluate(&model, &valid, &compute)?;
            let sel = ppl[&cfg.select_lang];
            if state.best_valid_ppl.is_none_or(|b| sel < b) {
                state.best_valid_ppl = Some(sel);
                state.best_step = Some(t);
                improved = true;
            }
            record["valid_ppl"] = serde_json::to_value(&ppl).map_err(|e| Error::Invalid(e.to_string()))?;
            summary.valid_ppl = ppl;
        }
        append_jsonl(&metrics, &record)?;
        let periodic = (cfg.checkpoint_every > 0 && t.is_multiple_of(cfg.checkpoint_every)) || t == cfg.steps;
        if improved || periodic || snapshot {
            state.stream_positions = batchers.iter().map(|(l, b)| (l.clone(), b.position())).collect();
            let save = |dir: &Path| checkpoint::save(dir, &vs, &cfg.model, &adam, &state);
            if snapshot {
                save(&TrainConfig::snapshot_dir(out_dir, t))?;
            }
            if improved {
                save(&out_dir.join("best"))?;
            }
            if periodic {
                save(&last_dir)?;
            }
        }
        pb.set_position(t);
        pb.set_message(format!("{lang} loss {loss_v:.3} ppl {:.1} {tps:.0} tok/s", loss_v.exp()));
    }
    pb.finish_and_clear();
    summary.final_step = state.step;
    summary.best_valid_ppl = state.best_valid_ppl;
    summary.best_step = state.best_step;
    summary.positions = batchers.into_iter().map(|(l, b)| (l, b.position())).collect();
    summary.adam_flat_steps = adam.flat_steps();
    Ok(summary)
}

/// Drops the lines of `metrics.jsonl` logged after `step` (the steps a killed run took after its last checkpoint,
/// which the resumed run takes again), so the log has each step once.
fn truncate_metrics(path: &Path, step: u64) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
    let keep: Vec<&str> = text
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v.get("step").and_then(serde_json::Value::as_u64))
                .is_some_and(|s| s <= step)
        })
        .collect();
    if keep.len() == text.lines().count() {
        return Ok(());
    }
    let mut body = keep.join("\n");
    if !body.is_empty() {
        body.push('\n');
    }
    crate::atomic_file::write_atomic(path, body)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::text::stream::encode_corpus;
    use crate::text::tokenize::{AnchorScheme, TokenizerSpec};

    /// A tiny model config (1 layer, width 32) for `vocab` ids.
    pub(crate) fn tiny_model(vocab: usize) -> ModelConfig {
        let mut m = ModelConfig::at(crate::Scale::Smoke, vocab, ["en", "fr"]);
        m.hidden = 32;
        m.layers = 1;
        m.heads = 2;
        m.ffn = Some(64);
        m.max_positions = 16;
        m
    }

    struct Setup {
        dir: tempfile::TempDir,
        cfg: TrainConfig,
        train: Vec<TokenStream>,
        valid: Vec<TokenStream>,
        info: TokenInfo,
    }

    fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let en = ["the cat sat on the mat", "the dog ate the bone", "a bird sang in the tree"];
        let fr = ["le chat est sur le tapis", "le chien mange un os", "un oiseau chante dans l arbre"];
        let mut files = Vec::new();
        for (lang, lines) in [("en", en), ("fr", fr)] {
            let path = dir.path().join(format!("{lang}.txt"));
            let text: String = (0..60).map(|i| format!("{}\n", lines[i % 3])).collect();
            std::fs::write(&path, text).unwrap();
            files.push((lang.to_string(), path));
        }
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 80), &files).unwrap();
        let stream = |i: usize, lines: usize| encode_corpus(&tok, &files[i].0, &files[i].1, Some(lines)).unwrap();
        let train = vec![stream(0, 60), stream(1, 60)];
        let valid = vec![stream(0, 12), stream(1, 12)];
        let cfg = TrainConfig {
            model: tiny_model(tok.vocab_size()),
            seq_len: 16,
            batch_size: 4,
            steps: 6,
            peak_lr: 1e-3,
            warmup_steps: 3,
            eval_every: 3,
            eval_batches: 2,
            checkpoint_every: 0,
            seed: 7,
            ..TrainConfig::default()
        };
        let info = TokenInfo::from_tokenizer(&tok, false);
        Setup { dir, cfg, train, valid, info }
    }

    fn run(s: &Setup, cfg: &TrainConfig, sub: &str, resume: bool) -> TrainSummary {
        train(cfg, s.train.clone(), s.valid.clone(), &s.info, &s.dir.path().join(sub), resume).unwrap()
    }

    #[test]
    fn same_seed_same_loss_curve_and_outputs() {
        let s = setup();
        let a = run(&s, &s.cfg, "a", false);
        let b = run(&s, &s.cfg, "b", false);
        assert_eq!(a.losses.len(), 6);
        assert_eq!(a.losses, b.losses);
        assert_eq!(a.valid_ppl, b.valid_ppl);
        let out = s.dir.path().join("a");
        for sub in ["last", "best"] {
            assert!(out.join(sub).join("model.safetensors").is_file(), "{sub}");
        }
        let log = std::fs::read_to_string(out.join("metrics.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[2]["valid_ppl"]["en"].as_f64().unwrap() > 1.0);
        assert!(lines[0].get("valid_ppl").is_none());
        let mut other = s.cfg.clone();
        other.seed = 8;
        assert_ne!(run(&s, &other, "c", false).losses, a.losses);
    }

    #[test]
    fn snapshots_hold_the_weights_a_shorter_run_ends_with() {
        let s = setup();
        let mut cfg = s.cfg.clone();
        cfg.snapshot_steps = vec![2, 5];
        let long = run(&s, &cfg, "long", false);
        let mut short = s.cfg.clone();
        short.steps = 2;
        let short_run = run(&s, &short, "short", false);
        assert_eq!(short_run.losses[..], long.losses[..2]);
        let weights = |dir: std::path::PathBuf| {
            let t = tch::Tensor::read_safetensors(dir.join("model.safetensors")).unwrap();
            t.into_iter().collect::<BTreeMap<_, _>>()
        };
        let (snap, end) = (weights(s.dir.path().join("long/step-2")), weights(s.dir.path().join("short/last")));
        assert_eq!(snap.keys().collect::<Vec<_>>(), end.keys().collect::<Vec<_>>());
        for (name, t) in &snap {
            let gap = (t - &end[name]).abs().max().double_value(&[]);
            assert!(gap < 1e-5, "{name}: {gap}");
        }
        assert!(s.dir.path().join("long/step-5/model.safetensors").is_file());
        // Snapshot steps are evaluation steps.
        let log = std::fs::read_to_string(s.dir.path().join("long/metrics.jsonl")).unwrap();
        let evals: Vec<u64> = log
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v.get("valid_ppl").is_some())
            .map(|v| v["step"].as_u64().unwrap())
            .collect();
        assert_eq!(evals, [2, 3, 5, 6]);
        cfg.snapshot_steps = vec![7];
        assert!(cfg.validate().unwrap_err().to_string().contains("snapshot step 7 is outside 1..=6"));
    }

    #[test]
    fn resume_continues_exactly() {
        let s = setup();
        let mut cfg = s.cfg.clone();
        cfg.steps = 8;
        let full = run(&s, &cfg, "full", false);
        let mut first = cfg.clone();
        first.steps = 4;
        let part1 = run(&s, &first, "split", false);
        assert_eq!(part1.final_step, 4);
        let part2 = run(&s, &cfg, "split", true);
        assert_eq!(part2.start_step, 4);
        assert_eq!(part2.final_step, 8);
        assert_eq!(part2.positions, full.positions, "same batches consumed");
        assert_eq!(part1.losses[..], full.losses[..4]);
        // Adam moments are restored, so the losses after resume match (they are in fact bit-identical on CPU).
        for (r, f) in part2.losses.iter().zip(&full.losses[4..]) {
            assert_eq!((r.0, &r.1), (f.0, &f.1));
            assert!((r.2 - f.2).abs() < 1e-4, "{r:?} vs {f:?}");
            assert_eq!(r.2.to_bits(), f.2.to_bits(), "bit-identical on CPU: {r:?} vs {f:?}");
        }
        let log = std::fs::read_to_string(s.dir.path().join("split").join("metrics.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 8, "the metrics log is appended on resume");
    }

    #[test]
    fn resume_drops_metrics_logged_after_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("metrics.jsonl");
        let lines: Vec<String> = (1..=6).map(|s| format!("{{\"step\":{s},\"loss\":1.0}}")).collect();
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        truncate_metrics(&p, 4).unwrap();
        let kept = std::fs::read_to_string(&p).unwrap();
        assert_eq!(kept, lines[..4].join("\n") + "\n");
        truncate_metrics(&p, 4).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), kept);
        truncate_metrics(&dir.path().join("absent.jsonl"), 1).unwrap();
    }

    #[test]
    fn loss_decreases_on_repetitive_corpus() {
        let s = setup();
        let mut cfg = s.cfg.clone();
        cfg.steps = 30;
        cfg.peak_lr = 3e-3;
        cfg.warmup_steps = 5;
        cfg.eval_every = 0;
        let r = run(&s, &cfg, "learn", false);
        let mean = |xs: &[(u64, String, f64)]| xs.iter().map(|x| x.2).sum::<f64>() / xs.len() as f64;
        let (early, late) = (mean(&r.losses[..5]), mean(&r.losses[25..]));
        assert!(late < early - 0.5, "early {early}, late {late}");
        assert_eq!(r.adam_flat_steps, 30, "a shared model: every update on the flat buffers");
        // Separate embeddings: until both languages have had a batch, some parameter has no gradient.
        cfg.model.sharing.sep_emb = true;
        let r = run(&s, &cfg, "learn-sep", false);
        let first_fr = r.losses.iter().position(|l| l.1 == "fr").unwrap() as u64;
        let first_en = r.losses.iter().position(|l| l.1 == "en").unwrap() as u64;
        assert_eq!(r.adam_flat_steps, 30 - first_fr.max(first_en), "{:?}", r.losses);
    }

    #[test]
    fn config_rejects_unknown_fields_and_bad_values() {
        assert!(serde_json::from_str::<TrainConfig>(r#"{"seq_len": 16, "stpes": 3}"#).is_err());
        let c: TrainConfig = serde_json::from_str(r#"{"seq_len": 128}"#).unwrap();
        assert_eq!((c.seq_len, c.alpha, c.select_lang.as_str()), (128, 0.7, "en"));
        let bad = TrainConfig { seq_len: 1024, ..TrainConfig::default() };
        assert!(bad.validate().is_err());
        assert_eq!((c.device.as_str(), c.precision), ("auto", Precision::Auto));
        let c: TrainConfig = serde_json::from_str(r#"{"device": "cpu", "precision": "fp32"}"#).unwrap();
        assert_eq!(c.compute().unwrap(), Compute::cpu());
        assert!(serde_json::from_str::<TrainConfig>(r#"{"precision": "fp16"}"#).is_err());
        let bf16_cpu = TrainConfig { device: "cpu".into(), precision: Precision::Bf16, ..TrainConfig::default() };
        assert!(bf16_cpu.validate().unwrap_err().to_string().contains("needs a CUDA device"));
        let bad_dev = TrainConfig { device: "tpu".into(), ..TrainConfig::default() };
        assert!(bad_dev.validate().unwrap_err().to_string().contains("unknown device"));
    }
}
