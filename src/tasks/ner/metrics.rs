//! NER evaluation: BIO repair, span extraction and CoNLL-style micro span precision / recall / F1.
//!
//! **Tags** are strings: `O`, or `B-TYPE` / `I-TYPE` with a non-empty `TYPE`. Anything else (`E-PER`, `B-`,
//! `PER`) is an error that names the sentence, the position and the tag.
//!
//! **Repair** (the heuristic of Wu & Dredze 2019, *Beto, Bentz, Becas*, used again for the NER results of Wu,
//! Conneau et al. 2020) turns any tag sequence — typically a token classifier's output — into valid IOB2:
//! 1. a *standalone* `I-X`, one whose previous tag is `O` or that opens the sentence, becomes `B-X`;
//! 2. a **span** is then a `B-` tag followed by the maximal run of consecutive `I-` tags *of any type* (an `I-`
//!    tag after a `B-` or `I-` tag continues the span whatever its type; a `B-` tag or an `O` ends it);
//! 3. every span takes the type of its **final** tag: `B-X I-Y I-Z` becomes `B-Z I-Z I-Z`.
//!
//! So `O I-X I-Y B-Z I-Z` is repaired to `O B-Y I-Y B-Z I-Z`: two spans, `(Y, 1, 3)` and `(Z, 3, 5)`. Repair is
//! the identity on valid IOB2. Spans are half-open token ranges `start..end`. [`extract_spans`] reads spans with
//! the same rule, so `extract_spans(tags) == extract_spans(repair(tags))` for every tag sequence.
//!
//! **Scores** (as `conlleval`, CoNLL 2003): over a corpus, a predicted span is correct when a gold span in the same
//! sentence has the same type, start and end. Micro precision = correct / predicted, recall = correct / gold,
//! F1 = 2PR / (P + R), computed as the equal 2·correct / (predicted + gold) = 2·tp / (2·tp + fp + fn), so that the
//! per-sentence counts ([`NerEval::sentences`]) give it exactly as a ratio of sums. Each ratio with a zero
//! denominator is **0**, as conlleval reports it; in particular a corpus with no gold and no predicted spans has
//! P = R = F1 = 0. Gold tags are read through the same repair, which is
//! the identity on IOB2 gold (and converts IOB1 gold, except that IOB1's adjacent `I-X I-Y` of different types is
//! read as one span of type `Y`).
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An entity span: its type and the half-open token range `start..end`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub kind: String,
    pub start: usize,
    pub end: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tag<'a> {
    Outside,
    Begin(&'a str),
    Inside(&'a str),
}

/// Parse one sentence's tags; `sentence` (its index in a corpus, when there is one) goes into error messages.
fn parse<S: AsRef<str>>(tags: &[S], sentence: Option<usize>) -> Result<Vec<Tag<'_>>> {
    let at = |i: usize| sentence.map_or(format!("token {i}"), |s| format!("sentence {s}, token {i}"));
    tags.iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.as_ref();
            match (t, t.split_once('-')) {
                ("O", _) => Ok(Tag::Outside),
                (_, Some(("B", k))) if !k.is_empty() => Ok(Tag::Begin(k)),
                (_, Some(("I", k))) if !k.is_empty() => Ok(Tag::Inside(k)),
                _ => Err(Error::Invalid(format!("{}: tag '{t}' is not O, B-TYPE or I-TYPE", at(i)))),
            }
        })
        .collect()
}

/// The spans of parsed tags under the rule of the module doc (standalone `I-` opens a span; final tag's type).
fn spans_of(tags: &[Tag<'_>]) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < tags.len() {
        let mut kind = match tags[i] {
            Tag::Begin(k) | Tag::Inside(k) => k,
            Tag::Outside => {
                i += 1;
                continue;
            }
        };
        let start = i;
        i += 1;
        while let Some(Tag::Inside(k)) = tags.get(i) {
            kind = k;
            i += 1;
        }
        spans.push(Span { kind: kind.to_string(), start, end: i });
    }
    spans
}

/// The spans of one sentence's tags (repaired on the fly), in order.
pub fn extract_spans<S: AsRef<str>>(tags: &[S]) -> Result<Vec<Span>> {
    Ok(spans_of(&parse(tags, None)?))
}

/// The repaired (valid IOB2) tags of one sentence.
pub fn repair<S: AsRef<str>>(tags: &[S]) -> Result<Vec<String>> {
    let mut out = vec![String::from("O"); tags.len()];
    for s in extract_spans(tags)? {
        out[s.start] = format!("B-{}", s.kind);
        for t in &mut out[s.start + 1..s.end] {
            *t = format!("I-{}", s.kind);
        }
    }
    Ok(out)
}

