//! Compute devices and the libtorch this binary runs on.
//!
//! `cpu`, `cuda` (the first GPU) or `cuda:N`; asking for CUDA where libtorch sees no GPU is an error that says
//! so, never a silent fall-back to the CPU.
use crate::error::{Error, Result};
use serde::Serialize;

/// Parse a device name (`cpu`, `cuda`, `cuda:N`) and check that it exists.
pub fn parse_device(name: &str) -> Result<tch::Device> {
    let name = name.trim().to_ascii_lowercase();
    let device = match name.as_str() {
        "cpu" => return Ok(tch::Device::Cpu),
        "cuda" | "gpu" => 0usize,
        other => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
            Some(Ok(n)) => n,
            _ => return Err(Error::Invalid(format!("unknown device '{name}': expected cpu, cuda or cuda:N"))),
        },
    };
    let available = tch::Cuda::device_count().max(0) as usize;
    if device >= available {
        return Err(Error::Invalid(format!(
            "device '{name}' requested but libtorch sees {available} CUDA device(s){}",
            if available == 0 { " (no GPU or no CUDA driver on this machine); use --device cpu" } else { "" }
        )));
    }
    Ok(tch::Device::Cuda(device))
}

/// Facts about the linked libtorch, for `crossling info` and for provenance records.
#[derive(Debug, Clone, Serialize)]
pub struct TorchInfo {
    /// The folder the binary's rpath points at (set by build.rs).
    pub libtorch_lib: &'static str,
    pub cuda_available: bool,
    pub cuda_devices: i64,
    pub cudnn_available: bool,
    pub intra_op_threads: i32,
}

/// Query the linked libtorch.
pub fn torch_info() -> TorchInfo {
    TorchInfo {
        libtorch_lib: env!("CROSSLING_LIBTORCH_LIB"),
        cuda_available: tch::Cuda::is_available(),
        cuda_devices: tch::Cuda::device_count(),
        cudnn_available: tch::Cuda::cudnn_is_available(),
        intra_op_threads: tch::get_num_threads(),
    }
}

/// libtorch's CPU generator is global to the process. [`crate::train::train`] holds this lock for its whole run (seeding,
/// initialisation, dropout), so concurrent `train` calls in one process — parallel tests — stay reproducible;
/// other code that draws from libtorch's generator should hold it too. Not re-entrant.
pub fn torch_rng_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtorch_is_linked_and_computes() {
        let a = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape([2, 2]);
        let b = a.matmul(&a);
        assert_eq!(Vec::<f32>::try_from(b.reshape([-1])).unwrap(), [7.0, 10.0, 15.0, 22.0]);
        assert!(torch_info().intra_op_threads >= 1);
    }

    #[test]
    fn device_names() {
        assert_eq!(parse_device("cpu").unwrap(), tch::Device::Cpu);
        assert!(parse_device("tpu").unwrap_err().to_string().contains("expected cpu, cuda or cuda:N"));
        if !tch::Cuda::is_available() {
            assert!(parse_device("cuda").unwrap_err().to_string().contains("use --device cpu"));
        }
    }
}
