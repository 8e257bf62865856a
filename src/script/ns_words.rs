//! `words::` — word-level alignment of two models (Emerging §5.1, Figure 4): the monolingual alignment probe at
//! the word level, for non-contextual vectors and for corpus-averaged contextual word vectors at every layer, and
//! (`words::align_static`) for two sets of static word vectors, the fastText baseline of Figure 4a.
//!
//! ```rhai
//! let r = words::align(en_model, fr_model, #{
//!     src: "en", tgt: "fr", dictionary: "en-fr",      // MUSE pair; train [0, 5000) / test [5000, 6500)
//!     corpus_src: en_sentences, corpus_tgt: fr_sentences,
//!     norm: "center,iter", method: "csls",
//! });
//! // r.contextual = [P@1 per layer, 0 = embedding output], r.noncontextual = P@1, with coverages and counts;
//! // each probe also has `hits` (1.0 / 0.0 per test source word: P@1 per item) and `candidates` (target words);
//! // r.words_src / r.words_tgt and r.single_src / r.single_tgt are the vocabularies of (b) and (a)
//! let ft = words::align_static(en_ft, fr_ft, #{ dictionary: "en-fr", src_words: r.single_src, tgt_words: r.single_tgt });
//! ```
//! `words::align_static` takes optional `src_words` / `tgt_words`: the static vectors' vocabularies are cut to those
//! words, so a static baseline is scored on the same subset as an MLM probe (Emerging §5.1.1: "the same subset of
//! fastText").
//! For each side, the vocabulary is the dictionary words (train and test) that occur in its corpus. The
//! contextual vector of a word at layer l is the mean over its occurrences of the mean of its subwords' layer-l
//! vectors ([`crate::features::words::corpus_averaged`]); the non-contextual vector is its input-embedding row,
//! for words that are a single subword. Both sides are normalized (`norm`, e.g. centring then iterative
//! normalization, Zhang et al. 2019); an orthogonal Procrustes map is fit on the train pairs (each source word with
//! its first translation in the vocabulary) and P@1 is scored on the test pairs with `method` (CSLS, k = 10), MUSE
//! convention: any gold translation counts, over the covered unique source words.
use std::collections::HashSet;

use rhai::{Dynamic, Map, Module, NativeCallContext};
use serde::Deserialize;
use tch::Tensor;

use super::engine::{native, rhai_err, Res, Session};
use super::handles::ModelRef;
use super::ns_wordvec::StaticVectors;
use crate::analysis::metrics::{index_dictionary, word_translation, IndexedDict};
use crate::analysis::normalize::{apply as normalize, Normalization};
use crate::analysis::procrustes::{apply_map, paired_rows, procrustes};
use crate::analysis::scores::{Method, Options, Scorer};
use crate::data::formats::muse::DictPair;
use crate::error::{Error, Result};
use crate::features::words::{corpus_averaged, embedding_rows};
use crate::features::{Extraction, Pooling, Tokenized};
use crate::model::load::LoadedModel;

/// What `words::align` computes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordAlignSpec {
    pub src: String,
    pub tgt: String,
    /// MUSE pair, source language first (`en-fr`).
    pub dictionary: String,
    pub corpus_src: Vec<String>,
    pub corpus_tgt: Vec<String>,
    #[serde(default = "default_norm")]
    pub norm: String,
    #[serde(default = "default_method")]
    pub method: String,
}

fn default_norm() -> String {
    "center,iter".into()
}

fn default_method() -> String {
    "csls".into()
}

/// What `words::align_static` computes: the same probe on two sets of static word vectors.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticAlignSpec {
    /// MUSE pair, source language first (`en-fr`).
    pub dictionary: String,
    #[serde(default = "default_norm")]
    pub norm: String,
    #[serde(default = "default_method")]
    pub method: String,
    /// Only these source words (e.g. an MLM probe's vocabulary), when given.
    #[serde(default)]
    pub src_words: Option<Vec<String>>,
    /// Only these target words, when given.
    #[serde(default)]
    pub tgt_words: Option<Vec<String>>,
}

/// The words of an optional list, as a set.
fn word_set(words: &Option<Vec<String>>) -> Option<HashSet<&str>> {
    words.as_ref().map(|v| v.iter().map(String::as_str).collect())
}

/// The distinct `words` that have a vector in `v` (as a word: the vectors' own rows), and their rows.
/// # Shapes
/// → `[found, d]` f32
fn static_rows<'a>(v: &StaticVectors, words: impl Iterator<Item = &'a str>) -> (Vec<String>, Tensor) {
    let (mut found, mut rows) = (Vec::new(), Vec::new());
    let mut seen = HashSet::new();
    for w in words {
        if let (true, Some(row)) = (seen.insert(w), v.vectors.get(w)) {
            found.push(w.to_string());
            rows.extend_from_slice(row);
        }
    }
    let t = Tensor::from_slice(&rows).view([found.len() as i64, v.vectors.dim() as i64]);
    (found, t)
}

