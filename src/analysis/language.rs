//! Language-specific information in a multilingual MLM (Liu, Hsu, Chuang, Li & Lee 2020, "A Study of Cross-Lingual
//! Ability and Language-specific Information in Multilingual BERT", §4; also arXiv:2010.10041).
//!
//! * **Mean of language** `R_l(L)`: the mean, over every non-special token of a corpus in language `L`, of the
//!   layer-`l` hidden vector ([`LayerMeans`], accumulated in f64).
//! * **Mean-difference shift (MDS)** `D_l = R_l(L2) − R_l(L1)`.
//! * **Unsupervised token translation**: feed a sentence of `L1`, add `α · D_l` to every position of the layer-`l`
//!   hidden states (`l = 0` is the embedding output), run the remaining layers, and decode every position with the
//!   MLM head ([`shifted_logits`], [`predict_tokens`]); `α = 0` reconstructs the input.
//! * **Convert rate** ([`convert_rate`], Liu et al. §4.2.2): with `y` the predicted tokens and `V_s`, `V_t` the token
//!   sets of the source and target language (here: the ids that occur in each language's corpus),
//!   `CR = #{y ∈ V_t − V_s} / (#y − #{y ∈ V_s ∩ V_t})`, counted over all predicted positions (specials excluded).
//!   Tokens in both sets are excluded from both terms; a token in neither set stays in the denominator (it was not
//!   converted). `CR` near 0 means the output stayed out of `L2`; near 1, it moved to `L2`.
//! * **What was converted** ([`TranslationCounts`], per sentence): beside the convert rate's counts, the converted
//!   tokens without a letter ([`is_symbol_token`]: punctuation, digits), the clipped unigram matches with the
//!   reference over all predictions and over the converted ones, and the predictions in neither set (the paper:
//!   the model "never decodes the tokens which not belong to L1 and L2").
//! * **BLEU-1** ([`bleu1`]): corpus-level clipped unigram precision times the brevity penalty (Papineni et al.
//!   2002), `BP · Σ_s Σ_w min(c_hyp(w), c_ref(w)) / Σ_s |hyp_s|`, `BP = exp(1 − r/c)` when the total hypothesis
//!   length `c` is below the reference length `r`, else 1. A token-by-token translation predicts one token per
//!   source token, so `c` and `r`, hence `BP`, are the same in every cell (layer, α) of a direction: the clipped
//!   unigram precision without `BP` ([`TranslationCounts::matched`] over [`TranslationCounts::predictions`], a ratio
//!   of per-sentence sums that a bootstrap over sentences can resample) orders the cells as BLEU-1 does.
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

use crate::error::{Error, Result};
use crate::model::MlmModel;

/// Running per-layer sums of hidden vectors, for the mean of a language.
#[derive(Debug)]
pub struct LayerMeans {
    /// `[layers + 1, hidden]` f64 sums.
    sums: Tensor,
    count: i64,
}

impl LayerMeans {
    /// An empty accumulator for `layers + 1` hidden-state entries of width `hidden`.
    pub fn new(layers_plus_one: usize, hidden: usize) -> Self {
        LayerMeans {
            sums: Tensor::zeros([layers_plus_one as i64, hidden as i64], (Kind::Double, tch::Device::Cpu)),
            count: 0,
        }
    }

    /// Adds the token vectors of one batch where `keep` is true (real, non-special tokens).
    ///
    /// # Shapes
    /// `hidden_states`: `layers + 1` × `[batch, seq, hidden]`; `keep`: `[batch, seq]` bool or 0/1
    pub fn add(&mut self, hidden_states: &[Tensor], keep: &Tensor) -> Result<()> {
        let n = self.sums.size()[0] as usize;
        if hidden_states.len() != n {
            return Err(Error::Invalid(format!(
                "LayerMeans: expected {n} hidden-state entries, got {}",
                hidden_states.len()
            )));
        }
        let keep = keep.to_device(tch::Device::Cpu).to_kind(Kind::Double).unsqueeze(-1); // [batch, seq, 1]
        for (i, h) in hidden_states.iter().enumerate() {
            if h.size()[..2] != keep.size()[..2] {
                return Err(Error::Invalid(format!(
                    "LayerMeans: hidden states {:?} do not match the mask {:?}",
                    h.size(),
                    keep.size()
                )));
            }
            let s = (h.to_device(tch::Device::Cpu).to_kind(Kind::Double) * &keep).sum_dim_intlist(
                [0i64, 1].as_slice(),
                false,
                Kind::Double,
            );
            let mut row = self.sums.get(i as i64);
            row += s;
        }
        self.count += keep.sum(Kind::Double).double_value(&[]).round() as i64;
        Ok(())
    }

