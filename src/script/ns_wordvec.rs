//! `wordvec::` — static word embeddings trained on a model's own training corpora (Liu et al. 2020, §3: GloVe and
//! word2vec against BERT on the same data; Wu, Conneau et al. 2020, Figure 4a: fastText), and Liu's word
//! retrieval by mean reciprocal rank over any mix of static vectors and models.
//!
//! ```rhai
//! let m = train::model(#{ preset: "multilingual", langs: "en-fr-de-ru-zh" });
//! let w2v = wordvec::train(m, #{ kind: "word2vec", config: #{ dim: 128, epochs: 5 } });   // subword unit
//! let ft = wordvec::train(en, #{ kind: "fasttext", unit: "word", min_count: 3 });
//! let r = wordvec::mrr([w2v, m], #{ src: "en", tgt: "fr", corpus_src: en_text, corpus_tgt: fr_text });
//! // r[i] = #{ name, kind: "static" | "model", mrr: [per layer; one value for static], p_at_1: [...], pairs, candidates,
//! //         rr: [per layer: [1/rank of every pair]], chance }
//! ```
//! `wordvec::train` options: `kind` (word2vec | fasttext | glove), `unit` (subword: the model's tokens, default;
//! word: whitespace words), `langs` (default: all of the model's), `max_sentences` (per language), `min_count`
//! (default 5 for words, 1 for subwords), `config` (the kind's settings; unknown keys are errors), `name`.
//!
//! Retrieval (see [`crate::analysis::word_retrieval`]): the pairs are those of the 6,500 most frequent source words
//! of the MUSE dictionary `dictionary` (default `src-tgt`; no split, as nothing is fitted), the candidates every
//! target word of those pairs; a score is `()` when no pair is covered; a word counts when
//! every representation has a vector for it — for a model, the word occurs in the given corpus (its vector is the
//! mean of its contextual vectors there, per layer); for static vectors, the word occurs in the corpus as a
//! whitespace token and has a vector (subword unit: the mean of its subword tokens' vectors). So every
//! representation is scored on the same pairs and candidates, in the same order: `rr[l][i]` of every representation
//! is pair `i`'s reciprocal rank at layer `l` (the per-item values whose mean is `mrr[l]`, for
//! `results::score(KEY, #{ items: rr[l] })`; `()` where no pair is covered). `chance` is the MRR of a random
//! ranking of the candidates, `H_n / n` ([`random_mrr`]), as a fraction like `mrr`.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rhai::{Dynamic, Engine, Map, Module, NativeCallContext};
use serde::Deserialize;
use tch::{Kind, Tensor};

use super::handles::{ModelRef, ModelSource};
use super::ns_common::{floats, from_script, native, Res, Session};
use crate::analysis::word_retrieval::{mrr, random_mrr, Retrieval};
use crate::error::{Error, Result};
use crate::text::tokenize::CrossTokenizer;
use crate::wordvec::train::StaticKind;
use crate::wordvec::training_text::{subword_mean, Unit};
use crate::wordvec::vector_cache::{ensure_static, StaticRequest};
use crate::wordvec::WordVectors;

/// Static vectors as scripts see them.
#[derive(Clone)]
pub struct StaticVectors {
    pub name: String,
    /// The cache key of the vectors ([`crate::wordvec::vector_cache::cache_key`]): what trained them, on what.
    pub key: String,
    pub vectors: Arc<WordVectors>,
    /// The source run's tokenizer when the vectors are of its subword tokens (a word is then the mean of its
    /// subwords' vectors); `None` for word vectors.
    pub tokenizer: Option<Arc<CrossTokenizer>>,
}

impl StaticVectors {
    /// The vector of `word` in `lang`, if it has one.
    fn vector(&self, word: &str, lang: &str) -> Result<Option<Vec<f32>>> {
        match &self.tokenizer {
            Some(tok) => subword_mean(&self.vectors, tok, word, lang),
            None => Ok(self.vectors.get(word).map(<[f32]>::to_vec)),
        }
    }
}

/// What `wordvec::train` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainSpec {
    kind: StaticKind,
    #[serde(default)]
    unit: Option<Unit>,
    #[serde(default)]
    langs: Vec<String>,
    #[serde(default)]
    max_sentences: Option<usize>,
    #[serde(default)]
    min_count: Option<u64>,
    #[serde(default)]
    config: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    name: Option<String>,
}

/// What `wordvec::mrr` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MrrSpec {
    src: String,
    tgt: String,
    #[serde(default)]
    dictionary: Option<String>,
    corpus_src: Vec<String>,
    corpus_tgt: Vec<String>,
}

