//! Subword tokenizers for the anchor-point ablations of Wu, Conneau et al. 2020, "Emerging Cross-lingual Structure
//! in Pretrained Language Models" (§4, Table 1).
//!
//! Three vocabulary schemes ([`AnchorScheme`]):
//!
//! * **Joint** — Table 1 row *Default*: one BPE (Sennrich, Haddow & Birch 2016, "Neural Machine Translation of Rare
//!   Words with Subword Units") learnt on the concatenated text of all languages; every string the languages have in
//!   common (digits, names, punctuation, cognates) is one shared token — the "anchor points".
//! * **PerLanguageUnion** — Table 1 row *Default anchors*: one BPE per language, each with `vocab_size / n_languages`
//!   entries; the model vocabulary is their union, so a string that both vocabularies contain merges into one id.
//!   Fewer anchors than Joint, because merges are never learnt across languages.
//! * **NoAnchors** — Table 1 row *No anchors*: per-language BPE as above, but every token is stored with its
//!   language as prefix (`en:the</w>`), so no id is shared between languages.
//!
//! The fourth row, *Extra anchors*, adds dictionary code-switching to the training text: see
//! [`crate::text::codeswitch`].
//!
//! # Tokenization
//! * Normalization: Unicode NFC, then lowercase if [`TokenizerSpec::lowercase`].
//! * Pre-tokenization: BERT-style, split on whitespace and around every punctuation character (Chinese text arrives
//!   already segmented into space-separated words).
//! * BPE with Sennrich's **end-of-word marker** `</w>`: the last symbol of every word carries the suffix, so
//!   `lower` → `low` `er</w>`; there is no `##` continuation prefix. Decoding concatenates the tokens and turns each
//!   `</w>` into a space. Characters never seen in training become `[UNK]`.
//! * Special tokens `[PAD]`=0, `[UNK]`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4 in every scheme; `vocab_size` counts them.
//!
//! # Training
//! The BPE learner is implemented here rather than with the `tokenizers` trainer, so that training is
//! deterministic: word counts live in a `BTreeMap`, the alphabet is sorted, and ties between equally frequent pairs
//! go to the lexicographically smallest `(left, right)` pair. A merge is learnt only while its pair occurs at least
//! `min_frequency` times. The result is a standard Hugging Face BPE model (vocabulary + ranked merges).
//!
//! **Character coverage** ([`TokenizerSpec::character_coverage`], after SentencePiece's option of that name, Kudo &
//! Richardson 2018): the alphabet keeps the most frequent characters of the training text (per BPE learnt: all
//! languages for Joint) until they cover that fraction of its character occurrences, ties to the smaller character;
//! the rest become `[UNK]` and no merge crosses them. Without it every character seen enters the alphabet, and a
//! logographic script can fill a small joint vocabulary: on English + Chinese novels the alphabet alone passes an
//! 8,000-entry budget, most entries hold a Han character and English is left as single letters (counted by
//! [`crate::text::anchors`]; the counts in docs/usage/pretraining.md, *en–zh joint vocabularies*).
//!
//! **Alphabet cap** ([`TokenizerSpec::max_alphabet_share`]): coverage alone does not bound the alphabet's size, which
//! grows with the corpus: at 0.9995 on 100,000 sentences of English and of Chinese novels, Wikipedia and web text, the
//! kept characters and their end-of-word forms (`c` and `c</w>` are two symbols) still pass 8,000. With a cap of
//! share `s`, the least frequent kept characters are dropped as well until the alphabet's symbols number at most
//! `s × vocab_size` of the BPE learnt, leaving the rest of the vocabulary to merges.
//!
//! # Files ([`CrossTokenizer::save`])
//! * `crossling-tokenizer.json` — always: the spec, the languages, the global vocabulary (id → string, prefixed
//!   strings for NoAnchors) and, per language, the ids that occur in its training text.
//! * Joint: `tokenizer.json`, a complete Hugging Face tokenizer whose ids are the model ids.
//! * PerLanguageUnion / NoAnchors: one Hugging Face tokenizer per language, `tokenizer.<lang>.json`, with local
//!   ids; one merged HF tokenizer cannot reproduce per-language segmentation, so the global id of a token is found
//!   through the vocabulary in `crossling-tokenizer.json`.
use crate::atomic_file::write_atomic;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use tokenizers::decoders::bpe::BPEDecoder;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::{unicode::NFC, utils::Lowercase, utils::Sequence as NormSeq, NormalizerWrapper};
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{
    AddedToken, Model, NormalizedString, Normalizer, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer,
    Tokenizer,
};

/// End-of-word marker of the BPE symbols.
pub const EOW: &str = "</w>";
/// Special tokens, in id order.
pub const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// The special tokens; `Special::X as u32` is its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Pad = 0,
    Unk = 1,
    Cls = 2,
    Sep = 3,
    Mask = 4,
}

/// How the languages' vocabularies relate (Wu et al. 2020, Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorScheme {
    /// One BPE over the concatenated text of all languages ("Default").
    Joint,
    /// One BPE per language; vocabulary = union, equal strings share an id ("Default anchors").
    PerLanguageUnion,
    /// One BPE per language; every token prefixed by its language, nothing shared ("No anchors").
    NoAnchors,
}

