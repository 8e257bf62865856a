//! Word-level inputs of the token tasks (NER tagging, dependency parsing): gold words in, subword ids and the
//! position of each word's **first subword** out, as in the zero-shot NER and parsing of Wu, Conneau et al. (2020)
//! and of BERT's NER recipe (Devlin et al. 2019 §5.3: the representation of a word is that of its first subword).
//!
//! **Encoding.** Each gold word is encoded on its own with the model's tokenizer
//! ([`ModelTokenizer::encode_content`], no `[CLS]`/`[SEP]`), so a word's subwords never depend on its neighbours'
//! and the treebank's or the NER corpus's tokenization is kept exactly; a word the tokenizer maps to no subword (a
//! control character, a lone combining mark) becomes `[UNK]`. A tokenizer that marks word starts (XLM-R's
//! SentencePiece `▁`, a byte-level BPE's `Ġ` with `add_prefix_space`; [`crate::model::word_start`]) gives a word
//! encoded on its own that marker, as if a space preceded it, which is right for a word after a space or at the
//! sentence's start. A word **glued** to the one before it (no space between: UD's `SpaceAfter=No` on the word
//! before, a later part of a multiword token that its parts spell, as `n't` of `didn't`, every word of a language
//! written without spaces; [`crate::data::formats::conllu::Sentence::glued`]) is encoded with the marker turned
//! off, as its continuation pieces. For XLM-R's tokenizer this keeps a lone `▁` out of Chinese words (`这样` glued
//! is `这样`, not `▁` `这样`) and out of glued punctuation. Where no piece of the running text crosses a gold word
//! boundary, the ids then equal those transformers gives the running text written out from the words (tested on an
//! XLM-R-style folder in tests/hf_tokenizers.rs, and on e5-small with UD test treebanks in tests/e5_word_inputs.rs).
//! Tokenizers that mark no word start (crossling's, BERT's WordPiece, a byte-level BPE without `add_prefix_space`)
//! read every word as it is, glued or not; for the last this means no `Ġ` even after a space. transformers'
//! `is_split_into_words=True` instead marks every word as spaced. Pieces are cached per word and reading. A
//! sentence is `[CLS] w₁… w₂… … [SEP]`; `first[i]` is the position of word `i`'s first subword (so `first[i] ≥ 1`,
//! and position 0, `[CLS]`, is free to stand for the parser's root).
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

/// What enters a token task's cache key about how `tok` reads words: `"running-text"` when it marks word starts, so
/// that glued words read without the marker; nothing otherwise, which keeps the keys of results that did not change.
pub fn spacing_key(tok: &ModelTokenizer) -> Result<Option<serde_json::Value>> {
    Ok(tok.marks_word_starts()?.then(|| serde_json::json!("running-text")))
}

/// What enters a parsing cache key beside [`spacing_key`]: which parts of a CoNLL-U multiword token read as glued
/// ([`crate::data::formats::conllu::Sentence::glued`]). Only a tokenizer that marks word starts reads them
/// differently, so it goes only where [`spacing_key`] does.
pub const MULTIWORD_PARTS_KEY: &str = "glued where the token spells its words";

/// Languages written without spaces between words (every word after the first is glued to the one before it).
pub const UNSPACED_LANGUAGES: [&str; 3] = ["ja", "th", "zh"];

/// `glued[i]` of `n` words of language `lang` when the corpus does not say: every word glued in an unspaced
/// language ([`UNSPACED_LANGUAGES`]), none in any other.
pub fn glued_by_language(lang: &str, n: usize) -> Vec<bool> {
    let unspaced = UNSPACED_LANGUAGES.contains(&crate::text::pseudo::eval_file_language(lang));
    (0..n).map(|i| i > 0 && unspaced).collect()
}

/// `glued[i]` of `words` cut from `text` in order: word `i` starts where word `i − 1` ends. A word not found at
/// or after the end of the one before counts as spaced.
pub fn glued_in_text<S: AsRef<str>>(text: &str, words: &[S]) -> Vec<bool> {
    let mut at = 0usize;
    let mut out = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        match text[at..].find(w.as_ref()) {
            Some(off) => {
                out.push(i > 0 && off == 0);
                at += off + w.as_ref().len();
            }
            None => out.push(false),
        }
    }
    out
}

/// Encodes gold-tokenized sentences of one language, caching the pieces of each distinct word and reading.
pub struct WordEncoder<'a> {
    tok: &'a ModelTokenizer,
    /// The tokenizer without its word-start marker, built on the first glued word; `Some(None)` when it has none.
    glued_tok: Option<Option<ModelTokenizer>>,
    lang: String,
    /// Pieces by (read without the word-start marker, word).
    cache: HashMap<(bool, String), Vec<i64>>,
}

