//! Synthetic languages made by rewriting English: `enx`, English in a script no other language of a run uses, and
//! its negative control `enxrev`, the same with the word order of every sentence reversed. The controlled pair en–enx
//! of K et al. 2020 ("Cross-Lingual Ability of Multilingual BERT: An Empirical Study", "Fake-English") and Dufter &
//! Schütze 2020 ("Identifying Elements Essential for BERT's Multilinguality", shifted code points, inverted order):
//! enx shares English's structure and word frequencies but no subword, so a joint vocabulary of en–enx has no anchor
//! at all, and zero-shot transfer from en to enx measures what the model learns without anchors.
//!
//! # The character map ([`to_script`])
//! A bijection applied character by character after Unicode NFC (the tokenizer's own normalization, so the two
//! languages tokenize alike), built so that the BERT pre-tokenizer of [`crate::text::tokenize`] splits enx exactly
//! where it splits English:
//!
//! | English | enx | class kept |
//! |---|---|---|
//! | `a`–`z`, `A`–`Z` | Deseret small / capital letters U+10428+i / U+10400+i | letter, and its case (lowercasing commutes) |
//! | ASCII punctuation (32), Latin-1 punctuation `¡§«¶·»¿` (7), General Punctuation U+2010–U+2027 (24) | the 66 punctuation characters of Supplemental Punctuation U+2E00–U+2E42 (all but U+2E2F), in order | punctuation (the pre-tokenizer splits around it) |
//! | whitespace | unchanged | separator |
//! | any other character of the BMP (digits, accented letters, symbols) | Supplementary Private Use Area-A, U+F0000 + code point | word character |
//! | any other character of plane 1 | Supplementary Private Use Area-B, U+100000 + (code point − U+10000) | word character |
//!
//! Characters of planes 2 and above (none in the English data) are kept. A rarer punctuation character outside the
//! table (none in the English novels) becomes a word character in enx, the only place the two tokenizations can
//! differ. Non-ASCII capitals do not keep their case (their images are private-use characters), which matters only
//! to a lowercasing tokenizer (no preset lowercases).
//!
//! # Word order ([`Rewrite::ScriptReversed`])
//! A sentence is pre-tokenized as the tokenizer does (whitespace, then every punctuation character alone), its words
//! are reversed and joined by single spaces. Gold-tokenized task data is reversed token by token (a token keeps its
//! characters' order): NER tags are reversed with their BIO prefixes repaired ([`reverse_bio`]), dependency heads
//! renumbered ([`reverse_heads`]).
use crate::data::formats::{NliExample, TaggedSentence};
use serde::{Deserialize, Serialize};
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};
use unicode_normalization::UnicodeNormalization;

/// How a synthetic language rewrites its source's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rewrite {
    /// Every character mapped by [`to_script`] (enx).
    Script,
    /// [`Rewrite::Script`], then the words of every sentence reversed (enxrev).
    ScriptReversed,
}

