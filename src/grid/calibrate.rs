//! The time a grid still needs, re-estimated from the jobs it has done (shown by `crossling grid status` and by
//! `grid run`'s progress bar).
//!
//! A plan's costs are one-thread CPU seconds of a cost model calibrated on this project's 2-core machine
//! ([`crate::jobs`]); a grid runs on other processors, under other loads, on GPUs. For each kind of job with an
//! estimate (a pre-training, each task) the **median over its done jobs of measured / estimated** seconds scales the
//! estimates of that kind's jobs not done:
//!
//! ```text
//! remaining = Σ_kinds  r_kind · Σ_{pending jobs of the kind} estimate,   r_kind = median_{done, timed} measured / estimate
//! ```
//!
//! A kind with no timed done job keeps the plan's estimate (`r = 1`). Figure jobs carry no estimate (`cost_s` 0: what
//! a figure does after its jobs is not modelled) and count 0 here; callers say so. Measured seconds are, on the CPU,
//! the marker's CPU seconds where it has them, else wall seconds × threads; for a GPU job its wall seconds (CPU time
//! does not measure the device's). The median, not the ratio of sums, because a few markers under-report: a task
//! answered from the cache takes a fraction of a second, and a pre-training resumed from a checkpoint records its
//! last run only ([`super::job`]); when most of a kind's done jobs are such, the median under-reports too.

use super::job::{measured, state, Measured};
use super::plan::{Job, JobSpec, Plan};
use super::state::JobState;

/// One job of a plan as the re-estimate sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobTime {
    /// `pre-training`, the task's name, or `figure`.
    pub kind: String,
    /// The plan's estimate (one-thread seconds).
    pub estimate_s: f64,
    /// Measured one-thread seconds of a done job whose marker has a time; `None` otherwise.
    pub measured_s: Option<f64>,
    /// Whether the job is done.
    pub done: bool,
}

/// The re-estimate: seconds for the jobs not done, and per kind the ratio used and how many done jobs gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Remaining {
    pub seconds: f64,
    /// `(kind, median ratio, timed done jobs)` for the kinds with at least one timed done job, in first-seen order.
    pub ratios: Vec<(String, f64, usize)>,
    /// Jobs not done that carry no estimate (figure jobs), so `seconds` leaves them out.
    pub unestimated: usize,
}

/// Re-estimate the jobs not done of `jobs` (see the module docs).
pub fn remaining(jobs: &[JobTime]) -> Remaining {
    let mut kinds: Vec<(String, Vec<f64>)> = Vec::new();
    for job in jobs {
        let Some(m) = job.measured_s.filter(|_| job.done && job.estimate_s > 0.0) else { continue };
        match kinds.iter_mut().find(|(k, _)| *k == job.kind) {
            Some((_, ratios)) => ratios.push(m / job.estimate_s),
            None => kinds.push((job.kind.clone(), vec![m / job.estimate_s])),
        }
    }
    let ratios: Vec<(String, f64, usize)> = kinds
        .into_iter()
        .map(|(k, r)| {
            let n = r.len();
            (k, median(r), n)
        })
        .collect();
    let seconds = jobs
        .iter()
        .filter(|j| !j.done)
        .map(|j| j.estimate_s * ratios.iter().find(|(k, _, _)| *k == j.kind).map_or(1.0, |r| r.1))
        .sum();
    let unestimated = jobs.iter().filter(|j| !j.done && j.estimate_s <= 0.0).count();
    Remaining { seconds, ratios, unestimated }
}

/// `job` as the re-estimate sees it, `done` or not, with its marker's time `measured` (see the module docs).
pub fn job_time(job: &Job, done: bool, measured: Option<Measured>) -> JobTime {
    JobTime {
        kind: match &job.spec {
            JobSpec::Pretrain { .. } => "pre-training".into(),
            JobSpec::Task { task, .. } => task.clone(),
            JobSpec::Figure { .. } => "figure".into(),
        },
        estimate_s: job.cost_s,
        measured_s: measured.map(|m| match (job.gpu, m.cpu_seconds) {
            (true, _) => m.seconds,
            (false, Some(cpu)) => cpu,
            (false, None) => m.seconds * m.threads as f64,
        }),
        done,
    }
}

