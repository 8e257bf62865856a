//! The word-start marker of a Hugging Face tokenizer, and a variant of the tokenizer without it.
//!
//! SentencePiece-style tokenizers mark the start of every whitespace-separated word: XLM-R's `Metaspace`
//! pre-tokenizer (`prepend_scheme` `always` or `first`) and Llama-style normalizers (`Prepend("▁")`) write `▁`
//! before it, GPT-2 / RoBERTa's `ByteLevel` pre-tokenizer with `add_prefix_space` writes `Ġ`. A word encoded on
//! its own therefore reads as if a space preceded it. That is right for a word after a space, and wrong for a word
//! glued to the one before it in the running text: a comma after a word, a French `-il`, and every word of Chinese,
//! which is written without spaces. With XLM-R's Unigram vocabulary such a word often becomes a lone `▁` piece and
//! then the word's own pieces (`这样` → `▁` `这样`), an input running text almost never has.
//!
//! [`without_word_start_marker`] gives the same tokenizer with the marker turned off (`Metaspace` →
//! `prepend_scheme: never`, `ByteLevel` → `add_prefix_space: false`, `Prepend` normalizers dropped), so that a glued
//! word is encoded as its continuation pieces; it is `None` for tokenizers that mark no word start (BERT's
//! WordPiece: a word is its own pre-token whatever precedes it). The change is made on the tokenizer's own JSON
//! form (the `tokenizer.json` schema of the `tokenizers` library), nested `Sequence`s included.
use serde_json::Value;

use crate::error::{Error, Result};

/// Whether `tok` marks word starts (see the module docs): whether [`without_word_start_marker`] has a variant, found
/// without cloning the tokenizer's vocabulary.
pub fn marks_word_starts(tok: &tokenizers::Tokenizer) -> Result<bool> {
    let (pre, norm) = unmarked_parts(tok)?;
    Ok(pre.is_some() || norm.is_some())
}

/// `tok` without its word-start marker; `None` when it adds none (see the module docs).
pub fn without_word_start_marker(tok: &tokenizers::Tokenizer) -> Result<Option<tokenizers::Tokenizer>> {
    let (pre, norm) = unmarked_parts(tok)?;
    if pre.is_none() && norm.is_none() {
        return Ok(None);
    }
    let mut out = tok.clone();
    if let Some(pre) = pre {
        out.with_pre_tokenizer(Some(pre));
    }
    if let Some(norm) = norm {
        out.with_normalizer(norm);
    }
    Ok(Some(out))
}

/// The pre-tokenizer and the normalizer of `tok` with the marker turned off, each `None` where it has no marker
/// (the normalizer's inner `None`: a lone `Prepend`, which leaves no normalizer).
type UnmarkedParts = (Option<tokenizers::PreTokenizerWrapper>, Option<Option<tokenizers::NormalizerWrapper>>);

fn unmarked_parts(tok: &tokenizers::Tokenizer) -> Result<UnmarkedParts> {
    let invalid = |what: &str, e: serde_json::Error| Error::Invalid(format!("tokenizer {what}: {e}"));
    let mut pre = None;
    if let Some(p) = tok.get_pre_tokenizer() {
        let mut json = serde_json::to_value(p).map_err(|e| invalid("pre-tokenizer", e))?;
        if unmark_pre_tokenizer(&mut json) {
            pre = Some(serde_json::from_value(json).map_err(|e| invalid("pre-tokenizer", e))?);
        }
    }
    let mut norm = None;
    if let Some(n) = tok.get_normalizer() {
        let json = serde_json::to_value(n).map_err(|e| invalid("normalizer", e))?;
        let kept = drop_prepend(json.clone());
        if kept.as_ref() != Some(&json) {
            norm = Some(match kept {
                None => None,
                Some(k) => Some(serde_json::from_value(k).map_err(|e| invalid("normalizer", e))?),
            });
        }
    }
    Ok((pre, norm))
}

/// Turns off the marker in a pre-tokenizer's JSON, in place; whether anything changed.
fn unmark_pre_tokenizer(json: &mut Value) -> bool {
    match json.get("type").and_then(Value::as_str) {
        Some("Metaspace") if json.get("prepend_scheme").and_then(Value::as_str) != Some("never") => {
            json["prepend_scheme"] = Value::from("never");
            true
        }
        Some("ByteLevel") if json.get("add_prefix_space").and_then(Value::as_bool) == Some(true) => {
            json["add_prefix_space"] = Value::from(false);
            true
        }
        Some("Sequence") => match json.get_mut("pretokenizers").and_then(Value::as_array_mut) {
            Some(items) => items.iter_mut().fold(false, |any, p| unmark_pre_tokenizer(p) | any),
            None => false,
        },
        _ => false,
    }
}

