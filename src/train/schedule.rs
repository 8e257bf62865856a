//! Learning-rate schedule and optimiser.
//!
//! **Schedule** — the inverse square-root schedule with linear warm-up of Vaswani et al. (2017, §5.3,
//! *Attention Is All You Need*), as used by XLM (Conneau & Lample 2019) and Wu, Conneau et al. (2020):
//!
//! ```text
//! lr(t) = peak · t / w          for t < w
//! lr(t) = peak · sqrt(w / t)    for t ≥ w
//! ```
//!
//! with `t` the 1-based optimiser step and `w` the warm-up length (`w = 0` is treated as `w = 1`). The two
//! pieces meet at `t = w` with `lr = peak`.
//!
//! **Adam** (Kingma & Ba 2015), written out on tensors with PyTorch's update rule (β₁ = 0.9, β₂ = 0.999,
//! ε = 1e-8, no weight decay):
//!
//! ```text
//! m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²
//! θ ← θ − (lr / (1 − β₁ᵗ)) · m / (sqrt(v) / sqrt(1 − β₂ᵗ) + ε)
//! ```
//!
//! `tch::nn::Optimizer` keeps its moments inside libtorch with no accessor, so a resumed run could not restore
//! them; this implementation exposes `m`, `v` and `t`, which [`crate::train::checkpoint`] saves, making resume
//! exact. Gradient clipping by global norm follows `torch.nn.utils.clip_grad_norm_`:
//! `g ← g · min(1, c / (‖g‖₂ + 1e-6))` with `‖g‖₂` the norm of all gradients concatenated.
use std::path::Path;

use serde::{Deserialize, Serialize};
use tch::{nn::VarStore, Kind, Tensor};

use crate::error::{Error, Result};

/// Warm-up + inverse square-root learning-rate schedule (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The learning rate reached at the end of warm-up.
    pub peak_lr: f64,
    /// Number of warm-up steps `w`.
    pub warmup_steps: u64,
}

impl Schedule {
    /// The learning rate for 1-based step `step` (0 at step 0).
    pub fn lr_at(&self, step: u64) -> f64 {
        let w = self.warmup_steps.max(1) as f64;
        let t = step as f64;
        if t < w {
            self.peak_lr * t / w
        } else {
            self.peak_lr * (w / t).sqrt()
        }
    }
}

/// Adam with inspectable, savable state (see the module docs).
#[derive(Debug)]
pub struct Adam {
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    /// Number of updates taken so far (`t`).
    pub step: u64,
    /// Trainable variables, sorted by name.
    params: Vec<(String, Tensor)>,
    exp_avg: Vec<Tensor>,
    exp_avg_sq: Vec<Tensor>,
}

impl Adam {
    /// Adam over the trainable variables of `vs`, with PyTorch's defaults and zero moments.
    pub fn new(vs: &VarStore) -> Self {
        let mut params: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let exp_avg = params.iter().map(|(_, p)| p.zeros_like()).collect();
        let exp_avg_sq = params.iter().map(|(_, p)| p.zeros_like()).collect();
        Adam { beta1: 0.9, beta2: 0.999, eps: 1e-8, step: 0, params, exp_avg, exp_avg_sq }
    }

    /// Zero every parameter's gradient.
    pub fn zero_grad(&mut self) {
        for (_, p) in self.params.iter_mut() {
            p.zero_grad();
        }
    }

    /// Scale all gradients so that their global L2 norm is at most `max_norm`; returns the norm before clipping.
    ///
    /// Each gradient's norm is a libtorch reduction in its own kind (f32), the global norm combines them in f64
    /// (as `torch.nn.utils.clip_grad_norm_` does, without copying gradients to f64); one device read-back.
    pub fn clip_grad_norm(&self, max_norm: f64) -> f64 {
        tch::no_grad(|| {
            let grads: Vec<Tensor> = self.params.iter().map(|(_, p)| p.grad()).filter(|g| g.defined()).collect();
            if grads.is_empty() {
                return 0.0;
            }
            let norms: Vec<Tensor> = grads.iter().map(|g| g.norm().to_kind(Kind::Double)).collect();
            let total = Tensor::stack(&norms, 0).square().sum(Kind::Double).sqrt().double_value(&[]);
            let coef = max_norm / (total + 1e-6);
            if coef < 1.0 {
                for g in &grads {
                    let mut g = g.shallow_clone();
                    let _ = g.g_mul_scalar_(coef);
                }
            }
            total
        })
    }