/// What tokenizer to train.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenizerSpec {
    pub scheme: AnchorScheme,
    /// Total vocabulary size including the 5 special tokens; the union schemes give each language
    /// `vocab_size / n_languages` entries (its own specials included), so the union is at most `vocab_size`.
    pub vocab_size: usize,
    /// A merge is learnt only while its pair occurs at least this often.
    #[serde(default = "default_min_frequency")]
    pub min_frequency: u64,
    /// Lowercase before tokenizing.
    #[serde(default)]
    pub lowercase: bool,
    /// Fraction (0, 1] of the training text's character occurrences that the alphabet must cover, most frequent
    /// characters first; `None` keeps every character (see the module docs). Absent from serialised specs when
    /// `None`, so run configs written before the option hash as they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character_coverage: Option<f64>,
    /// Largest share (0, 1] of `vocab_size` (per BPE learnt) that the alphabet may take, its end-of-word forms
    /// counted: when the characters kept by `character_coverage` need more, the least frequent of them are dropped
    /// too (see the module docs). `None`: no cap. Absent from serialised specs when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_alphabet_share: Option<f64>,
}

fn default_min_frequency() -> u64 {
    2
}

impl TokenizerSpec {
    /// A spec with default `min_frequency` and no lowercasing.
    pub fn new(scheme: AnchorScheme, vocab_size: usize) -> Self {
        TokenizerSpec {
            scheme,
            vocab_size,
            min_frequency: default_min_frequency(),
            lowercase: false,
            character_coverage: None,
            max_alphabet_share: None,
        }
    }

    /// Checks the values a spec file may get wrong.
    pub fn validate(&self) -> Result<()> {
        if let Some(c) = self.character_coverage {
            if !(c > 0.0 && c <= 1.0) {
                return Err(Error::Invalid(format!("tokenizer.character_coverage must be in (0, 1], got {c}")));
            }
        }
        if let Some(c) = self.max_alphabet_share {
            if !(c > 0.0 && c <= 1.0) {
                return Err(Error::Invalid(format!("tokenizer.max_alphabet_share must be in (0, 1], got {c}")));
            }
        }
        Ok(())
    }
}

/// What `crossling-tokenizer.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    format: String,
    spec: TokenizerSpec,
    langs: Vec<String>,
    /// Global vocabulary, id order.
    vocab: Vec<String>,
    /// Per language, the sorted global ids occurring in its training text.
    lang_ids: BTreeMap<String, Vec<u32>>,
}

const META_FILE: &str = "crossling-tokenizer.json";
const META_FORMAT: &str = "crossling-tokenizer/1";

/// Trained tokenizer(s) for a set of languages, with one global id space.
#[derive(Debug, Clone)]
pub struct CrossTokenizer {
    meta: Meta,
    /// Joint: one tokenizer; union schemes: one per language, in `meta.langs` order.
    hf: Vec<Tokenizer>,
    /// Per tokenizer in `hf`: local id → global id.
    local_to_global: Vec<Vec<u32>>,
    token_index: HashMap<String, u32>,
}

impl CrossTokenizer {
    /// Train on one file per language (one sentence per line).
    pub fn train(spec: &TokenizerSpec, files: &[(String, PathBuf)]) -> Result<CrossTokenizer> {
        if files.is_empty() {
            return Err(Error::Invalid("tokenizer training needs at least one language file".into()));
        }
        spec.validate()?;
        let mut seen = HashSet::new();
        for (lang, _) in files {
            if lang.is_empty() || lang.contains(':') || !seen.insert(lang.as_str()) {
                return Err(Error::Invalid(format!("invalid or repeated language code '{lang}'")));
            }
        }
        let per_lang = match spec.scheme {
            AnchorScheme::Joint => spec.vocab_size,
            _ => spec.vocab_size / files.len(),
        };
        if per_lang <= SPECIAL_TOKENS.len() {
            return Err(Error::Invalid(format!(
                "vocab_size {} leaves no room beyond the {} special tokens per vocabulary",
                spec.vocab_size,
                SPECIAL_TOKENS.len()
            )));
        }
        let (norm, pre) = pipeline(spec.lowercase);
        let mut counts = Vec::new();
        for (_, path) in files {
            counts.push(count_words(path, &norm, &pre)?);
        }
        let langs: Vec<String> = files.iter().map(|(l, _)| l.clone()).collect();
        let mut models = Vec::new();
        match spec.scheme {
            AnchorScheme::Joint => {
                let mut all: BTreeMap<String, u64> = BTreeMap::new();
                for c in &counts {
                    for (w, n) in c {
                        *all.entry(w.clone()).or_default() += n;
                    }
                }
                models.push(learn_bpe(&all, per_lang, spec));
            }
            _ => {
                for c in &counts {
                    models.push(learn_bpe(c, per_lang, spec));
                }
            }
        }
        // Global vocabulary: specials, then each model's tokens in local order (prefixed for NoAnchors).
        let mut vocab: Vec<String> = SPECIAL_TOKENS.iter().map(|s| s.to_string()).collect();
        let mut index: HashMap<String, u32> = vocab.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect();
        for (k, (local_vocab, _)) in models.iter().enumerate() {
            for tok in &local_vocab[SPECIAL_TOKENS.len()..] {
                let g = global_string(spec.scheme, &langs, k, tok);
                if !index.contains_key(&g) {
                    index.insert(g.clone(), vocab.len() as u32);
                    vocab.push(g);
                }
            }
        }
        let mut hf = Vec::new();
        for (local_vocab, merges) in &models {
            hf.push(build_hf(local_vocab, merges, spec.lowercase)?);
        }
        let meta = Meta {
            format: META_FORMAT.into(),
            spec: spec.clone(),
            langs: langs.clone(),
            vocab,
            lang_ids: BTreeMap::new(),
        };
        let mut tok = CrossTokenizer::assemble(meta, hf)?;
        // Ids occurring in each language's training text.
        for (k, lang) in langs.iter().enumerate() {
            let mut ids = BTreeSet::new();
            for word in counts[k].keys() {
                ids.extend(tok.encode_word(word, k)?);
            }
            ids.remove(&(Special::Unk as u32));
            tok.meta.lang_ids.insert(lang.clone(), ids.into_iter().collect());
        }
        Ok(tok)
    }

