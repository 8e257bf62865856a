//! The tokenizer of a loaded model, whatever its origin: a crossling [`CrossTokenizer`] (Wu, Conneau et al. 2020
//! §4 vocabulary schemes) or a Hugging Face `tokenizers` tokenizer (BERT WordPiece, Devlin et al. 2019; RoBERTa's
//! byte-level BPE; XLM-R's SentencePiece Unigram, as `tokenizer.json`).
//!
//! Every analysis tokenizes through [`ModelTokenizer::encode_words`], which returns the model input
//! `[CLS] t_1 … t_n [SEP]` (RoBERTa / XLM-R: `<s> … </s>`) as a [`Tokenized`] (`ids`, and `word_of[i]` = the word
//! subword `i` belongs to, `None` for the specials) plus the word strings. A *word* is one piece of the
//! tokenizer's pre-tokenizer — for BERT, text split on whitespace and around every punctuation character, so
//! `dit-il.` is the words `dit`, `-`, `il`, `.`:
//! * crossling tokenizers: the words of the tokenizer's own pre-tokenization (NFC, lowercase when the tokenizer
//!   lowercases, then BERT pre-tokenization). Chinese (`zh`) is first segmented with jieba
//!   ([`segment_zh`]) and re-joined with spaces, because every crossling run trains on segmented Chinese;
//! * Hugging Face tokenizers: the word indices of the tokenizer's own pre-tokenizer (for BERT, CJK characters
//!   are single words; for byte-level BPE and Metaspace, a word keeps its leading space marker); no jieba
//!   segmentation. Word indices are renumbered densely in order of appearance.
//!
//! A word's string is the slice of the (segmented, for crossling `zh`) input text it covers, not normalized.
use std::path::Path;
use std::str::FromStr;

use tokenizers::normalizers::{unicode::NFC, utils::Lowercase, utils::Sequence as NormSeq, NormalizerWrapper};
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{NormalizedString, Normalizer, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};

use crate::error::{Error, Result};
use crate::text::segment::segment_zh;
use crate::text::tokenize::{CrossTokenizer, Special};

/// One tokenized text: ids with specials, and for each id the index of the word it belongs to (`None` for
/// specials).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokenized {
    pub ids: Vec<i64>,
    pub word_of: Vec<Option<usize>>,
}

impl Tokenized {
    /// Number of words (1 + the largest word index).
    pub fn n_words(&self) -> usize {
        self.word_of.iter().flatten().max().map_or(0, |m| m + 1)
    }

    /// This text cut to at most `max` ids, keeping its trailing special tokens (`[SEP]`, `</s>`: the ids after its
    /// last content token); whether it was cut.
    pub fn fit(mut self, max: usize) -> (Tokenized, bool) {
        let trailing = self.word_of.iter().rev().take_while(|w| w.is_none()).count().min(self.ids.len());
        if self.ids.len() <= max || max < trailing + 2 {
            return (self, false);
        }
        let tail_ids = self.ids.split_off(self.ids.len() - trailing);
        let tail_of = self.word_of.split_off(self.word_of.len() - trailing);
        self.ids.truncate(max - trailing);
        self.word_of.truncate(max - trailing);
        self.ids.extend(tail_ids);
        self.word_of.extend(tail_of);
        (self, true)
    }
}

/// Ids of the special tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialIds {
    pub pad: u32,
    pub unk: u32,
    pub cls: u32,
    pub sep: u32,
    pub mask: u32,
}

/// A Hugging Face tokenizer with its special ids.
#[derive(Debug, Clone)]
pub struct HfTokenizer {
    pub tokenizer: Box<tokenizers::Tokenizer>,
    pub specials: SpecialIds,
}

/// The tokenizer of a model.
#[derive(Debug, Clone)]
pub enum ModelTokenizer {
    /// A crossling tokenizer; `segment_zh`: segment Chinese with jieba before BPE (true for every crossling run).
    Crossling { tokenizer: Box<CrossTokenizer>, segment_zh: bool },
    /// A Hugging Face tokenizer (all languages share it).
    HuggingFace(HfTokenizer),
}

