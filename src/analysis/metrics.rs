//! Retrieval metrics for word translation and sentence retrieval.
//!
//! **Word translation, P@k.** A dictionary is a list of (source word, target word) pairs; a source word may have
//! several gold translations. Both conventions in use evaluate each *unique* source word once and count a hit at
//! k when *any* of its gold translations is among its k best targets:
//! - MUSE (Conneau et al. 2018, `evaluation/word_translation.py`): pairs with a word outside either vocabulary are
//!   dropped; P@k is the mean over the unique source words left;
//! - vecmap (Artetxe et al., `eval_translation.py`): the same mean, reported with its **coverage** — the share of
//!   the dictionary's unique source words that have at least one pair with both words in the vocabularies.
//!
//! The two give the same precision on the same vocabularies; [`WordEval`] carries both numbers (and
//! `precision × coverage` is the figure that counts uncovered words as misses).
//!
//! **MRR** (Liu et al. 2020, §3.1.1): the mean over the same source words of `1 / rank`, the rank of the gold
//! translation among *all* targets under the scorer (cosine for NN); with several golds, the best-ranked one.
//!
//! **Sentence retrieval** (Tatoeba style, Artetxe & Schwenk 2019): row `i` of the source is parallel to row `i` of
//! the target; the top-1 target is a hit *by index* when it is row `i`, and *by text* when its text equals the text
//! of row `i` (duplicate sentences in the target side make index-only scoring too strict).
use super::scores::Scorer;
use super::to_vec_i64;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use tch::Tensor;

/// The ks of P@k.
pub const PRECISION_AT: [usize; 3] = [1, 5, 10];

/// A dictionary resolved to row indices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexedDict {
    /// Source row of each covered unique source word, in first-appearance order.
    pub sources: Vec<i64>,
    /// Gold target rows of each covered source word (unique, in file order).
    pub golds: Vec<Vec<i64>>,
    /// Unique source words in the dictionary.
    pub n_dict_sources: usize,
    /// Pairs dropped because a word is outside its vocabulary.
    pub n_oov_pairs: usize,
}

impl IndexedDict {
    /// The vecmap coverage: covered unique source words / unique source words.
    pub fn coverage(&self) -> f64 {
        if self.n_dict_sources == 0 {
            0.0
        } else {
            self.sources.len() as f64 / self.n_dict_sources as f64
        }
    }
}

fn vocab_index(words: &[String]) -> HashMap<&str, i64> {
    let mut m = HashMap::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        m.entry(w.as_str()).or_insert(i as i64); // the first (most frequent) row of a repeated word
    }
    m
}

/// Resolve word pairs against the two vocabularies (row `i` of an embedding matrix is word `i` of its list).
pub fn index_dictionary<S: AsRef<str>, T: AsRef<str>>(
    pairs: &[(S, T)],
    src_words: &[String],
    tgt_words: &[String],
) -> IndexedDict {
    let (sv, tv) = (vocab_index(src_words), vocab_index(tgt_words));
    let mut seen: HashMap<&str, Option<usize>> = HashMap::new();
    let mut d = IndexedDict::default();
    for (s, t) in pairs {
        let (s, t) = (s.as_ref(), t.as_ref());
        if !seen.contains_key(s) {
            d.n_dict_sources += 1;
            seen.insert(s, None);
        }
        match (sv.get(s), tv.get(t)) {
            (Some(&si), Some(&ti)) => {
                let slot = match seen.get(s).copied().flatten() {
                    Some(slot) => slot,
                    None => {
                        d.sources.push(si);
                        d.golds.push(Vec::new());
                        seen.insert(s, Some(d.sources.len() - 1));
                        d.sources.len() - 1
                    }
                };
                if !d.golds[slot].contains(&ti) {
                    d.golds[slot].push(ti);
                }
            }
            _ => d.n_oov_pairs += 1,
        }
    }
    d
}

/// Resolve index pairs (`i j`: source row, target row) into a dictionary; every index must be in range.
pub fn index_pairs(pairs: &[(i64, i64)], n_src: i64, n_tgt: i64) -> Result<IndexedDict> {
    let words = |n: i64| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
    if let Some((s, t)) = pairs.iter().find(|(s, t)| *s < 0 || *s >= n_src || *t < 0 || *t >= n_tgt) {
        return Err(Error::Invalid(format!(
            "index pair ({s}, {t}) is outside the matrices ({n_src} source rows, {n_tgt} target rows)"
        )));
    }
    let str_pairs: Vec<(String, String)> = pairs.iter().map(|(s, t)| (s.to_string(), t.to_string())).collect();
    Ok(index_dictionary(&str_pairs, &words(n_src), &words(n_tgt)))
}

/// The dictionary read in the other direction (target → source).
pub fn reverse_pairs<S: Clone, T: Clone>(pairs: &[(S, T)]) -> Vec<(T, S)> {
    pairs.iter().map(|(s, t)| (t.clone(), s.clone())).collect()
}

