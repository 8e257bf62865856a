//! The mean-difference-shift experiment of Liu et al. (2020, §4) on a loaded model: means of language, the shift
//! `D_l = R_l(tgt) − R_l(src)`, and unsupervised token translation scored by convert rate and BLEU-1 over a
//! layer × α grid (formulas in [`super::language`]). Unlike the rest of [`crate::analysis`], this runs a model:
//! it is the one driver that the `lang::mds` script function and `crossling analyse lang` share.
//!
//! Every position of a test sentence (specials excluded) is decoded with the MLM head after adding `α·D_l` to
//! layer `l`'s hidden states (`l = 0`: the embedding output); the predicted subword tokens are the hypothesis, the
//! reference sentence's subword tokens (same tokenizer) the reference of BLEU-1. The token sets `T_src`, `T_tgt` of
//! the convert rate are the ids that occur in each language's corpus.
use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use tch::{Device, Tensor};

use super::language::{bleu1, convert_rate, predict_tokens, shifted_hidden, LayerMeans};
use crate::error::{Error, Result};
use crate::features::batch::{length_batches, padded};
use crate::model::load::LoadedModel;

/// What [`mds_grid`] computes.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MdsSpec {
    pub src: String,
    pub tgt: String,
    /// Sentences of `src` and `tgt` for the means of language and the token sets.
    pub corpus_src: Vec<String>,
    pub corpus_tgt: Vec<String>,
    /// Sentences of `src` to translate, and their references in `tgt` (line-parallel).
    pub test_src: Vec<String>,
    pub test_ref: Vec<String>,
    pub layers: Vec<usize>,
    pub alphas: Vec<f64>,
    /// Sample translations reported at the best BLEU-1 cell.
    #[serde(default)]
    pub samples: usize,
    /// Padded tokens per forward pass.
    #[serde(default = "default_batch_tokens")]
    pub batch_tokens: usize,
}

fn default_batch_tokens() -> usize {
    8192
}

/// The best BLEU-1 cell of the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestCell {
    pub layer: usize,
    pub alpha: f64,
    pub bleu1: f64,
    /// `None` when no prediction of that cell is language-exclusive.
    pub convert_rate: Option<f64>,
}

/// Sizes of the token sets: `|T_src|`, `|T_tgt|`, `|T_src ∩ T_tgt|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSets {
    pub src: usize,
    pub tgt: usize,
    pub both: usize,
}

/// One translated test sentence at the best cell: token lists and their decoded text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub source: String,
    pub source_tokens: Vec<String>,
    pub output: Vec<String>,
    pub reference: Vec<String>,
    pub source_text: String,
    pub output_text: String,
    pub reference_text: String,
}

/// The grid: `convert_rate[a][l]` and `bleu1[a][l]` for `alphas[a]` and `layers[l]` (`None`: undefined).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdsResult {
    pub layers: Vec<usize>,
    pub alphas: Vec<f64>,
    pub convert_rate: Vec<Vec<Option<f64>>>,
    pub bleu1: Vec<Vec<Option<f64>>>,
    pub best: BestCell,
    pub token_sets: TokenSets,
    /// `‖D_l‖₂` for every layer `l = 0..=L` of the model (not only the grid's).
    pub shift_norms: Vec<f64>,
    pub samples: Vec<Sample>,
}

/// Sequences of ids (with specials), cut to the model's positions (the last special kept).
pub fn encode(m: &LoadedModel, texts: &[String], lang: &str) -> Result<Vec<Vec<i64>>> {
    let max = m.config.max_positions;
    texts
        .iter()
        .map(|t| {
            let mut ids = m.tokenizer.encode_words(t, lang)?.tokenized.ids;
            if ids.len() > max {
                let last = ids[ids.len() - 1];
                ids.truncate(max - 1);
                ids.push(last);
            }
            Ok(ids)
        })
        .collect()
}

/// Length batches of at most `budget` padded tokens: `(ids [b, seq], mask [b, seq], rows)`.
fn batches(seqs: &[Vec<i64>], pad: i64, budget: usize, device: Device) -> Vec<(Tensor, Tensor, Vec<usize>)> {
    let lens: Vec<usize> = seqs.iter().map(Vec::len).collect();
    length_batches(&lens, budget)
        .into_iter()
        .map(|rows| {
            let s: Vec<&[i64]> = rows.iter().map(|&i| seqs[i].as_slice()).collect();
            let (ids, mask, _) = padded(&s, pad, device);
            (ids, mask, rows)
        })
        .collect()
}

