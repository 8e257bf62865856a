//! The mean-difference-shift experiment of Liu et al. (2020, §4) on a loaded model: means of language, the shift
//! `D_l = R_l(tgt) − R_l(src)`, and unsupervised token translation scored by convert rate and BLEU-1 over a
//! layer × α grid (formulas in [`super::language`]). Unlike the rest of [`crate::analysis`], this runs a model:
//! it is the one driver that the `lang::mds` script function and `crossling analyse lang` share.
//!
//! Every position of a test sentence (specials excluded) is decoded with the MLM head after adding `α·D_l` to
//! layer `l`'s hidden states (`l = 0`: the embedding output); the predicted subword tokens are the hypothesis, the
//! reference sentence's subword tokens (same tokenizer) the reference of BLEU-1. The token sets `V_s`, `V_t` of
//! the convert rate are the ids that occur in each language's corpus.
//!
//! Besides the grids of corpus-level convert rate and BLEU-1, every cell carries its summed
//! [`TranslationCounts`] and, per test sentence, `[numerator, denominator]` pairs of five ratios ([`CellItems`]), so
//! that a bootstrap over sentences gives each an interval: the convert rate, the share of converted tokens without a
//! letter (punctuation, digits), the share of predictions in neither token set, the clipped unigram precision
//! (BLEU-1 without its brevity penalty, which is constant over a direction's cells; see [`super::language`]) and
//! the share of converted tokens found in the reference.
use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use tch::{Device, Tensor};

use super::language::{bleu1, is_symbol_token, predict_tokens, shifted_hidden, LayerMeans, TranslationCounts};
use crate::error::{Error, Result};
use crate::model::load::LoadedModel;
use crate::nn::batch::{length_batches, padded};

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
    /// Sample translations (the first test sentences) reported at the best BLEU-1 cell and at `sample_cells`.
    #[serde(default)]
    pub samples: usize,
    /// Further cells of the grid to report the sample translations at (e.g. Liu Table 1: layer 10, α = 1, 2, 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_cells: Vec<CellRef>,
    /// Padded tokens per forward pass.
    #[serde(default = "default_batch_tokens")]
    pub batch_tokens: usize,
}

fn default_batch_tokens() -> usize {
    8192
}

/// One cell of the grid, by its layer and α.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellRef {
    pub layer: usize,
    pub alpha: f64,
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

/// One translated test sentence at one cell: token lists and their decoded text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub source: String,
    pub source_tokens: Vec<String>,
    pub output: Vec<String>,
    pub reference: Vec<String>,
    pub source_text: String,
    pub output_text: String,
    pub reference_text: String,
    /// The output tokens that were converted (`∈ V_t − V_s`) and hold a letter (not punctuation or digits).
    pub converted_content: Vec<String>,
}

/// The sample translations at one requested cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSamples {
    pub layer: usize,
    pub alpha: f64,
    pub samples: Vec<Sample>,
}

/// Per test sentence `[numerator, denominator]` of one cell's ratios (f64 so that scripts hand them to
/// `results::score(KEY, #{ ratio: … })` as they are).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CellItems {
    /// `[converted, #y − #shared]`: the convert rate.
    pub convert: Vec<[f64; 2]>,
    /// `[converted without a letter, converted]`: the share of punctuation and digits among converted tokens.
    pub converted_symbols: Vec<[f64; 2]>,
    /// `[predictions in neither token set, predictions]`.
    pub outside: Vec<[f64; 2]>,
    /// `[clipped unigram matches, predictions]`: BLEU-1 without the brevity penalty.
    pub unigram: Vec<[f64; 2]>,
    /// `[converted predictions found in the reference (clipped), converted]`.
    pub converted_in_reference: Vec<[f64; 2]>,
}

impl CellItems {
    fn push(&mut self, c: &TranslationCounts) {
        let f = |x: u64| x as f64;
        self.convert.push([f(c.target_only), f(c.convert_denominator())]);
        self.converted_symbols.push([f(c.target_only_symbols), f(c.target_only)]);
        self.outside.push([f(c.neither), f(c.predictions())]);
        self.unigram.push([f(c.matched), f(c.predictions())]);
        self.converted_in_reference.push([f(c.target_only_matched), f(c.target_only)]);
    }
}

