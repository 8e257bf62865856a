//! Language sampling for multilingual MLM batches (Conneau & Lample 2019, §3.1; Wu, Conneau et al. 2020, §3):
//! each batch is drawn from one language, chosen with the exponentially smoothed distribution
//!
//! ```text
//! q_i = n_i / Σ_j n_j,        p_i = q_i^α / Σ_j q_j^α,
//! ```
//!
//! where `n_i` is language `i`'s sentence count. `α = 1` follows the corpus proportions, `α = 0` is uniform,
//! and the papers' `α = 0.7` boosts low-resource languages.
use crate::error::{Error, Result};
use crate::text::codeswitch::SplitMix64;

/// The papers' smoothing exponent.
pub const DEFAULT_ALPHA: f64 = 0.7;

/// `p_i ∝ (n_i / Σn)^α`, normalised, in input order. Errors on an empty list, a zero count, a repeated
/// language, or an `α` that is negative or not finite.
pub fn sampling_probs(sentence_counts: &[(String, u64)], alpha: f64) -> Result<Vec<(String, f64)>> {
    if sentence_counts.is_empty() {
        return Err(Error::Invalid("language sampling: no languages given".into()));
    }
    if !alpha.is_finite() || alpha < 0.0 {
        return Err(Error::Invalid(format!("language sampling: alpha must be finite and ≥ 0, got {alpha}")));
    }
    for (i, (lang, n)) in sentence_counts.iter().enumerate() {
        if *n == 0 {
            return Err(Error::Invalid(format!("language sampling: language '{lang}' has 0 sentences")));
        }
        if sentence_counts[..i].iter().any(|(l, _)| l == lang) {
            return Err(Error::Invalid(format!("language sampling: language '{lang}' is listed twice")));
        }
    }
    let total: f64 = sentence_counts.iter().map(|(_, n)| *n as f64).sum();
    let weights: Vec<f64> = sentence_counts.iter().map(|(_, n)| (*n as f64 / total).powf(alpha)).collect();
    let z: f64 = weights.iter().sum();
    Ok(sentence_counts.iter().zip(weights).map(|((lang, _), w)| (lang.clone(), w / z)).collect())
}

/// Draws languages i.i.d. from a fixed distribution with a seeded [`SplitMix64`].
#[derive(Debug, Clone)]
pub struct LanguageSampler {
    langs: Vec<String>,
    probs: Vec<f64>,
    /// Cumulative probabilities; the last entry is 1.
    cdf: Vec<f64>,
    rng: SplitMix64,
}

impl LanguageSampler {
    /// Sample with `p_i ∝ (n_i / Σn)^α` (see [`sampling_probs`]).
    pub fn new(sentence_counts: &[(String, u64)], alpha: f64, seed: u64) -> Result<Self> {
        Self::from_probs(&sampling_probs(sentence_counts, alpha)?, seed)
    }

    /// Sample from explicit probabilities (non-negative, finite, positive sum; normalised here).
    pub fn from_probs(probs: &[(String, f64)], seed: u64) -> Result<Self> {
        if probs.is_empty() {
            return Err(Error::Invalid("language sampling: no languages given".into()));
        }
        if let Some((lang, p)) = probs.iter().find(|(_, p)| !p.is_finite() || *p < 0.0) {
            return Err(Error::Invalid(format!("language sampling: invalid probability {p} for '{lang}'")));
        }
        let z: f64 = probs.iter().map(|(_, p)| p).sum();
        if z <= 0.0 {
            return Err(Error::Invalid("language sampling: probabilities sum to 0".into()));
        }
        let langs = probs.iter().map(|(l, _)| l.clone()).collect();
        let probs: Vec<f64> = probs.iter().map(|(_, p)| p / z).collect();
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = probs
            .iter()
            .map(|p| {
                acc += p;
                acc
            })
            .collect();
        if let Some(last) = cdf.last_mut() {
            *last = 1.0;
        }
        Ok(LanguageSampler { langs, probs, cdf, rng: SplitMix64::new(seed) })
    }

