//! Task fine-tuning machinery shared by the zero-shot transfer tasks (NLI now; NER and parsing reuse it): which
//! parameters train, the optimiser and its learning-rate schedule, seeded data order and dropout, the best-state
//! snapshot and a summary of the loss curve.
//!
//! **Freezing** (Wu, Conneau et al. 2020, §3–4): a task fine-tunes the shared encoder (`bert.…`) and its own head.
//! Frozen are every *language-specific* parameter — any name with a `.lang.` segment, i.e. the per-language
//! copies of the *Sep Emb* / *Sep L1-k* ablations, so that the English task data cannot pull the English copies
//! away from the other languages' — the MLM head (`cls.…`, unused by the task), and optionally the embeddings
//! (`bert.embeddings.…`) and the bottom `k` layers (`bert.encoder.layer.{i}.…`, `i < k`).
//!
//! **Optimiser.** The project's [`Adam`] (PyTorch's update rule, no weight decay) over the trainable parameters,
//! with the gradient clipped to a global L2 norm `c` before each update. Learning rate of 1-based step `t` of `T`:
//! ```text
//! fixed:         lr(t) = η                                   (Wu et al. fine-tune XNLI at a fixed rate)
//! linear_decay:  lr(t) = η · t / w              for t ≤ w,   w = round(warmup_fraction · T)
//!                lr(t) = η · (T − t + 1) / (T − w)   for t > w      (BERT's fine-tuning schedule, never 0)
//! ```
//! With a head rate η_h ([`HeadRate`], a task's `head_lr`) the head's parameters follow the same schedule scaled by
//! η_h / η (PyTorch's parameter groups; UDify trains its heads at 1e-3 over BERT at 5e-5): a head that starts from
//! scratch can learn within a few hundred steps while the pretrained encoder under it moves at a fine-tuning rate.
//! Only the head's own variables take it: a stacked backbone's fresh layers (`stack.…`) train at η.
//!
//! **Determinism.** Epoch `e` visits the training examples in a Fisher–Yates order drawn from
//! `mix(seed, SHUFFLE, e)`; the dropout of step `t` draws from libtorch's generator seeded with
//! `mix(seed, DROPOUT, t)` (`mix` = two SplitMix64 finalisations, as the pre-training loop does), so one seed fixes
//! the whole run on the CPU. Callers hold [`crate::device::torch_rng_lock`] while training.
use serde::{Deserialize, Serialize};
use tch::nn::VarStore;
use tch::Tensor;

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::nn::schedule::Adam;
use crate::text::codeswitch::SplitMix64;

/// Purposes of the derived seeds (see [`mix`]).
pub const SHUFFLE: u64 = 11;
/// Dropout of a step.
pub const DROPOUT: u64 = 12;
/// Initialisation of a task head.
pub const HEAD_INIT: u64 = 13;
/// Train / dev split of a task's data.
pub const SPLIT: u64 = 14;

/// A seed from `(seed, purpose, index)`: two SplitMix64 finalisations, so nearby inputs give unrelated seeds.
pub fn mix(seed: u64, purpose: u64, index: u64) -> u64 {
    let a = SplitMix64::new(seed ^ purpose.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64();
    SplitMix64::new(a ^ index).next_u64()
}

/// A seeded permutation of `0..n` (Fisher–Yates).
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// The order in which epoch `epoch` (0-based) visits `n` training examples.
pub fn epoch_order(n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    permutation(n, mix(seed, SHUFFLE, epoch as u64))
}

/// Which shared parameters stay fixed besides the language-specific ones (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FreezePlan {
    /// Freeze `bert.embeddings.…` (word, position, token-type embeddings and their LayerNorm).
    pub embeddings: bool,
    /// Freeze the bottom `layers` transformer layers.
    pub layers: usize,
}

/// What [`apply_freeze`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreezeReport {
    pub trainable_tensors: usize,
    pub trainable_params: usize,
    pub frozen_tensors: usize,
    pub frozen_params: usize,
    /// Frozen because they are per language (`.lang.` in the name).
    pub language_specific_tensors: usize,
}

/// The index `i` of a `….encoder.layer.{i}.…` parameter.
pub fn layer_index(name: &str) -> Option<usize> {
    let rest = &name[name.find("encoder.layer.")? + "encoder.layer.".len()..];
    rest.split('.').next()?.parse().ok()
}