impl<'a> WordEncoder<'a> {
    pub fn new(tok: &'a ModelTokenizer, lang: &str) -> Self {
        WordEncoder { tok, glued_tok: None, lang: lang.to_string(), cache: HashMap::new() }
    }

    /// The subword ids of one word, `glued` to the word before it or not (at least one: `[UNK]` when the
    /// tokenizer gives none).
    pub fn pieces(&mut self, word: &str, glued: bool) -> Result<&[i64]> {
        if glued && self.glued_tok.is_none() {
            self.glued_tok = Some(self.tok.without_word_start_marker()?);
        }
        // Only a tokenizer that marks word starts reads a glued word otherwise.
        let unmarked = if glued { self.glued_tok.as_ref().and_then(Option::as_ref) } else { None };
        let key = (unmarked.is_some(), word.to_string());
        if !self.cache.contains_key(&key) {
            let inner = match unmarked {
                None => self.tok.encode_content(word, &self.lang)?,
                Some(tok) => {
                    // Only the word's start is glued: after a space inside it, the rest starts a word.
                    let (head, rest) = word.split_once(char::is_whitespace).unwrap_or((word, ""));
                    let mut ids = tok.encode_content(head, &self.lang)?;
                    if !rest.trim().is_empty() {
                        ids.extend(self.tok.encode_content(rest, &self.lang)?);
                    }
                    ids
                }
            };
            let inner = if inner.is_empty() { vec![self.tok.specials().unk as i64] } else { inner };
            self.cache.insert(key.clone(), inner);
        }
        Ok(&self.cache[&key])
    }

    /// [`Self::encode`] with the spacing of the encoder's language ([`glued_by_language`]), for corpora that do not
    /// record it (PAN-X).
    pub fn encode_in_language<S: AsRef<str>>(&mut self, words: &[S], max_len: usize) -> Result<WordItem> {
        let glued = glued_by_language(&self.lang, words.len());
        self.encode(words, &glued, max_len)
    }

