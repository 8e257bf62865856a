//! The BERT encoder (Devlin et al. 2019; Vaswani et al. 2017) with the sharing plan of Wu et al. (2020,
//! §3–4): embeddings (optionally per language) and `L` layers whose bottom `sep_layers` may be per language
//! (`encoder.layer.{i}.lang.{lang}.…`). Each batch is one language, as in the study. A pre-LN encoder
//! (`ModelConfig::pre_ln`) has one more LayerNorm, `encoder.LayerNorm`, on the last layer's output: its
//! `hidden_states[L]` (and every path that runs through layer `L`) is normalised, the states below are the
//! residual stream.
use tch::{nn, Tensor};

use super::config::ModelConfig;
use super::embeddings::Embeddings;
use super::layer::Layer;
use super::sharing::PerLanguage;
use crate::error::{Error, Result};
use crate::nn::packing::Packing;

/// Every layer's hidden states.
#[derive(Debug)]
pub struct EncoderOutput {
    /// `L + 1` entries: 0 is the embedding output, `i` the output of layer `i`; each `[batch, seq, hidden]`.
    pub hidden_states: Vec<Tensor>,
}

impl EncoderOutput {
    /// The last layer's output.
    ///
    /// # Shapes
    /// `[batch, seq, hidden]`
    pub fn last(&self) -> &Tensor {
        // `Encoder::forward` always pushes the embedding output, so the vector is never empty.
        &self.hidden_states[self.hidden_states.len() - 1]
    }
}

/// BERT encoder: embeddings + layers (HF `BertModel` names under the given path).
#[derive(Debug)]
pub struct Encoder {
    /// `embeddings`.
    pub embeddings: Embeddings,
    /// `encoder.layer.{i}`, shared or per language.
    pub layers: Vec<PerLanguage<Layer>>,
    /// `encoder.LayerNorm`, the final LayerNorm of a pre-LN encoder (absent when post-LN).
    pub final_layer_norm: Option<nn::LayerNorm>,
    cfg: ModelConfig,
}

impl Encoder {
    /// Validates `cfg` and builds the encoder under `p`; for HF `BertForMaskedLM` names pass `root / "bert"`.
    pub fn new(p: &nn::Path, cfg: &ModelConfig) -> Result<Self> {
        cfg.validate()?;
        let embeddings = Embeddings::new(&(p / "embeddings"), cfg)?;
        let lp = p / "encoder" / "layer";
        let layers = (0..cfg.layers)
            .map(|i| {
                let sep = i < cfg.sharing.sep_layers;
                PerLanguage::build(&(&lp / i), sep, &cfg.languages, |q| Ok(Layer::new(q, cfg)))
            })
            .collect::<Result<Vec<_>>>()?;
        let final_layer_norm = cfg
            .pre_ln
            .then(|| super::sharing::layer_norm(&(p / "encoder" / "LayerNorm"), cfg.hidden, cfg.layer_norm_eps));
        Ok(Encoder { embeddings, layers, final_layer_norm, cfg: cfg.clone() })
    }

    /// `x` after the final LayerNorm of a pre-LN encoder; `x` itself when post-LN.
    ///
    /// # Shapes
    /// `[batch, seq, hidden]` → `[batch, seq, hidden]`
    fn finish(&self, x: Tensor) -> Tensor {
        match &self.final_layer_norm {
            Some(ln) => nn::Module::forward(ln, &x),
            None => x,
        }
    }

    /// The configuration the encoder was built from.
    pub fn config(&self) -> &ModelConfig {
        &self.cfg
    }