/// The grid: `convert_rate[a][l]`, `bleu1[a][l]`, `counts[a][l]` and `items[a][l]` for `alphas[a]` and `layers[l]`
/// (`None`: undefined, every prediction in both token sets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdsResult {
    pub layers: Vec<usize>,
    pub alphas: Vec<f64>,
    pub convert_rate: Vec<Vec<Option<f64>>>,
    pub bleu1: Vec<Vec<Option<f64>>>,
    /// The cell's counts summed over the test sentences.
    pub counts: Vec<Vec<TranslationCounts>>,
    /// The cell's per-sentence ratio terms.
    pub items: Vec<Vec<CellItems>>,
    /// BLEU-1's brevity penalty, the same in every cell (one prediction per source token).
    pub brevity_penalty: f64,
    pub best: BestCell,
    pub token_sets: TokenSets,
    /// `‖D_l‖₂` for every layer `l = 0..=L` of the model (not only the grid's).
    pub shift_norms: Vec<f64>,
    /// Sample translations at the best cell.
    pub samples: Vec<Sample>,
    /// Sample translations at each of the spec's `sample_cells`.
    pub cell_samples: Vec<CellSamples>,
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
    if acc.count() == 0 {
        return Err(Error::Invalid(format!(
            "mean of language {lang}: the {} texts hold no token that is not special or unknown: the tokenizer does \
             not cover {lang} (a WordPiece vocabulary without its script reads it as [UNK])",
            texts.len()
        )));
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
    m.require_mlm_head("MDS token translation")?;
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
    for c in &spec.sample_cells {
        cell_index(spec, c)?;
    }
    Ok(())
}

