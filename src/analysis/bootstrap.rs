//! Percentile bootstrap confidence intervals (Efron & Tibshirani 1993, ch. 13) for metrics that are means over
//! source words (P@k, MRR): resample the per-word values with replacement `resamples` times, take the mean of
//! each resample, and report the `(1−level)/2` and `(1+level)/2` percentiles of those means (numpy's default
//! linear interpolation between order statistics). The generator is SplitMix64 (Steele, Lea & Flood 2014)
//! seeded by the caller, so an interval is reproducible bit for bit on every platform.
//!
//! **All items equal.** Every resample is then the same, so the percentile interval has zero width (0 correct of 41
//! words would give `[0, 0]`). There the interval comes from the items' range `[lo, hi]` instead, which the caller
//! states (`[0, 1]` for hits and reciprocal ranks, `[−1, 1]` for paired differences of hits). With w = hi − lo and
//! b = 1 − (α/2)^{1/n}, α = 1 − level: items all at `lo` give `[lo, lo + w·b]`, all at `hi` give `[hi − w·b, hi]` —
//! the exact binomial (Clopper–Pearson 1934) interval of 0 of n and n of n, and a valid bound for any item in the
//! range, since P(X = lo) ≤ 1 − E(X − lo)/w. Items all at a c inside the range give `c ± m·b` with m = max(c − lo,
//! hi − c), by the same bound on |X − c| / m, clipped to the range. (0 of 41 at 95 %: `[0, 0.086]`.) A ratio of
//! sums is treated as per-item ratios in [0, 1] (F1, attachment scores, convert rates): when every item with a
//! positive denominator has the same ratio, the bound uses n = those items, each counted as one trial however many
//! tokens it holds — wider than a count over tokens, which would treat a sentence's tokens as independent.
//!
//! **Paired differences.** Two systems scored on the same test items are compared by resampling the items once and
//! scoring both on each resample (a paired bootstrap): the difference of means is the mean of per-item
//! differences (range `[−1, 1]` for hits; [`paired_mean_interval`]), and the difference of two ratios of sums is
//! [`ratio_difference_interval`]. When fewer than 30 items differ, the interval also has to agree with an exact
//! sign test ([`sign_test_guard`]).
//!
//! **Statistics without per-item form** (CKA of a sentence set): the caller recomputes the statistic on each
//! resample of the items ([`resample_indices`], the same draws for every statistic of one item set and seed, so they
//! stay paired) and [`replicate_interval`] takes the percentiles of those replicates, shifted by the bootstrap's
//! bias estimate (resampled CKA sits above CKA on all rows: duplicated rows).
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

/// Checks that `range` is `[low, high]` with finite low < high.
pub fn check_range(range: [f64; 2]) -> Result<()> {
    let [lo, hi] = range;
    if !lo.is_finite() || !hi.is_finite() || lo >= hi {
        return Err(Error::Invalid(format!("a range needs finite low < high, got [{lo}, {hi}]")));
    }
    Ok(())
}

/// The item indices of `resamples` bootstrap resamples of `n` items (each resample draws `n` indices with
/// replacement), flattened resample by resample: `[r₀ … ; r₁ …; …]`, `resamples · n` indices. The draws depend only
/// on `(n, resamples, seed)`, so every statistic computed on the same `n` items with the same seed is resampled
/// identically: statistics of one run on one item set are paired, and their differences can be bootstrapped from
/// the per-resample differences.
pub fn resample_indices(n: usize, resamples: usize, seed: u64) -> Result<Vec<usize>> {
    if n == 0 || resamples == 0 {
        return Err(Error::Invalid(format!("bootstrap resamples need items ({n}) and resamples ≥ 1 ({resamples})")));
    }
    let mut rng = SplitMix64(seed);
    Ok((0..n * resamples).map(|_| rng.below(n)).collect())
}

