//! Dependency parsing evaluation: unlabeled and labeled attachment scores.
//!
//! Over the scored tokens of a corpus, **UAS** = tokens whose predicted head is the gold head / scored tokens, and
//! **LAS** = tokens whose predicted head *and* label are gold / scored tokens (micro averages, as in the zero-shot
//! parsing results of Wu, Conneau et al. 2020, Table 1, and the CoNLL shared tasks). Heads are `0` for the root and
//! `1..=n` for the tokens of an n-token sentence; `heads[i]` is the head of token `i + 1`.
//!
//! **Punctuation policy.** By default tokens whose *gold* UPOS is `PUNCT` are not scored (common practice in
//! parsing papers, e.g. the results of Dozat & Manning 2017); [`AttachmentOptions::include_punct`] scores them too
//! (the setting of the CoNLL 2018 shared task's official scorer).
//!
//! **Labels** are compared as whole strings by default (`nmod:poss` ≠ `nmod`);
//! [`AttachmentOptions::universal_labels`] compares only the universal part before the first `:`, as the CoNLL 2018
//! evaluation script does. With no scored token, UAS = LAS = 0 (the counts say why).
//!
//! Heads are checked to lie in `0..=n`; they are not checked to form a tree.
use crate::error::{Error, Result};
use serde::Serialize;

/// One sentence's arcs: `heads[i]` and `labels[i]` belong to token `i + 1`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parse {
    pub heads: Vec<usize>,
    pub labels: Vec<String>,
}

/// What [`attachment_scores`] scores; the default excludes punctuation and compares whole labels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttachmentOptions {
    /// Score tokens whose gold UPOS is `PUNCT` as well.
    pub include_punct: bool,
    /// Compare labels up to the first `:` only (`nsubj:pass` matches `nsubj`).
    pub universal_labels: bool,
}

/// UAS and LAS with the counts behind them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttachmentEval {
    pub uas: f64,
    pub las: f64,
    /// Tokens scored.
    pub scored: usize,
    /// Scored tokens with the gold head.
    pub head_correct: usize,
    /// Scored tokens with the gold head and the gold label.
    pub labeled_correct: usize,
    /// Tokens left out by the punctuation policy.
    pub excluded: usize,
    /// `(labeled_correct, scored)` of each sentence, in input order (their sums give LAS); not in the JSON.
    #[serde(skip)]
    pub sentences: Vec<(usize, usize)>,
}

fn universal(label: &str) -> &str {
    label.split_once(':').map_or(label, |(u, _)| u)
}

fn check(p: &Parse, n: usize, s: usize, what: &str) -> Result<()> {
    if p.heads.len() != n || p.labels.len() != n {
        return Err(Error::Invalid(format!(
            "attachment scores: sentence {s} has {n} gold UPOS tags but {} {what} heads and {} {what} labels",
            p.heads.len(),
            p.labels.len()
        )));
    }
    if let Some((i, h)) = p.heads.iter().enumerate().find(|(_, &h)| h > n) {
        return Err(Error::Invalid(format!(
            "attachment scores: sentence {s}, token {}: {what} head {h} is outside 0..={n}",
            i + 1
        )));
    }
    Ok(())
}

