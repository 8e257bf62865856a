//! A figure's job graph: the pre-trainings and fine-tunings its script asks for, found by running the script in
//! planning mode, with their dependencies, estimated costs and resources (issue 27; see [`super`] for the format).
//!
//! **Planning mode.** The script runs as usual, except that `train::model` only locates its model in the cache
//! ([`crate::train::model_cache::locate`]) and records a pre-training job, and `task::run` / `task::grid` read only cached
//! results ([`crate::tasks::run::TaskContext::cached_only`]) and record a fine-tuning job when there is none (returning
//! `()` to the script). A model that is not trained yet is handed to the script at its future folder, so the first
//! analysis that reads it fails (one interrupted midway too: opening a cached model checks that its run finished,
//! [`crate::script::handles::ModelRef::check_trained`]), and reading a property or index of a pending fine-tuning's
//! `()` stops the run on purpose (the planning session's indexer on `()`, `crate::script::ns_task`): planning of that
//! run stops there, and the plan holds every job asked for up to that point. Only those are stops, and work that
//! runs inside the figure job (deferred); any other error of the script — a pending job or not — fails the plan with
//! the script's file and line ([`Recorder::stop_reason`]). Scripts ask for
//! their models and runs before analysing them (fig7, `lib/transfer.rhai`), so one pass sees their whole grid; a script
//! whose later requests depend on earlier results is planned again after each finished level by the executors
//! ([`super::local`]), and whatever a plan could not foresee runs inside the figure job.
//!
//! **A planning run that is the figure's run.** When every seed of a figure's script runs to its end and every job
//! it asked for is done, its planning runs read exactly what a figure job would read, so the planner writes the record
//! from them ([`crate::script::runner::finish_record`]) and marks the figure job done, with its time and CPU time
//! in the marker. Without this the last re-planning of a figure after its jobs finish ran the whole analysis, and the
//! figure job ran it again. A figure planned otherwise loses a done marker from before (its record answers no
//! longer).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::device::Compute;
use crate::error::{Error, Result};
pub use crate::jobs::{Job, JobSpec, Recorder, SharedRecorder};
use crate::scale::Scale;
use crate::script::runner::RunOptions;

/// Version of the plan file.
pub const PLAN_FORMAT: u32 = 1;

/// How one figure's planning went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigurePlan {
    pub id: String,
    /// The script ran to its end at every seed (no job it needs is missing).
    pub complete: bool,
    /// Where planning stopped, per seed that stopped: what the script needed that a job not done yet answers (or
    /// work that runs in the figure job), and where (`seed 0, fig7.rhai:64:25: model … is not trained yet (job …)`;
    /// in plans made before 2026-12-06, the script's error message there).
    pub stopped: Vec<String>,
    /// Wall seconds the planning runs took, all seeds (a script whose models are all trained runs its whole
    /// analysis while planning); absent in plans made before 2026-11-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planning_s: Option<f64>,
}

/// A plan file (see [`super`]): the request it answers, how each figure's planning went, and the jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    #[serde(flatten)]
    pub request: PlanRequest,
    /// How each figure's planning went.
    pub planning: Vec<FigurePlan>,
    pub jobs: Vec<Job>,
}

/// What to plan (and, in a plan file, what was planned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRequest {
    pub figures: Vec<String>,
    pub scale: Scale,
    /// `--device` as given (resolved again by each job).
    pub device: String,
    pub seed: u64,
    pub seeds: usize,
    /// The model cache every job reads and writes (`$CROSSLING_MODELS`).
    pub models_dir: PathBuf,
    /// Where the figure jobs write their records.
    pub out_dir: PathBuf,
    /// The scripts folder.
    pub scripts_dir: PathBuf,
}

