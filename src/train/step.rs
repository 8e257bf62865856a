//! One optimisation step of MLM pre-training (Wu, Conneau et al. 2020, §3; Devlin et al. 2019), shared by the
//! trainer ([`crate::train::train`]) and the benchmark (`crossling bench train`), so both measure the same code:
//!
//! ```text
//! L = −(1/|M|) Σ_{i∈M} log softmax(W_e h_i + b)[y_i]      (M = the masked positions, forward under `Compute`)
//! g = ∇L;  g ← g · min(1, c / (‖g‖₂ + 1e-6));  θ ← Adam(θ, g, lr)
//! ```
//!
//! [`masked_lm_loss`] gathers the final hidden states of the masked positions before the MLM head, so the
//! output softmax (`[hidden] × [hidden, vocab]` per position, the largest matmul of a small model) runs on the
//! ≈15% of positions the loss uses, as XLM (Conneau & Lample 2019), the study's code base, does. The loss equals
//! [`MlmModel::mlm_loss`] (which computes logits everywhere, as Hugging Face `BertForMaskedLM` does); a test
//! checks the two agree. Labels are checked on the host, so no device synchronisation is needed for that.
//!
//!
//! The step runs under a [`Compute`] (device and precision: [`crate::device::compute`]).
use tch::{Device, Kind, Reduction, Tensor};

use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::MlmModel;
use crate::nn::schedule::Adam;
use crate::text::masking::MaskedBatch;
use crate::text::masking::IGNORE_INDEX;

/// What one step reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOutput {
    /// The mean masked-token cross-entropy of the batch, before the update.
    pub loss: f64,
    /// The global gradient norm before clipping.
    pub grad_norm: f64,
}

/// One MLM optimisation step: forward (dropout on) + loss + backward + clip + Adam (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainStep {
    pub compute: Compute,
    /// Maximum global gradient norm `c`.
    pub clip_norm: f64,
}

impl TrainStep {
    /// Takes one step on `batch` of language `lang` with learning rate `lr`. Dropout draws from libtorch's global
    /// generator, so callers that need reproducibility seed it (`tch::manual_seed`) before each step.
    ///
    /// # Shapes
    /// `batch`: `[batch, seq]` ids and labels (host memory; moved to the step's device here)
    pub fn run(
        &self,
        model: &MlmModel,
        adam: &mut Adam,
        batch: &MaskedBatch,
        lang: &str,
        lr: f64,
    ) -> Result<StepOutput> {
        let device = self.compute.device;
        let loss = self.compute.forward(|| masked_lm_loss(model, batch, lang, device, true))?; // scalar, f32
        adam.zero_grad();
        loss.backward();
        let grad_norm = adam.clip_grad_norm(self.clip_norm);
        adam.step(lr);
        Ok(StepOutput { loss: loss.double_value(&[]), grad_norm })
    }
}

/// Mean masked-token loss of `batch` without dropout or gradients (validation), under `compute`.
///
/// # Shapes
/// `batch`: `[batch, seq]` ids and labels → scalar
pub fn eval_loss(model: &MlmModel, batch: &MaskedBatch, lang: &str, compute: &Compute) -> Result<f64> {
    let loss = tch::no_grad(|| compute.forward(|| masked_lm_loss(model, batch, lang, compute.device, false)))?;
    Ok(loss.double_value(&[]))
}

