//! One zero-shot transfer run from a request, with its result cache — the single entry point that the script
//! namespace `task::`, the CLI `task nli | ner | parse` and notebooks share (Wu, Conneau et al. 2020 §3, Table 1).
//!
//! A [`TaskRequest`] names the task, the model, the evaluation languages, config overrides over the task's preset at
//! a [`Scale`], the seed, the compute, optionally a stack of fresh layers on a frozen layer ([`StackRequest`],
//! Emerging §5.1.2) and, for NER, the English training data. [`run_task`] checks the setup before any data is read
//! (config, stack plan, languages the model reads and the data has), then reads the result from the cache or
//! fine-tunes, scores and writes it. [`run_task_grid`] runs one request per grid setting and reports the mean of the
//! best two by English dev ([`crate::tasks::sweep`]).
//!
//! **Cache.** `MODELS/tasks/TASK-KEY.json` holds `(GridRun, FilesRead)`; KEY is the first 16 hex digits of the
//! sha256 of `FORMAT\nIDENTITY\nTASK\nWHAT`: [`TASK_CACHE_FORMAT`], what the task read (a model's kind and weights
//! sha256), the task name and the resolved settings as compact JSON (config, languages, training data, device and,
//! for a stack, its options and the target models' weights; for a token task on a tokenizer that marks word starts,
//! the main model's or a stack target's, `"word_spacing"`, since glued words are read without the marker, see
//! [`crate::tasks::word_inputs`], and for parsing `"multiword_parts"` beside it, since the later parts of a
//! multiword token that spells them are glued). A run with [`TaskContext::fresh`] recomputes and rewrites the entry.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::data::FilesRead;
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::LoadedModel;
use crate::scale::Scale;
use crate::tasks::aligned_stack::{build_stack, own_langs, StackPlan};
use crate::tasks::backbone::TaskModel;
use crate::tasks::finetune_config::FinetuneConfig;
use crate::tasks::ner::transfer::{load_ner_data, panx_languages, run_ner, NerTrainData};
use crate::tasks::ner::NerConfig;
use crate::tasks::nli::transfer::{default_langs, load_nli_data, run_nli, xnli_languages};
use crate::tasks::nli::NliConfig;
use crate::tasks::parse::transfer::{load_parse_data, run_parse};
use crate::tasks::parse::ParseConfig;
use crate::tasks::sweep::{run_grid, GridReport, GridRun};

/// Config fields by name, as JSON.
pub type JsonMap = serde_json::Map<String, serde_json::Value>;

/// Format of cached task results; bump when a task changes what it computes. 2: per-item outcomes (`items`).
pub const TASK_CACHE_FORMAT: u32 = 2;

/// A fine-tuned transfer task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// XNLI accuracy after fine-tuning on English MNLI.
    Nli,
    /// PAN-X span F1 after fine-tuning a BIO tagger on English.
    Ner,
    /// UD LAS after fine-tuning the biaffine parser on English.
    Parse,
}

impl TaskKind {
    /// `nli`, `ner` or `parse`: the name in the cache file and in log lines.
    pub fn name(self) -> &'static str {
        match self {
            TaskKind::Nli => "nli",
            TaskKind::Ner => "ner",
            TaskKind::Parse => "parse",
        }
    }
}

impl std::str::FromStr for TaskKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "nli" => Ok(TaskKind::Nli),
            "ner" => Ok(TaskKind::Ner),
            "parse" => Ok(TaskKind::Parse),
            other => Err(Error::Invalid(format!("unknown task '{other}': expected nli, ner or parse"))),
        }
    }
}

/// A model a run reads, opened afresh for each use (fine-tuning consumes the weights).
pub trait OpenModel {
    /// The model's name in log lines (and, for a stack's target model, in the cache key).
    fn name(&self) -> &str;
    /// Loads the model on `device`.
    fn open(&self, device: tch::Device) -> Result<LoadedModel>;
}

