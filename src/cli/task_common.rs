//! What the `crossling task …` commands share (`task nli` in [`super::task`], `ner`, `parse`, `nli-frozen`): the
//! fine-tuning options ([`FinetuneArgs`]), the model folder of the command line ([`CliModel`]), running a task
//! through the library with the CLI's context, and the summary lines and report every task prints.
use anyhow::{bail, Context, Result};
use clap::Args;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crossling::data::manifest::Catalog;
use crossling::data::resolve::DataRoots;
use crossling::data::FilesRead;
use crossling::device::{Compute, Precision};
use crossling::model::LoadedModel;
use crossling::tasks::finetune::{FreezeReport, LossSummary};
use crossling::tasks::ner::transfer::NerTrainData;
use crossling::tasks::run::{run_task, JsonMap, OpenModel, StackRequest, TaskContext, TaskKind, TaskRequest};
use crossling::Scale;

/// The options every fine-tuned task shares.
#[derive(Args)]
pub struct FinetuneArgs {
    /// Model folder: a crossling checkpoint or run, or a Hugging Face BERT folder.
    #[arg(long)]
    pub model: PathBuf,
    /// Evaluation languages, comma-separated (en, fr, de, ru, zh); default: every one the model has.
    #[arg(long)]
    pub langs: Option<String>,
    /// Preset: smoke, cpu or paper (see `crossling task <TASK> --help` and the task's module docs).
    #[arg(long, value_enum, default_value_t = Scale::Cpu)]
    pub scale: Scale,
    /// Learning rate: fixed (NLI) or the peak of warm-up + linear decay (NER, parsing); overrides the preset.
    #[arg(long)]
    pub lr: Option<f64>,
    /// The task head's own learning rate on the same schedule (e.g. a parser head at 1e-3 over a pretrained
    /// encoder at 5e-5); default: the head trains at `--lr`.
    #[arg(long)]
    pub head_lr: Option<f64>,
    /// Examples per step.
    #[arg(long)]
    pub batch: Option<usize>,
    /// Passes over the training examples.
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Cap on English training examples, or `all`.
    #[arg(long)]
    pub max_train: Option<String>,
    /// Freeze the bottom K transformer layers (language-specific parameters are always frozen).
    #[arg(long)]
    pub freeze_layers: Option<usize>,
    /// Freeze the embeddings too.
    #[arg(long)]
    pub freeze_embeddings: bool,
    /// Also evaluate on the English dev set every N steps (default: at the end of each epoch only).
    #[arg(long)]
    pub eval_every: Option<u64>,
    /// Seed of the data split, the head's initialisation, the batch order and dropout.
    #[arg(long)]
    pub seed: Option<u64>,
    /// cpu, cuda or cuda:N (bf16 autocast on CUDA).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Fine-tune again instead of reading a cached result (`nli`, `ner` and `parse` results are cached in
    /// `$CROSSLING_MODELS/tasks/` with the figures' runs, by the model's weights and every resolved setting).
    #[arg(long)]
    pub fresh: bool,
}

impl FinetuneArgs {
    /// `--max-train`: `Ok(None)` when not given, `Ok(Some(None))` for `all`.
    pub fn max_train(&self) -> Result<Option<Option<usize>>> {
        self.max_train
            .as_ref()
            .map(|m| match m.trim() {
                "all" => Ok(None),
                n => n.parse().map(Some).map_err(|_| anyhow::anyhow!("--max-train: '{n}' is not a number or `all`")),
            })
            .transpose()
    }

    /// The shared command-line settings as config fields over the task's preset.
    pub fn overrides(&self) -> Result<JsonMap> {
        let mut o = JsonMap::new();
        let numbers = [
            ("lr", self.lr.map(serde_json::Value::from)),
            ("head_lr", self.head_lr.map(serde_json::Value::from)),
            ("batch_size", self.batch.map(serde_json::Value::from)),
            ("epochs", self.epochs.map(serde_json::Value::from)),
            ("freeze_layers", self.freeze_layers.map(serde_json::Value::from)),
            ("eval_every", self.eval_every.map(serde_json::Value::from)),
            ("seed", self.seed.map(serde_json::Value::from)),
        ];
        for (k, v) in numbers {
            if let Some(v) = v {
                o.insert(k.to_string(), v);
            }
        }
        if self.freeze_embeddings {
            o.insert("freeze_embeddings".into(), true.into());
        }
        if let Some(m) = self.max_train()? {
            o.insert("max_train".into(), serde_json::json!(m));
        }
        Ok(o)
    }
}

/// `fr,de` → `["fr", "de"]`: trimmed, lowercase, no duplicates, none empty.
pub(super) fn parse_langs(text: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for l in text.split(',').map(|s| s.trim().to_ascii_lowercase()) {
        if l.is_empty() {
            bail!("--langs '{text}': empty language code (expected e.g. fr,de,ru,zh)");
        }
        if !out.contains(&l) {
            out.push(l);
        }
    }
    Ok(out)
}