/// Mean cross-entropy over the masked positions of `batch` (label ≠ [`IGNORE_INDEX`]), with the MLM head applied
/// to those positions only (see the module docs); `train` turns dropout on. Errors when a label is outside
/// `[0, vocab)` or nothing is masked.
///
/// # Shapes
/// `batch`: `[batch, seq]` ids and labels (host memory) → scalar f32 on `device`
pub fn masked_lm_loss(
    model: &MlmModel,
    batch: &MaskedBatch,
    lang: &str,
    device: Device,
    train: bool,
) -> Result<Tensor> {
    let (b, s) = (batch.batch, batch.seq);
    if batch.input_ids.len() != b * s || batch.labels.len() != b * s {
        return Err(Error::Invalid(format!(
            "masked batch of shape [{b}, {s}] holds {} ids and {} labels",
            batch.input_ids.len(),
            batch.labels.len()
        )));
    }
    let vocab = model.config().vocab_size as i64;
    let (mut positions, mut targets) = (Vec::new(), Vec::new());
    for (i, &label) in batch.labels.iter().enumerate() {
        if label == IGNORE_INDEX {
            continue;
        }
        if !(0..vocab).contains(&label) {
            return Err(Error::Invalid(format!("label {label} at position {i} is outside [0, {vocab})")));
        }
        positions.push(i as i64);
        targets.push(label);
    }
    if positions.is_empty() {
        return Err(Error::Invalid("masked batch has no masked positions".into()));
    }
    let x = Tensor::from_slice(&batch.input_ids).view([b as i64, s as i64]).to_device(device); // [batch, seq]
    let positions = Tensor::from_slice(&positions).to_device(device); // [n]
    let targets = Tensor::from_slice(&targets).to_device(device); // [n]
    let out = model.encoder.forward(&x, None, lang, train)?;
    let hidden = model.config().hidden as i64;
    let h = out.last().reshape([-1, hidden]).index_select(0, &positions); // [n, hidden]
    let logits = model.logits(&h, lang)?; // [n, vocab]
    Ok(logits.to_kind(Kind::Float).cross_entropy_loss::<Tensor>(&targets, None, Reduction::Mean, IGNORE_INDEX, 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::schedule::AdamLayout;
    use crate::text::codeswitch::SplitMix64;
    use crate::text::masking::{mask_batch, MaskingConfig};
    use crate::text::stream::Batch;
    use tch::nn::VarStore;

    /// A fixed masked batch of random ids in `[4, vocab)` (ids 0..4 play the special tokens).
    fn fixed_batch(vocab: u32, batch: usize, seq: usize, seed: u64) -> MaskedBatch {
        let mut rng = SplitMix64::new(seed);
        let ids = (0..batch * seq).map(|_| 4 + rng.below(vocab as u64 - 4) as i64).collect();
        let b = Batch { lang: "en".into(), input_ids: ids, batch, seq };
        let pool: Vec<u32> = (4..vocab).collect();
        mask_batch(&b, &MaskingConfig::default(), 3, &pool, &[0, 1, 2, 3], &mut rng)
    }

    /// `steps` steps on one fixed batch from a freshly seeded tiny model; returns the losses.
    fn losses(steps: usize, dropout_seed: i64) -> Vec<f64> {
        losses_with(crate::train::trainer::tests::tiny_model(50), AdamLayout::Flat, steps, dropout_seed).0
    }

    /// [`losses`] for the model `cfg` with Adam in `layout`, and how many updates ran on the flat buffers.
    fn losses_with(
        cfg: crate::model::ModelConfig,
        layout: AdamLayout,
        steps: usize,
        dropout_seed: i64,
    ) -> (Vec<f64>, u64) {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(3);
        let vs = VarStore::new(Device::Cpu);
        let model = MlmModel::new(&vs.root(), &cfg).unwrap();
        let mut adam = Adam::with_layout(&vs, layout);
        assert_eq!(adam.layout(), layout);
        let step = TrainStep { compute: Compute::cpu(), clip_norm: 1.0 };
        let batch = fixed_batch(50, 4, 16, 11);
        let losses = (0..steps)
            .map(|i| {
                tch::manual_seed(dropout_seed + i as i64);
                let out = step.run(&model, &mut adam, &batch, "en", 3e-3).unwrap();
                assert!(out.grad_norm > 0.0 && out.grad_norm.is_finite());
                out.loss
            })
            .collect();
        (losses, adam.flat_steps())
    }

    #[test]
    fn steps_decrease_the_loss_on_a_fixed_batch() {
        let l = losses(8, 100);
        assert!(l[0] > 3.0, "initial loss near ln(50) ≈ 3.9, got {}", l[0]);
        assert!(l[7] < l[0] - 0.5, "{l:?}");
    }

    #[test]
    fn fp32_cpu_step_is_deterministic() {
        let (a, b) = (losses(3, 100), losses(3, 100));
        assert_eq!(
            a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_ne!(losses(3, 200)[1..], a[1..], "the dropout seed matters");
    }

    #[test]
    fn flat_and_per_parameter_adam_train_a_separated_model_alike() {
        // Separate embeddings and a separate bottom layer: "fr"'s own parameters get no gradient from "en" batches
        // (in training, until fr's first batch), so the flat layout steps parameter by parameter throughout here, as
        // the per-parameter layout does; the shared model takes the flat path at every step. Clipping is active, so
        // the two agree to f32 rounding, not to the bit.
        let shared = crate::train::trainer::tests::tiny_model(50);
        let mut separated = shared.clone();
        separated.sharing.sep_emb = true;
        separated.sharing.sep_layers = 1;
        for (cfg, flat_steps) in [(shared, 4), (separated, 0)] {
            let (flat, n) = losses_with(cfg.clone(), AdamLayout::Flat, 4, 100);
            assert_eq!(n, flat_steps);
            let (per, n) = losses_with(cfg, AdamLayout::PerParameter, 4, 100);
            assert_eq!(n, 0);
            for (a, b) in flat.iter().zip(&per) {
                assert!((a - b).abs() < 1e-4, "{flat:?} vs {per:?}");
            }
        }
    }

    #[test]
    fn masked_loss_equals_the_full_logits_loss() {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(5);
        let vs = VarStore::new(Device::Cpu);
        let model = MlmModel::new(&vs.root(), &crate::train::trainer::tests::tiny_model(50)).unwrap();
        let batch = fixed_batch(50, 3, 16, 2);
        let ours = masked_lm_loss(&model, &batch, "en", Device::Cpu, false).unwrap().double_value(&[]);
        let (x, y) = batch.to_tensors();
        let full = model.mlm_loss(&x, None, &y, "en", false).unwrap().double_value(&[]);
        assert!((ours - full).abs() < 1e-5, "{ours} vs {full}");
        let mut bad = batch.clone();
        bad.labels[0] = 50;
        assert!(masked_lm_loss(&model, &bad, "en", Device::Cpu, false).unwrap_err().to_string().contains("outside"));
        bad.labels.iter_mut().for_each(|l| *l = IGNORE_INDEX);
        assert!(masked_lm_loss(&model, &bad, "en", Device::Cpu, false).is_err());
    }
}
