//! Training throughput: timed [`TrainStep`]s on random masked batches, the FLOPs they count, and a measured matmul
//! peak to compare against (used by `crossling bench train`).
//!
//! **FLOPs per step** (model FLOPs, the convention of Kaplan et al. 2020 and of MFU in Chowdhery et al. 2022,
//! *PaLM*, App. B): with `T = batch · seq` tokens, `L` layers, width `d`, feed-forward width `f`, vocabulary `V`,
//!
//! ```text
//! N     = L · (4d² + 2df) + d² + dV          weights used in matmuls per token: Q, K, V, O, FFN in/out,
//!                                            the MLM transform and the tied output softmax
//! FLOPs = 6 · N · T  +  12 · L · seq · d · T  (fwd = 2 per multiply-add, bwd = 2 × fwd;
//!                                            attention scores QKᵀ and the weighted sum AV: 2 · seq · d each)
//! ```
//!
//! Embedding lookups, biases, LayerNorm, GELU, softmax, dropout and the optimiser are not counted. The output
//! softmax is counted at every position (as Hugging Face `BertForMaskedLM` computes it), so the count depends on
//! the model and the batch only, not on the implementation, and FLOP/s ratios equal tokens/s ratios.
//!
//! **Peak**: the best of a few `n × n` by `n × n` matmuls (`2n³` FLOPs each) of the given kind on the device,
//! timed after one untimed warm-up; the same threads as the training run.
use std::time::Instant;

use tch::{nn::VarStore, Device, Kind, Tensor};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::{MlmModel, ModelConfig};
use crate::nn::schedule::{Adam, AdamLayout};
use crate::text::codeswitch::SplitMix64;
use crate::text::masking::{mask_batch, MaskedBatch, MaskingConfig};
use crate::text::stream::Batch;
use crate::train::step::TrainStep;

/// Training FLOPs of one step (see the module docs).
pub fn train_flops_per_step(model: &ModelConfig, batch: usize, seq: usize) -> f64 {
    let (l, d, f, v) = (model.layers as f64, model.hidden as f64, model.ffn_dim() as f64, model.vocab_size as f64);
    let (t, s) = ((batch * seq) as f64, seq as f64);
    let n = l * (4.0 * d * d + 2.0 * d * f) + d * d + d * v;
    6.0 * n * t + 12.0 * l * s * d * t
}

/// Ids reserved for special tokens in the random batches (`0..N_SPECIAL`); `MASK_ID` is one of them.
pub const N_SPECIAL: u32 = 5;
/// The `[MASK]` id of the random batches.
pub const MASK_ID: u32 = 4;

/// `n` random masked batches: ids uniform in `[N_SPECIAL, vocab)`, `mask_prob` of them selected (80/10/10; BERT's
/// 15 % or the scale's presets' share, [`crate::train::presets::Pretraining::mask_prob`]).
///
/// # Shapes
/// each `[batch, seq]`
pub fn random_batches(
    vocab: usize,
    batch: usize,
    seq: usize,
    n: usize,
    mask_prob: f64,
    seed: u64,
) -> Result<Vec<MaskedBatch>> {
    if vocab <= N_SPECIAL as usize {
        return Err(Error::Invalid(format!("bench: vocabulary of {vocab} leaves no ordinary ids")));
    }
    let masking = MaskingConfig { mask_prob, ..MaskingConfig::default() };
    masking.validate()?;
    let mut rng = SplitMix64::new(seed);
    let pool: Vec<u32> = (N_SPECIAL..vocab as u32).collect();
    let special: Vec<u32> = (0..N_SPECIAL).collect();
    let span = (vocab as u32 - N_SPECIAL) as u64;
    Ok((0..n)
        .map(|_| {
            let ids = (0..batch * seq).map(|_| (N_SPECIAL as u64 + rng.below(span)) as i64).collect();
            let b = Batch { lang: "xx".into(), input_ids: ids, batch, seq };
            mask_batch(&b, &masking, MASK_ID, &pool, &special, &mut rng)
        })
        .collect())
}

/// The timed part of a benchmark run.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTimings {
    /// Tokens (`batch · seq`) per second over the timed steps.
    pub tokens_per_s: f64,
    /// Wall time of each timed step.
    pub step_seconds: Vec<f64>,
    /// Loss of every step, warm-up included.
    pub losses: Vec<f64>,
    /// Number of trainable parameters.
    pub parameters: i64,
    /// Masked positions per batch, where the MLM head runs.
    pub head_positions: usize,
    /// Steps (warm-up included) whose Adam update ran on the flat buffers ([`Adam::flat_steps`]).
    pub adam_flat_steps: u64,
}

/// How [`time_train_steps`] runs: the steps, their device and precision, Adam's layout, the seed.
#[derive(Debug, Clone, Copy)]
pub struct TimingRun {
    /// Untimed steps first.
    pub warmup: usize,
    /// Timed steps.
    pub steps: usize,
    pub compute: Compute,
    pub adam: AdamLayout,
    /// Share of the tokens selected for the loss ([`random_batches`]).
    pub mask_prob: f64,
    pub seed: u64,
}

