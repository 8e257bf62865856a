//! Language-specific information in a multilingual MLM (Liu, Hsu, Chuang, Li & Lee 2020, "A Study of Cross-Lingual
//! Ability and Language-specific Information in Multilingual BERT", §4; also arXiv:2010.10041).
//!
//! * **Mean of language** `R_l(L)`: the mean, over every non-special token of a corpus in language `L`, of the
//!   layer-`l` hidden vector ([`LayerMeans`], accumulated in f64).
//! * **Mean-difference shift (MDS)** `D_l = R_l(L2) − R_l(L1)`.
//! * **Unsupervised token translation**: feed a sentence of `L1`, add `α · D_l` to every position of the layer-`l`
//!   hidden states (`l = 0` is the embedding output), run the remaining layers, and decode every position with the
//!   MLM head ([`shifted_logits`], [`predict_tokens`]); `α = 0` reconstructs the input.
//! * **Convert rate** ([`convert_rate`]): with `T1`, `T2` the token sets of the two languages (the ids that occur in
//!   each language's corpus), tokens in both sets are ambiguous and excluded from both terms:
//!   `CR = |{predictions ∈ T2 \ T1}| / |{predictions ∈ T1 Δ T2}|`, counted over all predicted positions
//!   (specials excluded). `CR` near 0 means the output stayed in `L1`; near 1, it moved to `L2`.
//! * **BLEU-1** ([`bleu1`]): corpus-level clipped unigram precision times the brevity penalty (Papineni et al.
//!   2002), `BP · Σ_s Σ_w min(c_hyp(w), c_ref(w)) / Σ_s |hyp_s|`, `BP = exp(1 − r/c)` when the total hypothesis
//!   length `c` is below the reference length `r`, else 1.
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
    let enc = &model.encoder;
    let n_layers = enc.layers.len();
    if layer > n_layers {
        return Err(Error::Invalid(format!("shift layer {layer} is beyond the model's {n_layers} layers")));
    }
    let hidden = model.config().hidden as i64;
    if shift.size() != [hidden] {
        return Err(Error::Invalid(format!("shift vector has shape {:?}, expected [{hidden}]", shift.size())));
    }
    let layers = enc.layers.iter().map(|l| l.get(lang)).collect::<Result<Vec<_>>>()?;
    let delta = shift.to_device(input_ids.device()).to_kind(Kind::Float) * alpha; // [hidden]
    let mut x = enc.embeddings.forward(input_ids, lang, false)?; // [batch, seq, hidden]
    for (i, l) in layers.iter().enumerate() {
        let input = if i == layer { &x + &delta } else { x };
        x = l.forward(&input, attention_mask, false);
    }
    Ok(if layer == n_layers { &x + &delta } else { x })
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
    /// `|T2 \ T1|` predictions over `|T1 Δ T2|` predictions; NaN when no prediction is language-exclusive.
    pub rate: f64,
    /// Predictions only in the target set.
    pub target_only: u64,
    /// Predictions only in the source set.
    pub source_only: u64,
    /// Predictions in both sets (excluded).
    pub shared: u64,
    /// Predictions in neither set (excluded).
    pub neither: u64,
}

/// Convert rate of `predictions` from the `source` token set to the `target` token set.
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
    let rate = if t + s == 0 { f64::NAN } else { t as f64 / (t + s) as f64 };
    ConvertRate { rate, target_only: t, source_only: s, shared: both, neither }
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

    fn tiny() -> (VarStore, MlmModel) {
        tch::manual_seed(3);
        let vs = VarStore::new(tch::Device::Cpu);
        let cfg =
            ModelConfig { vocab_size: 40, hidden: 16, layers: 2, heads: 2, max_positions: 16, ..Default::default() };
        let m = MlmModel::new(&vs.root(), &cfg).unwrap();
        (vs, m)
    }

    #[test]
    fn zero_shift_equals_the_plain_forward_and_a_shift_changes_it() {
        let (_vs, m) = tiny();
        let ids = Tensor::from_slice(&[2i64, 7, 9, 11, 3, 2, 8, 12, 13, 3]).view([2, 5]);
        let plain = {
            let out = m.encoder.forward(&ids, None, "en", false).unwrap();
            m.logits(out.last(), "en").unwrap()
        };
        let shift = Tensor::ones([16], (Kind::Float, tch::Device::Cpu));
        for layer in 0..=2 {
            let same = shifted_logits(&m, &ids, None, "en", layer, &shift, 0.0).unwrap();
            assert!(same.allclose(&plain, 1e-6, 1e-6, false), "layer {layer}");
            let moved = shifted_logits(&m, &ids, None, "en", layer, &shift, 3.0).unwrap();
            assert!(!moved.allclose(&plain, 1e-3, 1e-3, false), "layer {layer}");
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
    fn convert_rate_excludes_shared_tokens_from_both_terms() {
        let src: HashSet<u32> = [10, 11, 12, 50].into();
        let tgt: HashSet<u32> = [20, 21, 50].into();
        // 2 target-only, 1 source-only, 2 shared, 1 in neither: CR = 2 / 3.
        let cr = convert_rate(&[20, 21, 10, 50, 50, 99], &src, &tgt);
        assert_eq!((cr.target_only, cr.source_only, cr.shared, cr.neither), (2, 1, 2, 1));
        assert!((cr.rate - 2.0 / 3.0).abs() < 1e-12);
        assert!(convert_rate(&[50, 99], &src, &tgt).rate.is_nan());
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