/// A model folder (a crossling checkpoint or run, or a Hugging Face BERT), named by its path.
#[derive(Debug, Clone)]
pub struct ModelFolder {
    pub name: String,
    pub dir: PathBuf,
}

impl ModelFolder {
    /// The folder `dir`, named by its path.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        ModelFolder { name: dir.display().to_string(), dir }
    }
}

impl OpenModel for ModelFolder {
    fn name(&self) -> &str {
        &self.name
    }
    fn open(&self, device: tch::Device) -> Result<LoadedModel> {
        LoadedModel::open(&self.dir, device)
    }
}

/// A stacked run (token tasks only): fresh layers on frozen layer `plan.layer` of the model; each language of
/// `targets` read by layer `plan.layer` of its own model, mapped into the main model's space.
pub struct StackRequest<'a> {
    pub plan: StackPlan,
    pub targets: BTreeMap<String, &'a dyn OpenModel>,
}

/// What a run asks for (see the module docs).
pub struct TaskRequest<'a> {
    pub task: TaskKind,
    pub model: &'a dyn OpenModel,
    /// Evaluation languages; `None`: the stack's target languages, else every one the model reads that the task's
    /// data has.
    pub langs: Option<Vec<String>>,
    /// Config fields over the task's preset at `scale` (unknown fields are errors).
    pub overrides: JsonMap,
    /// The seed unless `overrides` sets one; `None`: the preset's.
    pub seed: Option<u64>,
    pub scale: Scale,
    pub compute: Compute,
    pub stack: Option<StackRequest<'a>>,
    /// NER's English training data (default PAN-X); ignored by the other tasks.
    pub train_data: Option<NerTrainData>,
}

/// Where a run finds its data and cache, and where it reports.
pub struct TaskContext<'a> {
    pub catalog: &'a Catalog,
    pub roots: &'a DataRoots,
    /// The model cache ([`crate::train::model_cache::models_root`]); results go to its `tasks/` folder.
    pub models_dir: &'a Path,
    /// Recompute (and rewrite) instead of reading a cached result.
    pub fresh: bool,
    /// Only read the cache: a run without a cached result fails with [`Error::NotCached`] instead of computing
    /// (planning, [`crate::grid`]).
    pub cached_only: bool,
    /// Print the fine-tuning's progress.
    pub progress: bool,
    /// Receives the run's log lines (cache hits, the stack's maps, the scores).
    pub log: &'a dyn Fn(String),
}

/// A run's outcome and the data files it read (for provenance).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutcome {
    pub run: GridRun,
    pub files: FilesRead,
    /// Whether it came from the cache.
    pub cached: bool,
}

/// Splits a task's options (JSON object) into the evaluation languages (`langs`), the NER training data
/// (`train_data`) and the config overrides (every other field).
pub fn split_options(json: serde_json::Value) -> Result<(Option<Vec<String>>, Option<String>, JsonMap)> {
    let mut map = json.as_object().cloned().unwrap_or_default();
    let langs = match map.remove("langs") {
        None => None,
        Some(serde_json::Value::Array(a)) => Some(
            a.into_iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| Error::Invalid(format!("langs: {v} is not a string")))
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        Some(v) => return Err(Error::Invalid(format!("langs must be an array of language codes, got {v}"))),
    };
    let train_data = match map.remove("train_data") {
        None => None,
        Some(v) => {
            Some(v.as_str().map(str::to_string).ok_or_else(|| Error::Invalid("train_data must be a string".into()))?)
        }
    };
    Ok((langs, train_data, map))
}

/// NER's English training data named `name` (default PAN-X); `None` for the other tasks, which ignore it.
pub fn ner_train_data(task: TaskKind, name: Option<String>) -> Result<Option<NerTrainData>> {
    match (task, name) {
        (TaskKind::Ner, Some(t)) => Ok(Some(t.parse()?)),
        _ => Ok(None),
    }
}

