//! Word vectors for word-level alignment (Wu, Conneau et al. 2020 §5.1, Figure 4).
//!
//! * **Corpus-averaged contextual word vectors** (§5.1.1): for each target word `w` and layer `l`,
//!   `v_l(w) = mean over occurrences of w in the corpus of the word-pooled layer-l vector of that occurrence`.
//!   Texts are processed in chunks, so memory is bounded by one chunk's words plus the `[layers+1, V, hidden]` sums.
//! * **Non-contextual vectors**: the rows of the input embedding matrix for words that are a single subword.
use std::collections::HashMap;

use tch::{Device, Kind, Tensor};

use super::extract::{pooled_layers, Extraction, Pooling};
use crate::error::{Error, Result};
use crate::model::tokenizer::Tokenized;
use crate::model::MlmModel;

/// Texts handed to one extraction call.
const CHUNK_TEXTS: usize = 256;

/// Corpus-averaged contextual vectors of `targets`.
///
/// `texts[i]` is tokenized from the words `words[i]` (word `j` of the text is `words[i][j]`). Returns the means
/// `[layers + 1, targets, hidden]` (zero rows for targets never seen) and the occurrence count of each target.
pub fn corpus_averaged(
    model: &MlmModel,
    lang: &str,
    texts: &[Tokenized],
    words: &[Vec<String>],
    targets: &[String],
    how: &Extraction,
) -> Result<(Tensor, Vec<u64>)> {
    if texts.len() != words.len() {
        return Err(Error::Invalid(format!("{} tokenized texts but {} word lists", texts.len(), words.len())));
    }
    if how.pooling == Pooling::SentenceMean {
        return Err(Error::Invalid("corpus-averaged word vectors need word pooling (mean or first)".into()));
    }
    let index: HashMap<&str, i64> = targets.iter().enumerate().map(|(i, w)| (w.as_str(), i as i64)).collect();
    let (layers, hidden) = (model.config().layers as i64 + 1, model.config().hidden as i64);
    let mut sums = Tensor::zeros([layers, targets.len() as i64, hidden], (Kind::Double, Device::Cpu));
    let mut counts = vec![0u64; targets.len()];
    for (chunk, chunk_words) in texts.chunks(CHUNK_TEXTS).zip(words.chunks(CHUNK_TEXTS)) {
        // Only texts containing a target are worth a forward pass.
        let mut keep = Vec::new();
        let mut dest = Vec::new();
        let mut rows = Vec::new();
        let mut row = 0i64;
        for (t, ws) in chunk.iter().zip(chunk_words) {
            if t.n_words() != ws.len() {
                return Err(Error::Invalid(format!("a text has {} words but {} word strings", t.n_words(), ws.len())));
            }
            if !ws.iter().any(|w| index.contains_key(w.as_str())) {
                continue;
            }
            for w in ws {
                if let Some(&i) = index.get(w.as_str()) {
                    rows.push(row);
                    dest.push(i);
                    counts[i as usize] += 1;
                }
                row += 1;
            }
            keep.push(t.clone());
        }
        if keep.is_empty() {
            continue;
        }
        let pooled = pooled_layers(model, lang, &keep, how)?; // [layers+1, words, hidden]
        let picked = pooled.index_select(1, &Tensor::from_slice(&rows)).to_kind(Kind::Double);
        let _ = sums.index_add_(1, &Tensor::from_slice(&dest), &picked);
    }
    let denom: Vec<f64> = counts.iter().map(|&c| c.max(1) as f64).collect();
    let means = &sums / Tensor::from_slice(&denom).view([1, -1, 1]);
    Ok((means.to_kind(Kind::Float), counts))
}

/// Input-embedding rows of `ids` for `lang` (non-contextual vectors).
///
/// # Shapes
/// → `[ids, hidden]` f32 on the CPU
pub fn embedding_rows(model: &MlmModel, lang: &str, ids: &[i64]) -> Result<Tensor> {
    let emb = model.encoder.embeddings.word_matrix(lang)?;
    let vocab = emb.size()[0];
    if let Some(bad) = ids.iter().find(|&&i| i < 0 || i >= vocab) {
        return Err(Error::Invalid(format!("token id {bad} is outside the vocabulary of {vocab}")));
    }
    let idx = Tensor::from_slice(ids).to_device(emb.device());
    Ok(tch::no_grad(|| emb.index_select(0, &idx)).to_device(Device::Cpu).to_kind(Kind::Float))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;

    #[test]
    fn averages_over_occurrences() {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(9);
        let vs = tch::nn::VarStore::new(Device::Cpu);
        let cfg =
            ModelConfig { vocab_size: 30, hidden: 8, layers: 1, heads: 2, max_positions: 12, ..Default::default() };
        let m = MlmModel::new(&vs.root(), &cfg).unwrap();
        let t1 = Tokenized { ids: vec![2, 10, 11, 3], word_of: vec![None, Some(0), Some(1), None] };
        let t2 = Tokenized { ids: vec![2, 12, 10, 3], word_of: vec![None, Some(0), Some(1), None] };
        let t3 = Tokenized { ids: vec![2, 13, 3], word_of: vec![None, Some(0), None] };
        let words = vec![vec!["a".to_string(), "b".to_string()], vec!["c".into(), "a".into()], vec!["d".into()]];
        let targets = vec!["a".to_string(), "z".to_string()];
        let texts = vec![t1.clone(), t2.clone(), t3];
        let (means, counts) =
            corpus_averaged(&m, "en", &texts, &words, &targets, &Extraction::cpu(Pooling::WordMean)).unwrap();
        assert_eq!(counts, [2, 0]);
        let p = pooled_layers(&m, "en", &[t1, t2], &Extraction::cpu(Pooling::WordMean)).unwrap();
        let want = (p.select(1, 0) + p.select(1, 3)) / 2.0;
        assert!(means.select(1, 0).allclose(&want, 1e-5, 1e-5, false));
        assert_eq!(means.select(1, 1).abs().sum(Kind::Float).double_value(&[]), 0.0);
        let rows = embedding_rows(&m, "en", &[10, 11]).unwrap();
        assert_eq!(rows.size(), [2, 8]);
        assert!(embedding_rows(&m, "en", &[99]).is_err());
    }
}