    /// Tokens accumulated so far.
    pub fn count(&self) -> i64 {
        self.count
    }

    /// The means `R_l`, f32.
    ///
    /// # Shapes
    /// → `[layers + 1, hidden]`
    pub fn means(&self) -> Result<Tensor> {
        if self.count == 0 {
            return Err(Error::Invalid("mean of language: no tokens were accumulated".into()));
        }
        Ok((&self.sums / self.count as f64).to_kind(Kind::Float))
    }
}

/// Logits after adding `alpha · shift` to every position of the layer-`layer` hidden states.
///
/// # Shapes
/// `input_ids`, `attention_mask`: `[batch, seq]`; `shift`: `[hidden]` → `[batch, seq, vocab]`
pub fn shifted_logits(
    model: &MlmModel,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    lang: &str,
    layer: usize,
    shift: &Tensor,
    alpha: f64,
) -> Result<Tensor> {
    let x = shifted_hidden(model, input_ids, attention_mask, lang, layer, shift, alpha)?;
    model.logits(&x, lang)
}

/// The last layer's hidden states after adding `alpha · shift` to every position of the layer-`layer` hidden
/// states (`layer` 0 = the embedding output; `layer` = L shifts the output itself). Decode them with
/// [`MlmModel::logits`] — on selected positions only, when the vocabulary is large.
///
/// # Shapes
/// `input_ids`, `attention_mask`: `[batch, seq]`; `shift`: `[hidden]` → `[batch, seq, hidden]`
pub fn shifted_hidden(
    model: &MlmModel,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    lang: &str,
    layer: usize,
    shift: &Tensor,
    alpha: f64,
) -> Result<Tensor> {
    let mut out = shifted_hiddens(model, input_ids, attention_mask, lang, layer, shift, &[alpha])?;
    Ok(out.remove(0))
}

/// [`shifted_hidden`] at each of `alphas`: the layers up to `layer` run once, the layers above it once per weight
/// (element i is `shifted_hidden(…, alphas[i])`, the same operations on the same input).
///
/// # Shapes
/// `input_ids`, `attention_mask`: `[batch, seq]`; `shift`: `[hidden]` → one `[batch, seq, hidden]` per weight
pub fn shifted_hiddens(
    model: &MlmModel,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    lang: &str,
    layer: usize,
    shift: &Tensor,
    alphas: &[f64],
) -> Result<Vec<Tensor>> {
    let enc = &model.encoder;
    let n_layers = enc.layers.len();
    if layer > n_layers {
        return Err(Error::Invalid(format!("shift layer {layer} is beyond the model's {n_layers} layers")));
    }
    let hidden = model.config().hidden as i64;
    if shift.size() != [hidden] {
        return Err(Error::Invalid(format!("shift vector has shape {:?}, expected [{hidden}]", shift.size())));
    }
    // The encoder's own split pass, so a pre-LN encoder's final LayerNorm comes where its forward puts it: after the
    // last layer, and before the shift when `layer` = L (the hidden state the means were taken of).
    let direction = shift.to_device(input_ids.device()).to_kind(Kind::Float); // [hidden]
    let bottom = enc.forward_until(input_ids, attention_mask, lang, layer, false)?; // [batch, seq, hidden]
    alphas
        .iter()
        .map(|&alpha| enc.forward_from(&(&bottom + &direction * alpha), layer, attention_mask, lang, false))
        .collect()
}

/// The arg-max token at every position, never one of `excluded` (the special tokens).
///
/// # Shapes
/// `logits`: `[batch, seq, vocab]` → `[batch, seq]` i64
pub fn predict_tokens(logits: &Tensor, excluded: &[u32]) -> Tensor {
    let logits = logits.to_kind(Kind::Float);
    if excluded.is_empty() {
        return logits.argmax(-1, false);
    }
    let idx = Tensor::from_slice(&excluded.iter().map(|&i| i as i64).collect::<Vec<_>>()).to_device(logits.device());
    logits.index_fill(-1, &idx, f64::NEG_INFINITY).argmax(-1, false)
}