/// The preset `preset` with `overrides` applied field by field. An override must name a field of the preset's JSON
/// (the error lists them), or an optional field that the JSON leaves out while it is unset (NER's `zh_script`): such
/// a field is known when the config, read with it and written again, holds it. The task configs read only complete
/// JSON, so partial settings come through here, on top of a scale's preset.
pub fn configured<T: serde::Serialize + serde::de::DeserializeOwned>(preset: T, overrides: &JsonMap) -> Result<T> {
    let mut v = serde_json::to_value(preset).map_err(|e| Error::Invalid(e.to_string()))?;
    let obj =
        v.as_object_mut().ok_or_else(|| Error::Invalid("task options: the preset is not a JSON object".into()))?;
    let known: Vec<String> = obj.keys().cloned().collect();
    let unknown = |k: &str| Error::Invalid(format!("task options: unknown field `{k}`; known: {}", known.join(", ")));
    let absent: Vec<&String> = overrides.keys().filter(|k| !obj.contains_key(*k)).collect();
    for (k, val) in overrides {
        obj.insert(k.clone(), val.clone());
    }
    let config: T = serde_json::from_value(v).map_err(|e| {
        let e = e.to_string();
        match absent.iter().find(|k| e.contains(&format!("unknown field `{k}`"))) {
            Some(k) => unknown(k),
            None => Error::Invalid(format!("task options: {e}")),
        }
    })?;
    if !absent.is_empty() {
        let written = serde_json::to_value(&config).map_err(|e| Error::Invalid(e.to_string()))?;
        if let Some(k) = absent.iter().find(|k| written.get(k.as_str()).is_none()) {
            return Err(unknown(k));
        }
    }
    Ok(config)
}

/// `v` as JSON.
pub fn json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| Error::Invalid(format!("task result: {e}")))
}

/// `fr 0.7123, de 0.6500`: scores for a log line.
pub fn scores_line(scores: &BTreeMap<String, f64>) -> String {
    scores.iter().map(|(l, s)| format!("{l} {s:.4}")).collect::<Vec<_>>().join(", ")
}

/// `models_dir/tasks/TASK-KEY.json`, KEY = sha256 of the cache format, what the task read (`identity`), the task and
/// `what` (its resolved settings; see the module docs).
pub fn cache_file(models_dir: &Path, identity: &str, task: &str, what: &serde_json::Value) -> PathBuf {
    use sha2::{Digest, Sha256};
    let key = format!("{TASK_CACHE_FORMAT}\n{identity}\n{task}\n{what}");
    let hash = hex::encode(Sha256::digest(key.as_bytes()));
    models_dir.join("tasks").join(format!("{task}-{}.json", &hash[..16]))
}

/// The cached run at `path`; `None` when there is none.
pub fn read_cached(path: &Path) -> Result<Option<(GridRun, FilesRead)>> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(None) };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Error::Invalid(format!("{}: {e} (delete it or run with --fresh)", path.display())))
}

/// Writes a run to the cache at `path` (atomically).
pub fn write_cached(path: &Path, run: &GridRun, files: &FilesRead) -> Result<()> {
    let text = serde_json::to_string(&(run, files)).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::atomic_file::write_atomic(path, &text)
}

/// A task with its resolved config (and, for NER, its English training data).
enum Setup {
    Nli(NliConfig),
    Ner(NerConfig, NerTrainData),
    Parse(ParseConfig),
}

impl Setup {
    fn of(req: &TaskRequest) -> Result<Self> {
        let mut over = req.overrides.clone();
        if let Some(seed) = req.seed {
            over.entry("seed").or_insert(serde_json::json!(seed));
        }
        Ok(match req.task {
            TaskKind::Nli => Setup::Nli(configured(NliConfig::at(req.scale), &over)?),
            TaskKind::Ner => {
                Setup::Ner(configured(NerConfig::at(req.scale), &over)?, req.train_data.unwrap_or_default())
            }
            TaskKind::Parse => Setup::Parse(configured(ParseConfig::at(req.scale), &over)?),
        })
    }