/// True for a per-language parameter (a `.lang.` segment, see [`crate::model::PerLanguage`]).
pub fn is_language_specific(name: &str) -> bool {
    name.contains(".lang.")
}

/// Whether parameter `name` trains under `plan`; names starting with one of `head_prefixes` (the task head) always
/// do, other parameters outside the encoder (`bert.`) never do.
pub fn is_trainable(name: &str, plan: &FreezePlan, head_prefixes: &[&str]) -> bool {
    if head_prefixes.iter().any(|p| name.starts_with(p)) {
        return true;
    }
    let Some(rest) = name.strip_prefix("bert.") else { return false };
    if is_language_specific(name) || (plan.embeddings && rest.starts_with("embeddings.")) {
        return false;
    }
    !matches!(layer_index(rest), Some(i) if i < plan.layers)
}

/// Sets `requires_grad` of every variable of `vs` by [`is_trainable`]; errors when nothing would train.
pub fn apply_freeze(vs: &VarStore, plan: &FreezePlan, head_prefixes: &[&str]) -> Result<FreezeReport> {
    let mut report = FreezeReport::default();
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, t) in vars {
        let train = is_trainable(&name, plan, head_prefixes);
        let n = t.numel();
        if train {
            report.trainable_tensors += 1;
            report.trainable_params += n;
        } else {
            report.frozen_tensors += 1;
            report.frozen_params += n;
            report.language_specific_tensors += usize::from(is_language_specific(&name));
        }
        let _ = t.set_requires_grad(train);
    }
    if report.trainable_tensors == 0 {
        return Err(Error::Invalid("fine-tuning: every parameter is frozen".into()));
    }
    Ok(report)
}

/// Checks that freezing the bottom `freeze_layers` fits a `model_layers`-layer encoder and that the model's
/// variables live on the device fine-tuning runs on.
pub fn check_fit(freeze_layers: usize, model_layers: usize, vs: &VarStore, compute: &Compute) -> Result<()> {
    if freeze_layers > model_layers {
        return Err(Error::Invalid(format!("cannot freeze {freeze_layers} layers of a {model_layers}-layer model")));
    }
    check_device(vs, compute)
}

/// Checks that the variables of `vs` live on the device fine-tuning runs on.
pub fn check_device(vs: &VarStore, compute: &Compute) -> Result<()> {
    if vs.device() != compute.device {
        return Err(Error::Invalid(format!(
            "the model lives on {:?} but fine-tuning was asked to run on {:?}",
            vs.device(),
            compute.device
        )));
    }
    Ok(())
}

/// The learning-rate schedule of fine-tuning (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LrSchedule {
    /// The same rate at every step (Wu et al. 2020 for XNLI).
    #[default]
    Fixed,
    /// Linear warm-up over a fraction of the steps, then linear decay (Devlin et al. 2019).
    LinearDecay,
}

impl LrSchedule {
    /// The rate of 1-based step `step` of `total`, peak `lr`, warm-up `round(warmup_fraction · total)` steps.
    pub fn lr_at(self, lr: f64, warmup_fraction: f64, step: u64, total: u64) -> f64 {
        match self {
            LrSchedule::Fixed => lr,
            LrSchedule::LinearDecay => {
                let w = (warmup_fraction.clamp(0.0, 1.0) * total as f64).round() as u64;
                if step <= w {
                    lr * step as f64 / w.max(1) as f64
                } else {
                    lr * (total.saturating_sub(step) + 1) as f64 / total.saturating_sub(w).max(1) as f64
                }
            }
        }
    }
}

/// The optimiser settings of a fine-tuning run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimSettings {
    /// Peak (or fixed) learning rate η.
    pub lr: f64,
    pub schedule: LrSchedule,
    pub warmup_fraction: f64,
    /// Maximum global gradient norm `c`.
    pub clip_norm: f64,
    /// Number of optimiser steps `T` the schedule spans.
    pub total_steps: u64,
    pub seed: u64,
    /// A learning rate of its own for the task head (`None`: the head trains at `lr` with the encoder).
    pub head: Option<HeadRate>,
}