fn train(s: &Session, model: &ModelRef, spec: TrainSpec) -> Result<StaticVectors> {
    let ModelSource::Cached(cached) = &model.source else {
        return Err(Error::Invalid(format!(
            "wordvec::train: model {} was not trained by crossling here, so its training corpora are unknown",
            model.name
        )));
    };
    let unit = spec.unit.unwrap_or(Unit::Subword);
    let req = StaticRequest {
        kind: spec.kind,
        unit,
        langs: spec.langs,
        max_sentences: spec.max_sentences,
        min_count: spec.min_count.unwrap_or(if unit == Unit::Word { 5 } else { 1 }),
        config: spec.config,
    };
    let kind = serde_json::to_value(req.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let name = spec.name.unwrap_or_else(|| format!("{kind}-{}", model.name));
    let label = format!("{name}-{}", s.env.scale);
    s.env.log.push(format!("wordvec {name}: preparing on the corpora of {}", model.name));
    let c = ensure_static(&label, &cached.dir, &cached.key, &req, &s.env.models_dir, s.env.fresh, false)?;
    s.env.log.push(format!("wordvec {name}: {} words × {} in {}", c.vectors.len(), c.vectors.dim(), c.dir.display()));
    let info = serde_json::json!({ "key": c.key, "dir": c.dir.display().to_string(), "source": model.name,
                                   "request": req, "report": c.report });
    s.with_record(|r| r.provenance.models.insert(name.clone(), info));
    let tokenizer = match unit {
        Unit::Subword => Some(Arc::new(CrossTokenizer::load(&cached.dir.join("tokenizer"))?)),
        Unit::Word => None,
    };
    Ok(StaticVectors { name, key: c.key, vectors: Arc::new(c.vectors), tokenizer })
}

/// A representation's vectors of the wanted words it covers: words and `[layers, words, d]`.
struct Covered {
    words: Vec<String>,
    stack: Tensor,
}

fn whitespace_words<'a>(corpus: &'a [String], wanted: &HashSet<&str>) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    corpus.iter().flat_map(|l| l.split_whitespace()).filter(|w| wanted.contains(w) && seen.insert(*w)).collect()
}

fn static_side(v: &StaticVectors, lang: &str, corpus: &[String], wanted: &HashSet<&str>) -> Result<Covered> {
    let (mut words, mut data) = (Vec::new(), Vec::new());
    for w in whitespace_words(corpus, wanted) {
        if let Some(vec) = v.vector(w, lang)? {
            words.push(w.to_string());
            data.extend(vec);
        }
    }
    let stack = Tensor::from_slice(&data).view([1, words.len() as i64, v.vectors.dim() as i64]);
    Ok(Covered { words, stack })
}

/// The words every representation covers, in the first one's order.
fn common(covered: Vec<&Covered>) -> Vec<String> {
    let sets: Vec<HashSet<&str>> = covered.iter().map(|c| c.words.iter().map(String::as_str).collect()).collect();
    covered[0].words.iter().filter(|w| sets.iter().all(|s| s.contains(w.as_str()))).cloned().collect()
}

/// Liu's word retrieval of every representation in `reps` on the same pairs and candidates.
fn retrieval(s: &Session, reps: &[Dynamic], spec: &MrrSpec) -> Result<Vec<Map>> {
    let dictionary = spec.dictionary.clone().unwrap_or_else(|| format!("{}-{}", spec.src, spec.tgt));
    let (catalog, roots) = &*s.data;
    let (split, files) = crate::text::evalsets::muse_split(catalog, roots, &dictionary)?;
    s.note_data(&files);
    let dict: Vec<_> = split.train.iter().chain(&split.test).collect();
    let src_wanted: HashSet<&str> = dict.iter().map(|p| p.src.as_str()).collect();
    let tgt_wanted: HashSet<&str> = dict.iter().map(|p| p.tgt.as_str()).collect();
    let mut sides: Vec<(String, &str, Covered, Covered)> = Vec::new();
    for rep in reps {
        if let Some(v) = rep.clone().try_cast::<StaticVectors>() {
            let a = static_side(&v, &spec.src, &spec.corpus_src, &src_wanted)?;
            let b = static_side(&v, &spec.tgt, &spec.corpus_tgt, &tgt_wanted)?;
            sides.push((v.name.clone(), "static", a, b));
        } else if let Some(m) = rep.clone().try_cast::<ModelRef>() {
            let loaded = super::ns_features::open(s, &m)?;
            let a = crate::analysis::word_probe::side(&loaded, &spec.src, &spec.corpus_src, &src_wanted)?;
            let b = crate::analysis::word_probe::side(&loaded, &spec.tgt, &spec.corpus_tgt, &tgt_wanted)?;
            let cov = |x: crate::analysis::word_probe::Side| Covered { words: x.words, stack: x.contextual };
            sides.push((m.name.clone(), "model", cov(a), cov(b)));
        } else {
            return Err(Error::Invalid(format!(
                "wordvec::mrr: {} is neither a model nor static vectors",
                rep.type_name()
            )));
        }
    }
    if sides.is_empty() {
        return Err(Error::Invalid("wordvec::mrr: no representation given".into()));
    }
    let src_words = common(sides.iter().map(|x| &x.2).collect());
    let tgt_words = common(sides.iter().map(|x| &x.3).collect());
    let src_index: HashMap<&str, i64> = src_words.iter().enumerate().map(|(i, w)| (w.as_str(), i as i64)).collect();
    let tgt_index: HashMap<&str, i64> = tgt_words.iter().enumerate().map(|(i, w)| (w.as_str(), i as i64)).collect();
    let pairs: Vec<(i64, i64)> =
        dict.iter().filter_map(|p| Some((*src_index.get(p.src.as_str())?, *tgt_index.get(p.tgt.as_str())?))).collect();
    s.env.log.push(format!(
        "wordvec::mrr {dictionary}: {} pairs, {} source words, {} candidates covered by all {} representations",
        pairs.len(),
        src_words.len(),
        tgt_words.len(),
        sides.len()
    ));
    let rows = |c: &Covered, words: &[String]| -> Tensor {
        let at: HashMap<&str, i64> = c.words.iter().enumerate().map(|(i, w)| (w.as_str(), i as i64)).collect();
        let idx: Vec<i64> = words.iter().map(|w| at[w.as_str()]).collect();
        c.stack.index_select(1, &Tensor::from_slice(&idx)).to_kind(Kind::Float)
    };
    let mut out = Vec::new();
    for (name, kind, a, b) in &sides {
        let (x, y) = (rows(a, &src_words), rows(b, &tgt_words));
        let layers = x.size()[0].min(y.size()[0]);
        // No covered pair (tiny samples): every layer's score is () rather than an error.
        let scores: Vec<Option<Retrieval>> = (0..layers)
            .map(|l| if pairs.is_empty() { Ok(None) } else { mrr(&x.get(l), &y.get(l), &pairs).map(Some) })
            .collect::<Result<_>>()?;
        out.push(result_map(name, kind, &scores, pairs.len(), tgt_words.len()));
    }
    Ok(out)
}

