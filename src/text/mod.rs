//! Text processing between raw datasets and token streams: sentence splitting ([`sentences`]), Chinese word
//! segmentation ([`segment`]) and per-language corpus building with splits, caps and domain tags ([`corpus`]).
pub mod anchors;
pub mod codeswitch;
pub mod corpus;
pub mod masking;
pub mod sampling;
pub mod segment;
pub mod sentences;
pub mod stream;
pub mod tokenize;
