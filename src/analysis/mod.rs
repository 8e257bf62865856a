//! Representation analyses of Wu, Conneau et al. 2020 (§5) and Liu et al. 2020 (§3–4): pure functions on tensors.
//!
//! - [`language`]: mean of language, mean-difference shift, unsupervised token translation, convert rate, BLEU-1.
pub mod language;
