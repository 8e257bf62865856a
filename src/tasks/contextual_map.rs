//! Per-layer linear maps between the contextual spaces of two encoders, fit on word-aligned parallel sentences —
//! the "dictionary of parallel contextual words, obtained by running fastAlign on the 10k XNLI parallel sentences"
//! of Wu, Conneau et al. 2020, §5.1.2, which Figure 5 maps layer `i` of each language's model through.
//!
//! 1. **Words.** Each sentence is segmented ([`crate::text::segment::words`]: jieba for Chinese) and encoded by each
//!    model's own tokenizer; a word's vector at layer `i` is the state of its first subword — the positions the NER
//!    tagger and the parser read ([`crate::tasks::word_inputs`]). Words cut by `max_len` have no vector.
//! 2. **Alignment.** fast_align both ways and grow-diag-final-and ([`crate::tasks::word_align::align_both_ways`]), English
//!    as the source side. Only one-to-one links between words that have vectors are kept: a word linked to several
//!    words has no single counterpart to map onto.
//! 3. **Maps.** For each layer `i` (0 = embeddings), with `x` the other language's vector and `y` the English one
//!    of a linked pair, orthogonal Procrustes accumulated over batches:
//!    ```text
//!    M_i = Σ y xᵀ,   W_i = U Vᵀ  with  U Σ Vᵀ = SVD(M_i)            (x ↦ W_i x, the English space)
//!    ```
//!    and, from `N_i = Σ ŷ x̂ᵀ` over unit vectors, the mean pair cosine before (`tr N_i / p`) and after
//!    (`⟨W_i, N_i⟩_F / p`) the map. Vectors are used as the encoders give them (no centring or normalisation).
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::analysis::procrustes::procrustes_from_cross;
use crate::error::{Error, Result};
use crate::model::load::LoadedModel;
use crate::tasks::word_align::{align_both_ways, AlignConfig, Link};
use crate::tasks::word_inputs::{gather_words, glued_in_text, word_batch, WordEncoder, WordItem};

/// English, the side every map goes into.
const EN: &str = "en";

/// Settings of [`contextual_maps`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MapConfig {
    /// The aligner's settings.
    pub align: AlignConfig,
    /// Longest input in subwords, specials included (also capped by each model's positions).
    pub max_len: usize,
    /// Sentences per forward pass.
    pub batch_sentences: usize,
}

impl Default for MapConfig {
    fn default() -> Self {
        MapConfig { align: AlignConfig::default(), max_len: 128, batch_sentences: 64 }
    }
}

/// The map of one layer and how well it lines the pairs up.
#[derive(Debug)]
pub struct LayerMap {
    /// `W_i` `[d, d]` f32: rows are vectors, `h ↦ h W_iᵀ`.
    pub w: Tensor,
    /// Mean cosine of the pairs before / after the map.
    pub cos_before: f64,
    pub cos_after: f64,
}

/// The maps of every layer, from `lang` into English, with their provenance.
#[derive(Debug)]
pub struct ContextualMaps {
    pub lang: String,
    /// Index 0 = embeddings … L.
    pub layers: Vec<LayerMap>,
    pub sentences: usize,
    /// Links of the symmetrised alignment, and the one-to-one links with vectors on both sides used for the maps.
    pub links: usize,
    pub pairs: usize,
}

impl ContextualMaps {
    /// The provenance of layer `i`'s map, as stored beside results.
    pub fn info(&self, i: usize) -> serde_json::Value {
        let l = &self.layers[i];
        serde_json::json!({
            "method": "orthogonal Procrustes on fast_align (grow-diag-final-and, one-to-one) contextual word pairs",
            "layer": i, "sentences": self.sentences, "links": self.links, "pairs": self.pairs,
            "mean_cosine_before": l.cos_before, "mean_cosine_after": l.cos_after,
        })
    }
}

/// The one-to-one links of a symmetrised alignment whose words both have vectors (index `< kept`).
pub fn one_to_one(links: &[Link], src_kept: usize, tgt_kept: usize) -> Vec<Link> {
    let count = |pick: fn(&Link) -> usize, i: usize| links.iter().filter(|l| pick(l) == i).count();
    links
        .iter()
        .copied()
        .filter(|&(s, t)| s < src_kept && t < tgt_kept && count(|l| l.0, s) == 1 && count(|l| l.1, t) == 1)
        .collect()
}

