//! Batched, memory-bounded extraction of pooled hidden states.
//!
//! Sequences are sorted by length and packed into batches of at most `batch_tokens` padded tokens; each batch runs
//! once under `no_grad` (dropout off) and its hidden states are pooled at once, so only one batch of
//! `[layers + 1, batch, seq, hidden]` activations is alive at a time. Results come back in input order.
//!
//! Pooling (of every layer `l`, 0 = embedding output):
//! * `SentenceMean`: `s_l = mean_{t : word_of[t] ≠ None} h_l[t]` — special tokens ([CLS], [SEP]) excluded.
//! * `WordMean` / `WordFirst`: for each word `w`, the mean of `h_l[t]` over its subwords `t` (`word_of[t] = w`), or
//!   `h_l` at its first subword. Rows are the words of all sequences in order.
use tch::{Device, Kind, Tensor};

use crate::error::{Error, Result};
use crate::model::tokenizer::Tokenized;
use crate::model::MlmModel;

/// How to pool a sequence's subword vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    SentenceMean,
    WordMean,
    WordFirst,
}

/// How to run an extraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extraction {
    pub pooling: Pooling,
    /// Upper bound on padded tokens per forward pass (memory bound).
    pub batch_tokens: usize,
    pub device: Device,
}

impl Extraction {
    /// `pooling` on the CPU with a budget of 8,192 tokens per batch.
    pub fn cpu(pooling: Pooling) -> Self {
        Extraction { pooling, batch_tokens: 8192, device: Device::Cpu }
    }
}

/// Pooling weights of one sequence padded to `seq`: `[rows, seq]`, each row summing to 1.
fn weights(t: &Tokenized, pooling: Pooling, seq: usize) -> Result<Vec<Vec<f32>>> {
    if t.ids.len() != t.word_of.len() {
        return Err(Error::Invalid(format!("{} ids but {} word indices", t.ids.len(), t.word_of.len())));
    }
    let mut rows = match pooling {
        Pooling::SentenceMean => {
            let mut r = vec![0f32; seq];
            let n = t.word_of.iter().filter(|w| w.is_some()).count();
            if n == 0 {
                return Err(Error::Invalid("a sequence has no non-special tokens to pool".into()));
            }
            for (i, w) in t.word_of.iter().enumerate() {
                if w.is_some() {
                    r[i] = 1.0 / n as f32;
                }
            }
            vec![r]
        }
        Pooling::WordMean | Pooling::WordFirst => {
            let mut rows = vec![vec![0f32; seq]; t.n_words()];
            for (i, w) in t.word_of.iter().enumerate() {
                if let Some(w) = *w {
                    if pooling == Pooling::WordMean || rows[w].iter().all(|&x| x == 0.0) {
                        rows[w][i] = 1.0;
                    }
                }
            }
            for (w, r) in rows.iter_mut().enumerate() {
                let s: f32 = r.iter().sum();
                if s == 0.0 {
                    return Err(Error::Invalid(format!("word {w} of a sequence has no subword")));
                }
                r.iter_mut().for_each(|x| *x /= s);
            }
            rows
        }
    };
    rows.shrink_to_fit();
    Ok(rows)
}