    /// The next language.
    #[allow(clippy::should_implement_trait)] // borrows from self, so it cannot be an `Iterator`
    pub fn next(&mut self) -> &str {
        let u = self.rng.next_f64();
        // First index whose cumulative probability exceeds u; zero-probability languages are never chosen.
        let i = self.cdf.partition_point(|&c| c <= u).min(self.langs.len() - 1);
        &self.langs[i]
    }

    /// The languages and their (normalised) probabilities, in input order.
    pub fn probs(&self) -> Vec<(String, f64)> {
        self.langs.iter().cloned().zip(self.probs.iter().copied()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(v: &[(&str, u64)]) -> Vec<(String, u64)> {
        v.iter().map(|(l, n)| (l.to_string(), *n)).collect()
    }

    fn values(p: &[(String, f64)]) -> Vec<f64> {
        p.iter().map(|(_, x)| *x).collect()
    }

    #[test]
    fn alpha_one_gives_proportions() {
        let p = sampling_probs(&counts(&[("en", 100), ("fr", 300), ("ru", 600)]), 1.0).unwrap();
        for (got, want) in values(&p).iter().zip([0.1, 0.3, 0.6]) {
            assert!((got - want).abs() < 1e-12);
        }
        assert_eq!(p[1].0, "fr");
    }

    #[test]
    fn alpha_zero_gives_uniform() {
        let p = sampling_probs(&counts(&[("en", 1), ("fr", 1000), ("ru", 7)]), 0.0).unwrap();
        assert!(values(&p).iter().all(|x| (x - 1.0 / 3.0).abs() < 1e-12));
    }

    #[test]
    fn alpha_point_seven_matches_hand_computation() {
        // 0.1^0.7 = 0.1995262315, 0.9^0.7 = 0.9289010; p = (0.17681787763, 0.82318212237).
        let p = values(&sampling_probs(&counts(&[("en", 100), ("fr", 900)]), DEFAULT_ALPHA).unwrap());
        assert!((p[0] - 0.176_817_877_630_412_1).abs() < 1e-12, "{p:?}");
        assert!((p[1] - 0.823_182_122_369_587_9).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn empirical_frequencies_match() {
        let c = counts(&[("en", 100), ("fr", 900), ("de", 400)]);
        let mut s = LanguageSampler::new(&c, 0.7, 11).unwrap();
        let probs = s.probs();
        let draws = 20_000;
        let mut hits = [0usize; 3];
        for _ in 0..draws {
            let lang = s.next().to_string();
            hits[probs.iter().position(|(l, _)| *l == lang).unwrap()] += 1;
        }
        for (h, (lang, p)) in hits.iter().zip(&probs) {
            let f = *h as f64 / draws as f64;
            assert!((f - p).abs() < 0.01, "{lang}: {f} vs {p}");
        }
    }

    #[test]
    fn deterministic_by_seed() {
        let c = counts(&[("en", 5), ("fr", 9)]);
        let draw = |seed| {
            let mut s = LanguageSampler::new(&c, 0.7, seed).unwrap();
            (0..50).map(|_| s.next().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }

    #[test]
    fn invalid_inputs_are_errors() {
        assert!(sampling_probs(&[], 0.7).is_err());
        assert!(sampling_probs(&counts(&[("en", 10), ("fr", 0)]), 0.7).is_err());
        assert!(sampling_probs(&counts(&[("en", 10), ("en", 3)]), 0.7).is_err());
        assert!(sampling_probs(&counts(&[("en", 10)]), -1.0).is_err());
        assert!(sampling_probs(&counts(&[("en", 10)]), f64::NAN).is_err());
        assert!(LanguageSampler::new(&[], 0.7, 0).is_err());
        assert!(LanguageSampler::from_probs(&[("en".into(), 0.0)], 0).is_err());
    }
}
