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
//! - [`dropout`]: dropout with a host-drawn mask on the CPU.
//! - [`residual`]: a block's residual connection with its LayerNorm after the sum (post-LN) or on the input (pre-LN).
//! - [`heads`]: the MLM head and [`MlmModel`] with its loss.
//! - [`tokenizer`]: [`ModelTokenizer`], crossling or Hugging Face, with word-aligned encodings.
//! - [`word_start`]: a tokenizer without its word-start marker, for words glued to the one before them.
//! - [`checkpoint`]: the files of a checkpoint folder and the recorded hash of its weights.
//! - [`load`]: [`LoadedModel::open`] for checkpoints, runs and Hugging Face folders.
//! - [`hf`]: Hugging Face BERT import and export.
//! - [`registry`]: pretrained encoders by name (`e5-small`), fetched into the model cache.
pub mod attention;
pub mod checkpoint;
pub mod config;
pub mod embeddings;
pub mod encoder;
pub mod heads;
pub mod hf;
pub mod layer;
pub mod load;
pub mod registry;
pub mod sharing;
pub mod tokenizer;
pub mod word_start;

pub use config::{ModelConfig, SharingPlan};
pub use encoder::{Encoder, EncoderOutput};
pub use heads::{MlmHead, MlmModel};
pub use load::{LoadedModel, ModelKind, ModelSource};
pub use sharing::PerLanguage;
pub use tokenizer::{Encoded, Framed, ModelTokenizer, SpecialIds};

#[cfg(test)]
mod tests;
