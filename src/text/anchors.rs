//! Anchor-point statistics between two languages' tokenized corpora: how many subword types both languages use,
//! and what share of each corpus's tokens are of such shared types. These are the "anchor points" whose role
//! Wu, Conneau et al. 2020 (§4, Table 1 rows Default / Default anchors / No anchors / Extra anchors) ablate; under
//! [`AnchorScheme::NoAnchors`](crate::text::tokenize::AnchorScheme) the count is zero by construction.
//!
//! A type is a token id that occurs at least once in the (first `max_lines` lines of the) corpus after encoding with
//! the language's tokenizer; special tokens, `[UNK]` included, are not counted as types or tokens.
//!
//! Beside them, what shows whether one language's alphabet has crowded the other out of a joint vocabulary (the
//! case [`TokenizerSpec::character_coverage`](crate::text::tokenize::TokenizerSpec) exists for): each corpus's
//! fertility, tokens (`[UNK]` included) per whitespace-separated word, its `[UNK]` share of those tokens, and the
//! number of vocabulary entries holding a Han character (CJK Unified Ideographs U+4E00–U+9FFF, Extension A
//! U+3400–U+4DBF, Compatibility Ideographs U+F900–U+FAFF).
use crate::error::{Error, Result};
use crate::text::tokenize::{CrossTokenizer, Special, SPECIAL_TOKENS};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Shared-vocabulary statistics of two corpora.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnchorStats {
    /// Distinct non-special token ids in corpus a.
    pub types_a: usize,
    pub types_b: usize,
    /// Ids occurring in both corpora.
    pub shared_types: usize,
    /// Fraction of corpus a's (non-special) tokens whose id is shared; 0 for an empty corpus.
    pub shared_token_share_a: f64,
    pub shared_token_share_b: f64,
    /// Tokens (`[UNK]` included) per whitespace-separated word of corpus a; 0 for an empty corpus.
    pub tokens_per_word_a: f64,
    pub tokens_per_word_b: f64,
    /// Fraction of corpus a's tokens that are `[UNK]`; 0 for an empty corpus.
    pub unk_share_a: f64,
    pub unk_share_b: f64,
    /// Entries of the global vocabulary (specials included) and those holding a Han character.
    pub vocab_size: usize,
    pub han_entries: usize,
}

/// What one corpus file (one sentence per line) encodes to.
struct CorpusCounts {
    /// Occurrences of each non-special token id.
    ids: HashMap<u32, u64>,
    /// Whitespace-separated words, all tokens, `[UNK]` tokens.
    words: u64,
    tokens: u64,
    unk: u64,
}

impl CorpusCounts {
    fn read(tok: &CrossTokenizer, lang: &str, path: &Path, max_lines: Option<usize>) -> Result<Self> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut c = CorpusCounts { ids: HashMap::new(), words: 0, tokens: 0, unk: 0 };
        for line in BufReader::new(f).lines().take(max_lines.unwrap_or(usize::MAX)) {
            let line = line.map_err(|e| Error::io(path, e))?;
            c.words += line.split_whitespace().count() as u64;
            for id in tok.encode(&line, lang)? {
                c.tokens += 1;
                if id == Special::Unk as u32 {
                    c.unk += 1;
                } else if id as usize >= SPECIAL_TOKENS.len() {
                    *c.ids.entry(id).or_default() += 1;
                }
            }
        }
        Ok(c)
    }

    fn tokens_per_word(&self) -> f64 {
        ratio(self.tokens, self.words)
    }

    fn unk_share(&self) -> f64 {
        ratio(self.unk, self.tokens)
    }
}

/// `n / d`, 0 when `d` is 0.
fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 / d as f64
    }
}

/// Whether `c` is a Han ideograph (the blocks of the module docs).
pub fn is_han(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{F900}'..='\u{FAFF}')
}

