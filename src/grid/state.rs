//! The state of a job (done, failed, pending) as the cache and the job markers say, and the markers themselves:
//! `MODELS/jobs/ID.done` (JSON: `job`, `finished_at`, the job's wall `seconds`, libtorch's `threads`, the `host` and
//! its `cpu_seconds`; see [`super::job`]) and `MODELS/jobs/ID.failed`. Shared by the job runner ([`super::job`]) and
//! the planner ([`super::plan`]), which writes a done marker for a figure whose planning run was its whole run.
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::jobs::{Job, JobSpec};

/// Where a job's state is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Done,
    Failed,
    Pending,
}

/// `MODELS/jobs/ID.EXT` with `MODELS` = `models_dir`.
pub fn marker_in(models_dir: &Path, id: &str, ext: &str) -> PathBuf {
    models_dir.join("jobs").join(format!("{id}.{ext}"))
}

/// Wall and CPU time since a job's work began: what its done marker records.
pub struct JobClock {
    wall: std::time::Instant,
    cpu: Option<f64>,
}

impl JobClock {
    pub fn start() -> Self {
        JobClock { wall: std::time::Instant::now(), cpu: crate::cpu_time::process_cpu_seconds() }
    }

    /// Wall seconds since [`JobClock::start`].
    pub fn seconds(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }

    /// The `ID.done` marker's text for job `id` finishing now (see the module docs).
    pub(super) fn done_marker(&self, id: &str) -> String {
        let cpu = self.cpu.zip(crate::cpu_time::process_cpu_seconds()).map(|(a, b)| b - a);
        done_marker(id, self.seconds(), cpu)
    }
}

/// The state of `job` now in the model cache `models_dir` (see the module docs).
pub fn state_in(models_dir: &Path, job: &Job) -> JobState {
    let done = match &job.spec {
        JobSpec::Pretrain { label, key, config } => {
            crate::train::model_cache::is_trained(&crate::train::model_cache::folder(models_dir, label, key), config)
        }
        _ => marker_in(models_dir, &job.id, "done").is_file(),
    };
    if done {
        JobState::Done
    } else if marker_in(models_dir, &job.id, "failed").is_file() {
        JobState::Failed
    } else {
        JobState::Pending
    }
}

/// Writes job `id`'s done marker in the model cache `models_dir` (see the module docs) and removes a failure
/// marker: for work done outside `job run` (a figure whose planning run was its whole run, [`super::plan`]).
pub fn write_done(models_dir: &Path, id: &str, clock: &JobClock) -> Result<()> {
    let dir = models_dir.join("jobs");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let _ = std::fs::remove_file(marker_in(models_dir, id, "failed"));
    crate::atomic_file::write_atomic(&marker_in(models_dir, id, "done"), clock.done_marker(id))
}

/// The text of a finished job's `ID.done` marker (see the module docs).
pub(super) fn done_marker(id: &str, seconds: f64, cpu_seconds: Option<f64>) -> String {
    let tenth = |s: f64| (s * 10.0).round() / 10.0;
    let mut v = serde_json::json!({
        "job": id,
        "finished_at": now(),
        "seconds": tenth(seconds),
        "threads": tch::get_num_threads(),
        "host": this_host(),
    });
    if let Some(cpu) = cpu_seconds {
        v["cpu_seconds"] = tenth(cpu).into();
    }
    format!("{v}\n")
}

/// This machine's name (Linux `/proc/sys/kernel/hostname`; `unknown` elsewhere).
pub(super) fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map_or_else(|_| "unknown".into(), |h| h.trim().to_string())
}

pub(super) fn now() -> String {
    crate::report::provenance::now_utc()
}
