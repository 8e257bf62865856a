//! One post-LN transformer layer of BERT (Vaswani et al. 2017; Devlin et al. 2019): self-attention block,
//! then `LayerNorm(h + Dropout(W_2 · GELU(W_1 h)))`; pre-LN (`ModelConfig::pre_ln`, Xiong et al. 2020) instead
//! `h + Dropout(W_2 · GELU(W_1 LayerNorm(h)))`, the same parameters. HF names: `attention.…`, `intermediate.dense`,
//! `output.dense`, `output.LayerNorm`.
use tch::{nn, nn::Module, Tensor};

use super::attention::Attention;
use super::config::ModelConfig;
use super::sharing::{dense, layer_norm};
use crate::nn::dropout::dropout;
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

    /// Applies the layer.
    ///
    /// # Shapes
    /// `x`: `[batch, seq, hidden]`; `key_mask`: `[batch, seq]` (1 = token) → `[batch, seq, hidden]`
    pub fn forward(&self, x: &Tensor, key_mask: Option<&Tensor>, train: bool) -> Tensor {
        let h = self.attention.forward(x, key_mask, train); // [batch, seq, hidden]
        residual(&self.layer_norm, self.pre_ln, &h, |input| {
            let f = self.intermediate.forward(input).gelu("none"); // [batch, seq, ffn]
            dropout(&self.output.forward(&f), self.dropout, train) // [batch, seq, hidden]
        })
    }
}