/// A normalizer's JSON without its `Prepend` steps (inside `Sequence`s); `None` for a lone `Prepend`.
fn drop_prepend(mut json: Value) -> Option<Value> {
    match json.get("type").and_then(Value::as_str) {
        Some("Prepend") => None,
        Some("Sequence") => {
            if let Some(items) = json.get_mut("normalizers").and_then(Value::as_array_mut) {
                let kept: Vec<Value> = items.drain(..).filter_map(drop_prepend).collect();
                *items = kept;
            }
            Some(json)
        }
        _ => Some(json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenizers::models::unigram::Unigram;
    use tokenizers::normalizers::{Prepend, Replace, Sequence as NormSeq};
    use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
    use tokenizers::pre_tokenizers::byte_level::ByteLevel;
    use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
    use tokenizers::pre_tokenizers::sequence::Sequence;
    use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
    use tokenizers::{PreTokenizerWrapper, Tokenizer};

    /// A Unigram tokenizer over a few pieces, where `▁` alone is a piece (as in XLM-R's vocabulary).
    fn unigram() -> Tokenizer {
        let pieces = [
            ("<unk>", 0.0),
            ("▁", -2.0),
            ("这样", -3.0),
            ("的", -3.0),
            ("▁这", -9.0),
            ("▁a", -3.0),
            ("a", -4.0),
            ("Ġa", -3.0),
        ];
        let model = Unigram::from(pieces.iter().map(|(p, s)| (p.to_string(), *s)).collect(), Some(0), false).unwrap();
        Tokenizer::new(model)
    }

    fn pieces(tok: &Tokenizer, text: &str) -> Vec<String> {
        tok.encode(text, false).unwrap().get_tokens().to_vec()
    }

    #[test]
    fn a_metaspace_inside_a_sequence_stops_marking_word_starts() {
        let mut tok = unigram();
        let seq: Vec<PreTokenizerWrapper> =
            vec![WhitespaceSplit.into(), Metaspace::new('▁', PrependScheme::Always, true).into()];
        tok.with_pre_tokenizer(Some(Sequence::new(seq)));
        assert_eq!(pieces(&tok, "这样"), ["▁", "这样"]);
        let glued = without_word_start_marker(&tok).unwrap().expect("a Metaspace marks word starts");
        assert_eq!(pieces(&glued, "这样"), ["这样"]);
        // The original is untouched.
        assert_eq!(pieces(&tok, "这样"), ["▁", "这样"]);
    }

    #[test]
    fn byte_level_prefix_spaces_and_prepend_normalizers_are_turned_off() {
        let mut tok = unigram();
        tok.with_pre_tokenizer(Some(ByteLevel::new(true, true, true)));
        assert!(marks_word_starts(&tok).unwrap());
        let glued = without_word_start_marker(&tok).unwrap().unwrap();
        let json = serde_json::to_value(glued.get_pre_tokenizer().unwrap()).unwrap();
        assert_eq!(json["add_prefix_space"], false);
        assert!(pieces(&tok, "a")[0].starts_with('Ġ') && pieces(&glued, "a") == ["a"], "Ġ before a word start only");

        let mut tok = unigram();
        tok.with_normalizer(Some(NormSeq::new(vec![
            Prepend::new("▁".into()).into(),
            Replace::new(" ", "▁").unwrap().into(),
        ])));
        assert_eq!(pieces(&tok, "这样"), ["▁", "这样"]);
        let glued = without_word_start_marker(&tok).unwrap().unwrap();
        assert_eq!(pieces(&glued, "这样"), ["这样"]);
        assert_eq!(pieces(&glued, "这样 的"), ["这样", "▁", "的"], "the Replace step is kept");

        let mut tok = unigram();
        tok.with_normalizer(Some(Prepend::new("▁".into())));
        assert!(marks_word_starts(&tok).unwrap());
        let glued = without_word_start_marker(&tok).unwrap().unwrap();
        assert!(glued.get_normalizer().is_none());
    }

    #[test]
    fn tokenizers_without_a_marker_have_no_variant() {
        let mut tok = unigram();
        assert!(without_word_start_marker(&tok).unwrap().is_none(), "no pre-tokenizer, no normalizer");
        assert!(!marks_word_starts(&tok).unwrap());
        tok.with_pre_tokenizer(Some(BertPreTokenizer));
        assert!(without_word_start_marker(&tok).unwrap().is_none(), "BERT");
        tok.with_pre_tokenizer(Some(Metaspace::new('▁', PrependScheme::Never, true)));
        assert!(without_word_start_marker(&tok).unwrap().is_none(), "a Metaspace that never prepends");
        tok.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
        assert!(without_word_start_marker(&tok).unwrap().is_none(), "a ByteLevel without prefix space");
    }
}