/// Whether a position holds a real, non-special token.
///
/// # Shapes
/// `ids`, `mask`: `[batch, seq]` → `[batch, seq]` bool
fn content_mask(ids: &Tensor, mask: &Tensor, specials: &[i64]) -> Tensor {
    let mut keep = mask.ne(0);
    for &s in specials {
        keep = keep.logical_and(&ids.ne(s));
    }
    keep
}

/// The ids of the tokenizer's special tokens.
fn special_ids(m: &LoadedModel) -> Vec<i64> {
    let s = m.tokenizer.specials();
    [s.pad, s.unk, s.cls, s.sep, s.mask].iter().map(|&x| x as i64).collect()
}

/// The mean of language `lang` over `texts` at every layer, and the set of (non-special) token ids seen.
///
/// # Shapes
/// → `[layers + 1, hidden]` f32 on the CPU (row 0: the embedding output)
pub fn language_means(
    m: &LoadedModel,
    texts: &[String],
    lang: &str,
    batch_tokens: usize,
) -> Result<(Tensor, HashSet<u32>)> {
    let specials = special_ids(m);
    let seqs = encode(m, texts, lang)?;
    let mut acc = LayerMeans::new(m.config.layers + 1, m.config.hidden);
    let mut set = HashSet::new();
    for s in &seqs {
        set.extend(s.iter().filter(|id| !specials.contains(id)).map(|&id| id as u32));
    }
    let pad = m.tokenizer.specials().pad as i64;
    for (ids, mask, _) in batches(&seqs, pad, batch_tokens, m.device()) {
        let out = m.hidden_states(&ids, Some(&mask), lang)?;
        acc.add(&out.hidden_states, &content_mask(&ids, &mask, &specials))?;
    }
    Ok((acc.means()?, set))
}

fn token_strings(m: &LoadedModel, ids: &[i64]) -> Vec<String> {
    ids.iter().map(|&i| m.tokenizer.id_to_token(i as u32).unwrap_or_else(|| format!("<{i}>"))).collect()
}

/// Readable text of token ids: the tokenizer's decoding, else the tokens joined by spaces.
fn text_of(m: &LoadedModel, ids: &[i64]) -> String {
    let ids32: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
    match m.tokenizer.decode(&ids32) {
        Ok(t) if !t.trim().is_empty() => t,
        _ => token_strings(m, ids).join(" "),
    }
}

/// Arg-max tokens (never a special) of the MLM head at the positions where `keep` is true, row-major; logits are
/// computed only there, in chunks of at most 256 MiB (`chunk × vocab` f32), so a 120k-token vocabulary fits.
///
/// # Shapes
/// `hidden`: `[batch, seq, d]`, `keep`: `[batch, seq]` bool → one id per kept position.
fn decode_positions(m: &LoadedModel, hidden: &Tensor, keep: &Tensor, lang: &str, excluded: &[u32]) -> Result<Vec<i64>> {
    let d = hidden.size()[2];
    let idx = keep.flatten(0, -1).nonzero().squeeze_dim(1);
    let rows = hidden.reshape([-1, d]).index_select(0, &idx); // [n, d]
    let chunk = ((256usize << 20) / (4 * m.config.vocab_size.max(1))).max(1) as i64;
    let n = rows.size()[0];
    let mut out = Vec::with_capacity(n as usize);
    let mut start = 0;
    while start < n {
        let len = chunk.min(n - start);
        let logits = m.model.logits(&rows.narrow(0, start, len).unsqueeze(0), lang)?; // [1, len, vocab]
        let pred = predict_tokens(&logits, excluded).flatten(0, -1);
        out.extend(Vec::<i64>::try_from(pred).map_err(|e| Error::Invalid(e.to_string()))?);
        start += len;
    }
    Ok(out)
}