    /// Runs the encoder on a batch of one language.
    ///
    /// # Shapes
    /// `input_ids`: `[batch, seq]` i64; `attention_mask`: `[batch, seq]` (1 = token, 0 = padding)
    /// → `hidden_states`: `L + 1` × `[batch, seq, hidden]`
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        lang: &str,
        train: bool,
    ) -> Result<EncoderOutput> {
        check_mask(input_ids, attention_mask)?;
        // Resolve every per-language part first so an unknown language fails before any compute.
        let layers = self.layers.iter().map(|l| l.get(lang)).collect::<Result<Vec<_>>>()?;
        let mut hidden_states = Vec::with_capacity(layers.len() + 1);
        let mut x = self.embeddings.forward(input_ids, lang, train)?; // [batch, seq, hidden]
        let packing = Packing::of(attention_mask);
        for layer in layers {
            let next = layer.forward_packed(&x, attention_mask, packing.as_ref(), train);
            hidden_states.push(x);
            x = next;
        }
        hidden_states.push(self.finish(x));
        Ok(EncoderOutput { hidden_states })
    }

    /// The hidden states at layer `upto` (0 = the embedding output) of a batch of one language, running only the
    /// layers below it: the frozen bottom of Emerging §5.1.2's transfer through layer `upto`.
    ///
    /// # Shapes
    /// `input_ids`: `[batch, seq]` i64; `attention_mask`: `[batch, seq]` → `[batch, seq, hidden]`
    pub fn forward_until(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        lang: &str,
        upto: usize,
        train: bool,
    ) -> Result<Tensor> {
        if upto > self.layers.len() {
            return Err(Error::Invalid(format!(
                "layer {upto} of a {}-layer encoder does not exist",
                self.layers.len()
            )));
        }
        check_mask(input_ids, attention_mask)?;
        let layers = self.layers[..upto].iter().map(|l| l.get(lang)).collect::<Result<Vec<_>>>()?;
        let mut x = self.embeddings.forward(input_ids, lang, train)?; // [batch, seq, hidden]
        let packing = Packing::of(attention_mask);
        for layer in layers {
            x = layer.forward_packed(&x, attention_mask, packing.as_ref(), train);
        }
        Ok(if upto == self.layers.len() { self.finish(x) } else { x })
    }

    /// Continues a forward pass from the hidden states `hidden` at layer `start` (0 = the embedding output) through
    /// layers `start + 1 ..= L` of language `lang`, returning the last layer's output. With `hidden` taken from
    /// [`Encoder::forward`] this reproduces its last output; with the hidden states of *another* model mapped into
    /// this one's space it runs the upper layers of this model on them (a hybrid of two encoders). Emerging
    /// Figure 5 instead trains fresh layers on top of layer `start` ([`crate::tasks::backbone`]).
    ///
    /// # Shapes
    /// `hidden`: `[batch, seq, hidden]`; `attention_mask`: `[batch, seq]` → `[batch, seq, hidden]`
    pub fn forward_from(
        &self,
        hidden: &Tensor,
        start: usize,
        attention_mask: Option<&Tensor>,
        lang: &str,
        train: bool,
    ) -> Result<Tensor> {
        if start > self.layers.len() {
            return Err(Error::Invalid(format!(
                "cannot continue from layer {start} of a {}-layer encoder",
                self.layers.len()
            )));
        }
        let want = self.cfg.hidden as i64;
        if hidden.dim() != 3 || hidden.size()[2] != want {
            return Err(Error::Invalid(format!(
                "hidden states of shape {:?}, expected [batch, seq, {want}]",
                hidden.size()
            )));
        }
        let layers = self.layers[start..].iter().map(|l| l.get(lang)).collect::<Result<Vec<_>>>()?;
        let mut x = hidden.shallow_clone();
        let packing = Packing::of(attention_mask);
        for layer in layers {
            x = layer.forward_packed(&x, attention_mask, packing.as_ref(), train);
        }
        Ok(if start == self.layers.len() { x } else { self.finish(x) })
    }
}

/// An attention mask must have the shape of the ids it masks.
fn check_mask(input_ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<()> {
    match attention_mask {
        Some(m) if m.size() != input_ids.size() => Err(Error::Invalid(format!(
            "attention_mask shape {:?} differs from input_ids shape {:?}",
            m.size(),
            input_ids.size()
        ))),
        _ => Ok(()),
    }
}
