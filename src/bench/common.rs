//! What the benchmarks share: the options every one takes ([`Common`]: threads, Python, seed, device, JSON), the
//! model a benchmark runs ([`BenchModel`]: a random one of a shape, or a pretrained folder), the device helpers, and
//! the Python reference scripts (where they are, running one and reading its JSON result).
use anyhow::{bail, Context, Result};
use clap::Args;
use crossling::model::hf::config::read_hf_config;
use crossling::model::ModelConfig;
use crossling::train::presets::Pretraining;
use crossling::Scale;
use std::path::{Path, PathBuf};
use std::process::Command;
use tch::Device;

#[derive(Args)]
pub struct Common {
    /// Threads for libtorch here and for the reference (default: all cores).
    #[arg(long)]
    pub(super) threads: Option<usize>,
    /// Python with numpy and torch (default: $CROSSLING_PYTHON, else the project's .venv/bin/python).
    #[arg(long)]
    pub(super) python: Option<PathBuf>,
    /// Random seed of the synthetic data.
    #[arg(long, default_value_t = 0)]
    pub(super) seed: i64,
    /// cpu, cuda or cuda:N: where crossling's kernels (and the reference) run.
    #[arg(long, default_value = "cpu")]
    pub(super) device: String,
    #[arg(long)]
    pub(super) json: bool,
}

/// The model both sides of a benchmark run: a random BERT of a scale's shape (the reference creates it), or a
/// pretrained BERT folder given as `--model NAME|DIR` that both sides load.
pub(super) struct BenchModel {
    /// The pretrained folder; `None` for a random model.
    pub(super) given: Option<PathBuf>,
    /// Its shape: the scale's (`ModelConfig::at` with the scale's pair vocabulary), or the folder's `config.json`.
    pub(super) config: ModelConfig,
    /// What the report calls it: the scale, or the `--model` argument.
    pub(super) label: String,
}

impl BenchModel {
    /// `model` (a registry name or a folder) when given, else a random model of `shape`. Only the folder's
    /// `config.json` is read here; its weights are loaded by each side when it runs.
    pub(super) fn new(shape: Scale, model: Option<&str>) -> Result<Self> {
        let given = model.map(crossling::model::registry::resolve).transpose()?;
        let config = match &given {
            Some(dir) => read_hf_config(&dir.join("config.json"))?.model,
            None => ModelConfig::at(shape, Pretraining::at(shape).vocab, Vec::<String>::new()),
        };
        let label = model.map_or_else(|| shape.to_string(), str::to_string);
        Ok(BenchModel { given, config, label })
    }
}

pub(super) fn threads(c: &Common) -> usize {
    c.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

pub(super) fn device(c: &Common) -> Result<Device> {
    Ok(crossling::device::resolve_device(&c.device)?)
}

pub(super) fn device_name(d: Device) -> String {
    match d {
        Device::Cuda(i) => format!("cuda:{i}"),
        _ => "cpu".into(),
    }
}

/// Wait for the work queued on `d` (a no-op on the CPU), so that wall times include it.
pub(super) fn sync(d: Device) {
    if let Device::Cuda(i) = d {
        tch::Cuda::synchronize(i as i64);
    }
}

pub(super) fn python(c: &Common) -> PathBuf {
    crossling::paths::python(c.python.as_deref())
}

pub(super) fn script(name: &str) -> PathBuf {
    reference_dir(std::env::var_os(REFERENCE_ENV)).join(name)
}

/// Names the folder of the PyTorch reference scripts, for a binary run away from its build folder (a GPU node).
const REFERENCE_ENV: &str = "CROSSLING_BENCH_REFERENCE";
const REFERENCE_BESIDE_CRATE: &str = "src/bench/reference";

/// `$CROSSLING_BENCH_REFERENCE` when set and not empty, else `src/bench/reference` beside the crate.
fn reference_dir(var: Option<std::ffi::OsString>) -> PathBuf {
    crossling::paths::non_empty(var).unwrap_or_else(|| crossling::paths::beside_crate(REFERENCE_BESIDE_CRATE))
}

/// An error naming [`REFERENCE_ENV`] unless the reference script `script` exists (checked before a benchmark's
/// own runs, so a binary away from its build folder stops at once).
pub(super) fn require_reference(script: &Path) -> Result<()> {
    if !script.is_file() {
        bail!(
            "PyTorch reference script {} not found (a binary run away from its build folder): set \
             {REFERENCE_ENV} to a checkout's src/bench/reference, or pass --no-reference",
            script.display()
        );
    }
    Ok(())
}

/// Run a reference script; its last stdout line that opens with `{` is a JSON object (its result).
pub(super) fn run_reference(py: &Path, script: &Path, args: &[String]) -> Result<serde_json::Value> {
    require_reference(script)?;
    let out = Command::new(py)
        .arg(script)
        .args(args)
        .output()
        .with_context(|| format!("running {} {}", py.display(), script.display()))?;
    if !out.status.success() {
        bail!("{} failed ({}):\n{}", script.display(), out.status, String::from_utf8_lossy(&out.stderr));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or_default();
    serde_json::from_str(last).with_context(|| format!("{} printed no JSON: {stdout}", script.display()))
}

/// CPU seconds (user + system, all threads) of this process so far ([`crossling::cpu_time`]); NaN where unknown.
pub(super) fn cpu_seconds() -> f64 {
    crossling::cpu_time::process_cpu_seconds().unwrap_or(f64::NAN)
}

pub(super) fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("crossling-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_folder_from_the_variable_or_beside_the_crate() {
        let beside = crossling::paths::beside_crate(REFERENCE_BESIDE_CRATE);
        assert_eq!(reference_dir(None), beside);
        assert_eq!(reference_dir(Some("".into())), beside);
        assert_eq!(reference_dir(Some("/opt/ref".into())), PathBuf::from("/opt/ref"));
        assert!(beside.join("bench_train.py").is_file());
    }

    #[test]
    fn a_missing_reference_script_names_the_variable_before_running_python() {
        let e = run_reference(Path::new("/nonexistent/python"), Path::new("/nonexistent/bench_train.py"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/bench_train.py") && e.contains(REFERENCE_ENV), "{e}");
    }
}