    fn assemble(meta: Meta, hf: Vec<Tokenizer>) -> Result<CrossTokenizer> {
        let token_index: HashMap<String, u32> =
            meta.vocab.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect();
        let mut local_to_global = Vec::new();
        for (k, t) in hf.iter().enumerate() {
            let n = t.get_vocab_size(true);
            let mut map = vec![Special::Unk as u32; n];
            for (s, id) in t.get_vocab(true) {
                let g = global_string(meta.spec.scheme, &meta.langs, k, &s);
                let gid = *token_index.get(&g).ok_or_else(|| {
                    Error::Invalid(format!("tokenizer token '{g}' missing from the global vocabulary"))
                })?;
                if let Some(slot) = map.get_mut(id as usize) {
                    *slot = gid;
                }
            }
            local_to_global.push(map);
        }
        Ok(CrossTokenizer { meta, hf, local_to_global, token_index })
    }

    /// Index of the HF tokenizer used for `lang`.
    fn tokenizer_index(&self, lang: &str) -> Result<usize> {
        let k = self.meta.langs.iter().position(|l| l == lang).ok_or_else(|| {
            Error::Invalid(format!("unknown language '{lang}'; tokenizer languages: {}", self.meta.langs.join(", ")))
        })?;
        Ok(if self.meta.spec.scheme == AnchorScheme::Joint { 0 } else { k })
    }

    /// One pre-tokenized word, no normalization.
    fn encode_word(&self, word: &str, lang_index: usize) -> Result<Vec<u32>> {
        let k = if self.meta.spec.scheme == AnchorScheme::Joint { 0 } else { lang_index };
        let toks =
            self.hf[k].get_model().tokenize(word).map_err(|e| Error::Invalid(format!("BPE tokenize '{word}': {e}")))?;
        Ok(toks.iter().map(|t| self.map_local(k, t.id)).collect())
    }

    fn map_local(&self, k: usize, id: u32) -> u32 {
        self.local_to_global[k].get(id as usize).copied().unwrap_or(Special::Unk as u32)
    }

    /// Token ids of `text` in language `lang` (no `[CLS]`/`[SEP]` added).
    pub fn encode(&self, text: &str, lang: &str) -> Result<Vec<u32>> {
        let k = self.tokenizer_index(lang)?;
        let enc = self.hf[k].encode(text, false).map_err(|e| Error::Invalid(format!("encode ({lang}): {e}")))?;
        Ok(enc.get_ids().iter().map(|&id| self.map_local(k, id)).collect())
    }

    /// Text of `ids`: special tokens and unknown ids are skipped, `</w>` becomes a space.
    pub fn decode(&self, ids: &[u32]) -> String {
        let mut out = String::new();
        for &id in ids {
            if (id as usize) < SPECIAL_TOKENS.len() {
                continue;
            }
            if let Some(s) = self.meta.vocab.get(id as usize) {
                out.push_str(self.strip_lang(s));
            }
        }
        let words: Vec<&str> = out.split(EOW).map(str::trim).filter(|w| !w.is_empty()).collect();
        words.join(" ")
    }

