//! A small hyper-parameter grid with the studies' reporting rule: every setting (e.g. batch size × learning rate)
//! is fine-tuned from the same pre-trained weights, the settings are ranked by their **English dev** score (the only
//! data a zero-shot setting may select on), and the reported score of each language is the **mean over the best
//! `top` settings** (Wu, Conneau et al. 2020 §3: "we report the mean of the two best settings"; `top` = 2).
//!
//! Ties in the English dev score keep the grid's order (stable sort), so one grid gives one report.
//!
//! The report's per-item outcomes ([`GridReport::items_of_best`]) pool the best settings' items item by item
//! ([`ItemScores::pool`]): their estimate is `mean_of_best` for accuracy and LAS (whose denominators, the scored
//! words, are the same in every run), and the pooled span F1 of the best runs for NER.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tasks::items::ItemScores;
use crate::tasks::nli::transfer::MdsItems;

/// One setting's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridRun {
    /// The setting (the config fields it overrides).
    pub setting: serde_json::Map<String, serde_json::Value>,
    /// English dev score (model selection).
    pub en_dev: f64,
    /// Score per evaluation language.
    pub scores: BTreeMap<String, f64>,
    /// The task's whole result.
    pub result: serde_json::Value,
    /// The per-item outcomes behind `scores`, per language ([`crate::tasks::items`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub items: BTreeMap<String, ItemScores>,
    /// NLI with the mean-difference shift: the per-pair outcomes behind `result.mds`, per language.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mds_items: BTreeMap<String, MdsItems>,
}

/// The grid's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridReport {
    pub top: usize,
    /// Indices into `runs` of the best `top` settings by English dev score, best first.
    pub best: Vec<usize>,
    /// Mean score per language over the best settings.
    pub mean_of_best: BTreeMap<String, f64>,
    /// Mean English dev score over the best settings.
    pub en_dev_mean_of_best: f64,
    /// The best settings' per-item outcomes pooled item by item, per language (see the module docs).
    pub items_of_best: BTreeMap<String, ItemScores>,
    pub runs: Vec<GridRun>,
}

/// Every combination of the listed values, the first key varying slowest: `{lr: [1, 2], batch_size: [16, 32]}` →
/// 4 settings. Keys keep their order; an empty list is an error.
pub fn combinations(
    axes: &[(String, Vec<serde_json::Value>)],
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    let mut out = vec![serde_json::Map::new()];
    for (key, values) in axes {
        if values.is_empty() {
            return Err(Error::Invalid(format!("grid axis '{key}' has no values")));
        }
        out = out
            .into_iter()
            .flat_map(|base| {
                values.iter().map(move |v| {
                    let mut m = base.clone();
                    m.insert(key.clone(), v.clone());
                    m
                })
            })
            .collect();
    }
    Ok(out)
}

/// Runs `run` on every setting and reports the mean of the best `top` by English dev score.
pub fn run_grid(
    settings: Vec<serde_json::Map<String, serde_json::Value>>,
    top: usize,
    mut run: impl FnMut(&serde_json::Map<String, serde_json::Value>) -> Result<GridRun>,
) -> Result<GridReport> {
    if settings.is_empty() || top == 0 {
        return Err(Error::Invalid(format!("a grid needs settings and top ≥ 1 (got {} settings)", settings.len())));
    }
    let runs = settings.iter().map(&mut run).collect::<Result<Vec<_>>>()?;
    summarize(runs, top)
}

