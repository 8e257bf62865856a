//! Word-level inputs of the token tasks (NER tagging, dependency parsing): gold words in, subword ids and the
//! position of each word's **first subword** out, as in the zero-shot NER and parsing of Wu, Conneau et al. (2020)
//! and of BERT's NER recipe (Devlin et al. 2019 §5.3: the representation of a word is that of its first subword).
//!
//! **Encoding.** Each gold word is encoded on its own with the model's tokenizer
//! ([`ModelTokenizer::encode_words`] without its `[CLS]`/`[SEP]`), so a word's subwords never depend on its
//! neighbours and the treebank's or the NER corpus's tokenization is kept exactly; a word the tokenizer maps to no
//! subword (a control character, a lone combining mark) becomes `[UNK]`. Pieces are cached per word. A sentence is
//! `[CLS] w₁… w₂… … [SEP]`; `first[i]` is the position of word `i`'s first subword (so `first[i] ≥ 1`, and position
//! 0, `[CLS]`, is free to stand for the parser's root).
//!
//! **Length.** When the subwords of a sentence do not fit `max_len` positions (specials included), the words from
//! the first one that does not fit onwards are **dropped**: they get no input position and no prediction
//! ([`WordItem::kept`] < [`WordItem::words`]). Training skips their labels; evaluation scores them as missed (NER:
//! tagged `O`; parsing: the word itself as head, which no gold tree has, and no label), so truncation can only lower
//! a score, and the count is reported.
use std::collections::HashMap;

use tch::{Device, Kind, Tensor};

use crate::error::{Error, Result};
use crate::model::ModelTokenizer;

/// One sentence encoded for a token task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordItem {
    /// `[CLS] subwords [SEP]`.
    pub ids: Vec<i64>,
    /// Position in `ids` of the first subword of each kept word (`first.len()` = kept words).
    pub first: Vec<i64>,
    /// Words of the sentence, kept or not.
    pub words: usize,
}

impl WordItem {
    /// Words that have an input position.
    pub fn kept(&self) -> usize {
        self.first.len()
    }
}

/// Encodes gold-tokenized sentences of one language, caching the pieces of each distinct word.
pub struct WordEncoder<'a> {
    tok: &'a ModelTokenizer,
    lang: String,
    cache: HashMap<String, Vec<i64>>,
}

impl<'a> WordEncoder<'a> {
    pub fn new(tok: &'a ModelTokenizer, lang: &str) -> Self {
        WordEncoder { tok, lang: lang.to_string(), cache: HashMap::new() }
    }

    /// The subword ids of one word (at least one: `[UNK]` when the tokenizer gives none).
    pub fn pieces(&mut self, word: &str) -> Result<&[i64]> {
        if !self.cache.contains_key(word) {
            let inner = self.tok.encode_content(word, &self.lang)?;
            let inner = if inner.is_empty() { vec![self.tok.specials().unk as i64] } else { inner };
            self.cache.insert(word.to_string(), inner);
        }
        Ok(&self.cache[word])
    }

    /// `[CLS] pieces… [SEP]` of `words`, dropping the words that do not fit `max_len` (≥ 3) positions.
    pub fn encode<S: AsRef<str>>(&mut self, words: &[S], max_len: usize) -> Result<WordItem> {
        if max_len < 3 {
            return Err(Error::Invalid(format!("max_len must be at least 3 ([CLS] word [SEP]), got {max_len}")));
        }
        let budget = max_len.saturating_sub(self.tok.added_specials(false));
        let mut content = Vec::new();
        let mut first = Vec::with_capacity(words.len());
        for w in words {
            let p = self.pieces(w.as_ref())?;
            if content.len() + p.len() > budget {
                break;
            }
            first.push(content.len() as i64);
            content.extend_from_slice(p);
        }
        let framed = self.tok.frame(&content, None)?;
        let lead = framed.lead() as i64;
        first.iter_mut().for_each(|f| *f += lead);
        Ok(WordItem { ids: framed.ids, first, words: words.len() })
    }
}

/// A padded batch of [`WordItem`]s.
#[derive(Debug)]
pub struct WordBatch {
    /// Subword ids, padded. [batch, seq] i64
    pub ids: Tensor,
    /// 1 for real subwords. [batch, seq] i64
    pub mask: Tensor,
    /// First-subword positions of the kept words, padded with 0. [batch, words] i64
    pub first: Tensor,
    /// True for real words. [batch, words] bool
    pub word_mask: Tensor,
    /// Longest kept word count of the batch (`words` above, at least 1).
    pub words: usize,
}

/// Pads `items` into one batch on `device`.
pub fn word_batch(items: &[&WordItem], pad: i64, device: Device) -> WordBatch {
    let rows: Vec<&[i64]> = items.iter().map(|it| it.ids.as_slice()).collect();
    let (ids, mask, _) = crate::nn::batch::padded(&rows, pad, device);
    let words = items.iter().map(|it| it.kept()).max().unwrap_or(0).max(1);
    let mut first = Vec::with_capacity(items.len() * words);
    let mut real = Vec::with_capacity(items.len() * words);
    for it in items {
        first.extend(it.first.iter().copied().chain(std::iter::repeat_n(0, words - it.kept())));
        real.extend((0..words).map(|j| j < it.kept()));
    }
    let shape = [items.len() as i64, words as i64];
    WordBatch {
        ids,
        mask,
        first: Tensor::from_slice(&first).view(shape).to_device(device),
        word_mask: Tensor::from_slice(&real).view(shape).to_device(device),
        words,
    }
}