/// Bootstrap replicates of the means of several per-item series over the same items (one series per layer, say,
/// each `n` values for the same `n` test items): `out[s][r]` is the mean of series `s` on resample `r` of
/// [`resample_indices`]`(n, resamples, seed)`. Every series is resampled identically, so a statistic of the series'
/// means (a correlation across layers) can be recomputed per resample.
pub fn mean_replicates(series: &[Vec<f64>], resamples: usize, seed: u64) -> Result<Vec<Vec<f64>>> {
    let n = series.first().map_or(0, Vec::len);
    if let Some((s, row)) = series.iter().enumerate().find(|(_, row)| row.len() != n) {
        return Err(Error::Invalid(format!(
            "mean replicates need series over the same items: series 0 has {n} values, series {s} has {}",
            row.len()
        )));
    }
    if let Some(v) = series.iter().flatten().find(|v| !v.is_finite()) {
        return Err(Error::Invalid(format!("mean replicates: an item is not a finite number ({v})")));
    }
    let draws = resample_indices(n, resamples, seed)?;
    Ok(series
        .iter()
        .map(|row| draws.chunks(n).map(|ix| ix.iter().map(|&i| row[i]).sum::<f64>() / n as f64).collect())
        .collect())
}

/// Interval of a statistic from its bootstrap `replicates` (the statistic recomputed on each resample of the items,
/// e.g. CKA of resampled sentences) and `estimate` (the statistic on all items): the `(1−level)/2` and `(1+level)/2`
/// percentiles of the replicates, shifted by the bootstrap's bias estimate `mean(replicates) − estimate`.
///
/// The shift matters for statistics whose value depends on how many distinct items they see: a resample repeats
/// rows and keeps about 63 % distinct ones, so resampled CKA sits above CKA on all rows (at 24 sentences of width 32
/// the whole percentile interval lay above the estimate). Shifted, the interval is one for the statistic's mean at
/// this number of items (the quantity two CKAs over the same sentences compare), with the replicates' spread and
/// shape. For a statistic without that dependence (a mean) the shift is about 0 and this is the percentile interval.
pub fn replicate_interval(estimate: f64, replicates: &[f64], level: f64) -> Result<Interval> {
    if replicates.is_empty() || !(level > 0.0 && level < 1.0) {
        return Err(Error::Invalid(format!(
            "a replicate interval needs replicates ({}) and a level in (0, 1) ({level})",
            replicates.len()
        )));
    }
    if let Some(v) = replicates.iter().find(|v| !v.is_finite()) {
        return Err(Error::Invalid(format!("a bootstrap replicate is not a finite number ({v})")));
    }
    if !estimate.is_finite() {
        return Err(Error::Invalid(format!(
            "the estimate of a replicate interval is not a finite number ({estimate})"
        )));
    }
    let mut sorted = replicates.to_vec();
    sorted.sort_by(f64::total_cmp);
    let bias = sorted.iter().sum::<f64>() / sorted.len() as f64 - estimate;
    let tail = (1.0 - level) / 2.0;
    Ok(Interval {
        estimate,
        low: percentile(&sorted, tail) - bias,
        high: percentile(&sorted, 1.0 - tail) - bias,
        level,
    })
}