/// Word-translation results for one direction.
#[derive(Debug, Clone, Serialize)]
pub struct WordEval {
    /// P@1, P@5, P@10 over the covered unique source words.
    pub precision: [f64; 3],
    /// Mean reciprocal rank of the best gold.
    pub mrr: f64,
    /// Covered unique source words (the evaluated ones).
    pub n_evaluated: usize,
    /// Unique source words in the dictionary.
    pub n_dict_sources: usize,
    /// vecmap coverage.
    pub coverage: f64,
    /// Per evaluated word: hit at 1, 5, 10.
    #[serde(skip)]
    pub hits: Vec<[bool; 3]>,
    /// Per evaluated word: 1-based rank of its best gold.
    #[serde(skip)]
    pub ranks: Vec<usize>,
}

/// P@1/5/10 and MRR of a scorer on a resolved dictionary.
pub fn word_translation(scorer: &Scorer, dict: &IndexedDict) -> Result<WordEval> {
    if dict.sources.is_empty() {
        return Err(Error::Invalid(format!(
            "no dictionary pair has both words in the vocabularies ({} pairs dropped, {} source words)",
            dict.n_oov_pairs, dict.n_dict_sources
        )));
    }
    let queries = Tensor::from_slice(&dict.sources);
    let top = scorer.top_k(Some(&queries), 10)?;
    let k = top.indices.size()[1] as usize;
    let idx = to_vec_i64(&top.indices)?;
    let hits: Vec<[bool; 3]> = dict
        .golds
        .iter()
        .enumerate()
        .map(|(q, golds)| {
            let row = &idx[q * k..(q + 1) * k];
            PRECISION_AT.map(|at| row[..at.min(k)].iter().any(|j| golds.contains(j)))
        })
        .collect();
    let ranks = scorer.gold_ranks(&dict.sources, &dict.golds)?;
    let n = hits.len() as f64;
    let precision = [0, 1, 2].map(|j| hits.iter().filter(|h| h[j]).count() as f64 / n);
    let mrr = ranks.iter().map(|&r| 1.0 / r as f64).sum::<f64>() / n;
    Ok(WordEval {
        precision,
        mrr,
        n_evaluated: hits.len(),
        n_dict_sources: dict.n_dict_sources,
        coverage: dict.coverage(),
        hits,
        ranks,
    })
}

/// Sentence-retrieval results for one direction.
#[derive(Debug, Clone, Serialize)]
pub struct SentenceEval {
    /// Parallel rows evaluated.
    pub n: usize,
    /// Top-1 accuracy by index (retrieved row = gold row).
    pub accuracy_by_index: f64,
    /// Top-1 accuracy by text (retrieved text = gold text), when texts are given.
    pub accuracy_by_text: Option<f64>,
    /// Mean reciprocal rank of the gold row.
    pub mrr: f64,
    /// Per row: hit by index.
    #[serde(skip)]
    pub hits: Vec<bool>,
    /// Per row: 1 / rank of its gold row (the items whose mean is `mrr`).
    #[serde(skip)]
    pub reciprocal_ranks: Vec<f64>,
}

/// Row `i` ↔ row `i` retrieval; `tgt_texts` (one per target row) enables scoring by text.
pub fn sentence_retrieval(scorer: &Scorer, tgt_texts: Option<&[String]>) -> Result<SentenceEval> {
    let (n_src, n_tgt) = scorer.shape();
    if n_src != n_tgt {
        return Err(Error::Invalid(format!(
            "sentence retrieval needs parallel rows: {n_src} source rows, {n_tgt} target rows"
        )));
    }
    if let Some(t) = tgt_texts {
        if t.len() as i64 != n_tgt {
            return Err(Error::Invalid(format!("{} target texts for {n_tgt} target rows", t.len())));
        }
    }
    let top = to_vec_i64(&scorer.top_k(None, 1)?.indices)?;
    let hits: Vec<bool> = top.iter().enumerate().map(|(i, &j)| j == i as i64).collect();
    let n = hits.len() as f64;
    let accuracy_by_text =
        tgt_texts.map(|t| top.iter().enumerate().filter(|&(i, &j)| t[j as usize] == t[i]).count() as f64 / n);
    let rows: Vec<i64> = (0..n_src).collect();
    let golds: Vec<Vec<i64>> = rows.iter().map(|&i| vec![i]).collect();
    let reciprocal_ranks: Vec<f64> = scorer.gold_ranks(&rows, &golds)?.iter().map(|&r| 1.0 / r as f64).collect();
    Ok(SentenceEval {
        n: hits.len(),
        accuracy_by_index: hits.iter().filter(|h| **h).count() as f64 / n,
        accuracy_by_text,
        mrr: reciprocal_ranks.iter().sum::<f64>() / n,
        hits,
        reciprocal_ranks,
    })
}

