//! Percentile bootstrap confidence intervals (Efron & Tibshirani 1993, ch. 13) for metrics that are means over
//! source words (P@k, MRR): resample the per-word values with replacement `resamples` times, take the mean of
//! each resample, and report the `(1−level)/2` and `(1+level)/2` percentiles of those means (numpy's default
//! linear interpolation between order statistics). The generator is SplitMix64 (Steele, Lea & Flood 2014)
//! seeded by the caller, so an interval is reproducible bit for bit on every platform.
use super::metrics::WordEval;
use crate::error::{Error, Result};
use serde::Serialize;

/// A point estimate with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
}

/// SplitMix64.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (Lemire's multiply-shift; the bias is below 2⁻³² for n < 2³²).
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// numpy's `percentile(..., method="linear")` of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Percentile bootstrap interval of the mean of `values`.
pub fn mean_interval(values: &[f64], resamples: usize, level: f64, seed: u64) -> Result<Interval> {
    if values.is_empty() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return Err(Error::Invalid(format!(
            "bootstrap needs values ({}), resamples ≥ 1 ({resamples}) and a level in (0, 1) ({level})",
            values.len()
        )));
    }
    let n = values.len();
    let estimate = values.iter().sum::<f64>() / n as f64;
    let mut rng = SplitMix64(seed);
    let mut means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Ok(Interval { estimate, low: percentile(&means, tail), high: percentile(&means, 1.0 - tail), level })
}

/// Percentile bootstrap interval of a ratio of sums `Σ num_i / Σ den_i` over items `(num_i, den_i)`, resampling
/// the items: span F1 from per-sentence counts (`num = 2·tp`, `den = 2·tp + fp + fn`), attachment scores from
/// per-sentence (correct, tokens). A resample whose denominators sum to zero counts as 0.
pub fn ratio_interval(items: &[(f64, f64)], resamples: usize, level: f64, seed: u64) -> Result<Interval> {
    if items.is_empty() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return Err(Error::Invalid(format!(
            "bootstrap needs items ({}), resamples ≥ 1 ({resamples}) and a level in (0, 1) ({level})",
            items.len()
        )));
    }
    let ratio = |num: f64, den: f64| if den == 0.0 { 0.0 } else { num / den };
    let n = items.len();
    let (num, den) = items.iter().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let mut rng = SplitMix64(seed);
    let mut stats: Vec<f64> = (0..resamples)
        .map(|_| {
            let (a, b) = (0..n).fold((0.0, 0.0), |(a, b), _| {
                let (x, y) = items[rng.below(n)];
                (a + x, b + y)
            });
            ratio(a, b)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Ok(Interval {
        estimate: ratio(num, den),
        low: percentile(&stats, tail),
        high: percentile(&stats, 1.0 - tail),
        level,
    })
}

/// Intervals for P@1, P@5, P@10 and MRR of one direction, resampling the evaluated source words (the same
/// resamples for every metric, so the four intervals come from one seed).
pub fn word_intervals(eval: &WordEval, resamples: usize, level: f64, seed: u64) -> Result<[Interval; 4]> {
    let col = |j: usize| eval.hits.iter().map(|h| if h[j] { 1.0 } else { 0.0 }).collect::<Vec<f64>>();
    let rr: Vec<f64> = eval.ranks.iter().map(|&r| 1.0 / r as f64).collect();
    Ok([
        mean_interval(&col(0), resamples, level, seed)?,
        mean_interval(&col(1), resamples, level, seed)?,
        mean_interval(&col(2), resamples, level, seed)?,
        mean_interval(&rr, resamples, level, seed)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_intervals_are_reproducible_and_bracket_the_estimate() {
        let values: Vec<f64> = (0..400).map(|i| if i % 10 < 3 { 1.0 } else { 0.0 }).collect();
        let a = mean_interval(&values, 2000, 0.95, 7).unwrap();
        let b = mean_interval(&values, 2000, 0.95, 7).unwrap();
        let c = mean_interval(&values, 2000, 0.95, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.estimate, 0.3);
        assert!(a.low < 0.3 && 0.3 < a.high, "{a:?}");
        // Normal approximation: half-width ≈ 1.96·sqrt(p(1−p)/n) = 0.0449.
        let half = (a.high - a.low) / 2.0;
        assert!((half - 0.0449).abs() < 0.006, "{a:?}");
        // A constant has a zero-width interval.
        let k = mean_interval(&[0.5; 10], 100, 0.9, 1).unwrap();
        assert_eq!((k.low, k.high), (0.5, 0.5));
        assert!(mean_interval(&[], 10, 0.9, 1).is_err() && mean_interval(&[1.0], 10, 1.0, 1).is_err());
    }

    #[test]
    fn ratio_intervals_resample_items_not_tokens() {
        // 200 sentences: half with 3 of 4 tokens right, half with 1 of 2: LAS = (300 + 100) / (400 + 200).
        let items: Vec<(f64, f64)> = (0..200).map(|i| if i % 2 == 0 { (3.0, 4.0) } else { (1.0, 2.0) }).collect();
        let a = ratio_interval(&items, 1000, 0.95, 5).unwrap();
        assert!((a.estimate - 400.0 / 600.0).abs() < 1e-12);
        assert!(a.low < a.estimate && a.estimate < a.high, "{a:?}");
        assert_eq!(a, ratio_interval(&items, 1000, 0.95, 5).unwrap());
        // Identical items leave no spread; an all-zero denominator is 0, not NaN.
        let k = ratio_interval(&[(1.0, 2.0); 20], 100, 0.95, 1).unwrap();
        assert_eq!((k.estimate, k.low, k.high), (0.5, 0.5, 0.5));
        assert_eq!(ratio_interval(&[(0.0, 0.0); 3], 10, 0.95, 1).unwrap().estimate, 0.0);
        assert!(ratio_interval(&[], 10, 0.95, 1).is_err());
    }

    #[test]
    fn percentiles_follow_numpy_linear() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&s, 0.5), 2.5);
        assert_eq!(percentile(&s, 0.0), 1.0);
        assert!((percentile(&s, 0.9) - 3.7).abs() < 1e-12);
    }

    #[test]
    fn word_intervals_use_per_word_outcomes() {
        let e = WordEval {
            precision: [0.5, 0.75, 1.0],
            mrr: 0.0,
            n_evaluated: 4,
            n_dict_sources: 4,
            coverage: 1.0,
            hits: vec![[true, true, true], [false, true, true], [false, false, true], [true, true, true]],
            ranks: vec![1, 2, 8, 1],
        };
        let [p1, p5, p10, mrr] = word_intervals(&e, 500, 0.9, 3).unwrap();
        assert_eq!((p1.estimate, p5.estimate, p10.estimate), (0.5, 0.75, 1.0));
        assert_eq!((p10.low, p10.high), (1.0, 1.0));
        assert!((mrr.estimate - (1.0 + 0.5 + 0.125 + 1.0) / 4.0).abs() < 1e-12);
        assert!(p1.low < 0.5 && p1.high > 0.5);
    }
}