/// One text encoded for the model: ids with `[CLS]`/`[SEP]`, word indices, and the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    /// `ids` = `[CLS] … [SEP]`; `word_of` is `None` exactly for the two specials.
    pub tokenized: Tokenized,
    /// `words[w]` is the text of word `w` (`tokenized.n_words() == words.len()`).
    pub words: Vec<String>,
}

impl From<Encoded> for Tokenized {
    fn from(e: Encoded) -> Tokenized {
        e.tokenized
    }
}

impl ModelTokenizer {
    /// A crossling tokenizer as used by crossling runs (Chinese segmented with jieba).
    pub fn crossling(tokenizer: CrossTokenizer) -> Self {
        ModelTokenizer::Crossling { tokenizer: Box::new(tokenizer), segment_zh: true }
    }

    /// A Hugging Face tokenizer; the special ids are looked up by the BERT names (`[CLS]`, `[SEP]`, `[PAD]`,
    /// `[MASK]`, `[UNK]`) unless given in `names` (e.g. from `tokenizer_config.json`).
    pub fn hugging_face(tokenizer: tokenizers::Tokenizer, names: &SpecialNames) -> Result<Self> {
        let find = |what: &str, name: &str| {
            tokenizer.token_to_id(name).ok_or_else(|| {
                Error::Invalid(format!("Hugging Face tokenizer: {what} token '{name}' is not in the vocabulary"))
            })
        };
        let specials = SpecialIds {
            pad: find("padding", &names.pad)?,
            unk: find("unknown", &names.unk)?,
            cls: find("CLS", &names.cls)?,
            sep: find("SEP", &names.sep)?,
            mask: find("mask", &names.mask)?,
        };
        Ok(ModelTokenizer::HuggingFace(HfTokenizer { tokenizer: Box::new(tokenizer), specials }))
    }

    /// Loads the tokenizer of a crossling run (`dir` holds `crossling-tokenizer.json`).
    pub fn load_crossling(dir: &Path) -> Result<Self> {
        Ok(ModelTokenizer::crossling(CrossTokenizer::load(dir)?))
    }

    /// The languages of a crossling tokenizer (training order); `None` for a Hugging Face tokenizer, which
    /// serves every language.
    pub fn languages(&self) -> Option<&[String]> {
        match self {
            ModelTokenizer::Crossling { tokenizer, .. } => Some(tokenizer.langs()),
            ModelTokenizer::HuggingFace(_) => None,
        }
    }

    /// The special token ids.
    pub fn specials(&self) -> SpecialIds {
        match self {
            ModelTokenizer::Crossling { .. } => SpecialIds {
                pad: Special::Pad as u32,
                unk: Special::Unk as u32,
                cls: Special::Cls as u32,
                sep: Special::Sep as u32,
                mask: Special::Mask as u32,
            },
            ModelTokenizer::HuggingFace(h) => h.specials,
        }
    }

    /// Number of ids (specials and added tokens included).
    pub fn vocab_size(&self) -> usize {
        match self {
            ModelTokenizer::Crossling { tokenizer, .. } => tokenizer.vocab_size(),
            ModelTokenizer::HuggingFace(h) => h.tokenizer.get_vocab_size(true),
        }
    }

