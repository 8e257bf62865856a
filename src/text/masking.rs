//! BERT masking for the masked-language-model objective (Devlin et al. 2019, §3.1; used unchanged by
//! Wu, Conneau et al. 2020, §3): a fraction `mask_prob` (15%) of the eligible tokens is selected for
//! prediction; a selected token is replaced by `[MASK]` with probability `replace_mask` (80%), by a random
//! token with probability `replace_random` (10%), and left unchanged otherwise (10%). The loss is computed
//! only at selected positions: `labels[i] = original id` there and `-100` (PyTorch's ignore index) elsewhere.
//!
//! **Selection.** Instead of an independent Bernoulli(`mask_prob`) draw per token, exactly
//! `k = max(1, round(mask_prob × eligible))` positions (capped at `eligible`) are drawn uniformly without
//! replacement from the batch's eligible positions (those whose id is not in `special_ids`). Each token is
//! still selected with marginal probability ≈ `mask_prob`, but the number of predictions per batch is exact,
//! which removes one source of variance between runs and guarantees a non-empty loss on every batch.
//!
//! **Random replacements** are drawn uniformly from `random_pool`: the same language's ids when each language
//! has its own embeddings (so a replacement never leaks another language's embedding), otherwise all
//! non-special ids. With an empty pool, a "random" position keeps its original token.
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::text::codeswitch::SplitMix64;

/// The label of a position the masking left alone: the MLM loss ignores it (PyTorch's `ignore_index` default).
pub const IGNORE_INDEX: i64 = -100;
use crate::text::stream::Batch;

/// Masking probabilities (BERT's 15% / 80-10-10 by default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaskingConfig {
    /// Fraction of eligible tokens selected for prediction.
    pub mask_prob: f64,
    /// Probability that a selected token becomes `[MASK]`.
    pub replace_mask: f64,
    /// Probability that a selected token becomes a random token from the pool.
    pub replace_random: f64,
}

impl Default for MaskingConfig {
    fn default() -> Self {
        MaskingConfig { mask_prob: 0.15, replace_mask: 0.8, replace_random: 0.1 }
    }
}

impl MaskingConfig {
    /// Every probability in `[0, 1]` and `replace_mask + replace_random ≤ 1`.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("mask_prob", self.mask_prob),
            ("replace_mask", self.replace_mask),
            ("replace_random", self.replace_random),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::Invalid(format!("masking: {name} must be in [0, 1], got {v}")));
            }
        }
        if self.replace_mask + self.replace_random > 1.0 + 1e-12 {
            return Err(Error::Invalid(format!(
                "masking: replace_mask + replace_random must be at most 1, got {} + {}",
                self.replace_mask, self.replace_random
            )));
        }
        Ok(())
    }
}

/// A masked batch: model inputs and MLM labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskedBatch {
    /// Row-major `[batch, seq]`, with selected positions replaced.
    pub input_ids: Vec<i64>,
    /// Row-major `[batch, seq]`: the original id at selected positions, [`IGNORE_INDEX`] elsewhere.
    pub labels: Vec<i64>,
    pub batch: usize,
    pub seq: usize,
}

impl MaskedBatch {
    /// `(input_ids, labels)` as tensors.
    ///
    /// # Shapes
    /// Both `[batch, seq]`, `i64`, on the CPU.
    pub fn to_tensors(&self) -> (tch::Tensor, tch::Tensor) {
        let shape = [self.batch as i64, self.seq as i64];
        (tch::Tensor::from_slice(&self.input_ids).view(shape), tch::Tensor::from_slice(&self.labels).view(shape))
    }

    /// Number of positions selected for prediction.
    pub fn num_selected(&self) -> usize {
        self.labels.iter().filter(|&&l| l != IGNORE_INDEX).count()
    }
}

