//! One post-LN transformer layer of BERT (Vaswani et al. 2017; Devlin et al. 2019): self-attention block,
//! then `LayerNorm(h + Dropout(W_2 · GELU(W_1 h)))`; pre-LN (`ModelConfig::pre_ln`, Xiong et al. 2020) instead
//! `h + Dropout(W_2 · GELU(W_1 LayerNorm(h)))`, the same parameters. HF names: `attention.…`, `intermediate.dense`,
//! `output.dense`, `output.LayerNorm`. Given a [`Packing`] of a padded batch, everything but attention runs on the real
//! tokens only ([`crate::nn::packing`]); the output is then zero at padded positions.
use tch::{nn, nn::Module, Tensor};

use super::attention::Attention;
use super::config::ModelConfig;
use super::sharing::{dense, layer_norm};
use crate::nn::dropout::dropout;
use crate::nn::packing::{pack_if, unpack_if, Packing};
use crate::nn::residual::residual;

/// A BERT encoder layer (HF: `bert.encoder.layer.{i}`).
#[derive(Debug)]
pub struct Layer {
    /// `attention`.
    pub attention: Attention,
    /// `intermediate.dense`, `[ffn, hidden]`.
    pub intermediate: nn::Linear,
    /// `output.dense`, `[hidden, ffn]`.
    pub output: nn::Linear,
    /// `output.LayerNorm`.
    pub layer_norm: nn::LayerNorm,
    dropout: f64,
    pre_ln: bool,
}

impl Layer {
    /// Builds the layer under `p`.
    pub fn new(p: &nn::Path, cfg: &ModelConfig) -> Self {
        let (d, f) = (cfg.hidden, cfg.ffn_dim());
        Layer {
            attention: Attention::new(&(p / "attention"), cfg),
            intermediate: dense(&(p / "intermediate" / "dense"), d, f),
            output: dense(&(p / "output" / "dense"), f, d),
            layer_norm: layer_norm(&(p / "output" / "LayerNorm"), d, cfg.layer_norm_eps),
            dropout: cfg.dropout,
            pre_ln: cfg.pre_ln,
        }
    }

    /// Applies the layer, on the real tokens only when the batch has enough padding ([`Packing::of`]).
    ///
    /// # Shapes
    /// `x`: `[batch, seq, hidden]`; `key_mask`: `[batch, seq]` (1 = token) → `[batch, seq, hidden]`
    pub fn forward(&self, x: &Tensor, key_mask: Option<&Tensor>, train: bool) -> Tensor {
        self.forward_packed(x, key_mask, Packing::of(key_mask).as_ref(), train)
    }

    /// Applies the layer with a packing computed once for all layers (`None`: the padded layout).
    ///
    /// # Shapes
    /// `x`: `[batch, seq, hidden]`; `key_mask`: `[batch, seq]` (1 = token) → `[batch, seq, hidden]`
    pub fn forward_packed(
        &self,
        x: &Tensor,
        key_mask: Option<&Tensor>,
        packing: Option<&Packing>,
        train: bool,
    ) -> Tensor {
        let input = pack_if(packing, x); // [tokens, hidden], or `x` unpacked
        let h = self.attention.forward_packed(&input, key_mask, packing, train); // like `input`
        let out = residual(&self.layer_norm, self.pre_ln, &h, |input| {
            let f = self.intermediate.forward(input).gelu("none"); // [.., ffn]
            dropout(&self.output.forward(&f), self.dropout, train) // [.., hidden]
        });
        unpack_if(packing, &out) // [batch, seq, hidden]
    }
}
