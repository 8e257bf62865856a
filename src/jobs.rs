//! The units of work a figure needs — a pre-training, a fine-tuning, the figure itself — with their ids, estimated
//! costs and resources, and the recorder that collects them while a script runs in planning mode
//! ([`crate::grid::plan`] turns them into a plan file; the script namespaces record them).
//!
//! Job ids: `model-LABEL-KEY` (the model cache folder's name), `task-TASK-HASH` (sha256 over the model's job, the
//! options, the axes, the seed and the scale; first 16 hex digits), `figure-ID`.
//!
//! Costs are one-thread seconds: a pre-training costs `6 · parameters · tokens / CPU_THREAD_FLOPS`, a fine-tuning
//! the measured `cpu` time of its task scaled by the parameters.
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::scale::Scale;
use crate::train::run::RunConfig;
/// Floating-point operations per second of one CPU thread in the cost model `6 · parameters · tokens`: an estimate
/// for planning, not a measurement. For the `cpu` regime's 4 × 128 models (about 1.8M parameters) it comes to about
/// 5,500 tokens/s: below the training step's measured one-thread throughput (README, *Speed*, the emergence shape),
/// close to a whole 1,500-step run with its corpus and tokenizer (README, *The cpu regime*).
pub const CPU_THREAD_FLOPS: f64 = 6.0e10;

/// What a job does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobSpec {
    /// Pre-train one model into the model cache (`label` and `key` name its folder `LABEL-KEY`).
    Pretrain { label: String, key: String, config: Box<RunConfig> },
    /// Fine-tune and score one transfer task (or a grid of settings) on the model of job `model`, into the task
    /// cache. `options` is the script's options map (`langs`, `train_data`, config overrides).
    Task {
        task: String,
        model: String,
        options: serde_json::Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        axes: Option<Vec<(String, Vec<serde_json::Value>)>>,
        seed: u64,
    },
    /// Run the figure script (every seed) and write its record: the last job, reading everything from the cache.
    Figure { figure: String },
}

/// One job of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// `model-LABEL-KEY`, `task-TASK-HASH` or `figure-ID`.
    pub id: String,
    #[serde(flatten)]
    pub spec: JobSpec,
    /// Jobs that must be done first.
    pub deps: Vec<String>,
    /// Estimated seconds of one CPU thread (see [`CPU_THREAD_FLOPS`]); a rough guide for scheduling.
    pub cost_s: f64,
    /// CPU threads the job uses.
    pub threads: usize,
    /// Whether the job wants a GPU (the plan's device is CUDA).
    pub gpu: bool,
    /// Already in the cache when the plan was made.
    pub done: bool,
}

/// What planning mode collects while a script runs (shared by the namespaces through the session).
#[derive(Debug, Default)]
pub struct Recorder {
    jobs: Vec<Job>,
    /// Work no job can express (a stacked fine-tuning, a run on a model no job trains) that a planning run
    /// reached; it runs inside the figure job.
    deferred: Vec<String>,
}

/// A recorder shared by the namespaces of one planning run.
pub type SharedRecorder = Arc<Mutex<Recorder>>;

impl Recorder {
    /// Adds `job` unless a job with its id is there (the same model asked for twice).
    pub fn add(&mut self, job: Job) {
        if !self.jobs.iter().any(|j| j.id == job.id) {
            self.jobs.push(job);
        }
    }

    /// Whether a recorded job is not done.
    pub fn has_pending(&self) -> bool {
        self.jobs.iter().any(|j| !j.done)
    }

    /// Records work no job can express; the planning run stops there and the figure job does it.
    pub fn defer(&mut self, what: String) {
        self.deferred.push(what);
    }

    /// Whether planning stopped for a reason other than an error in the script: a pending job's result was read,
    /// or deferred work was reached.
    pub fn stopped_by_plan(&self) -> bool {
        self.has_pending() || !self.deferred.is_empty()
    }

    /// Takes the recorded jobs out (the recorder is empty after).
    pub fn take_jobs(&mut self) -> Vec<Job> {
        std::mem::take(&mut self.jobs)
    }