/// Apply BERT masking to `batch` (see the module docs for the exact selection rule).
///
/// `cfg` is assumed valid ([`MaskingConfig::validate`]); ids in `special_ids` are never selected.
pub fn mask_batch(
    batch: &Batch,
    cfg: &MaskingConfig,
    mask_id: u32,
    random_pool: &[u32],
    special_ids: &[u32],
    rng: &mut SplitMix64,
) -> MaskedBatch {
    let mut input_ids = batch.input_ids.clone();
    let mut labels = vec![IGNORE_INDEX; input_ids.len()];
    let mut eligible: Vec<usize> =
        (0..input_ids.len()).filter(|&i| !special_ids.iter().any(|&s| s as i64 == input_ids[i])).collect();
    let n = eligible.len();
    let k = if n == 0 { 0 } else { ((cfg.mask_prob * n as f64).round() as usize).clamp(1, n) };
    // Partial Fisher–Yates: the first k entries become a uniform sample without replacement.
    for i in 0..k {
        let j = i + rng.below((n - i) as u64) as usize;
        eligible.swap(i, j);
    }
    let mut selected = eligible[..k].to_vec();
    selected.sort_unstable(); // so the replacement draws do not depend on the sampling order's details
    for pos in selected {
        labels[pos] = input_ids[pos];
        let r = rng.next_f64();
        if r < cfg.replace_mask {
            input_ids[pos] = mask_id as i64;
        } else if r < cfg.replace_mask + cfg.replace_random && !random_pool.is_empty() {
            input_ids[pos] = random_pool[rng.below(random_pool.len() as u64) as usize] as i64;
        }
    }
    MaskedBatch { input_ids, labels, batch: batch.batch, seq: batch.seq }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASK: u32 = 4;
    const SPECIALS: [u32; 5] = [0, 1, 2, 3, 4];

    /// A `[batch, seq]` batch of ids ≥ 1000 with `[SEP]` (3) every 10th position.
    fn batch(b: usize, s: usize) -> Batch {
        let input_ids = (0..b * s).map(|i| if i % 10 == 9 { 3 } else { 1000 + (i % 97) as i64 }).collect();
        Batch { lang: "en".into(), input_ids, batch: b, seq: s }
    }

    fn pool() -> Vec<u32> {
        (500..600).collect()
    }

    #[test]
    fn exact_fraction_and_labels() {
        let b = batch(8, 50); // 400 positions, 40 specials, 360 eligible
        let m = mask_batch(&b, &MaskingConfig::default(), MASK, &pool(), &SPECIALS, &mut SplitMix64::new(1));
        assert_eq!(m.num_selected(), 54); // round(0.15 × 360)
        for i in 0..b.input_ids.len() {
            if m.labels[i] == IGNORE_INDEX {
                assert_eq!(m.input_ids[i], b.input_ids[i], "unselected positions are unchanged");
            } else {
                assert_eq!(m.labels[i], b.input_ids[i], "labels hold the original ids");
                assert_ne!(b.input_ids[i], 3, "specials are never selected");
            }
        }
        assert_eq!((m.batch, m.seq), (8, 50));
    }

    #[test]
    fn at_least_one_selected_and_specials_only_batch_is_untouched() {
        let b = Batch { lang: "en".into(), input_ids: vec![1000, 3, 1001, 3], batch: 1, seq: 4 };
        let m = mask_batch(&b, &MaskingConfig::default(), MASK, &pool(), &SPECIALS, &mut SplitMix64::new(3));
        assert_eq!(m.num_selected(), 1);
        let only_specials = Batch { lang: "en".into(), input_ids: vec![3, 0, 2, 3], batch: 2, seq: 2 };
        let m =
            mask_batch(&only_specials, &MaskingConfig::default(), MASK, &pool(), &SPECIALS, &mut SplitMix64::new(3));
        assert_eq!(m.num_selected(), 0);
        assert_eq!(m.input_ids, only_specials.input_ids);
    }

    #[test]
    fn eighty_ten_ten_split_and_pool_only_replacements() {
        let b = batch(100, 200); // 20 000 positions, 18 000 eligible → 2 700 selected
        let pool = pool();
        let m = mask_batch(&b, &MaskingConfig::default(), MASK, &pool, &SPECIALS, &mut SplitMix64::new(9));
        let (mut masked, mut random, mut kept) = (0usize, 0usize, 0usize);
        for i in 0..b.input_ids.len() {
            if m.labels[i] == IGNORE_INDEX {
                continue;
            }
            let x = m.input_ids[i];
            if x == MASK as i64 {
                masked += 1;
            } else if x == b.input_ids[i] {
                kept += 1;
            } else {
                assert!(pool.contains(&(x as u32)), "replacement {x} is not from the pool");
                random += 1;
            }
        }
        let n = m.num_selected() as f64;
        assert_eq!(n, 2700.0);
        assert!((masked as f64 / n - 0.8).abs() < 0.03, "mask {masked}/{n}");
        assert!((random as f64 / n - 0.1).abs() < 0.02, "random {random}/{n}");
        assert!((kept as f64 / n - 0.1).abs() < 0.02, "kept {kept}/{n}");
        // No id outside originals ∪ {MASK} ∪ pool appears.
        assert!(m
            .input_ids
            .iter()
            .zip(&b.input_ids)
            .all(|(&x, &o)| x == o || x == MASK as i64 || (500..600).contains(&x)));
    }

    #[test]
    fn deterministic_by_seed() {
        let b = batch(4, 64);
        let cfg = MaskingConfig::default();
        let a = mask_batch(&b, &cfg, MASK, &pool(), &SPECIALS, &mut SplitMix64::new(5));
        let a2 = mask_batch(&b, &cfg, MASK, &pool(), &SPECIALS, &mut SplitMix64::new(5));
        let c = mask_batch(&b, &cfg, MASK, &pool(), &SPECIALS, &mut SplitMix64::new(6));
        assert_eq!(a, a2);
        assert_ne!(a, c);
    }

    #[test]
    fn tensors_have_batch_seq_shape() {
        let b = batch(3, 20);
        let m = mask_batch(&b, &MaskingConfig::default(), MASK, &pool(), &SPECIALS, &mut SplitMix64::new(0));
        let (x, y) = m.to_tensors();
        assert_eq!(x.size(), vec![3, 20]);
        assert_eq!(y.size(), vec![3, 20]);
        assert_eq!(y.int64_value(&[2, 5]), m.labels[2 * 20 + 5]);
    }

    #[test]
    fn config_serde_and_validation() {
        let cfg: MaskingConfig = serde_json::from_str(r#"{"mask_prob": 0.2}"#).unwrap();
        assert_eq!(cfg, MaskingConfig { mask_prob: 0.2, ..MaskingConfig::default() });
        assert!(serde_json::from_str::<MaskingConfig>(r#"{"mask_pro": 0.2}"#).is_err());
        assert!(MaskingConfig::default().validate().is_ok());
        assert!(MaskingConfig { mask_prob: 1.5, ..MaskingConfig::default() }.validate().is_err());
        assert!(MaskingConfig { replace_mask: 0.95, ..MaskingConfig::default() }.validate().is_err());
    }
}