    /// The token string of `id` (crossling: the global string, `en:`-prefixed under NoAnchors).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match self {
            ModelTokenizer::Crossling { tokenizer, .. } => tokenizer.id_to_token(id),
            ModelTokenizer::HuggingFace(h) => h.tokenizer.id_to_token(id),
        }
    }

    /// The id of a token string.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            ModelTokenizer::Crossling { tokenizer, .. } => tokenizer.token_to_id(token),
            ModelTokenizer::HuggingFace(h) => h.tokenizer.token_to_id(token),
        }
    }

    /// Text of `ids`, special tokens skipped.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        match self {
            ModelTokenizer::Crossling { tokenizer, .. } => Ok(tokenizer.decode(ids)),
            ModelTokenizer::HuggingFace(h) => {
                h.tokenizer.decode(ids, true).map_err(|e| Error::Invalid(format!("decode: {e}")))
            }
        }
    }

    /// Ids a token of `lang` may take (specials excluded), sorted: a crossling tokenizer's ids seen in that
    /// language's training text; every non-special id for a Hugging Face tokenizer.
    pub fn lang_token_ids(&self, lang: &str) -> Vec<u32> {
        match self {
            ModelTokenizer::Crossling { tokenizer, .. } => tokenizer.lang_token_ids(lang),
            ModelTokenizer::HuggingFace(h) => {
                let s = h.specials;
                let special = [s.pad, s.unk, s.cls, s.sep, s.mask];
                let added: std::collections::HashSet<u32> = h
                    .tokenizer
                    .get_added_tokens_decoder()
                    .into_iter()
                    .filter(|(_, t)| t.special)
                    .map(|(id, _)| id)
                    .collect();
                (0..h.tokenizer.get_vocab_size(true) as u32)
                    .filter(|id| !special.contains(id) && !added.contains(id))
                    .collect()
            }
        }
    }

    /// Encodes `text` of language `lang` as the model input with each subword's word (see the module docs): a
    /// crossling tokenizer gives `[CLS] subwords [SEP]`; a Hugging Face tokenizer gives exactly the ids
    /// `transformers.AutoTokenizer` gives (its post-processor's specials around the subwords; no padding, no
    /// truncation). No truncation: the caller checks the length against the model's positions ([`Tokenized::fit`]).
    pub fn encode_words(&self, text: &str, lang: &str) -> Result<Encoded> {
        let (ids, word_of, words) = self.content_words(text, lang)?;
        let content: Vec<i64> = ids.iter().map(|&i| i as i64).collect();
        let framed = self.frame(&content, None)?;
        let mut next = word_of.into_iter();
        let of = framed.sequence.iter().map(|s| s.and_then(|_| next.next())).collect();
        Ok(Encoded { tokenized: Tokenized { ids: framed.ids, word_of: of }, words })
    }

    /// The subword ids of `text` without special tokens (what [`Self::encode_words`] puts between them).
    pub fn encode_content(&self, text: &str, lang: &str) -> Result<Vec<i64>> {
        Ok(self.content_words(text, lang)?.0.into_iter().map(|i| i as i64).collect())
    }

    fn content_words(&self, text: &str, lang: &str) -> Result<WordIds> {
        match self {
            ModelTokenizer::Crossling { tokenizer, segment_zh: seg } => {
                let segmented;
                let text = if *seg && lang == "zh" {
                    segmented = segment_zh(text).join(" ");
                    segmented.as_str()
                } else {
                    text
                };
                crossling_words(tokenizer, text, lang)
            }
            ModelTokenizer::HuggingFace(h) => hf_words(&h.tokenizer, text),
        }
    }

    /// Adds the special tokens around content ids `first` (and `second`, a pair) as the tokenizer does: crossling
    /// `[CLS] a [SEP]` / `[CLS] a [SEP] b [SEP]`; a Hugging Face tokenizer through its own post-processor (BERT
    /// `[CLS] a [SEP] b [SEP]`, XLM-R / RoBERTa `<s> a </s> </s> b </s>`, none when it has no post-processor), as
    /// `transformers` does with `add_special_tokens=True`.
    pub fn frame(&self, first: &[i64], second: Option<&[i64]>) -> Result<Framed> {
        match self {
            ModelTokenizer::Crossling { .. } => {
                let s = self.specials();
                let mut f = Framed::default();
                f.push(s.cls as i64, None);
                first.iter().for_each(|&i| f.push(i, Some(0)));
                f.push(s.sep as i64, None);
                if let Some(b) = second {
                    b.iter().for_each(|&i| f.push(i, Some(1)));
                    f.push(s.sep as i64, None);
                }
                Ok(f)
            }
            ModelTokenizer::HuggingFace(h) => {
                let encoding = |ids: &[i64]| {
                    let tokens = ids.iter().map(|&i| tokenizers::Token::new(i as u32, String::new(), (0, 0))).collect();
                    tokenizers::Encoding::from_tokens(tokens, 0)
                };
                let out = h
                    .tokenizer
                    .post_process(encoding(first), second.map(encoding), true)
                    .map_err(|e| Error::Invalid(format!("adding the tokenizer's special tokens: {e}")))?;
                let mut f = Framed::default();
                for (&id, &seq) in out.get_ids().iter().zip(out.get_sequence_ids().iter()) {
                    f.push(id as i64, seq);
                }
                Ok(f)
            }
        }
    }

    /// Whether this tokenizer marks word starts ([`crate::model::word_start`]), so that a word glued to the one before
    /// it reads otherwise than a word after a space; false for crossling tokenizers and BERT's WordPiece.
    pub fn marks_word_starts(&self) -> Result<bool> {
        match self {
            ModelTokenizer::Crossling { .. } => Ok(false),
            ModelTokenizer::HuggingFace(h) => crate::model::word_start::marks_word_starts(&h.tokenizer),
        }
    }

    /// This tokenizer without its word-start marker ([`crate::model::word_start`]), for a word glued to the one
    /// before it in running text; `None` when it marks no word start (crossling tokenizers, BERT's WordPiece).
    pub fn without_word_start_marker(&self) -> Result<Option<ModelTokenizer>> {
        match self {
            ModelTokenizer::Crossling { .. } => Ok(None),
            ModelTokenizer::HuggingFace(h) => Ok(crate::model::word_start::without_word_start_marker(&h.tokenizer)?
                .map(|t| ModelTokenizer::HuggingFace(HfTokenizer { tokenizer: Box::new(t), specials: h.specials }))),
        }
    }

    /// How many special tokens [`Self::frame`] adds to one text (`pair` false) or a pair.
    pub fn added_specials(&self, pair: bool) -> usize {
        match self {
            ModelTokenizer::Crossling { .. } => 2 + usize::from(pair),
            ModelTokenizer::HuggingFace(h) => {
                h.tokenizer.get_post_processor().map_or(0, |p| tokenizers::PostProcessor::added_tokens(p, pair))
            }
        }
    }
}

