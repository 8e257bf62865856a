//! Compute devices and the libtorch this binary runs on.
//!
//! `cpu`, `cuda` (the first GPU) or `cuda:N`; asking for CUDA where libtorch sees no GPU is an error that says
//! so, never a silent fall-back to the CPU.
use crate::error::{Error, Result};
use serde::Serialize;

pub mod allocator;
mod autocast;
pub mod compute;
pub mod machine;
pub mod vector_math;

pub use compute::{resolve_device, Compute, Precision};

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
    /// The folder of the `libtorch_cpu` this process has loaded ([`loaded_libtorch_lib`]).
    pub libtorch_lib: String,
    /// That libtorch's version where its folder says (a PyPI wheel's `torch/version.py`), e.g. `2.13.0+cu130`.
    pub libtorch_version: Option<String>,
    pub cuda_available: bool,
    pub cuda_devices: i64,
    pub cudnn_available: bool,
    pub intra_op_threads: i32,
}

/// Query the linked libtorch.
pub fn torch_info() -> TorchInfo {
    let lib = loaded_libtorch_lib();
    TorchInfo {
        libtorch_version: wheel_version(&lib),
        libtorch_lib: lib.display().to_string(),
        cuda_available: tch::Cuda::is_available(),
        cuda_devices: tch::Cuda::device_count(),
        cudnn_available: tch::Cuda::cudnn_is_available(),
        intra_op_threads: tch::get_num_threads(),
    }
}

impl TorchInfo {
    /// The libtorch of a provenance record: its folder, with the version where known.
    pub fn describe(&self) -> String {
        match &self.libtorch_version {
            Some(v) => format!("{} (torch {v})", self.libtorch_lib),
            None => self.libtorch_lib.clone(),
        }
    }
}

/// The folder of the `libtorch_cpu` shared library mapped into this process, from `/proc/self/maps` (Linux),
/// symbolic links resolved; elsewhere, or if it cannot be read, the folder the binary's rpath names (build.rs).
/// A binary moved to another machine, or run with `LD_LIBRARY_PATH`, may load another libtorch than it was built
/// against; this names the one that computes.
pub fn loaded_libtorch_lib() -> std::path::PathBuf {
    let built = std::path::PathBuf::from(env!("CROSSLING_LIBTORCH_LIB"));
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(std::path::Path::new)
        .find(|path| path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libtorch_cpu.")))
        .and_then(|path| path.parent())
        .map(|dir| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
        .unwrap_or(built)
}

/// `__version__` of the PyPI wheel a libtorch folder belongs to (`<torch>/lib` beside `<torch>/version.py`).
fn wheel_version(lib: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(lib.parent()?.join("version.py")).ok()?;
    let line = text.lines().find(|l| l.trim_start().starts_with("__version__"))?;
    let value = line.split_once('=')?.1.trim();
    Some(value.trim_matches(|c| c == '\'' || c == '"').to_string())
}

/// libtorch's CPU generator is global to the process. [`crate::train::train`] holds this lock for its whole run (seeding,
/// initialisation, dropout), so concurrent `train` calls in one process — parallel tests — stay reproducible;
/// every other draw from libtorch's generator (random initialisation included: [`crate::model::MlmModel::new`] takes
/// it) holds it too, so a draw on one thread cannot advance the generator between another thread's seed and its
/// draws. Re-entrant on one thread: a holder may call code that takes it again.
pub fn torch_rng_lock() -> TorchRngGuard {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let depth = RNG_DEPTH.with(|d| d.get());
    let outer = (depth == 0).then(|| LOCK.lock().unwrap_or_else(|e| e.into_inner()));
    RNG_DEPTH.with(|d| d.set(depth + 1));
    TorchRngGuard { _outer: outer }
}

thread_local! {
    /// How many [`TorchRngGuard`]s this thread holds.
    static RNG_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Held access to libtorch's generator (see [`torch_rng_lock`]); the mutex is released when the outermost guard of
/// the thread drops. Not `Send`: it belongs to the thread that took it.
#[must_use = "the generator is only held while the guard lives"]
pub struct TorchRngGuard {
    _outer: Option<std::sync::MutexGuard<'static, ()>>,
}

impl Drop for TorchRngGuard {
    fn drop(&mut self) {
        RNG_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rng_lock_is_reentrant_and_exclusive_across_threads() {
        let outer = torch_rng_lock();
        let inner = torch_rng_lock(); // the same thread: no deadlock
        let (tx, rx) = std::sync::mpsc::channel();
        let other = std::thread::spawn(move || {
            let _g = torch_rng_lock();
            tx.send(()).unwrap();
        });
        drop(inner);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(rx.try_recv().is_err(), "another thread got the lock while this one held it");
        drop(outer);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        other.join().unwrap();
    }

    #[test]
    fn libtorch_is_linked_and_computes() {
        let a = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0]).reshape([2, 2]);
        let b = a.matmul(&a);
        assert_eq!(Vec::<f32>::try_from(b.reshape([-1])).unwrap(), [7.0, 10.0, 15.0, 22.0]);
        assert!(torch_info().intra_op_threads >= 1);
    }

    #[test]
    fn the_loaded_libtorch_is_the_mapped_library_with_its_wheel_version() {
        let lib = loaded_libtorch_lib();
        assert!(lib.join("libtorch_cpu.so").exists() || lib.join("libtorch_cpu.dylib").exists(), "{}", lib.display());
        let info = torch_info();
        if cfg!(target_os = "linux") {
            // setup.sh installs the PyPI wheel: its version file sits beside lib/.
            assert!(info.libtorch_version.as_deref().is_some_and(|v| v.starts_with("2.")), "{info:?}");
            assert!(info.describe().ends_with(&format!("(torch {})", info.libtorch_version.unwrap())));
        }
    }

    #[test]
    fn wheel_versions_are_read_from_version_py() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        assert_eq!(wheel_version(&dir.path().join("lib")), None);
        std::fs::write(dir.path().join("version.py"), "from typing import Optional\n__version__ = '2.13.0+cu130'\n")
            .unwrap();
        assert_eq!(wheel_version(&dir.path().join("lib")).as_deref(), Some("2.13.0+cu130"));
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
