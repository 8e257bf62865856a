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
//! **Devices and precision.** [`Compute`] resolves a device name (`auto` = the first CUDA device when libtorch sees
//! one, else the CPU; otherwise [`crate::device::parse_device`]) and a [`Precision`]:
//! - `fp32`: everything in f32;
//! - `bf16`: the forward pass and the loss run under CUDA autocast with bfloat16 as the lower-precision type
//!   (matmuls, fused attention and GELU inputs in bf16; autocast keeps softmax/log-softmax, LayerNorm and the
//!   cross-entropy in f32, and the model casts the logits to f32 before the loss). The backward pass runs outside
//!   the autocast region as autocast prescribes; parameters, gradients and Adam moments stay f32, and bf16's f32
//!   exponent range needs no loss scaling. **bf16 is CUDA only**: asking for it on the CPU is an error, because
//!   libtorch's CPU autocast covers a different op list and is slower than fp32 on most CPUs;
//! - `auto`: `bf16` on CUDA, `fp32` on the CPU.
//!
//! libtorch's CUDA autocast type defaults to fp16 and `tch` 0.26 exposes no setter, so this module declares
//! `at::autocast::{get,set}_autocast_dtype` from `libtorch_cpu` (exported C++ functions whose two arguments are
//! `int8_t`-backed enums; the Itanium-mangled names are those of libtorch 2.x) and sets bf16 for the duration of
//! the forward pass only. A unit test checks the binding by a set/get round trip, which runs without a GPU.
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Reduction, Tensor};

use crate::error::{Error, Result};
use crate::model::{MlmModel, IGNORE_INDEX};
use crate::text::masking::MaskedBatch;
use crate::train::schedule::Adam;

/// Arithmetic of the forward pass (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// bf16 autocast on CUDA, fp32 on the CPU.
    #[default]
    Auto,
    /// f32 everywhere.
    Fp32,
    /// bf16 autocast for the forward pass (CUDA only).
    Bf16,
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Precision::Auto),
            "fp32" | "f32" => Ok(Precision::Fp32),
            "bf16" => Ok(Precision::Bf16),
            other => Err(Error::Invalid(format!("unknown precision '{other}': expected auto, fp32 or bf16"))),
        }
    }
}

/// A device (`auto`, `cpu`, `cuda`, `cuda:N`): `auto` is the first CUDA device when libtorch sees one, else the CPU.
pub fn resolve_device(name: &str) -> Result<Device> {
    if name.trim().eq_ignore_ascii_case("auto") {
        Ok(Device::cuda_if_available())
    } else {
        crate::device::parse_device(name)
    }
}

/// Where and in which arithmetic training runs: a resolved device and whether the forward pass uses bf16 autocast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compute {
    pub device: Device,
    /// bf16 autocast around the forward pass (only ever true on CUDA).
    pub bf16: bool,
}

impl Compute {
    /// f32 on the CPU (what the tests use).
    pub fn cpu() -> Self {
        Compute { device: Device::Cpu, bf16: false }
    }

    /// Resolves a device name and a precision; `bf16` on the CPU is an error.
    pub fn resolve(device: &str, precision: Precision) -> Result<Self> {
        Self::on(resolve_device(device)?, precision)
    }

    /// Resolves `precision` for an already chosen device.
    pub fn on(device: Device, precision: Precision) -> Result<Self> {
        let cuda = device.is_cuda();
        let bf16 = match precision {
            Precision::Auto => cuda,
            Precision::Fp32 => false,
            Precision::Bf16 if cuda => true,
            Precision::Bf16 => {
                return Err(Error::Invalid(
                    "precision bf16 needs a CUDA device (bf16 autocast is CUDA only); use fp32 on the CPU".into(),
                ))
            }
        };
        if bf16 && !autocast::AVAILABLE {
            return Err(Error::Invalid("bf16 autocast is not available on this platform's libtorch binding".into()));
        }
        Ok(Compute { device, bf16 })
    }

    /// `cpu fp32`, `cuda:0 bf16`, … for logs and reports.
    pub fn describe(&self) -> String {
        let dev = match self.device {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(i) => format!("cuda:{i}"),
            other => format!("{other:?}").to_lowercase(),
        };
        format!("{dev} {}", if self.bf16 { "bf16" } else { "fp32" })
    }

    /// Runs `f` (a forward pass) under this precision: inside bf16 CUDA autocast when `bf16`, else as is.
    pub fn forward<T>(&self, f: impl FnOnce() -> T) -> T {
        if self.bf16 {
            autocast::bf16(f)
        } else {
            f()
        }
    }
}

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

/// bf16 CUDA autocast through libtorch's C++ API (see the module docs).
mod autocast {
    /// `c10::DeviceType::CUDA`.
    #[cfg(unix)]
    const CUDA: i8 = 1;
    /// `c10::ScalarType::BFloat16`.
    #[cfg(unix)]
    pub(super) const BFLOAT16: i8 = 15;