    fn finetune(&self) -> &FinetuneConfig {
        match self {
            Setup::Nli(c) => &c.finetune,
            Setup::Ner(c, _) => &c.finetune,
            Setup::Parse(c) => &c.finetune,
        }
    }

    /// The config as JSON and the training data's name, for the cache key.
    fn key_parts(&self) -> Result<(serde_json::Value, &'static str)> {
        Ok(match self {
            Setup::Nli(c) => (json(c)?, "panx"),
            Setup::Ner(c, source) => (json(c)?, source.name()),
            Setup::Parse(c) => (json(c)?, "panx"),
        })
    }
}

/// Runs the request (or reads its result from the cache); see the module docs. The result's `setting` is empty.
pub fn run_task(ctx: &TaskContext, req: &TaskRequest) -> Result<TaskOutcome> {
    let task = req.task.name();
    if req.stack.is_some() && req.task == TaskKind::Nli {
        return Err(Error::Invalid("stack_layer is for the token tasks (ner, parse), not nli".into()));
    }
    // The main model must read every language but those a target model reads (English at least).
    let targets: Vec<String> = req.stack.as_ref().map(|s| s.targets.keys().cloned().collect()).unwrap_or_default();
    let langs = req.langs.clone().or_else(|| (!targets.is_empty()).then(|| targets.clone()));
    if let Some(t) = targets.iter().find(|t| !langs.as_ref().is_some_and(|l| l.contains(t))) {
        return Err(Error::Invalid(format!("target model for '{t}', which is not among the evaluation languages")));
    }
    let own = |langs: &[String]| own_langs(langs, &targets);
    let setup = Setup::of(req)?;
    let (seed, freeze) = (setup.finetune().seed, setup.finetune().freeze_plan());
    if let Some(st) = &req.stack {
        st.plan.check(&freeze, &targets)?;
    }
    let loaded = req.model.open(req.compute.device)?;
    let langs = match &setup {
        Setup::Nli(cfg) => {
            let known = xnli_languages(ctx.catalog)?;
            let langs = langs.unwrap_or_else(|| default_langs(&loaded, &known));
            crate::tasks::nli::transfer::check_setup(&loaded, &langs, &known, cfg)?;
            langs
        }
        Setup::Ner(cfg, _) => {
            let known = panx_languages(ctx.catalog)?;
            let langs = langs.unwrap_or_else(|| default_langs(&loaded, &known));
            crate::tasks::ner::transfer::check_setup(&loaded, &own(&langs), &known, cfg)?;
            if let Some(t) = targets.iter().find(|t| !known.contains(t)) {
                return Err(Error::Invalid(format!("no PAN-X dev set for language '{t}'")));
            }
            langs
        }
        Setup::Parse(cfg) => {
            let langs = langs.unwrap_or_else(|| crate::tasks::parse::transfer::default_langs(&loaded));
            crate::tasks::parse::transfer::check_setup(&loaded, &own(&langs), cfg)?;
            for t in &targets {
                crate::tasks::parse::transfer::eval_treebank(t)?;
            }
            langs
        }
    };
    let (cfg_json, train_data) = setup.key_parts()?;
    let mut what = serde_json::json!({ "config": cfg_json, "langs": langs, "train_data": train_data,
                                       "device": req.compute.device_name() });
    if let Some(st) = &req.stack {
        what["stack"] = stack_key(st, req.compute.device)?;
    }
    if req.task != TaskKind::Nli {
        if let Some(spacing) = crate::tasks::word_inputs::spacing_key(&loaded.tokenizer)? {
            what["word_spacing"] = spacing;
        }
    }
    let spaced_somewhere = what.get("word_spacing").is_some() || what.pointer("/stack/word_spacing").is_some();
    if req.task == TaskKind::Parse && spaced_somewhere {
        what["multiword_parts"] = serde_json::json!(crate::tasks::word_inputs::MULTIWORD_PARTS_KEY);
    }
    let identity = format!("{}\n{}", loaded.source.kind.name(), loaded.source.weights_sha256);
    let cache = cache_file(ctx.models_dir, &identity, task, &what);
    let name = req.model.name();
    if !ctx.fresh {
        if let Some((run, files)) = read_cached(&cache)? {
            (ctx.log)(format!("task {task} on {name}: cached result {}", cache.display()));
            let run = GridRun { setting: JsonMap::new(), ..run };
            return Ok(TaskOutcome { run, files, cached: true });
        }
    }
    if ctx.cached_only {
        return Err(Error::NotCached(cache));
    }
    let mut map_files = FilesRead::new();
    let mut task_model = |loaded: LoadedModel| -> Result<TaskModel> {
        let Some(st) = &req.stack else { return Ok(loaded.into()) };
        let mut models = BTreeMap::new();
        for (lang, m) in &st.targets {
            models.insert(lang.clone(), m.open(req.compute.device)?);
        }
        let built = build_stack(ctx.catalog, ctx.roots, loaded, models, &langs, &st.plan, seed)?;
        for line in built.log {
            (ctx.log)(line);
        }
        map_files.extend(built.files);
        Ok(built.model)
    };
    let (compute, progress) = (req.compute, ctx.progress);
    let (run, mut files) = match setup {
        Setup::Nli(cfg) => {
            let data = load_nli_data(ctx.catalog, ctx.roots, &langs)?;
            let r = run_nli(loaded, &data, &langs, &cfg, compute, progress)?;
            let scores = r.xnli.iter().map(|(l, a)| (l.clone(), a.accuracy)).collect();
            let run = GridRun {
                setting: JsonMap::new(),
                en_dev: r.en_dev_accuracy,
                scores,
                result: json(&r)?,
                items: r.items,
                mds_items: r.mds_items,
            };
            (run, r.files)
        }
        Setup::Ner(cfg, source) => {
            let data = load_ner_data(ctx.catalog, ctx.roots, source, &langs)?;
            let r = run_ner(task_model(loaded)?, &data, &langs, &cfg, compute, progress)?;
            let scores = r.eval.iter().map(|(l, e)| (l.clone(), e.scores.f1)).collect();
            let run = GridRun {
                setting: JsonMap::new(),
                en_dev: r.en_dev_f1,
                scores,
                result: json(&r)?,
                items: r.items,
                mds_items: Default::default(),
            };
            (run, r.files)
        }
        Setup::Parse(cfg) => {
            let data = load_parse_data(ctx.catalog, ctx.roots, &langs)?;
            let r = run_parse(task_model(loaded)?, &data, &langs, &cfg, compute, progress)?;
            let scores = r.results.iter().map(|(l, e)| (l.clone(), e.las)).collect();
            let run = GridRun {
                setting: JsonMap::new(),
                en_dev: r.en_dev_las,
                scores,
                result: json(&r)?,
                items: r.items,
                mds_items: Default::default(),
            };
            (run, r.files)
        }
    };
    files.extend(map_files);
    (ctx.log)(format!("task {task} on {name}: English dev {:.4}, {}", run.en_dev, scores_line(&run.scores)));
    write_cached(&cache, &run, &files)?;
    Ok(TaskOutcome { run, files, cached: false })
}