/// Span counts of one corpus (or of one entity type).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpanCounts {
    pub gold: usize,
    pub predicted: usize,
    pub correct: usize,
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl SpanCounts {
    /// correct / predicted (0 without predictions).
    pub fn precision(&self) -> f64 {
        ratio(self.correct, self.predicted)
    }

    /// correct / gold (0 without gold spans).
    pub fn recall(&self) -> f64 {
        ratio(self.correct, self.gold)
    }

    /// 2PR / (P + R) = 2·correct / (predicted + gold) (0 when P + R = 0, i.e. when nothing is correct).
    pub fn f1(&self) -> f64 {
        ratio(2 * self.correct, self.predicted + self.gold)
    }

    /// `(2·tp, 2·tp + fp + fn)` = `(2·correct, predicted + gold)`: F1 as a ratio whose sums over sentences give the
    /// corpus F1.
    pub fn f1_terms(&self) -> (usize, usize) {
        (2 * self.correct, self.predicted + self.gold)
    }
}

/// Micro span scores of a corpus, with the counts behind them and a per-type breakdown.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NerEval {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub counts: SpanCounts,
    /// Counts per entity type (types seen in gold or predictions), in type order.
    pub per_type: BTreeMap<String, SpanCounts>,
    /// Counts of each sentence, in input order (their sums are `counts`); not in the JSON.
    #[serde(skip)]
    pub sentences: Vec<SpanCounts>,
}