/// Labels of the kept words of each item, padded with `ignore` (for `cross_entropy` with that ignore index).
/// `labels[b]` holds the labels of all words of item `b`; those beyond `kept()` are dropped.
/// # Shapes
/// → [batch, words] i64
pub fn word_labels(items: &[&WordItem], labels: &[&[i64]], words: usize, ignore: i64, device: Device) -> Tensor {
    let mut out = Vec::with_capacity(items.len() * words);
    for (it, l) in items.iter().zip(labels) {
        out.extend((0..words).map(|j| if j < it.kept() { l[j] } else { ignore }));
    }
    Tensor::from_slice(&out).view([items.len() as i64, words as i64]).to_device(device)
}

/// The hidden state of each word's first subword.
/// # Shapes
/// `hidden` [batch, seq, d], `first` [batch, words] i64 → [batch, words, d]
pub fn gather_words(hidden: &Tensor, first: &Tensor) -> Tensor {
    let d = hidden.size()[2];
    let (b, w) = (first.size()[0], first.size()[1]);
    hidden.gather(1, &first.unsqueeze(-1).expand([b, w, d], false), false)
}

/// Reads a `[batch, words]` tensor of class indices into per-item vectors of the kept words.
pub fn per_item(pred: &Tensor, items: &[&WordItem]) -> Result<Vec<Vec<i64>>> {
    let rows = Vec::<Vec<i64>>::try_from(pred.to_kind(Kind::Int64).to_device(Device::Cpu))
        .map_err(|e| Error::Invalid(format!("reading predictions: {e}")))?;
    Ok(rows.into_iter().zip(items).map(|(r, it)| r[..it.kept()].to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> ModelTokenizer {
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s", "on", "mat"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        ModelTokenizer::HuggingFace(crate::model::tokenizer::load_hf_tokenizer(dir.path()).unwrap())
    }

    #[test]
    fn first_subwords_and_truncation() {
        let tok = tokenizer();
        let mut enc = WordEncoder::new(&tok, "en");
        let it = enc.encode(&["the", "cats", "sat"], 64).unwrap();
        assert_eq!(it.ids, [2, 5, 6, 8, 7, 3]);
        assert_eq!((it.first.as_slice(), it.words, it.kept()), (&[1i64, 2, 4][..], 3, 3));
        // 6 positions: [CLS] the cat ##s [SEP] fits, `sat` does not.
        let it = enc.encode(&["the", "cats", "sat"], 5).unwrap();
        assert_eq!((it.ids.as_slice(), it.first.as_slice(), it.words), (&[2i64, 5, 6, 8, 3][..], &[1i64, 2][..], 3));
        // A word the tokenizer drops entirely becomes [UNK].
        assert_eq!(enc.pieces("\u{200b}").unwrap(), [1]);
        assert!(enc.encode(&["the"], 2).is_err());
    }

    #[test]
    fn batches_gather_first_subwords_and_pad_labels() {
        let tok = tokenizer();
        let mut enc = WordEncoder::new(&tok, "en");
        let a = enc.encode(&["cats", "sat"], 64).unwrap();
        let b = enc.encode(&["the", "mat", "on", "the", "mat"], 6).unwrap(); // keeps 4 of 5 words
        let items = [&a, &b];
        let batch = word_batch(&items, 0, Device::Cpu);
        assert_eq!(batch.words, 4);
        assert_eq!(Vec::<Vec<i64>>::try_from(&batch.first).unwrap(), [vec![1, 3, 0, 0], vec![1, 2, 3, 4]]);
        let hidden = Tensor::arange(2 * 6, (Kind::Float, Device::Cpu)).view([2, 6, 1]);
        let g = gather_words(&hidden, &batch.first);
        assert_eq!(Vec::<f32>::try_from(g.reshape([-1])).unwrap(), [1.0, 3.0, 0.0, 0.0, 7.0, 8.0, 9.0, 10.0]);
        let la: &[i64] = &[5, 6];
        let lb: &[i64] = &[1, 2, 3, 4, 9];
        let l = word_labels(&items, &[la, lb], batch.words, -100, Device::Cpu);
        assert_eq!(Vec::<Vec<i64>>::try_from(&l).unwrap(), [vec![5, 6, -100, -100], vec![1, 2, 3, 4]]);
        let p = per_item(&l, &items).unwrap();
        assert_eq!(p, [vec![5, 6], vec![1, 2, 3, 4]]);
        assert_eq!(Vec::<Vec<bool>>::try_from(&batch.word_mask).unwrap()[0], [true, true, false, false]);
    }
}
