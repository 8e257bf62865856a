//! Where and in which arithmetic a model trains, fine-tunes or encodes: [`Compute`], resolved once where a command
//! or script starts and handed to every layer below it.
//!
//! [`Compute`] resolves a device name (`auto` = the first CUDA device when libtorch sees
//! one, else the CPU; otherwise [`crate::device::parse_device`]) and a [`Precision`]:
//! - `fp32`: everything in f32;
//! - `bf16`: the forward pass and the loss run under CUDA autocast with bfloat16 as the lower-precision type
//!   (matmuls, fused attention and GELU inputs in bf16; autocast keeps softmax/log-softmax, LayerNorm and the
//!   cross-entropy in f32, and the model casts the logits to f32 before the loss). The backward pass runs outside
//!   the autocast region as autocast prescribes; parameters, gradients and Adam moments stay f32, and bf16's f32
//!   exponent range needs no loss scaling. **bf16 is CUDA only**: asking for it on the CPU is an error, because
//!   libtorch's CPU autocast covers a different op list and is slower than fp32 on most CPUs;
//! - `auto`: `bf16` on CUDA, `fp32` on the CPU.
//!
//! The autocast region is opened by [`crate::device::autocast`] with libtorch's device-typed C++ API (bf16 as the
//! lower-precision type, which `tch` 0.26 cannot set, and none of the deprecated calls behind `tch::autocast`).
use serde::{Deserialize, Serialize};
use tch::Device;

use super::autocast;
use crate::error::{Error, Result};

/// Arithmetic of the forward pass (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// bf16 autocast on CUDA, fp32 on the CPU.
    #[default]
    Auto,
    /// f32 everywhere.
    Fp32,
    /// bf16 autocast for the forward pass (CUDA only).
    Bf16,
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Precision::Auto),
            "fp32" | "f32" => Ok(Precision::Fp32),
            "bf16" => Ok(Precision::Bf16),
            other => Err(Error::Invalid(format!("unknown precision '{other}': expected auto, fp32 or bf16"))),
        }
    }
}

/// A device (`auto`, `cpu`, `cuda`, `cuda:N`): `auto` is the first CUDA device when libtorch sees one, else the CPU.
pub fn resolve_device(name: &str) -> Result<Device> {
    if name.trim().eq_ignore_ascii_case("auto") {
        Ok(Device::cuda_if_available())
    } else {
        super::parse_device(name)
    }
}

/// Where and in which arithmetic training runs: a resolved device and whether the forward pass uses bf16 autocast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compute {
    pub device: Device,
    /// bf16 autocast around the forward pass (only ever true on CUDA).
    pub bf16: bool,
}

impl Compute {
    /// f32 on the CPU (what the tests use).
    pub fn cpu() -> Self {
        super::vector_math::init();
        Compute { device: Device::Cpu, bf16: false }
    }

    /// Resolves a device name and a precision; `bf16` on the CPU is an error.
    pub fn resolve(device: &str, precision: Precision) -> Result<Self> {
        Self::on(resolve_device(device)?, precision)
    }

    /// Resolves `precision` for an already chosen device.
    pub fn on(device: Device, precision: Precision) -> Result<Self> {
        super::vector_math::init();
        let cuda = device.is_cuda();
        let bf16 = match precision {
            Precision::Auto => cuda,
            Precision::Fp32 => false,
            Precision::Bf16 if cuda => true,
            Precision::Bf16 => {
                return Err(Error::Invalid(
                    "precision bf16 needs a CUDA device (bf16 autocast is CUDA only); use fp32 on the CPU".into(),
                ))
            }
        };
        if bf16 && !autocast::AVAILABLE {
            return Err(Error::Invalid("bf16 autocast is not available on this platform's libtorch binding".into()));
        }
        Ok(Compute { device, bf16 })
    }

    /// `cpu`, `cuda:0`, …: the device as `--device` names it.
    pub fn device_name(&self) -> String {
        match self.device {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(i) => format!("cuda:{i}"),
            other => format!("{other:?}").to_lowercase(),
        }
    }

    /// The resolved precision (`fp32` or `bf16`; never `auto`).
    pub fn precision(&self) -> Precision {
        if self.bf16 {
            Precision::Bf16
        } else {
            Precision::Fp32
        }
    }

    /// `cpu fp32`, `cuda:0 bf16`, … for logs and reports.
    pub fn describe(&self) -> String {
        format!("{} {}", self.device_name(), if self.bf16 { "bf16" } else { "fp32" })
    }

    /// Runs `f` (a forward pass) under this precision: inside bf16 CUDA autocast when `bf16`, else as is.
    pub fn forward<T>(&self, f: impl FnOnce() -> T) -> T {
        if self.bf16 {
            autocast::bf16(f)
        } else {
            f()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_and_device_resolution() {
        assert_eq!(Compute::resolve("cpu", Precision::Auto).unwrap(), Compute::cpu());
        assert_eq!(Compute::resolve("cpu", Precision::Fp32).unwrap(), Compute::cpu());
        let e = Compute::resolve("cpu", Precision::Bf16).unwrap_err().to_string();
        assert!(e.contains("needs a CUDA device"), "{e}");
        assert!(Compute::resolve("tpu", Precision::Auto).is_err());
        let auto = Compute::resolve("auto", Precision::Auto).unwrap();
        assert_eq!(auto.device, Device::cuda_if_available());
        assert_eq!(auto.bf16, auto.device.is_cuda());
        assert_eq!(Compute::cpu().describe(), "cpu fp32");
        assert_eq!("BF16".parse::<Precision>().unwrap(), Precision::Bf16);
        assert!("fp16".parse::<Precision>().is_err());
        let p: Precision = serde_json::from_str("\"fp32\"").unwrap();
        assert_eq!(p, Precision::Fp32);
    }
}