impl PlanRequest {
    /// The id of figure `figure`'s job in a plan of this request: `figure-ID-KEY`, KEY the first 16 hex digits of
    /// the SHA-256 of the request's figure, scale, device, seeds and folders as JSON
    /// ([`crate::jobs::figure_job_id`]). Its done marker lives in the
    /// shared model cache, so two plans of one figure that ask for different seeds, scales or output folders must
    /// not share it: a marker that one of them wrote would make the other's figure job look done, and its record
    /// would never be written.
    pub fn figure_job_id(&self, figure: &str) -> String {
        let request = serde_json::json!({
            "figure": figure,
            "scale": self.scale,
            "device": self.device,
            "seed": self.seed,
            "seeds": self.seeds,
            "models_dir": self.models_dir,
            "out_dir": self.out_dir,
            "scripts_dir": self.scripts_dir,
        });
        crate::jobs::figure_job_id(figure, &request)
    }
}

impl Plan {
    /// Reads a plan file.
    pub fn load(path: &Path) -> Result<Plan> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let plan: Plan = serde_json::from_str(&text)
            .map_err(|e| Error::format(path, e.line(), format!("not a crossling plan: {e}")))?;
        if plan.format != PLAN_FORMAT {
            return Err(Error::format_file(
                path,
                format!("plan format {} (this crossling reads {PLAN_FORMAT}): make the plan again", plan.format),
            ));
        }
        Ok(plan)
    }

    /// Writes the plan (atomically).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Invalid(e.to_string()))?;
        crate::atomic_file::write_atomic(path, &(text + "\n"))
    }

    /// The job `id`, or an error naming the plan's jobs.
    pub fn job(&self, id: &str) -> Result<&Job> {
        self.jobs.iter().find(|j| j.id == id).ok_or_else(|| {
            Error::Invalid(format!(
                "no job '{id}' in the plan; it has {}",
                self.jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// The figure job of `figure` (found by what it runs, so plans written before its id carried a key still load).
    pub fn figure_job(&self, figure: &str) -> Result<&Job> {
        self.jobs
            .iter()
            .find(|j| matches!(&j.spec, JobSpec::Figure { figure: f } if f == figure))
            .ok_or_else(|| Error::Invalid(format!("the plan has no figure job for {figure}")))
    }

    /// Jobs not done yet, figure jobs excluded.
    pub fn pending_work(&self) -> Vec<&Job> {
        self.jobs.iter().filter(|j| !j.done && !matches!(j.spec, JobSpec::Figure { .. })).collect()
    }

    /// Whether every figure's script ran to its end in planning mode.
    pub fn complete(&self) -> bool {
        self.planning.iter().all(|f| f.complete)
    }
}

/// Plans `req`: runs each figure's script in planning mode at each seed and collects the jobs; the figure jobs
/// come last and depend on every job their script asked for.
pub fn make_plan(req: &PlanRequest) -> Result<Plan> {
    if req.seeds == 0 {
        return Err(Error::Invalid("--seeds must be at least 1".into()));
    }
    let compute = Compute::resolve(&req.device, crate::device::Precision::Auto)?;
    let gpu = compute.device.is_cuda();
    // Planning runs use cached models (never `fresh`) and no given models; namespaces write nothing during a run
    // (the runner writes the record after it), and planning never reaches the runner.
    let opts = RunOptions {
        seed: req.seed,
        compute,
        scripts_dir: req.scripts_dir.clone(),
        seeds: req.seeds,
        models_dir: req.models_dir.clone(),
        ..RunOptions::figure(req.scale, req.out_dir.clone())
    };
    let mut jobs: Vec<Job> = Vec::new();
    let mut figures = Vec::new();
    for id in &req.figures {
        crate::figures::info(id)?;
        let script = crate::figures::script(&req.scripts_dir, id).ok_or_else(|| {
            Error::Invalid(format!("figure {id} has no script ({}/{id}.rhai)", req.scripts_dir.display()))
        })?;
        let recorder: SharedRecorder = Arc::new(Mutex::new(Recorder::default()));
        let mut stopped = Vec::new();
        let (started, clock) = (crate::script::runner::Started::now(&script)?, super::state::JobClock::start());
        let seeds = opts.seed_list();
        let (mut runs, mut log) = (Vec::new(), Vec::new());
        for &seed in &seeds {
            if seeds.len() > 1 {
                log.push(crate::script::runner::seed_header(id, runs.len(), seeds.len(), seed));
            }
            let env = opts.env(id, seed, crate::script::RunLog::quiet());
            let session = crate::script::Session::new(env.clone())?.planning(recorder.clone());
            let outcome = crate::script::run_file(&session, &script);
            let mut rec = recorder.lock().map_err(|_| Error::Invalid("planning: the recorder is poisoned".into()))?;
            match outcome {
                Ok(_) => {
                    rec.clear_stop();
                    runs.push(session.with_record(|r| r.clone()));
                }
                Err(e) => {
                    // A stop by design (the script needs a pending job's result, or work that runs in the figure
                    // job) ends this seed's planning; any other error is the script's and fails the plan.
                    let Some(why) = rec.stop_reason(&e.to_string()) else { return Err(e) };
                    let at = match &e {
                        Error::Script { script, line, column, .. } => {
                            let file = script.strip_prefix(&req.scripts_dir).unwrap_or(script);
                            format!(", {}:{line}:{column}", file.display())
                        }
                        _ => String::new(),
                    };
                    stopped.push(format!("seed {seed}{at}: {why}"));
                }
            }
            drop(rec);
            log.extend(env.log.lines());
        }
        let deferred = recorder.lock().map(|r| r.stopped_by_plan()).unwrap_or(true);
        let recorded = recorder.lock().map_err(|_| Error::Invalid("planning".into()))?.take_jobs();
        // Every seed ran to its end and every job it asked for is in the cache (`done` as the recorder found it):
        // the planning runs were the figure's run, so its record is written now and its figure job is done (unless
        // the folder holds another scale's record, which the figure job then reports).
        let figure_id = req.figure_job_id(id);
        let old_marker = super::state::marker_in(&req.models_dir, &figure_id, "done");
        // A record made before this plan does not answer it: the figure job runs again unless written below.
        let _ = std::fs::remove_file(&old_marker);
        let whole_run = stopped.is_empty()
            && !deferred
            && recorded.iter().all(|j| j.done)
            && crate::script::runner::refuse_other_scale(&req.out_dir.join(format!("{id}.json")), req.scale, false)
                .is_ok()
            && {
                // Writing it may fail (a claim that does not evaluate, a full disk): then the figure job runs and
                // reports it the usual way, with its log and a failure marker.
                let written = crate::script::runner::finish_record(&script, id, &opts, runs, log, started)
                    .and_then(|_| super::state::write_done(&req.models_dir, &figure_id, &clock));
                if let Err(e) = &written {
                    eprintln!(
                        "plan: {id} ran to its end, but its record was not written ({e}); its figure job will run"
                    );
                    let _ = std::fs::remove_file(&old_marker);
                }
                written.is_ok()
            };
        let deps: Vec<String> = recorded.iter().map(|j| j.id.clone()).collect();
        for job in recorded {
            if !jobs.iter().any(|j| j.id == job.id) {
                jobs.push(job);
            }
        }
        let planning_s = Some((clock.seconds() * 10.0).round() / 10.0);
        figures.push(FigurePlan { id: id.clone(), complete: stopped.is_empty(), stopped, planning_s });
        jobs.push(Job {
            id: figure_id,
            spec: JobSpec::Figure { figure: id.clone() },
            deps,
            cost_s: 0.0,
            threads: 1,
            gpu,
            done: whole_run,
        });
    }
    Ok(Plan { format: PLAN_FORMAT, request: req.clone(), planning: figures, jobs })
}

/// Plans `previous.request` again after work has run, re-running in planning mode only the figures that can plan
/// differently now: those with a job that has finished since `previous` was made. Planning a figure is a function
/// of the cache state of the jobs it asked for (a script sees the models and results of its earlier requests, and
/// nothing else that the grid writes), so a figure none of whose jobs has finished would plan the same again, and
/// planning a figure whose models are all trained runs its whole analysis: that is what this saves. The figures
/// keep their request order; a kept figure keeps its jobs and its planning note.
pub fn replan(previous: &Plan) -> Result<Plan> {
    let finished_since = |figure: &str| -> Result<bool> {
        let deps = &previous.figure_job(figure)?.deps;
        for d in deps {
            let job = previous.job(d)?;
            if !job.done && super::state::state_in(&previous.request.models_dir, job) == super::state::JobState::Done {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let mut again = Vec::new();
    for id in &previous.request.figures {
        if finished_since(id)? {
            again.push(id.clone());
        }
    }
    let fresh = if again.is_empty() {
        None
    } else {
        Some(make_plan(&PlanRequest { figures: again.clone(), ..previous.request.clone() })?)
    };
    let mut jobs: Vec<Job> = Vec::new();
    let mut planning = Vec::new();
    for id in &previous.request.figures {
        let source = match &fresh {
            Some(p) if again.contains(id) => p,
            _ => previous,
        };
        let figure_job = source.figure_job(id)?;
        for d in &figure_job.deps {
            if !jobs.iter().any(|j| &j.id == d) {
                jobs.push(source.job(d)?.clone());
            }
        }
        jobs.push(figure_job.clone());
        if let Some(f) = source.planning.iter().find(|f| &f.id == id) {
            planning.push(f.clone());
        }
    }
    Ok(Plan { format: PLAN_FORMAT, request: previous.request.clone(), planning, jobs })
}

/// The jobs of `plan` by dependency level: level 0 needs nothing pending, level k needs only jobs of levels < k.
/// Done jobs are left out; an unknown dependency is an error.
pub fn levels(plan: &Plan) -> Result<Vec<Vec<&Job>>> {
    let pending: BTreeMap<&str, &Job> = plan.jobs.iter().filter(|j| !j.done).map(|j| (j.id.as_str(), j)).collect();
    let known: std::collections::BTreeSet<&str> = plan.jobs.iter().map(|j| j.id.as_str()).collect();
    let mut level_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out: Vec<Vec<&Job>> = Vec::new();
    // Jobs are recorded after their dependencies, so one pass in plan order assigns every level.
    for job in plan.jobs.iter().filter(|j| !j.done) {
        let mut level = 0;
        for d in &job.deps {
            if !known.contains(d.as_str()) {
                return Err(Error::Invalid(format!("job {}: unknown dependency {d}", job.id)));
            }
            if pending.contains_key(d.as_str()) {
                let l = *level_of.get(d.as_str()).ok_or_else(|| {
                    Error::Invalid(format!("job {}: dependency {d} comes after it in the plan", job.id))
                })?;
                level = level.max(l + 1);
            }
        }
        level_of.insert(&job.id, level);
        if out.len() <= level {
            out.resize_with(level + 1, Vec::new);
        }
        out[level].push(job);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, deps: &[&str], done: bool) -> Job {
        Job {
            id: id.into(),
            spec: JobSpec::Figure { figure: id.strip_prefix("figure-").unwrap_or(id).into() },
            deps: deps.iter().map(|s| s.to_string()).collect(),
            cost_s: 1.0,
            threads: 1,
            gpu: false,
            done,
        }
    }

    fn plan(jobs: Vec<Job>) -> Plan {
        let request = PlanRequest {
            figures: vec![],
            scale: Scale::Smoke,
            device: "cpu".into(),
            seed: 0,
            seeds: 1,
            models_dir: "/m".into(),
            out_dir: "/o".into(),
            scripts_dir: "/s".into(),
        };
        Plan { format: PLAN_FORMAT, request, planning: vec![], jobs }
    }

    /// A smoke request for fig7 at seed 0 with the folders `scripts` and `models` under `root`, records to `out`.
    fn fig7_request(root: &Path, out: PathBuf) -> PlanRequest {
        PlanRequest {
            figures: vec!["fig7".into()],
            scale: Scale::Smoke,
            device: "cpu".into(),
            seed: 0,
            seeds: 1,
            models_dir: root.join("models"),
            out_dir: out,
            scripts_dir: root.join("scripts"),
        }
    }

    #[test]
    fn levels_follow_pending_dependencies() {
        let p = plan(vec![
            job("a", &[], true),
            job("b", &[], false),
            job("c", &["a"], false),
            job("d", &["b", "c"], false),
            job("f", &["a", "b", "c", "d"], false),
        ]);
        let ids: Vec<Vec<&str>> =
            levels(&p).unwrap().iter().map(|l| l.iter().map(|j| j.id.as_str()).collect()).collect();
        assert_eq!(ids, vec![vec!["b", "c"], vec!["d"], vec!["f"]], "a done: c is ready at once");
        let bad = plan(vec![job("x", &["nope"], false)]);
        assert!(levels(&bad).unwrap_err().to_string().contains("unknown dependency nope"));
    }

    #[test]
    fn a_planning_run_with_every_job_done_writes_the_record_and_a_later_plan_that_asks_for_more_runs_it_again() {
        let dir = tempfile::tempdir().unwrap();
        let (scripts, out, models) = (dir.path().join("scripts"), dir.path().join("out"), dir.path().join("models"));
        std::fs::create_dir_all(&scripts).unwrap();
        let script = scripts.join("fig7.rhai");
        std::fs::write(&script, "results::value(\"x\", 1.5);\nresults::caption(\"a test\");\n").unwrap();
        let req = PlanRequest { seeds: 2, ..fig7_request(dir.path(), out.clone()) };
        // No job asked for: both seeds run to their end, so planning wrote the record and the figure job is done.
        let p = make_plan(&req).unwrap();
        assert_eq!(p.jobs.len(), 1);
        assert!(p.jobs[0].done && p.complete());
        let record = crate::report::record::FigureRecord::load(&out.join("fig7.json")).unwrap();
        assert_eq!(record.provenance.seeds, [0, 1]);
        assert!(record.provenance.log.iter().any(|l| l.starts_with("== fig7: seed 1 (2 of 2)")));
        assert_eq!(super::super::job::state(&p, &p.jobs[0]), super::super::state::JobState::Done);
        let marker_path = models.join("jobs").join(format!("{}.done", req.figure_job_id("fig7")));
        let marker: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(marker_path).unwrap()).unwrap();
        assert!(marker["seconds"].as_f64().is_some(), "{marker}");
        // The script now asks for a model nobody trained: the figure is not done, and the old marker is gone.
        std::fs::write(
            &script,
            "let m = train::model(#{ preset: \"mono\", langs: \"en\" });\nresults::value(\"x\", m.dir);\n\
             results::caption(\"a test\");\n",
        )
        .unwrap();
        let p = make_plan(&req).unwrap();
        let figure = p.figure_job("fig7").unwrap();
        assert!(!figure.done && figure.deps.len() == 2, "one model per seed: {figure:?}");
        assert_eq!(super::super::job::state(&p, figure), super::super::state::JobState::Pending);
    }

    #[test]
    fn a_script_error_fails_the_plan_and_a_read_of_a_pending_result_stops_it_by_design() {
        let dir = tempfile::tempdir().unwrap();
        let scripts = dir.path().join("scripts");
        std::fs::create_dir_all(&scripts).unwrap();
        let req = fig7_request(dir.path(), dir.path().join("out"));
        let plan_of = |body: &str| {
            let asks = "let m = train::model(#{ preset: \"default\", langs: \"en-fr\" });\n\
                        let r = task::run(\"nli\", m, #{ langs: [\"fr\"] });\n";
            std::fs::write(scripts.join("fig7.rhai"), format!("{asks}{body}")).unwrap();
            make_plan(&req)
        };
        // Reading the pending fine-tuning's `()` is where planning stops, on purpose: no error, both jobs planned.
        let p = plan_of("let s = r.score * 100.0;\nthis_is_never_reached();\n").unwrap();
        assert_eq!(p.jobs.len(), 3, "{:?}", p.jobs);
        let stopped = &p.planning[0].stopped;
        assert_eq!(stopped.len(), 1);
        assert!(stopped[0].starts_with("seed 0, fig7.rhai:3:"), "{stopped:?}");
        assert!(stopped[0].contains("reads `score` of a fine-tuning's result"), "{stopped:?}");
        let p = plan_of("let s = r[\"scores\"];\n").unwrap();
        assert!(p.planning[0].stopped[0].contains("reads `scores`"), "{:?}", p.planning);
        // A genuine error fails the plan with the script's file and line, jobs pending or not.
        for (body, line, words) in [
            ("let x = 1;\nx.no_such_method();\n", 4, "no_such_method"),
            ("let n = 1 + \"a\" * 2;\n", 3, "*"),
            ("throw \"the script's own\";\n", 3, "the script's own"),
        ] {
            let e = plan_of(body).unwrap_err();
            assert!(
                matches!(&e, Error::Script { script, line: l, .. } if script.ends_with("fig7.rhai") && *l == line),
                "{body}: {e}"
            );
            assert!(e.to_string().contains(words), "{body}: {e}");
        }
        // `.score` of a `()` while no fine-tuning is pending (only a model is) is the script's error too.
        let text = "let m = train::model(#{ preset: \"default\", langs: \"en-fr\" });\nlet r = ();\nr.score\n";
        std::fs::write(scripts.join("fig7.rhai"), text).unwrap();
        let e = make_plan(&req).unwrap_err();
        assert!(matches!(&e, Error::Script { line: 3, .. }) && e.to_string().contains("score"), "{e}");
        // A model that is not trained yet stops planning where the script first opens it.
        std::fs::write(
            scripts.join("fig7.rhai"),
            "let m = train::model(#{ preset: \"default\", langs: \"en-fr\" });\nlet c = words::corpus(m, \"en\", 10);\n",
        )
        .unwrap();
        let p = make_plan(&req).unwrap();
        let stopped = &p.planning[0].stopped;
        assert!(
            stopped[0].starts_with("seed 0, fig7.rhai:2:")
                && stopped[0].contains("is not trained yet (job model-default-en-fr"),
            "{stopped:?}"
        );
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn the_table1_smoke_plan_stops_where_it_reads_a_fine_tuning_not_run_yet() {
        let dir = tempfile::tempdir().unwrap();
        let req = PlanRequest {
            figures: vec!["table1".into()],
            scripts_dir: crate::paths::beside_crate("scripts"),
            ..fig7_request(dir.path(), dir.path().join("out"))
        };
        let p = make_plan(&req).unwrap();
        assert_eq!(p.jobs.len(), 41);
        let stopped = &p.planning[0].stopped;
        assert_eq!(stopped.len(), 1, "{stopped:?}");
        assert!(
            stopped[0].contains("reads `score` of a fine-tuning's result, whose job has not run yet"),
            "{stopped:?}"
        );
        assert!(!stopped[0].contains("Unknown property"), "{stopped:?}");
    }

    #[test]
    fn plans_of_one_figure_for_other_seeds_or_folders_do_not_share_its_figure_job() {
        let dir = tempfile::tempdir().unwrap();
        let (scripts, models) = (dir.path().join("scripts"), dir.path().join("models"));
        std::fs::create_dir_all(&scripts).unwrap();
        std::fs::write(scripts.join("fig7.rhai"), "results::value(\"x\", seed());\nresults::caption(\"a test\");\n")
            .unwrap();
        let one = fig7_request(dir.path(), dir.path().join("out0"));
        let other_seeds = PlanRequest { seed: 1, seeds: 2, out_dir: dir.path().join("out12"), ..one.clone() };
        let other_folder = PlanRequest { out_dir: dir.path().join("elsewhere"), ..one.clone() };
        let ids = [&one, &other_seeds, &other_folder].map(|r| r.figure_job_id("fig7"));
        assert!(ids.iter().all(|id| id.starts_with("figure-fig7-") && id.len() == "figure-fig7-".len() + 16));
        assert!(ids[0] != ids[1] && ids[0] != ids[2] && ids[1] != ids[2], "{ids:?}");
        assert_eq!(one.figure_job_id("fig7"), ids[0], "the id is a function of the request");
        // The first plan's planning run is its figure's run; the second plan's figure job is not done by that.
        let first = make_plan(&one).unwrap();
        assert!(first.figure_job("fig7").unwrap().done);
        let mut second = make_plan(&other_seeds).unwrap();
        assert!(second.figure_job("fig7").unwrap().done, "its planning runs were its run too");
        assert!(dir.path().join("out12/fig7.json").is_file());
        std::fs::remove_file(models.join("jobs").join(format!("{}.done", ids[1]))).unwrap();
        second.jobs[0].done = false;
        let job = second.figure_job("fig7").unwrap();
        assert_eq!(super::super::job::state(&second, job), super::super::state::JobState::Pending, "one's marker");
        assert_eq!(
            super::super::job::state(&first, first.figure_job("fig7").unwrap()),
            super::super::state::JobState::Done
        );
        assert!(second.figure_job("fig4").unwrap_err().to_string().contains("no figure job for fig4"));
    }

    #[test]
    fn replanning_runs_only_the_figures_with_a_job_finished_since() {
        let models = tempfile::tempdir().unwrap();
        let task = |id: &str| Job {
            spec: JobSpec::Task {
                task: "ner".into(),
                model: "m".into(),
                options: serde_json::json!({}),
                axes: None,
                seed: 0,
            },
            ..job(id, &[], false)
        };
        let mut p = plan(vec![
            task("task-a"),
            job("figure-fig7", &["task-a"], false),
            task("task-b"),
            job("figure-table1", &["task-a", "task-b"], false),
        ]);
        p.request.figures = vec!["fig7".into(), "table1".into()];
        p.request.models_dir = models.path().to_path_buf();
        p.planning = ["fig7", "table1"]
            .iter()
            .map(|id| FigurePlan {
                id: id.to_string(),
                complete: false,
                stopped: vec!["pending".into()],
                planning_s: Some(0.1),
            })
            .collect();
        // Nothing finished: the plan stays as it was, and no script runs (the scripts folder /s does not exist).
        assert_eq!(replan(&p).unwrap(), p);
        // task-b finished: table1 is planned again (here: the missing script), fig7 is not.
        let jobs = models.path().join("jobs");
        std::fs::create_dir_all(&jobs).unwrap();
        std::fs::write(jobs.join("task-b.done"), "").unwrap();
        let e = replan(&p).unwrap_err().to_string();
        assert!(e.contains("figure table1 has no script") && !e.contains("fig7"), "{e}");
        // A job marked done in the plan already is no news.
        p.jobs[2].done = true;
        assert_eq!(replan(&p).unwrap(), p);
    }

    #[test]
    fn plan_files_round_trip_and_check_their_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        let mut p = plan(vec![job("figure-x", &[], false)]);
        p.jobs.push(Job {
            id: "task-ner-0123".into(),
            spec: JobSpec::Task {
                task: "ner".into(),
                model: "model-m-k".into(),
                options: serde_json::json!({ "langs": ["fr"] }),
                axes: Some(vec![("lr".into(), vec![serde_json::json!(1e-4)])]),
                seed: 2,
            },
            ..job("t", &["model-m-k"], false)
        });
        p.save(&path).unwrap();
        assert_eq!(Plan::load(&path).unwrap(), p);
        assert!(p.job("nope").unwrap_err().to_string().contains("figure-x, task-ner-0123"));
        std::fs::write(&path, "{\"format\": 1}").unwrap();
        let e = Plan::load(&path).unwrap_err().to_string();
        assert!(e.contains("plan.json") && e.contains("not a crossling plan"), "{e}");
    }
}
