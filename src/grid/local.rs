//! The local executor (`crossling grid run PLAN --workers N`): ready jobs of a plan run as `crossling job run`
//! processes, at most N at a time, each with T libtorch threads (`OMP_NUM_THREADS`) or, with `--gpus`, one worker
//! per GPU (`CUDA_VISIBLE_DEVICES`); a job starts when its dependencies are done, and the dependants of a failed
//! job are not started. When no work is left the figures with a job finished since are planned again
//! ([`super::plan::replan`]: a script whose later requests depend on earlier results reveals them now) and the new
//! work runs; then the figure jobs not done yet run (a figure whose last planning was its whole run is done:
//! [`super::plan`]), one at a time with every worker's threads. Each job logs to `LOGS/ID.log`.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::job::state;
use super::plan::{replan, JobSpec, Plan};
use super::state::JobState;
use crate::error::{Error, Result};

/// How to run a plan locally.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Parallel job processes.
    pub workers: usize,
    /// libtorch threads per job process.
    pub threads_per_worker: usize,
    /// GPUs, one worker each (overrides `workers`); empty: none.
    pub gpus: Vec<usize>,
    /// The `crossling` executable the jobs run with.
    pub exe: PathBuf,
    /// Where each job's log goes (`ID.log`).
    pub log_dir: PathBuf,
    /// Print a progress bar.
    pub progress: bool,
}

/// What a local run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalSummary {
    /// Jobs run, in the order they finished.
    pub ran: Vec<String>,
    /// Planning passes (1 when the first plan held the whole grid).
    pub passes: usize,
}

/// Runs the plan at `plan_path` to the end (see the module docs); the plan file is rewritten after each pass.
pub fn run_local(plan_path: &Path, opts: &LocalOptions) -> Result<LocalSummary> {
    std::fs::create_dir_all(&opts.log_dir).map_err(|e| Error::io(&opts.log_dir, e))?;
    let mut plan = Plan::load(plan_path)?;
    let mut summary = LocalSummary::default();
    loop {
        summary.passes += 1;
        let work: Vec<String> =
            plan.pending_work().iter().filter(|j| state(&plan, j) != JobState::Done).map(|j| j.id.clone()).collect();
        if work.is_empty() {
            break;
        }
        let slots = if opts.gpus.is_empty() { opts.workers.max(1) } else { opts.gpus.len() };
        match run_jobs(&plan, plan_path, &work, slots, opts) {
            Ok(ran) => summary.ran.extend(ran),
            Err(e) => {
                let waiting: Vec<String> = figure_jobs(&plan)
                    .iter()
                    .map(|id| format!("  {id}: not started (a figure needs every job)"))
                    .collect();
                return Err(Error::Invalid(format!("{e}\n{}", waiting.join("\n"))));
            }
        }
        plan = replan(&plan)?;
        plan.save(plan_path)?;
    }
    let mut all_threads = opts.clone();
    all_threads.threads_per_worker = opts.threads_per_worker * opts.workers.max(1);
    // A figure whose planning run in this plan was its whole run is done already (its own marker: a marker of
    // another plan on the same cache, for another output folder, does not count).
    let done_here = |id: &String| plan.job(id).is_ok_and(|j| j.done && state(&plan, j) == JobState::Done);
    for id in figure_jobs(&plan).into_iter().filter(|id| !done_here(id)) {
        summary.ran.extend(run_jobs(&plan, plan_path, std::slice::from_ref(&id), 1, &all_threads)?);
    }
    Ok(summary)
}

/// `~8.7 h of one thread left (about 4.4 h on 2 workers)`: the jobs of `plan` not done, re-estimated from the done
/// ones ([`super::calibrate`]) and divided by the threads of all workers (about: it assumes every thread stays busy);
/// `figure jobs not estimated` when only figure jobs are left.
fn time_left(plan: &Plan, workers: usize, threads_per_worker: usize) -> String {
    let rest = super::calibrate::remaining_of(plan);
    let (s, pending_figures) = (rest.seconds, rest.unestimated > 0);
    if s == 0.0 && pending_figures {
        return "figure jobs not estimated".into();
    }
    let workers = workers.max(1);
    let plural = if workers == 1 { "" } else { "s" };
    let wall = s / (workers * threads_per_worker.max(1)) as f64;
    let figures = if pending_figures { ", figure jobs not counted" } else { "" };
    format!("~{} of one thread left (about {} on {workers} worker{plural}{figures})", span(s), span(wall))
}

