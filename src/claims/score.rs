//! A score with its uncertainty, as a figure record stores it, and how per-seed scores combine.
//!
//! - **One seed.** The interval is a 95 % percentile bootstrap over the test items (1,000 resamples, seeded by the
//!   run's seed and the score's key; [`crate::analysis::bootstrap`]): the mean of per-item values (accuracy,
//!   P@1, reciprocal rank) or a ratio of per-item sums (span F1 from per-sentence `2·tp` over `2·tp + fp + fn`,
//!   LAS from per-sentence correct over tokens). Items that are all equal (0 correct of 41 words) would give a
//!   zero-width bootstrap; they get the exact bound of their range instead (`range`, `[0, 1]` unless the script
//!   says otherwise, e.g. `[−1, 1]` for paired differences; [`crate::analysis::bootstrap`]). A statistic that is
//!   not a mean over items (CKA of a whole sentence set) gets its interval from replicates the script computes on
//!   bootstrap resamples of the items (`estimate` with `replicates`: their 2.5th and 97.5th percentiles shifted by
//!   the bootstrap's bias estimate, [`crate::analysis::bootstrap::replicate_interval`],
//!   [`crate::analysis::cka_bootstrap`]); without them it has no interval at one seed (`interval: none`), and a
//!   claim that rests on it stays inconclusive until seeds give it one.
//! - **N ≥ 2 seeds** (`figure ID --seeds N`: models trained per seed). The estimate is the mean of the per-seed
//!   estimates. The interval is the wider, on each side, of (a) the seed interval, mean ± t₀.₉₇₅,N−1 · sd / √N
//!   (Student t over the per-seed estimates), and (b) the per-seed bootstrap intervals averaged and centred on the
//!   mean. (a) carries training variance, (b) test-set variance; taking the wider side of each is conservative.
//!   A chance level that differs by seed (P@1 among a seed-dependent candidate set) combines to the highest.
//!   The combined interval is then cut to the score's range where it has one (`range`: a rate cannot leave
//!   [0, 100] %): the mean of three seeds 0.2, 0.9, 0.9 with t₀.₉₇₅,₂ = 4.30 would otherwise read [−0.34, 1.67].
//!   The mean lies in the range, so cutting drops only values the score cannot take.
//! - **Paired differences** ([`ScoreSpec::difference`], `results::difference(KEY, LEFT, RIGHT)`): two models scored
//!   on the same test items are compared through the score of their difference, bootstrapped over the items with
//!   one draw per resample for both sides ([`crate::analysis::bootstrap`]), so the variance the two share (hard
//!   and easy sentences) cancels. A claim then checks `difference > 0` ([`super::rule`]), which resolves gaps that
//!   two separate 95 % intervals cannot (their non-overlap is a test at about p < 0.006 for independent estimates). At N ≥ 2 seeds the
//!   per-seed differences combine like any score (models trained per seed, so seed variance is in the interval).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::bootstrap::{
    check_range, mean_interval, paired_mean_interval, ratio_difference_interval, ratio_interval, replicate_interval,
};
use crate::error::{Error, Result};

/// Bootstrap resamples of every score.
pub const RESAMPLES: usize = 1000;
/// Coverage of every interval.
pub const LEVEL: f64 = 0.95;

/// Where an interval comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalKind {
    /// Bootstrap over test items, one seed: percentiles of resampled means or ratios, or (a statistic with
    /// `replicates`) the replicates' percentiles shifted by their bias estimate.
    Bootstrap,
    /// Student t over seeds (the statistic has no per-item form).
    Seeds,
    /// Both: see the module docs.
    BootstrapAndSeeds,
    /// No interval: one seed of a statistic without per-item form (`low = high = estimate`).
    None,
}

/// One seed's estimate and interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedScore {
    pub seed: u64,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// A score of a figure: estimate, 95 % interval, and what they rest on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Score {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub interval: IntervalKind,
    /// Test items behind each seed's estimate (0 when the statistic is not over items).
    pub items: usize,
    /// The metric's chance level on the same scale (XNLI 33.3 %, the MRR of a random ranking, …), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chance: Option<f64>,
    /// Standard deviation over seeds (N ≥ 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd: Option<f64>,
    /// Every seed's estimate and interval.
    pub per_seed: Vec<SeedScore>,
    /// The values the score can take, on its final scale (items' stated range, `[0, 1]` for ratios of sums of
    /// parts; none for an estimate unless the script states one); the combined interval is cut to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// For a paired difference (`results::difference`): the keys of the two scores it is the difference of,
    /// `[left, right]` (left − right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference_of: Option<[String; 2]>,
}

