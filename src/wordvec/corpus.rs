//! The training text of a static embedding model: a vocabulary with counts and the corpus as sentences of
//! vocabulary ids, held flat (`ids` + `offsets`) so that a billion-token corpus costs four bytes a token.
//!
//! Conventions of word2vec (Mikolov et al. 2013, `word2vec.c`) and GloVe (Pennington et al. 2014): the vocabulary
//! is sorted by descending count (ties broken by the word, so it is deterministic), words below `min_count` are
//! removed from the vocabulary *and* from the sentences (the context window then spans the gap, as in
//! `word2vec.c` and gensim), and a sentence left empty is dropped.
use std::collections::HashMap;

use crate::error::{Error, Result};

/// Words with their corpus counts, most frequent first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocab {
    words: Vec<String>,
    counts: Vec<u64>,
    index: HashMap<String, u32>,
}

impl Vocab {
    /// A vocabulary from `(word, count)` pairs, sorted by descending count then word. Duplicate words are an error.
    pub fn from_counts(mut pairs: Vec<(String, u64)>) -> Result<Vocab> {
        pairs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut index = HashMap::with_capacity(pairs.len());
        for (i, (w, _)) in pairs.iter().enumerate() {
            if index.insert(w.clone(), i as u32).is_some() {
                return Err(Error::Invalid(format!("word '{w}' appears twice in the vocabulary")));
            }
        }
        let (words, counts) = pairs.into_iter().unzip();
        Ok(Vocab { words, counts, index })
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The word of id `i`.
    pub fn word(&self, i: u32) -> &str {
        &self.words[i as usize]
    }

    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Corpus count of every id.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The id of `word`, if it is in the vocabulary.
    pub fn id(&self, word: &str) -> Option<u32> {
        self.index.get(word).copied()
    }

    /// Total count of all words.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// Sentences of vocabulary ids, flat: sentence `s` is `ids[offsets[s]..offsets[s + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    pub vocab: Vocab,
    ids: Vec<u32>,
    offsets: Vec<usize>,
}

impl Corpus {
    /// Builds the corpus from sentences of tokens, keeping words seen at least `min_count` times (see the module
    /// docs). Fails when no word reaches `min_count`.
    pub fn from_sentences<I, S, T>(sentences: I, min_count: u64) -> Result<Corpus>
    where
        I: IntoIterator<Item = S>,
        S: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        let mut b = CorpusBuilder::default();
        for sentence in sentences {
            b.push_sentence(sentence);
        }
        b.finish(min_count)
    }

    /// Number of (non-empty) sentences.
    pub fn n_sentences(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of tokens kept (words of the vocabulary).
    pub fn n_tokens(&self) -> usize {
        self.ids.len()
    }

    /// The ids of sentence `s`.
    pub fn sentence(&self, s: usize) -> &[u32] {
        &self.ids[self.offsets[s]..self.offsets[s + 1]]
    }

    /// Every sentence in order.
    pub fn sentences(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.n_sentences()).map(move |s| self.sentence(s))
    }

    /// All ids, sentence after sentence.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Sentence boundaries (`n_sentences + 1` offsets into [`Corpus::ids`]).
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }
}

/// Builds a [`Corpus`] one sentence at a time (so a large corpus is never held as strings): tokens are interned
/// on arrival and counted; [`CorpusBuilder::finish`] applies `min_count` and sorts the vocabulary.
#[derive(Debug, Default)]
pub struct CorpusBuilder {
    provisional: HashMap<String, u32>,
    seen: Vec<(String, u64)>,
    ids: Vec<u32>,
    offsets: Vec<usize>,
}

impl CorpusBuilder {
    /// Appends one sentence (an empty one is skipped).
    pub fn push_sentence<S: IntoIterator<Item = T>, T: AsRef<str>>(&mut self, tokens: S) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        for token in tokens {
            let t = token.as_ref();
            let id = match self.provisional.get(t) {
                Some(&id) => id,
                None => {
                    let id = self.seen.len() as u32;
                    self.provisional.insert(t.to_string(), id);
                    self.seen.push((t.to_string(), 0));
                    id
                }
            };
            self.seen[id as usize].1 += 1;
            self.ids.push(id);
        }
        if self.ids.len() > *self.offsets.last().unwrap_or(&0) {
            self.offsets.push(self.ids.len());
        }
    }

    /// Tokens pushed so far.
    pub fn n_tokens(&self) -> usize {
        self.ids.len()
    }

    /// The corpus: words below `min_count` leave the vocabulary and the sentences, and emptied sentences go.
    pub fn finish(self, min_count: u64) -> Result<Corpus> {
        let CorpusBuilder { seen, ids, mut offsets, .. } = self;
        if offsets.is_empty() {
            offsets.push(0);
        }
        let kept: Vec<(String, u64)> = seen.iter().filter(|(_, c)| *c >= min_count.max(1)).cloned().collect();
        if kept.is_empty() {
            return Err(Error::Invalid(format!(
                "no word occurs at least min_count = {min_count} times in the corpus ({} tokens, {} distinct)",
                ids.len(),
                seen.len()
            )));
        }
        let vocab = Vocab::from_counts(kept)?;
        let remap: Vec<Option<u32>> = seen.iter().map(|(w, _)| vocab.id(w)).collect();
        drop(seen);
        let (mut out, mut out_offsets) = (Vec::with_capacity(ids.len()), vec![0usize]);
        for s in 0..offsets.len() - 1 {
            out.extend(ids[offsets[s]..offsets[s + 1]].iter().filter_map(|&p| remap[p as usize]));
            if out.len() > *out_offsets.last().unwrap_or(&0) {
                out_offsets.push(out.len());
            }
        }
        out.shrink_to_fit();
        Ok(Corpus { vocab, ids: out, offsets: out_offsets })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary_is_sorted_and_rare_words_leave_the_sentences() {
        let text = ["a b c a", "d", "b a e", "c c"];
        let c = Corpus::from_sentences(text.iter().map(|s| s.split(' ')), 2).unwrap();
        assert_eq!(c.vocab.words(), ["a", "c", "b"]); // a 3, c 3 (tie by word), b 2
        assert_eq!(c.vocab.counts(), [3, 3, 2]);
        assert_eq!(c.n_sentences(), 3, "\"d\" alone is emptied and dropped");
        let words = |s: usize| c.sentence(s).iter().map(|&i| c.vocab.word(i)).collect::<Vec<_>>().join(" ");
        assert_eq!(words(0), "a b c a");
        assert_eq!(words(1), "b a");
        assert_eq!(words(2), "c c");
        assert_eq!(c.n_tokens(), 8);
        assert_eq!(c.vocab.id("e"), None);
        assert_eq!(c.vocab.total(), 8);
    }

    #[test]
    fn nothing_frequent_enough_is_an_error() {
        let e = Corpus::from_sentences([["x", "y"]], 2).unwrap_err().to_string();
        assert!(e.contains("min_count = 2") && e.contains("2 distinct"), "{e}");
        let e = Vocab::from_counts(vec![("a".into(), 1), ("a".into(), 2)]).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
    }
}