/// One side: its vocabulary, contextual vectors `[layers + 1, words, d]`, and the single-subword words with their
/// embedding rows.
pub(super) struct Side {
    pub words: Vec<String>,
    pub contextual: Tensor,
    single: Vec<String>,
    embeddings: Tensor,
}

/// One side of the probe: the dictionary words `wanted` found in `corpus` (as the model's tokenizer splits words),
/// their corpus-averaged contextual vectors and the single-subword words' embedding rows.
pub(super) fn side(m: &LoadedModel, lang: &str, corpus: &[String], wanted: &HashSet<&str>) -> Result<Side> {
    let mut texts: Vec<Tokenized> = Vec::new();
    let mut words: Vec<Vec<String>> = Vec::new();
    let max = m.config.max_positions;
    let mut seen: Vec<String> = Vec::new();
    let mut seen_set: HashSet<String> = HashSet::new();
    for line in corpus {
        let enc = m.tokenizer.encode_words(line, lang)?;
        if enc.words.is_empty() || enc.tokenized.ids.len() > max {
            continue; // an empty line, or one longer than the model's positions (rare in sentence corpora)
        }
        for w in &enc.words {
            if wanted.contains(w.as_str()) && seen_set.insert(w.clone()) {
                seen.push(w.clone());
            }
        }
        texts.push(enc.tokenized);
        words.push(enc.words);
    }
    if seen.is_empty() {
        return Err(Error::Invalid(format!("no dictionary word of '{lang}' occurs in its corpus")));
    }
    let how = Extraction { device: m.device(), ..Extraction::cpu(Pooling::WordMean) };
    let (contextual, _counts) = corpus_averaged(&m.model, lang, &texts, &words, &seen, &how)?;
    let mut single = Vec::new();
    let mut ids = Vec::new();
    for w in &seen {
        let enc = m.tokenizer.encode_words(w, lang)?;
        let content: Vec<i64> = enc
            .tokenized
            .ids
            .iter()
            .zip(&enc.tokenized.word_of)
            .filter(|(_, o)| o.is_some())
            .map(|(&i, _)| i)
            .collect();
        if content.len() == 1 {
            single.push(w.clone());
            ids.push(content[0]);
        }
    }
    let embeddings = if ids.is_empty() {
        Tensor::zeros([0, m.config.hidden as i64], (tch::Kind::Float, tch::Device::Cpu))
    } else {
        embedding_rows(&m.model, lang, &ids)?
    };
    Ok(Side { words: seen, contextual, single, embeddings })
}

/// Train pairs of `dict` as row pairs (each source word with its first translation found in the vocabulary).
fn train_rows(dict: &IndexedDict) -> Vec<(i64, i64)> {
    dict.sources.iter().zip(&dict.golds).filter_map(|(&s, g)| g.first().map(|&t| (s, t))).collect()
}

/// The probe's fixed inputs: dictionary splits, normalization and retrieval method.
struct Probe {
    train: Vec<(String, String)>,
    test: Vec<(String, String)>,
    norm: Normalization,
    method: Method,
}

/// One probe's outcome.
struct ProbeResult {
    p_at_1: f64,
    coverage: f64,
    n_train_pairs: usize,
    n_test_words: usize,
    /// Per evaluated test source word: 1.0 when a gold translation is retrieved first, else 0.0.
    hits: Vec<f64>,
    /// Target words retrieved among.
    candidates: usize,
}

impl Probe {
    /// P@1 (%) and coverage after Procrustes on the train pairs, scored on the test pairs; `None` when a split has
    /// no covered pair.
    ///
    /// # Shapes
    /// `x`: `[src_words.len(), d]`, `y`: `[tgt_words.len(), d]`.
    fn run(&self, x: &Tensor, y: &Tensor, src_words: &[String], tgt_words: &[String]) -> Result<Option<ProbeResult>> {
        let train_d = index_dictionary(&self.train, src_words, tgt_words);
        let test_d = index_dictionary(&self.test, src_words, tgt_words);
        let pairs = train_rows(&train_d);
        if pairs.len() < 2 || test_d.sources.is_empty() {
            return Ok(None);
        }
        let (xn, _) = normalize(x, &self.norm)?;
        let (yn, _) = normalize(y, &self.norm)?;
        let (xp, yp) = paired_rows(&xn, &yn, &pairs)?;
        let w = procrustes(&xp, &yp)?;
        let mapped = apply_map(&xn, &w)?;
        let scorer = Scorer::new(&mapped, &yn, self.method, Options::default())?;
        let e = word_translation(&scorer, &test_d)?;
        Ok(Some(ProbeResult {
            p_at_1: 100.0 * e.precision[0],
            coverage: e.coverage,
            n_train_pairs: pairs.len(),
            n_test_words: e.n_evaluated,
            hits: e.hits.iter().map(|h| if h[0] { 1.0 } else { 0.0 }).collect(),
            candidates: tgt_words.len(),
        }))
    }
}