    /// One Adam update with learning rate `lr`; parameters without a gradient are skipped.
    ///
    /// In place, as PyTorch's single-tensor Adam: `m.lerp_(g, 1 − β₁)`, `v.lerp_(g², 1 − β₂)`, then
    /// `θ += m / d` with `d = −(sqrt(v) / sqrt(1 − β₂ᵗ) + ε) · (1 − β₁ᵗ) / lr` (one temporary besides `g²`).
    pub fn step(&mut self, lr: f64) {
        self.step += 1;
        let t = self.step as i32;
        let bc1 = 1.0 - self.beta1.powi(t);
        let bc2_sqrt = (1.0 - self.beta2.powi(t)).sqrt();
        let (b1, b2, eps) = (self.beta1, self.beta2, self.eps);
        let step_size = lr / bc1;
        tch::no_grad(|| {
            for (i, (_, p)) in self.params.iter().enumerate() {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let _ = self.exp_avg[i].lerp_(&g, 1.0 - b1);
                let _ = self.exp_avg_sq[i].lerp_(&g.square(), 1.0 - b2);
                if step_size == 0.0 {
                    continue; // lr = 0: moments move, parameters do not
                }
                // d = −(sqrt(v) / bc2_sqrt + eps) / step_size
                let mut denom = self.exp_avg_sq[i].sqrt();
                let _ = denom.g_mul_scalar_(-1.0 / (bc2_sqrt * step_size));
                let _ = denom.g_add_scalar_(-eps / step_size);
                let mut p = p.shallow_clone();
                let _ = p.addcdiv_(&self.exp_avg[i], &denom);
            }
        });
    }

    /// Write the moments to a safetensors file (`exp_avg.NAME`, `exp_avg_sq.NAME`); `step` is kept by the caller.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut named: Vec<(String, Tensor)> = Vec::with_capacity(2 * self.params.len());
        for (i, (name, _)) in self.params.iter().enumerate() {
            named.push((format!("exp_avg.{name}"), self.exp_avg[i].to_device(tch::Device::Cpu)));
            named.push((format!("exp_avg_sq.{name}"), self.exp_avg_sq[i].to_device(tch::Device::Cpu)));
        }
        Tensor::write_safetensors(&named, path).map_err(|e| Error::format_file(path, e.to_string()))
    }

    /// Read moments written by [`Adam::save`] for the same set of parameters and set `step`.
    pub fn load(&mut self, path: &Path, step: u64) -> Result<()> {
        let read = Tensor::read_safetensors(path).map_err(|e| Error::format_file(path, e.to_string()))?;
        let map: std::collections::HashMap<String, Tensor> = read.into_iter().collect();
        if map.len() != 2 * self.params.len() {
            return Err(Error::format_file(
                path,
                format!("holds {} tensors, expected {} (2 per parameter)", map.len(), 2 * self.params.len()),
            ));
        }
        tch::no_grad(|| -> Result<()> {
            for (i, (name, p)) in self.params.iter().enumerate() {
                for (prefix, dst) in [("exp_avg", &mut self.exp_avg[i]), ("exp_avg_sq", &mut self.exp_avg_sq[i])] {
                    let key = format!("{prefix}.{name}");
                    let src = map
                        .get(&key)
                        .ok_or_else(|| Error::format_file(path, format!("missing optimiser tensor '{key}'")))?;
                    if src.size() != p.size() {
                        return Err(Error::format_file(
                            path,
                            format!("'{key}' has shape {:?}, parameter has {:?}", src.size(), p.size()),
                        ));
                    }
                    dst.copy_(src);
                }
            }
            Ok(())
        })?;
        self.step = step;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_hand_values() {
        let s = Schedule { peak_lr: 1e-4, warmup_steps: 100 };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(close(s.lr_at(0), 0.0));
        assert!(close(s.lr_at(1), 1e-6));
        assert!(close(s.lr_at(50), 5e-5));
        assert!(close(s.lr_at(100), 1e-4));
        assert!(close(s.lr_at(400), 5e-5)); // sqrt(100/400) = 1/2
        assert!(close(s.lr_at(10_000), 1e-5)); // sqrt(100/10000) = 1/10
        let no_warmup = Schedule { peak_lr: 2.0, warmup_steps: 0 };
        assert!(close(no_warmup.lr_at(1), 2.0));
        assert!(close(no_warmup.lr_at(4), 1.0));
    }

    #[test]
    fn adam_matches_hand_update_and_clipping() {
        let vs = VarStore::new(tch::Device::Cpu);
        let w = vs.root().var("w", &[2], tch::nn::Init::Const(1.0));
        let mut adam = Adam::new(&vs);
        // loss = 3 * (w0 + w1) → g = (3, 3), ‖g‖ = 3√2; clip to 1 → g = (1/√2, 1/√2) (up to 1e-6).
        adam.zero_grad();
        (&w * 3.0).sum(Kind::Float).backward();
        let norm = adam.clip_grad_norm(1.0);
        assert!((norm - 3.0 * 2f64.sqrt()).abs() < 1e-6);
        adam.step(0.1);
        // First Adam step moves each weight by ≈ lr · sign(g).
        assert!((w.double_value(&[0]) - 0.9).abs() < 1e-6, "{}", w.double_value(&[0]));
        assert_eq!(adam.step, 1);
    }
}
