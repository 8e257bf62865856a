//! MLM pre-training as in Wu, Conneau et al. (2020, §3), following XLM (Conneau & Lample 2019): per-step
//! language sampling with `α`-smoothed probabilities, BERT masking, Adam with the inverse square-root schedule
//! of Vaswani et al. (2017), gradient clipping by global norm, periodic validation perplexity, and atomic,
//! verified checkpoints from which a run resumes exactly.
//!
//! - [`schedule`]: [`Schedule`] (warm-up + inverse square root) and [`Adam`], an Adam whose moments are
//!   ordinary tensors, so a checkpoint can hold them and resume is exact.
//! - [`flat`]: parameters and gradients moved into one buffer each, so Adam and clipping run as a few kernels.
//! - [`checkpoint`]: the checkpoint directory (`model.safetensors`, `optimizer.safetensors`, `config.json`,
//!   `trainer_state.json`), atomic writes and verified loads.
//! - [`bench`](mod@bench): timed training steps on random batches, training FLOPs per step, a measured matmul peak.
//! - [`gemm_share`]: the step's matrix products timed alone, and the share of the step outside them.
//! - [`step`]: [`TrainStep`] (forward + MLM loss + backward + clip + Adam), [`crate::device::Compute`] and
//!   [`crate::device::Precision`] (device, bf16 autocast on CUDA); used by the trainer and by `crossling bench train`.
//! - [`trainer`]: [`TrainConfig`], [`TokenInfo`], [`train`], [`TrainSummary`].
//! - [`extra_anchors`]: dictionary code-switching of a run's training text (Table 1 "Extra anchors").
//! - [`presets`]: the Table 1 ablations for a language pair at a scale (`smoke`, `cpu`, `paper`).
//! - [`request`]: a model request (preset, languages, changes) → its run config and cache folder; `describe`.
//! - [`run`]: one run from one TOML file — corpora, tokenizer, streams, training ([`run::run_pretraining`]).
pub mod bench;
pub mod checkpoint;
pub mod extra_anchors;
pub mod gemm_share;
pub mod model_cache;
pub mod presets;
pub mod request;
pub mod run;
pub mod step;
pub mod trainer;

pub use checkpoint::{TrainerState, FORMAT_VERSION};
pub use step::{StepOutput, TrainStep};
pub use trainer::{torch_rng_lock, train, TokenInfo, TrainConfig, TrainSummary};