/// `(α index, layer index)` of `c` in the grid of `spec`.
fn cell_index(spec: &MdsSpec, c: &CellRef) -> Result<(usize, usize)> {
    let a = spec.alphas.iter().position(|&a| a == c.alpha);
    let l = spec.layers.iter().position(|&l| l == c.layer);
    match (a, l) {
        (Some(a), Some(l)) => Ok((a, l)),
        _ => Err(Error::Invalid(format!(
            "mean-difference shift: sample cell (layer {}, α {}) is not in the grid (layers {:?}, alphas {:?})",
            c.layer, c.alpha, spec.layers, spec.alphas
        ))),
    }
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
    let symbols: Vec<bool> = (0..m.config.vocab_size as u32)
        .map(|id| m.tokenizer.id_to_token(id).is_some_and(|t| is_symbol_token(&t)))
        .collect();
    let is_symbol = |id: u32| symbols.get(id as usize).copied().unwrap_or(false);
    let shift = means.shift(); // [layers + 1, hidden]
    let shift_norms =
        super::to_vec_f64(&shift.to_kind(tch::Kind::Double).norm_scalaropt_dim(2, [1i64].as_slice(), false))?;
    let test = encode(m, &spec.test_src, &spec.src)?;
    let ref_ids: Vec<Vec<i64>> =
        encode(m, &spec.test_ref, &spec.tgt)?.into_iter().map(|ids| ids[1..ids.len() - 1].to_vec()).collect();
    let ref_u32: Vec<Vec<u32>> = ref_ids.iter().map(|r| r.iter().map(|&x| x as u32).collect()).collect();
    let refs: Vec<Vec<String>> = ref_ids.iter().map(|ids| token_strings(m, ids)).collect();
    let batched = batches(&test, m.tokenizer.specials().pad as i64, spec.batch_tokens, m.device());
    let (na, nl) = (spec.alphas.len(), spec.layers.len());
    let (mut cr, mut bl) = (vec![vec![None; nl]; na], vec![vec![None; nl]; na]);
    let mut counts = vec![vec![TranslationCounts::default(); nl]; na];
    let mut items = vec![vec![CellItems::default(); nl]; na];
    let mut outputs: Vec<Vec<Vec<Vec<i64>>>> = Vec::with_capacity(na); // [a][l][sentence] predicted ids
    let bar = crate::progress::bar((na * nl) as u64, "MDS grid [{bar:30}] {pos}/{len} cells, eta {eta}");
    for (a_i, &alpha) in spec.alphas.iter().enumerate() {
        let mut per_layer = Vec::with_capacity(nl);
        for (l_i, &layer) in spec.layers.iter().enumerate() {
            let mut hyps = vec![Vec::new(); test.len()];
            let mut hyp_ids = vec![Vec::new(); test.len()];
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
                    hyps[i] = token_strings(m, &sel);
                    hyp_ids[i] = sel;
                }
            }
            for (i, h) in hyp_ids.iter().enumerate() {
                let pred: Vec<u32> = h.iter().map(|&x| x as u32).collect();
                let c = TranslationCounts::of_sentence(&pred, &ref_u32[i], t_src, t_tgt, is_symbol);
                counts[a_i][l_i].add(&c);
                items[a_i][l_i].push(&c);
            }
            cr[a_i][l_i] = counts[a_i][l_i].convert_rate();
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
    let samples_at = |a: usize, l: usize| -> Vec<Sample> {
        (0..spec.samples.min(test.len()))
            .map(|i| {
                let src_ids = &test[i][1..test[i].len() - 1];
                let out_ids = &outputs[a][l][i];
                let converted_content = out_ids
                    .iter()
                    .map(|&x| x as u32)
                    .filter(|p| t_tgt.contains(p) && !t_src.contains(p) && !is_symbol(*p))
                    .map(|p| m.tokenizer.id_to_token(p).unwrap_or_else(|| format!("<{p}>")))
                    .collect();
                Sample {
                    source: spec.test_src[i].clone(),
                    source_tokens: token_strings(m, src_ids),
                    output: token_strings(m, out_ids),
                    reference: refs[i].clone(),
                    source_text: text_of(m, src_ids),
                    output_text: text_of(m, out_ids),
                    reference_text: text_of(m, &ref_ids[i]),
                    converted_content,
                }
            })
            .collect()
    };
    let cell_samples = spec
        .sample_cells
        .iter()
        .map(|c| {
            let (a, l) = cell_index(spec, c)?;
            Ok(CellSamples { layer: c.layer, alpha: c.alpha, samples: samples_at(a, l) })
        })
        .collect::<Result<Vec<_>>>()?;
    // Hypothesis length c (one prediction per non-special source token, the same in every cell), reference length r.
    let (c_len, r_len) = (counts[0][0].predictions() as f64, ref_ids.iter().map(Vec::len).sum::<usize>() as f64);
    let brevity_penalty = if c_len > 0.0 && c_len < r_len { (1.0 - r_len / c_len).exp() } else { 1.0 };
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
        counts,
        items,
        brevity_penalty,
        token_sets: TokenSets { src: t_src.len(), tgt: t_tgt.len(), both: t_src.intersection(t_tgt).count() },
        shift_norms,
        samples: samples_at(best_a, best_l),
        cell_samples,
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

    fn spec() -> MdsSpec {
        MdsSpec {
            src: "en".into(),
            tgt: "fr".into(),
            corpus_src: vec!["a".into()],
            corpus_tgt: vec!["b".into()],
            test_src: vec!["a".into()],
            test_ref: vec!["b".into()],
            layers: vec![0, 2, 3],
            alphas: vec![0.0, 1.0, 3.0],
            samples: 1,
            sample_cells: vec![],
            batch_tokens: 64,
        }
    }

    #[test]
    fn sample_cells_must_lie_in_the_grid() {
        let s = spec();
        assert_eq!(cell_index(&s, &CellRef { layer: 2, alpha: 3.0 }).unwrap(), (2, 1));
        let e = cell_index(&s, &CellRef { layer: 1, alpha: 3.0 }).unwrap_err().to_string();
        assert!(e.contains("(layer 1, α 3) is not in the grid"), "{e}");
        assert!(cell_index(&s, &CellRef { layer: 2, alpha: 2.0 }).is_err());
        // The spec reads sample cells from a script's map; an unknown key is an error, not a silent default.
        let v = serde_json::json!({ "layer": 2, "alpha": 1.0, "alfa": 2.0 });
        assert!(serde_json::from_value::<CellRef>(v).is_err());
    }

    #[test]
    fn cell_items_hold_each_ratio_of_one_sentence() {
        let c = TranslationCounts {
            target_only: 3,
            source_only: 1,
            shared: 1,
            neither: 1,
            target_only_symbols: 1,
            matched: 3,
            target_only_matched: 1,
            reference: 4,
        };
        let mut it = CellItems::default();
        it.push(&c);
        // The token in neither set stays in the convert rate's denominator: 3 / (6 − 1).
        assert_eq!(it.convert, [[3.0, 5.0]]);
        assert_eq!(it.converted_symbols, [[1.0, 3.0]]);
        assert_eq!(it.outside, [[1.0, 6.0]]);
        assert_eq!(it.unigram, [[3.0, 6.0]]);
        assert_eq!(it.converted_in_reference, [[1.0, 3.0]]);
    }
}