    fn strip_lang<'a>(&self, s: &'a str) -> &'a str {
        if self.meta.spec.scheme == AnchorScheme::NoAnchors {
            if let Some((_, rest)) = s.split_once(':') {
                return rest;
            }
        }
        s
    }

    /// Size of the global vocabulary (specials included).
    pub fn vocab_size(&self) -> usize {
        self.meta.vocab.len()
    }

    /// Checks that every BPE model reached the size the spec asked for (`vocab_size`, or `vocab_size / n` per
    /// language for the per-language schemes). Training stops early when no pair occurs `min_frequency` times, so
    /// a vocabulary larger than the text supports silently yields a smaller one; a pre-training run calls this to
    /// refuse such a config before any training.
    pub fn check_vocab_filled(&self) -> Result<()> {
        let spec = &self.meta.spec;
        let per_lang = match spec.scheme {
            AnchorScheme::Joint => spec.vocab_size,
            _ => spec.vocab_size / self.meta.langs.len(),
        };
        for (k, hf) in self.hf.iter().enumerate() {
            let got = hf.get_vocab_size(true);
            if got < per_lang {
                let which = match spec.scheme {
                    AnchorScheme::Joint => format!("the joint training text of {}", self.meta.langs.join(", ")),
                    _ => format!("the '{}' training text", self.meta.langs[k]),
                };
                return Err(Error::Invalid(format!(
                    "tokenizer: {which} supports only {got} BPE tokens (merges need pairs seen at least {} times), \
                     fewer than the {per_lang} asked for by vocab_size = {}; lower [tokenizer].vocab_size or add data",
                    spec.min_frequency, spec.vocab_size
                )));
            }
        }
        Ok(())
    }

    /// The global token string of `id` (`en:`-prefixed under NoAnchors).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.meta.vocab.get(id as usize).cloned()
    }

    /// The id of a global token string.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.token_index.get(token).copied()
    }

    /// The Hugging Face tokenizer that encodes `lang` and its local id → global id map (the identity for Joint):
    /// `global = map[local]`. For exporting a language's view and for word-aligned encodings.
    pub fn hf_view(&self, lang: &str) -> Result<(&Tokenizer, &[u32])> {
        let k = self.tokenizer_index(lang)?;
        Ok((&self.hf[k], &self.local_to_global[k]))
    }

    /// Id of a special token (fixed: `[PAD]`=0 … `[MASK]`=4).
    pub fn special_id(&self, which: Special) -> u32 {
        which as u32
    }

    /// Ids that occur in `lang`'s training text (specials excluded), sorted; for sampling random replacement
    /// tokens of the same language. Empty for an unknown language.
    pub fn lang_token_ids(&self, lang: &str) -> Vec<u32> {
        self.meta.lang_ids.get(lang).cloned().unwrap_or_default()
    }

    /// The languages, in training order.
    pub fn langs(&self) -> &[String] {
        &self.meta.langs
    }

    /// The spec it was trained with.
    pub fn spec(&self) -> &TokenizerSpec {
        &self.meta.spec
    }

    /// Write `crossling-tokenizer.json` plus `tokenizer.json` (Joint) or `tokenizer.<lang>.json` (union schemes)
    /// into `dir` (created if needed); each file is written to a temporary name and renamed.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let files: Vec<String> = match self.meta.spec.scheme {
            AnchorScheme::Joint => vec!["tokenizer.json".into()],
            _ => self.meta.langs.iter().map(|l| format!("tokenizer.{l}.json")).collect(),
        };
        for (t, name) in self.hf.iter().zip(&files) {
            let json = t.to_string(true).map_err(|e| Error::Invalid(format!("serializing tokenizer {name}: {e}")))?;
            write_atomic(&dir.join(name), json)?;
        }
        let meta = serde_json::to_string_pretty(&self.meta)
            .map_err(|e| Error::Invalid(format!("serializing {META_FILE}: {e}")))?;
        write_atomic(&dir.join(META_FILE), meta)
    }

    /// Load what [`CrossTokenizer::save`] wrote.
    pub fn load(dir: &Path) -> Result<CrossTokenizer> {
        let meta_path = dir.join(META_FILE);
        let text = std::fs::read_to_string(&meta_path).map_err(|e| Error::io(&meta_path, e))?;
        let meta: Meta = serde_json::from_str(&text)
            .map_err(|e| Error::format(&meta_path, e.line(), format!("invalid tokenizer description: {e}")))?;
        if meta.format != META_FORMAT {
            return Err(Error::format_file(&meta_path, format!("format '{}', expected '{META_FORMAT}'", meta.format)));
        }
        let files: Vec<String> = match meta.spec.scheme {
            AnchorScheme::Joint => vec!["tokenizer.json".into()],
            _ => meta.langs.iter().map(|l| format!("tokenizer.{l}.json")).collect(),
        };
        let mut hf = Vec::new();
        for name in files {
            let p = dir.join(&name);
            let t = Tokenizer::from_file(&p)
                .map_err(|e| Error::format_file(&p, format!("not a Hugging Face tokenizer: {e}")))?;
            hf.push(t);
        }
        CrossTokenizer::assemble(meta, hf)
    }
}

fn global_string(scheme: AnchorScheme, langs: &[String], k: usize, tok: &str) -> String {
    if scheme == AnchorScheme::NoAnchors && !SPECIAL_TOKENS.contains(&tok) {
        format!("{}:{tok}", langs[k])
    } else {
        tok.to_string()
    }
}

fn normalizer(lowercase: bool) -> NormalizerWrapper {
    let mut parts: Vec<NormalizerWrapper> = vec![NFC.into()];
    if lowercase {
        parts.push(Lowercase.into());
    }
    NormSeq::new(parts).into()
}

fn pipeline(lowercase: bool) -> (NormalizerWrapper, BertPreTokenizer) {
    (normalizer(lowercase), BertPreTokenizer)
}

/// Word counts of a file after normalization and pre-tokenization.
fn count_words(path: &Path, norm: &NormalizerWrapper, pre: &BertPreTokenizer) -> Result<BTreeMap<String, u64>> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut counts: HashMap<String, u64> = HashMap::new();
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        let mut n = NormalizedString::from(line.as_str());
        norm.normalize(&mut n).map_err(|e| Error::format(path, i + 1, format!("normalization failed: {e}")))?;
        let mut p = PreTokenizedString::from(n);
        pre.pre_tokenize(&mut p).map_err(|e| Error::format(path, i + 1, format!("pre-tokenization failed: {e}")))?;
        for (w, _, _) in p.get_splits(OffsetReferential::Original, OffsetType::Byte) {
            *counts.entry(w.to_string()).or_default() += 1;
        }
    }
    Ok(counts.into_iter().collect())
}