/// Ids with the special tokens added ([`ModelTokenizer::frame`]): `sequence[i]` is `Some(0)` / `Some(1)` for a
/// content id of the first / second text, `None` for a special token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Framed {
    pub ids: Vec<i64>,
    pub sequence: Vec<Option<usize>>,
}

impl Framed {
    fn push(&mut self, id: i64, sequence: Option<usize>) {
        self.ids.push(id);
        self.sequence.push(sequence);
    }

    /// Position of the first content id (the number of leading special tokens).
    pub fn lead(&self) -> usize {
        self.sequence.iter().position(Option::is_some).unwrap_or(self.ids.len())
    }
}

/// Names of the special tokens of a Hugging Face tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialNames {
    pub pad: String,
    pub unk: String,
    pub cls: String,
    pub sep: String,
    pub mask: String,
}

impl Default for SpecialNames {
    /// The BERT names.
    fn default() -> Self {
        SpecialNames {
            pad: "[PAD]".into(),
            unk: "[UNK]".into(),
            cls: "[CLS]".into(),
            sep: "[SEP]".into(),
            mask: "[MASK]".into(),
        }
    }
}

/// Loads the tokenizer of a Hugging Face folder with BERT's special-token names as defaults
/// ([`load_hf_tokenizer_with`]).
pub fn load_hf_tokenizer(dir: &Path) -> Result<HfTokenizer> {
    load_hf_tokenizer_with(dir, &SpecialNames::default())
}