#[cfg(test)]
mod tests {
    use super::super::scores::{Method, Options};
    use super::*;
    use tch::Kind;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// Unit vectors at angles; a source at angle a retrieves targets in order of angular distance.
    fn at_angles(deg: &[f64]) -> Tensor {
        let v: Vec<f64> = deg.iter().flat_map(|d| [d.to_radians().cos(), d.to_radians().sin()]).collect();
        Tensor::from_slice(&v).reshape([deg.len() as i64, 2]).to_kind(Kind::Float)
    }

    #[test]
    fn dictionary_resolution_counts_coverage_like_vecmap() {
        let pairs = [
            ("cat", "chat"),
            ("cat", "matou"),
            ("cat", "chat"), // duplicate pair
            ("dog", "chien"),
            ("dog", "clebs"),   // OOV target: the other pair keeps dog covered
            ("bird", "oiseau"), // OOV source
            ("fish", "poisson_oov"),
        ];
        let d = index_dictionary(&pairs, &words("cat dog fish cat"), &words("chien chat matou"));
        assert_eq!(d.sources, [0, 1]);
        assert_eq!(d.golds, [vec![1, 2], vec![0]]);
        assert_eq!(d.n_dict_sources, 4);
        assert_eq!(d.n_oov_pairs, 3);
        assert_eq!(d.coverage(), 0.5);
        let r = index_dictionary(&reverse_pairs(&pairs), &words("chien chat matou"), &words("cat dog"));
        assert_eq!((r.sources.clone(), r.golds.clone()), (vec![1, 2, 0], vec![vec![0], vec![0], vec![1]]));
        assert!(index_pairs(&[(0, 5)], 3, 3).unwrap_err().to_string().contains("(0, 5)"));
    }

    #[test]
    fn precision_at_k_counts_any_gold_once_per_source_word() {
        // Targets at 0°, 10°, …, 110°. Source 0 at 1° ranks targets 0,1,2,…; source 1 at 52° ranks 5,6,4,7,3,…
        let tgt = at_angles(&(0..12).map(|i| 10.0 * i as f64).collect::<Vec<_>>());
        let src = at_angles(&[1.0, 52.0, 200.0]);
        let tw: Vec<String> = (0..12).map(|i| format!("t{i}")).collect();
        let sw = words("a b c");
        // a: golds t3 (rank 4) and t7 (rank 8) → hit@5 and @10, best rank 4.
        // b: gold t5 (rank 1), listed twice → counted once.
        // c: gold t11: c at 200° is nearest to t0 (160° away from 200° ⇒ cos(160°)) … t11 at 110° is 90° away,
        //    the best of all; so rank 1.
        let pairs = [("a", "t3"), ("a", "t7"), ("b", "t5"), ("b", "t5"), ("c", "t11"), ("zz", "t1")];
        let d = index_dictionary(&pairs, &sw, &tw);
        let s = Scorer::new(&src, &tgt, Method::Nn, Options::default()).unwrap();
        let e = word_translation(&s, &d).unwrap();
        assert_eq!(e.hits, [[false, true, true], [true, true, true], [true, true, true]]);
        assert_eq!(e.ranks, [4, 1, 1]);
        assert_eq!(e.precision, [2.0 / 3.0, 1.0, 1.0]);
        assert!((e.mrr - (0.25 + 1.0 + 1.0) / 3.0).abs() < 1e-12);
        assert_eq!((e.n_evaluated, e.n_dict_sources), (3, 4));
        assert_eq!(e.coverage, 0.75);
        let empty = index_dictionary(&[("zz", "t1")], &sw, &tw);
        assert!(word_translation(&s, &empty).unwrap_err().to_string().contains("no dictionary pair"));
    }

    #[test]
    fn sentence_retrieval_by_index_and_by_text() {
        // Target rows 1 and 2 carry the same sentence; source 2 retrieves target 1 (lower index wins the tie).
        let tgt = at_angles(&[0.0, 90.0, 90.0, 180.0]);
        let src = at_angles(&[5.0, 85.0, 95.0, 170.0]);
        let s = Scorer::new(&src, &tgt, Method::Nn, Options::default()).unwrap();
        let texts = words("hello same same bye");
        let e = sentence_retrieval(&s, Some(&texts)).unwrap();
        assert_eq!(e.hits, [true, true, false, true]);
        assert_eq!(e.accuracy_by_index, 0.75);
        assert_eq!(e.accuracy_by_text, Some(1.0));
        assert!((e.mrr - (3.0 + 0.5) / 4.0).abs() < 1e-12);
        let short = Scorer::new(&src.narrow(0, 0, 3), &tgt, Method::Nn, Options::default()).unwrap();
        assert!(sentence_retrieval(&short, None).unwrap_err().to_string().contains("3 source rows"));
    }
}