/// The characters of `counts` that the alphabet keeps, most frequent first (ties to the smaller character): while
/// their occurrences have not reached `coverage` of all character occurrences (every character without it), and
/// while the alphabet's symbols number at most `max_symbols` (no bound without it). A character gives one symbol for
/// its word-internal form and one for its end-of-word form, each where it occurs in `counts`.
fn kept_characters(
    counts: &BTreeMap<String, u64>,
    coverage: Option<f64>,
    max_symbols: Option<usize>,
) -> BTreeSet<char> {
    // Per character: occurrences, whether it occurs inside a word, whether it ends one.
    let mut stats: BTreeMap<char, (u64, bool, bool)> = BTreeMap::new();
    for (w, &n) in counts {
        let last = w.chars().count().saturating_sub(1);
        for (i, c) in w.chars().enumerate() {
            let s = stats.entry(c).or_default();
            s.0 += n;
            if i == last {
                s.2 = true;
            } else {
                s.1 = true;
            }
        }
    }
    let total: u64 = stats.values().map(|s| s.0).sum();
    let mut by_count: Vec<(char, (u64, bool, bool))> = stats.into_iter().collect();
    by_count.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    let (mut kept, mut covered, mut symbols) = (BTreeSet::new(), 0u64, 0usize);
    for (c, (n, inner, end)) in by_count {
        if coverage.is_some_and(|cov| covered as f64 >= cov * total as f64) {
            break;
        }
        symbols += usize::from(inner) + usize::from(end);
        if max_symbols.is_some_and(|max| symbols > max) {
            break;
        }
        kept.insert(c);
        covered += n;
    }
    kept
}

/// Sennrich et al. (2016) BPE learning with end-of-word marker. Returns the vocabulary (specials first, then the
/// sorted alphabet, then merge results in merge order) and the ranked merges, with `spec`'s `min_frequency`.
/// Characters outside `spec`'s `character_coverage` and `max_alphabet_share` of `vocab_size` ([`kept_characters`])
/// stay out of the alphabet and split the words that contain them.
fn learn_bpe(
    counts: &BTreeMap<String, u64>,
    vocab_size: usize,
    spec: &TokenizerSpec,
) -> (Vec<String>, Vec<(String, String)>) {
    let min_frequency = spec.min_frequency;
    let mut vocab: Vec<String> = SPECIAL_TOKENS.iter().map(|s| s.to_string()).collect();
    let mut index: HashMap<String, u32> = vocab.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect();
    let symbols_of = |w: &str| -> Vec<String> {
        let chars: Vec<char> = w.chars().collect();
        chars
            .iter()
            .enumerate()
            .map(|(i, c)| if i + 1 == chars.len() { format!("{c}{EOW}") } else { c.to_string() })
            .collect()
    };
    let max_symbols = spec.max_alphabet_share.map(|share| (share * vocab_size as f64).floor() as usize);
    let kept = kept_characters(counts, spec.character_coverage, max_symbols);
    let is_kept = |s: &str| s.chars().next().is_some_and(|c| kept.contains(&c));
    let symbols: Vec<(Vec<String>, i64)> = counts.iter().map(|(w, &n)| (symbols_of(w), n as i64)).collect();
    let alphabet: BTreeSet<&String> = symbols.iter().flat_map(|(syms, _)| syms).filter(|s| is_kept(s)).collect();
    for s in alphabet {
        if !index.contains_key(s) {
            index.insert(s.clone(), vocab.len() as u32);
            vocab.push(s.clone());
        }
    }
    // A word is learnt from as its runs of kept symbols: a dropped character ([UNK] when encoding) breaks it.
    let mut words: Vec<(Vec<u32>, i64)> = Vec::new();
    for (syms, n) in symbols {
        let mut run = Vec::new();
        for s in syms {
            if is_kept(&s) {
                run.push(index[&s]);
            } else if !run.is_empty() {
                words.push((std::mem::take(&mut run), n));
            }
        }
        if !run.is_empty() {
            words.push((run, n));
        }
    }
    let mut pair_counts: HashMap<(u32, u32), i64> = HashMap::new();
    let mut where_: HashMap<(u32, u32), BTreeSet<usize>> = HashMap::new();
    for (wi, (syms, n)) in words.iter().enumerate() {
        for p in syms.windows(2) {
            *pair_counts.entry((p[0], p[1])).or_default() += n;
            where_.entry((p[0], p[1])).or_default().insert(wi);
        }
    }
    // Max-heap on count, ties to the smallest (left, right) strings.
    type Entry = (i64, std::cmp::Reverse<(String, String)>, (u32, u32));
    let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
    let entry = |vocab: &[String], pair: (u32, u32), c: i64| -> Entry {
        (c, std::cmp::Reverse((vocab[pair.0 as usize].clone(), vocab[pair.1 as usize].clone())), pair)
    };
    for (&pair, &c) in &pair_counts {
        heap.push(entry(&vocab, pair, c));
    }
    let mut merges = Vec::new();
    while vocab.len() < vocab_size {
        let Some((c, _, pair)) = heap.pop() else { break };
        if pair_counts.get(&pair).copied().unwrap_or(0) != c || c <= 0 {
            continue; // stale entry
        }
        if (c as u64) < min_frequency {
            break;
        }
        let (a, b) = (vocab[pair.0 as usize].clone(), vocab[pair.1 as usize].clone());
        let merged = format!("{a}{b}");
        let new_id = match index.get(&merged) {
            Some(&id) => id,
            None => {
                index.insert(merged.clone(), vocab.len() as u32);
                vocab.push(merged);
                (vocab.len() - 1) as u32
            }
        };
        merges.push((a, b));
        let affected: Vec<usize> = where_.remove(&pair).map(|s| s.into_iter().collect()).unwrap_or_default();
        let mut delta: HashMap<(u32, u32), i64> = HashMap::new();
        for wi in affected {
            let (syms, n) = &mut words[wi];
            let n = *n;
            if !syms.windows(2).any(|p| (p[0], p[1]) == pair) {
                continue;
            }
            for p in syms.windows(2) {
                *delta.entry((p[0], p[1])).or_default() -= n;
            }
            let mut out = Vec::with_capacity(syms.len());
            let mut i = 0;
            while i < syms.len() {
                if i + 1 < syms.len() && (syms[i], syms[i + 1]) == pair {
                    out.push(new_id);
                    i += 2;
                } else {
                    out.push(syms[i]);
                    i += 1;
                }
            }
            *syms = out;
            for p in syms.windows(2) {
                *delta.entry((p[0], p[1])).or_default() += n;
                where_.entry((p[0], p[1])).or_default().insert(wi);
            }
        }
        for (p, d) in delta {
            if d == 0 {
                continue;
            }
            let c = pair_counts.entry(p).or_default();
            *c += d;
            if *c > 0 {
                heap.push(entry(&vocab, p, *c));
            }
        }
        pair_counts.remove(&pair);
    }
    (vocab, merges)
}

