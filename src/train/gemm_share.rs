//! How much of a training step is spent outside matrix products: every GEMM of one MLM training step, timed alone
//! on random operands of its shape, summed, against the step's wall time (used by `crossling bench train`).
//!
//! **The products of one step** (`T = batch · seq` tokens, `L` layers, width `d`, `H` heads of `d/H`, feed-forward
//! width `f`, vocabulary `V`, and `P` positions where the MLM head runs: the masked ones in crossling, as in XLM,
//! every position in Hugging Face `BertForMaskedLM`):
//!
//! ```text
//! per layer   Q, K, V, O     [T × d] · [d × d]          (4 products)
//!             FFN in, out    [T × d] · [d × f],  [T × f] · [f × d]
//!             scores, mix    batch·H × ([seq × d/H] · [d/H × seq]),  batch·H × ([seq × seq] · [seq × d/H])
//! head        transform      [P × d] · [d × d]
//!             output         [P × d] · [d × V]          (tied to the input embeddings)
//! ```
//!
//! and each forward product `Y = X · W` (`X` m × k, `W` k × n) brings two in the backward pass, `∂X = ∂Y · Wᵀ` and
//! `∂W = Xᵀ · ∂Y`. At `P = T` their FLOPs are exactly the model FLOPs of [`super::bench::train_flops_per_step`]
//! (a test checks it).
//!
//! **Method.** Each distinct shape's three products are timed together on random operands (best of a few after one
//! untimed warm-up, the threads of the caller), multiplied by how often the step runs them, and summed. The share of
//! the step outside GEMMs is `1 − Σ GEMM / step`. This is the measurement of Ivanov et al. 2021 (*Data Movement Is
//! All You Need*, MLSys: BERT-large's tensor contractions are 99.8 % of its FLOPs and about 61 % of its training
//! time, the rest normalisation, element-wise work and data movement). It is an estimate, not a trace: alone, a
//! product's operands may sit in cache where they would not inside the step; and without attention dropout (at
//! inference, or `--dropout 0`) libtorch's CPU attention runs its flash kernel, which does the two products in
//! blocks rather than as the two batched products timed here (with dropout, as in training, it runs them as such).
//! On a GPU each product is synchronised and timed alone, so launch latency is counted with every repetition.
use std::time::Instant;

use tch::{Device, Kind, Tensor};

use crate::model::ModelConfig;

/// One forward product of the step, `count` times per step: `batch` independent `[m × k] · [k × n]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gemm {
    pub name: &'static str,
    pub batch: i64,
    pub m: i64,
    pub k: i64,
    pub n: i64,
    pub count: usize,
}

impl Gemm {
    /// FLOPs of the product and its two backward products, every time the step runs it: `3 · 2·b·m·k·n · count`.
    pub fn step_flops(&self) -> f64 {
        6.0 * (self.batch * self.m * self.k * self.n) as f64 * self.count as f64
    }
}

/// The forward products of one training step with the MLM head at `head_positions` positions (see the module docs).
pub fn step_gemms(model: &ModelConfig, batch: usize, seq: usize, head_positions: usize) -> Vec<Gemm> {
    let (l, d, f, v) = (model.layers, model.hidden as i64, model.ffn_dim() as i64, model.vocab_size as i64);
    let (t, s, h, p) = ((batch * seq) as i64, seq as i64, model.heads as i64, head_positions as i64);
    let g = |name, batch, m, k, n, count| Gemm { name, batch, m, k, n, count };
    vec![
        g("Q, K, V, O projections", 1, t, d, d, 4 * l),
        g("feed-forward in", 1, t, d, f, l),
        g("feed-forward out", 1, t, f, d, l),
        g("attention scores", batch as i64 * h, s, d / h, s, l),
        g("attention mix", batch as i64 * h, s, s, d / h, l),
        g("MLM head transform", 1, p, d, d, 1),
        g("MLM output softmax", 1, p, d, v, 1),
    ]
}