impl Score {
    /// True when the score has a real interval (not [`IntervalKind::None`]).
    pub fn has_interval(&self) -> bool {
        self.interval != IntervalKind::None
    }

    /// True when the interval holds the chance level.
    pub fn at_chance(&self) -> bool {
        self.chance.is_some_and(|c| self.low <= c && c <= self.high)
    }

    /// `0.463 [0.441, 0.486]`, with `digits` decimals (no interval: the estimate alone and `(no interval)`).
    pub fn display(&self, digits: usize) -> String {
        if self.has_interval() {
            format!("{:.d$} [{:.d$}, {:.d$}]", self.estimate, self.low, self.high, d = digits)
        } else {
            format!("{:.d$} (no interval)", self.estimate, d = digits)
        }
    }
}

/// What a script hands over for one score (`results::score(KEY, SPEC)`): exactly one of `items`, `ratio` or
/// `estimate`, plus an optional chance level and a factor applied to everything (100 for percentages).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreSpec {
    /// Per-item values whose mean is the score.
    #[serde(default)]
    pub items: Option<Vec<f64>>,
    /// Per-item `[numerator, denominator]` whose ratio of sums is the score.
    #[serde(default)]
    pub ratio: Option<Vec<[f64; 2]>>,
    /// A statistic without per-item form (CKA): no interval at one seed unless `replicates` are given.
    #[serde(default)]
    pub estimate: Option<f64>,
    /// With `estimate`: the statistic recomputed on bootstrap resamples of its test items
    /// ([`crate::analysis::cka_bootstrap`]); the interval is their percentiles
    /// ([`crate::analysis::bootstrap::replicate_interval`]). Needs `resampled_items`.
    #[serde(default)]
    pub replicates: Option<Vec<f64>>,
    /// With `replicates`: how many test items each resample drew (the score's `items`).
    #[serde(default)]
    pub resampled_items: Option<usize>,
    /// The range every item lies in, before `scale` (default `[0, 1]`: hits, reciprocal ranks); items outside it are
    /// refused. It bounds the interval when every item is the same, and the interval combined over seeds. With
    /// `estimate` (no default) it states the statistic's range (CKA: `[0, 1]`) and the estimate is checked against it.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    #[serde(default)]
    pub chance: Option<f64>,
    /// Multiplies estimate and interval (not the chance level, which is given on the final scale).
    #[serde(default)]
    pub scale: Option<f64>,
}