    /// `[CLS] pieces… [SEP]` of `words` (`glued[i]`: word `i` follows word `i − 1` with no space; `glued[0]` is
    /// ignored), dropping the words that do not fit `max_len` (≥ 3) positions.
    pub fn encode<S: AsRef<str>>(&mut self, words: &[S], glued: &[bool], max_len: usize) -> Result<WordItem> {
        if max_len < 3 {
            return Err(Error::Invalid(format!("max_len must be at least 3 ([CLS] word [SEP]), got {max_len}")));
        }
        if glued.len() != words.len() {
            return Err(Error::Invalid(format!(
                "{} words but {} spacing flags (expected one per word)",
                words.len(),
                glued.len()
            )));
        }
        let budget = max_len.saturating_sub(self.tok.added_specials(false));
        let mut content = Vec::new();
        let mut first = Vec::with_capacity(words.len());
        for (i, (w, &g)) in words.iter().zip(glued).enumerate() {
            let p = self.pieces(w.as_ref(), i > 0 && g)?;
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
        let it = enc.encode(&["the", "cats", "sat"], &[false; 3], 64).unwrap();
        assert_eq!(it.ids, [2, 5, 6, 8, 7, 3]);
        assert_eq!((it.first.as_slice(), it.words, it.kept()), (&[1i64, 2, 4][..], 3, 3));
        // 6 positions: [CLS] the cat ##s [SEP] fits, `sat` does not.
        let it = enc.encode(&["the", "cats", "sat"], &[false; 3], 5).unwrap();
        assert_eq!((it.ids.as_slice(), it.first.as_slice(), it.words), (&[2i64, 5, 6, 8, 3][..], &[1i64, 2][..], 3));
        // A word the tokenizer drops entirely becomes [UNK].
        assert_eq!(enc.pieces("\u{200b}", false).unwrap(), [1]);
        assert!(enc.encode(&["the"], &[false], 2).is_err());
        let e = enc.encode(&["the", "cat"], &[false], 64).unwrap_err();
        assert!(e.to_string().contains("2 words but 1 spacing flags"), "{e}");
    }

    #[test]
    fn batches_gather_first_subwords_and_pad_labels() {
        let tok = tokenizer();
        let mut enc = WordEncoder::new(&tok, "en");
        let a = enc.encode(&["cats", "sat"], &[false; 2], 64).unwrap();
        let b = enc.encode(&["the", "mat", "on", "the", "mat"], &[false; 5], 6).unwrap(); // keeps 4 of 5 words
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

    /// A tokenizer over Unigram pieces where `▁` alone is a piece (as in XLM-R's vocabulary), with XLM-R's special
    /// names, no post-processor, and `pre` / `norm` as its pre-tokenizer / normalizer.
    fn unigram_with(
        pre: Option<tokenizers::PreTokenizerWrapper>,
        norm: Option<tokenizers::NormalizerWrapper>,
    ) -> ModelTokenizer {
        use tokenizers::models::unigram::Unigram;
        let pieces = [
            ("<pad>", 0.0),
            ("<unk>", 0.0),
            ("<s>", 0.0),
            ("</s>", 0.0),
            ("<mask>", 0.0),
            ("▁", -2.0),
            ("这样", -3.0),
            ("的", -3.0),
            ("▁的", -20.0),
            ("▁cat", -3.0),
            (",", -3.0),
            ("▁,", -4.0),
        ];
        let model = Unigram::from(pieces.iter().map(|(p, s)| (p.to_string(), *s)).collect(), Some(1), false).unwrap();
        let mut tok = tokenizers::Tokenizer::new(model);
        tok.with_pre_tokenizer(pre);
        tok.with_normalizer(norm);
        let names = crate::model::tokenizer::SpecialNames {
            pad: "<pad>".into(),
            unk: "<unk>".into(),
            cls: "<s>".into(),
            sep: "</s>".into(),
            mask: "<mask>".into(),
        };
        ModelTokenizer::hugging_face(tok, &names).unwrap()
    }

    /// XLM-R's shape: `WhitespaceSplit` then `Metaspace` (prepend always).
    fn sentencepiece() -> ModelTokenizer {
        use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
        use tokenizers::pre_tokenizers::{sequence::Sequence, whitespace::WhitespaceSplit};
        let pre = Sequence::new(vec![WhitespaceSplit.into(), Metaspace::new('▁', PrependScheme::Always, true).into()]);
        unigram_with(Some(pre.into()), None)
    }

    #[test]
    fn glued_words_are_read_without_the_word_start_marker() {
        let tok = sentencepiece();
        let id = |p: &str| tok.token_to_id(p).unwrap() as i64;
        let mut enc = WordEncoder::new(&tok, "zh");
        // 这样的 , cat: `的` glued to `这样`, `,` after a space, `cat` after a space.
        let it = enc.encode(&["这样", "的", ",", "cat"], &[false, true, false, false], 64).unwrap();
        assert_eq!(it.ids, [id("▁"), id("这样"), id("的"), id("▁,"), id("▁cat")]);
        assert_eq!(it.first, [0, 2, 3, 4]);
        // In a language written without spaces every word after the first is glued.
        let it = enc.encode_in_language(&["这样", "的"], 64).unwrap();
        assert_eq!(it.ids, [id("▁"), id("这样"), id("的")]);
        // The same word placed otherwise is cached apart.
        assert_eq!(enc.pieces("的", false).unwrap(), [id("▁"), id("的")]);
        assert_eq!(enc.pieces("的", true).unwrap(), [id("的")]);
        assert_eq!(enc.pieces("的 cat", true).unwrap(), [id("的"), id("▁cat")], "a space inside a word");
        // A crossling-style BERT tokenizer reads a glued word as it is.
        let bert = tokenizer();
        let mut enc = WordEncoder::new(&bert, "en");
        assert_eq!(enc.encode(&["cats", "sat"], &[false, true], 64).unwrap().ids, [2, 6, 8, 7, 3]);
        // Only the first reading enters a cache key.
        assert_eq!(spacing_key(&tok).unwrap(), Some(serde_json::json!("running-text")));
        assert_eq!(spacing_key(&bert).unwrap(), None);
    }

    #[test]
    fn spacing_comes_from_the_corpus_the_language_or_the_text() {
        assert_eq!(glued_by_language("zh", 3), [false, true, true]);
        assert_eq!(glued_by_language("fr", 3), [false; 3]);
        assert_eq!(
            glued_in_text("Où va-t-il, dit-il.", &["Où", "va", "-t-il", ",", "dit", "-", "il", "."]),
            [false, false, true, true, false, true, true, true]
        );
        assert_eq!(glued_in_text("a b", &["a", "x", "b"]), [false, false, false], "a word not in the text is spaced");
    }

    #[test]
    fn a_prepend_normalizer_marks_spaced_words_once() {
        // Llama-style: the normalizer writes `▁` before the text and for every space.
        use tokenizers::normalizers::{Prepend, Replace, Sequence};
        let norm = Sequence::new(vec![Prepend::new("▁".into()).into(), Replace::new(" ", "▁").unwrap().into()]);
        let tok = unigram_with(None, Some(norm.into()));
        let id = |p: &str| tok.token_to_id(p).unwrap() as i64;
        let mut enc = WordEncoder::new(&tok, "zh");
        let it = enc.encode(&["这样", "cat", "的"], &[false, false, true], 64).unwrap();
        assert_eq!(it.ids, [id("▁"), id("这样"), id("▁cat"), id("的")]);
    }
}