/// `42 s`, `17 min`, `4.4 h`.
fn span(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// The ids of the plan's figure jobs.
fn figure_jobs(plan: &Plan) -> Vec<String> {
    plan.jobs.iter().filter(|j| matches!(j.spec, JobSpec::Figure { .. })).map(|j| j.id.clone()).collect()
}

/// The command line of job `id`.
fn job_command(plan: &Plan, plan_path: &Path, id: &str, opts: &LocalOptions, gpu: Option<usize>) -> Command {
    let mut cmd = Command::new(&opts.exe);
    cmd.args(["job", "run", id, "--plan"]).arg(plan_path);
    cmd.env("OMP_NUM_THREADS", opts.threads_per_worker.max(1).to_string());
    cmd.env("CROSSLING_MODELS", &plan.request.models_dir);
    if let Some(g) = gpu {
        cmd.env("CUDA_VISIBLE_DEVICES", g.to_string());
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs the jobs `ids` of `plan` (in plan order as they become ready), at most `slots` at a time; returns the ids
/// run. A failed job stops its dependants; the error lists every failure with its log.
fn run_jobs(plan: &Plan, plan_path: &Path, ids: &[String], slots: usize, opts: &LocalOptions) -> Result<Vec<String>> {
    let wanted: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    let mut waiting: Vec<&str> = plan.jobs.iter().map(|j| j.id.as_str()).filter(|id| wanted.contains(id)).collect();
    let mut finished: BTreeSet<String> = BTreeSet::new();
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    let mut running: Vec<(Child, String, Option<usize>)> = Vec::new();
    let bar =
        opts.progress.then(|| crate::progress::bar(waiting.len() as u64, "grid [{bar:30}] {pos}/{len} jobs  {msg}"));
    let mut ran = Vec::new();
    // What the plan still needs, re-estimated from the done jobs when one finishes (for the bar).
    let mut left: Option<String> = None;
    let free_gpu = |running: &[(Child, String, Option<usize>)]| {
        opts.gpus.iter().copied().find(|g| !running.iter().any(|(_, _, used)| *used == Some(*g)))
    };
    loop {
        // Start what is ready.
        let mut i = 0;
        while i < waiting.len() && running.len() < slots {
            let job = plan.job(waiting[i])?;
            let dep_failed = job.deps.iter().any(|d| failed.contains_key(d));
            if dep_failed {
                failed.insert(job.id.clone(), "not started: a dependency failed".into());
                waiting.remove(i);
                continue;
            }
            let ready = job.deps.iter().all(|d| {
                finished.contains(d) || plan.job(d).map(|dj| state(plan, dj) == JobState::Done).unwrap_or(false)
            });
            if !ready {
                i += 1;
                continue;
            }
            let gpu = if opts.gpus.is_empty() { None } else { free_gpu(&running) };
            let log_path = opts.log_dir.join(format!("{}.log", job.id));
            let log = std::fs::File::create(&log_path).map_err(|e| Error::io(&log_path, e))?;
            let err = log.try_clone().map_err(|e| Error::io(&log_path, e))?;
            let mut cmd = job_command(plan, plan_path, &job.id, opts, gpu);
            cmd.stdout(log).stderr(err);
            let child = cmd.spawn().map_err(|e| Error::io(&opts.exe, e))?;
            running.push((child, job.id.clone(), gpu));
            waiting.remove(i);
        }
        if let Some(b) = &bar {
            if left.is_none() {
                left = Some(time_left(plan, slots, opts.threads_per_worker));
            }
            let names = running.iter().map(|r| r.1.as_str()).collect::<Vec<_>>().join(", ");
            b.set_message(format!("{}  running: {names}", left.as_deref().unwrap_or_default()));
        }
        if running.is_empty() {
            if waiting.is_empty() {
                break;
            }
            // Nothing runs and nothing can start: the rest waits on jobs outside this run that are not done.
            for id in waiting.drain(..) {
                failed.insert(id.to_string(), "not started: a dependency is not done".into());
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        let mut k = 0;
        while k < running.len() {
            let status = running[k].0.try_wait().map_err(|e| Error::Invalid(format!("job {}: {e}", running[k].1)))?;
            match status {
                None => k += 1,
                Some(st) => {
                    let (_, id, _) = running.remove(k);
                    if let Some(b) = &bar {
                        b.inc(1);
                        left = None;
                    }
                    if st.success() {
                        finished.insert(id.clone());
                        ran.push(id);
                    } else {
                        let log = opts.log_dir.join(format!("{id}.log"));
                        failed.insert(id, format!("failed ({st}); log: {}", log.display()));
                    }
                }
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !failed.is_empty() {
        let lines: Vec<String> = failed.iter().map(|(id, why)| format!("  {id}: {why}")).collect();
        return Err(Error::Invalid(format!(
            "{} job(s) did not finish ({} done); run the plan again to retry only what is missing:\n{}",
            failed.len(),
            ran.len(),
            lines.join("\n")
        )));
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::span;

    #[test]
    fn spans_read_in_the_unit_that_fits() {
        assert_eq!([span(42.0), span(1020.0), span(15840.0)], ["42 s", "17 min", "4.4 h"]);
    }
}
