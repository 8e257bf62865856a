//! The word-level alignment probe of Emerging §5.1 (Figure 4): for two models (or two sets of static vectors) and a
//! MUSE dictionary split, an orthogonal Procrustes map fit on the train pairs after normalization, and P@1 of the
//! test pairs by NN or CSLS retrieval (k = 10), MUSE convention: any gold translation counts, over the covered
//! unique source words.
//!
//! For each model side ([`side`]), the vocabulary is the dictionary words (train and test) that occur in its corpus.
//! The contextual vector of a word at layer l is the mean over its occurrences of the mean of its subwords' layer-l
//! vectors ([`crate::features::words::corpus_averaged`]); the non-contextual vector is its input-embedding row, for
//! words that are a single subword. Both sides are normalized (e.g. centring then iterative normalization, Zhang et
//! al. 2019); each source word is paired with its first translation in the vocabulary for the map.
//! [`static_rows`] gives static vectors' rows for the same probe (the fastText baseline of Figure 4a).
use std::collections::HashSet;

use serde::Serialize;
use tch::Tensor;

use crate::analysis::metrics::{index_dictionary, word_translation, IndexedDict};
use crate::analysis::normalize::{apply as normalize, Normalization};
use crate::analysis::procrustes::{apply_map, paired_rows, procrustes};
use crate::analysis::scores::{Method, Options, Scorer};
use crate::data::formats::muse::{DictPair, Split};
use crate::error::{Error, Result};
use crate::features::words::{corpus_averaged, embedding_rows};
use crate::features::{Extraction, Pooling, Tokenized};
use crate::model::load::LoadedModel;
use crate::wordvec::WordVectors;

/// The distinct `words` that have a vector in `v` (as a word: the vectors' own rows), and their rows.
/// # Shapes
/// → `[found, d]` f32
pub fn static_rows<'a>(v: &WordVectors, words: impl Iterator<Item = &'a str>) -> (Vec<String>, Tensor) {
    let (mut found, mut rows) = (Vec::new(), Vec::new());
    let mut seen = HashSet::new();
    for w in words {
        if let (true, Some(row)) = (seen.insert(w), v.get(w)) {
            found.push(w.to_string());
            rows.extend_from_slice(row);
        }
    }
    let t = Tensor::from_slice(&rows).view([found.len() as i64, v.dim() as i64]);
    (found, t)
}

/// One side: its vocabulary, contextual vectors `[layers + 1, words, d]`, and the single-subword words with their
/// embedding rows.
pub struct Side {
    pub words: Vec<String>,
    pub contextual: Tensor,
    pub single: Vec<String>,
    pub embeddings: Tensor,
}

/// One side of the probe: the dictionary words `wanted` found in `corpus` (as the model's tokenizer splits words),
/// their corpus-averaged contextual vectors and the single-subword words' embedding rows.
pub fn side(m: &LoadedModel, lang: &str, corpus: &[String], wanted: &HashSet<&str>) -> Result<Side> {
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
pub struct Probe {
    pub train: Vec<(String, String)>,
    pub test: Vec<(String, String)>,
    pub norm: Normalization,
    pub method: Method,
}

/// One probe's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeResult {
    /// P@1 in percent.
    pub p_at_1: f64,
    pub coverage: f64,
    pub n_train_pairs: usize,
    pub n_test_words: usize,
    /// Per evaluated test source word: 1.0 when a gold translation is retrieved first, else 0.0.
    pub hits: Vec<f64>,
    /// Target words retrieved among.
    pub candidates: usize,
}

impl Probe {
    /// The probe of a MUSE split (train pairs fit the map, test pairs are scored).
    pub fn of_split(split: &Split, norm: Normalization, method: Method) -> Self {
        Probe { train: pair_list(&split.train), test: pair_list(&split.test), norm, method }
    }

    /// The source and target words of the dictionary (train and test), each once.
    pub fn dictionary_words(&self) -> (HashSet<&str>, HashSet<&str>) {
        let all = || self.train.iter().chain(&self.test);
        (all().map(|p| p.0.as_str()).collect(), all().map(|p| p.1.as_str()).collect())
    }

    /// P@1 (%) and coverage after Procrustes on the train pairs, scored on the test pairs; `None` when a split has
    /// no covered pair.
    ///
    /// # Shapes
    /// `x`: `[src_words.len(), d]`, `y`: `[tgt_words.len(), d]`.
    pub fn run(
        &self,
        x: &Tensor,
        y: &Tensor,
        src_words: &[String],
        tgt_words: &[String],
    ) -> Result<Option<ProbeResult>> {
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