/// Builds `model` (seeded with `run.seed`) on `run.compute`'s device and times `run.steps` [`TrainStep`]s after
/// `run.warmup` untimed ones, on random batches drawn before the clock starts (learning rate 1e-4, clipping at 1.0).
/// The loss read-back in each step synchronises the device, so step times include all queued work.
pub fn time_train_steps(model_cfg: &ModelConfig, batch: usize, seq: usize, run: TimingRun) -> Result<StepTimings> {
    let TimingRun { warmup, steps, compute, adam: layout, mask_prob, seed } = run;
    if steps == 0 {
        return Err(Error::Invalid("bench: at least one timed step is needed".into()));
    }
    let batches = random_batches(model_cfg.vocab_size, batch, seq, warmup + steps, mask_prob, seed)?;
    let _rng = crate::device::torch_rng_lock();
    tch::manual_seed(seed as i64);
    let vs = VarStore::new(compute.device);
    let lang = model_cfg.languages.first().cloned().unwrap_or_else(|| "xx".into());
    let model = MlmModel::new(&vs.root(), model_cfg)?;
    let mut adam = Adam::with_layout(&vs, layout);
    let parameters = vs.trainable_variables().iter().map(|t| t.numel() as i64).sum();
    let step = TrainStep { compute, clip_norm: 1.0 };
    let (mut losses, mut step_seconds) = (Vec::new(), Vec::new());
    for (i, b) in batches.iter().enumerate() {
        let started = Instant::now();
        let out = step.run(&model, &mut adam, b, &lang, 1e-4)?;
        if i >= warmup {
            step_seconds.push(started.elapsed().as_secs_f64());
        }
        losses.push(out.loss);
    }
    let total: f64 = step_seconds.iter().sum();
    let head_positions = batches[0].num_selected();
    Ok(StepTimings {
        tokens_per_s: (batch * seq * steps) as f64 / total.max(1e-12),
        step_seconds,
        losses,
        parameters,
        head_positions,
        adam_flat_steps: adam.flat_steps(),
    })
}

/// Best FLOP/s of `reps` timed `n × n` matmuls of `kind` on `device` (see the module docs).
pub fn matmul_peak(device: Device, kind: Kind, n: i64, reps: usize) -> f64 {
    let _rng = crate::device::torch_rng_lock();
    let a = Tensor::randn([n, n], (kind, device));
    let b = Tensor::randn([n, n], (kind, device));
    let sync = || {
        if let Device::Cuda(i) = device {
            tch::Cuda::synchronize(i as i64);
        }
    };
    let _ = a.matmul(&b);
    sync();
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let started = Instant::now();
        let c = a.matmul(&b);
        sync();
        best = best.min(started.elapsed().as_secs_f64());
        drop(c);
    }
    2.0 * (n as f64).powi(3) / best.max(1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flops_by_hand() {
        // L = 1, d = 2, f = 4, V = 10, batch 1 × seq 3: N = 1·(16 + 16) + 4 + 20 = 56;
        // 6·56·3 + 12·1·3·2·3 = 1008 + 216.
        let mut m = ModelConfig::at(crate::Scale::Smoke, 10, ["en"]);
        (m.layers, m.hidden, m.heads, m.ffn) = (1, 2, 1, Some(4));
        assert_eq!(train_flops_per_step(&m, 1, 3), 1224.0);
    }

    #[test]
    fn random_batches_are_masked_and_reproducible() {
        let a = random_batches(50, 2, 10, 3, 0.15, 1).unwrap();
        assert_eq!(a, random_batches(50, 2, 10, 3, 0.15, 1).unwrap());
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|b| b.num_selected() == 3)); // round(0.15 · 20)
        assert!(a[0].input_ids.iter().all(|&i| (N_SPECIAL as i64 - 1..50).contains(&i)));
        assert!(random_batches(5, 2, 10, 1, 0.15, 1).is_err());
        assert!(random_batches(50, 2, 10, 3, 0.4, 1).unwrap().iter().all(|b| b.num_selected() == 8)); // round(0.4 · 20)
        assert!(random_batches(50, 2, 10, 1, 1.5, 1).is_err());
    }

    #[test]
    fn timing_runs_on_a_tiny_model() {
        let m = crate::train::trainer::tests::tiny_model(40);
        let run = TimingRun {
            warmup: 1,
            steps: 2,
            compute: Compute::cpu(),
            adam: AdamLayout::Flat,
            mask_prob: 0.15,
            seed: 0,
        };
        let t = time_train_steps(&m, 2, 8, run).unwrap();
        assert_eq!((t.step_seconds.len(), t.losses.len()), (2, 3));
        assert!(t.tokens_per_s > 0.0 && t.parameters > 0);
        assert_eq!(t.head_positions, 2); // round(0.15 · 16)
        assert_eq!(t.adam_flat_steps, 3, "every step on the flat buffers");
        assert!(matmul_peak(Device::Cpu, Kind::Float, 64, 2) > 0.0);
    }
}
