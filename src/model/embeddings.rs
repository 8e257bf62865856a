//! Input embeddings of BERT (Devlin et al. 2019): learned token + learned position embeddings, LayerNorm,
//! dropout. With the *Sep Emb* ablation of Wu et al. (2020, §4.3: "the embedding layers (including positional
//! embeddings)") each language has its own word and position embeddings, at
//! `embeddings.lang.{lang}.word_embeddings.weight` and `embeddings.lang.{lang}.position_embeddings.weight`; the
//! LayerNorm (and an imported model's token-type row) stays shared.
//!
//! Models imported from Hugging Face also own `token_type_embeddings` (`type_vocab_size > 0`); every position
//! then gets its row 0 added, which is what HF BERT computes when it is called without `token_type_ids`:
//! `x = LayerNorm(W_word[id] + W_pos[t] + W_type[0])`.
use tch::{nn, nn::Module, Tensor};

use super::config::ModelConfig;
use super::sharing::{layer_norm, PerLanguage, WEIGHT_INIT};
use crate::error::{Error, Result};

/// Token + position embeddings followed by LayerNorm and dropout.
#[derive(Debug)]
pub struct Embeddings {
    /// `word_embeddings`, shared or per language; each `[vocab, hidden]`.
    pub word: PerLanguage<nn::Embedding>,
    /// `position_embeddings`, shared or per language (with the word embeddings); each `[max_positions, hidden]`.
    pub position: PerLanguage<nn::Embedding>,
    /// `token_type_embeddings`, `[type_vocab_size, hidden]`, when the config has `type_vocab_size > 0`.
    pub token_type: Option<nn::Embedding>,
    /// `LayerNorm`.
    pub layer_norm: nn::LayerNorm,
    dropout: f64,
    max_positions: usize,
}

impl Embeddings {
    /// Builds the embeddings under `p` (for HF names, `p` is `bert.embeddings`).
    pub fn new(p: &nn::Path, cfg: &ModelConfig) -> Result<Self> {
        let ecfg = nn::EmbeddingConfig { ws_init: WEIGHT_INIT, ..Default::default() };
        let (v, d) = (cfg.vocab_size as i64, cfg.hidden as i64);
        let word = PerLanguage::build(p, cfg.sharing.sep_emb, &cfg.languages, |q| {
            Ok(nn::embedding(q / "word_embeddings", v, d, ecfg))
        })?;
        let position = PerLanguage::build(p, cfg.sharing.sep_emb, &cfg.languages, |q| {
            Ok(nn::embedding(q / "position_embeddings", cfg.max_positions as i64, d, ecfg))
        })?;
        let token_type = (cfg.type_vocab_size > 0)
            .then(|| nn::embedding(p / "token_type_embeddings", cfg.type_vocab_size as i64, d, ecfg));
        let layer_norm = layer_norm(&(p / "LayerNorm"), cfg.hidden, cfg.layer_norm_eps);
        Ok(Embeddings {
            word,
            position,
            token_type,
            layer_norm,
            dropout: cfg.dropout,
            max_positions: cfg.max_positions,
        })
    }

    /// The word-embedding matrix used for `lang` (also the tied output softmax).
    ///
    /// # Shapes
    /// returns `[vocab, hidden]`
    pub fn word_matrix(&self, lang: &str) -> Result<&Tensor> {
        Ok(&self.word.get(lang)?.ws)
    }

    /// Embeds `input_ids` of one language.
    ///
    /// # Shapes
    /// `input_ids`: `[batch, seq]` (i64, `seq <= max_positions`) → `[batch, seq, hidden]`
    pub fn forward(&self, input_ids: &Tensor, lang: &str, train: bool) -> Result<Tensor> {
        let word = self.word.get(lang)?;
        let size = input_ids.size();
        if size.len() != 2 {
            return Err(Error::Invalid(format!("input_ids must be [batch, seq], got shape {size:?}")));
        }
        let seq = size[1];
        if seq as usize > self.max_positions {
            return Err(Error::Invalid(format!("sequence length {seq} exceeds max_positions {}", self.max_positions)));
        }
        if input_ids.kind() != tch::Kind::Int64 {
            return Err(Error::Invalid(format!("input_ids must be i64, got {:?}", input_ids.kind())));
        }
        let vocab = word.ws.size()[0];
        if input_ids.numel() > 0 {
            let (lo, hi) = (input_ids.min().int64_value(&[]), input_ids.max().int64_value(&[]));
            if lo < 0 || hi >= vocab {
                return Err(Error::Invalid(format!("token ids must be in [0, {vocab}), found range [{lo}, {hi}]")));
            }
        }
        let positions = Tensor::arange(seq, (tch::Kind::Int64, input_ids.device())).unsqueeze(0); // [1, seq]
        let mut x = word.forward(input_ids) + self.position.get(lang)?.forward(&positions); // [batch, seq, hidden]
        if let Some(tt) = &self.token_type {
            x += tt.ws.get(0); // [hidden], broadcast over batch and positions
        }
        Ok(crate::nn::dropout::dropout(&self.layer_norm.forward(&x), self.dropout, train))
    }
}