/// The peak (or fixed) learning rate of the parameters under one head prefix, on the same schedule as the rest:
/// PyTorch's parameter groups, as UDify (D. Kondratyuk, M. Straka (2019), *75 Languages, 1 Model: Parsing Universal
/// Dependencies Universally*, EMNLP-IJCNLP) trains its task heads at 1e-3 over BERT at 5e-5.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadRate {
    /// The head's variables are those named `{prefix}.…` in the task's `VarStore`.
    pub prefix: &'static str,
    pub lr: f64,
}

/// What one step reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    pub loss: f64,
    pub lr: f64,
    pub grad_norm: f64,
}

/// Adam + schedule + clipping + seeded dropout over the trainable variables of a [`VarStore`].
#[derive(Debug)]
pub struct Finetuner {
    adam: Adam,
    pub compute: Compute,
    pub settings: OptimSettings,
}

impl Finetuner {
    /// An optimiser over the variables of `vs` that require gradients (call [`apply_freeze`] first); with
    /// `settings.head`, the head's variables step at its rate (an error if the head has no trainable variable).
    pub fn new(vs: &VarStore, compute: Compute, settings: OptimSettings) -> Result<Self> {
        let mut adam = Adam::new(vs);
        if let Some(head) = settings.head {
            let dotted = format!("{}.", head.prefix);
            let in_head = |name: &str| name.starts_with(&dotted);
            if !vs.variables().iter().any(|(name, t)| in_head(name) && t.requires_grad()) {
                return Err(Error::Invalid(format!(
                    "head_lr: no trainable variable is named '{dotted}…' in this task's model"
                )));
            }
            adam = adam.with_rate_scales(|name| if in_head(name) { head.lr / settings.lr } else { 1.0 })?;
        }
        Ok(Finetuner { adam, compute, settings })
    }

    /// Optimiser steps taken so far.
    pub fn steps(&self) -> u64 {
        self.adam.step
    }

    /// One step: seeds dropout for step `t`, runs `loss_of` (the forward pass, dropout on) under the compute
    /// precision, back-propagates, clips and updates. A non-finite loss is an error and leaves the weights as they
    /// were.
    ///
    /// # Shapes
    /// `loss_of` returns a scalar.
    pub fn step(&mut self, loss_of: impl FnOnce() -> Result<Tensor>) -> Result<StepReport> {
        let s = self.settings;
        let t = self.adam.step + 1;
        // The seed and the dropout draws of the forward pass under one hold of the generator's lock, so a draw on
        // another thread (parallel tests fine-tune side by side) cannot fall between them.
        let rng = crate::device::torch_rng_lock();
        tch::manual_seed(mix(s.seed, DROPOUT, t) as i64);
        let loss = self.compute.forward(loss_of)?;
        drop(rng);
        let value = loss.double_value(&[]);
        if !value.is_finite() {
            return Err(Error::Invalid(format!("fine-tuning: the loss became {value} at step {t}")));
        }
        self.adam.zero_grad();
        loss.backward();
        let grad_norm = self.adam.clip_grad_norm(s.clip_norm);
        let lr = s.schedule.lr_at(s.lr, s.warmup_fraction, t, s.total_steps);
        self.adam.step(lr);
        Ok(StepReport { loss: value, lr, grad_norm })
    }
}

/// Copies of the trainable variables (kept on their device), to keep the best state seen on the dev set.
#[derive(Debug)]
pub struct Snapshot {
    saved: Vec<(Tensor, Tensor)>,
}

impl Snapshot {
    /// Copies every variable of `vs` that requires gradients.
    pub fn take(vs: &VarStore) -> Self {
        let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let saved: Vec<(Tensor, Tensor)> =
            tch::no_grad(|| vars.into_iter().map(|(_, v)| (v.detach().copy(), v)).collect());
        Snapshot { saved }
    }

    /// Overwrites the copies with the variables' current values.
    pub fn update(&mut self) {
        tch::no_grad(|| {
            for (copy, var) in &mut self.saved {
                copy.copy_(var);
            }
        });
    }

    /// Writes the copies back into the variables.
    pub fn restore(&self) {
        tch::no_grad(|| {
            for (copy, var) in &self.saved {
                let mut v = var.shallow_clone();
                v.copy_(copy);
            }
        });
    }
}