/// Convert rate with its counts (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConvertRate {
    /// `#{y ∈ V_t − V_s} / (#y − #{y ∈ V_s ∩ V_t})`; NaN when every prediction is in both sets.
    pub rate: f64,
    /// Predictions only in the target set (converted).
    pub target_only: u64,
    /// Predictions only in the source set.
    pub source_only: u64,
    /// Predictions in both sets (excluded from both terms).
    pub shared: u64,
    /// Predictions in neither set (in the denominator: not converted).
    pub neither: u64,
}

/// Convert rate of `predictions` from the `source` token set to the `target` token set (Liu et al. §4.2.2).
pub fn convert_rate(predictions: &[u32], source: &HashSet<u32>, target: &HashSet<u32>) -> ConvertRate {
    let (mut t, mut s, mut both, mut neither) = (0u64, 0u64, 0u64, 0u64);
    for p in predictions {
        match (source.contains(p), target.contains(p)) {
            (false, true) => t += 1,
            (true, false) => s += 1,
            (true, true) => both += 1,
            (false, false) => neither += 1,
        }
    }
    let den = t + s + neither;
    let rate = if den == 0 { f64::NAN } else { t as f64 / den as f64 };
    ConvertRate { rate, target_only: t, source_only: s, shared: both, neither }
}

/// Whether a token string holds no letter (punctuation, digits, symbols): its text without the subword markers
/// (a `xx:` language prefix, a leading `##`, `▁` or `Ġ`, a trailing `</w>`) has no alphabetic character. Han,
/// Cyrillic and other scripts' letters are alphabetic, so `的` is a content token and `，` is not.
pub fn is_symbol_token(token: &str) -> bool {
    let mut t = token;
    if let Some((prefix, rest)) = t.split_once(':') {
        if (2..=3).contains(&prefix.len()) && prefix.bytes().all(|b| b.is_ascii_lowercase()) && !rest.is_empty() {
            t = rest;
        }
    }
    let t = t.strip_suffix("</w>").unwrap_or(t);
    let t = t.trim_start_matches("##").trim_start_matches(['▁', 'Ġ']);
    !t.chars().any(char::is_alphabetic)
}

/// The counts behind the convert rate and BLEU-1 of one sentence's predictions, or of many summed ([`Self::add`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranslationCounts {
    /// Predictions `y ∈ V_t − V_s` (converted).
    pub target_only: u64,
    /// Predictions `y ∈ V_s − V_t`.
    pub source_only: u64,
    /// Predictions `y ∈ V_s ∩ V_t`.
    pub shared: u64,
    /// Predictions in neither set.
    pub neither: u64,
    /// Converted predictions without a letter ([`is_symbol_token`]: punctuation, digits).
    pub target_only_symbols: u64,
    /// Clipped unigram matches with the reference, `Σ_w min(c_hyp(w), c_ref(w))` (BLEU-1's numerator).
    pub matched: u64,
    /// The same sum over converted types only: converted predictions found in the reference.
    pub target_only_matched: u64,
    /// Reference tokens.
    pub reference: u64,
}

impl TranslationCounts {
    /// Counts `predictions` against `reference` (token ids of one tokenizer) and the token sets; `symbol(id)` tells
    /// whether a token has no letter.
    pub fn of_sentence(
        predictions: &[u32],
        reference: &[u32],
        source: &HashSet<u32>,
        target: &HashSet<u32>,
        symbol: impl Fn(u32) -> bool,
    ) -> Self {
        let cr = convert_rate(predictions, source, target);
        let converted = |p: u32| target.contains(&p) && !source.contains(&p);
        let mut hyp: HashMap<u32, u64> = HashMap::new();
        for &p in predictions {
            *hyp.entry(p).or_default() += 1;
        }
        let mut refs: HashMap<u32, u64> = HashMap::new();
        for &r in reference {
            *refs.entry(r).or_default() += 1;
        }
        let (mut matched, mut target_only_matched) = (0, 0);
        for (&w, &c) in &hyp {
            let m = c.min(refs.get(&w).copied().unwrap_or(0));
            matched += m;
            if converted(w) {
                target_only_matched += m;
            }
        }
        TranslationCounts {
            target_only: cr.target_only,
            source_only: cr.source_only,
            shared: cr.shared,
            neither: cr.neither,
            target_only_symbols: predictions.iter().filter(|&&p| converted(p) && symbol(p)).count() as u64,
            matched,
            target_only_matched,
            reference: reference.len() as u64,
        }
    }

