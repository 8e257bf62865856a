//! MKL's vector math (VML) initialised on one thread before any op splits it across threads.
//!
//! On x86 CPUs the PyPI libtorch computes several float element-wise ops (`sqrt`, `exp`, `log`, `tanh`, `erf`, …:
//! ATen's `cpu/vml.h`) with MKL's VML, and splits a tensor of more than 2,048 elements across the OpenMP threads. When
//! the first VML call of a process is such a split call, a worker thread can compute its share on a low-accuracy path.
//! Measured in this repository (2026-11-28, two threads, `ATEN_CPU_CAPABILITY=avx2`): Adam in flat buffers takes `sqrt`
//! of all second moments at once, and in 13 of 284 processes (fresh four- and sixty-step runs and resumes) the second
//! half of the buffer, the worker's chunk, came back with relative errors near 1.7e-4 instead of one ulp, while the
//! first half, the gradients and both moments were equal to the bit. Two runs from the same seed, or a resumed run and
//! an uninterrupted one, then end with different weights (the CI failure of
//! `kill_9_loses_at_most_one_checkpoint_interval`, with the default AVX-512 dispatch). Per parameter, whose first
//! `sqrt` is on a 64-element tensor on one thread: 0 of 176. Flat after [`init`]: 0 of 80.
//!
//! [`init`] runs each of these ops once on a one-element tensor on the calling thread, so that MKL sets itself up
//! there; only `sqrt` was seen to go wrong, the others share its entry point. It is idempotent and cheap
//! (microseconds); the binary calls it at start, and [`crate::device::Compute`] and [`crate::nn::schedule::Adam`] call it for
//! library users.
use std::sync::Once;
use tch::{Device, Kind, Tensor};

static INIT: Once = Once::new();

/// Run each VML-backed element-wise op once, in f32 and f64, on this thread (see the module docs); later calls do
/// nothing.
pub fn init() {
    INIT.call_once(|| {
        tch::no_grad(|| {
            for kind in [Kind::Float, Kind::Double] {
                // The fallible forms: a libtorch that cannot run one of them loses only this warm-up.
                let Ok(x) = Tensor::f_full([1], 0.5, (kind, Device::Cpu)) else { return };
                for op in OPS {
                    let _ = op(&x);
                }
            }
        })
    });
}

/// Whether [`init`] has run in this process.
pub fn is_initialised() -> bool {
    INIT.is_completed()
}

/// A fallible element-wise op of `tch`.
type ElementWise = fn(&Tensor) -> Result<Tensor, tch::TchError>;

/// The element-wise ops ATen hands to VML (`cpu/vml.h`, `IMPLEMENT_VML_MKL`), those of them that `tch` exposes.
const OPS: [ElementWise; 20] = [
    Tensor::f_abs,
    Tensor::f_acos,
    Tensor::f_asin,
    Tensor::f_atan,
    Tensor::f_cos,
    Tensor::f_cosh,
    Tensor::f_erf,
    Tensor::f_erfc,
    Tensor::f_erfinv,
    Tensor::f_exp,
    Tensor::f_expm1,
    Tensor::f_log,
    Tensor::f_log10,
    Tensor::f_log1p,
    Tensor::f_log2,
    Tensor::f_sin,
    Tensor::f_sinh,
    Tensor::f_sqrt,
    Tensor::f_tan,
    Tensor::f_tanh,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_runs_once_and_leaves_the_ops_exact() {
        init();
        assert!(is_initialised());
        // Idempotent.
        init();
        // A split call after init: every element of both threads' chunks within one ulp of the f64 square root.
        let x = Tensor::rand([84_496], (Kind::Float, Device::Cpu)) * 1e-6 + 1e-12;
        let exact = x.to_kind(Kind::Double).sqrt();
        let rel = ((x.sqrt().to_kind(Kind::Double) - &exact).abs() / exact).max().double_value(&[]);
        assert!(rel < 2.0 * f32::EPSILON as f64, "largest relative error {rel}");
    }
}