/// Pooled hidden states of every layer for `texts` in language `lang`.
///
/// # Shapes
/// → `[layers + 1, rows, hidden]` f32 on the CPU; rows = texts (`SentenceMean`) or all words in order.
pub fn pooled_layers(model: &MlmModel, lang: &str, texts: &[Tokenized], how: &Extraction) -> Result<Tensor> {
    let Extraction { pooling, batch_tokens, device } = *how;
    if texts.is_empty() {
        return Err(Error::Invalid("feature extraction: no texts".into()));
    }
    let max_pos = model.config().max_positions;
    if let Some((i, t)) = texts.iter().enumerate().find(|(_, t)| t.ids.len() > max_pos || t.ids.is_empty()) {
        return Err(Error::Invalid(format!(
            "text {} has {} tokens; the model takes 1..={max_pos}",
            i + 1,
            t.ids.len()
        )));
    }
    let rows_of: Vec<usize> =
        texts.iter().map(|t| if pooling == Pooling::SentenceMean { 1 } else { t.n_words() }).collect();
    let mut starts = vec![0usize; texts.len()];
    let mut total = 0;
    for (i, r) in rows_of.iter().enumerate() {
        starts[i] = total;
        total += r;
    }
    let (layers, hidden) = (model.config().layers as i64 + 1, model.config().hidden as i64);
    let mut out = Tensor::zeros([layers, total as i64, hidden], (Kind::Float, Device::Cpu));
    let bar = crate::progress::bar(texts.len() as u64, "features [{bar:30}] {pos}/{len} texts, eta {eta}");
    let _guard = tch::no_grad_guard();
    let lens: Vec<usize> = texts.iter().map(|t| t.ids.len()).collect();
    for batch in crate::nn::batch::length_batches(&lens, batch_tokens) {
        let seqs: Vec<&[i64]> = batch.iter().map(|&i| texts[i].ids.as_slice()).collect();
        let (ids, mask, seq) = crate::nn::batch::padded(&seqs, 0, device);
        // Pooling weights per batch row, padded to the most rows any sequence of the batch has: [batch, r_max, seq].
        let per_text: Vec<Vec<Vec<f32>>> =
            batch.iter().map(|&i| weights(&texts[i], pooling, seq)).collect::<Result<_>>()?;
        let r_max = per_text.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut w = vec![0f32; batch.len() * r_max * seq];
        let (mut src, mut dest) = (Vec::new(), Vec::new()); // row of [batch · r_max], destination row
        for (b, (&i, rows)) in batch.iter().zip(&per_text).enumerate() {
            for (r, row) in rows.iter().enumerate() {
                let at = (b * r_max + r) * seq;
                w[at..at + seq].copy_from_slice(row);
                src.push((b * r_max + r) as i64);
                dest.push((starts[i] + r) as i64);
            }
        }
        let wt = Tensor::from_slice(&w).view([batch.len() as i64, r_max as i64, seq as i64]).to_device(device);
        let src = Tensor::from_slice(&src).to_device(device);
        let hs = model.encoder.forward(&ids, Some(&mask), lang, false)?.hidden_states;
        // Each layer: [batch, r_max, seq] × [batch, seq, hidden] → [batch, r_max, hidden]; keep the real rows.
        let pooled: Vec<Tensor> =
            hs.iter().map(|h| wt.bmm(&h.to_kind(Kind::Float)).view([-1, hidden]).index_select(0, &src)).collect();
        let pooled = Tensor::stack(&pooled, 0); // [layers+1, rows, hidden]
        let _ = out.index_copy_(1, &Tensor::from_slice(&dest), &pooled.to_device(Device::Cpu));
        bar.inc(batch.len() as u64);
    }
    bar.finish_and_clear();
    Ok(out)
}

