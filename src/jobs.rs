//! The units of work a figure needs — a pre-training, a fine-tuning, the figure itself — with their ids, estimated
//! costs and resources, and the recorder that collects them while a script runs in planning mode
//! ([`crate::grid::plan`] turns them into a plan file; the script namespaces record them).
//!
//! Job ids: `model-LABEL-KEY` (the model cache folder's name), `task-TASK-HASH` (sha256 over the model's job, the
//! options, the axes, the seed and the scale; first 16 hex digits), `figure-ID-KEY` (KEY over the plan's request:
//! [`crate::grid::plan::PlanRequest::figure_job_id`]; `figure-ID` in plans written before 2026-12-02).
//!
//! Costs are one-thread seconds: a pre-training costs `flops per token · tokens / CPU_THREAD_FLOPS` with the FLOPs
//! crossling's training step executes ([`pretrain_flops_per_token`]), a fine-tuning the measured `cpu` time of its
//! task scaled by the encoder's weights ([`encoder_weights`]).
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::scale::Scale;
use crate::train::run::RunConfig;
/// Floating-point operations per second of one CPU thread in the cost model ([`pretrain_flops_per_token`]): an
/// estimate for planning, calibrated on this project's 2-core machine. For the pair models of the `cpu` presets of
/// 2026-11-25 (4 × 128, 1,500 steps of 2,048 tokens) the model gives 310 s; the thirteen such pre-trainings of
/// 2026-11-27's table1-synthetic and table1 grids that ran from their first step took 285–346 CPU seconds each, corpus
/// and tokenizer included (docs/usage/grids.md, *Job grids, local workers and Slurm*). At today's 10,000 steps it
/// gives about 2,070 s; three 10,000-step models of 2026-11-28 took 1,919–2,116 CPU s and the preln bilingual model
/// 2,473 s wall beside other work. Before 2026-11-27 the model charged
/// `6 · (layers · 12 · hidden² + embeddings) · tokens`, the embedding tables and the output softmax at every position,
/// and gave 556–871 s for the same runs.
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
    /// `model-LABEL-KEY`, `task-TASK-HASH` or `figure-ID-KEY`.
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
    /// Why the planning run in progress was stopped on purpose, when it was ([`Recorder::stop`]); taken by
    /// [`Recorder::stop_reason`].
    stop: Option<String>,
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

    /// Records work no job can express; the planning run stops there ([`Recorder::stop`]) and the figure job does
    /// it.
    pub fn defer(&mut self, what: String) {
        self.stop(what.clone());
        self.deferred.push(what);
    }

    /// Marks the error the planning run in progress is about to return, whose message holds `why`, as a stop by
    /// design: the script reached what only a job's result can answer. [`crate::grid::plan::make_plan`] reports any
    /// other error as the script's.
    pub fn stop(&mut self, why: String) {
        self.stop = Some(why);
    }

    /// Whether a fine-tuning job is pending: a planning run then hands `task::run` / `task::grid` callers `()`.
    pub fn has_pending_task(&self) -> bool {
        self.jobs.iter().any(|j| !j.done && matches!(j.spec, JobSpec::Task { .. }))
    }

    /// Why a planning run that ended with `error` (its text) stopped, when that was by design: `error` is the one
    /// a stop on purpose raised ([`Recorder::stop`]: deferred work, a read of a pending fine-tuning's result; its
    /// words are in the error, so an error a script caught and a later one of its own are not confused), or it is
    /// about a model whose pre-training is a pending job (every error that opening an untrained model's cache
    /// folder gives names that folder, `LABEL-KEY`). `None`: the error is the script's own. Clears the mark.
    pub fn stop_reason(&mut self, error: &str) -> Option<String> {
        if let Some(why) = self.stop.take().filter(|why| error.contains(why.as_str())) {
            return Some(why);
        }
        self.jobs.iter().find_map(|j| match &j.spec {
            JobSpec::Pretrain { label, key, .. } if !j.done && error.contains(&format!("{label}-{key}")) => {
                Some(format!("model {label} is not trained yet (job {})", j.id))
            }
            _ => None,
        })
    }

    /// Clears a stop mark a finished run left (a script that went on after an error it caught).
    pub fn clear_stop(&mut self) {
        self.stop = None;
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
pub fn pretrain_job(model: &crate::train::model_cache::CachedModel, gpu: bool) -> Job {
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
        done: crate::train::model_cache::is_trained(&model.dir, &model.config),
    }
}

/// The job id of the pre-training whose cache folder is `LABEL-KEY`.
pub fn model_job_id(label: &str, key: &str) -> String {
    format!("model-{label}-{key}")
}

/// The job id of a task run: `task-TASK-HASH`, the hash over the model's job, the options, the axes, the seed and
/// the scale (the task cache's own key needs the model's weights, which exist only after its job).
pub fn task_job_id(task: &str, model_job: &str, spec: &serde_json::Value) -> String {
    keyed_id("task", task, &format!("{model_job}\n{task}\n{spec}"))
}

/// The job id of figure `figure`'s job: `figure-ID-KEY`, the key over `request`, the plan's request as JSON
/// ([`crate::grid::plan::PlanRequest::figure_job_id`] says why).
pub fn figure_job_id(figure: &str, request: &serde_json::Value) -> String {
    keyed_id("figure", figure, &request.to_string())
}

/// `KIND-NAME-KEY`, KEY the first 16 hex digits of the SHA-256 of `text`.
fn keyed_id(kind: &str, name: &str, text: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{kind}-{name}-{}", &hex::encode(Sha256::digest(text.as_bytes()))[..16])
}