/// A model folder of the command line; its load notes are printed once.
pub(super) struct CliModel {
    name: String,
    dir: PathBuf,
    noted: Cell<bool>,
}

impl CliModel {
    pub(super) fn new(dir: &std::path::Path) -> Self {
        CliModel { name: dir.display().to_string(), dir: dir.to_path_buf(), noted: Cell::new(false) }
    }
}

impl OpenModel for CliModel {
    fn name(&self) -> &str {
        &self.name
    }
    fn open(&self, device: tch::Device) -> crossling::Result<LoadedModel> {
        let m = LoadedModel::open(&self.dir, device)?;
        if !self.noted.replace(true) {
            for note in &m.notes {
                eprintln!("note: {note}");
            }
        }
        Ok(m)
    }
}

/// Runs `task` on `--model` through the library (with the result cache the scripts use; `--fresh` recomputes):
/// `overrides` over the preset of `--scale`, an optional stack on frozen layers with its target models, and NER's
/// training data. Returns the task's result as JSON and every data file read.
pub(super) fn run_cli_task(
    a: &FinetuneArgs,
    task: TaskKind,
    overrides: JsonMap,
    stack: Option<(crossling::tasks::aligned_stack::StackPlan, BTreeMap<String, CliModel>)>,
    train_data: Option<NerTrainData>,
) -> Result<(serde_json::Value, FilesRead)> {
    let compute = Compute::resolve(&a.device, Precision::Auto)?;
    let catalog = load_catalog()?;
    let roots = DataRoots::from_env();
    let models_dir = crossling::train::model_cache::models_root();
    let model = CliModel::new(&a.model);
    let langs = a.langs.as_deref().map(parse_langs).transpose()?;
    let stack = stack.as_ref().map(|(plan, targets)| StackRequest {
        plan: plan.clone(),
        targets: targets.iter().map(|(l, m)| (l.clone(), m as &dyn OpenModel)).collect(),
    });
    let req =
        TaskRequest { task, model: &model, langs, overrides, seed: None, scale: a.scale, compute, stack, train_data };
    let out = with_cli_context(&catalog, &roots, &models_dir, a.fresh, a.json, |ctx| run_task(ctx, &req))?;
    Ok((out.run.result, out.files))
}

/// Calls `f` with the CLI's task context: the data, the model cache (`$CROSSLING_MODELS`), `--fresh`, log lines on
/// stderr, and progress unless the result is printed as JSON.
pub(super) fn with_cli_context<T>(
    catalog: &Catalog,
    roots: &DataRoots,
    models_dir: &std::path::Path,
    fresh: bool,
    json: bool,
    f: impl FnOnce(&TaskContext) -> crossling::Result<T>,
) -> crossling::Result<T> {
    let log = |line: String| eprintln!("{line}");
    f(&TaskContext { catalog, roots, models_dir, fresh, cached_only: false, progress: !json, log: &log })
}

/// The data manifests.
pub(super) fn load_catalog() -> Result<Catalog> {
    Catalog::load_default().context("loading data manifests")
}

/// `training loss FIRST → LAST; frozen K of N tensors`: the training part of every task's summary.
pub(super) fn training_line(loss: &LossSummary, freeze: &FreezeReport) -> String {
    let (first, last) = (loss.first.unwrap_or(f64::NAN), loss.last.unwrap_or(f64::NAN));
    let tensors = freeze.frozen_tensors + freeze.trainable_tensors;
    format!("training loss {first:.3} → {last:.3}; frozen {} of {tensors} tensors", freeze.frozen_tensors)
}

/// `stack: …` of a run on fresh layers over a frozen layer (see `task_stack`), for the summaries.
pub(super) fn stack_line(model: &crossling::tasks::common::ModelInfo) -> Option<String> {
    let s = model.stack.as_ref()?;
    let inputs: Vec<String> = s
        .inputs
        .iter()
        .map(|(lang, i)| match &i.map {
            Some(m) => format!(
                "{lang} by {} mapped (pair cosine {:.3} → {:.3})",
                i.model, m["mean_cosine_before"], m["mean_cosine_after"]
            ),
            None => format!("{lang} by {}", i.model),
        })
        .collect();
    Some(format!("stack: {} fresh layer(s) on frozen layer {}; {}", s.depth, s.layer, inputs.join("; ")))
}

/// Prints a task result: JSON with `--json`, else `summary`.
pub(super) fn report<T: serde::Serialize>(a: &FinetuneArgs, r: &T, summary: impl Fn(&T)) -> Result<()> {
    if a.json {
        println!("{}", serde_json::to_string_pretty(r)?);
    } else {
        summary(r);
    }
    Ok(())
}