/// Score predicted against gold tag sequences, sentence by sentence; both are repaired first.
pub fn evaluate<S: AsRef<str>, T: AsRef<str>>(gold: &[Vec<S>], predicted: &[Vec<T>]) -> Result<NerEval> {
    if gold.len() != predicted.len() {
        return Err(Error::Invalid(format!(
            "NER evaluation: {} gold sentences but {} predicted sentences",
            gold.len(),
            predicted.len()
        )));
    }
    let mut counts = SpanCounts::default();
    let mut per_type: BTreeMap<String, SpanCounts> = BTreeMap::new();
    let mut sentences = Vec::with_capacity(gold.len());
    for (s, (g, p)) in gold.iter().zip(predicted).enumerate() {
        if g.len() != p.len() {
            return Err(Error::Invalid(format!(
                "NER evaluation: sentence {s} has {} gold tags but {} predicted tags",
                g.len(),
                p.len()
            )));
        }
        let (gs, ps) = (spans_of(&parse(g, Some(s))?), spans_of(&parse(p, Some(s))?));
        for span in &gs {
            per_type.entry(span.kind.clone()).or_default().gold += 1;
        }
        let mut here = SpanCounts { gold: gs.len(), predicted: ps.len(), correct: 0 };
        for span in &ps {
            let c = per_type.entry(span.kind.clone()).or_default();
            c.predicted += 1;
            if gs.contains(span) {
                c.correct += 1;
                here.correct += 1;
            }
        }
        counts.correct += here.correct;
        counts.gold += here.gold;
        counts.predicted += here.predicted;
        sentences.push(here);
    }
    Ok(NerEval { precision: counts.precision(), recall: counts.recall(), f1: counts.f1(), counts, per_type, sentences })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn span(kind: &str, start: usize, end: usize) -> Span {
        Span { kind: kind.into(), start, end }
    }

    #[test]
    fn standalone_inside_tag_opens_an_entity() {
        assert_eq!(repair(&tags("I-PER I-PER O I-LOC")).unwrap(), tags("B-PER I-PER O B-LOC"));
        assert_eq!(repair(&tags("O I-ORG")).unwrap(), tags("O B-ORG"));
        assert_eq!(extract_spans(&tags("I-PER O I-LOC I-LOC")).unwrap(), [span("PER", 0, 1), span("LOC", 2, 4)]);
    }

    #[test]
    fn a_span_of_mixed_types_takes_its_final_type() {
        assert_eq!(repair(&tags("B-X I-Y I-Z")).unwrap(), tags("B-Z I-Z I-Z"));
        // A standalone I- is repaired first, then joins the run that follows it.
        assert_eq!(repair(&tags("O I-X I-Y B-Z I-Z")).unwrap(), tags("O B-Y I-Y B-Z I-Z"));
        // B- always opens a new span, even of the same type; O always closes one.
        assert_eq!(repair(&tags("B-X B-X I-Y O I-Y")).unwrap(), tags("B-X B-Y I-Y O B-Y"));
        assert_eq!(
            extract_spans(&tags("B-PER I-LOC B-ORG I-ORG I-MISC O")).unwrap(),
            [span("LOC", 0, 2), span("MISC", 2, 5)]
        );
    }

    #[test]
    fn repair_keeps_valid_iob2_and_agrees_with_extraction() {
        let valid = tags("B-PER I-PER O B-LOC B-LOC I-LOC O O B-MISC");
        assert_eq!(repair(&valid).unwrap(), valid);
        for s in ["I-A I-B B-C I-A O I-C", "B-A", "I-A", "O O", "B-A I-A I-B B-B O I-A I-A"] {
            let t = tags(s);
            let repaired = repair(&t).unwrap();
            assert_eq!(extract_spans(&t).unwrap(), extract_spans(&repaired).unwrap(), "{s}");
            assert_eq!(repair(&repaired).unwrap(), repaired, "repair is idempotent on {s}");
        }
    }

    #[test]
    fn malformed_tags_are_errors_naming_sentence_and_token() {
        for bad in ["E-PER", "B-", "PER", "o", "I"] {
            let e = extract_spans(&[String::from("O"), bad.to_string()]).unwrap_err().to_string();
            assert!(e.contains("token 1") && e.contains(bad), "{e}");
        }
        let e = evaluate(&[tags("O"), tags("O B-X")], &[tags("O"), tags("O S-X")]).unwrap_err().to_string();
        assert!(e.contains("sentence 1, token 1") && e.contains("'S-X'"), "{e}");
    }

    #[test]
    fn mismatched_lengths_name_the_sentence() {
        let e = evaluate(&[tags("O"), tags("O B-X")], &[tags("O"), tags("O")]).unwrap_err().to_string();
        assert!(e.contains("sentence 1 has 2 gold tags but 1 predicted"), "{e}");
        let e = evaluate(&[tags("O")], &[tags("O"), tags("O")]).unwrap_err().to_string();
        assert!(e.contains("1 gold sentences but 2 predicted"), "{e}");
    }

    #[test]
    fn no_entities_score_zero_like_conlleval() {
        let e = evaluate(&[tags("O O"), Vec::new()], &[tags("O O"), Vec::new()]).unwrap();
        assert_eq!(e.counts, SpanCounts::default());
        assert_eq!((e.precision, e.recall, e.f1), (0.0, 0.0, 0.0));
        assert!(e.per_type.is_empty());
        // Gold entities but no predictions: P = 0 by convention, R = 0, F1 = 0.
        let e = evaluate(&[tags("B-PER O")], &[tags("O O")]).unwrap();
        assert_eq!((e.counts.gold, e.counts.predicted, e.f1), (1, 0, 0.0));
    }

    #[test]
    fn corpus_micro_f1_by_hand() {
        let gold = [tags("B-PER I-PER O B-LOC"), tags("B-ORG O O"), tags("O B-LOC I-LOC B-PER")];
        let pred = [
            tags("B-PER I-PER O B-ORG"), // PER(0,2) correct; ORG(3,4) wrong type
            tags("I-ORG O B-MISC"),      // repaired B-ORG(0,1) correct; MISC spurious
            tags("O B-LOC O B-PER"),     // LOC(1,2) wrong boundary; PER(3,4) correct
        ];
        let e = evaluate(&gold, &pred).unwrap();
        assert_eq!(e.counts, SpanCounts { gold: 5, predicted: 6, correct: 3 });
        assert!((e.precision - 0.5).abs() < 1e-12);
        assert!((e.recall - 0.6).abs() < 1e-12);
        assert!((e.f1 - 2.0 * 0.5 * 0.6 / 1.1).abs() < 1e-12);
        assert_eq!(e.per_type["PER"], SpanCounts { gold: 2, predicted: 2, correct: 2 });
        assert_eq!(e.per_type["LOC"], SpanCounts { gold: 2, predicted: 1, correct: 0 });
        assert_eq!(e.per_type["ORG"], SpanCounts { gold: 1, predicted: 2, correct: 1 });
        assert_eq!(e.per_type["MISC"], SpanCounts { gold: 0, predicted: 1, correct: 0 });
        assert_eq!(e.per_type.keys().collect::<Vec<_>>(), ["LOC", "MISC", "ORG", "PER"]);
        // Per sentence: (gold, predicted, correct) = (2, 2, 1), (1, 2, 1), (2, 2, 1); their F1 terms give the F1.
        let per: Vec<(usize, usize)> = e.sentences.iter().map(SpanCounts::f1_terms).collect();
        assert_eq!(per, [(2, 4), (2, 3), (2, 4)]);
        let items = crate::tasks::items::ItemScores::counts(per);
        assert_eq!(items.estimate(), e.f1);
        assert_eq!(e.f1, 6.0 / 11.0);
    }
}