    /// Every prediction, `#y`.
    pub fn predictions(&self) -> u64 {
        self.target_only + self.source_only + self.shared + self.neither
    }

    /// The convert rate's denominator, `#y − #{y ∈ V_s ∩ V_t}`.
    pub fn convert_denominator(&self) -> u64 {
        self.predictions() - self.shared
    }

    /// The convert rate; `None` when every prediction is in both sets.
    pub fn convert_rate(&self) -> Option<f64> {
        let d = self.convert_denominator();
        (d > 0).then(|| self.target_only as f64 / d as f64)
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &TranslationCounts) {
        self.target_only += other.target_only;
        self.source_only += other.source_only;
        self.shared += other.shared;
        self.neither += other.neither;
        self.target_only_symbols += other.target_only_symbols;
        self.matched += other.matched;
        self.target_only_matched += other.target_only_matched;
        self.reference += other.reference;
    }
}

/// Corpus-level BLEU-1 of tokenised hypotheses against one reference each (see the module docs); 0 for empty
/// hypotheses.
pub fn bleu1<S: AsRef<str>>(hypotheses: &[Vec<S>], references: &[Vec<S>]) -> Result<f64> {
    if hypotheses.len() != references.len() {
        return Err(Error::Invalid(format!(
            "BLEU-1: {} hypotheses but {} references",
            hypotheses.len(),
            references.len()
        )));
    }
    let (mut matched, mut c, mut r) = (0usize, 0usize, 0usize);
    for (h, refs) in hypotheses.iter().zip(references) {
        let mut ref_counts: HashMap<&str, usize> = HashMap::new();
        for w in refs {
            *ref_counts.entry(w.as_ref()).or_default() += 1;
        }
        for w in h {
            if let Some(n) = ref_counts.get_mut(w.as_ref()) {
                if *n > 0 {
                    *n -= 1;
                    matched += 1;
                }
            }
        }
        c += h.len();
        r += refs.len();
    }
    if c == 0 {
        return Ok(0.0);
    }
    let bp = if c < r { (1.0 - r as f64 / c as f64).exp() } else { 1.0 };
    Ok(bp * matched as f64 / c as f64)
}

/// A grid of values over shift layers × α, as the sweeps of Liu et al. Figures 7–8 report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerAlphaGrid {
    /// Shift layers (0 = embedding output).
    pub layers: Vec<usize>,
    /// α values.
    pub alphas: Vec<f64>,
    /// `values[i][j]` at `layers[i]`, `alphas[j]`.
    pub values: Vec<Vec<f64>>,
}

impl LayerAlphaGrid {
    /// Evaluates `f(layer, alpha)` over the grid.
    pub fn compute(layers: &[usize], alphas: &[f64], mut f: impl FnMut(usize, f64) -> Result<f64>) -> Result<Self> {
        let values = layers
            .iter()
            .map(|&l| alphas.iter().map(|&a| f(l, a)).collect::<Result<Vec<_>>>())
            .collect::<Result<Vec<_>>>()?;
        Ok(LayerAlphaGrid { layers: layers.to_vec(), alphas: alphas.to_vec(), values })
    }

