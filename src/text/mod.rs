//! Text processing between raw datasets and token streams: sentence splitting ([`sentences`]), Chinese word
//! segmentation ([`segment`]), per-language corpus building with splits, caps and domain tags ([`corpus`]) and
//! pseudo-languages made of another language's documents ([`pseudo`]), the figures' evaluation text with synthetic
//! languages rewritten ([`evalsets`]) and per-language counts of a dataset ([`stats`]).
pub mod anchors;
pub mod codeswitch;
pub mod corpus;
pub mod evalsets;
pub mod masking;
pub mod pseudo;
pub mod rewrite;
pub mod sampling;
pub mod segment;
pub mod sentences;
pub mod stats;
pub mod stream;
pub mod tokenize;
