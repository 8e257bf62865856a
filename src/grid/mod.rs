//! A figure as a graph of cached jobs, run by local worker processes or on a Slurm cluster (issue 27).
//!
//! - [`plan`]: `crossling plan ID… [--scale S] [--seeds N]` runs the figure scripts in planning mode and writes the
//!   job graph: one job per model pre-training (identified by its model-cache folder `LABEL-KEY`), per fine-tuning
//!   (`task-TASK-HASH`: the task cache's own key needs the model's weights) and one figure job per figure, which
//!   depends on everything its script asked for and assembles the record from the cache.
//! - [`job`]: `crossling job run ID --plan FILE` runs exactly one job into the shared cache; idempotent, and safe to
//!   re-run after a kill (pre-training resumes from its last checkpoint; a task result is written only whole).
//! - [`local`]: `crossling grid run PLAN --workers N` runs ready jobs in parallel processes in dependency order,
//!   plans again when a level is done, and runs the figure jobs last.
//! - [`slurm`]: `crossling grid submit PLAN --slurm` writes one `sbatch` job array per dependency level, chained with
//!   `--dependency=afterok`; `crossling grid status PLAN` says what is done, running, failed.
//!
//! **Plan file** (JSON, [`plan::Plan`]): `format`; the request (`figures`, `scale`, `device`, `seed`, `seeds`,
//! `models_dir` = the shared cache `$CROSSLING_MODELS`, `out_dir` where the figure records go, `scripts_dir`);
//! `planning` (per figure: whether planning saw its whole script, and where it stopped); and `jobs`: `{ id, kind:
//! pretrain | task | figure, …the job's request, deps, cost_s, threads, gpu, done }`. `cost_s` is an estimate in
//! one-thread CPU seconds ([`crate::jobs::CPU_THREAD_FLOPS`]).
//!
//! **State of a job** ([`job::state`]): a pre-training is done when its cache folder holds the full run; a task or
//! figure job when `MODELS/jobs/ID.done` exists (written by [`job::run_job`] after success). A failed job writes
//! `MODELS/jobs/ID.failed` with its error and leaves nothing else in the cache; its dependants are not started,
//! and running the plan again runs only what is missing.
pub mod calibrate;
pub mod job;
pub mod local;
pub mod plan;
pub mod slurm;
pub mod state;
