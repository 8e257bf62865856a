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
//!
//! **Layout.** By default ([`AdamLayout::Flat`]) the parameters, their gradients and the two moments each live in one
//! flat buffer ([`crate::nn::flat`]), and the clipping and the update run as about ten kernels on the buffers,
//! whatever the number of parameters; without rate multipliers (below) the update is elementwise the same arithmetic
//! as parameter by parameter. The norm is then reduced over blocks of 1,024 gradients in f32 and combined in f64
//! ([`crate::nn::flat::l2_norm`]), and the per-parameter layout reduces each gradient so and combines the norms in
//! f64; both agree with the f64 norm to about 1e-7 (one f32 reduction over a real model's 21 million gradients was off
//! by 9e-4). Until every parameter has a gradient (a language's own layers before its first batch), and for
//! parameters that cannot share a buffer, the step runs parameter by parameter ([`AdamLayout::PerParameter`]),
//! skipping parameters without a gradient as PyTorch does. On the CPU the flat layout's first `sqrt` splits across
//! threads, so [`Adam::with_layout`] first runs [`crate::device::vector_math::init`] (without it, about one process in
//! twenty computed the worker's half wrong).
//!
//! **Rate groups.** [`Adam::with_rate_scales`] gives each parameter a multiplier `s` of the learning rate (PyTorch's
//! parameter groups with `lr = s · lr`, one schedule for all, ε not scaled):
//! `θ ← θ − s · (lr / (1 − β₁ᵗ)) · m / (sqrt(v) / sqrt(1 − β₂ᵗ) + ε)`. Per parameter the step size is multiplied by
//! `s` (f64); in the flat layout the multipliers are an f32 buffer beside the parameters that the update's divisor
//! `d` ([`Adam::step`]) is divided by, one kernel more, so the two layouts then agree to f32 rounding rather than to
//! the bit. With every multiplier 1 nothing changes.
use std::path::Path;

use serde::{Deserialize, Serialize};
use tch::{nn::VarStore, Tensor};

use crate::error::{Error, Result};
use crate::nn::flat::{self, FlatParams};

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

/// How [`Adam`] holds its parameters, gradients and moments (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdamLayout {
    /// One buffer each for parameters, gradients and moments; about ten kernels a step.
    Flat,
    /// A tensor per parameter; about ten kernels a step per parameter.
    PerParameter,
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
    /// Per parameter (views of `flat`'s moment buffers when flat).
    exp_avg: Vec<Tensor>,
    exp_avg_sq: Vec<Tensor>,
    flat: Option<FlatAdam>,
    /// Updates taken on the flat buffers (the rest went parameter by parameter).
    flat_steps: u64,
    /// Learning-rate multiplier per parameter (all 1 unless [`Adam::with_rate_scales`] set them).
    rate_scales: Vec<f64>,
}

/// The flat layout's buffers: parameters and gradients, and the two moments, `[n]` each.
#[derive(Debug)]
struct FlatAdam {
    buffers: FlatParams,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    /// The learning-rate multipliers element by element, `[n]`, when some differ from 1.
    rate: Option<Tensor>,
}

impl Adam {
    /// Adam over the trainable variables of `vs`, with PyTorch's defaults and zero moments, in the flat layout
    /// when the variables allow it (moving them into one buffer: see [`crate::nn::flat`]).
    pub fn new(vs: &VarStore) -> Self {
        Adam::with_layout(vs, AdamLayout::Flat)
    }