fn pair_list(v: &[DictPair]) -> Vec<(String, String)> {
    v.iter().map(|p| (p.src.clone(), p.tgt.clone())).collect()
}

fn result_map(r: Option<ProbeResult>) -> Dynamic {
    match r {
        None => Dynamic::UNIT,
        Some(r) => {
            let mut m = Map::new();
            m.insert("p_at_1".into(), Dynamic::from_float(r.p_at_1));
            m.insert("coverage".into(), Dynamic::from_float(r.coverage));
            m.insert("n_train_pairs".into(), Dynamic::from_int(r.n_train_pairs as i64));
            m.insert("n_test_words".into(), Dynamic::from_int(r.n_test_words as i64));
            m.insert("hits".into(), Dynamic::from_array(r.hits.into_iter().map(Dynamic::from_float).collect()));
            m.insert("candidates".into(), Dynamic::from_int(r.candidates as i64));
            Dynamic::from_map(m)
        }
    }
}

/// The `words` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("align", move |ctx: NativeCallContext, src_model: ModelRef, tgt_model: ModelRef, spec: Map| {
        native(&ctx, || -> Res<Map> {
            let spec: WordAlignSpec = rhai::serde::from_dynamic(&Dynamic::from_map(spec))
                .map_err(|e| rhai_err(format!("words::align spec: {e}")))?;
            let norm: Normalization = spec.norm.parse()?;
            let method = Method::parse(&spec.method, 10, 30.0)?;
            let (catalog, roots) = &*s.data;
            let (split, files) = crate::text::evalsets::muse_split(catalog, roots, &spec.dictionary)?;
            s.note_data(&files);
            let probe = Probe { train: pair_list(&split.train), test: pair_list(&split.test), norm, method };
            let src_wanted: HashSet<&str> = probe.train.iter().chain(&probe.test).map(|p| p.0.as_str()).collect();
            let tgt_wanted: HashSet<&str> = probe.train.iter().chain(&probe.test).map(|p| p.1.as_str()).collect();
            let sm = super::ns_features::open(&s, &src_model)?;
            let a = side(&sm, &spec.src, &spec.corpus_src, &src_wanted)?;
            drop(sm);
            let tm = super::ns_features::open(&s, &tgt_model)?;
            let b = side(&tm, &spec.tgt, &spec.corpus_tgt, &tgt_wanted)?;
            let layers = a.contextual.size()[0].min(b.contextual.size()[0]);
            let mut contextual = Vec::new();
            for l in 0..layers {
                let r = probe.run(&a.contextual.get(l), &b.contextual.get(l), &a.words, &b.words)?;
                contextual.push(result_map(r));
            }
            let nonctx = probe.run(&a.embeddings, &b.embeddings, &a.single, &b.single)?;
            s.env.log.push(format!(
                "words::align {}→{}: vocabularies {} / {} words ({} / {} single-subword)",
                spec.src,
                spec.tgt,
                a.words.len(),
                b.words.len(),
                a.single.len(),
                b.single.len()
            ));
            let mut out = Map::new();
            out.insert("contextual".into(), Dynamic::from_array(contextual));
            out.insert("noncontextual".into(), result_map(nonctx));
            out.insert("vocabulary_src".into(), Dynamic::from_int(a.words.len() as i64));
            out.insert("vocabulary_tgt".into(), Dynamic::from_int(b.words.len() as i64));
            out.insert("single_subword_src".into(), Dynamic::from_int(a.single.len() as i64));
            out.insert("single_subword_tgt".into(), Dynamic::from_int(b.single.len() as i64));
            let list = |v: &[String]| Dynamic::from_array(v.iter().cloned().map(Dynamic::from).collect());
            out.insert("words_src".into(), list(&a.words));
            out.insert("words_tgt".into(), list(&b.words));
            out.insert("single_src".into(), list(&a.single));
            out.insert("single_tgt".into(), list(&b.single));
            Ok(out)
        })
    });
    let s = session.clone();
    m.set_native_fn(
        "align_static",
        move |ctx: NativeCallContext, src: StaticVectors, tgt: StaticVectors, spec: Map| {
            native(&ctx, || -> Res<Dynamic> {
                let spec: StaticAlignSpec = rhai::serde::from_dynamic(&Dynamic::from_map(spec))
                    .map_err(|e| rhai_err(format!("words::align_static spec: {e}")))?;
                let (catalog, roots) = &*s.data;
                let (split, files) = crate::text::evalsets::muse_split(catalog, roots, &spec.dictionary)?;
                s.note_data(&files);
                let probe = Probe {
                    train: pair_list(&split.train),
                    test: pair_list(&split.test),
                    norm: spec.norm.parse()?,
                    method: Method::parse(&spec.method, 10, 30.0)?,
                };
                let (src_only, tgt_only) = (word_set(&spec.src_words), word_set(&spec.tgt_words));
                let keep = |set: &Option<HashSet<&str>>, w: &str| set.as_ref().is_none_or(|s| s.contains(w));
                let (a_words, a) = static_rows(
                    &src,
                    probe.train.iter().chain(&probe.test).map(|p| p.0.as_str()).filter(|w| keep(&src_only, w)),
                );
                let (b_words, b) = static_rows(
                    &tgt,
                    probe.train.iter().chain(&probe.test).map(|p| p.1.as_str()).filter(|w| keep(&tgt_only, w)),
                );
                s.env.log.push(format!(
                    "words::align_static {} → {}: {} / {} dictionary words have vectors",
                    src.name,
                    tgt.name,
                    a_words.len(),
                    b_words.len()
                ));
                Ok(result_map(probe.run(&a, &b, &a_words, &b_words)?))
            })
        },
    );
    let s = session.clone();
    m.set_native_fn("corpus", move |ctx: NativeCallContext, model: ModelRef, lang: &str, n: i64| {
        native(&ctx, || -> Res<rhai::Array> {
            let lines = model_corpus(&model, lang, n.max(0) as usize)?;
            s.env.log.push(format!("words::corpus {} {lang}: {} sentences", model.name, lines.len()));
            Ok(lines.into_iter().map(Dynamic::from).collect())
        })
    });
    m
}