impl ScoreSpec {
    /// The one-seed score of `key` at `seed` (see the module docs).
    pub fn score(&self, key: &str, seed: u64) -> Result<Score> {
        if self.range.is_some() && self.ratio.is_some() {
            return Err(Error::Invalid(format!(
                "score '{key}': range applies to items or an estimate; a ratio's range is [0, 1] when every item's \
                 numerator lies between 0 and its denominator"
            )));
        }
        if let Some(range) = self.range {
            check_range(range).map_err(|e| named(key, e))?;
        }
        if (self.replicates.is_some() || self.resampled_items.is_some())
            && !(self.estimate.is_some() && self.replicates.is_some() && self.resampled_items.is_some_and(|n| n > 0))
        {
            return Err(Error::Invalid(format!(
                "score '{key}': replicates go with an estimate and resampled_items (the test items each resample \
                 drew, ≥ 1)"
            )));
        }
        let given = [self.items.is_some(), self.ratio.is_some(), self.estimate.is_some()];
        if given.iter().filter(|&&g| g).count() != 1 {
            return Err(Error::Invalid(format!(
                "score '{key}': give exactly one of items (per-item values), ratio (per-item [num, den]) or estimate"
            )));
        }
        let k = self.scale.unwrap_or(1.0);
        if !k.is_finite() || k <= 0.0 {
            return Err(Error::Invalid(format!("score '{key}': scale must be a positive number, got {k}")));
        }
        let boot_seed = bootstrap_seed(seed, key);
        let (est, low, high, interval, items, range) = if let Some(v) = &self.items {
            let range = self.range.unwrap_or([0.0, 1.0]);
            let i = mean_interval(v, range, RESAMPLES, LEVEL, boot_seed).map_err(|e| named(key, e))?;
            (i.estimate, i.low, i.high, IntervalKind::Bootstrap, v.len(), Some(range))
        } else if let Some(r) = &self.ratio {
            let pairs = as_pairs(r);
            let i = ratio_interval(&pairs, RESAMPLES, LEVEL, boot_seed).map_err(|e| named(key, e))?;
            (
                i.estimate,
                i.low,
                i.high,
                IntervalKind::Bootstrap,
                pairs.len(),
                parts_in_range(&pairs).then_some([0.0, 1.0]),
            )
        } else {
            let e = self.estimate.unwrap_or(f64::NAN);
            if let Some([lo, hi]) = self.range {
                // Rounding slack: CKA of a representation with itself can read 1 + 1e-7 in f32.
                let slack = 1e-6 * (hi - lo);
                if !(lo - slack <= e && e <= hi + slack) {
                    return Err(Error::Invalid(format!(
                        "score '{key}': estimate {e} is outside its range [{lo}, {hi}]"
                    )));
                }
            }
            match &self.replicates {
                Some(reps) => {
                    let i = replicate_interval(e, reps, LEVEL).map_err(|err| named(key, err))?;
                    let (low, high) = match self.range {
                        Some([lo, hi]) => (i.low.clamp(lo, hi), i.high.clamp(lo, hi)),
                        None => (i.low, i.high),
                    };
                    // The interval holds the estimate (the verdict rule widens intervals about it): a very skewed
                    // set of replicates, or an estimate within the range's rounding slack, could leave it outside.
                    let (low, high) = (low.min(e), high.max(e));
                    (e, low, high, IntervalKind::Bootstrap, self.resampled_items.unwrap_or(0), self.range)
                }
                None => (e, e, e, IntervalKind::None, 0, self.range),
            }
        };
        if ![est, low, high].iter().all(|x| x.is_finite()) {
            return Err(Error::Invalid(format!("score '{key}': not a finite number ({est})")));
        }
        let (est, low, high) = (est * k, low * k, high * k);
        let range = range.map(|[lo, hi]| [lo * k, hi * k]);
        Ok(Score {
            estimate: est,
            low,
            high,
            interval,
            items,
            chance: self.chance,
            sd: None,
            per_seed: vec![SeedScore { seed, estimate: est, low, high }],
            range,
            difference_of: None,
        })
    }

    /// The one-seed score of `key` = `self − other`, where item `i` of both specs is the same test item (two
    /// models on one test set), with a **paired** bootstrap: each resample draws the items once for both sides
    /// (see the module docs). Both specs must be per-item (`items`, or `ratio`) of the same kind, length and
    /// scale; the difference has no chance level, and its range is the left range minus the right one (`[−1, 1]`
    /// before scaling for hits and for ratios of parts). `keys` names the two scores, as the record keeps them.
    ///
    /// Returns the score and, for two `items` specs, the per-item difference as a spec of its own (items
    /// `aᵢ − bᵢ`, that range, the same scale, no chance level), so that a difference can itself be differenced: a
    /// gain with full streams minus the gain with short ones, both on the same test items. A difference of ratios
    /// has none (it is not a mean of per-item values).
    pub fn difference(
        &self,
        other: &ScoreSpec,
        key: &str,
        seed: u64,
        keys: [&str; 2],
    ) -> Result<(Score, Option<ScoreSpec>)> {
        let err = |m: String| Error::Invalid(format!("difference '{key}' of '{}' and '{}': {m}", keys[0], keys[1]));
        let scale = self.scale.unwrap_or(1.0);
        if scale != other.scale.unwrap_or(1.0) {
            return Err(err(format!(
                "the two scores have different scales ({scale} and {})",
                other.scale.unwrap_or(1.0)
            )));
        }
        let same_items = |n: usize, m: usize| {
            (n == m)
                .then_some(())
                .ok_or_else(|| err(format!("{n} items against {m}; a paired difference needs the same test items")))
        };
        let boot_seed = bootstrap_seed(seed, key);
        let (i, n, range, spec) = match (&self.items, &other.items, &self.ratio, &other.ratio) {
            (Some(a), Some(b), None, None) => {
                same_items(a.len(), b.len())?;
                let ([alo, ahi], [blo, bhi]) = (self.range.unwrap_or([0.0, 1.0]), other.range.unwrap_or([0.0, 1.0]));
                let range = [alo - bhi, ahi - blo];
                let items: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
                let i =
                    paired_mean_interval(&items, range, RESAMPLES, LEVEL, boot_seed).map_err(|e| err(e.to_string()))?;
                let spec =
                    ScoreSpec { items: Some(items), range: Some(range), scale: self.scale, ..Default::default() };
                (i, a.len(), Some(range), Some(spec))
            }
            (None, None, Some(a), Some(b)) => {
                same_items(a.len(), b.len())?;
                let (a, b) = (as_pairs(a), as_pairs(b));
                let i =
                    ratio_difference_interval(&a, &b, RESAMPLES, LEVEL, boot_seed).map_err(|e| err(e.to_string()))?;
                (i, a.len(), (parts_in_range(&a) && parts_in_range(&b)).then_some([-1.0, 1.0]), None)
            }
            _ => {
                return Err(
                    err("both must be per-item scores of one kind (items and items, or ratio and ratio)".into()),
                )
            }
        };
        let (est, low, high) = (i.estimate * scale, i.low * scale, i.high * scale);
        if ![est, low, high].iter().all(|x| x.is_finite()) {
            return Err(err(format!("not a finite number ({est})")));
        }
        let score = Score {
            estimate: est,
            low,
            high,
            interval: IntervalKind::Bootstrap,
            items: n,
            chance: None,
            sd: None,
            per_seed: vec![SeedScore { seed, estimate: est, low, high }],
            range: range.map(|[lo, hi]| [lo * scale, hi * scale]),
            difference_of: Some([keys[0].to_string(), keys[1].to_string()]),
        };
        Ok((score, spec))
    }
}

