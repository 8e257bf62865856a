//! `crossling plan`, `crossling job run` and `crossling grid run | submit | status`: a figure as a graph of cached
//! jobs, run by local workers or on Slurm ([`crossling::grid`]).
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use crossling::grid::job::run_job;
use crossling::grid::local::{run_local, LocalOptions};
use crossling::grid::plan::{make_plan, JobSpec, Plan};
use crossling::grid::slurm::{job_environment, status_report, submit, write_levels, SlurmOptions};

#[derive(Args)]
pub struct PlanArgs {
    /// Figure ids (fig7, table1, …) or `all`.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Scale, device (where the jobs will run), seeds and where the figure jobs write their records.
    #[command(flatten)]
    target: super::figure::RunTarget,
    /// The plan file to write.
    #[arg(long, default_value = "plan.json")]
    plan: PathBuf,
}

#[derive(Subcommand)]
pub enum JobCommand {
    /// Run one job of a plan into the shared cache (idempotent; safe to re-run after a kill).
    #[command(after_help = "Example:\n  crossling job run --plan plan.json ID   (ID: one of the plan file's job ids)")]
    Run {
        /// The job id (see the plan file or `grid status`).
        id: String,
        #[arg(long)]
        plan: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum GridCommand {
    /// Run a plan on this machine: ready jobs in parallel worker processes, in dependency order.
    #[command(after_help = "Example:\n  crossling grid run plan.json --workers 2")]
    Run {
        plan: PathBuf,
        /// Parallel job processes.
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// libtorch threads per worker.
        #[arg(long, default_value_t = 1)]
        threads_per_worker: usize,
        /// GPUs to use, one worker each (e.g. 0,1).
        #[arg(long, value_delimiter = ',')]
        gpus: Vec<usize>,
    },
    /// Submit a plan to Slurm: one job array per dependency level, chained by afterok.
    #[command(
        after_help = "Example:\n  crossling grid submit --slurm plan.json --partition gpu --time 04:00:00   (--dry-run: write the sbatch scripts only)"
    )]
    Submit {
        plan: PathBuf,
        /// Required: the executor (Slurm is the one there is).
        #[arg(long, required = true)]
        slurm: bool,
        #[arg(long)]
        partition: Option<String>,
        /// e.g. gpu:1.
        #[arg(long)]
        gres: Option<String>,
        /// Wall-time limit of one job, e.g. 04:00:00.
        #[arg(long)]
        time: Option<String>,
        #[arg(long)]
        account: Option<String>,
        #[arg(long)]
        cpus_per_task: Option<usize>,
        /// Write the sbatch scripts without submitting them.
        #[arg(long)]
        dry_run: bool,
    },
    /// What is done, running (with Slurm), failed and pending.
    #[command(after_help = "Example:\n  crossling grid status plan.json")]
    Status { plan: PathBuf },
}

/// The folder beside a plan file for its logs and scripts: `PLAN.d/`.
fn side_dir(plan: &std::path::Path) -> PathBuf {
    let mut name = plan.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".d");
    plan.with_file_name(name)
}

fn absolute(p: &std::path::Path) -> Result<PathBuf> {
    Ok(if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir()?.join(p) })
}

/// `crossling plan …`.
pub fn plan(a: PlanArgs) -> Result<()> {
    let ids = super::figure::figure_ids(&a.ids);
    let req = a.target.plan_request(&ids, a.target.figure_out()?);
    let plan = make_plan(&req)?;
    let path = absolute(&a.plan)?;
    plan.save(&path)?;
    let count = |kind: &str, done: bool| {
        plan.jobs
            .iter()
            .filter(|j| j.done == done)
            .filter(|j| {
                matches!((&j.spec, kind), (JobSpec::Pretrain { .. }, "pretrain") | (JobSpec::Task { .. }, "task"))
            })
            .count()
    };
    let cost: f64 = plan.jobs.iter().filter(|j| !j.done).map(|j| j.cost_s).sum();
    println!(
        "{}: {} pre-trainings ({} done), {} fine-tunings ({} done), {} figure jobs; about {:.1} one-thread hours to go",
        path.display(),
        count("pretrain", false) + count("pretrain", true),
        count("pretrain", true),
        count("task", false) + count("task", true),
        count("task", true),
        plan.planning.len(),
        cost / 3600.0
    );
    for f in &plan.planning {
        let took = f.planning_s.map(|s| format!(" (planned in {s:.1} s)")).unwrap_or_default();
        let figure_done = plan.figure_job(&f.id).is_ok_and(|j| j.done);
        if f.complete && figure_done {
            println!(
                "  {}: every job was done, so the planning runs were the figure's run: wrote {}{took}",
                f.id,
                plan.request.out_dir.join(format!("{}.json", f.id)).display()
            );
        } else if f.complete {
            println!("  {}: the script ran to its end at every seed, analyses included{took}", f.id);
        } else {
            println!(
                "  {}: planned up to what the script needs from jobs not done yet ({}); `grid run` plans again once \
                 they are done{took}",
                f.id,
                f.stopped.join("; ")
            );
        }
    }
    Ok(())
}

/// `crossling job run …`.
pub fn job(cmd: JobCommand) -> Result<()> {
    let JobCommand::Run { id, plan } = cmd;
    let plan = Plan::load(&plan)?;
    run_job(&plan, &id, &|line| eprintln!("{line}"))?;
    println!("job {id}: done");
    Ok(())
}

/// `crossling grid …`.
pub fn grid(cmd: GridCommand) -> Result<()> {
    match cmd {
        GridCommand::Run { plan, workers, threads_per_worker, gpus } => {
            if workers == 0 {
                bail!("--workers must be at least 1");
            }
            let plan = absolute(&plan)?;
            let opts = LocalOptions {
                workers,
                threads_per_worker,
                gpus,
                exe: std::env::current_exe()?,
                log_dir: side_dir(&plan).join("logs"),
                progress: true,
            };
            let summary = run_local(&plan, &opts)?;
            println!(
                "{}: {} job(s) run in {} planning pass(es); logs in {}",
                plan.display(),
                summary.ran.len(),
                summary.passes,
                opts.log_dir.display()
            );
        }
        GridCommand::Submit { plan, slurm, partition, gres, time, account, cpus_per_task, dry_run } => {
            debug_assert!(slurm);
            let path = absolute(&plan)?;
            let plan = Plan::load(&path)?;
            let opts = SlurmOptions {
                partition,
                gres,
                time,
                account,
                cpus_per_task,
                exe: std::env::current_exe()?,
                dir: side_dir(&path).join("slurm"),
                env: job_environment(&plan)?,
            };
            let levels = write_levels(&plan, &path, &opts)?;
            if levels.is_empty() {
                println!("{}: every job is done", path.display());
                return Ok(());
            }
            for l in &levels {
                println!("level {}: {} job(s) -> {}", l.index, l.jobs.len(), l.script.display());
            }
            if !dry_run {
                let ids = submit(&levels)?;
                println!("submitted: {} (each after the previous one succeeded)", ids.join(" -> "));
            }
        }
        GridCommand::Status { plan } => {
            let plan = Plan::load(&plan)?;
            println!("{}", status_report(&plan));
        }
    }
    Ok(())
}
