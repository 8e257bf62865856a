//! Evaluation building blocks for zero-shot transfer (Wu, Conneau et al. 2020, §4 and Table 1): the pure-Rust parts
//! of the NER, dependency-parsing and word-alignment pipelines, with no tensors involved.
//!
//! - [`ner_metrics`]: BIO repair (standalone `I-X` → `B-X`; a span takes its final tag's type), span extraction,
//!   CoNLL-style micro span precision / recall / F1 with per-type counts.
//! - [`parse_metrics`]: UAS / LAS over a corpus; gold-`PUNCT` tokens excluded by default.
//! - [`parse_decode`]: heads from an arc-score matrix: greedy, and the maximum spanning arborescence with exactly one
//!   root child (Chu-Liu/Edmonds with an exact root penalty).
//! - [`word_align`]: fast_align (IBM Model 2 with a diagonal prior) trained by EM, Viterbi alignment, both directions.
//! - [`symmetrize`]: the grow-diag-final-and merge of two directional alignments.
//! - [`aer`]: alignment error rate against sure and possible links.
pub mod aer;
pub mod ner_metrics;
pub mod parse_decode;
pub mod parse_metrics;
pub mod symmetrize;
pub mod word_align;