/// Weights in the encoder's matrix products per token, `layers · (4d² + 2df)` (Q, K, V, O and the feed-forward
/// pair; `d` the width, `f` the feed-forward width): what a fine-tuning's cost scales with (embedding lookups cost
/// next to nothing and a task head is small).
pub fn encoder_weights(cfg: &RunConfig) -> f64 {
    model_encoder_weights(&cfg.train.model)
}

/// [`encoder_weights`] of a model's architecture.
fn model_encoder_weights(m: &crate::model::ModelConfig) -> f64 {
    let (d, f) = (m.hidden as f64, m.ffn_dim() as f64);
    m.layers as f64 * (4.0 * d * d + 2.0 * d * f)
}

/// Training FLOPs per token that crossling's step executes (forward + backward = 3 × forward, 2 per multiply-add):
///
/// ```text
/// 6 · L · (4d² + 2df)  +  12 · L · seq · d  +  6 · (d² + dV) · p
/// ```
///
/// the encoder, the attention scores and weighted sums, and the MLM transform and output softmax at the masked
/// share `p` of the positions only (where crossling's step computes them, `crate::train::step`'s masked-LM loss;
/// `crate::train::bench` counts the head at every position, as Hugging Face computes it). One softmax of `V` rows per token whatever the sharing:
/// separate embeddings add tables, not work per token.
pub fn pretrain_flops_per_token(cfg: &RunConfig) -> f64 {
    let m = &cfg.train.model;
    let (d, v, l) = (m.hidden as f64, m.vocab_size as f64, m.layers as f64);
    let p = cfg.train.masking.mask_prob;
    6.0 * encoder_weights(cfg) + 12.0 * l * cfg.train.seq_len as f64 * d + 6.0 * (d * d + d * v) * p
}

/// Estimated one-thread seconds of a pre-training: `pretrain_flops_per_token · tokens / CPU_THREAD_FLOPS`.
pub fn pretrain_cost(cfg: &RunConfig) -> f64 {
    let tokens = (cfg.train.steps * cfg.train.batch_size as u64 * cfg.train.seq_len as u64) as f64;
    pretrain_flops_per_token(cfg) * tokens / CPU_THREAD_FLOPS
}

/// Estimated one-thread seconds of a fine-tuning of `task` on a model with `weights` encoder weights
/// ([`encoder_weights`]): the medians of the `cpu` preset's measured CPU times on 4 × 128 models (2026-11-27,
/// table1-synthetic's and table1's grids: NLI 415–538 s, parsing 194–245 s, NER 69–87 s; en–zh's NER took 172 s,
/// which this underestimates), scaled by the encoder's weights against the `cpu` architecture's (smoke: a few
/// seconds).
pub fn task_cost(task: &str, scale: Scale, weights: f64) -> f64 {
    let at_cpu = match task {
        "nli" => 460.0,
        "parse" => 205.0,
        _ => 80.0,
    };
    let cpu_weights = model_encoder_weights(&crate::model::ModelConfig::at(Scale::Cpu, 0, Vec::<String>::new()));
    match scale {
        Scale::Smoke => 5.0,
        _ => at_cpu * weights / cpu_weights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_grow_with_the_model_and_the_budget() {
        let cfg = crate::train::presets::preset("default", "en-fr", Scale::Cpu).unwrap();
        let cpu = pretrain_cost(&cfg);
        // 6,000 steps × 2,048 tokens, 40 % masked: about 1,560 s by the cost model; 1,824 s measured on 2026-12-01
        // (wall, one thread beside a test build). At the 15 % presets before: 10,000 steps, about 2,070 s by the
        // model, 1,919–2,473 s measured (CPU_THREAD_FLOPS).
        assert!((1_450.0..1_700.0).contains(&cpu), "{cpu}");
        // Separate embeddings add tables, not work per token.
        let sep = crate::train::presets::preset("sep-emb", "en-fr", Scale::Cpu).unwrap();
        assert!(sep.train.model.sharing.sep_emb);
        assert!((pretrain_cost(&sep) / cpu - 1.0).abs() < 0.05, "{} vs {cpu}", pretrain_cost(&sep));
        let mut longer = cfg.clone();
        longer.train.steps *= 2;
        assert!((pretrain_cost(&longer) / cpu - 2.0).abs() < 1e-9);
        let w = encoder_weights(&cfg);
        // The feed-forward width is the model's own (4 × hidden unless set).
        let mut narrow = cfg.clone();
        narrow.train.model.ffn = Some(300);
        assert_eq!(encoder_weights(&narrow), 4.0 * (4.0 * 128.0 * 128.0 + 2.0 * 128.0 * 300.0));
        assert_eq!(task_cost("nli", Scale::Cpu, w), 460.0);
        assert!(task_cost("nli", Scale::Cpu, w) > task_cost("ner", Scale::Cpu, w));
        let paper = crate::train::presets::preset("default", "en-fr", Scale::Paper).unwrap();
        assert!(task_cost("nli", Scale::Paper, encoder_weights(&paper)) > 10.0 * task_cost("nli", Scale::Cpu, w));
        assert_eq!(task_job_id("ner", "m", &serde_json::json!(1)), task_job_id("ner", "m", &serde_json::json!(1)));
        assert_ne!(task_job_id("ner", "m", &serde_json::json!(1)), task_job_id("ner", "m2", &serde_json::json!(1)));
    }
}