/// Punctuation of English mapped to [`PUNCT_TARGETS`], position by position.
const PUNCT_SOURCES: &str = concat!("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "¡§«¶·»¿", "‐‑‒–—―‖‗‘’‚‛“”„‟†‡•‣․‥…‧");

/// Supplemental Punctuation U+2E00–U+2E42 without U+2E2F (a modifier letter).
fn punct_target(i: usize) -> char {
    let cp = 0x2E00 + i as u32 + u32::from(i >= 0x2F);
    char::from_u32(cp).expect("in the Supplemental Punctuation block")
}

/// The enx image of one English character (see the module docs).
pub fn to_script(c: char) -> char {
    let cp = c as u32;
    let shifted = |base: u32, off: u32| char::from_u32(base + off).expect("a valid scalar value");
    match c {
        'a'..='z' => shifted(0x10428, cp - 'a' as u32),
        'A'..='Z' => shifted(0x10400, cp - 'A' as u32),
        _ if c.is_whitespace() => c,
        _ => match PUNCT_SOURCES.chars().position(|p| p == c) {
            Some(i) => punct_target(i),
            None if cp < 0xFFFE => shifted(0xF0000, cp),
            None if (0x10000..0x1FFFE).contains(&cp) => shifted(0x100000, cp - 0x10000),
            None => c,
        },
    }
}

impl Rewrite {
    /// Whether the word order is reversed.
    pub fn reverses(self) -> bool {
        self == Rewrite::ScriptReversed
    }

    /// One sentence of running text (a corpus line, an XNLI premise).
    pub fn sentence(self, text: &str) -> String {
        let mapped: String = text.nfc().map(to_script).collect();
        if !self.reverses() {
            return mapped;
        }
        let mut words = pre_tokenize(&mapped);
        words.reverse();
        words.join(" ")
    }

    /// One word's characters mapped (NFC first); its order is kept.
    pub fn word(self, word: &str) -> String {
        word.nfc().map(to_script).collect()
    }

    /// Gold-tokenized words (NER, UD): each word mapped by [`Rewrite::word`]; the order reversed with
    /// [`Rewrite::ScriptReversed`].
    pub fn words(self, words: &[String]) -> Vec<String> {
        let mut out: Vec<String> = words.iter().map(|w| self.word(w)).collect();
        if self.reverses() {
            out.reverse();
        }
        out
    }

    /// NLI pairs in place: premise and hypothesis rewritten as sentences, labels kept.
    pub fn nli_examples(self, rows: &mut [NliExample]) {
        for e in rows {
            e.premise = self.sentence(&e.premise);
            e.hypothesis = self.sentence(&e.hypothesis);
        }
    }

    /// Tagged sentences in place: words by [`Rewrite::words`], tags by [`Rewrite::tags`].
    pub fn tagged(self, rows: &mut [TaggedSentence]) {
        for s in rows {
            s.tokens = self.words(&s.tokens);
            s.tags = self.tags(&s.tags);
        }
    }

    /// NER tags of [`Rewrite::words`]' output: unchanged, or reversed with their BIO prefixes repaired.
    pub fn tags(self, tags: &[String]) -> Vec<String> {
        if self.reverses() {
            reverse_bio(tags)
        } else {
            tags.to_vec()
        }
    }

    /// Dependency heads (1-based, 0 = root) of [`Rewrite::words`]' output.
    pub fn heads(self, heads: &[usize]) -> Vec<usize> {
        if self.reverses() {
            reverse_heads(heads)
        } else {
            heads.to_vec()
        }
    }

    /// A per-word sequence (UPOS, labels) in [`Rewrite::words`]' order.
    pub fn order<T: Clone>(self, xs: &[T]) -> Vec<T> {
        let mut out = xs.to_vec();
        if self.reverses() {
            out.reverse();
        }
        out
    }
}

/// The words of `text` as the tokenizer's BERT pre-tokenizer splits them.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut pre = PreTokenizedString::from(text);
    BertPreTokenizer.pre_tokenize(&mut pre).expect("the BERT pre-tokenizer does not fail");
    pre.get_splits(OffsetReferential::Original, OffsetType::Char).into_iter().map(|(w, _, _)| w.to_string()).collect()
}

/// BIO tags of a reversed sentence: `tags` reversed, each entity's first tag (now its last) `B-`, the rest `I-`.
/// An entity is a maximal run of one type that starts at a `B-` (or at an `I-` after another type or `O`).
pub fn reverse_bio(tags: &[String]) -> Vec<String> {
    // Entity spans in the original order: (start, end exclusive, type).
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    for (i, t) in tags.iter().enumerate() {
        let (prefix, kind) = t.split_once('-').unwrap_or((t.as_str(), ""));
        match prefix {
            "I" if spans.last().is_some_and(|&(_, end, k)| end == i && k == kind) => spans.last_mut().unwrap().1 += 1,
            "B" | "I" => spans.push((i, i + 1, kind)),
            _ => {}
        }
    }
    let n = tags.len();
    let mut out = vec!["O".to_string(); n];
    for (start, end, kind) in spans {
        // Original [start, end) becomes [n - end, n - start).
        for (j, slot) in out.iter_mut().enumerate().take(n - start).skip(n - end) {
            *slot = format!("{}-{kind}", if j == n - end { "B" } else { "I" });
        }
    }
    out
}