fn check(spec: &MdsSpec, m: &LoadedModel) -> Result<()> {
    for (what, v) in [("corpus_src", &spec.corpus_src), ("corpus_tgt", &spec.corpus_tgt), ("test_src", &spec.test_src)]
    {
        if v.is_empty() {
            return Err(Error::Invalid(format!("mean-difference shift: {what} is empty")));
        }
    }
    if spec.test_src.len() != spec.test_ref.len() {
        return Err(Error::Invalid(format!(
            "mean-difference shift: {} test sentences but {} references",
            spec.test_src.len(),
            spec.test_ref.len()
        )));
    }
    if spec.layers.is_empty() || spec.alphas.is_empty() {
        return Err(Error::Invalid("mean-difference shift: layers and alphas must not be empty".into()));
    }
    if let Some(&l) = spec.layers.iter().find(|&&l| l > m.config.layers) {
        return Err(Error::Invalid(format!(
            "mean-difference shift: layer {l} > the model's {} layers (0 = embeddings)",
            m.config.layers
        )));
    }
    if let Some(a) = spec.alphas.iter().find(|a| !a.is_finite()) {
        return Err(Error::Invalid(format!("mean-difference shift: α = {a} is not a finite number")));
    }
    Ok(())
}

/// The means of language of both sides of a spec, with their token sets.
pub struct PairMeans {
    /// `R(src)`, `R(tgt)`: `[layers + 1, hidden]` f32 on the CPU.
    pub r_src: Tensor,
    pub r_tgt: Tensor,
    pub t_src: HashSet<u32>,
    pub t_tgt: HashSet<u32>,
}

impl PairMeans {
    /// [`language_means`] of `corpus_src` in `src` and of `corpus_tgt` in `tgt`.
    pub fn compute(m: &LoadedModel, spec: &MdsSpec) -> Result<Self> {
        let (r_src, t_src) = language_means(m, &spec.corpus_src, &spec.src, spec.batch_tokens)?;
        let (r_tgt, t_tgt) = language_means(m, &spec.corpus_tgt, &spec.tgt, spec.batch_tokens)?;
        Ok(PairMeans { r_src, r_tgt, t_src, t_tgt })
    }

    /// `D = R(tgt) − R(src)`.
    ///
    /// # Shapes
    /// → `[layers + 1, hidden]`
    pub fn shift(&self) -> Tensor {
        &self.r_tgt - &self.r_src
    }
}

/// Runs the layer × α grid of `spec` on `m`.
pub fn mds_grid(m: &LoadedModel, spec: &MdsSpec) -> Result<MdsResult> {
    check(spec, m)?;
    grid(m, spec, &PairMeans::compute(m, spec)?)
}

/// [`mds_grid`] with the means of language already computed (from `spec`'s corpora) by the caller.
pub fn mds_grid_with(m: &LoadedModel, spec: &MdsSpec, means: &PairMeans) -> Result<MdsResult> {
    check(spec, m)?;
    grid(m, spec, means)
}

