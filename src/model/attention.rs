//! Multi-head self-attention (Vaswani et al. 2017, §3.2) as in BERT (Devlin et al. 2019), post-LN:
//! `LayerNorm(x + Dropout(W_o · Attention(x W_q, x W_k, x W_v)))`, or pre-LN when the config says so (Xiong et al.
//! 2020): `x + Dropout(W_o · Attention(n W_q, n W_k, n W_v))` with `n = LayerNorm(x)`, the same parameters; with
//! `Attention(Q, K, V) = softmax(Q Kᵀ / √d_head + M) V`, computed by libtorch's fused
//! `scaled_dot_product_attention`. `M` is the key-padding mask, given to libtorch as a boolean `[batch, 1, 1, seq]`
//! tensor (true = attend; padded keys get −∞, i.e. weight exactly 0). A boolean mask rather than an additive float
//! one: libtorch's fused CPU kernel is faster with it (`crossling bench features`, measured: docs/performance.md,
//! *Measurements behind design choices*). Every sequence has at least one real token, so no softmax row is all −∞.
//!
//! With attention dropout while training on the CPU, libtorch's fused kernel does not run (its CPU flash kernel
//! takes no dropout) and its fallback samples the dropout mask with libtorch's slow CPU Bernoulli sampler; there
//! the same function is computed explicitly, `Dropout(softmax((Q/√d_head) Kᵀ + M)) V`, with the host-drawn mask of
//! [`super::dropout`]. With a [`Packing`] the block reads and returns the real tokens only (`[tokens, hidden]`); the
//! queries, keys and values are scattered into the padded layout for attention and its context gathered back. HF
//! names: `attention.self.{query,key,value}`, `attention.output.dense`, `attention.output.LayerNorm`.
use tch::{nn, nn::Module, Device, Tensor};

use super::config::ModelConfig;
use super::sharing::{dense, layer_norm};
use crate::nn::dropout::dropout;
use crate::nn::packing::{pack_if, unpack_if, Packing};
use crate::nn::residual::residual;

/// Fused scaled dot-product attention with an optional key-padding mask.
///
/// # Shapes
/// `q`, `k`, `v`: `[batch, heads, seq, head_dim]`; `key_mask`: `[batch, seq]` (1 = token)
/// → `[batch, heads, seq, head_dim]`
pub fn attend(q: &Tensor, k: &Tensor, v: &Tensor, key_mask: Option<&Tensor>, dropout_p: f64, train: bool) -> Tensor {
    let mask = key_mask.map(|m| m.ne(0).unsqueeze(1).unsqueeze(1)); // [batch, 1, 1, seq] bool: true = attend
    let p = if train { dropout_p } else { 0.0 };
    if p > 0.0 && q.device() == Device::Cpu {
        let head_dim = *q.size().last().expect("q is [batch, heads, seq, head_dim]");
        let mut scores = (q / (head_dim as f64).sqrt()).matmul(&k.transpose(-2, -1)); // [b, H, t, t]
        if let Some(m) = &mask {
            scores = scores.masked_fill(&m.logical_not(), f64::NEG_INFINITY);
        }
        let weights = scores.softmax(-1, scores.kind()); // [b, H, t, t]
        return dropout(&weights, p, true).matmul(v);
    }
    Tensor::scaled_dot_product_attention(q, k, v, mask.as_ref(), p, false, None::<f64>, false)
}

/// BERT self-attention block (`attention.self` + `attention.output`).
#[derive(Debug)]
pub struct Attention {
    /// `self.query`.
    pub query: nn::Linear,
    /// `self.key`.
    pub key: nn::Linear,
    /// `self.value`.
    pub value: nn::Linear,
    /// `output.dense`.
    pub output: nn::Linear,
    /// `output.LayerNorm`.
    pub layer_norm: nn::LayerNorm,
    heads: i64,
    dropout: f64,
    attention_dropout: f64,
    pre_ln: bool,
}

impl Attention {
    /// Builds the block under `p` (HF: `bert.encoder.layer.{i}.attention`).
    pub fn new(p: &nn::Path, cfg: &ModelConfig) -> Self {
        let d = cfg.hidden;
        let s = p / "self";
        let o = p / "output";
        Attention {
            query: dense(&(&s / "query"), d, d),
            key: dense(&(&s / "key"), d, d),
            value: dense(&(&s / "value"), d, d),
            output: dense(&(&o / "dense"), d, d),
            layer_norm: layer_norm(&(&o / "LayerNorm"), d, cfg.layer_norm_eps),
            heads: cfg.heads as i64,
            dropout: cfg.dropout,
            attention_dropout: cfg.attention_dropout,
            pre_ln: cfg.pre_ln,
        }
    }

    /// Self-attention with residual connection and LayerNorm (after the sum, or on the input when pre-LN).
    ///
    /// # Shapes
    /// `x`: `[batch, seq, hidden]`; `key_mask`: `[batch, seq]` (1 = token) → `[batch, seq, hidden]`
    pub fn forward(&self, x: &Tensor, key_mask: Option<&Tensor>, train: bool) -> Tensor {
        self.forward_packed(x, key_mask, None, train)
    }

