//! Per-item outcomes of a task's test set, in the form `results::score(KEY, SPEC)` takes
//! ([`crate::claims::ScoreSpec`]), so that a figure can put a bootstrap interval on every task score
//! (`src/claims/score.rs`). Every reported test score of [`crate::tasks::nli::transfer`], [`crate::tasks::frozen_nli::transfer`],
//! [`crate::tasks::ner::transfer`] and [`crate::tasks::parse::transfer`] comes with its items, and the items reproduce it exactly:
//!
//! | task | SPEC | score = |
//! |---|---|---|
//! | XNLI accuracy | `{"items": [1.0 or 0.0 per test pair]}` | mean of the items |
//! | NER span F1 | `{"ratio": [[2·tp, 2·tp + fp + fn] per sentence]}` | Σ 2·tp / Σ (2·tp + fp + fn) |
//! | LAS | `{"ratio": [[words with gold head and label, scored words] per sentence]}` | Σ correct / Σ scored |
//!
//! Span F1 = 2PR / (P + R) = 2·tp / (2·tp + fp + fn) = 2·correct / (predicted + gold) whenever it is not 0/0, and a
//! corpus with neither gold nor predicted spans scores 0 both ways (conlleval's convention, and the bootstrap's for a
//! zero denominator: [`crate::analysis::bootstrap::ratio_interval`]). LAS counts the words of
//! [`crate::tasks::parse::metrics::attachment_scores`] (punctuation policy applied; words dropped by truncation scored as
//! missed). Values are fractions, not percentages: a figure adds `scale: 100.0` and the chance level itself.
use serde::{Deserialize, Serialize};

/// One test set's per-item outcomes: `{"items": [...]}` (mean) or `{"ratio": [[num, den], ...]}` (ratio of sums).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ItemScores {
    /// Per-item values whose mean is the score.
    Items(Vec<f64>),
    /// Per-item `[numerator, denominator]` whose ratio of sums is the score.
    Ratio(Vec<[f64; 2]>),
}

impl ItemScores {
    /// 1.0 for each correct item, 0.0 for each wrong one (accuracy).
    pub fn hits(correct: &[bool]) -> Self {
        ItemScores::Items(correct.iter().map(|&c| if c { 1.0 } else { 0.0 }).collect())
    }

    /// Per-item `(numerator, denominator)` counts (span F1, attachment scores).
    pub fn counts(pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        ItemScores::Ratio(pairs.into_iter().map(|(n, d)| [n as f64, d as f64]).collect())
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            ItemScores::Items(v) => v.len(),
            ItemScores::Ratio(v) => v.len(),
        }
    }

    /// True when there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The score the items stand for: the mean of the values, or Σ num / Σ den (0 when Σ den = 0, and 0 for no
    /// items).
    pub fn estimate(&self) -> f64 {
        match self {
            ItemScores::Items(v) if v.is_empty() => 0.0,
            ItemScores::Items(v) => v.iter().sum::<f64>() / v.len() as f64,
            ItemScores::Ratio(v) => {
                let (n, d) = v.iter().fold((0.0, 0.0), |(a, b), p| (a + p[0], b + p[1]));
                if d == 0.0 {
                    0.0
                } else {
                    n / d
                }
            }
        }
    }

    /// The items of several runs on the same test set pooled item by item: values averaged (the mean of the runs'
    /// accuracies), numerators and denominators averaged (Σ over runs of the numerators over Σ of the
    /// denominators: the runs' mean when their denominators agree, as LAS's scored words do; for span F1, whose
    /// denominators differ between runs, the pooled F1 of the runs). `None` when the runs differ in kind or length.
    pub fn pool(runs: &[&ItemScores]) -> Option<ItemScores> {
        let first = runs.first()?;
        let k = runs.len() as f64;
        match first {
            ItemScores::Items(v0) => {
                let mut acc = vec![0.0; v0.len()];
                for r in runs {
                    let ItemScores::Items(v) = r else { return None };
                    if v.len() != acc.len() {
                        return None;
                    }
                    acc.iter_mut().zip(v).for_each(|(a, x)| *a += x);
                }
                Some(ItemScores::Items(acc.into_iter().map(|a| a / k).collect()))
            }
            ItemScores::Ratio(v0) => {
                let mut acc = vec![[0.0, 0.0]; v0.len()];
                for r in runs {
                    let ItemScores::Ratio(v) = r else { return None };
                    if v.len() != acc.len() {
                        return None;
                    }
                    acc.iter_mut().zip(v).for_each(|(a, x)| {
                        a[0] += x[0];
                        a[1] += x[1];
                    });
                }
                Some(ItemScores::Ratio(acc.into_iter().map(|a| [a[0] / k, a[1] / k]).collect()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::ScoreSpec;

    /// The one-seed score `results::score` makes of `items` (the claims module's bootstrap).
    fn scored(items: &ItemScores) -> f64 {
        let spec: ScoreSpec = serde_json::from_value(serde_json::to_value(items).unwrap()).unwrap();
        spec.score("k", 1).unwrap().estimate
    }

    #[test]
    fn items_serialise_as_score_specs_and_reproduce_their_estimate() {
        let acc = ItemScores::hits(&[true, false, true, true]);
        assert_eq!(serde_json::to_value(&acc).unwrap(), serde_json::json!({ "items": [1.0, 0.0, 1.0, 1.0] }));
        assert_eq!((acc.estimate(), scored(&acc)), (0.75, 0.75));
        let f1 = ItemScores::counts([(2, 3), (0, 0), (0, 2)]);
        assert_eq!(
            serde_json::to_value(&f1).unwrap(),
            serde_json::json!({ "ratio": [[2.0, 3.0], [0.0, 0.0], [0.0, 2.0]] })
        );
        assert_eq!((f1.estimate(), scored(&f1)), (0.4, 0.4));
        assert_eq!(ItemScores::counts([(0, 0)]).estimate(), 0.0);
        let back: ItemScores = serde_json::from_value(serde_json::json!({ "ratio": [[1.0, 2.0]] })).unwrap();
        assert_eq!(back, ItemScores::Ratio(vec![[1.0, 2.0]]));
        assert!(serde_json::from_value::<ItemScores>(serde_json::json!({ "estimate": 0.5 })).is_err());
    }

    #[test]
    fn pooling_averages_accuracies_and_pools_ratios() {
        let (a, b) = (ItemScores::hits(&[true, false, false, false]), ItemScores::hits(&[true, true, false, true]));
        let p = ItemScores::pool(&[&a, &b]).unwrap();
        assert_eq!(p, ItemScores::Items(vec![1.0, 0.5, 0.0, 0.5]));
        assert_eq!(p.estimate(), (a.estimate() + b.estimate()) / 2.0);
        // Equal denominators (LAS): the mean of the runs' scores.
        let (c, d) = (ItemScores::counts([(1, 4), (2, 2)]), ItemScores::counts([(3, 4), (0, 2)]));
        assert!((ItemScores::pool(&[&c, &d]).unwrap().estimate() - (c.estimate() + d.estimate()) / 2.0).abs() < 1e-12);
        // Unequal denominators (span F1): the pooled ratio.
        let (e, f) = (ItemScores::counts([(2, 2)]), ItemScores::counts([(0, 6)]));
        assert_eq!(ItemScores::pool(&[&e, &f]).unwrap().estimate(), 0.25);
        assert!(ItemScores::pool(&[&a, &c]).is_none());
        assert!(ItemScores::pool(&[&a, &ItemScores::hits(&[true])]).is_none());
        assert!(ItemScores::pool(&[]).is_none());
    }
}