/// A Hugging Face tokenizer for a learnt vocabulary and merges.
fn build_hf(vocab: &[String], merges: &[(String, String)], lowercase: bool) -> Result<Tokenizer> {
    let v: tokenizers::models::bpe::Vocab = vocab.iter().enumerate().map(|(i, s)| (s.clone(), i as u32)).collect();
    let bpe = BPE::builder()
        .vocab_and_merges(v, merges.to_vec())
        .unk_token(SPECIAL_TOKENS[Special::Unk as usize].to_string())
        .end_of_word_suffix(EOW.to_string())
        .build()
        .map_err(|e| Error::Invalid(format!("building BPE model: {e}")))?;
    let mut t = Tokenizer::new(bpe);
    t.with_normalizer(Some(normalizer(lowercase)));
    t.with_pre_tokenizer(Some(BertPreTokenizer));
    t.with_decoder(Some(BPEDecoder::new(EOW.to_string())));
    let specials: Vec<AddedToken> = SPECIAL_TOKENS.iter().map(|s| AddedToken::from(s.to_string(), true)).collect();
    t.add_special_tokens(&specials);
    Ok(t)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// Two synthetic languages sharing some words (numbers, names) and a common character set.
    pub(crate) fn write_corpora(dir: &Path, n: usize) -> Vec<(String, PathBuf)> {
        let a_words = ["the", "cat", "sat", "on", "mat", "lower", "lowest", "newer", "wider", "paris", "2020"];
        let b_words = ["le", "chat", "assis", "sur", "tapis", "plus", "bas", "nouveau", "large", "paris", "2020"];
        let mut files = Vec::new();
        for (lang, words) in [("en", &a_words), ("fr", &b_words)] {
            let p = dir.join(format!("{lang}.txt"));
            let mut f = std::fs::File::create(&p).unwrap();
            let mut s: u64 = if lang == "en" { 1 } else { 2 };
            for _ in 0..n {
                let len = 4 + (s % 5) as usize;
                let mut line = Vec::new();
                for _ in 0..len {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    line.push(words[((s >> 33) % words.len() as u64) as usize]);
                }
                writeln!(f, "{} .", line.join(" ")).unwrap();
            }
            files.push((lang.to_string(), p));
        }
        files
    }

    #[test]
    fn each_scheme_trains_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 300);
        for scheme in [AnchorScheme::Joint, AnchorScheme::PerLanguageUnion, AnchorScheme::NoAnchors] {
            let tok = CrossTokenizer::train(&TokenizerSpec::new(scheme, 200), &files).unwrap();
            assert!(tok.vocab_size() <= 200 && tok.vocab_size() > 5, "{scheme:?} {}", tok.vocab_size());
            for (i, s) in SPECIAL_TOKENS.iter().enumerate() {
                assert_eq!(tok.token_to_id(s), Some(i as u32));
                assert_eq!(tok.id_to_token(i as u32).as_deref(), Some(*s));
            }
            assert_eq!(tok.special_id(Special::Mask), 4);
            for (lang, text) in [("en", "the cat sat on the mat lowest"), ("fr", "le chat assis sur le tapis paris")] {
                let ids = tok.encode(text, lang).unwrap();
                assert!(!ids.is_empty() && !ids.contains(&1), "{scheme:?} {ids:?}");
                assert_eq!(tok.decode(&ids), text);
                let allowed: HashSet<u32> = tok.lang_token_ids(lang).into_iter().collect();
                assert!(ids.iter().all(|i| allowed.contains(i)));
            }
            assert!(tok.encode("x", "de").is_err());
            // Unseen character → [UNK].
            assert!(tok.encode("€", "en").unwrap().contains(&1));
            let out = dir.path().join(format!("{scheme:?}"));
            tok.save(&out).unwrap();
            let back = CrossTokenizer::load(&out).unwrap();
            assert_eq!(back.vocab_size(), tok.vocab_size());
            for lang in ["en", "fr"] {
                let t = "the cat , le chat 2020 paris newer";
                assert_eq!(back.encode(t, lang).unwrap(), tok.encode(t, lang).unwrap());
                assert_eq!(back.lang_token_ids(lang), tok.lang_token_ids(lang));
            }
        }
    }

    #[test]
    fn joint_writes_a_plain_hf_tokenizer() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 200);
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 150), &files).unwrap();
        tok.save(dir.path()).unwrap();
        let hf = Tokenizer::from_file(dir.path().join("tokenizer.json")).unwrap();
        let enc = hf.encode("the chat sat", false).unwrap();
        assert_eq!(enc.get_ids(), tok.encode("the chat sat", "en").unwrap().as_slice());
        assert_eq!(hf.token_to_id("[MASK]"), Some(4));
    }

    #[test]
    fn a_vocabulary_larger_than_the_text_supports_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("en.txt");
        std::fs::write(&f, "low lower lowest\nnewer wider\n".repeat(3)).unwrap();
        let files = [("en".to_string(), f)];
        let small = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 20), &files).unwrap();
        small.check_vocab_filled().unwrap();
        let big = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 5000), &files).unwrap();
        let err = big.check_vocab_filled().unwrap_err().to_string();
        assert!(err.contains("fewer than the 5000 asked for"), "{err}");
    }

    /// `en` words over a small alphabet, and a "logographic" language of 400 distinct characters, each rare.
    pub(crate) fn write_many_character_corpora(dir: &Path) -> Vec<(String, PathBuf)> {
        let en = dir.join("en.txt");
        std::fs::write(&en, "the lower cat sat on the newer mat\n".repeat(40)).unwrap();
        let zh = dir.join("zh.txt");
        let chars: Vec<char> = (0..400u32).map(|i| char::from_u32(0x4e00 + i).unwrap()).collect();
        let lines: Vec<String> = chars.chunks(4).map(|c| c.iter().collect::<String>()).collect();
        std::fs::write(&zh, lines.join("\n")).unwrap();
        vec![("en".to_string(), en), ("zh".to_string(), zh)]
    }

    #[test]
    fn character_coverage_keeps_room_for_merges_when_an_alphabet_is_large() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_many_character_corpora(dir.path());
        let all = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 200), &files).unwrap();
        // 400 rare characters (400 of the 1,480 character occurrences) exceed the 200 entries: no merge, English
        // stays in letters; 70 % coverage keeps English's letters only.
        assert_eq!(all.encode("lower", "en").unwrap().len(), 5);
        let spec = TokenizerSpec { character_coverage: Some(0.7), ..TokenizerSpec::new(AnchorScheme::Joint, 200) };
        let covered = CrossTokenizer::train(&spec, &files).unwrap();
        assert_eq!(covered.encode("lower", "en").unwrap().len(), 1);
        // A dropped character is [UNK]; the rest of its word is still encoded.
        let ids = covered.encode("\u{4e00}cat", "en").unwrap();
        assert_eq!(ids[0], Special::Unk as u32);
        assert!(ids[1..].iter().all(|&i| i != Special::Unk as u32), "{ids:?}");
        // Full coverage is the same tokenizer as none.
        let full = TokenizerSpec { character_coverage: Some(1.0), ..TokenizerSpec::new(AnchorScheme::Joint, 200) };
        assert_eq!(CrossTokenizer::train(&full, &files).unwrap().meta.vocab, all.meta.vocab);
    }

    #[test]
    fn covered_characters_take_the_most_frequent_first() {
        let counts: BTreeMap<String, u64> = [("aab".to_string(), 10), ("c".to_string(), 1)].into_iter().collect();
        // a 20, b 10, c 1 of 31.
        let set = |c: Option<f64>| kept_characters(&counts, c, None).into_iter().collect::<String>();
        assert_eq!(set(None), "abc");
        assert_eq!(set(Some(0.5)), "a");
        assert_eq!(set(Some(0.9)), "ab");
        assert_eq!(set(Some(0.99)), "abc");
    }

    #[test]
    fn alphabet_cap_drops_the_least_frequent_characters_and_counts_end_of_word_forms() {
        // a: 20 word-internal + 10 final (2 symbols); b: 10 final (1); c: 1 internal, 1 final (2); 42 in all.
        let counts: BTreeMap<String, u64> =
            [("aab".to_string(), 10), ("a".to_string(), 10), ("cc".to_string(), 1)].into_iter().collect();
        let set = |max: usize| kept_characters(&counts, None, Some(max)).into_iter().collect::<String>();
        assert_eq!(set(10), "abc");
        assert_eq!(set(5), "abc");
        assert_eq!(set(4), "ab");
        assert_eq!(set(3), "ab");
        assert_eq!(set(2), "a");
        assert_eq!(set(1), "");
        // The cap never adds what coverage dropped (0.9 of the 42 occurrences: a and b), and both bind together.
        let both = |max: usize| kept_characters(&counts, Some(0.9), Some(max)).into_iter().collect::<String>();
        assert_eq!(both(10), "ab");
        assert_eq!(both(2), "a");
    }

    #[test]
    fn alphabet_cap_leaves_room_for_merges_and_is_serialised_only_when_set() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 300);
        // 40 entries: the fixture's alphabet (about 30 symbols) leaves few merges; a cap of half leaves room for more.
        let plain = TokenizerSpec::new(AnchorScheme::Joint, 40);
        let capped = TokenizerSpec { max_alphabet_share: Some(0.5), ..plain.clone() };
        assert!(!serde_json::to_string(&plain).unwrap().contains("max_alphabet_share"));
        assert!(serde_json::to_string(&capped).unwrap().contains("max_alphabet_share"));
        // Entries of one character (with or without the end-of-word marker), and all entries but the specials.
        let sizes = |spec: &TokenizerSpec| {
            let tok = CrossTokenizer::train(spec, &files).unwrap();
            let single = |v: &String| v.strip_suffix(EOW).unwrap_or(v).chars().count() == 1;
            let alphabet = tok.meta.vocab.iter().filter(|v| single(v)).count();
            (alphabet, tok.meta.vocab.len() - SPECIAL_TOKENS.len())
        };
        let (a_plain, n_plain) = sizes(&plain);
        let (a_capped, n_capped) = sizes(&capped);
        assert!(a_plain > 20, "the fixture's alphabet ({a_plain}) is larger than the cap");
        assert!(a_capped <= 20, "{a_capped}");
        assert!(
            n_capped - a_capped > n_plain - a_plain,
            "more merges: {n_capped} - {a_capped} vs {n_plain} - {a_plain}"
        );
        for bad in [0.0, 1.5, f64::NAN] {
            let spec = TokenizerSpec { max_alphabet_share: Some(bad), ..plain.clone() };
            assert!(spec.validate().unwrap_err().to_string().contains("max_alphabet_share"));
        }
    }

    #[test]
    fn character_coverage_is_validated_and_absent_when_unset() {
        let json = serde_json::to_string(&TokenizerSpec::new(AnchorScheme::Joint, 100)).unwrap();
        assert!(!json.contains("character_coverage"), "{json}");
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            let spec = TokenizerSpec { character_coverage: Some(bad), ..TokenizerSpec::new(AnchorScheme::Joint, 100) };
            let err = spec.validate().unwrap_err().to_string();
            assert!(err.contains("character_coverage"), "{err}");
        }
    }

    #[test]
    fn training_is_deterministic() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 300);
        for scheme in [AnchorScheme::Joint, AnchorScheme::NoAnchors] {
            let spec = TokenizerSpec::new(scheme, 180);
            let a = CrossTokenizer::train(&spec, &files).unwrap();
            let b = CrossTokenizer::train(&spec, &files).unwrap();
            assert_eq!(a.meta.vocab, b.meta.vocab);
            assert_eq!(a.meta.lang_ids, b.meta.lang_ids);
        }
    }

    #[test]
    fn no_anchor_tokens_are_prefixed_and_union_shares() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 300);
        let na = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::NoAnchors, 200), &files).unwrap();
        for id in 5..na.vocab_size() as u32 {
            let s = na.id_to_token(id).unwrap();
            assert!(s.starts_with("en:") || s.starts_with("fr:"), "{s}");
        }
        let en: HashSet<u32> = na.lang_token_ids("en").into_iter().collect();
        assert!(na.lang_token_ids("fr").iter().all(|i| !en.contains(i)));
        let un = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::PerLanguageUnion, 200), &files).unwrap();
        assert_eq!(un.encode("paris", "en").unwrap(), un.encode("paris", "fr").unwrap());
    }

    #[test]
    fn spec_rejects_unknown_fields_and_bad_sizes() {
        let ok: TokenizerSpec = serde_json::from_str(r#"{"scheme":"per_language_union","vocab_size":100}"#).unwrap();
        assert_eq!(ok.min_frequency, 2);
        assert!(!ok.lowercase);
        assert!(serde_json::from_str::<TokenizerSpec>(r#"{"scheme":"joint","vocab_size":1,"vocab":3}"#).is_err());
        assert!(serde_json::from_str::<TokenizerSpec>(r#"{"scheme":"shared","vocab_size":1}"#).is_err());
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 10);
        assert!(CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::NoAnchors, 8), &files).is_err());
        assert!(CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 100), &[]).is_err());
    }

    #[test]
    fn lowercase_applies() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_corpora(dir.path(), 100);
        let mut spec = TokenizerSpec::new(AnchorScheme::Joint, 120);
        spec.lowercase = true;
        let tok = CrossTokenizer::train(&spec, &files).unwrap();
        assert_eq!(tok.encode("The CAT", "en").unwrap(), tok.encode("the cat", "en").unwrap());
    }

    #[test]
    fn learner_merges_most_frequent_pair_first() {
        let counts: BTreeMap<String, u64> =
            [("low".to_string(), 5), ("lower".to_string(), 2), ("newest".to_string(), 6)].into_iter().collect();
        let (vocab, merges) = learn_bpe(&counts, 100, &TokenizerSpec::new(AnchorScheme::Joint, 100));
        // "w e" occurs 6 (newest) + 2 (lower) = 8 times, more than "l o" (7) and "e s" (6).
        assert_eq!(merges[0], ("w".to_string(), "e".to_string()));
        assert_eq!(merges[1], ("l".to_string(), "o".to_string()));
        assert!(vocab.contains(&"newest</w>".to_string()));
        assert!(merges.iter().all(|(a, b)| vocab.contains(&format!("{a}{b}"))));
    }
}