/// Loads the tokenizer of a Hugging Face folder: `tokenizer.json` when present (any model the `tokenizers` crate
/// reads: WordPiece, BPE, Unigram), else a BERT WordPiece tokenizer from `vocab.txt` (lowercasing and accent
/// stripping from `tokenizer_config.json` `do_lower_case`, default true, as `transformers.BertTokenizer`).
/// Special token names come from `tokenizer_config.json` / `special_tokens_map.json` (`cls_token`, …), else
/// `defaults` (the architecture's: `[CLS]`… for BERT, `<s>`… for RoBERTa / XLM-R).
///
/// The `tokenizers` crate cannot read SentencePiece model files (`sentencepiece.bpe.model` of XLM-R,
/// `spiece.model`) nor is a GPT-2-style `vocab.json` + `merges.txt` pair read here: a folder with only those is an
/// error that names them and says how to write `tokenizer.json` with `transformers`.
pub fn load_hf_tokenizer_with(dir: &Path, defaults: &SpecialNames) -> Result<HfTokenizer> {
    let config = read_json_if_exists(&dir.join("tokenizer_config.json"))?;
    let map = read_json_if_exists(&dir.join("special_tokens_map.json"))?;
    let name = |key: &str, default: &str| -> String {
        for v in [&config, &map].into_iter().flatten() {
            match v.get(key) {
                Some(serde_json::Value::String(s)) => return s.clone(),
                Some(serde_json::Value::Object(o)) => {
                    if let Some(serde_json::Value::String(s)) = o.get("content") {
                        return s.clone();
                    }
                }
                _ => {}
            }
        }
        default.to_string()
    };
    let d = defaults;
    let names = SpecialNames {
        pad: name("pad_token", &d.pad),
        unk: name("unk_token", &d.unk),
        cls: name("cls_token", &d.cls),
        sep: name("sep_token", &d.sep),
        mask: name("mask_token", &d.mask),
    };
    let json = dir.join("tokenizer.json");
    let vocab = dir.join("vocab.txt");
    let tokenizer = if json.is_file() {
        hf_tokenizer_json(dir, &json, config.as_ref(), &names)?
    } else if vocab.is_file() {
        let lower = match config.as_ref().and_then(|c| c.get("do_lower_case")) {
            None | Some(serde_json::Value::Null) => true,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(other) => {
                return Err(Error::format_file(
                    dir.join("tokenizer_config.json"),
                    format!("do_lower_case must be true or false, got {other}"),
                ))
            }
        };
        wordpiece_from_vocab(&vocab, lower, &names)?
    } else {
        return Err(missing_tokenizer(dir));
    };
    let dir_err = |e: Error| Error::Invalid(format!("{}: {e}", dir.display()));
    match ModelTokenizer::hugging_face(tokenizer, &names).map_err(dir_err)? {
        ModelTokenizer::HuggingFace(h) => Ok(h),
        ModelTokenizer::Crossling { .. } => Err(Error::Invalid("internal: expected a Hugging Face tokenizer".into())),
    }
}

/// A folder's `tokenizer.json` as `transformers.AutoTokenizer` builds it (see [`super::hf::tokenizer_class`]): the
/// class from `tokenizer_config.json`'s `tokenizer_class`, else `config.json`'s `model_type`.
fn hf_tokenizer_json(
    dir: &Path,
    json: &Path,
    config: Option<&serde_json::Value>,
    names: &SpecialNames,
) -> Result<tokenizers::Tokenizer> {
    use super::hf::tokenizer_class::{as_transformers_builds_it, TokenizerClass};
    let not_hf = |e: &dyn std::fmt::Display| Error::format_file(json, format!("not a Hugging Face tokenizer: {e}"));
    let text = std::fs::read_to_string(json).map_err(|e| Error::io(json, e))?;
    let file: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::format(json, e.line(), format!("invalid JSON: {e}")))?;
    let model = read_json_if_exists(&dir.join("config.json"))?;
    fn field<'a>(v: Option<&'a serde_json::Value>, key: &str) -> Option<&'a str> {
        v.and_then(|v| v.get(key)).and_then(|v| v.as_str())
    }
    let class = TokenizerClass::resolve(field(config, "tokenizer_class"), field(model.as_ref(), "model_type"));
    let rebuilt = as_transformers_builds_it(file, class, config, (&names.cls, &names.sep), json)?;
    tokenizers::Tokenizer::from_str(&rebuilt.to_string()).map_err(|e| not_hf(&e))
}

/// The error for a folder without a tokenizer crossling reads: what it reads, what was found, and how to convert.
fn missing_tokenizer(dir: &Path) -> Error {
    const OTHERS: [&str; 6] = [
        "sentencepiece.bpe.model",
        "spiece.model",
        "tokenizer.model",
        "sentencepiece.model",
        "vocab.json",
        "merges.txt",
    ];
    let found: Vec<&str> = OTHERS.into_iter().filter(|f| dir.join(f).is_file()).collect();
    let spm = found.iter().any(|f| f.ends_with(".model"));
    let mut msg = format!(
        "{}: no tokenizer crossling can read: it reads tokenizer.json (WordPiece, BPE or Unigram, through the \
         tokenizers crate) or a WordPiece vocab.txt, and found {}",
        dir.display(),
        if found.is_empty() { "no tokenizer files".to_string() } else { found.join(", ") }
    );
    if !found.is_empty() {
        msg.push_str(&format!(
            "{}; write tokenizer.json once with transformers: python -c \"from transformers import AutoTokenizer as T; \
             T.from_pretrained('{d}').save_pretrained('{d}')\"{}",
            if spm { ", a SentencePiece model, which the tokenizers crate cannot read" } else { "" },
            if spm { " (transformers needs the sentencepiece package to convert it)" } else { "" },
            d = dir.display()
        ));
    }
    Error::Invalid(msg)
}