    /// [`Attention::forward`] on the real tokens of a padded batch when `packing` is given (see the module docs).
    ///
    /// # Shapes
    /// `x`: `[batch, seq, hidden]`, or `[tokens, hidden]` with `packing`; `key_mask`: `[batch, seq]` (1 = token)
    /// → the shape of `x`
    pub fn forward_packed(
        &self,
        x: &Tensor,
        key_mask: Option<&Tensor>,
        packing: Option<&Packing>,
        train: bool,
    ) -> Tensor {
        let d = *x.size().last().expect("hidden states have a hidden dimension");
        let (b, t) = match packing {
            Some(p) => (p.batch, p.seq),
            None => {
                let (b, t, _) = x.size3().expect("hidden states are [batch, seq, hidden]");
                (b, t)
            }
        };
        residual(&self.layer_norm, self.pre_ln, x, |input| {
            // [b, H, t, d/H]
            let split = |y: Tensor| unpack_if(packing, &y).view([b, t, self.heads, d / self.heads]).transpose(1, 2);
            let q = split(self.query.forward(input));
            let k = split(self.key.forward(input));
            let v = split(self.value.forward(input));
            let ctx = attend(&q, &k, &v, key_mask, self.attention_dropout, train); // [b, H, t, d/H]
            let ctx = pack_if(packing, &ctx.transpose(1, 2).contiguous().view([b, t, d])); // like `input`
            dropout(&self.output.forward(&ctx), self.dropout, train)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;

    /// The reference: converts a `[batch, seq]` key mask (1 = token, 0 = padding; any numeric or bool kind) to the additive
    /// mask broadcast over heads and queries. Padded keys get a value whose exponential underflows to exactly 0,
    /// while a fully padded row stays finite (no NaN).
    ///
    /// # Shapes
    /// `mask`: `[batch, seq]` → `[batch, 1, 1, seq]` of kind `kind`
    fn additive_mask(mask: &Tensor, kind: Kind) -> Tensor {
        let neg: f64 = match kind {
            Kind::Half => -1e4,
            _ => -1e9,
        };
        let keep = mask.to_kind(Kind::Float).unsqueeze(1).unsqueeze(1); // [batch, 1, 1, seq]
        ((1.0f64 - keep) * neg).to_kind(kind)
    }

    #[test]
    fn fused_attention_matches_manual_reference() {
        let _rng = crate::model::tests::rng_lock();
        tch::manual_seed(7);
        let (b, h, t, e) = (3, 2, 5, 4);
        let q = Tensor::randn([b, h, t, e], (Kind::Double, tch::Device::Cpu));
        let k = Tensor::randn([b, h, t, e], (Kind::Double, tch::Device::Cpu));
        let v = Tensor::randn([b, h, t, e], (Kind::Double, tch::Device::Cpu));
        let mask = Tensor::from_slice2(&[[1i64, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]]);
        for m in [None, Some(&mask)] {
            let fused = attend(&q, &k, &v, m, 0.1, false);
            let mut scores = q.matmul(&k.transpose(-2, -1)) / (e as f64).sqrt(); // [b, h, t, t]
            if let Some(m) = m {
                scores += additive_mask(m, Kind::Double);
            }
            let reference = scores.softmax(-1, Kind::Double).matmul(&v);
            let diff = (fused - reference).abs().max().double_value(&[]);
            assert!(diff < 1e-10, "max difference {diff}");
        }
    }

    #[test]
    fn training_attention_drops_weights_of_the_softmax() {
        let _rng = crate::model::tests::rng_lock();
        tch::manual_seed(11);
        let (b, h, t) = (2, 3, 6);
        let q = Tensor::randn([b, h, t, t], (Kind::Float, tch::Device::Cpu));
        let k = Tensor::randn([b, h, t, t], (Kind::Float, tch::Device::Cpu));
        // V = I (head_dim = t): the output rows are the dropped, rescaled attention weights themselves.
        let v = Tensor::eye(t, (Kind::Float, tch::Device::Cpu)).expand([b, h, t, t], false);
        let mask = Tensor::from_slice2(&[[1i64, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]]);
        let weights = attend(&q, &k, &v, Some(&mask), 0.0, true); // no dropout: the fused kernel
        let dropped = attend(&q, &k, &v, Some(&mask), 0.5, true); // the explicit path
        let (w, d) = (
            Vec::<f32>::try_from(weights.flatten(0, -1)).unwrap(),
            Vec::<f32>::try_from(dropped.flatten(0, -1)).unwrap(),
        );
        let (mut kept, mut zero) = (0, 0);
        for (i, (&w, &d)) in w.iter().zip(&d).enumerate() {
            let key = i % t as usize;
            let padded = i / (h * t * t) as usize == 1 && key >= 4;
            if padded {
                assert_eq!((w, d), (0.0, 0.0), "padded key {i}");
            } else if d == 0.0 {
                zero += 1;
            } else {
                assert!((d - 2.0 * w).abs() < 1e-5, "kept weight {i}: {d} vs 2 · {w}");
                kept += 1;
            }
        }
        assert!(kept > 60 && zero > 60, "kept {kept}, dropped {zero} of 168");
        let again = |seed| {
            tch::manual_seed(seed);
            Vec::<f32>::try_from(attend(&q, &k, &v, Some(&mask), 0.5, true).flatten(0, -1)).unwrap()
        };
        assert_eq!(again(4), again(4));
    }

    #[test]
    fn mask_is_zero_for_tokens_and_negative_for_padding() {
        let m = additive_mask(&Tensor::from_slice2(&[[1i64, 0]]), Kind::Float);
        assert_eq!(m.size(), vec![1, 1, 1, 2]);
        assert_eq!(m.double_value(&[0, 0, 0, 0]), 0.0);
        assert!(m.double_value(&[0, 0, 0, 1]) <= -1e8);
    }
}
