//! Dropout (Srivastava et al. 2014) as BERT applies it while training (Devlin et al. 2019): `y = x ⊙ m / (1 − p)`
//! with every `m_i ~ Bernoulli(1 − p)` independent; the identity when not training or when `p = 0`.
//!
//! On the CPU the keep mask is drawn on the host: one 64-bit seed is drawn from libtorch's global generator (so
//! `tch::manual_seed` still fixes every mask, as it fixes libtorch's own dropout), and SplitMix64 (Steele, Lea &
//! Flood 2014) expands it, two elements per 64-bit draw: element `i` is kept when its 32-bit half `u` satisfies
//! `u < ⌊(1 − p) · 2³²⌋`, so the keep rate is `1 − p` to within `2.4·10⁻¹⁰`. That costs about a nanosecond an element,
//! where libtorch's CPU Bernoulli sampler costs about six (`bernoulli_` on 262,144 floats: 1.6 ms on one thread;
//! thirteen dropouts a step at the `cpu` shape spent about a tenth of a training step in it — CHANGELOG.md, *Speed
//! measurements over time*, "The dropout cut"). On other devices libtorch's fused dropout kernel runs.
use tch::{Device, Kind, Tensor};

use crate::text::codeswitch::SplitMix64;

/// Dropout of `x` with drop probability `p` when `train` (see the module docs). `p` must lie in `[0, 1]`; `p = 1`
/// drops everything.
///
/// # Shapes
/// `x`: any → the same
pub fn dropout(x: &Tensor, p: f64, train: bool) -> Tensor {
    assert!((0.0..=1.0).contains(&p), "dropout probability {p} is outside [0, 1]");
    if !train || p == 0.0 {
        return x.shallow_clone();
    }
    if p == 1.0 {
        return x * 0.0;
    }
    if x.device() != Device::Cpu {
        return x.dropout(p, true);
    }
    let seed = Tensor::randint(i64::MAX, [1], (Kind::Int64, Device::Cpu)).int64_value(&[0]) as u64;
    let mask = scaled_keep_mask(x.numel(), p, seed); // [numel], 0 or 1 / (1 − p)
    x * Tensor::from_slice(&mask).view(x.size().as_slice()).to_kind(x.kind())
}

/// `n` values, each `1 / (1 − p)` (kept) or `0` (dropped), from SplitMix64 seeded with `seed` (see the module docs).
///
/// # Shapes
/// → `[n]`
pub fn scaled_keep_mask(n: usize, p: f64, seed: u64) -> Vec<f32> {
    let threshold = ((1.0 - p) * 4_294_967_296.0).floor() as u64; // keep when a 32-bit draw is below it
    let scale = (1.0 / (1.0 - p)) as f32;
    let value = |u: u64| if u < threshold { scale } else { 0.0 };
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n / 2 {
        let r = rng.next_u64();
        out.push(value(r >> 32));
        out.push(value(r & 0xFFFF_FFFF));
    }
    if n % 2 == 1 {
        out.push(value(rng.next_u64() >> 32));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_when_not_training_or_without_dropout() {
        let x = Tensor::from_slice(&[1.0f32, -2.0, 3.0]);
        assert_eq!(Vec::<f32>::try_from(dropout(&x, 0.5, false)).unwrap(), vec![1.0, -2.0, 3.0]);
        assert_eq!(Vec::<f32>::try_from(dropout(&x, 0.0, true)).unwrap(), vec![1.0, -2.0, 3.0]);
        assert_eq!(Vec::<f32>::try_from(dropout(&x, 1.0, true)).unwrap(), vec![0.0, 0.0, 0.0]);
    }

    #[test]
    fn keeps_one_minus_p_scaled_by_its_inverse() {
        let n = 1_000_001; // odd: the last element takes a draw of its own
        let mask = scaled_keep_mask(n, 0.1, 42);
        assert_eq!(mask.len(), n);
        let scale = (1.0 / 0.9) as f32;
        assert!(mask.iter().all(|&m| m == 0.0 || m == scale));
        let kept = mask.iter().filter(|&&m| m > 0.0).count() as f64 / n as f64;
        // Binomial standard deviation sqrt(0.9 · 0.1 / n) = 3.0e-4: the bound is 6.7 of them.
        assert!((kept - 0.9).abs() < 2e-3, "keep rate {kept}");
        // Halves of one draw and neighbouring draws are not tied: both outcomes follow each outcome.
        let pairs = |a: bool, b: bool| mask.windows(2).filter(|w| (w[0] > 0.0) == a && (w[1] > 0.0) == b).count();
        let (kk, kd, dk, dd) = (pairs(true, true), pairs(true, false), pairs(false, true), pairs(false, false));
        let expected = |q: f64| q * (n - 1) as f64;
        for (count, q) in [(kk, 0.81), (kd, 0.09), (dk, 0.09), (dd, 0.01)] {
            assert!((count as f64 - expected(q)).abs() < 6.0 * expected(q).sqrt() + 10.0, "{kk} {kd} {dk} {dd}");
        }
        assert_eq!(scaled_keep_mask(9, 0.3, 7), scaled_keep_mask(9, 0.3, 7));
        assert_ne!(scaled_keep_mask(64, 0.3, 7), scaled_keep_mask(64, 0.3, 8));
    }

    #[test]
    fn seeded_by_libtorch_and_differentiable() {
        let _rng = crate::device::torch_rng_lock();
        let x = Tensor::ones([4, 257], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let draw = |seed: i64| {
            tch::manual_seed(seed);
            Vec::<f32>::try_from(dropout(&x, 0.25, true).flatten(0, -1)).unwrap()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
        tch::manual_seed(3);
        let y = dropout(&x, 0.25, true);
        y.sum(Kind::Float).backward();
        let (values, grad) = (Vec::<f32>::try_from(y.flatten(0, -1)).unwrap(), x.grad());
        let grad = Vec::<f32>::try_from(grad.flatten(0, -1)).unwrap();
        assert_eq!(values, grad, "∂y/∂x is the scaled mask");
        assert!(values.iter().all(|&v| v == 0.0 || (v - 4.0 / 3.0).abs() < 1e-6));
    }
}