fn read_json_if_exists(path: &Path) -> Result<Option<serde_json::Value>> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map(Some).map_err(|e| Error::format(path, e.line(), format!("invalid JSON: {e}")))
}

/// BERT's WordPiece tokenizer (`transformers.BertTokenizer`): BERT normalizer (clean text, spaces around CJK
/// characters, lowercase and strip accents when `lower`), BERT pre-tokenizer, WordPiece with `##` continuations
/// and at most 100 characters per word, `[CLS] … [SEP]` post-processing.
fn wordpiece_from_vocab(path: &Path, lower: bool, names: &SpecialNames) -> Result<tokenizers::Tokenizer> {
    use tokenizers::models::wordpiece::WordPiece;
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut vocab = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let tok = line.trim_end_matches('\r');
        if tok.is_empty() {
            return Err(Error::format(path, i + 1, "empty vocabulary entry"));
        }
        if vocab.insert(tok.to_string(), i as u32).is_some() {
            return Err(Error::format(path, i + 1, format!("token '{tok}' appears twice")));
        }
    }
    let id = |n: &str| {
        vocab.get(n).copied().ok_or_else(|| Error::format_file(path, format!("special token '{n}' is missing")))
    };
    let (cls, sep) = (id(&names.cls)?, id(&names.sep)?);
    let wp = WordPiece::builder()
        .files(path.to_string_lossy().into_owned())
        .unk_token(names.unk.clone())
        .continuing_subword_prefix("##".into())
        .max_input_chars_per_word(100)
        .build()
        .map_err(|e| Error::format_file(path, format!("building WordPiece: {e}")))?;
    let mut t = tokenizers::Tokenizer::new(wp);
    t.with_normalizer(Some(tokenizers::normalizers::bert::BertNormalizer::new(true, true, None, lower)));
    t.with_pre_tokenizer(Some(BertPreTokenizer));
    t.with_post_processor(Some(tokenizers::processors::bert::BertProcessing::new(
        (names.sep.clone(), sep),
        (names.cls.clone(), cls),
    )));
    t.with_decoder(Some(tokenizers::decoders::wordpiece::WordPiece::default()));
    let specials: Vec<tokenizers::AddedToken> = [&names.pad, &names.unk, &names.cls, &names.sep, &names.mask]
        .iter()
        .filter(|n| vocab.contains_key(n.as_str()))
        .map(|n| tokenizers::AddedToken::from(n.to_string(), true))
        .collect();
    t.add_special_tokens(&specials);
    Ok(t)
}

type WordIds = (Vec<u32>, Vec<usize>, Vec<String>);

/// Subword ids, word index per subword and word strings under a crossling tokenizer.
fn crossling_words(tok: &CrossTokenizer, text: &str, lang: &str) -> Result<WordIds> {
    let mut parts: Vec<NormalizerWrapper> = vec![NFC.into()];
    if tok.spec().lowercase {
        parts.push(Lowercase.into());
    }
    let norm: NormalizerWrapper = NormSeq::new(parts).into();
    let mut n = NormalizedString::from(text);
    norm.normalize(&mut n).map_err(|e| Error::Invalid(format!("normalizing text: {e}")))?;
    let mut p = PreTokenizedString::from(n);
    BertPreTokenizer.pre_tokenize(&mut p).map_err(|e| Error::Invalid(format!("pre-tokenizing text: {e}")))?;
    let (mut ids, mut word_of, mut words) = (Vec::new(), Vec::new(), Vec::new());
    for (piece, (start, end), _) in p.get_splits(OffsetReferential::Original, OffsetType::Byte) {
        let sub = tok.encode(piece, lang)?;
        if sub.is_empty() {
            continue;
        }
        word_of.extend(std::iter::repeat_n(words.len(), sub.len()));
        ids.extend(sub);
        words.push(text.get(start..end).unwrap_or(piece).to_string());
    }
    Ok((ids, word_of, words))
}