/// Percentile bootstrap interval of the mean of `values`, each in `range` (checked; see the module docs for why
/// the range matters).
pub fn mean_interval(values: &[f64], range: [f64; 2], resamples: usize, level: f64, seed: u64) -> Result<Interval> {
    if values.is_empty() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return Err(Error::Invalid(format!(
            "bootstrap needs values ({}), resamples ≥ 1 ({resamples}) and a level in (0, 1) ({level})",
            values.len()
        )));
    }
    check_range(range)?;
    let [lo, hi] = range;
    if let Some(v) = values.iter().find(|&&v| !(lo <= v && v <= hi)) {
        return Err(Error::Invalid(format!("item {v} lies outside its stated range [{lo}, {hi}]")));
    }
    let n = values.len();
    let estimate = values.iter().sum::<f64>() / n as f64;
    if let Some(exact) = all_equal_bound(values.iter().copied(), range, level) {
        return Ok(exact);
    }
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
    let n = items.len();
    let (num, den) = items.iter().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let per_item = items.iter().filter(|&&(_, y)| y > 0.0).map(|&(x, y)| x / y);
    let empty_items_add_nothing = items.iter().all(|&(x, y)| y > 0.0 || x == 0.0);
    if empty_items_add_nothing && per_item.clone().all(|r| (0.0..=1.0).contains(&r)) {
        if let Some(exact) = all_equal_bound(per_item, [0.0, 1.0], level) {
            return Ok(exact);
        }
    }
    let mut rng = SplitMix64(seed);
    let mut stats: Vec<f64> = (0..resamples)
        .map(|_| {
            let (a, b) = (0..n).fold((0.0, 0.0), |(a, b), _| {
                let (x, y) = items[rng.below(n)];
                (a + x, b + y)
            });
            ratio_or_zero(a, b)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Ok(Interval {
        estimate: ratio_or_zero(num, den),
        low: percentile(&stats, tail),
        high: percentile(&stats, 1.0 - tail),
        level,
    })
}

/// Paired percentile bootstrap interval of a difference of two ratios of sums on the same items,
/// `Σ a.num_i / Σ a.den_i − Σ b.num_i / Σ b.den_i`: each resample draws item indices once and sums both systems
/// over the same draws (Koehn 2004, *Statistical Significance Tests for Machine Translation Evaluation*; Efron &
/// Tibshirani 1993, ch. 13). Used to compare two models' span F1 or LAS on one test set: the items' shared
/// difficulty cancels, so the interval is narrower than two separate intervals would allow. Item `i` of `a` and of
/// `b` must be the same test item. A resample whose denominators sum to zero on either side has no difference and
/// is not counted; a side whose denominators are all 0 has no ratio, and the difference then gets the whole range
/// `[−1, 1]` as its interval. When every item is scored identically by both systems (the same numerator and denominator), the
/// difference is 0 in every resample; the interval is then the bound of [`all_equal_bound`] on `[−1, 1]`, over the
/// items with a denominator, rather than `[0, 0]`. The interval passes through [`sign_test_guard`].
pub fn ratio_difference_interval(
    a: &[(f64, f64)],
    b: &[(f64, f64)],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Result<Interval> {
    if a.is_empty() || a.len() != b.len() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return Err(Error::Invalid(format!(
            "a paired bootstrap needs the same items on both sides ({} and {}), resamples ≥ 1 ({resamples}) and a \
             level in (0, 1) ({level})",
            a.len(),
            b.len()
        )));
    }
    let sums = |xs: &[(f64, f64)]| xs.iter().fold((0.0, 0.0), |(s, t), &(x, y)| (s + x, t + y));
    let ((an, ad), (bn, bd)) = (sums(a), sums(b));
    let estimate = ratio_or_zero(an, ad) - ratio_or_zero(bn, bd);
    // A side with no denominator at all has no ratio (a convert rate with every prediction in both token sets):
    // the difference is undefined, and its interval is the whole range, so no check can rest on it.
    let undefined = Interval { estimate, low: -1.0, high: 1.0, level };
    if ad == 0.0 || bd == 0.0 {
        return Ok(undefined);
    }
    let scored: Vec<usize> = (0..a.len()).filter(|&i| a[i].1 > 0.0 || b[i].1 > 0.0).collect();
    if scored.iter().all(|&i| a[i] == b[i]) {
        let zeros = scored.iter().map(|_| 0.0);
        let exact =
            all_equal_bound(zeros, [-1.0, 1.0], level).unwrap_or(Interval { estimate, low: -1.0, high: 1.0, level });
        return Ok(Interval { estimate, ..exact });
    }
    let n = a.len();
    let mut rng = SplitMix64(seed);
    let mut stats: Vec<f64> = (0..resamples)
        .filter_map(|_| {
            let mut s = [0.0; 4];
            for _ in 0..n {
                let i = rng.below(n);
                s[0] += a[i].0;
                s[1] += a[i].1;
                s[2] += b[i].0;
                s[3] += b[i].1;
            }
            (s[1] > 0.0 && s[3] > 0.0).then(|| s[0] / s[1] - s[2] / s[3])
        })
        .collect();
    if stats.is_empty() {
        return Ok(undefined);
    }
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let boot = Interval { estimate, low: percentile(&stats, tail), high: percentile(&stats, 1.0 - tail), level };
    let per_item: Vec<f64> =
        a.iter().zip(b).map(|(&(x, y), &(u, v))| ratio_or_zero(x, y) - ratio_or_zero(u, v)).collect();
    Ok(sign_test_guard(&per_item, boot))
}

/// Items that differ below which a paired bootstrap is not trusted alone (see [`sign_test_guard`]).
pub const FEW_DIFFERING_ITEMS: usize = 30;

/// A paired difference's interval, checked against an exact sign test when few items differ. With `k` items that
/// differ, all in one direction, a resample misses all of them with probability about `e^{−k}`, so the percentile
/// bootstrap excludes 0 from `k = 4` on, where the exact two-sided sign test gives p = 0.125. So when fewer than
/// [`FEW_DIFFERING_ITEMS`] per-item differences are non-zero and the sign test over them does not reject at
/// `1 − level`, the interval is widened to hold 0: it shows a difference only when both agree.
pub fn sign_test_guard(per_item_differences: &[f64], interval: Interval) -> Interval {
    let up = per_item_differences.iter().filter(|&&d| d > 0.0).count();
    let down = per_item_differences.iter().filter(|&&d| d < 0.0).count();
    if up + down >= FEW_DIFFERING_ITEMS || sign_test_p(up, down) < 1.0 - interval.level {
        return interval;
    }
    Interval { low: interval.low.min(0.0), high: interval.high.max(0.0), ..interval }
}

/// Exact two-sided sign test: `min(1, 2 · P(X ≤ min(up, down)))` with `X ~ Binomial(up + down, 1/2)`.
pub fn sign_test_p(up: usize, down: usize) -> f64 {
    let m = up + down;
    let k = up.min(down);
    let (mut term, mut tail) = (0.5f64.powi(m as i32), 0.0);
    for j in 0..=k {
        tail += term;
        term *= (m - j) as f64 / (j + 1) as f64;
    }
    (2.0 * tail).min(1.0)
}

/// Paired percentile bootstrap interval of a mean difference from its per-item differences `d_i = a_i − b_i` (each
/// in `range`): [`mean_interval`], then [`sign_test_guard`].
pub fn paired_mean_interval(
    differences: &[f64],
    range: [f64; 2],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Result<Interval> {
    let boot = mean_interval(differences, range, resamples, level, seed)?;
    Ok(sign_test_guard(differences, boot))
}

/// `num / den`, or 0 when `den` is 0 (an empty resample or item).
fn ratio_or_zero(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// The interval of items that all equal one value in `range`, else `None` (see the module docs).
fn all_equal_bound(mut items: impl Iterator<Item = f64>, range: [f64; 2], level: f64) -> Option<Interval> {
    let c = items.next()?;
    let mut n = 1;
    for v in items {
        if v != c {
            return None;
        }
        n += 1;
    }
    let [lo, hi] = range;
    let b = 1.0 - ((1.0 - level) / 2.0).powf(1.0 / n as f64);
    let m = (c - lo).max(hi - c);
    let (low, high) = if c == lo {
        (lo, lo + (hi - lo) * b)
    } else if c == hi {
        (hi - (hi - lo) * b, hi)
    } else {
        ((c - m * b).max(lo), (c + m * b).min(hi))
    };
    Some(Interval { estimate: c, low, high, level })
}

/// Intervals for P@1, P@5, P@10 and MRR of one direction, resampling the evaluated source words (the same
/// resamples for every metric, so the four intervals come from one seed).
pub fn word_intervals(eval: &WordEval, resamples: usize, level: f64, seed: u64) -> Result<[Interval; 4]> {
    let col = |j: usize| eval.hits.iter().map(|h| if h[j] { 1.0 } else { 0.0 }).collect::<Vec<f64>>();
    let rr: Vec<f64> = eval.ranks.iter().map(|&r| 1.0 / r as f64).collect();
    Ok([
        mean_interval(&col(0), [0.0, 1.0], resamples, level, seed)?,
        mean_interval(&col(1), [0.0, 1.0], resamples, level, seed)?,
        mean_interval(&col(2), [0.0, 1.0], resamples, level, seed)?,
        mean_interval(&rr, [0.0, 1.0], resamples, level, seed)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resample_indices_are_seeded_in_range_and_shared_by_equal_inputs() {
        let a = resample_indices(7, 50, 3).unwrap();
        assert_eq!(a.len(), 350);
        assert!(a.iter().all(|&i| i < 7));
        assert_eq!(a, resample_indices(7, 50, 3).unwrap());
        assert_ne!(a, resample_indices(7, 50, 4).unwrap());
        // Every item is drawn somewhere in 350 draws of 7 (a resampler stuck on a few items would fail).
        assert!((0..7).all(|i| a.contains(&i)));
        assert!(resample_indices(0, 5, 1).is_err() && resample_indices(5, 0, 1).is_err());
    }

    #[test]
    fn mean_replicates_resample_every_series_with_the_same_draws() {
        // Series 1 is series 0 plus 10 and series 2 is its negation: on shared draws, every resample's means keep
        // those relations exactly (independent draws would break them).
        let base = vec![0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0];
        let series = vec![base.clone(), base.iter().map(|v| v + 10.0).collect(), base.iter().map(|v| -v).collect()];
        let reps = mean_replicates(&series, 200, 5).unwrap();
        assert_eq!((reps.len(), reps[0].len()), (3, 200));
        for ((a, b), c) in reps[0].iter().zip(&reps[1]).zip(&reps[2]) {
            assert!((b - a - 10.0).abs() < 1e-12 && (c + a).abs() < 1e-12);
        }
        // The draws are resample_indices': resample 0's mean is the mean of its first n draws.
        let draws = resample_indices(9, 200, 5).unwrap();
        assert_eq!(reps[0][0], draws[..9].iter().map(|&i| base[i]).sum::<f64>() / 9.0);
        // They vary (a resampler that returned the items themselves would give 5/9 every time) and are seeded.
        assert!(reps[0].iter().any(|&m| (m - 5.0 / 9.0).abs() > 1e-9));
        assert_eq!(reps, mean_replicates(&series, 200, 5).unwrap());
        assert!(mean_replicates(&[vec![1.0, 2.0], vec![1.0]], 10, 0).unwrap_err().to_string().contains("series 1"));
        assert!(mean_replicates(&[vec![f64::NAN]], 10, 0).is_err());
        assert!(mean_replicates(&[], 10, 0).is_err());
    }

    #[test]
    fn replicate_interval_takes_numpy_percentiles_of_the_replicates() {
        let reps: Vec<f64> = (0..=100).rev().map(|i| i as f64 / 100.0).collect();
        let i = replicate_interval(0.5, &reps, 0.95).unwrap();
        assert_eq!(i.estimate, 0.5);
        assert!((i.low - 0.025).abs() < 1e-12 && (i.high - 0.975).abs() < 1e-12, "{i:?}");
        // Replicates that sit 0.1 above the estimate on average: the percentiles move down by 0.1.
        let i = replicate_interval(0.4, &reps, 0.95).unwrap();
        assert!((i.low + 0.075).abs() < 1e-12 && (i.high - 0.875).abs() < 1e-12, "{i:?}");
        assert!(replicate_interval(0.5, &[0.1, f64::NAN], 0.95).is_err());
        assert!(replicate_interval(0.5, &[], 0.95).is_err());
    }

    const U: [f64; 2] = [0.0, 1.0];

    #[test]
    fn seeded_intervals_are_reproducible_and_bracket_the_estimate() {
        let values: Vec<f64> = (0..400).map(|i| if i % 10 < 3 { 1.0 } else { 0.0 }).collect();
        let a = mean_interval(&values, U, 2000, 0.95, 7).unwrap();
        let b = mean_interval(&values, U, 2000, 0.95, 7).unwrap();
        let c = mean_interval(&values, U, 2000, 0.95, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.estimate, 0.3);
        assert!(a.low < 0.3 && 0.3 < a.high, "{a:?}");
        // Normal approximation: half-width ≈ 1.96·sqrt(p(1−p)/n) = 0.0449.
        let half = (a.high - a.low) / 2.0;
        assert!((half - 0.0449).abs() < 0.006, "{a:?}");
        assert!(mean_interval(&[], U, 10, 0.9, 1).is_err() && mean_interval(&[1.0], U, 10, 1.0, 1).is_err());
        // Items outside their stated range, or a range that is not one, are refused.
        assert!(mean_interval(&[0.5, -0.5], U, 10, 0.9, 1).unwrap_err().to_string().contains("outside"));
        assert!(mean_interval(&[0.5], [1.0, 0.0], 10, 0.9, 1).is_err());
    }

    #[test]
    fn ratio_intervals_resample_items_not_tokens() {
        // 200 sentences: half with 3 of 4 tokens right, half with 1 of 2: LAS = (300 + 100) / (400 + 200).
        let items: Vec<(f64, f64)> = (0..200).map(|i| if i % 2 == 0 { (3.0, 4.0) } else { (1.0, 2.0) }).collect();
        let a = ratio_interval(&items, 1000, 0.95, 5).unwrap();
        assert!((a.estimate - 400.0 / 600.0).abs() < 1e-12);
        assert!(a.low < a.estimate && a.estimate < a.high, "{a:?}");
        assert_eq!(a, ratio_interval(&items, 1000, 0.95, 5).unwrap());
        // Identical items: the bound of the module docs around 0.5 (m = 0.5, n = 20); an all-zero denominator is 0.
        let k = ratio_interval(&[(1.0, 2.0); 20], 100, 0.95, 1).unwrap();
        let b = 1.0 - 0.025f64.powf(1.0 / 20.0);
        assert_eq!(k.estimate, 0.5);
        assert!((k.low - (0.5 - 0.5 * b)).abs() < 1e-12 && (k.high - (0.5 + 0.5 * b)).abs() < 1e-12, "{k:?}");
        assert_eq!(ratio_interval(&[(0.0, 0.0); 3], 10, 0.95, 1).unwrap().estimate, 0.0);
        assert!(ratio_interval(&[], 10, 0.95, 1).is_err());
    }

    #[test]
    fn paired_ratio_differences_resample_both_systems_on_the_same_items() {
        // Sentences of varied length and difficulty; a gains 0–2 tokens over b in each, with its own denominators
        // (F1-like: 2·tp + fp + fn differs between systems).
        let b: Vec<(f64, f64)> = (0..80).map(|i| ((i % 9) as f64, (10 + i % 7) as f64)).collect();
        let a: Vec<(f64, f64)> =
            b.iter().enumerate().map(|(i, &(x, y))| (x + (i % 3) as f64, y + (i % 2) as f64)).collect();
        let d = ratio_difference_interval(&a, &b, 1000, 0.95, 3).unwrap();
        let sum = |v: &[(f64, f64)]| v.iter().fold((0.0, 0.0), |(s, t), &(x, y)| (s + x, t + y));
        let ((an, ad), (bn, bd)) = (sum(&a), sum(&b));
        assert!((d.estimate - (an / ad - bn / bd)).abs() < 1e-12, "{d:?}");
        assert!(d.low > 0.0 && d.low < d.estimate && d.estimate < d.high, "{d:?}");
        assert_eq!(d, ratio_difference_interval(&a, &b, 1000, 0.95, 3).unwrap());
        // Independent resampling of the two sides (what pairing avoids) gives a much wider interval.
        let (ia, ib) = (ratio_interval(&a, 1000, 0.95, 3).unwrap(), ratio_interval(&b, 1000, 0.95, 7).unwrap());
        let independent = ((ia.high - ia.low).powi(2) + (ib.high - ib.low).powi(2)).sqrt();
        assert!(d.high - d.low < 0.6 * independent, "paired {d:?} vs independent width {independent}");
        assert!(ia.low < ib.high, "separate intervals overlap: {ia:?} {ib:?}");
        // Swapping the sides mirrors the interval.
        let m = ratio_difference_interval(&b, &a, 1000, 0.95, 3).unwrap();
        assert!((m.low + d.high).abs() < 1e-12 && (m.high + d.low).abs() < 1e-12, "{m:?} {d:?}");
        // Two systems that agree on every sentence: the exact bound on [−1, 1], not [0, 0]; items without a
        // denominator do not count.
        let mut with_empty = b.clone();
        with_empty.extend([(0.0, 0.0); 40]);
        let same = ratio_difference_interval(&with_empty, &with_empty, 1000, 0.95, 3).unwrap();
        let eighty = ratio_difference_interval(&b, &b, 1000, 0.95, 3).unwrap();
        assert_eq!((same.estimate, same.low, same.high), (0.0, eighty.low, eighty.high));
        assert!(same.low < -0.04 && same.high > 0.04, "{same:?}");
        // Equal per-item ratios but other denominators: the sums differ, so it is bootstrapped, and the estimate
        // lies in its interval.
        let b2 = [(1.0, 2.0), (3.0, 4.0)];
        let a2 = [(2.0, 4.0), (3.0, 4.0)];
        let w = ratio_difference_interval(&a2, &b2, 1000, 0.95, 1).unwrap();
        assert!(w.low <= w.estimate && w.estimate <= w.high && w.estimate < 0.0, "{w:?}");
        // A side without any denominator: undefined, the whole range.
        let none = ratio_difference_interval(&a[..3], &[(0.0, 0.0); 3], 100, 0.95, 1).unwrap();
        assert_eq!((none.low, none.high), (-1.0, 1.0));
        assert!(ratio_difference_interval(&a, &b[..79], 10, 0.95, 1).is_err());
        assert!(ratio_difference_interval(&[], &[], 10, 0.95, 1).is_err());
    }

    #[test]
    fn few_differing_items_need_the_sign_test_too() {
        assert!((sign_test_p(4, 0) - 0.125).abs() < 1e-12);
        assert!((sign_test_p(6, 0) - 0.03125).abs() < 1e-12);
        assert!((sign_test_p(3, 3) - 1.0).abs() < 1e-12);
        assert!((sign_test_p(9, 1) - 0.021484375).abs() < 1e-12);
        // 4 of 300 words gained, none lost: the bootstrap alone excludes 0, the sign test (p = 0.125) does not.
        let mut d = vec![0.0; 300];
        d[..4].fill(1.0);
        let boot = mean_interval(&d, [-1.0, 1.0], 1000, 0.95, 2).unwrap();
        assert!(boot.low > 0.0, "{boot:?}");
        let guarded = paired_mean_interval(&d, [-1.0, 1.0], 1000, 0.95, 2).unwrap();
        assert_eq!((guarded.low, guarded.high), (0.0, boot.high));
        // 8 of 8 (p = 0.008): both agree, the interval stands.
        d[..8].fill(1.0);
        assert!(paired_mean_interval(&d, [-1.0, 1.0], 1000, 0.95, 2).unwrap().low > 0.0);
        // Many differing items: the bootstrap alone.
        let many: Vec<f64> = (0..300)
            .map(|i| {
                if i % 3 == 0 {
                    1.0
                } else if i % 7 == 0 {
                    -1.0
                } else {
                    0.0
                }
            })
            .collect();
        assert_eq!(
            paired_mean_interval(&many, [-1.0, 1.0], 1000, 0.95, 2).unwrap(),
            mean_interval(&many, [-1.0, 1.0], 1000, 0.95, 2).unwrap()
        );
    }

    #[test]
    fn equal_items_get_the_exact_bound_of_their_range() {
        // 0 correct of 41: Clopper–Pearson upper 95 % bound 1 − 0.025^(1/41) = 0.0861, not a zero-width [0, 0].
        let z = mean_interval(&[0.0; 41], U, 1000, 0.95, 3).unwrap();
        assert_eq!((z.estimate, z.low), (0.0, 0.0));
        assert!((z.high - 0.0861).abs() < 1e-4, "{z:?}");
        let o = mean_interval(&[1.0; 41], U, 1000, 0.95, 3).unwrap();
        assert_eq!((o.estimate, o.high), (1.0, 1.0));
        assert!((o.low - (1.0 - 0.0861)).abs() < 1e-4, "{o:?}");
        // One item: 0 of 1 is [0, 0.975].
        assert!((mean_interval(&[0.0], U, 10, 0.95, 1).unwrap().high - 0.975).abs() < 1e-12);
        // Paired differences in [−1, 1], all 0 (two models right on the same items): 0 ± b, b for n = 41.
        let d = mean_interval(&[0.0; 41], [-1.0, 1.0], 1000, 0.95, 3).unwrap();
        assert!((d.low + z.high).abs() < 1e-12 && (d.high - z.high).abs() < 1e-12, "{d:?}");
        // A constant inside [0, 1]: c ± max(c, 1 − c)·b, clipped.
        let k = mean_interval(&[0.25; 41], U, 10, 0.95, 1).unwrap();
        assert!((k.low - (0.25 - 0.75 * z.high).max(0.0)).abs() < 1e-12, "{k:?}");
        assert!((k.high - (0.25 + 0.75 * z.high)).abs() < 1e-12, "{k:?}");
        // Ratios: every numerator 0 (convert rate of nothing converted) counts the items with a positive
        // denominator; every numerator equal to its denominator gives the lower bound.
        let r = ratio_interval(&[(0.0, 5.0), (0.0, 3.0), (0.0, 0.0), (0.0, 7.0)], 100, 0.95, 1).unwrap();
        assert!((r.high - (1.0 - 0.025f64.powf(1.0 / 3.0))).abs() < 1e-12 && r.low == 0.0, "{r:?}");
        let full = ratio_interval(&[(2.0, 2.0), (5.0, 5.0)], 100, 0.95, 1).unwrap();
        assert_eq!((full.estimate, full.high), (1.0, 1.0));
        assert!((full.low - 0.025f64.sqrt()).abs() < 1e-12);
        // A mix keeps the percentile bootstrap.
        let mix = mean_interval(&[0.0, 0.0, 1.0, 0.0], U, 1000, 0.95, 1).unwrap();
        assert_eq!(mix.low, 0.0);
        assert!(mix.high > 0.0 && mix.high <= 0.75);
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
        // Every word found within 10: the exact 90 % bound for 4 of 4, 0.05^(1/4) = 0.473.
        assert!((p10.low - 0.05f64.powf(0.25)).abs() < 1e-12 && p10.high == 1.0, "{p10:?}");
        assert!((mrr.estimate - (1.0 + 0.5 + 0.125 + 1.0) / 4.0).abs() < 1e-12);
        assert!(p1.low < 0.5 && p1.high > 0.5);
    }
}