/// The seconds `plan`'s jobs not done still need, re-estimated from its done jobs' markers in the cache.
pub fn remaining_of(plan: &Plan) -> Remaining {
    let times: Vec<JobTime> =
        plan.jobs.iter().map(|j| job_time(j, state(plan, j) == JobState::Done, measured(plan, &j.id))).collect();
    remaining(&times)
}

/// The median of a non-empty list (the mean of the middle two for an even count).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// `pre-training 0.52 over 14, nli 0.45 over 10` (kinds without a timed done job are left out).
pub fn describe(r: &Remaining) -> String {
    r.ratios.iter().map(|(k, ratio, n)| format!("{k} {ratio:.2} over {n}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(kind: &str, estimate_s: f64, measured_s: Option<f64>, done: bool) -> JobTime {
        JobTime { kind: kind.into(), estimate_s, measured_s, done }
    }

    #[test]
    fn pending_jobs_scale_by_their_kinds_median_ratio() {
        let jobs = [
            // Pre-trainings ran at half their estimate; one resumed from a checkpoint and reports 10 %: the median
            // ignores it.
            job("pre-training", 800.0, Some(400.0), true),
            job("pre-training", 800.0, Some(420.0), true),
            job("pre-training", 800.0, Some(80.0), true),
            job("pre-training", 800.0, None, false),
            job("pre-training", 600.0, None, false),
            // One NLI run took twice its estimate.
            job("nli", 100.0, Some(200.0), true),
            job("nli", 100.0, None, false),
            // No parsing run is done: its estimate stands; a done job without a time says nothing.
            job("parse", 50.0, None, true),
            job("parse", 50.0, None, false),
        ];
        let r = remaining(&jobs);
        assert_eq!(r.ratios, vec![("pre-training".to_string(), 0.5, 3), ("nli".to_string(), 2.0, 1)]);
        assert!((r.seconds - (1400.0 * 0.5 + 100.0 * 2.0 + 50.0)).abs() < 1e-9, "{}", r.seconds);
        assert_eq!(describe(&r), "pre-training 0.50 over 3, nli 2.00 over 1");
    }

    #[test]
    fn gpu_jobs_count_wall_time_cpu_jobs_cpu_time_and_figures_nothing() {
        let job = |gpu: bool, spec: JobSpec, cost_s: f64| Job {
            id: "j".into(),
            spec,
            deps: vec![],
            cost_s,
            threads: 2,
            gpu,
            done: false,
        };
        let nli = || JobSpec::Task {
            task: "nli".into(),
            model: "m".into(),
            options: serde_json::json!({}),
            axes: None,
            seed: 0,
        };
        let m = |cpu_seconds| Measured { seconds: 100.0, threads: 2, cpu_seconds };
        assert_eq!(job_time(&job(true, nli(), 50.0), true, Some(m(Some(180.0)))).measured_s, Some(100.0));
        assert_eq!(job_time(&job(false, nli(), 50.0), true, Some(m(Some(180.0)))).measured_s, Some(180.0));
        assert_eq!(job_time(&job(false, nli(), 50.0), true, Some(m(None))).measured_s, Some(200.0));
        let figure = job_time(&job(false, JobSpec::Figure { figure: "fig3".into() }, 0.0), true, Some(m(Some(9.0))));
        assert_eq!(figure.kind, "figure");
        let r = remaining(&[figure, job_time(&job(false, nli(), 50.0), false, None)]);
        assert_eq!((r.seconds, r.ratios.len(), r.unestimated), (50.0, 0, 0), "a figure's zero estimate gives no ratio");
    }

    #[test]
    fn with_nothing_done_the_estimates_stand() {
        let r = remaining(&[
            job("ner", 80.0, None, false),
            job("figure", 1.0, None, false),
            job("figure", 0.0, None, false),
        ]);
        assert_eq!((r.seconds, r.ratios.len(), r.unestimated), (81.0, 0, 1));
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), 2.5);
    }
}