/// Subword ids, word index per subword and word strings under a Hugging Face tokenizer (no specials added).
fn hf_words(tok: &tokenizers::Tokenizer, text: &str) -> Result<WordIds> {
    let enc = tok.encode(text, false).map_err(|e| Error::Invalid(format!("encode: {e}")))?;
    let (mut ids, mut word_of, mut words) = (Vec::new(), Vec::new(), Vec::<String>::new());
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut last: Option<u32> = None;
    for ((&id, &w), &(s, e)) in enc.get_ids().iter().zip(enc.get_word_ids()).zip(enc.get_offsets()) {
        // Tokens without a word (added tokens) count as words of their own.
        let new_word = w.is_none() || w != last || spans.is_empty();
        if new_word {
            spans.push((s, e));
        } else if let Some(span) = spans.last_mut() {
            span.0 = span.0.min(s);
            span.1 = span.1.max(e);
        }
        last = w;
        ids.push(id);
        word_of.push(spans.len() - 1);
    }
    for (s, e) in spans {
        words.push(text.get(s..e).unwrap_or_default().to_string());
    }
    Ok((ids, word_of, words))
}

#[cfg(test)]
mod tests {

    #[test]
    fn long_texts_are_cut_keeping_the_final_special() {
        let t =
            Tokenized { ids: vec![1, 5, 6, 7, 8, 2], word_of: vec![None, Some(0), Some(0), Some(1), Some(2), None] };
        let (c, cut) = t.clone().fit(4);
        assert!(cut);
        assert_eq!(c.ids, [1, 5, 6, 2]);
        assert_eq!(c.word_of, [None, Some(0), Some(0), None]);
        assert_eq!(t.clone().fit(6), (t, false));
    }
    use super::*;
    use crate::text::tokenize::{AnchorScheme, TokenizerSpec};

    fn crossling(scheme: AnchorScheme) -> ModelTokenizer {
        let dir = tempfile::tempdir().unwrap();
        let files = crate::text::tokenize::tests::write_corpora(dir.path(), 200);
        ModelTokenizer::crossling(CrossTokenizer::train(&TokenizerSpec::new(scheme, 150), &files).unwrap())
    }

    /// A tiny BERT WordPiece tokenizer.
    pub(crate) fn wordpiece() -> ModelTokenizer {
        let vocab =
            ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "##s", "-", ".", "on", "我", "来"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        ModelTokenizer::HuggingFace(load_hf_tokenizer(dir.path()).unwrap())
    }

    #[test]
    fn crossling_words_match_plain_encoding() {
        for scheme in [AnchorScheme::Joint, AnchorScheme::NoAnchors] {
            let t = crossling(scheme);
            let ModelTokenizer::Crossling { tokenizer, .. } = &t else { unreachable!() };
            let text = "the cat-sat on the  mat, lowest.";
            let e = t.encode_words(text, "en").unwrap();
            let plain = tokenizer.encode(text, "en").unwrap();
            let ids = &e.tokenized.ids;
            assert_eq!(ids[0], 2);
            assert_eq!(ids[ids.len() - 1], 3);
            assert_eq!(ids[1..ids.len() - 1].iter().map(|&i| i as u32).collect::<Vec<_>>(), plain);
            assert_eq!(e.words, ["the", "cat", "-", "sat", "on", "the", "mat", ",", "lowest", "."]);
            assert_eq!(e.tokenized.n_words(), e.words.len());
            assert_eq!(e.tokenized.word_of[0], None);
            assert_eq!(*e.tokenized.word_of.last().unwrap(), None);
            // Word indices never decrease and cover every word.
            let w: Vec<usize> = e.tokenized.word_of.iter().flatten().copied().collect();
            assert!(w.windows(2).all(|p| p[1] == p[0] || p[1] == p[0] + 1) && w[0] == 0);
        }
    }