/// Anchor statistics of corpus `a = (lang, path)` against corpus `b`, reading at most `max_lines` lines of each.
pub fn anchor_stats(
    tok: &CrossTokenizer,
    a: (&str, &Path),
    b: (&str, &Path),
    max_lines: Option<usize>,
) -> Result<AnchorStats> {
    let ca = CorpusCounts::read(tok, a.0, a.1, max_lines)?;
    let cb = CorpusCounts::read(tok, b.0, b.1, max_lines)?;
    let share = |mine: &HashMap<u32, u64>, other: &HashMap<u32, u64>| -> f64 {
        let total: u64 = mine.values().sum();
        let shared: u64 = mine.iter().filter(|(id, _)| other.contains_key(id)).map(|(_, n)| n).sum();
        ratio(shared, total)
    };
    let vocab_size = tok.vocab_size();
    let han_entries =
        (0..vocab_size as u32).filter_map(|id| tok.id_to_token(id)).filter(|t| t.chars().any(is_han)).count();
    Ok(AnchorStats {
        types_a: ca.ids.len(),
        types_b: cb.ids.len(),
        shared_types: ca.ids.keys().filter(|id| cb.ids.contains_key(id)).count(),
        shared_token_share_a: share(&ca.ids, &cb.ids),
        shared_token_share_b: share(&cb.ids, &ca.ids),
        tokens_per_word_a: ca.tokens_per_word(),
        tokens_per_word_b: cb.tokens_per_word(),
        unk_share_a: ca.unk_share(),
        unk_share_b: cb.unk_share(),
        vocab_size,
        han_entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize::tests::{write_corpora, write_many_character_corpora};
    use crate::text::tokenize::{AnchorScheme, TokenizerSpec};

    fn stats(scheme: AnchorScheme, files: &[(String, std::path::PathBuf)]) -> AnchorStats {
        let tok = CrossTokenizer::train(&TokenizerSpec::new(scheme, 200), files).unwrap();
        anchor_stats(&tok, ("en", &files[0].1), ("fr", &files[1].1), Some(200)).unwrap()
    }

    #[test]
    fn no_anchors_share_nothing_and_joint_shares_most() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 300);
        let none = stats(AnchorScheme::NoAnchors, &files);
        assert_eq!(none.shared_types, 0);
        assert_eq!(none.shared_token_share_a, 0.0);
        assert!(none.types_a > 0 && none.types_b > 0);
        let joint = stats(AnchorScheme::Joint, &files);
        let union = stats(AnchorScheme::PerLanguageUnion, &files);
        assert!(union.shared_types > 0, "{union:?}");
        // On this toy corpus every word is a whole token under both schemes, so both share the same words
        // (`paris`, `2020`, `.`); with small vocabularies the per-language BPEs split words into shared characters
        // and can share *more* types than Joint, so only `>=` at this size is asserted.
        assert!(joint.shared_types >= union.shared_types, "joint {joint:?} union {union:?}");
        for s in [&joint, &union] {
            assert!(s.shared_types <= s.types_a.min(s.types_b));
            assert!(s.shared_token_share_a > 0.0 && s.shared_token_share_a <= 1.0);
            assert!(s.shared_token_share_b > 0.0 && s.shared_token_share_b <= 1.0);
        }
    }

    #[test]
    fn same_corpus_shares_everything_and_missing_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 100);
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 150), &files).unwrap();
        let s = anchor_stats(&tok, ("en", &files[0].1), ("en", &files[0].1), None).unwrap();
        assert_eq!(s.shared_types, s.types_a);
        assert_eq!(s.shared_token_share_a, 1.0);
        let missing = dir.path().join("missing.txt");
        assert!(anchor_stats(&tok, ("en", &missing), ("fr", &files[1].1), None).is_err());
        assert!(anchor_stats(&tok, ("de", &files[0].1), ("fr", &files[1].1), None).is_err());
    }

    #[test]
    fn fertility_unknowns_and_han_entries_show_a_crowded_alphabet() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_many_character_corpora(dir.path());
        let run = |coverage: Option<f64>| {
            let spec = TokenizerSpec { character_coverage: coverage, ..TokenizerSpec::new(AnchorScheme::Joint, 200) };
            let tok = CrossTokenizer::train(&spec, &files).unwrap();
            anchor_stats(&tok, ("en", &files[0].1), ("zh", &files[1].1), None).unwrap()
        };
        // Every character kept: the 400 ideographs fill the vocabulary, and English's 8 words are 27 letters.
        let all = run(None);
        assert_eq!(all.han_entries, 400);
        assert_eq!(all.tokens_per_word_a, 27.0 / 8.0);
        assert_eq!((all.unk_share_a, all.unk_share_b), (0.0, 0.0));
        assert_eq!(all.tokens_per_word_b, 4.0, "each 4-ideograph word is 4 single characters");
        // 70 % coverage keeps English's letters only: no Han entry, English merges, every Chinese token is [UNK].
        let covered = run(Some(0.7));
        assert_eq!(covered.han_entries, 0);
        assert!(covered.tokens_per_word_a < all.tokens_per_word_a, "{covered:?}");
        assert_eq!(covered.unk_share_b, 1.0);
        assert!(is_han('\u{4e00}') && is_han('\u{3400}') && is_han('\u{f900}') && !is_han('a') && !is_han('\u{3042}'));
    }
}
