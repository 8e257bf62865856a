//! Text processing between raw datasets and token streams: sentence splitting ([`sentences`]), Chinese word
//! segmentation ([`segment`]) and per-language corpus building with splits, caps and domain tags ([`corpus`]).
// pub mod corpus; // TEMP(lead)
pub mod segment;
pub mod sentences;