/// Pooled hidden states of every layer of `m` for `texts` in `lang`: each text tokenized as words, cut to the model's
/// positions (the final special kept, [`Tokenized::fit`]), then [`pooled_layers`] on the model's device. Returns the
/// stack and how many texts were cut. A text without tokens is an error naming it (1-based).
///
/// # Shapes
/// → `[layers + 1, rows, d]` (rows: texts for sentence pooling, words for word pooling)
pub fn pooled_texts(
    m: &crate::model::load::LoadedModel,
    texts: &[String],
    lang: &str,
    pooling: Pooling,
) -> Result<(Tensor, usize)> {
    if texts.is_empty() {
        return Err(Error::Invalid("features: no texts".into()));
    }
    let max = m.config.max_positions;
    let mut cut = 0;
    let mut tokenized = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let enc = m.tokenizer.encode_words(text, lang).map_err(|e| Error::Invalid(format!("text {}: {e}", i + 1)))?;
        if enc.tokenized.word_of.iter().all(Option::is_none) {
            return Err(Error::Invalid(format!("features: text {} ({lang}) has no tokens: {text:?}", i + 1)));
        }
        let (t, was_cut) = enc.tokenized.fit(max);
        cut += was_cut as usize;
        tokenized.push(t);
    }
    let how = Extraction { device: m.device(), ..Extraction::cpu(pooling) };
    Ok((pooled_layers(&m.model, lang, &tokenized, &how)?, cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelConfig;

    fn tiny() -> (tch::nn::VarStore, MlmModel) {
        let _rng = crate::device::torch_rng_lock();
        tch::manual_seed(5);
        let vs = tch::nn::VarStore::new(Device::Cpu);
        let cfg =
            ModelConfig { vocab_size: 30, hidden: 8, layers: 2, heads: 2, max_positions: 12, ..Default::default() };
        let m = MlmModel::new(&vs.root(), &cfg).unwrap();
        (vs, m)
    }

    fn tok(ids: &[i64], words: &[Option<usize>]) -> Tokenized {
        Tokenized { ids: ids.to_vec(), word_of: words.to_vec() }
    }

    #[test]
    fn pooling_matches_a_direct_forward_whatever_the_batching() {
        let (_vs, m) = tiny();
        let texts = vec![
            tok(&[2, 10, 11, 12, 3], &[None, Some(0), Some(0), Some(1), None]),
            tok(&[2, 13, 3], &[None, Some(0), None]),
            tok(&[2, 14, 15, 16, 17, 18, 3], &[None, Some(0), Some(1), Some(1), Some(1), Some(2), None]),
        ];
        let direct = |t: &Tokenized| {
            let ids = Tensor::from_slice(&t.ids).view([1, -1]);
            let hs = m.encoder.forward(&ids, None, "en", false).unwrap().hidden_states;
            Tensor::stack(&hs, 0).squeeze_dim(1) // [layers+1, seq, hidden]
        };
        for budget in [1, 10, 1000] {
            let s = pooled_layers(
                &m,
                "en",
                &texts,
                &Extraction { pooling: Pooling::SentenceMean, batch_tokens: budget, device: Device::Cpu },
            )
            .unwrap();
            assert_eq!(s.size(), [3, 3, 8]);
            for (i, t) in texts.iter().enumerate() {
                let h = direct(t);
                let n = t.ids.len() as i64;
                let want = h.narrow(1, 1, n - 2).mean_dim([1i64].as_slice(), false, Kind::Float);
                assert!(s.select(1, i as i64).allclose(&want, 1e-5, 1e-5, false), "budget {budget}, text {i}");
            }
            let w = pooled_layers(
                &m,
                "en",
                &texts,
                &Extraction { pooling: Pooling::WordMean, batch_tokens: budget, device: Device::Cpu },
            )
            .unwrap();
            assert_eq!(w.size(), [3, 2 + 1 + 3, 8]);
            let h2 = direct(&texts[2]);
            let want = h2.narrow(1, 2, 3).mean_dim([1i64].as_slice(), false, Kind::Float); // word 1 of text 2
            assert!(w.select(1, 4).allclose(&want, 1e-5, 1e-5, false));
            let f = pooled_layers(
                &m,
                "en",
                &texts,
                &Extraction { pooling: Pooling::WordFirst, batch_tokens: budget, device: Device::Cpu },
            )
            .unwrap();
            assert!(f.select(1, 4).allclose(&h2.select(1, 2), 1e-5, 1e-5, false));
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let (_vs, m) = tiny();
        assert!(pooled_layers(
            &m,
            "en",
            &[],
            &Extraction { pooling: Pooling::SentenceMean, batch_tokens: 10, device: Device::Cpu }
        )
        .is_err());
        let long = tok(&[5; 13], &[Some(0); 13]);
        let e = pooled_layers(
            &m,
            "en",
            &[long],
            &Extraction { pooling: Pooling::SentenceMean, batch_tokens: 10, device: Device::Cpu },
        )
        .unwrap_err();
        assert!(e.to_string().contains("1..=12"), "{e}");
        let specials = tok(&[2, 3], &[None, None]);
        assert!(pooled_layers(
            &m,
            "en",
            &[specials],
            &Extraction { pooling: Pooling::SentenceMean, batch_tokens: 10, device: Device::Cpu }
        )
        .is_err());
    }
}