    /// [`Adam::new`] in the given layout (`Flat` falls back to `PerParameter` for variables that cannot share a
    /// buffer; [`Adam::layout`] says which it got).
    pub fn with_layout(vs: &VarStore, layout: AdamLayout) -> Self {
        crate::device::vector_math::init(); // before the first `sqrt` splits across threads
        let mut params: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let tensors: Vec<Tensor> = params.iter().map(|(_, p)| p.shallow_clone()).collect();
        let buffers = match layout {
            AdamLayout::Flat => FlatParams::new(&tensors),
            AdamLayout::PerParameter => None,
        };
        let (exp_avg, exp_avg_sq, flat) = match buffers {
            Some(buffers) => {
                let (m, m_views) = buffers.zeros_like();
                let (v, v_views) = buffers.zeros_like();
                (m_views, v_views, Some(FlatAdam { buffers, exp_avg: m, exp_avg_sq: v, rate: None }))
            }
            None => (
                tensors.iter().map(Tensor::zeros_like).collect(),
                tensors.iter().map(Tensor::zeros_like).collect(),
                None,
            ),
        };
        let rate_scales = vec![1.0; params.len()];
        Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            step: 0,
            params,
            exp_avg,
            exp_avg_sq,
            flat,
            flat_steps: 0,
            rate_scales,
        }
    }

    /// Gives each parameter the learning-rate multiplier `scale_of(name)` (see the module docs: rate groups), e.g.
    /// a task head trained faster than the pretrained encoder under it. A multiplier must be positive and finite.
    pub fn with_rate_scales(mut self, scale_of: impl Fn(&str) -> f64) -> Result<Self> {
        let scales: Vec<f64> = self.params.iter().map(|(name, _)| scale_of(name)).collect();
        if let Some((i, s)) = scales.iter().enumerate().find(|(_, s)| !(s.is_finite() && **s > 0.0)) {
            return Err(Error::Invalid(format!(
                "the learning-rate multiplier of '{}' must be a positive number, got {s}",
                self.params[i].0
            )));
        }
        if let Some(f) = self.flat.as_mut() {
            f.rate = scales.iter().any(|&s| s != 1.0).then(|| {
                let (rate, views) = f.buffers.zeros_like();
                tch::no_grad(|| {
                    for (view, &s) in views.into_iter().zip(&scales) {
                        let _ = view.shallow_clone().fill_(s);
                    }
                });
                rate
            });
        }
        self.rate_scales = scales;
        Ok(self)
    }

    /// The layout in use (`PerParameter` also once the flat buffers were given up: [`crate::nn::flat`]).
    pub fn layout(&self) -> AdamLayout {
        if self.flat.as_ref().is_some_and(|f| f.buffers.is_active()) {
            AdamLayout::Flat
        } else {
            AdamLayout::PerParameter
        }
    }

    /// How many of the updates so far ran on the flat buffers (in the flat layout, the others ran parameter by
    /// parameter because some parameter had no gradient yet).
    pub fn flat_steps(&self) -> u64 {
        self.flat_steps
    }

    /// The flat gradient buffer, when the layout is flat and every parameter has a gradient.
    fn flat_grads(&mut self) -> Option<Tensor> {
        self.flat.as_mut().and_then(|f| f.buffers.grads())
    }

    /// Zero every parameter's gradient.
    pub fn zero_grad(&mut self) {
        for (_, p) in self.params.iter_mut() {
            p.zero_grad();
        }
    }

    /// Scale all gradients so that their global L2 norm is at most `max_norm`; returns the norm before clipping.
    ///
    /// Flat: the gradient buffer reduced in blocks, combined in f64 ([`crate::nn::flat::l2_norm`]). Per parameter: each
    /// gradient's blocks the same way, all of them combined once in f64 (as `torch.nn.utils.clip_grad_norm_` combines
    /// its per-tensor norms, without copying gradients to f64; a gradient of one block is one reduction, as there).
    /// One device read-back either way.
    pub fn clip_grad_norm(&mut self, max_norm: f64) -> f64 {
        if let Some(g) = self.flat_grads() {
            return tch::no_grad(|| {
                let total = flat::l2_norm(&g).double_value(&[]);
                let coef = max_norm / (total + 1e-6);
                if coef < 1.0 {
                    let _ = g.shallow_clone().g_mul_scalar_(coef);
                }
                total
            });
        }
        tch::no_grad(|| {
            let grads: Vec<Tensor> = self.params.iter().map(|(_, p)| p.grad()).filter(|g| g.defined()).collect();
            if grads.is_empty() {
                return 0.0;
            }
            let blocks: Vec<Tensor> = grads.iter().map(|g| flat::block_norms(&g.reshape([-1]))).collect();
            let total = flat::combine_norms(&Tensor::cat(&blocks, 0)).double_value(&[]);
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

    /// One Adam update with learning rate `lr` (times each parameter's multiplier `s`); parameters without a
    /// gradient are skipped.
    ///
    /// In place, as PyTorch's single-tensor Adam: `m.lerp_(g, 1 − β₁)`, `v.lerp_(g², 1 − β₂)`, then
    /// `θ += m / d` with `d = −(sqrt(v) / sqrt(1 − β₂ᵗ) + ε) · (1 − β₁ᵗ) / (s · lr)` (one temporary besides `g²`).
    pub fn step(&mut self, lr: f64) {
        self.step += 1;
        let t = self.step as i32;
        let bc1 = 1.0 - self.beta1.powi(t);
        let bc2_sqrt = (1.0 - self.beta2.powi(t)).sqrt();
        let (b1, b2, eps) = (self.beta1, self.beta2, self.eps);
        let step_size = lr / bc1;
        if let Some(g) = self.flat_grads() {
            let f = self.flat.as_ref().expect("flat gradients come from the flat layout");
            tch::no_grad(|| {
                let _ = f.exp_avg.shallow_clone().lerp_(&g, 1.0 - b1);
                let _ = f.exp_avg_sq.shallow_clone().lerp_(&g.square(), 1.0 - b2);
                if step_size != 0.0 {
                    let mut denom = f.exp_avg_sq.sqrt();
                    let _ = denom.g_mul_scalar_(-1.0 / (bc2_sqrt * step_size));
                    let _ = denom.g_add_scalar_(-eps / step_size);
                    if let Some(rate) = &f.rate {
                        let _ = denom.g_div_(rate);
                    }
                    let _ = f.buffers.params().shallow_clone().addcdiv_(&f.exp_avg, &denom);
                }
            });
            self.flat_steps += 1;
            return;
        }
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
                // d = −(sqrt(v) / bc2_sqrt + eps) / (s · step_size)
                let step_size = step_size * self.rate_scales[i];
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
    use tch::Kind;

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

    /// Two stores with the same values: `w` `[3, 4]`, `b` `[4]`, and `u` `[2]` which the loss uses from step
    /// `use_u_from` on (a language's own layer before its first batch).
    fn twin(layout: AdamLayout) -> (VarStore, Adam) {
        let vs = VarStore::new(tch::Device::Cpu);
        let w = vs.root().var("w", &[3, 4], tch::nn::Init::Const(0.0));
        let _ = vs.root().var("b", &[4], tch::nn::Init::Const(0.5));
        let _ = vs.root().var("u", &[2], tch::nn::Init::Const(-1.0));
        tch::no_grad(|| {
            let values = Tensor::arange(12, (Kind::Float, tch::Device::Cpu)).sin().view([3, 4]);
            w.shallow_clone().copy_(&values);
        });
        let adam = Adam::with_layout(&vs, layout);
        assert_eq!(adam.layout(), layout);
        (vs, adam)
    }

    /// The loss of step `t` over [`twin`]'s variables: `‖x_t w + b‖²` with `x_t = (t + 1) · (0, 1, 2)`, plus `‖2u‖²`
    /// from step `use_u_from` on.
    fn twin_loss(v: &std::collections::HashMap<String, Tensor>, t: i64, use_u_from: i64) -> Tensor {
        let x = Tensor::arange(3, (Kind::Float, tch::Device::Cpu)).view([1, 3]) * (t as f64 + 1.0);
        let mut loss = (x.matmul(&v["w"]) + &v["b"]).square().sum(Kind::Float);
        if t >= use_u_from {
            loss += (&v["u"] * 2.0).square().sum(Kind::Float);
        }
        loss
    }

    /// [`twin`]'s values, `b`, `u` and `w` flattened, in that order.
    fn twin_values(vs: &VarStore) -> Vec<Vec<f32>> {
        let v = vs.variables();
        ["b", "u", "w"].iter().map(|n| Vec::<f32>::try_from(&v[*n].flatten(0, -1)).unwrap()).collect()
    }

    fn train(layout: AdamLayout, steps: i64, max_norm: f64, use_u_from: i64) -> (Vec<f64>, Vec<Vec<f32>>) {
        let (vs, mut adam) = twin(layout);
        let v = vs.variables();
        let mut norms = Vec::new();
        for t in 0..steps {
            adam.zero_grad();
            twin_loss(&v, t, use_u_from).backward();
            norms.push(adam.clip_grad_norm(max_norm));
            adam.step(0.05);
        }
        let values = twin_values(&vs);
        (norms, values)
    }

    #[test]
    fn flat_layout_takes_the_same_steps_as_per_parameter() {
        // Without clipping the update is the same arithmetic element by element: equal to the bit.
        let (_, flat) = train(AdamLayout::Flat, 6, 1e9, 0);
        let (_, per) = train(AdamLayout::PerParameter, 6, 1e9, 0);
        assert_eq!(flat, per);
        // `u` without a gradient for two steps: skipped (per parameter) until it has one, then flat.
        let (_, flat) = train(AdamLayout::Flat, 6, 1e9, 2);
        let (_, per) = train(AdamLayout::PerParameter, 6, 1e9, 2);
        assert_eq!(flat, per);
        assert_eq!(flat[1], per[1]);
        // With clipping active the norms differ by f32 rounding (one reduction against per-parameter ones).
        let (norms_flat, flat) = train(AdamLayout::Flat, 6, 1.0, 1);
        let (norms_per, per) = train(AdamLayout::PerParameter, 6, 1.0, 1);
        assert!(norms_flat.iter().all(|&n| n > 1.0), "clipping active: {norms_flat:?}");
        for (a, b) in norms_flat.iter().zip(&norms_per) {
            assert!((a - b).abs() <= 1e-6 * b, "{a} vs {b}");
        }
        for (a, b) in flat.iter().flatten().zip(per.iter().flatten()) {
            assert!((a - b).abs() <= 1e-5, "{a} vs {b}");
        }
    }

    #[test]
    fn rate_scales_multiply_a_parameters_step_in_both_layouts() {
        // `u` joins the loss from step `use_u_from` on: until then the flat layout steps parameter by parameter.
        let run = |layout: AdamLayout, steps: i64, use_u_from: i64| {
            let (vs, adam) = twin(layout);
            let mut adam = adam.with_rate_scales(|name| if name == "w" { 3.0 } else { 1.0 }).unwrap();
            let v = vs.variables();
            let before = twin_values(&vs);
            for t in 0..steps {
                adam.zero_grad();
                twin_loss(&v, t, use_u_from).backward();
                adam.step(0.05);
            }
            (before, twin_values(&vs), adam.flat_steps())
        };
        for layout in [AdamLayout::Flat, AdamLayout::PerParameter] {
            // The first step moves each weight by ≈ s · lr · sign(g): 0.05 for b and u, 0.15 for w (but w's first
            // row, which multiplies x₀ = 0 and so has a zero gradient).
            let (before, after, flat_steps) = run(layout, 1, 0);
            assert_eq!(flat_steps, u64::from(layout == AdamLayout::Flat), "{layout:?}");
            for (name, i, lr, skip) in [("b", 0, 0.05, 0), ("u", 1, 0.05, 0), ("w", 2, 0.15, 4)] {
                for (k, (b, a)) in before[i].iter().zip(&after[i]).enumerate().skip(skip) {
                    assert!(((b - a).abs() - lr).abs() < 1e-5, "{layout:?} {name}[{k}] moved {}", b - a);
                }
            }
        }
        // Six steps, every one flat, and six of which the first two go parameter by parameter: the layouts agree (the
        // flat one divides by the multipliers, the other scales the step).
        for (use_u_from, flat_expected) in [(0, 6), (2, 4)] {
            let (_, flat, flat_steps) = run(AdamLayout::Flat, 6, use_u_from);
            let (_, per, _) = run(AdamLayout::PerParameter, 6, use_u_from);
            assert_eq!(flat_steps, flat_expected);
            for (a, b) in flat.iter().flatten().zip(per.iter().flatten()) {
                assert!((a - b).abs() <= 1e-6, "u from step {use_u_from}: {a} vs {b}");
            }
        }
        // Multipliers set back to 1 drop the flat layout's rate buffer: it steps as an Adam without multipliers.
        let (_, adam) = twin(AdamLayout::Flat);
        let adam = adam.with_rate_scales(|_| 2.0).unwrap().with_rate_scales(|_| 1.0).unwrap();
        assert!(adam.flat.as_ref().unwrap().rate.is_none());
        // A multiplier that is not a positive number is refused, naming the parameter.
        let (_, adam) = twin(AdamLayout::Flat);
        let e = adam.with_rate_scales(|name| if name == "u" { 0.0 } else { 1.0 }).unwrap_err().to_string();
        assert!(e.contains("'u'") && e.contains("positive"), "{e}");
    }

    #[test]
    fn flat_layout_saves_and_loads_the_same_moments() {
        let dir = tempfile::tempdir().unwrap();
        let (vs, mut adam) = twin(AdamLayout::Flat);
        adam.zero_grad();
        vs.variables()["w"].square().sum(Kind::Float).backward();
        adam.step(0.1);
        adam.save(&dir.path().join("opt.safetensors")).unwrap();
        let (_vs2, mut per) = twin(AdamLayout::PerParameter);
        per.load(&dir.path().join("opt.safetensors"), adam.step).unwrap();
        let (_vs3, mut flat) = twin(AdamLayout::Flat);
        flat.load(&dir.path().join("opt.safetensors"), adam.step).unwrap();
        for i in 0..3 {
            assert!(per.exp_avg[i].equal(&adam.exp_avg[i]) && flat.exp_avg_sq[i].equal(&adam.exp_avg_sq[i]));
        }
        // Loaded into the flat layout's views, so the flat update sees them.
        let m = &flat.flat.as_ref().unwrap().exp_avg;
        assert!(m.abs().sum(Kind::Float).double_value(&[]) > 0.0);
    }
}