    /// The job `id`, if recorded.
    pub fn get(&self, id: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.id == id)
    }
}

/// The pre-training job of the cached (or future) model `model`, on a GPU when `gpu`.
pub fn pretrain_job(model: &crate::train::zoo::CachedModel, gpu: bool) -> Job {
    Job {
        id: model_job_id(&model.label, &model.key),
        spec: JobSpec::Pretrain {
            label: model.label.clone(),
            key: model.key.clone(),
            config: Box::new(model.config.clone()),
        },
        deps: Vec::new(),
        cost_s: pretrain_cost(&model.config),
        threads: 1,
        gpu,
        done: crate::train::zoo::is_trained(&model.dir, &model.config),
    }
}

/// The job id of the pre-training whose cache folder is `LABEL-KEY`.
pub fn model_job_id(label: &str, key: &str) -> String {
    format!("model-{label}-{key}")
}

/// The job id of a task run: `task-TASK-HASH`, the hash over the model's job, the options, the axes, the seed and
/// the scale (the task cache's own key needs the model's weights, which exist only after its job).
pub fn task_job_id(task: &str, model_job: &str, spec: &serde_json::Value) -> String {
    use sha2::{Digest, Sha256};
    let text = format!("{model_job}\n{task}\n{spec}");
    format!("task-{task}-{}", &hex::encode(Sha256::digest(text.as_bytes()))[..16])
}

/// Estimated parameters of a run's model: `layers · 12 · hidden²` (attention and feed-forward) plus the embeddings
/// (one matrix per language when separated).
pub fn parameters(cfg: &RunConfig) -> f64 {
    let m = &cfg.train.model;
    let (h, v) = (m.hidden as f64, m.vocab_size as f64);
    let tables = if m.sharing.sep_emb { m.languages.len().max(1) as f64 } else { 1.0 };
    m.layers as f64 * 12.0 * h * h + tables * v * h
}

/// Estimated one-thread seconds of a pre-training: `6 · parameters · tokens / CPU_THREAD_FLOPS`.
pub fn pretrain_cost(cfg: &RunConfig) -> f64 {
    let tokens = (cfg.train.steps * cfg.train.batch_size as u64 * cfg.train.seq_len as u64) as f64;
    6.0 * parameters(cfg) * tokens / CPU_THREAD_FLOPS
}

/// Estimated one-thread seconds of a fine-tuning of `task` on a model of `params` parameters: the `cpu` scale's
/// measured times on 4 × 128 models rounded to whole minutes (README, *Figures*, footnote 6 of table1), scaled
/// by the parameters (smoke: a few seconds).
pub fn task_cost(task: &str, scale: Scale, params: f64) -> f64 {
    let at_cpu = match task {
        "nli" => 660.0,
        "parse" => 360.0,
        _ => 120.0,
    };
    let cpu_params = 4.0 * 12.0 * 128.0 * 128.0 + 8000.0 * 128.0;
    match scale {
        Scale::Smoke => 5.0,
        _ => at_cpu * params / cpu_params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_grow_with_the_model_and_the_budget() {
        let cfg = crate::train::presets::preset("default", "en-fr", Scale::Cpu).unwrap();
        let cpu = pretrain_cost(&cfg);
        // 1,500 steps × 2,048 tokens at the cost model's rate (about 5,500 tokens/s here): some nine minutes.
        assert!((300.0..1500.0).contains(&cpu), "{cpu}");
        let mut longer = cfg.clone();
        longer.train.steps *= 2;
        assert!((pretrain_cost(&longer) / cpu - 2.0).abs() < 1e-9);
        assert!(task_cost("nli", Scale::Cpu, parameters(&cfg)) > task_cost("ner", Scale::Cpu, parameters(&cfg)));
        assert_eq!(task_job_id("ner", "m", &serde_json::json!(1)), task_job_id("ner", "m", &serde_json::json!(1)));
        assert_ne!(task_job_id("ner", "m", &serde_json::json!(1)), task_job_id("ner", "m2", &serde_json::json!(1)));
    }
}