/// The dev score at one point of training (accuracy for NLI, span F1 for NER, LAS for parsing).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DevPoint {
    pub step: u64,
    /// 1-based epoch the step belongs to.
    pub epoch: usize,
    pub score: f64,
}

/// What [`train_with_selection`] reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainOutcome {
    pub steps: u64,
    pub epochs: usize,
    /// The kept state: the step with the best dev score (the first on ties).
    pub best_step: u64,
    pub best_dev_score: f64,
    pub dev_history: Vec<DevPoint>,
    pub loss: LossSummary,
    pub seconds: f64,
}

/// How a training run walks its data: `epochs` passes over `n_train` examples in seeded order (see [`epoch_order`]),
/// `batch_size` examples a step, a dev evaluation at the end of every epoch and every `eval_every` steps (0: never
/// in between); `label` names the run in messages and on the progress bar (shown when `progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochPlan {
    pub n_train: usize,
    pub batch_size: usize,
    pub epochs: usize,
    pub eval_every: u64,
    pub label: &'static str,
    pub progress: bool,
}

/// Fine-tunes with model selection: for each batch of training indices `loss_of` returns the batch loss (dropout
/// on; run under the compute precision by the [`Finetuner`]); `dev_score` scores the current weights (higher is
/// better). The weights are left in the state with the best dev score. Callers hold
/// [`crate::device::torch_rng_lock`].
pub fn train_with_selection(
    vs: &VarStore,
    compute: Compute,
    settings: OptimSettings,
    plan: EpochPlan,
    mut loss_of: impl FnMut(&[usize]) -> Result<Tensor>,
    mut dev_score: impl FnMut() -> Result<f64>,
) -> Result<TrainOutcome> {
    let label = plan.label;
    if plan.n_train == 0 || plan.batch_size == 0 || plan.epochs == 0 {
        return Err(Error::Invalid(format!("{label}: nothing to train ({plan:?})")));
    }
    let started = std::time::Instant::now();
    let per_epoch = plan.n_train.div_ceil(plan.batch_size);
    let total = (per_epoch * plan.epochs) as u64;
    let mut opt = Finetuner::new(vs, compute, OptimSettings { total_steps: total, ..settings })?;
    let pb = if plan.progress {
        crate::progress::bar(
            total,
            &format!("{label} {{bar:30}} {{pos}}/{{len}} [{{elapsed_precise}}<{{eta}}] {{msg}}"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut losses = Vec::with_capacity(total as usize);
    let mut history: Vec<DevPoint> = Vec::new();
    let mut best: Option<(DevPoint, Snapshot)> = None;
    for epoch in 1..=plan.epochs {
        let order = epoch_order(plan.n_train, settings.seed, epoch - 1);
        let chunks: Vec<&[usize]> = order.chunks(plan.batch_size).collect();
        for (k, chunk) in chunks.iter().enumerate() {
            let report = opt.step(|| loss_of(chunk))?;
            losses.push(report.loss);
            pb.inc(1);
            let t = opt.steps();
            if k + 1 == chunks.len() || (plan.eval_every > 0 && t.is_multiple_of(plan.eval_every)) {
                let score = dev_score()?;
                let point = DevPoint { step: t, epoch, score };
                history.push(point);
                match best.as_mut() {
                    Some((b, snap)) if score > b.score => {
                        *b = point;
                        snap.update();
                    }
                    Some(_) => {}
                    None => best = Some((point, Snapshot::take(vs))),
                }
                let best_score = best.as_ref().map_or(score, |(b, _)| b.score);
                pb.set_message(format!("dev {score:.3} (best {best_score:.3})"));
            } else if t.is_multiple_of(10) {
                let n = losses.len().min(50);
                let recent = losses[losses.len() - n..].iter().sum::<f64>() / n as f64;
                pb.set_message(format!("loss {recent:.3}"));
            }
        }
    }
    pb.finish_and_clear();
    let (best_point, snapshot) =
        best.ok_or_else(|| Error::Invalid(format!("{label}: no dev evaluation took place")))?;
    snapshot.restore();
    Ok(TrainOutcome {
        steps: opt.steps(),
        epochs: plan.epochs,
        best_step: best_point.step,
        best_dev_score: best_point.score,
        dev_history: history,
        loss: summarize_losses(&losses, &vec![per_epoch; plan.epochs], 50),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The arg-max class of every item, in input order: the items (of lengths `lens`) are scored in length-sorted
/// batches of at most `batch_tokens` padded tokens ([`crate::nn::batch::length_batches`]) by `logits_of`, which
/// gets a batch's item indices and runs without gradients.
///
/// # Shapes
/// `logits_of(batch)` → `[batch.len(), classes]`
pub fn predict_classes(
    lens: &[usize],
    batch_tokens: usize,
    mut logits_of: impl FnMut(&[usize]) -> Result<Tensor>,
) -> Result<Vec<usize>> {
    let mut pred = vec![0usize; lens.len()];
    for batch in crate::nn::batch::length_batches(lens, batch_tokens) {
        let logits = tch::no_grad(|| logits_of(&batch))?;
        let best = Vec::<i64>::try_from(logits.argmax(-1, false).to_device(tch::Device::Cpu))
            .map_err(|e| Error::Invalid(format!("reading predictions: {e}")))?;
        for (&i, &c) in batch.iter().zip(&best) {
            pred[i] = c as usize;
        }
    }
    Ok(pred)
}

/// One point of a down-sampled loss curve: the mean loss of the steps up to and including `step`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub step: u64,
    pub loss: f64,
}

/// A summary of a training loss curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LossSummary {
    pub steps: usize,
    /// Mean loss of the first 10% of the steps (at least 1, at most 100); `None` without steps.
    pub first: Option<f64>,
    /// Mean loss of the last 10% of the steps (same window).
    pub last: Option<f64>,
    /// Mean loss of each epoch.
    pub epoch_means: Vec<f64>,
    /// At most `points` consecutive equal-width buckets, each its mean loss at its last step.
    pub curve: Vec<CurvePoint>,
}

/// Summarises per-step `losses` (step `i + 1` = `losses[i]`); `epoch_steps` = the steps of each epoch.
pub fn summarize_losses(losses: &[f64], epoch_steps: &[usize], points: usize) -> LossSummary {
    let n = losses.len();
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let window = (n / 10).clamp(1, 100);
    let (first, last) =
        if n == 0 { (None, None) } else { (Some(mean(&losses[..window])), Some(mean(&losses[n - window..]))) };
    let mut epoch_means = Vec::new();
    let mut at = 0;
    for &k in epoch_steps {
        let end = (at + k).min(n);
        if end > at {
            epoch_means.push(mean(&losses[at..end]));
        }
        at = end;
    }
    let buckets = points.max(1).min(n);
    let curve = (0..buckets)
        .map(|b| {
            let (lo, hi) = (b * n / buckets, (b + 1) * n / buckets);
            CurvePoint { step: hi as u64, loss: mean(&losses[lo..hi]) }
        })
        .collect();
    LossSummary { steps: n, first, last, epoch_means, curve }
}

/// Share of positions where `pred` equals `gold` (0 for empty input).
pub fn accuracy(pred: &[usize], gold: &[usize]) -> f64 {
    if gold.is_empty() {
        return 0.0;
    }
    pred.iter().zip(gold).filter(|(p, g)| p == g).count() as f64 / gold.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeze_rules_follow_the_names() {
        let plan = FreezePlan { embeddings: true, layers: 2 };
        let head = ["classifier."];
        assert!(is_trainable("classifier.weight", &plan, &head));
        assert!(!is_trainable("cls.predictions.bias", &plan, &head));
        assert!(!is_trainable("bert.embeddings.position_embeddings.weight", &plan, &head));
        assert!(!is_trainable("bert.encoder.layer.1.output.dense.weight", &plan, &head));
        assert!(is_trainable("bert.encoder.layer.2.output.dense.weight", &plan, &head));
        assert!(is_trainable("bert.encoder.layer.12.output.dense.weight", &plan, &head));
        let none = FreezePlan::default();
        assert!(is_trainable("bert.embeddings.LayerNorm.weight", &none, &head));
        assert!(is_trainable("bert.encoder.layer.0.attention.self.query.weight", &none, &head));
        assert!(!is_trainable("bert.embeddings.lang.fr.word_embeddings.weight", &none, &head));
        assert!(!is_trainable("bert.encoder.layer.5.lang.en.attention.self.query.weight", &none, &head));
        assert_eq!(layer_index("bert.encoder.layer.10.lang.en.x"), Some(10));
        assert_eq!(layer_index("bert.embeddings.x"), None);
    }

    #[test]
    fn a_head_rate_moves_the_head_faster_and_must_name_trainable_variables() {
        let settings = |head| OptimSettings {
            lr: 1e-3,
            schedule: LrSchedule::Fixed,
            warmup_fraction: 0.0,
            clip_norm: 1e9,
            total_steps: 1,
            seed: 3,
            head,
        };
        let moves = |head: Option<HeadRate>| {
            let vs = VarStore::new(tch::Device::Cpu);
            let enc = vs.root().sub("bert").var("w", &[4], tch::nn::Init::Const(1.0));
            let cls = vs.root().sub("classifier").var("w", &[4], tch::nn::Init::Const(1.0));
            let mut opt = Finetuner::new(&vs, Compute::cpu(), settings(head)).unwrap();
            opt.step(|| Ok((&enc * &cls).sum(tch::Kind::Float))).unwrap();
            // The first Adam step moves every weight by ≈ its rate.
            let moved = |t: &Tensor| 1.0 - t.double_value(&[0]);
            (moved(&enc), moved(&cls))
        };
        let (enc, cls) = moves(None);
        assert!((enc - 1e-3).abs() < 1e-6 && (cls - 1e-3).abs() < 1e-6, "{enc} {cls}");
        let (enc, cls) = moves(Some(HeadRate { prefix: "classifier", lr: 2e-2 }));
        assert!((enc - 1e-3).abs() < 1e-6 && (cls - 2e-2).abs() < 1e-6, "{enc} {cls}");
        // A prefix with no trainable variable is an error, not a silent no-op.
        let vs = VarStore::new(tch::Device::Cpu);
        let _ = vs.root().sub("bert").var("w", &[4], tch::nn::Init::Const(1.0));
        let e = Finetuner::new(&vs, Compute::cpu(), settings(Some(HeadRate { prefix: "parser", lr: 1e-2 })))
            .unwrap_err()
            .to_string();
        assert!(e.contains("head_lr") && e.contains("'parser.…'"), "{e}");
    }

    #[test]
    fn schedules_and_orders() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(LrSchedule::Fixed.lr_at(2e-5, 0.1, 7, 10), 2e-5));
        let s = LrSchedule::LinearDecay;
        assert!(close(s.lr_at(1.0, 0.2, 1, 10), 0.5));
        assert!(close(s.lr_at(1.0, 0.2, 2, 10), 1.0));
        assert!(close(s.lr_at(1.0, 0.2, 3, 10), 1.0));
        assert!(close(s.lr_at(1.0, 0.2, 10, 10), 1.0 / 8.0));
        assert!(close(s.lr_at(1.0, 0.0, 1, 4), 1.0));
        let a = epoch_order(50, 7, 0);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_eq!(a, epoch_order(50, 7, 0));
        assert_ne!(a, epoch_order(50, 7, 1));
        assert_ne!(a, epoch_order(50, 8, 0));
    }

    #[test]
    fn loss_summary_and_accuracy() {
        let losses: Vec<f64> = (0..20).map(|i| 20.0 - i as f64).collect();
        let s = summarize_losses(&losses, &[10, 10], 4);
        assert_eq!(s.steps, 20);
        assert_eq!(s.first, Some(19.5)); // window 2: (20 + 19) / 2
        assert_eq!(s.last, Some(1.5));
        assert_eq!(s.epoch_means, [15.5, 5.5]);
        assert_eq!(s.curve.len(), 4);
        assert_eq!(s.curve[0], CurvePoint { step: 5, loss: 18.0 });
        assert_eq!(s.curve[3].step, 20);
        let empty = summarize_losses(&[], &[], 10);
        assert_eq!((empty.first, empty.curve.len()), (None, 0));
        assert_eq!(accuracy(&[0, 1, 2, 2], &[0, 1, 1, 2]), 0.75);
        assert_eq!(accuracy(&[], &[]), 0.0);
    }
}
