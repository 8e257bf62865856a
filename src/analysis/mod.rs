//! Representation analyses of Wu, Conneau et al. 2020 (§5) and Liu et al. 2020 (§3–4): the primitives that compare
//! and align embedding spaces, and those that find language-specific information.
//!
//! - [`normalize`]: centring, unit length and iterative normalization (Zhang et al. 2019).
//! - [`procrustes`]: orthogonal Procrustes with MUSE-style refinement, and an unconstrained least-squares map.
//! - [`scores`]: exact blocked top-k retrieval by cosine, CSLS (Conneau et al. 2018) and inverted softmax
//!   (Smith et al. 2017), plus gold ranks for MRR.
//! - [`metrics`]: word-translation P@k (MUSE and vecmap conventions), MRR (Liu et al. 2020), sentence retrieval.
//! - [`bootstrap`]: percentile bootstrap confidence intervals over source words.
//! - [`word_probe`]: the word-level alignment probe (Procrustes on a MUSE split, P@1 per layer; Emerging §5.1).
//! - [`cka`]: linear, debiased linear and RBF CKA (Kornblith et al. 2019), and layer × layer grids.
//! - [`cka_bootstrap`]: bootstrap replicates of layer-wise linear CKA over the examples (paired across calls).
//! - [`language`]: mean of language, mean-difference shift, unsupervised token translation, convert rate, BLEU-1.
//! - [`token_translation`]: the mean-difference-shift experiment on a loaded model (means of language, layer ×
//!   α grid of convert rate and BLEU-1): the one part of this module that runs a model.
//!
//! Every function is pure: tensors in, tensors or numbers out, on the device of its inputs. Rows are vectors
//! throughout (`[n, d]`).
pub mod bootstrap;
pub mod cka;
pub mod cka_bootstrap;
pub mod language;
pub mod language_id;
pub mod metrics;
pub mod normalize;
pub mod procrustes;
pub mod scores;
pub mod token_translation;
pub mod word_probe;
pub mod word_retrieval;

use crate::error::{Error, Result};
use tch::{Kind, Tensor};

/// `t` as a 2-D floating tensor (f16/bf16/i64 promoted to f32/f64, f32/f64 kept); `what` names the argument.
pub(crate) fn matrix_float(t: &Tensor, what: &str) -> Result<Tensor> {
    let size = t.size();
    if size.len() != 2 {
        return Err(Error::Invalid(format!("{what}: expected a matrix [rows, dim], got shape {size:?}")));
    }
    if size[0] == 0 || size[1] == 0 {
        return Err(Error::Invalid(format!("{what}: empty matrix of shape {size:?}")));
    }
    Ok(match t.kind() {
        Kind::Float | Kind::Double => t.shallow_clone(),
        Kind::Int64 | Kind::Int | Kind::Int16 | Kind::Int8 | Kind::Uint8 => t.to_kind(Kind::Double),
        _ => t.to_kind(Kind::Float),
    })
}

/// The values of a tensor of any shape and float kind, flattened, as f64 on the CPU.
pub(crate) fn to_vec_f64(t: &Tensor) -> Result<Vec<f64>> {
    let flat = t.to_kind(Kind::Double).to_device(tch::Device::Cpu).contiguous().reshape([-1]);
    Vec::<f64>::try_from(&flat).map_err(|e| Error::Invalid(format!("tensor to f64 values: {e}")))
}

/// The values of an integer tensor, flattened, as i64 on the CPU.
pub(crate) fn to_vec_i64(t: &Tensor) -> Result<Vec<i64>> {
    let flat = t.to_kind(Kind::Int64).to_device(tch::Device::Cpu).contiguous().reshape([-1]);
    Vec::<i64>::try_from(&flat).map_err(|e| Error::Invalid(format!("tensor to i64 values: {e}")))
}
