//! The masked language model of the study: a BERT-style post-LN transformer encoder (Vaswani et al. 2017,
//! *Attention Is All You Need*; Devlin et al. 2019, *BERT*) with the parameter-sharing plan of Wu et al. 2020,
//! *Emerging Cross-lingual Structure in Pretrained Language Models*, §3–4 (separate embeddings, separate
//! bottom layers).
//!
//! Parameter names follow Hugging Face `BertForMaskedLM` (`bert.encoder.layer.3.attention.self.query.weight`),
//! so checkpoints load and export directly. A separated part gains a `lang.{lang}` segment and nothing else is
//! renamed: `bert.embeddings.lang.fr.word_embeddings.weight`, `cls.predictions.lang.fr.bias`,
//! `bert.encoder.layer.0.lang.fr.attention.self.query.weight`.
//!
//! - [`config`]: [`ModelConfig`], [`SharingPlan`], presets, JSON.
//! - [`sharing`]: [`PerLanguage`], shared-or-per-language groups.
//! - [`embeddings`], [`attention`], [`layer`], [`encoder`]: the encoder, returning every layer's hidden states.
//! - [`heads`]: the MLM head and [`MlmModel`] with its loss.
pub mod attention;
pub mod config;
pub mod embeddings;
pub mod encoder;
pub mod heads;
pub mod layer;
pub mod sharing;

pub use config::{ModelConfig, SharingPlan, PRESETS};
pub use encoder::{Encoder, EncoderOutput};
pub use heads::{MlmHead, MlmModel, IGNORE_INDEX};
pub use sharing::PerLanguage;

#[cfg(test)]
mod tests;
