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
//! `dictionary` names a MUSE pair, or an identity dictionary over one MUSE file's source words: `en-enx` (each word
//! and its rewrite) or a language with itself, `en-en`, for two models of one language word by word
//! ([`crate::text::evalsets::muse_split`]).
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

use super::handles::ModelRef;
use super::ns_common::{from_script, native, Res, Session};
use super::ns_wordvec::StaticVectors;
use crate::analysis::normalize::Normalization;
use crate::analysis::scores::Method;
use crate::analysis::word_probe::{side, static_rows, Probe, ProbeResult};

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

/// A probe's outcome as the script sees it: `#{ p_at_1, coverage, n_train_pairs, n_test_words, hits, candidates }`,
/// or `()` when a split has no covered pair.
fn result_map(r: Option<ProbeResult>) -> Res<Dynamic> {
    r.map_or(Ok(Dynamic::UNIT), rhai::serde::to_dynamic)
}

/// The `words` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("align", move |ctx: NativeCallContext, src_model: ModelRef, tgt_model: ModelRef, spec: Map| {
        native(&ctx, || -> Res<Map> {
            let spec: WordAlignSpec = from_script(&Dynamic::from_map(spec), "words::align spec")?;
            let norm: Normalization = spec.norm.parse()?;
            let method = Method::parse(&spec.method, 10, 30.0)?;
            let (catalog, roots) = &*s.data;
            let (split, files) = crate::text::evalsets::muse_split(catalog, roots, &spec.dictionary)?;
            s.note_data(&files);
            let probe = Probe::of_split(&split, norm, method);
            let (src_wanted, tgt_wanted) = probe.dictionary_words();
            let sm = super::ns_features::open(&s, &src_model)?;
            let a = side(&sm, &spec.src, &spec.corpus_src, &src_wanted)?;
            drop(sm);
            let tm = super::ns_features::open(&s, &tgt_model)?;
            let b = side(&tm, &spec.tgt, &spec.corpus_tgt, &tgt_wanted)?;
            let layers = a.contextual.size()[0].min(b.contextual.size()[0]);
            let mut contextual = Vec::new();
            for l in 0..layers {
                let r = probe.run(&a.contextual.get(l), &b.contextual.get(l), &a.words, &b.words)?;
                contextual.push(result_map(r)?);
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
            out.insert("noncontextual".into(), result_map(nonctx)?);
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
                let spec: StaticAlignSpec = from_script(&Dynamic::from_map(spec), "words::align_static spec")?;
                let (catalog, roots) = &*s.data;
                let (split, files) = crate::text::evalsets::muse_split(catalog, roots, &spec.dictionary)?;
                s.note_data(&files);
                let probe = Probe::of_split(&split, spec.norm.parse()?, Method::parse(&spec.method, 10, 30.0)?);
                let (src_only, tgt_only) = (word_set(&spec.src_words), word_set(&spec.tgt_words));
                let keep = |set: &Option<HashSet<&str>>, w: &str| set.as_ref().is_none_or(|s| s.contains(w));
                let (a_words, a) = static_rows(
                    &src.vectors,
                    probe.train.iter().chain(&probe.test).map(|p| p.0.as_str()).filter(|w| keep(&src_only, w)),
                );
                let (b_words, b) = static_rows(
                    &tgt.vectors,
                    probe.train.iter().chain(&probe.test).map(|p| p.1.as_str()).filter(|w| keep(&tgt_only, w)),
                );
                s.env.log.push(format!(
                    "words::align_static {} → {}: {} / {} dictionary words have vectors",
                    src.name,
                    tgt.name,
                    a_words.len(),
                    b_words.len()
                ));
                result_map(probe.run(&a, &b, &a_words, &b_words)?)
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

/// The first `n` training sentences of `lang` of a model crossling trained (see [`crate::train::model_cache::training_sentences`]).
pub(super) fn model_corpus(m: &ModelRef, lang: &str, n: usize) -> crate::error::Result<Vec<String>> {
    crate::train::model_cache::training_sentences(&m.dir(), &m.name, lang, n)
}