/// The first `n` training sentences of `lang` of a model crossling trained (`corpora/LANG.train.txt` of its run).
pub(super) fn model_corpus(m: &ModelRef, lang: &str, n: usize) -> Result<Vec<String>> {
    let path = m.dir().join("corpora").join(format!("{lang}.train.txt"));
    if !path.is_file() {
        return Err(Error::Invalid(format!(
            "model {} has no training corpus for '{lang}' ({} is missing): words::corpus needs a model crossling trained",
            m.name,
            path.display()
        )));
    }
    let mut reader = crate::data::text_file::LineReader::open(&path)?;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        match reader.next_line()? {
            Some(l) if !l.trim().is_empty() => out.push(l.to_string()),
            Some(_) => {}
            None => break,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_recovers_a_rotated_vocabulary() {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(11);
        let x = Tensor::randn([60, 8], (tch::Kind::Float, tch::Device::Cpu));
        let q = Tensor::linalg_qr(&Tensor::randn([8, 8], (tch::Kind::Double, tch::Device::Cpu)), "reduced").0;
        let y = x.matmul(&q.to_kind(tch::Kind::Float).tr());
        let words: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
        let pairs = |r: std::ops::Range<usize>| r.map(|i| (words[i].clone(), words[i].clone())).collect::<Vec<_>>();
        let probe = |train| Probe { train, test: pairs(40..60), norm: Normalization::default(), method: Method::Nn };
        let r = probe(pairs(0..40)).run(&x, &y, &words, &words).unwrap().unwrap();
        assert_eq!(r.p_at_1, 100.0);
        assert_eq!((r.n_train_pairs, r.n_test_words), (40, 20));
        assert_eq!((r.hits, r.candidates), (vec![1.0; 20], 60));
        // Unrelated spaces: a map fit on the train pairs does not carry over, most test words miss; one hit per item.
        let noise = Tensor::randn([60, 8], (tch::Kind::Float, tch::Device::Cpu));
        let r = probe(pairs(0..40)).run(&x, &noise, &words, &words).unwrap().unwrap();
        assert_eq!(r.hits.len(), 20);
        assert!((r.hits.iter().sum::<f64>() * 5.0 - r.p_at_1).abs() < 1e-9 && r.p_at_1 < 50.0, "{}", r.p_at_1);
        assert!(probe(Vec::new()).run(&x, &y, &words, &words).unwrap().is_none());
    }
}