/// A [`Gemm`] and the best wall time of its forward and two backward products, once.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmTiming {
    pub gemm: Gemm,
    pub seconds: f64,
}

/// Times each product of `gemms` with its two backward products on random `kind` operands on `device`: best of
/// `reps` after one warm-up (see the module docs).
pub fn time_gemms(gemms: &[Gemm], device: Device, kind: Kind, reps: usize) -> Vec<GemmTiming> {
    let _rng = crate::device::torch_rng_lock();
    let sync = || {
        if let Device::Cuda(i) = device {
            tch::Cuda::synchronize(i as i64);
        }
    };
    gemms
        .iter()
        .map(|g| {
            let shape = |a: i64, b: i64| if g.batch == 1 { vec![a, b] } else { vec![g.batch, a, b] };
            let x = Tensor::randn(shape(g.m, g.k), (kind, device));
            let w = Tensor::randn(shape(g.k, g.n), (kind, device));
            let dy = Tensor::randn(shape(g.m, g.n), (kind, device));
            let run = || {
                let y = x.matmul(&w);
                let dx = dy.matmul(&w.transpose(-2, -1));
                let dw = x.transpose(-2, -1).matmul(&dy);
                sync();
                drop((y, dx, dw));
            };
            run();
            let mut best = f64::INFINITY;
            for _ in 0..reps.max(1) {
                let started = Instant::now();
                run();
                best = best.min(started.elapsed().as_secs_f64());
            }
            GemmTiming { gemm: g.clone(), seconds: best }
        })
        .collect()
}

/// Σ seconds × count: the step's GEMM time by the isolated timings.
pub fn total_seconds(timings: &[GemmTiming]) -> f64 {
    timings.iter().map(|t| t.seconds * t.gemm.count as f64).sum()
}

/// `1 − gemm_seconds / step_seconds`, the share of the step outside GEMMs (negative when the isolated products
/// are slower than the whole step, which then says the estimate is off, not that the share is below zero).
pub fn outside_share(gemm_seconds: f64, step_seconds: f64) -> f64 {
    1.0 - gemm_seconds / step_seconds.max(1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::bench::train_flops_per_step;

    fn shape() -> ModelConfig {
        let mut m = ModelConfig::at(crate::Scale::Smoke, 1000, ["en"]);
        (m.layers, m.hidden, m.heads, m.ffn) = (3, 32, 4, Some(64));
        m
    }

    #[test]
    fn the_products_at_every_position_are_the_model_flops() {
        let m = shape();
        let all: f64 = step_gemms(&m, 4, 16, 4 * 16).iter().map(Gemm::step_flops).sum();
        assert_eq!(all, train_flops_per_step(&m, 4, 16));
        // At the masked positions only, the head costs less and nothing else changes.
        let masked: f64 = step_gemms(&m, 4, 16, 10).iter().map(Gemm::step_flops).sum();
        let head_saved = 6.0 * (64 - 10) as f64 * (32.0 * 32.0 + 32.0 * 1000.0);
        assert_eq!(all - masked, head_saved);
    }

    #[test]
    fn timings_cover_every_product_and_sum_by_count() {
        let g = step_gemms(&shape(), 2, 8, 3);
        let t = time_gemms(&g, Device::Cpu, Kind::Float, 2);
        assert_eq!(t.len(), g.len());
        assert!(t.iter().all(|x| x.seconds > 0.0 && x.seconds.is_finite()));
        // Each product counts once per repetition in the step (per layer, forward and backward).
        let half_second_each: Vec<GemmTiming> = t.into_iter().map(|x| GemmTiming { seconds: 0.5, ..x }).collect();
        let products: usize = g.iter().map(|x| x.count).sum();
        assert!(products > g.len(), "the 3-layer products repeat");
        assert_eq!(total_seconds(&half_second_each), 0.5 * products as f64);
        assert_eq!(outside_share(0.25, 1.0), 0.75);
    }
}