/// The stack's part of the cache key: its options (target models by name) and the target models' weights.
fn stack_key(st: &StackRequest, device: tch::Device) -> Result<serde_json::Value> {
    // Target models enter the key by their weights (opened here only to read the hash).
    let (mut shas, mut spacing) = (BTreeMap::new(), BTreeMap::new());
    for (l, m) in &st.targets {
        let target = m.open(device)?;
        if let Some(k) = crate::tasks::word_inputs::spacing_key(&target.tokenizer)? {
            spacing.insert(l.clone(), k);
        }
        shas.insert(l.clone(), target.source.weights_sha256);
    }
    let p = &st.plan;
    let names: BTreeMap<&String, &str> = st.targets.iter().map(|(l, m)| (l, m.name())).collect();
    let options = serde_json::json!({ "layer": p.layer, "depth": p.depth, "map_sentences": p.map_sentences,
                                      "targets": names });
    let mut key = serde_json::json!({ "options": options, "target_weights": shas, "map": p.map });
    if !spacing.is_empty() {
        key["word_spacing"] = serde_json::json!(spacing);
    }
    Ok(key)
}

/// Every combination of `axes` (see [`crate::tasks::sweep::combinations`]) run as `base` with the setting's fields over its
/// overrides; the report ranks them by English dev and gives the mean of the best two. Each run's `setting` is its
/// grid setting; the files are every run's.
pub fn run_task_grid(
    ctx: &TaskContext,
    base: &TaskRequest,
    axes: &[(String, Vec<serde_json::Value>)],
) -> Result<(GridReport, FilesRead)> {
    let settings = crate::tasks::sweep::combinations(axes)?;
    let mut files = FilesRead::new();
    let report = run_grid(settings, 2, |setting| {
        let mut overrides = base.overrides.clone();
        overrides.extend(setting.clone());
        let req = TaskRequest {
            task: base.task,
            model: base.model,
            langs: base.langs.clone(),
            overrides,
            seed: base.seed,
            scale: base.scale,
            compute: base.compute,
            stack: base.stack.as_ref().map(|s| StackRequest { plan: s.plan.clone(), targets: s.targets.clone() }),
            train_data: base.train_data,
        };
        let out = run_task(ctx, &req)?;
        files.extend(out.files);
        Ok(GridRun { setting: setting.clone(), ..out.run })
    })?;
    Ok((report, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of a cached result is pinned: a change here would orphan every cached task result.
    #[test]
    fn the_cache_key_is_stable() {
        let what = serde_json::json!({ "config": { "lr": 0.0001, "seed": 0 }, "langs": ["en", "fr"],
                                       "train_data": "panx", "device": "cpu" });
        let path = cache_file(Path::new("/m"), "crossling\nabc123", "ner", &what);
        assert_eq!(path, Path::new("/m/tasks/ner-76cf8ed7e29f3133.json"));
        assert_eq!(TASK_CACHE_FORMAT, 2);
    }

    #[test]
    fn task_names_round_trip_and_overrides_are_checked() {
        for t in [TaskKind::Nli, TaskKind::Ner, TaskKind::Parse] {
            assert_eq!(t.name().parse::<TaskKind>().unwrap(), t);
        }
        assert!("pos".parse::<TaskKind>().unwrap_err().to_string().contains("expected nli, ner or parse"));
        let mut over = JsonMap::new();
        over.insert("lr".into(), serde_json::json!(0.5));
        assert_eq!(configured(NerConfig::at(Scale::Smoke), &over).unwrap().finetune.lr, 0.5);
        over.insert("lr_typo".into(), serde_json::json!(1));
        assert!(configured(NerConfig::at(Scale::Smoke), &over).unwrap_err().to_string().contains("lr_typo"));
    }

    /// NER's `zh_script` is an option the preset's JSON leaves out: an override sets it, the resolved config's JSON (and
    /// so the cache key's `config`) holds it, and without it the JSON is the pinned one (cached runs keep their keys).
    #[test]
    fn a_head_rate_is_set_by_an_override_and_enters_the_key() {
        let over = |v: serde_json::Value| v.as_object().unwrap().clone();
        let plain = configured(ParseConfig::at(Scale::Smoke), &JsonMap::new()).unwrap();
        let fast = configured(ParseConfig::at(Scale::Smoke), &over(serde_json::json!({ "head_lr": 6e-3 }))).unwrap();
        assert_eq!((plain.finetune.head_lr, fast.finetune.head_lr), (None, Some(6e-3)));
        assert!(json(&plain).unwrap().get("head_lr").is_none());
        assert_eq!(json(&fast).unwrap()["head_lr"], 6e-3);
        let key = |c: &ParseConfig| {
            let what = serde_json::json!({ "config": json(c).unwrap(), "langs": ["en"], "device": "cpu" });
            cache_file(Path::new("/m"), "crossling\nabc", "parse", &what)
        };
        assert_ne!(key(&plain), key(&fast));
        // The range is checked where every setting's is, before a fine-tuning starts.
        let zero = configured(ParseConfig::at(Scale::Smoke), &over(serde_json::json!({ "head_lr": 0.0 }))).unwrap();
        let e = zero.validate().unwrap_err().to_string();
        assert!(e.contains("head_lr must be a positive number"), "{e}");
    }

    #[test]
    fn the_chinese_script_option_is_set_by_an_override_and_enters_the_key() {
        use crate::tasks::ner::zh_script::ZhScript;
        let over = |v: serde_json::Value| v.as_object().unwrap().clone();
        let plain = configured(NerConfig::at(Scale::Smoke), &JsonMap::new()).unwrap();
        let simplified =
            configured(NerConfig::at(Scale::Smoke), &over(serde_json::json!({ "zh_script": "simplified" }))).unwrap();
        assert_eq!((plain.zh_script, simplified.zh_script), (None, Some(ZhScript::Simplified)));
        assert!(json(&plain).unwrap().get("zh_script").is_none());
        assert_eq!(json(&simplified).unwrap()["zh_script"], "simplified");
        let key = |c: &NerConfig| {
            let what = serde_json::json!({ "config": json(c).unwrap(), "langs": ["en", "zh"], "train_data": "panx",
                                           "device": "cpu" });
            cache_file(Path::new("/m"), "crossling\nabc", "ner", &what)
        };
        assert_ne!(key(&plain), key(&simplified));
        let e = configured(NerConfig::at(Scale::Smoke), &over(serde_json::json!({ "zh_script": "traditional" })))
            .unwrap_err()
            .to_string();
        assert!(e.contains("traditional"), "{e}");
        // An optional field is no back door for a misspelt one.
        for bad in [serde_json::json!({ "zh_scrpt": "simplified" }), serde_json::json!({ "zh_script": null })] {
            let e = configured(NerConfig::at(Scale::Smoke), &over(bad)).unwrap_err().to_string();
            assert!(e.contains("unknown field `zh_scr") && e.contains("dev_size"), "{e}");
        }
        // The other tasks have no such field.
        let e = configured(NliConfig::at(Scale::Smoke), &over(serde_json::json!({ "zh_script": "simplified" })))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `zh_script`"), "{e}");
    }

    /// The config JSON is part of every task cache key (and of the records): moving fields between the task configs
    /// and [`FinetuneConfig`] must not change it. Pinned from the configs before the shared fields moved.
    #[test]
    fn the_configs_json_is_pinned() {
        let pinned = [
            (
                json(&NliConfig::at(Scale::Smoke)).unwrap(),
                r#"{"batch_size":16,"classifier_dropout":null,"clip_norm":1.0,"dev_size":100,"epochs":1,"eval_batch_tokens":4096,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"lr":0.0001,"max_eval":100,"max_len":64,"max_train":300,"mds":null,"schedule":"fixed","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&NerConfig::at(Scale::Smoke)).unwrap(),
                r#"{"batch_size":16,"classifier_dropout":null,"clip_norm":1.0,"dev_size":50,"epochs":1,"eval_batch_tokens":4096,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"lr":0.0001,"max_eval":100,"max_len":64,"max_train":200,"schedule":"linear_decay","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&ParseConfig::at(Scale::Smoke)).unwrap(),
                r#"{"arc_dim":32,"batch_size":16,"clip_norm":1.0,"decode":"mst","epochs":1,"eval_batch_tokens":4096,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"include_punct":false,"label_dim":16,"lr":0.002,"max_dev":50,"max_eval":50,"max_len":64,"max_train":200,"mlp_dropout":0.33,"schedule":"linear_decay","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&NliConfig::at(Scale::Cpu)).unwrap(),
                r#"{"batch_size":32,"classifier_dropout":null,"clip_norm":1.0,"dev_size":2000,"epochs":2,"eval_batch_tokens":8192,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"lr":0.0002,"max_eval":null,"max_len":128,"max_train":20000,"mds":null,"schedule":"fixed","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&NerConfig::at(Scale::Cpu)).unwrap(),
                r#"{"batch_size":32,"classifier_dropout":null,"clip_norm":1.0,"dev_size":1000,"epochs":3,"eval_batch_tokens":8192,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"lr":0.001,"max_eval":2000,"max_len":128,"max_train":5000,"schedule":"linear_decay","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&ParseConfig::at(Scale::Cpu)).unwrap(),
                r#"{"arc_dim":128,"batch_size":32,"clip_norm":1.0,"decode":"mst","epochs":4,"eval_batch_tokens":8192,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"include_punct":false,"label_dim":64,"lr":0.002,"max_dev":1000,"max_eval":null,"max_len":128,"max_train":null,"mlp_dropout":0.33,"schedule":"linear_decay","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&NliConfig::at(Scale::Paper)).unwrap(),
                r#"{"batch_size":32,"classifier_dropout":null,"clip_norm":1.0,"dev_size":2000,"epochs":3,"eval_batch_tokens":8192,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"lr":0.00002,"max_eval":null,"max_len":256,"max_train":null,"mds":null,"schedule":"fixed","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&NerConfig::at(Scale::Paper)).unwrap(),
                r#"{"batch_size":32,"classifier_dropout":null,"clip_norm":1.0,"dev_size":1000,"epochs":10,"eval_batch_tokens":8192,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"lr":0.00003,"max_eval":null,"max_len":256,"max_train":null,"schedule":"linear_decay","seed":1,"warmup_fraction":0.1}"#,
            ),
            (
                json(&ParseConfig::at(Scale::Paper)).unwrap(),
                r#"{"arc_dim":500,"batch_size":32,"clip_norm":1.0,"decode":"mst","epochs":3,"eval_batch_tokens":8192,"eval_every":0,"freeze_embeddings":false,"freeze_layers":0,"include_punct":false,"label_dim":100,"lr":0.00005,"max_dev":null,"max_eval":null,"max_len":512,"max_train":null,"mlp_dropout":0.33,"schedule":"linear_decay","seed":1,"warmup_fraction":0.1}"#,
            ),
        ];
        for (ours, want) in pinned {
            assert_eq!(ours.to_string(), want);
        }
        // Complete JSON reads back into the same config (flattened fields included); an unknown field is an error.
        fn reads_back<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(c: T) {
            assert_eq!(serde_json::from_value::<T>(json(&c).unwrap()).unwrap(), c);
        }
        for s in Scale::ALL {
            reads_back(NliConfig::at(s));
            reads_back(NerConfig::at(s));
            reads_back(ParseConfig::at(s));
        }
        let mut full = json(&NliConfig::at(Scale::Cpu)).unwrap();
        full.as_object_mut().unwrap().insert("lr_typo".into(), serde_json::json!(1));
        let e = serde_json::from_value::<NliConfig>(full).unwrap_err().to_string();
        assert!(e.contains("unknown field `lr_typo`"), "{e}");
        let mut over = JsonMap::new();
        over.insert("freeze_layers".into(), serde_json::json!(2));
        over.insert("dev_size".into(), serde_json::json!(7));
        let c = configured(NliConfig::at(Scale::Smoke), &over).unwrap();
        assert_eq!((c.finetune.freeze_layers, c.dev_size), (2, 7));
    }
}