    #[cfg(unix)]
    pub(super) const AVAILABLE: bool = true;
    #[cfg(not(unix))]
    pub(super) const AVAILABLE: bool = false;

    #[cfg(unix)]
    extern "C" {
        /// `void at::autocast::set_autocast_dtype(c10::DeviceType, c10::ScalarType)` (both `int8_t` enums).
        #[link_name = "_ZN2at8autocast18set_autocast_dtypeEN3c1010DeviceTypeENS1_10ScalarTypeE"]
        fn set_autocast_dtype(device_type: i8, dtype: i8);
        /// `c10::ScalarType at::autocast::get_autocast_dtype(c10::DeviceType)`.
        #[link_name = "_ZN2at8autocast18get_autocast_dtypeEN3c1010DeviceTypeE"]
        fn get_autocast_dtype(device_type: i8) -> i8;
    }

    /// The CUDA autocast type of this thread (a `c10::ScalarType` code).
    #[cfg(unix)]
    pub(super) fn cuda_dtype() -> i8 {
        // SAFETY: reads a thread-local array entry; no preconditions, cannot throw.
        unsafe { get_autocast_dtype(CUDA) }
    }

    /// Sets this thread's CUDA autocast type.
    #[cfg(unix)]
    pub(super) fn set_cuda_dtype(dtype: i8) {
        // SAFETY: writes a thread-local array entry; any `ScalarType` code is accepted, nothing can throw.
        unsafe { set_autocast_dtype(CUDA, dtype) }
    }

    /// Restores the previous CUDA autocast type when dropped (also on unwinding).
    #[cfg(unix)]
    struct Restore(i8);

    #[cfg(unix)]
    impl Drop for Restore {
        fn drop(&mut self) {
            set_cuda_dtype(self.0);
        }
    }

    /// Runs `f` under CUDA autocast with bfloat16 as the lower-precision type.
    #[cfg(unix)]
    pub(super) fn bf16<T>(f: impl FnOnce() -> T) -> T {
        let _restore = Restore(cuda_dtype());
        set_cuda_dtype(BFLOAT16);
        tch::autocast(true, f)
    }

    #[cfg(not(unix))]
    pub(super) fn bf16<T>(f: impl FnOnce() -> T) -> T {
        f() // unreachable: `Compute::on` refuses bf16 where `AVAILABLE` is false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let _rng = crate::device::torch_rng_lock();
        let cfg = crate::train::trainer::tests::tiny_model(50);
        tch::manual_seed(3);
        let vs = VarStore::new(Device::Cpu);
        let model = MlmModel::new(&vs.root(), &cfg).unwrap();
        let mut adam = Adam::new(&vs);
        let step = TrainStep { compute: Compute::cpu(), clip_norm: 1.0 };
        let batch = fixed_batch(50, 4, 16, 11);
        (0..steps)
            .map(|i| {
                tch::manual_seed(dropout_seed + i as i64);
                let out = step.run(&model, &mut adam, &batch, "en", 3e-3).unwrap();
                assert!(out.grad_norm > 0.0 && out.grad_norm.is_finite());
                out.loss
            })
            .collect()
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

    #[test]
    fn precision_and_device_resolution() {
        assert_eq!(Compute::resolve("cpu", Precision::Auto).unwrap(), Compute::cpu());
        assert_eq!(Compute::resolve("cpu", Precision::Fp32).unwrap(), Compute::cpu());
        let e = Compute::resolve("cpu", Precision::Bf16).unwrap_err().to_string();
        assert!(e.contains("needs a CUDA device"), "{e}");
        assert!(Compute::resolve("tpu", Precision::Auto).is_err());
        let auto = Compute::resolve("auto", Precision::Auto).unwrap();
        assert_eq!(auto.device, Device::cuda_if_available());
        assert_eq!(auto.bf16, auto.device.is_cuda());
        assert_eq!(Compute::cpu().describe(), "cpu fp32");
        assert_eq!("BF16".parse::<Precision>().unwrap(), Precision::Bf16);
        assert!("fp16".parse::<Precision>().is_err());
        let p: Precision = serde_json::from_str("\"fp32\"").unwrap();
        assert_eq!(p, Precision::Fp32);
    }

    #[cfg(unix)]
    #[test]
    fn autocast_dtype_binding_round_trips() {
        // Thread-local state of libtorch; no GPU needed. Half = 5.
        let before = autocast::cuda_dtype();
        autocast::set_cuda_dtype(5);
        assert_eq!(autocast::cuda_dtype(), 5);
        let inner = autocast::bf16(autocast::cuda_dtype);
        assert_eq!(inner, autocast::BFLOAT16);
        assert_eq!(autocast::cuda_dtype(), 5, "restored after the region");
        autocast::set_cuda_dtype(before);
    }
}