/// The report of finished runs (see the module docs).
pub fn summarize(runs: Vec<GridRun>, top: usize) -> Result<GridReport> {
    if runs.is_empty() || top == 0 {
        return Err(Error::Invalid("a grid report needs runs and top ≥ 1".into()));
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[b].en_dev.total_cmp(&runs[a].en_dev));
    let best: Vec<usize> = order.into_iter().take(top).collect();
    let langs: Vec<&String> = runs[best[0]].scores.keys().collect();
    let mut items_of_best = BTreeMap::new();
    for lang in &langs {
        let per: Option<Vec<&ItemScores>> = best.iter().map(|&i| runs[i].items.get(*lang)).collect();
        if let Some(pooled) = per.as_deref().and_then(ItemScores::pool) {
            items_of_best.insert((*lang).clone(), pooled);
        }
    }
    let mut mean_of_best = BTreeMap::new();
    for lang in langs {
        let vals: Vec<f64> = best
            .iter()
            .map(|&i| {
                runs[i]
                    .scores
                    .get(lang)
                    .copied()
                    .ok_or_else(|| Error::Invalid(format!("grid run {} has no score for '{lang}'", i + 1)))
            })
            .collect::<Result<_>>()?;
        mean_of_best.insert(lang.clone(), vals.iter().sum::<f64>() / vals.len() as f64);
    }
    let en_dev_mean_of_best = best.iter().map(|&i| runs[i].en_dev).sum::<f64>() / best.len() as f64;
    Ok(GridReport { top: best.len(), best, mean_of_best, en_dev_mean_of_best, items_of_best, runs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(en_dev: f64, fr: f64) -> GridRun {
        GridRun {
            setting: serde_json::Map::new(),
            en_dev,
            scores: [("fr".to_string(), fr)].into(),
            result: serde_json::Value::Null,
            items: BTreeMap::new(),
            mds_items: BTreeMap::new(),
        }
    }

    #[test]
    fn combinations_vary_the_last_axis_fastest() {
        let axes =
            vec![("lr".to_string(), vec![json!(1), json!(2)]), ("batch_size".to_string(), vec![json!(16), json!(32)])];
        let c = combinations(&axes).unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!((c[1]["lr"].clone(), c[1]["batch_size"].clone()), (json!(1), json!(32)));
        assert_eq!(c[2]["lr"], json!(2));
        assert!(combinations(&[("lr".to_string(), vec![])]).is_err());
        assert_eq!(combinations(&[]).unwrap().len(), 1);
    }

    #[test]
    fn the_best_two_by_english_dev_are_averaged() {
        // English dev ranks runs 2, 0, 3, 1; their target scores are averaged, not the best target scores.
        let r = summarize(vec![run(0.8, 0.1), run(0.5, 0.9), run(0.9, 0.3), run(0.7, 0.9)], 2).unwrap();
        assert_eq!(r.best, [2, 0]);
        assert!((r.mean_of_best["fr"] - 0.2).abs() < 1e-12);
        assert!((r.en_dev_mean_of_best - 0.85).abs() < 1e-12);
        // Ties keep the grid's order; top larger than the grid takes every run.
        let r = summarize(vec![run(0.5, 0.0), run(0.5, 1.0)], 5).unwrap();
        assert_eq!((r.best.as_slice(), r.top), (&[0usize, 1][..], 2));
        let mut calls = 0;
        let r = run_grid(vec![serde_json::Map::new(); 3], 1, |_| {
            calls += 1;
            Ok(run(calls as f64, 10.0 * calls as f64))
        })
        .unwrap();
        assert_eq!((r.best.as_slice(), r.mean_of_best["fr"]), (&[2usize][..], 30.0));
        assert!(summarize(vec![], 2).is_err());
    }

    #[test]
    fn the_best_runs_items_are_pooled() {
        let with = |en_dev: f64, hits: &[bool]| {
            let items = ItemScores::hits(hits);
            GridRun { items: [("fr".to_string(), items.clone())].into(), ..run(en_dev, items.estimate()) }
        };
        let r = summarize(vec![with(0.9, &[true, false]), with(0.1, &[false, false]), with(0.8, &[true, true])], 2)
            .unwrap();
        assert_eq!(r.items_of_best["fr"], ItemScores::Items(vec![1.0, 0.5]));
        assert_eq!(r.items_of_best["fr"].estimate(), r.mean_of_best["fr"]);
        // Runs without items give no pooled items.
        assert!(summarize(vec![run(0.5, 0.2)], 1).unwrap().items_of_best.is_empty());
    }
}
