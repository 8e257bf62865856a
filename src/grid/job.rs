//! One job of a plan, run into the shared cache (`crossling job run ID --plan FILE`), and the state of a job
//! (done, failed, pending) as the cache and the job markers say.
//!
//! A job checks that its dependencies are done, runs through the same library calls as the figure scripts (so it
//! writes the very cache entries a script would read: [`crate::train::model_cache::ensure_trained`],
//! [`crate::tasks::run::run_task`], [`crate::script::runner::run_script`]), then writes `MODELS/jobs/ID.done`. A
//! failure writes `MODELS/jobs/ID.failed` with the error (removed when the job is run again) and nothing else.
//! While it runs, `MODELS/jobs/ID.running` holds `HOST PID STARTED` ([`is_running`], for `grid status`).
//! `ID.done` is JSON: `job`, `finished_at`, and (since 2026-11-27) the job's wall `seconds`, libtorch's `threads`
//! and the `host`, and (since the evening of 2026-11-27) its `cpu_seconds` (user + system over all threads,
//! [`crate::cpu_time`]), so that `grid status` can add up what a grid really cost ([`measured`]): wall time counts
//! the waits of a shared or paused machine, CPU time does not.
use std::path::PathBuf;

use super::plan::{Job, JobSpec, Plan};
use super::state::{marker_in, now, state_in, this_host, JobClock, JobState};
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::device::{Compute, Precision};
use crate::error::{Error, Result};
use crate::tasks::run::{
    ner_train_data, run_task, run_task_grid, split_options, ModelFolder, TaskContext, TaskKind, TaskRequest,
};

/// `MODELS/jobs/ID.EXT` of `plan`'s model cache.
pub fn marker(plan: &Plan, id: &str, ext: &str) -> PathBuf {
    marker_in(&plan.request.models_dir, id, ext)
}

/// The state of `job` now (see the module docs).
pub fn state(plan: &Plan, job: &Job) -> JobState {
    state_in(&plan.request.models_dir, job)
}

/// Runs job `id` of `plan` (see the module docs); `log` receives its progress lines.
pub fn run_job(plan: &Plan, id: &str, log: &dyn Fn(String)) -> Result<()> {
    let job = plan.job(id)?;
    for d in &job.deps {
        if state(plan, plan.job(d)?) != JobState::Done {
            return Err(Error::Invalid(format!("job {id}: its dependency {d} is not done yet")));
        }
    }
    let failed = marker(plan, id, "failed");
    let _ = std::fs::remove_file(&failed);
    let running = marker(plan, id, "running");
    if let Some(dir) = running.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let who = format!("{} {} {}\n", this_host(), std::process::id(), now());
    crate::atomic_file::write_atomic(&running, &who)?;
    let clock = JobClock::start();
    let outcome = execute(plan, job, log);
    let _ = std::fs::remove_file(&running);
    let (path, text) = match &outcome {
        Ok(()) => (marker(plan, id, "done"), clock.done_marker(id)),
        Err(e) => (failed, format!("{e}\n")),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    crate::atomic_file::write_atomic(&path, &text)?;
    outcome
}

/// What a finished job's `ID.done` marker says it cost ([`measured`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Wall seconds.
    pub seconds: f64,
    /// libtorch threads.
    pub threads: i64,
    /// CPU seconds, user + system over all threads; `None` in markers written before it was recorded (the evening
    /// of 2026-11-27) or off Linux.
    pub cpu_seconds: Option<f64>,
}

/// What finished job `id` cost, from its `ID.done` marker; `None` when it is not done through [`run_job`] or its
/// marker predates the times (2026-11-27).
pub fn measured(plan: &Plan, id: &str) -> Option<Measured> {
    let text = std::fs::read_to_string(marker(plan, id, "done")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(Measured {
        seconds: v.get("seconds")?.as_f64()?,
        threads: v.get("threads").and_then(serde_json::Value::as_i64).unwrap_or(1),
        cpu_seconds: v.get("cpu_seconds").and_then(serde_json::Value::as_f64),
    })
}

/// Whether job `id` runs now by its `ID.running` marker (`HOST PID STARTED`, written by [`run_job`] and removed when
/// it ends): on this machine the process must still exist (a killed job leaves a stale marker); a marker from
/// another machine (a Slurm node) is believed.
pub fn is_running(plan: &Plan, id: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(marker(plan, id, "running")) else { return false };
    let mut parts = text.split_whitespace();
    match (parts.next(), parts.next()) {
        (Some(host), Some(pid)) if host == this_host() => std::path::Path::new("/proc").join(pid).exists(),
        _ => true,
    }
}

fn execute(plan: &Plan, job: &Job, log: &dyn Fn(String)) -> Result<()> {
    let catalog = Catalog::load_default()?;
    let roots = DataRoots::from_env();
    let compute = Compute::resolve(&plan.request.device, Precision::Auto)?;
    match &job.spec {
        JobSpec::Pretrain { label, key, config } => {
            let mut cfg = (**config).clone();
            cfg.train.device = compute.device_name();
            let located = crate::train::model_cache::locate(label, &cfg, &catalog, &plan.request.models_dir)?;
            if &located.key != key {
                return Err(Error::Invalid(format!(
                    "job {}: the model's cache key is now {} (the data or the code changed since planning): make the \
                     plan again",
                    job.id, located.key
                )));
            }
            log(format!("job {}: pre-training {label} into {}", job.id, located.dir.display()));
            crate::train::model_cache::ensure_trained(label, &cfg, &catalog, &roots, &plan.request.models_dir, false)?;
            Ok(())
        }
        JobSpec::Task { task, model, options, axes, seed } => {
            let JobSpec::Pretrain { label, key, .. } = &plan.job(model)?.spec else {
                return Err(Error::Invalid(format!("job {}: {model} is not a pre-training", job.id)));
            };
            let dir = crate::train::model_cache::folder(&plan.request.models_dir, label, key);
            let folder = ModelFolder { name: label.clone(), dir };
            let (langs, train_data, overrides) = split_options(options.clone())?;
            let task: TaskKind = task.parse()?;
            let train_data = ner_train_data(task, train_data)?;
            let req = TaskRequest {
                task,
                model: &folder,
                langs,
                overrides,
                seed: Some(*seed),
                scale: plan.request.scale,
                compute,
                stack: None,
                train_data,
            };
            let ctx = TaskContext {
                catalog: &catalog,
                roots: &roots,
                models_dir: &plan.request.models_dir,
                fresh: false,
                cached_only: false,
                progress: false,
                log,
            };
            match axes {
                None => run_task(&ctx, &req).map(|_| ()),
                Some(axes) => run_task_grid(&ctx, &req, axes).map(|_| ()),
            }
        }
        JobSpec::Figure { figure } => {
            let script = crate::figures::script(&plan.request.scripts_dir, figure).ok_or_else(|| {
                Error::Invalid(format!("figure {figure} has no script in {}", plan.request.scripts_dir.display()))
            })?;
            let mut opts = crate::script::runner::RunOptions::figure(plan.request.scale, plan.request.out_dir.clone());
            opts.seed = plan.request.seed;
            opts.seeds = plan.request.seeds;
            opts.compute = compute;
            opts.scripts_dir = plan.request.scripts_dir.clone();
            opts.models_dir = plan.request.models_dir.clone();
            let rec = crate::script::runner::run_script(&script, figure, &opts)?;
            log(format!("job {}: wrote {}", job.id, plan.request.out_dir.join(format!("{}.json", rec.id)).display()));
            Ok(())
        }
    }
}