fn grid(m: &LoadedModel, spec: &MdsSpec, means: &PairMeans) -> Result<MdsResult> {
    let specials = special_ids(m);
    let excluded: Vec<u32> = specials.iter().map(|&x| x as u32).collect();
    let PairMeans { t_src, t_tgt, .. } = means;
    let shift = means.shift(); // [layers + 1, hidden]
    let shift_norms =
        super::to_vec_f64(&shift.to_kind(tch::Kind::Double).norm_scalaropt_dim(2, [1i64].as_slice(), false))?;
    let test = encode(m, &spec.test_src, &spec.src)?;
    let ref_ids: Vec<Vec<i64>> =
        encode(m, &spec.test_ref, &spec.tgt)?.into_iter().map(|ids| ids[1..ids.len() - 1].to_vec()).collect();
    let refs: Vec<Vec<String>> = ref_ids.iter().map(|ids| token_strings(m, ids)).collect();
    let batched = batches(&test, m.tokenizer.specials().pad as i64, spec.batch_tokens, m.device());
    let (na, nl) = (spec.alphas.len(), spec.layers.len());
    let (mut cr, mut bl) = (vec![vec![None; nl]; na], vec![vec![None; nl]; na]);
    let mut outputs: Vec<Vec<Vec<Vec<i64>>>> = Vec::with_capacity(na); // [a][l][sentence] predicted ids
    let bar = crate::progress::bar((na * nl) as u64, "MDS grid [{bar:30}] {pos}/{len} cells, eta {eta}");
    for (a_i, &alpha) in spec.alphas.iter().enumerate() {
        let mut per_layer = Vec::with_capacity(nl);
        for (l_i, &layer) in spec.layers.iter().enumerate() {
            let mut hyps = vec![Vec::new(); test.len()];
            let mut hyp_ids = vec![Vec::new(); test.len()];
            let mut preds_all = Vec::new();
            for (ids, mask, rows) in &batched {
                let keep = content_mask(ids, mask, &specials);
                let keep_v: Vec<bool> =
                    Vec::try_from(keep.flatten(0, -1)).map_err(|e: tch::TchError| Error::Invalid(e.to_string()))?;
                let pred_v = tch::no_grad(|| {
                    let h =
                        shifted_hidden(&m.model, ids, Some(mask), &spec.src, layer, &shift.get(layer as i64), alpha)?;
                    decode_positions(m, &h, &keep, &spec.src, &excluded)
                })?;
                // pred_v follows the kept positions in row-major order.
                let seq = ids.size()[1] as usize;
                let mut next = 0;
                for (r, &i) in rows.iter().enumerate() {
                    let n = (0..seq).filter(|&t| keep_v[r * seq + t]).count();
                    let sel: Vec<i64> = pred_v[next..next + n].to_vec();
                    next += n;
                    preds_all.extend(sel.iter().map(|&x| x as u32));
                    hyps[i] = token_strings(m, &sel);
                    hyp_ids[i] = sel;
                }
            }
            let rate = convert_rate(&preds_all, t_src, t_tgt).rate;
            cr[a_i][l_i] = rate.is_finite().then_some(rate);
            bl[a_i][l_i] = Some(bleu1(&hyps, &refs)?);
            per_layer.push(hyp_ids);
            bar.inc(1);
        }
        outputs.push(per_layer);
    }
    bar.finish_and_clear();
    let (mut best_a, mut best_l) = (0, 0);
    for a in 0..na {
        for l in 0..nl {
            if bl[a][l] > bl[best_a][best_l] {
                (best_a, best_l) = (a, l);
            }
        }
    }
    let samples = (0..spec.samples.min(test.len()))
        .map(|i| {
            let src_ids = &test[i][1..test[i].len() - 1];
            let out_ids = &outputs[best_a][best_l][i];
            Sample {
                source: spec.test_src[i].clone(),
                source_tokens: token_strings(m, src_ids),
                output: token_strings(m, out_ids),
                reference: refs[i].clone(),
                source_text: text_of(m, src_ids),
                output_text: text_of(m, out_ids),
                reference_text: text_of(m, &ref_ids[i]),
            }
        })
        .collect();
    Ok(MdsResult {
        layers: spec.layers.clone(),
        alphas: spec.alphas.clone(),
        best: BestCell {
            layer: spec.layers[best_l],
            alpha: spec.alphas[best_a],
            bleu1: bl[best_a][best_l].unwrap_or(0.0),
            convert_rate: cr[best_a][best_l],
        },
        convert_rate: cr,
        bleu1: bl,
        token_sets: TokenSets { src: t_src.len(), tgt: t_tgt.len(), both: t_src.intersection(t_tgt).count() },
        shift_norms,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;

    #[test]
    fn batches_respect_the_budget_and_cover_every_row() {
        let seqs = vec![vec![1, 5, 2], vec![1, 5, 6, 7, 2], vec![1, 2], vec![1, 9, 9, 2]];
        let b = batches(&seqs, 0, 8, Device::Cpu);
        let mut rows: Vec<usize> = b.iter().flat_map(|(_, _, r)| r.clone()).collect();
        rows.sort();
        assert_eq!(rows, [0, 1, 2, 3]);
        for (ids, mask, r) in &b {
            assert!(ids.size()[0] * ids.size()[1] <= 8 || r.len() == 1);
            assert_eq!(
                mask.sum(Kind::Int64).int64_value(&[]) as usize,
                r.iter().map(|&i| seqs[i].len()).sum::<usize>()
            );
        }
        let ids = Tensor::from_slice(&[1i64, 5, 2, 0]).view([1, 4]);
        let mask = Tensor::from_slice(&[1i64, 1, 1, 0]).view([1, 4]);
        let keep: Vec<bool> = Vec::try_from(content_mask(&ids, &mask, &[0, 1, 2]).flatten(0, -1)).unwrap();
        assert_eq!(keep, [false, true, false, false]);
    }
}
