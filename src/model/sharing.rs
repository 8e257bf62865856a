//! Shared-or-per-language parameter groups: the mechanics of the sharing plan of Wu et al. (2020, §3–4).
//! A separated group keeps its Hugging Face name and gains a `lang.{lang}` segment (`….layer.0.lang.fr.…`).
use std::collections::BTreeMap;

use tch::nn;

use crate::error::{Error, Result};

/// One module that is either shared by all languages or has one copy per language.
#[derive(Debug)]
pub enum PerLanguage<T> {
    /// One copy, built at the plain path.
    Shared(T),
    /// One copy per language, built at `path / "lang" / lang`.
    Separate(BTreeMap<String, T>),
}

impl<T> PerLanguage<T> {
    /// Builds the group at `p`: shared when `separate` is false, else one copy per language at `p.lang.{lang}`.
    pub fn build(
        p: &nn::Path,
        separate: bool,
        languages: &[String],
        mut make: impl FnMut(&nn::Path) -> Result<T>,
    ) -> Result<Self> {
        if !separate {
            return Ok(PerLanguage::Shared(make(p)?));
        }
        let lp = p / "lang";
        let mut map = BTreeMap::new();
        for lang in languages {
            map.insert(lang.clone(), make(&(&lp / lang.as_str()))?);
        }
        Ok(PerLanguage::Separate(map))
    }

    /// The copy used for `lang`; a shared group ignores `lang`, a separated one errors on an unknown language.
    pub fn get(&self, lang: &str) -> Result<&T> {
        match self {
            PerLanguage::Shared(t) => Ok(t),
            PerLanguage::Separate(map) => map.get(lang).ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown language '{lang}' for a model with per-language parameters; known: {}",
                    map.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            }),
        }
    }

    /// True when there is one copy per language.
    pub fn is_separate(&self) -> bool {
        matches!(self, PerLanguage::Separate(_))
    }
}

/// BERT initialisation (Devlin et al. 2019): weights N(0, 0.02²).
pub(crate) const WEIGHT_INIT: nn::Init = nn::Init::Randn { mean: 0.0, stdev: 0.02 };

/// A dense layer with BERT initialisation (weights N(0, 0.02²), bias 0); HF names `weight` `[out, in]`, `bias`.
pub(crate) fn dense(p: &nn::Path, input: usize, output: usize) -> nn::Linear {
    let cfg = nn::LinearConfig { ws_init: WEIGHT_INIT, bs_init: Some(nn::Init::Const(0.0)), bias: true };
    nn::linear(p, input as i64, output as i64, cfg)
}

/// A LayerNorm over the last dimension with weight 1 and bias 0.
pub(crate) fn layer_norm(p: &nn::Path, dim: usize, eps: f64) -> nn::LayerNorm {
    let cfg =
        nn::LayerNormConfig { eps, ws_init: nn::Init::Const(1.0), bs_init: nn::Init::Const(0.0), ..Default::default() };
    nn::layer_norm(p, vec![dim as i64], cfg)
}