    /// The (layer, α, value) of the largest finite value, if any.
    pub fn best(&self) -> Option<(usize, f64, f64)> {
        let mut best: Option<(usize, f64, f64)> = None;
        for (i, row) in self.values.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if v.is_finite() && best.is_none_or(|b| v > b.2) {
                    best = Some((self.layers[i], self.alphas[j], v));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;
    use tch::nn::VarStore;

    fn tiny_with(pre_ln: bool) -> (VarStore, MlmModel) {
        tch::manual_seed(3);
        let vs = VarStore::new(tch::Device::Cpu);
        let cfg = ModelConfig {
            vocab_size: 40,
            hidden: 16,
            layers: 2,
            heads: 2,
            max_positions: 16,
            pre_ln,
            ..Default::default()
        };
        let m = MlmModel::new(&vs.root(), &cfg).unwrap();
        (vs, m)
    }

    #[test]
    fn zero_shift_equals_the_plain_forward_and_a_shift_changes_it() {
        // Post-LN (BERT's) and pre-LN (the `cpu` presets', whose encoder ends in a final LayerNorm: before
        // 2026-12-02 the shifted pass skipped it, so α = 0 did not give the plain forward).
        for pre_ln in [false, true] {
            zero_shift_check(pre_ln);
        }
    }

    fn zero_shift_check(pre_ln: bool) {
        let (_vs, m) = tiny_with(pre_ln);
        let ids = Tensor::from_slice(&[2i64, 7, 9, 11, 3, 2, 8, 12, 13, 3]).view([2, 5]);
        let plain = {
            let out = m.encoder.forward(&ids, None, "en", false).unwrap();
            m.logits(out.last(), "en").unwrap()
        };
        // Not a constant vector: LayerNorm removes a shift that is the same in every dimension, so a pre-LN encoder
        // would hide it.
        let shift = Tensor::arange(16, (Kind::Float, tch::Device::Cpu)) / 8.0 - 1.0;
        for layer in 0..=2 {
            let same = shifted_logits(&m, &ids, None, "en", layer, &shift, 0.0).unwrap();
            assert!(same.allclose(&plain, 1e-6, 1e-6, false), "layer {layer}, pre-LN {pre_ln}");
            let moved = shifted_logits(&m, &ids, None, "en", layer, &shift, 3.0).unwrap();
            assert!(!moved.allclose(&plain, 1e-3, 1e-3, false), "layer {layer}, pre-LN {pre_ln}");
        }
        // At the last layer the shift acts on the head input only: equal to the head on shifted states.
        let out = m.encoder.forward(&ids, None, "en", false).unwrap();
        let manual = m.logits(&(out.last() + &shift * 3.0), "en").unwrap();
        let top = shifted_logits(&m, &ids, None, "en", 2, &shift, 3.0).unwrap();
        assert!(top.allclose(&manual, 1e-5, 1e-5, false));
        assert!(shifted_logits(&m, &ids, None, "en", 3, &shift, 1.0).unwrap_err().to_string().contains("beyond"));
        let bad = Tensor::ones([8], (Kind::Float, tch::Device::Cpu));
        assert!(shifted_logits(&m, &ids, None, "en", 0, &bad, 1.0).unwrap_err().to_string().contains("expected [16]"));
    }

    #[test]
    fn predictions_never_pick_excluded_tokens() {
        let logits = Tensor::zeros([1, 2, 6], (Kind::Float, tch::Device::Cpu));
        let _ = logits.get(0).get(0).get(2).fill_(5.0);
        let _ = logits.get(0).get(1).get(4).fill_(5.0);
        let _ = logits.get(0).get(1).get(1).fill_(4.0);
        let p = predict_tokens(&logits, &[]);
        assert_eq!(Vec::<i64>::try_from(p.view([-1])).unwrap(), [2, 4]);
        let p = predict_tokens(&logits, &[2, 4]);
        let p = Vec::<i64>::try_from(p.view([-1])).unwrap();
        assert_eq!(p[1], 1);
        assert!(p[0] != 2 && p[0] != 4);
    }

    #[test]
    fn layer_means_match_a_hand_computation() {
        let h0 = Tensor::from_slice(&[1f32, 2., 3., 4., 100., 100.]).view([1, 3, 2]);
        let h1 = Tensor::from_slice(&[0f32, 0., 2., 2., 9., 9.]).view([1, 3, 2]);
        let keep = Tensor::from_slice(&[1i64, 1, 0]).view([1, 3]);
        let mut acc = LayerMeans::new(2, 2);
        acc.add(&[h0, h1], &keep).unwrap();
        assert_eq!(acc.count(), 2);
        let m = Vec::<f32>::try_from(acc.means().unwrap().view([-1])).unwrap();
        assert_eq!(m, [2., 3., 1., 1.]);
        assert!(LayerMeans::new(2, 2).means().unwrap_err().to_string().contains("no tokens"));
    }

    #[test]
    fn convert_rate_excludes_shared_tokens_and_counts_tokens_in_neither_set() {
        let src: HashSet<u32> = [10, 11, 12, 50].into();
        let tgt: HashSet<u32> = [20, 21, 50].into();
        // 2 target-only, 1 source-only, 2 shared, 1 in neither: CR = 2 / (6 − 2) = 1/2 (the formula of Liu §4.2.2;
        // dropping the token in neither set would give 2/3).
        let cr = convert_rate(&[20, 21, 10, 50, 50, 99], &src, &tgt);
        assert_eq!((cr.target_only, cr.source_only, cr.shared, cr.neither), (2, 1, 2, 1));
        assert!((cr.rate - 0.5).abs() < 1e-12);
        // Only tokens in neither set: nothing converted, CR = 0 (not undefined).
        assert_eq!(convert_rate(&[98, 99], &src, &tgt).rate, 0.0);
        assert!(convert_rate(&[50, 50], &src, &tgt).rate.is_nan());
        assert!(convert_rate(&[], &src, &tgt).rate.is_nan());
    }

    #[test]
    fn symbol_tokens_have_no_letter() {
        for t in [",</w>", "，", "。</w>", "1990</w>", "##.", "en:.</w>", "▁-", "'", ":</w>", "", "</w>"] {
            assert!(is_symbol_token(t), "{t}");
        }
        for t in ["the</w>", "的", "##ing", "fr:la</w>", "и</w>", "▁maison", "a1", "zh:我</w>", "é"] {
            assert!(!is_symbol_token(t), "{t}");
        }
    }

    #[test]
    fn translation_counts_of_a_constructed_sentence() {
        let src: HashSet<u32> = [10, 11, 50, 51].into();
        let tgt: HashSet<u32> = [20, 21, 22, 50, 51].into();
        let symbol = |id: u32| id == 22 || id == 51;
        // Predictions: 20 20 (converted, 'maison'), 22 (converted, ','), 10 (source), 51 (shared ','), 99 (neither).
        let pred = [20, 20, 22, 10, 51, 99];
        let reference = [20, 51, 21, 10];
        let c = TranslationCounts::of_sentence(&pred, &reference, &src, &tgt, symbol);
        assert_eq!((c.target_only, c.source_only, c.shared, c.neither), (3, 1, 1, 1));
        assert_eq!(c.target_only_symbols, 1);
        // Clipped: 20 once (reference has one), 51 once, 10 once; 22 and 99 not in the reference.
        assert_eq!((c.matched, c.target_only_matched, c.reference), (3, 1, 4));
        assert_eq!((c.predictions(), c.convert_denominator()), (6, 5));
        // The token in neither set counts in the denominator: 3 / 5.
        assert_eq!(c.convert_rate(), Some(0.6));
        assert_eq!(c.convert_rate(), Some(convert_rate(&pred, &src, &tgt).rate));
        let mut sum = c;
        sum.add(&TranslationCounts::of_sentence(&[50, 50], &[50], &src, &tgt, symbol));
        assert_eq!((sum.shared, sum.matched, sum.predictions(), sum.convert_denominator()), (3, 4, 8, 5));
        assert_eq!(TranslationCounts::of_sentence(&[50], &[], &src, &tgt, symbol).convert_rate(), None);
    }

    #[test]
    fn bleu1_hand_computed() {
        // hyp "the the cat" vs ref "the cat sat": clipped matches the(1) + cat(1) = 2 of 3, c = r: BLEU-1 = 2/3.
        let h = vec![vec!["the", "the", "cat"]];
        let r = vec![vec!["the", "cat", "sat"]];
        assert!((bleu1(&h, &r).unwrap() - 2.0 / 3.0).abs() < 1e-12);
        // Short hypothesis "cat" vs "the cat sat": precision 1, BP = exp(1 - 3/1).
        let b = bleu1(&[vec!["cat"]], &[vec!["the", "cat", "sat"]]).unwrap();
        assert!((b - (-2f64).exp()).abs() < 1e-12);
        assert_eq!(bleu1::<&str>(&[vec![]], &[vec!["a"]]).unwrap(), 0.0);
        assert!(bleu1(&h, &[]).unwrap_err().to_string().contains("1 hypotheses but 0 references"));
    }

    #[test]
    fn grid_and_best() {
        let g = LayerAlphaGrid::compute(&[0, 1], &[0.0, 1.0, 2.0], |l, a| Ok(l as f64 + a)).unwrap();
        assert_eq!(g.values, [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]);
        assert_eq!(g.best(), Some((1, 2.0, 3.0)));
    }
}