/// UAS and LAS of `predicted` against `gold`, sentence by sentence; `gold_upos` decides punctuation.
pub fn attachment_scores<S: AsRef<str>>(
    gold: &[Parse],
    gold_upos: &[Vec<S>],
    predicted: &[Parse],
    options: &AttachmentOptions,
) -> Result<AttachmentEval> {
    if gold.len() != predicted.len() || gold.len() != gold_upos.len() {
        return Err(Error::Invalid(format!(
            "attachment scores: {} gold parses, {} gold UPOS sequences, {} predicted parses",
            gold.len(),
            gold_upos.len(),
            predicted.len()
        )));
    }
    let (mut scored, mut head_correct, mut labeled_correct, mut excluded) = (0, 0, 0, 0);
    let mut sentences = Vec::with_capacity(gold.len());
    for (s, ((g, upos), p)) in gold.iter().zip(gold_upos).zip(predicted).enumerate() {
        let n = upos.len();
        check(g, n, s, "gold")?;
        check(p, n, s, "predicted")?;
        let (scored_before, labeled_before) = (scored, labeled_correct);
        for (i, tag) in upos.iter().enumerate() {
            if !options.include_punct && tag.as_ref() == "PUNCT" {
                excluded += 1;
                continue;
            }
            scored += 1;
            if g.heads[i] == p.heads[i] {
                head_correct += 1;
                let same_label = if options.universal_labels {
                    universal(&g.labels[i]) == universal(&p.labels[i])
                } else {
                    g.labels[i] == p.labels[i]
                };
                labeled_correct += usize::from(same_label);
            }
        }
        sentences.push((labeled_correct - labeled_before, scored - scored_before));
    }
    let rate = |k: usize| if scored == 0 { 0.0 } else { k as f64 / scored as f64 };
    Ok(AttachmentEval {
        uas: rate(head_correct),
        las: rate(labeled_correct),
        scored,
        head_correct,
        labeled_correct,
        excluded,
        sentences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(heads: &[usize], labels: &str) -> Parse {
        Parse { heads: heads.to_vec(), labels: labels.split_whitespace().map(String::from).collect() }
    }

    fn upos(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// "She saw it ." and "Dogs bark , loudly !" with hand-checked predictions.
    fn corpus() -> (Vec<Parse>, Vec<Vec<String>>, Vec<Parse>) {
        let gold = vec![
            parse(&[2, 0, 2, 2], "nsubj root obj punct"),
            parse(&[2, 0, 2, 2, 2], "nsubj:pass root punct advmod punct"),
        ];
        let tags = vec![upos("PRON VERB PRON PUNCT"), upos("NOUN VERB PUNCT ADV PUNCT")];
        let pred = vec![
            parse(&[2, 0, 1, 3], "nsubj root obj punct"), // token 3: wrong head; token 4 (punct): wrong head
            parse(&[2, 0, 4, 1, 2], "nsubj root punct advmod punct"), // token 1: subtype lost; 3 (punct) and 4 wrong
        ];
        (gold, tags, pred)
    }

    #[test]
    fn punctuation_is_excluded_by_default() {
        let (gold, tags, pred) = corpus();
        let e = attachment_scores(&gold, &tags, &pred, &AttachmentOptions::default()).unwrap();
        assert_eq!((e.scored, e.head_correct, e.labeled_correct, e.excluded), (6, 4, 3, 3));
        assert!((e.uas - 4.0 / 6.0).abs() < 1e-12 && (e.las - 0.5).abs() < 1e-12);
        // Per sentence (labeled correct, scored): "She saw it" 2 of 3, "Dogs bark loudly" 1 of 3; they give LAS.
        assert_eq!(e.sentences, [(2, 3), (1, 3)]);
        assert_eq!(crate::tasks::items::ItemScores::counts(e.sentences.clone()).estimate(), e.las);
    }

    #[test]
    fn punctuation_and_universal_labels_on_request() {
        let (gold, tags, pred) = corpus();
        let all = AttachmentOptions { include_punct: true, universal_labels: false };
        let e = attachment_scores(&gold, &tags, &pred, &all).unwrap();
        assert_eq!((e.scored, e.head_correct, e.labeled_correct, e.excluded), (9, 5, 4, 0));
        assert!((e.uas - 5.0 / 9.0).abs() < 1e-12 && (e.las - 4.0 / 9.0).abs() < 1e-12);
        let universal = AttachmentOptions { include_punct: false, universal_labels: true };
        let e = attachment_scores(&gold, &tags, &pred, &universal).unwrap();
        assert_eq!((e.head_correct, e.labeled_correct), (4, 4));
    }

    #[test]
    fn empty_scoring_set_gives_zero() {
        let gold = [parse(&[0], "punct")];
        let e = attachment_scores(&gold, &[upos("PUNCT")], &gold, &AttachmentOptions::default()).unwrap();
        assert_eq!((e.uas, e.las, e.scored, e.excluded), (0.0, 0.0, 0, 1));
    }

    #[test]
    fn malformed_input_names_the_sentence() {
        let (gold, tags, mut pred) = corpus();
        pred[1].heads.pop();
        let e = attachment_scores(&gold, &tags, &pred, &AttachmentOptions::default()).unwrap_err().to_string();
        assert!(e.contains("sentence 1 has 5 gold UPOS tags but 4 predicted heads"), "{e}");
        pred[1].heads.push(6);
        let e = attachment_scores(&gold, &tags, &pred, &AttachmentOptions::default()).unwrap_err().to_string();
        assert!(e.contains("sentence 1, token 5: predicted head 6 is outside 0..=5"), "{e}");
        let e = attachment_scores(&gold, &tags[..1], &pred, &AttachmentOptions::default()).unwrap_err().to_string();
        assert!(e.contains("1 gold UPOS sequences"), "{e}");
    }
}
