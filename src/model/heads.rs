//! The masked-LM head of BERT (Devlin et al. 2019): `dense → GELU → LayerNorm`, then a decoder tied to the
//! word embeddings plus an output bias. With *Sep Emb* (Wu et al. 2020, §4) each language's softmax uses that
//! language's embeddings and its own bias (`cls.predictions.lang.{lang}.bias`). HF names:
//! `cls.predictions.transform.dense`, `cls.predictions.transform.LayerNorm`, `cls.predictions.bias`
//! (and `cls.predictions.decoder.weight` when the output is untied).
use tch::{nn, nn::Module, Kind, Reduction, Tensor};

use super::config::ModelConfig;
use super::encoder::Encoder;
use super::sharing::{dense, layer_norm, PerLanguage, WEIGHT_INIT};
use crate::error::{Error, Result};
use crate::text::masking::IGNORE_INDEX;

/// Output bias and, when untied, the decoder matrix of one language (or of all).
#[derive(Debug)]
pub struct Decoder {
    /// `bias`, `[vocab]`.
    pub bias: Tensor,
    /// `decoder.weight`, `[vocab, hidden]`; `None` when tied to the word embeddings.
    pub weight: Option<Tensor>,
}

/// BERT `cls.predictions` head.
#[derive(Debug)]
pub struct MlmHead {
    /// `transform.dense`.
    pub dense: nn::Linear,
    /// `transform.LayerNorm`.
    pub layer_norm: nn::LayerNorm,
    /// Bias (and untied decoder), shared or per language (per language exactly when `sep_emb`).
    pub decoder: PerLanguage<Decoder>,
}

impl MlmHead {
    /// Builds the head under `p` (HF: `cls.predictions`).
    pub fn new(p: &nn::Path, cfg: &ModelConfig) -> Result<Self> {
        let t = p / "transform";
        let (v, d) = (cfg.vocab_size as i64, cfg.hidden as i64);
        let decoder = PerLanguage::build(p, cfg.sharing.sep_emb, &cfg.languages, |q| {
            Ok(Decoder {
                bias: q.var("bias", &[v], nn::Init::Const(0.0)),
                weight: (!cfg.tie_output).then(|| (q / "decoder").var("weight", &[v, d], WEIGHT_INIT)),
            })
        })?;
        Ok(MlmHead {
            dense: dense(&(&t / "dense"), cfg.hidden, cfg.hidden),
            layer_norm: layer_norm(&(&t / "LayerNorm"), cfg.hidden, cfg.layer_norm_eps),
            decoder,
        })
    }

    /// Vocabulary logits; `embeddings` is the tied word-embedding matrix of the batch's language.
    ///
    /// # Shapes
    /// `hidden`: `[batch, seq, hidden]`; `embeddings`: `[vocab, hidden]` → `[batch, seq, vocab]`
    pub fn forward(&self, hidden: &Tensor, embeddings: &Tensor, lang: &str) -> Result<Tensor> {
        let dec = self.decoder.get(lang)?;
        let h = self.layer_norm.forward(&self.dense.forward(hidden).gelu("none")); // [batch, seq, hidden]
        let w = dec.weight.as_ref().unwrap_or(embeddings); // [vocab, hidden]
        Ok(h.matmul(&w.tr()) + &dec.bias)
    }
}

/// Masked language model: encoder (`bert.…`) + head (`cls.predictions.…`), HF `BertForMaskedLM` names.
#[derive(Debug)]
pub struct MlmModel {
    /// `bert`.
    pub encoder: Encoder,
    /// `cls.predictions`.
    pub head: MlmHead,
}

impl MlmModel {
    /// Validates `cfg` and builds the model under `p` (usually `vs.root()`).
    pub fn new(p: &nn::Path, cfg: &ModelConfig) -> Result<Self> {
        let _rng = crate::device::torch_rng_lock(); // initialisation draws from libtorch's global generator
        let encoder = Encoder::new(&(p / "bert"), cfg)?;
        let head = MlmHead::new(&(p / "cls" / "predictions"), cfg)?;
        Ok(MlmModel { encoder, head })
    }

    /// The configuration the model was built from.
    pub fn config(&self) -> &ModelConfig {
        self.encoder.config()
    }

    /// Vocabulary logits for hidden states of language `lang`.
    ///
    /// # Shapes
    /// `hidden`: `[batch, seq, hidden]` → `[batch, seq, vocab]`
    pub fn logits(&self, hidden: &Tensor, lang: &str) -> Result<Tensor> {
        let emb = self.encoder.embeddings.word_matrix(lang)?;
        self.head.forward(hidden, emb, lang)
    }

    /// Mean cross-entropy over positions whose label is not [`IGNORE_INDEX`] (NaN when every label is ignored).
    ///
    /// # Shapes
    /// `input_ids`, `attention_mask`, `labels`: `[batch, seq]` (i64 ids and labels) → scalar
    pub fn mlm_loss(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        labels: &Tensor,
        lang: &str,
        train: bool,
    ) -> Result<Tensor> {
        if labels.size() != input_ids.size() {
            return Err(Error::Invalid(format!(
                "labels shape {:?} differs from input_ids shape {:?}",
                labels.size(),
                input_ids.size()
            )));
        }
        let out = self.encoder.forward(input_ids, attention_mask, lang, train)?;
        let logits = self.logits(out.last(), lang)?; // [batch, seq, vocab]
        let vocab = self.config().vocab_size as i64;
        let labels = labels.to_kind(Kind::Int64).view([-1]);
        let (lo, hi) = (labels.min().int64_value(&[]), labels.max().int64_value(&[]));
        if hi >= vocab || (lo < 0 && lo != IGNORE_INDEX) {
            return Err(Error::Invalid(format!(
                "labels must be in [0, {vocab}) or {IGNORE_INDEX}, found [{lo}, {hi}]"
            )));
        }
        Ok(logits.view([-1, vocab]).to_kind(Kind::Float).cross_entropy_loss::<Tensor>(
            &labels,
            None,
            Reduction::Mean,
            IGNORE_INDEX,
            0.0,
        ))
    }
}
