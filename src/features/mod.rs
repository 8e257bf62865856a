//! Features from a masked language model (DESIGN.md "features"): hidden states of every layer in inference mode,
//! batched by length under a token budget, pooled per sentence or per word (Wu, Conneau et al. 2020 §5; Liu et al.
//! 2020 §3).
//!
//! - [`extract`]: batching, the forward pass and [`Pooling`] — sentence mean over non-special
//!   subwords; word vectors as the mean of a word's subwords or its first subword.
//! - [`dump`]: ragged every-layer hidden states of a text file (`crossling features`).
//! - [`words`]: corpus-averaged contextual word vectors (Emerging §5.1.1) and non-contextual embedding rows.
pub mod dump;
pub mod extract;
pub mod words;

pub use crate::model::tokenizer::Tokenized;
pub use extract::{pooled_layers, Extraction, Pooling};