/// One representation's entry of `wordvec::mrr`'s answer (see the module docs): `scores[l]` is layer `l`'s retrieval,
/// `None` where no pair is covered.
fn result_map(name: &str, kind: &str, scores: &[Option<Retrieval>], pairs: usize, candidates: usize) -> Map {
    let per_layer = |f: &dyn Fn(&Retrieval) -> Dynamic| -> Dynamic {
        Dynamic::from_array(scores.iter().map(|r| r.as_ref().map_or(Dynamic::UNIT, f)).collect())
    };
    let mut m = Map::new();
    m.insert("name".into(), name.into());
    m.insert("kind".into(), kind.into());
    m.insert("mrr".into(), per_layer(&|r| Dynamic::from_float(r.mrr)));
    m.insert("p_at_1".into(), per_layer(&|r| Dynamic::from_float(r.p_at_1)));
    m.insert("rr".into(), per_layer(&|r| Dynamic::from_array(floats(r.reciprocal_ranks()))));
    m.insert("pairs".into(), Dynamic::from_int(pairs as i64));
    m.insert("candidates".into(), Dynamic::from_int(candidates as i64));
    m.insert("chance".into(), Dynamic::from_float(random_mrr(candidates)));
    m
}

/// The `wordvec` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("train", move |ctx: NativeCallContext, model: ModelRef, spec: Map| {
        native(&ctx, || -> Res<StaticVectors> {
            let spec: TrainSpec = from_script(&Dynamic::from_map(spec), "wordvec::train options")?;
            Ok(train(&s, &model, spec)?)
        })
    });
    let s = session.clone();
    m.set_native_fn("mrr", move |ctx: NativeCallContext, reps: rhai::Array, spec: Map| {
        native(&ctx, || -> Res<rhai::Array> {
            let spec: MrrSpec = from_script(&Dynamic::from_map(spec), "wordvec::mrr options")?;
            Ok(retrieval(&s, &reps, &spec)?.into_iter().map(Dynamic::from_map).collect())
        })
    });
    m
}

/// Registers the `StaticVectors` handle type.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<StaticVectors>("StaticVectors");
    engine.register_get("name", |v: &mut StaticVectors| v.name.clone());
    engine.register_get("words", |v: &mut StaticVectors| v.vectors.len() as i64);
    engine.register_get("dim", |v: &mut StaticVectors| v.vectors.dim() as i64);
    engine.register_fn("to_string", |v: &mut StaticVectors| {
        format!("StaticVectors({}: {} × {})", v.name, v.vectors.len(), v.vectors.dim())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_maps_carry_per_pair_reciprocal_ranks_whose_mean_is_the_mrr() {
        let r = Retrieval { mrr: 0.6875, p_at_1: 0.5, pairs: 4, candidates: 5, ranks: vec![1, 4, 2, 1] };
        let m = result_map("bert", "model", &[Some(r), None], 4, 5);
        let layers = m["rr"].clone().into_array().unwrap();
        let rr: Vec<f64> = layers[0].clone().into_array().unwrap().iter().map(|x| x.as_float().unwrap()).collect();
        assert_eq!(rr, [1.0, 0.25, 0.5, 1.0]);
        assert!(
            (rr.iter().sum::<f64>() / 4.0 - m["mrr"].clone().into_array().unwrap()[0].as_float().unwrap()).abs()
                < 1e-12
        );
        assert!(layers[1].is_unit(), "a layer without covered pairs has no items");
        assert!((m["chance"].as_float().unwrap() - random_mrr(5)).abs() < 1e-15);
        assert_eq!(m["candidates"].as_int().unwrap(), 5);
    }
}