/// Every layer's first-subword states of a batch of items (no dropout, no gradients), and the batch's padded word
/// count `w` (rows of the flattened `[batch · w, d]` states are `b · w + j`).
/// # Shapes
/// → (`L + 1` × `[batch, w, d]` f64, w)
fn word_states(m: &LoadedModel, items: &[&WordItem], lang: &str, device: Device) -> Result<(Vec<Tensor>, i64)> {
    let pad = m.tokenizer.specials().pad as i64;
    let batch = word_batch(items, pad, device);
    let out = tch::no_grad(|| m.model.encoder.forward(&batch.ids, Some(&batch.mask), lang, false))?;
    let states = out.hidden_states.iter().map(|h| gather_words(h, &batch.first).to_kind(Kind::Double)).collect();
    Ok((states, batch.words as i64))
}

/// Rows `flat[b · w + j]` for the listed (b, j).
/// # Shapes
/// `states` [batch, w, d] → [pairs, d]
fn rows(states: &Tensor, at: &[i64]) -> Tensor {
    let (b, w, d) = states.size3().expect("[batch, words, d]");
    let index = Tensor::from_slice(at).to_device(states.device());
    states.reshape([b * w, d]).index_select(0, &index)
}

/// Fits the map of every layer from `lang`'s model `x` into the English model `en` on the parallel sentences
/// `en_sents[k]` ↔ `x_sents[k]` (see the module docs).
pub fn contextual_maps(
    en: &LoadedModel,
    x: &LoadedModel,
    lang: &str,
    en_sents: &[String],
    x_sents: &[String],
    cfg: &MapConfig,
) -> Result<ContextualMaps> {
    if en_sents.len() != x_sents.len() || en_sents.is_empty() {
        return Err(Error::Invalid(format!(
            "contextual maps need parallel sentences: {} English, {} {lang}",
            en_sents.len(),
            x_sents.len()
        )));
    }
    if en.config.hidden != x.config.hidden || en.config.layers != x.config.layers {
        return Err(Error::Invalid(format!(
            "contextual maps pair layers of equal width: the English model is {} × {}, the {lang} model {} × {}",
            en.config.layers, en.config.hidden, x.config.layers, x.config.hidden
        )));
    }
    if en.vs.device() != x.vs.device() {
        return Err(Error::Invalid("contextual maps: the two models live on different devices".into()));
    }
    let device = en.vs.device();
    let en_words: Vec<Vec<String>> = en_sents.iter().map(|s| crate::text::segment::words(s, EN)).collect();
    let x_words: Vec<Vec<String>> = x_sents.iter().map(|s| crate::text::segment::words(s, lang)).collect();
    let aligned = align_both_ways(&en_words, &x_words, &cfg.align)?;
    let (mut en_enc, mut x_enc) = (WordEncoder::new(&en.tokenizer, EN), WordEncoder::new(&x.tokenizer, lang));
    let en_len = cfg.max_len.min(en.config.max_positions);
    let x_len = cfg.max_len.min(x.config.max_positions);
    let layers = en.config.layers + 1;
    let d = en.config.hidden as i64;
    let zeros = || Tensor::zeros([d, d], (Kind::Double, device));
    let (mut cross, mut unit): (Vec<Tensor>, Vec<Tensor>) =
        ((0..layers).map(|_| zeros()).collect(), (0..layers).map(|_| zeros()).collect());
    let (mut pairs, mut n_links) = (0usize, 0usize);
    let step = cfg.batch_sentences.max(1);
    for start in (0..en_sents.len()).step_by(step) {
        let range = start..(start + step).min(en_sents.len());
        let en_items = range
            .clone()
            .map(|k| en_enc.encode(&en_words[k], &glued_in_text(&en_sents[k], &en_words[k]), en_len))
            .collect::<Result<Vec<_>>>()?;
        let x_items = range
            .clone()
            .map(|k| x_enc.encode(&x_words[k], &glued_in_text(&x_sents[k], &x_words[k]), x_len))
            .collect::<Result<Vec<_>>>()?;
        let (en_refs, x_refs): (Vec<&WordItem>, Vec<&WordItem>) = (en_items.iter().collect(), x_items.iter().collect());
        let mut linked = Vec::new(); // (b, en word, x word)
        for (b, k) in range.enumerate() {
            n_links += aligned.symmetric[k].len();
            let kept = (en_items[b].kept(), x_items[b].kept());
            linked.extend(one_to_one(&aligned.symmetric[k], kept.0, kept.1).into_iter().map(|(e, f)| (b, e, f)));
        }
        if linked.is_empty() {
            continue;
        }
        pairs += linked.len();
        let (ys, en_w) = word_states(en, &en_refs, EN, device)?;
        let (xs, x_w) = word_states(x, &x_refs, lang, device)?;
        let at_en: Vec<i64> = linked.iter().map(|&(b, e, _)| b as i64 * en_w + e as i64).collect();
        let at_x: Vec<i64> = linked.iter().map(|&(b, _, f)| b as i64 * x_w + f as i64).collect();
        for i in 0..layers {
            let (y, xr) = (rows(&ys[i], &at_en), rows(&xs[i], &at_x)); // [p, d]
            cross[i] += y.tr().mm(&xr);
            let norm = |t: &Tensor| t / t.norm_scalaropt_dim(2, [1], true).clamp_min(1e-12);
            unit[i] += norm(&y).tr().mm(&norm(&xr));
        }
    }
    if pairs == 0 {
        return Err(Error::Invalid(format!(
            "contextual maps: no one-to-one aligned word pairs in the en–{lang} sentences"
        )));
    }
    let p = pairs as f64;
    let layers = cross
        .iter()
        .zip(&unit)
        .map(|(m, n)| {
            let w = procrustes_from_cross(m)?;
            let cos_before = n.trace().double_value(&[]) / p;
            let cos_after = (&w * n).sum(Kind::Double).double_value(&[]) / p;
            Ok(LayerMap { w: w.to_kind(Kind::Float), cos_before, cos_after })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ContextualMaps { lang: lang.to_string(), layers, sentences: en_sents.len(), links: n_links, pairs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_to_one_links_between_kept_words_are_used() {
        // Source word 1 links to two target words; target word 4 to two source words; (5, 5) is cut on the target side.
        let links = [(0, 0), (1, 1), (1, 2), (2, 3), (3, 4), (4, 4), (5, 5), (6, 6)];
        assert_eq!(one_to_one(&links, 7, 5), [(0, 0), (2, 3)]);
        assert_eq!(one_to_one(&links, 1, 9), [(0, 0)]);
        assert!(one_to_one(&[], 3, 3).is_empty());
    }

    #[test]
    fn a_model_maps_onto_itself_exactly_and_an_orthogonal_map_brings_another_closer() {
        // The same sentences on both sides: fast_align links each word to itself.
        let sents: Vec<String> =
            ["the cat sat on the mat .", "the newer cat sat lower .", "paris is wider than the mat ."]
                .iter()
                .cycle()
                .take(30)
                .map(|s| s.to_string())
                .collect();
        let en = crate::tasks::tiny_loaded(3, &["en"]);
        let same = crate::tasks::tiny_loaded(3, &["en"]);
        let cfg = MapConfig { batch_sentences: 7, ..MapConfig::default() };
        let maps = contextual_maps(&en, &same, "en", &sents, &sents, &cfg).unwrap();
        assert_eq!(maps.layers.len(), 3);
        assert!(maps.pairs > 100 && maps.pairs <= maps.links, "{} of {}", maps.pairs, maps.links);
        // (The toy vocabulary spans fewer than 32 dimensions, so W is the identity on that span only.)
        for l in &maps.layers {
            assert!((l.cos_before - 1.0).abs() < 1e-9 && (l.cos_after - 1.0).abs() < 1e-6, "{l:?}");
        }
        // A different model: the map is orthogonal and brings the pairs closer than they were.
        let other = crate::tasks::tiny_loaded(4, &["en"]);
        let maps = contextual_maps(&en, &other, "en", &sents, &sents, &cfg).unwrap();
        for l in &maps.layers {
            let wwt = l.w.mm(&l.w.tr()) - Tensor::eye(32, (Kind::Float, Device::Cpu));
            assert!(wwt.abs().max().double_value(&[]) < 1e-4);
            assert!(l.cos_after > l.cos_before + 0.1, "{l:?}");
        }
        assert_eq!(maps.info(1)["pairs"], maps.pairs);
        let e = contextual_maps(&en, &other, "en", &sents[..2], &sents[..3], &cfg).unwrap_err().to_string();
        assert!(e.contains("parallel sentences: 2 English, 3 en"), "{e}");
    }
}