    #[test]
    fn crossling_segments_chinese_and_hf_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let zh = dir.path().join("zh.txt");
        std::fs::write(&zh, "我 来到 北京 清华大学\n".repeat(20)).unwrap();
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 60), &[("zh".into(), zh)]).unwrap();
        let t = ModelTokenizer::crossling(tok.clone());
        let e = t.encode_words("我来到北京清华大学", "zh").unwrap();
        assert_eq!(e.words, ["我", "来到", "北京", "清华大学"]);
        let ids: Vec<u32> = e.tokenized.ids[1..e.tokenized.ids.len() - 1].iter().map(|&i| i as u32).collect();
        assert_eq!(ids, tok.encode("我 来到 北京 清华大学", "zh").unwrap());
        let unseg = ModelTokenizer::Crossling { tokenizer: Box::new(tok), segment_zh: false };
        assert_eq!(unseg.encode_words("我来到北京清华大学", "zh").unwrap().words.len(), 1);
        let hf = wordpiece().encode_words("我来", "zh").unwrap();
        assert_eq!(hf.words, ["我", "来"]);
    }

    #[test]
    fn hugging_face_words_and_specials() {
        let t = wordpiece();
        let e = t.encode_words("The cats sat-on the dog.", "en").unwrap();
        // lowercased by vocab.txt defaults; cats = cat ##s; dog = [UNK]
        assert_eq!(e.tokenized.ids, [2, 5, 6, 8, 7, 9, 11, 5, 1, 10, 3]);
        assert_eq!(
            e.tokenized.word_of,
            [None, Some(0), Some(1), Some(1), Some(2), Some(3), Some(4), Some(5), Some(6), Some(7), None]
        );
        assert_eq!(e.words, ["The", "cats", "sat", "-", "on", "the", "dog", "."]);
        assert_eq!(t.specials(), SpecialIds { pad: 0, unk: 1, cls: 2, sep: 3, mask: 4 });
        assert_eq!(t.vocab_size(), 14);
        assert_eq!(t.token_to_id("##s"), Some(8));
        assert_eq!(t.id_to_token(6).as_deref(), Some("cat"));
        assert_eq!(t.decode(&[2, 6, 8, 7, 3]).unwrap(), "cats sat");
        assert_eq!(t.lang_token_ids("xx"), (5..14).collect::<Vec<u32>>());
        let empty = t.encode_words("", "en").unwrap();
        assert_eq!(empty.tokenized.ids, [2, 3]);
        assert!(empty.words.is_empty());
    }

    #[test]
    fn missing_tokenizers_name_what_was_found() {
        let dir = tempfile::tempdir().unwrap();
        let e = load_hf_tokenizer(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("reads tokenizer.json (WordPiece, BPE or Unigram") && e.contains("found no tokenizer files"),
            "{e}"
        );
        assert!(!e.contains("python"), "{e}");
        std::fs::write(dir.path().join("sentencepiece.bpe.model"), "x").unwrap();
        let e = load_hf_tokenizer(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("found sentencepiece.bpe.model, a SentencePiece model, which the tokenizers crate cannot read"),
            "{e}"
        );
        assert!(e.contains(".save_pretrained(") && e.contains("sentencepiece package"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        std::fs::remove_file(dir.path().join("sentencepiece.bpe.model")).unwrap();
        std::fs::write(dir.path().join("vocab.json"), "{}").unwrap();
        std::fs::write(dir.path().join("merges.txt"), "").unwrap();
        let e = load_hf_tokenizer(dir.path()).unwrap_err().to_string();
        assert!(e.contains("found vocab.json, merges.txt; write tokenizer.json once with transformers"), "{e}");
    }

    #[test]
    fn special_names_default_to_the_architecture() {
        let vocab = ["<s>", "<pad>", "</s>", "<unk>", "a", "<mask>"];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vocab.txt"), vocab.join("\n")).unwrap();
        assert!(load_hf_tokenizer(dir.path()).unwrap_err().to_string().contains("'[CLS]'"));
        let roberta = crate::model::hf::Arch::Roberta.special_names();
        let t = load_hf_tokenizer_with(dir.path(), &roberta).unwrap();
        assert_eq!(t.specials, SpecialIds { pad: 1, unk: 3, cls: 0, sep: 2, mask: 5 });
    }

    #[test]
    fn missing_special_token_is_an_error() {
        let tok = match wordpiece() {
            ModelTokenizer::HuggingFace(h) => *h.tokenizer,
            _ => unreachable!(),
        };
        let names = SpecialNames { mask: "<mask>".into(), ..SpecialNames::default() };
        let e = ModelTokenizer::hugging_face(tok, &names).unwrap_err().to_string();
        assert!(e.contains("mask token '<mask>'"), "{e}");
    }
}