/// Heads of a reversed sentence: word `i` (1-based) moves to `n + 1 - i`, and so does its head; the root stays 0.
pub fn reverse_heads(heads: &[usize]) -> Vec<usize> {
    let n = heads.len();
    heads.iter().rev().map(|&h| if h == 0 { 0 } else { n + 1 - h }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn s(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_map_is_injective_and_keeps_the_pre_tokenizers_splits() {
        assert_eq!(PUNCT_SOURCES.chars().count(), 63);
        let sources: Vec<char> = (0u32..0x3000).filter_map(char::from_u32).collect();
        let images: HashSet<char> = sources.iter().map(|&c| to_script(c)).collect();
        assert_eq!(images.len(), sources.len(), "two characters share an image");
        // Every punctuation character of the table splits in both languages; letters and digits do not.
        for (i, p) in PUNCT_SOURCES.chars().enumerate() {
            let img = punct_target(i);
            assert_eq!(to_script(p), img);
            assert_eq!(pre_tokenize(&format!("a{img}b")).len(), 3, "U+{:04X} is not punctuation", img as u32);
            assert_eq!(pre_tokenize(&format!("a{p}b")).len(), 3, "{p}");
        }
        let sentence = "Mr. Dickens' “Bleak House” (1853) — £3, naïve café!";
        let en = pre_tokenize(sentence);
        let enx = pre_tokenize(&Rewrite::Script.sentence(sentence));
        assert_eq!(en.len(), enx.len());
        for (a, b) in en.iter().zip(&enx) {
            assert_eq!(a.chars().map(to_script).collect::<String>(), *b);
        }
        // No character of English survives.
        assert!(Rewrite::Script.sentence(sentence).chars().all(|c| c == ' ' || !sentence.contains(c)));
        // Lowercasing commutes with the map on ASCII letters.
        assert_eq!(to_script('Q').to_lowercase().next().unwrap(), to_script('q'));
        // NFC first: a decomposed é maps like the composed one.
        assert_eq!(Rewrite::Script.sentence("cafe\u{301}"), Rewrite::Script.sentence("café"));
    }

    #[test]
    fn reversal_reverses_pre_tokenized_words() {
        let fwd = Rewrite::Script.sentence("I can't, he said.");
        let rev = Rewrite::ScriptReversed.sentence("I can't, he said.");
        let mut words = pre_tokenize(&fwd);
        assert_eq!(words.len(), 8);
        words.reverse();
        assert_eq!(rev, words.join(" "));
        assert_eq!(Rewrite::ScriptReversed.words(&s(&["a", "bc"])), Rewrite::Script.words(&s(&["bc", "a"])));
    }

    #[test]
    fn reversed_bio_tags_start_each_entity_with_b() {
        let tags = s(&["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "I-ORG"]);
        assert_eq!(reverse_bio(&tags), s(&["B-ORG", "B-LOC", "I-LOC", "B-LOC", "O", "B-PER", "I-PER"]));
        assert_eq!(reverse_bio(&reverse_bio(&tags)), s(&["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "B-ORG"]));
        assert_eq!(Rewrite::Script.tags(&tags), tags);
    }

    #[test]
    fn reversed_heads_keep_the_tree() {
        // "she saw him": saw is the root, she and him depend on it.
        let heads = vec![2, 0, 2];
        assert_eq!(reverse_heads(&heads), vec![2, 0, 2]);
        // "the big dog barks": the→dog, big→dog, dog→barks, barks root.
        let heads = vec![3, 3, 4, 0];
        let rev = reverse_heads(&heads);
        assert_eq!(rev, vec![0, 1, 2, 2]);
        // Every arc survives, renumbered.
        for (i, &h) in heads.iter().enumerate() {
            let j = heads.len() - i; // new 1-based position of word i + 1
            assert_eq!(rev[j - 1], if h == 0 { 0 } else { heads.len() + 1 - h });
        }
    }
}