/// The bootstrap seed of score `key` at run seed `seed`: FNV-1a of the key, so each score draws its own resamples.
fn bootstrap_seed(seed: u64, key: &str) -> u64 {
    seed ^ crate::text::corpus::fnv1a(0, key.as_bytes())
}

fn as_pairs(r: &[[f64; 2]]) -> Vec<(f64, f64)> {
    r.iter().map(|p| (p[0], p[1])).collect()
}

/// Every item's numerator lies between 0 and its denominator (F1, LAS, convert rates): the ratio lies in [0, 1].
fn parts_in_range(pairs: &[(f64, f64)]) -> bool {
    pairs.iter().all(|&(x, y)| 0.0 <= x && x <= y)
}

fn named(key: &str, e: Error) -> Error {
    Error::Invalid(format!("score '{key}': {e}"))
}

/// Two-sided 97.5 % quantile of Student's t with `df` degrees of freedom (1.96 beyond 30).
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    if df == 0 {
        f64::INFINITY
    } else {
        T.get(df - 1).copied().unwrap_or(1.96)
    }
}

/// Combines one score's runs at several seeds (each with one [`SeedScore`]) into one (see the module docs).
pub fn combine(key: &str, runs: &[Score]) -> Result<Score> {
    let Some(first) = runs.first() else {
        return Err(Error::Invalid(format!("score '{key}': no runs to combine")));
    };
    if runs.len() == 1 {
        return Ok(first.clone());
    }
    let kind_differs = |r: &Score| {
        r.interval != first.interval
            || r.chance.is_some() != first.chance.is_some()
            || r.range != first.range
            || r.difference_of != first.difference_of
    };
    if runs.iter().any(kind_differs) {
        return Err(Error::Invalid(format!(
            "score '{key}': the seeds disagree on its kind (interval, range, whether it has a chance level, or the \
             scores it is a difference of); a script must score the same way at every seed"
        )));
    }
    // A chance level that depends on the seed's candidates (1 / vocabulary of a seed's corpus): the highest, so the
    // at-chance test stays conservative.
    let chance = runs.iter().filter_map(|r| r.chance).reduce(f64::max);
    let per_seed: Vec<SeedScore> = runs.iter().flat_map(|r| r.per_seed.iter().cloned()).collect();
    let n = per_seed.len() as f64;
    let mean = per_seed.iter().map(|s| s.estimate).sum::<f64>() / n;
    let sd = (per_seed.iter().map(|s| (s.estimate - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = t975(per_seed.len() - 1) * sd / n.sqrt();
    let (mut low, mut high) = (mean - half, mean + half);
    let bootstrap = first.interval == IntervalKind::Bootstrap || first.interval == IntervalKind::BootstrapAndSeeds;
    if bootstrap {
        let below = per_seed.iter().map(|s| s.estimate - s.low).sum::<f64>() / n;
        let above = per_seed.iter().map(|s| s.high - s.estimate).sum::<f64>() / n;
        low = low.min(mean - below);
        high = high.max(mean + above);
    }
    if let Some([lo, hi]) = first.range {
        (low, high) = (low.max(lo), high.min(hi));
    }
    Ok(Score {
        estimate: mean,
        low,
        high,
        interval: if bootstrap { IntervalKind::BootstrapAndSeeds } else { IntervalKind::Seeds },
        items: first.items,
        chance,
        sd: Some(sd),
        per_seed,
        range: first.range,
        difference_of: first.difference_of.clone(),
    })
}

/// Combines every score of several runs of one script (one map per seed); every run must have the same keys.
pub fn combine_all(runs: &[BTreeMap<String, Score>]) -> Result<BTreeMap<String, Score>> {
    let Some(first) = runs.first() else { return Ok(BTreeMap::new()) };
    let mut out = BTreeMap::new();
    for key in first.keys() {
        let mut per: Vec<Score> = Vec::with_capacity(runs.len());
        for r in runs {
            per.push(r.get(key).cloned().ok_or_else(|| {
                Error::Invalid(format!("score '{key}' is missing at one seed; a script must give the same scores"))
            })?);
        }
        out.insert(key.clone(), combine(key, &per)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_items(v: Vec<f64>) -> ScoreSpec {
        ScoreSpec { items: Some(v), ..Default::default() }
    }

    #[test]
    fn one_seed_scores_bootstrap_their_items() {
        let v: Vec<f64> = (0..300).map(|i| if i % 3 == 0 { 1.0 } else { 0.0 }).collect();
        let s = ScoreSpec { scale: Some(100.0), chance: Some(33.3), ..spec_items(v) }.score("xnli-fr", 0).unwrap();
        assert!((s.estimate - 100.0 / 3.0).abs() < 1e-9);
        assert!(s.low < s.estimate && s.high > s.estimate && s.high - s.low > 5.0, "{s:?}");
        assert_eq!((s.interval, s.items), (IntervalKind::Bootstrap, 300));
        assert!(s.at_chance());
        // Another key draws other resamples; the same key and seed the same ones.
        let at = |key: &str| ScoreSpec { scale: Some(100.0), ..spec_items(s_items()) }.score(key, 0).unwrap();
        assert_eq!(at("xnli-fr"), at("xnli-fr"));
        assert_ne!((at("xnli-fr").low, at("xnli-fr").high), (at("xnli-ru").low, at("xnli-ru").high));
    }

    #[test]
    fn equal_items_keep_an_interval_from_their_range() {
        // 0 of 41 words: [0, 8.61] % rather than [0, 0]; stated ranges are checked and bound the interval.
        let z = ScoreSpec { scale: Some(100.0), ..spec_items(vec![0.0; 41]) }.score("words", 0).unwrap();
        assert_eq!((z.estimate, z.low, z.interval), (0.0, 0.0, IntervalKind::Bootstrap));
        assert!((z.high - 8.61).abs() < 0.01, "{z:?}");
        let diff = ScoreSpec { range: Some([-1.0, 1.0]), scale: Some(100.0), ..spec_items(vec![0.0; 41]) };
        let d = diff.score("gain", 0).unwrap();
        assert!((d.low + z.high).abs() < 1e-9 && (d.high - z.high).abs() < 1e-9, "{d:?}");
        let e = spec_items(vec![0.0, -1.0]).score("gain", 0).unwrap_err().to_string();
        assert!(e.contains("gain") && e.contains("outside"), "{e}");
        let ratio = ScoreSpec { ratio: Some(vec![[0.0, 1.0]]), range: Some([0.0, 1.0]), ..Default::default() };
        assert!(ratio.score("k", 0).unwrap_err().to_string().contains("items or an estimate"));
    }

    #[test]
    fn scores_carry_their_range_on_the_final_scale() {
        let hits = ScoreSpec { scale: Some(100.0), ..spec_items(vec![0.0, 1.0]) }.score("k", 0).unwrap();
        assert_eq!(hits.range, Some([0.0, 100.0]));
        let parts = ScoreSpec { ratio: Some(vec![[1.0, 2.0], [0.0, 0.0]]), ..Default::default() };
        assert_eq!(parts.score("k", 0).unwrap().range, Some([0.0, 1.0]));
        let over = ScoreSpec { ratio: Some(vec![[3.0, 2.0]]), ..Default::default() };
        assert_eq!(over.score("k", 0).unwrap().range, None);
        let cka = ScoreSpec { estimate: Some(0.4), range: Some([0.0, 1.0]), ..Default::default() };
        assert_eq!(cka.score("k", 0).unwrap().range, Some([0.0, 1.0]));
        assert_eq!(ScoreSpec { estimate: Some(0.4), ..Default::default() }.score("k", 0).unwrap().range, None);
        let outside = ScoreSpec { estimate: Some(1.2), range: Some([0.0, 1.0]), ..Default::default() };
        assert!(outside.score("cka", 0).unwrap_err().to_string().contains("outside its range"));
        let empty = ScoreSpec { estimate: Some(0.4), range: Some([1.0, 0.0]), ..Default::default() };
        assert!(empty.score("k", 0).unwrap_err().to_string().contains("low < high"));
    }

    #[test]
    fn combined_intervals_stay_in_the_range() {
        // Seeds 0.2, 0.9, 0.9: mean 0.667, t half-width 4.303 · 0.404 / √3 = 1.004, so [−0.34, 1.67] uncut.
        let seed = |s: u64, e: f64| {
            let v: Vec<f64> = (0..10).map(|i| if (i as f64) < e * 10.0 { 1.0 } else { 0.0 }).collect();
            spec_items(v).score("rate", s).unwrap()
        };
        let c = combine("rate", &[seed(0, 0.2), seed(1, 0.9), seed(2, 0.9)]).unwrap();
        assert!((c.estimate - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!((c.low, c.high), (0.0, 1.0), "{c:?}");
        // Without a range (an estimate that states none) the interval is the Student-t one.
        let free = |s: u64, e: f64| ScoreSpec { estimate: Some(e), ..Default::default() }.score("gap", s).unwrap();
        let g = combine("gap", &[free(0, 0.2), free(1, 0.9), free(2, 0.9)]).unwrap();
        assert!(g.low < -0.3 && g.high > 1.6, "{g:?}");
        // Seeds that state different ranges are one script scoring two ways.
        let wide = ScoreSpec { range: Some([-1.0, 1.0]), ..spec_items(vec![0.0, 1.0]) }.score("rate", 1).unwrap();
        assert!(combine("rate", &[seed(0, 0.5), wide]).unwrap_err().to_string().contains("range"));
    }

    #[test]
    fn paired_differences_cancel_what_the_two_sides_share() {
        // 400 XNLI-like items; b is right on 40 %, a on the same items plus 20 more (a 5-point gain).
        let b: Vec<f64> = (0..400).map(|i| if i % 5 < 2 { 1.0 } else { 0.0 }).collect();
        let mut a = b.clone();
        for i in (0..400).filter(|i| i % 5 == 2).take(20) {
            a[i] = 1.0;
        }
        let spec = |v: Vec<f64>| ScoreSpec { scale: Some(100.0), chance: Some(33.3), ..spec_items(v) };
        let (sa, sb) = (spec(a.clone()).score("a", 0).unwrap(), spec(b.clone()).score("b", 0).unwrap());
        assert!(sa.low < sb.high, "separate intervals overlap: {sa:?} {sb:?}");
        let (d, d_spec) = spec(a.clone()).difference(&spec(b.clone()), "a−b", 0, ["a", "b"]).unwrap();
        assert!((d.estimate - 5.0).abs() < 1e-9 && d.low > 0.0, "{d:?}");
        assert_eq!((d.chance, d.range, d.items), (None, Some([-100.0, 100.0]), 400));
        assert_eq!(d.difference_of, Some(["a".to_string(), "b".to_string()]));
        // Ratios (F1 from per-sentence counts) pair the same way.
        let r = |v: Vec<[f64; 2]>| ScoreSpec { ratio: Some(v), ..Default::default() };
        let rb: Vec<[f64; 2]> = (0..50).map(|i| [(i % 7) as f64, 8.0]).collect();
        let ra: Vec<[f64; 2]> = rb.iter().map(|p| [p[0] + 1.0, p[1]]).collect();
        let (rd, rd_spec) = r(ra.clone()).difference(&r(rb.clone()), "f1", 0, ["a", "b"]).unwrap();
        assert!((rd.estimate - 0.125).abs() < 1e-12 && rd.low > 0.0 && rd.range == Some([-1.0, 1.0]), "{rd:?}");
        // A difference of items is a spec of its own; one of ratios is not a mean of per-item values.
        assert!(d_spec.is_some() && rd_spec.is_none());
        // Refused: other items, other kinds, other scales, a statistic without items.
        let e = |x: Result<(Score, Option<ScoreSpec>)>| x.unwrap_err().to_string();
        assert!(e(spec(a.clone()).difference(&spec(b[..399].to_vec()), "k", 0, ["a", "b"])).contains("same test items"));
        assert!(e(spec(a.clone()).difference(&ScoreSpec { scale: Some(100.0), ..r(rb.clone()) }, "k", 0, ["a", "b"]))
            .contains("one kind"));
        assert!(e(spec(a.clone()).difference(&spec_items(b.clone()), "k", 0, ["a", "b"])).contains("scales"));
        let cka = ScoreSpec { estimate: Some(0.4), ..Default::default() };
        assert!(e(cka.difference(&cka, "k", 0, ["a", "b"])).contains("per-item"));
        // Seeds of a difference keep what it is a difference of.
        let (d1, _) = spec(a).difference(&spec(b), "a−b", 1, ["a", "b"]).unwrap();
        assert_eq!(combine("a−b", &[d.clone(), d1]).unwrap().difference_of, d.difference_of);
        let other = Score { difference_of: Some(["a".into(), "c".into()]), ..d.clone() };
        assert!(combine("a−b", &[d, other]).is_err());
    }

    #[test]
    fn an_item_difference_is_a_spec_of_its_own() {
        let a = ScoreSpec { scale: Some(100.0), ..spec_items(vec![1.0, 1.0, 0.0]) };
        let b = ScoreSpec { scale: Some(100.0), ..spec_items(vec![0.0, 1.0, 1.0]) };
        let spec_of = |l: &ScoreSpec, r: &ScoreSpec| l.difference(r, "k", 0, ["l", "r"]).unwrap().1.unwrap();
        let d = spec_of(&a, &b);
        assert_eq!(
            (d.items.as_deref(), d.range, d.scale, d.chance),
            (Some(&[1.0, 0.0, -1.0][..]), Some([-1.0, 1.0]), Some(100.0), None)
        );
        // Its difference with another difference spans twice the range, and scores like any paired difference.
        let (dd, dd_spec) = d.difference(&spec_of(&b, &a), "dd", 0, ["d", "e"]).unwrap();
        let dd_spec = dd_spec.unwrap();
        assert_eq!((dd_spec.items.as_deref(), dd_spec.range), (Some(&[2.0, 0.0, -2.0][..]), Some([-2.0, 2.0])));
        assert_eq!((dd.estimate, dd.range), (0.0, Some([-200.0, 200.0])));
    }

    fn s_items() -> Vec<f64> {
        (0..300).map(|i| ((i * 7) % 5) as f64 / 4.0).collect()
    }

    #[test]
    fn specs_must_name_one_kind() {
        assert!(ScoreSpec::default().score("k", 0).unwrap_err().to_string().contains("exactly one"));
        let both = ScoreSpec { items: Some(vec![1.0]), estimate: Some(1.0), ..Default::default() };
        assert!(both.score("k", 0).is_err());
        let cka = ScoreSpec { estimate: Some(0.42), ..Default::default() }.score("k", 0).unwrap();
        assert_eq!((cka.low, cka.high, cka.interval), (0.42, 0.42, IntervalKind::None));
        assert!(!cka.has_interval());
        assert!(ScoreSpec { estimate: Some(f64::NAN), ..Default::default() }.score("k", 0).is_err());
    }

    #[test]
    fn an_estimate_with_replicates_gets_their_percentiles_cut_to_its_range() {
        // Replicates 0.25 … 1.05, mean 0.65 = the estimate (no bias to shift by).
        let reps: Vec<f64> = (0..=100).map(|i| 0.25 + 0.8 * i as f64 / 100.0).collect();
        let spec = |reps: Option<Vec<f64>>, n: Option<usize>| ScoreSpec {
            estimate: Some(0.65),
            replicates: reps,
            resampled_items: n,
            range: Some([0.0, 1.0]),
            ..Default::default()
        };
        let s = spec(Some(reps.clone()), Some(2000)).score("cka", 0).unwrap();
        assert_eq!((s.estimate, s.interval, s.items), (0.65, IntervalKind::Bootstrap, 2000));
        assert!((s.low - 0.27).abs() < 1e-12, "{}", s.low);
        // The 97.5th percentile, 1.03, lies outside CKA's range and is cut to 1.
        assert_eq!(s.high, 1.0);
        assert!(s.has_interval());
        for bad in [spec(Some(reps.clone()), None), spec(None, Some(5)), spec(Some(reps), Some(0))] {
            assert!(bad.score("cka", 0).unwrap_err().to_string().contains("resampled_items"));
        }
        // Replicates almost all at the estimate but one far above: shifted by their mean, both percentiles fall
        // below the estimate, and the interval is widened to hold it.
        let mut skewed = vec![0.5; 999];
        skewed.push(10.0);
        let s = ScoreSpec { estimate: Some(0.5), replicates: Some(skewed), ..spec(None, Some(1000)) }
            .score("cka", 0)
            .unwrap();
        assert!(s.low < 0.5 && s.high == 0.5, "{} {}", s.low, s.high);
        let on_items = ScoreSpec {
            items: Some(vec![1.0]),
            replicates: Some(vec![1.0]),
            resampled_items: Some(1),
            ..Default::default()
        };
        assert!(on_items.score("k", 0).is_err());
    }

    #[test]
    fn seeds_combine_by_student_t_and_the_averaged_bootstrap() {
        let run = |seed: u64, e: f64| Score {
            estimate: e,
            low: e - 0.01,
            high: e + 0.01,
            interval: IntervalKind::Bootstrap,
            items: 100,
            chance: None,
            sd: None,
            per_seed: vec![SeedScore { seed, estimate: e, low: e - 0.01, high: e + 0.01 }],
            range: None,
            difference_of: None,
        };
        let c = combine("k", &[run(0, 0.40), run(1, 0.50), run(2, 0.60)]).unwrap();
        assert!((c.estimate - 0.5).abs() < 1e-12);
        assert!((c.sd.unwrap() - 0.1).abs() < 1e-12);
        // Seed half-width 4.303 · 0.1 / √3 = 0.2484 is wider than the bootstrap's 0.01.
        assert!((c.high - 0.5 - 4.303 * 0.1 / 3f64.sqrt()).abs() < 1e-9, "{c:?}");
        assert_eq!(c.interval, IntervalKind::BootstrapAndSeeds);
        assert_eq!(c.per_seed.len(), 3);
        // Identical seeds: the bootstrap side remains.
        let same = combine("k", &[run(0, 0.5), run(1, 0.5)]).unwrap();
        assert!((same.low - 0.49).abs() < 1e-12 && (same.high - 0.51).abs() < 1e-12);
        // A statistic without items gets a seed interval only.
        let none = |seed: u64, e: f64| Score {
            interval: IntervalKind::None,
            low: e,
            high: e,
            ..Score { per_seed: vec![SeedScore { seed, estimate: e, low: e, high: e }], ..run(seed, e) }
        };
        let s = combine("k", &[none(0, 0.3), none(1, 0.5)]).unwrap();
        assert_eq!(s.interval, IntervalKind::Seeds);
        assert!((s.high - 0.4 - 12.706 * 0.1414213562 / 2f64.sqrt()).abs() < 1e-6);
        assert!(combine("k", &[run(0, 0.5), none(1, 0.5)]).is_err());
        // Chance levels that differ by seed (candidate sets of seed-dependent corpora) combine to the highest.
        let at = |seed: u64, c: Option<f64>| Score { chance: c, ..run(seed, 0.5) };
        assert_eq!(combine("k", &[at(0, Some(0.02)), at(1, Some(0.05))]).unwrap().chance, Some(0.05));
        assert!(combine("k", &[at(0, Some(0.02)), at(1, None)]).is_err());
        assert!(combine_all(&[BTreeMap::from([("a".to_string(), run(0, 0.1))]), BTreeMap::new()]).is_err());
    }
}
