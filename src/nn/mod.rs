//! The network pieces that the encoder, the MLM trainer and the task heads share (issue 68 §3; as candle's `nn` and
//! rust-bert's `common`): each file is one mechanism with its formula and source, and none knows who uses it.
//!
//! - [`dropout`]: BERT's dropout, with a fast host-drawn mask on the CPU.
//! - [`residual`]: post-LN or pre-LN around a block's residual connection.
//! - [`schedule`]: the warm-up + inverse square-root schedule and Adam (no weight decay) with clipping by global norm;
//!   [`flat`]: Adam's parameters and gradients in one buffer each.
//! - [`batch`]: length batching and padding of token sequences for inference and fine-tuning; [`packing`]: a padded
//!   batch's real tokens, so that a layer's dense parts skip the padding.
//! - [`lstm`]: a one-layer LSTM as an explicit step loop (the frozen-NLI classifier's).
pub mod batch;
pub mod dropout;
pub mod flat;
pub mod lstm;
pub mod packing;
pub mod residual;
pub mod schedule;

pub use schedule::{Adam, AdamLayout, Schedule};
