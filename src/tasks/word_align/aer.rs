//! Alignment error rate (Och & Ney 2003) of predicted word alignments against sure and possible gold links.
//!
//! Over a corpus, with A the predicted links, S the sure links and P ⊇ S the possible ones (counts summed over
//! sentences, as the standard scorers do):
//! ```text
//! AER = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|)      precision = |A ∩ P| / |A|      recall = |A ∩ S| / |S|
//! ```
//! Links are `(source index, target index)`; repeated links count once. Sure links are always possible: P is read
//! as P ∪ S, so a gold set without possible links can pass an empty list. Edge cases: with |A| + |S| = 0 (nothing
//! predicted, nothing sure) AER = 0, as nothing predicted contradicts the gold; an empty A has precision 0, an empty
//! S recall 0.
use crate::error::{Error, Result};
use crate::tasks::word_align::link::Link;
use serde::Serialize;
use std::collections::BTreeSet;

/// AER with its precision, recall and counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AerEval {
    pub aer: f64,
    pub precision: f64,
    pub recall: f64,
    /// |A|, |S|, |P ∪ S|.
    pub predicted: usize,
    pub sure: usize,
    pub possible: usize,
    /// |A ∩ S|, |A ∩ (P ∪ S)|.
    pub predicted_sure: usize,
    pub predicted_possible: usize,
}

/// AER of `predicted` against `sure` and `possible` links, one list per sentence in each.
pub fn alignment_error_rate(predicted: &[Vec<Link>], sure: &[Vec<Link>], possible: &[Vec<Link>]) -> Result<AerEval> {
    if predicted.len() != sure.len() || predicted.len() != possible.len() {
        return Err(Error::Invalid(format!(
            "alignment error rate: {} predicted, {} sure and {} possible sentences",
            predicted.len(),
            sure.len(),
            possible.len()
        )));
    }
    let (mut n_a, mut n_s, mut n_p, mut a_s, mut a_p) = (0, 0, 0, 0, 0);
    for ((a, s), p) in predicted.iter().zip(sure).zip(possible) {
        let a: BTreeSet<Link> = a.iter().copied().collect();
        let s: BTreeSet<Link> = s.iter().copied().collect();
        let p: BTreeSet<Link> = p.iter().chain(&s).copied().collect();
        n_a += a.len();
        n_s += s.len();
        n_p += p.len();
        a_s += a.intersection(&s).count();
        a_p += a.intersection(&p).count();
    }
    let ratio = |x: usize, y: usize| if y == 0 { 0.0 } else { x as f64 / y as f64 };
    Ok(AerEval {
        aer: if n_a + n_s == 0 { 0.0 } else { 1.0 - (a_s + a_p) as f64 / (n_a + n_s) as f64 },
        precision: ratio(a_p, n_a),
        recall: ratio(a_s, n_s),
        predicted: n_a,
        sure: n_s,
        possible: n_p,
        predicted_sure: a_s,
        predicted_possible: a_p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aer_by_hand() {
        // Sentence 0: A = {(0,0), (1,1), (2,1)}, S = {(0,0)}, P = {(1,1)} ∪ S → |A∩S| = 1, |A∩P| = 2.
        // Sentence 1: A = {(0,1)} (listed twice), S = {(0,0), (1,1)}, no possible links → 0, 0.
        let a = vec![vec![(0, 0), (1, 1), (2, 1)], vec![(0, 1), (0, 1)]];
        let s = vec![vec![(0, 0)], vec![(0, 0), (1, 1)]];
        let p = vec![vec![(1, 1)], vec![]];
        let e = alignment_error_rate(&a, &s, &p).unwrap();
        assert_eq!((e.predicted, e.sure, e.possible, e.predicted_sure, e.predicted_possible), (4, 3, 4, 1, 2));
        assert!((e.aer - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
        assert!((e.precision - 0.5).abs() < 1e-12 && (e.recall - 1.0 / 3.0).abs() < 1e-12);
        // Sentence 0 alone: 1 − 3/4.
        let e = alignment_error_rate(&a[..1], &s[..1], &p[..1]).unwrap();
        assert!((e.aer - 0.25).abs() < 1e-12);
    }

    #[test]
    fn perfect_empty_and_mismatched() {
        let gold = vec![vec![(0, 0), (1, 2)]];
        let e = alignment_error_rate(&gold, &gold, &[vec![(2, 2)]]).unwrap();
        assert_eq!((e.aer, e.precision, e.recall), (0.0, 1.0, 1.0));
        // A predicted link that is only possible is not an error.
        let e = alignment_error_rate(&[vec![(0, 0), (2, 2)]], &[vec![(0, 0)]], &[vec![(2, 2)]]).unwrap();
        assert_eq!(e.aer, 0.0);
        let e = alignment_error_rate(&[vec![]], &[vec![]], &[vec![(0, 0)]]).unwrap();
        assert_eq!((e.aer, e.precision, e.recall), (0.0, 0.0, 0.0));
        let e = alignment_error_rate(&[vec![]], &[vec![(0, 0)]], &[vec![]]).unwrap();
        assert_eq!(e.aer, 1.0);
        let err = alignment_error_rate(&gold, &gold, &[]).unwrap_err().to_string();
        assert!(err.contains("1 predicted, 1 sure and 0 possible"), "{err}");
    }
}
