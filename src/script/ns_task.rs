//! `task::` — zero-shot cross-lingual transfer from scripts (Wu, Conneau et al. 2020 §3, Table 1): fine-tune a
//! model on English, score it on other languages. Each call loads the model afresh (fine-tuning consumes the
//! weights), starts from the task's preset at the run's `SCALE`, applies the overrides and seeds with `SEED`.
//!
//! ```rhai
//! let r = task::run("nli", model, #{ langs: ["fr"] });          // #{ en_dev, scores: #{ fr }, items, result }
//! let s = r.items.fr; s.scale = 100.0; s.chance = 33.3;        // per-item outcomes, ready for results::score
//! results::score("xnli/fr", s);
//! let r = task::run("ner", model, #{ langs: ["fr"], lr: 1e-4, freeze_layers: 2 });
//! let g = task::grid("ner", model, #{ langs: ["fr"] }, #{ lr: [1e-4, 3e-4], batch_size: [16, 32] });
//! g.mean_of_best.fr;                                            // mean of the best two settings by English dev
//! ```
//! `ner` and `parse` also run as a stack of fresh layers on a frozen layer of pretrained encoders (Emerging §5.1.2,
//! Figure 5; [`crate::tasks::backbone`]): `stack_layer: i` reads layer `i` of `model` for every language; with
//! `targets: #{ fr: mono_fr }` French is read by layer `i` of `mono_fr` mapped into `model`'s space by Procrustes
//! on word-aligned XNLI parallel sentences ([`crate::tasks::contextual_map`]; `map_sentences`, default 10,000, 200 at
//! smoke). `stack_depth` sets the fresh layers (default 4 · L / 8).
//! ```rhai
//! let r = task::run("parse", mono_en, #{ langs: ["fr"], stack_layer: 2, targets: #{ fr: mono_fr } });
//! ```
//! `task::frozen_nli(rep, opts)` trains one classifier on a frozen representation — static vectors or a model —
//! instead of fine-tuning (Liu et al. 2020 §3.1.2; see [`super::ns_task_frozen`]).
//!
//! **Per-item outcomes.** `items: #{ LANG: SPEC }` holds, for each scored test set, a map `results::score` takes
//! ([`crate::tasks::items`]): XNLI `#{ items: [1.0 or 0.0 per test pair] }`, NER `#{ ratio: [[2·tp, 2·tp + fp + fn]
//! per sentence] }`, parsing `#{ ratio: [[words with gold head and label, scored words] per sentence] }` (LAS).
//! Fractions: the score is exactly `scores[LANG]`; a figure adds `scale` and `chance`. With `mds` (NLI),
//! `mds_items: #{ LANG: #{ test_without, test_with, selection: [SPEC per α] } }` lies beside `result.mds[LANG]`
//! (`test_accuracy_without`, `test_accuracy_with`, `selection`). `task::grid` gives every run's `items` and
//! `items_of_best` (see [`crate::tasks::grid`]).
//! Results are cached in `$CROSSLING_MODELS/tasks/` by the model's weights and every resolved setting, so figures
//! that share runs (table1 and fig3) fine-tune once. Scores are fractions: XNLI accuracy (`nli`), PAN-X span F1 (`ner`), LAS (`parse`, with UAS in `result`). The
//! data files read go into the figure's provenance.
use rhai::{Dynamic, Map, Module, NativeCallContext};

use super::engine::{at, rhai_err, Session};
use super::handles::ModelRef;
use crate::data::evalsets::FilesRead;
use crate::error::{Error, Result};
use crate::model::load::LoadedModel;
use crate::tasks::aligned_stack::{build_stack, own_langs, StackPlan};
use crate::tasks::backbone::TaskModel;
use crate::tasks::grid::{combinations, run_grid, GridRun};
use crate::tasks::ner::NerConfig;
use crate::tasks::ner_transfer::{load_ner_data, panx_languages, run_ner, NerTrainData};
use crate::tasks::nli::NliConfig;
use crate::tasks::nli_transfer::{default_langs, load_nli_data, run_nli, xnli_languages};
use crate::tasks::parse::ParseConfig;
use crate::tasks::parse_transfer::{load_parse_data, run_parse};

type Res<T> = Result<T, Box<rhai::EvalAltResult>>;
pub(super) type JsonMap = serde_json::Map<String, serde_json::Value>;

/// The preset of `scale` with `overrides` applied field by field (unknown fields are errors).
pub(super) fn configured<T: serde::Serialize + serde::de::DeserializeOwned>(
    preset: T,
    overrides: &JsonMap,
) -> Result<T> {
    let mut v = serde_json::to_value(preset).map_err(|e| Error::Invalid(e.to_string()))?;
    if let Some(obj) = v.as_object_mut() {
        for (k, val) in overrides {
            obj.insert(k.clone(), val.clone());
        }
    }
    serde_json::from_value(v).map_err(|e| Error::Invalid(format!("task options: {e}")))
}

/// A script map as JSON.
fn json_of(map: &Map) -> Res<serde_json::Value> {
    rhai::serde::from_dynamic(&Dynamic::from_map(map.clone()))
}

/// Splits a script options map into the evaluation languages, the training data (NER) and config overrides.
pub(super) fn options(opts: &Map) -> Result<(Option<Vec<String>>, Option<String>, JsonMap)> {
    let json = json_of(opts).map_err(|e| Error::Invalid(format!("task options: {e}")))?;
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

/// A stacked run's options (see the module docs).
struct StackOptions {
    plan: StackPlan,
    targets: std::collections::BTreeMap<String, ModelRef>,
}

/// Removes the stack options from `opts`: `None` when `stack_layer` is not given (the others are then errors).
fn stack_options(opts: &mut Map, scale: crate::Scale) -> Result<Option<StackOptions>> {
    let int = |v: Dynamic, what: &str| -> Result<usize> {
        v.as_int()
            .ok()
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| Error::Invalid(format!("{what} must be a non-negative integer, got {v}")))
    };
    let layer = opts.remove("stack_layer").map(|v| int(v, "stack_layer")).transpose()?;
    let depth = opts.remove("stack_depth").map(|v| int(v, "stack_depth")).transpose()?;
    let sentences = opts.remove("map_sentences").map(|v| int(v, "map_sentences")).transpose()?;
    let targets = match opts.remove("targets") {
        None => std::collections::BTreeMap::new(),
        Some(v) => {
            let map = v.try_cast::<Map>().ok_or_else(|| {
                Error::Invalid("targets must be a map of language → model, e.g. #{ fr: mono_fr }".into())
            })?;
            let mut out = std::collections::BTreeMap::new();
            for (lang, m) in map {
                let m =
                    m.try_cast::<ModelRef>().ok_or_else(|| Error::Invalid(format!("targets.{lang} is not a model")))?;
                out.insert(lang.to_string(), m);
            }
            out
        }
    };
    let Some(layer) = layer else {
        if depth.is_some() || sentences.is_some() || !targets.is_empty() {
            return Err(Error::Invalid("stack_depth, targets and map_sentences need stack_layer".into()));
        }
        return Ok(None);
    };
    let mut plan = StackPlan::new(layer, scale);
    plan.depth = depth;
    plan.map_sentences = sentences.unwrap_or(plan.map_sentences);
    Ok(Some(StackOptions { plan, targets }))
}

/// The stacked model of a run, and the data files its maps read.
fn stacked_model(
    session: &Session,
    main: LoadedModel,
    langs: &[String],
    st: &StackOptions,
    seed: u64,
) -> Result<(TaskModel, FilesRead)> {
    let mut targets = std::collections::BTreeMap::new();
    for (lang, m) in &st.targets {
        targets.insert(lang.clone(), super::ns_features::open(session, m)?);
    }
    let (catalog, roots) = (&session.data.0, &session.data.1);
    let built = build_stack(catalog, roots, main, targets, langs, &st.plan, seed)?;
    for line in built.log {
        session.env.log.push(line);
    }
    Ok((built.model, built.files))
}

/// Format of cached task results; bump when a task changes what it computes. 2: per-item outcomes (`items`).
const TASK_CACHE_FORMAT: u32 = 2;

/// Where a task result is cached: `MODELS/tasks/TASK-KEY.json`, KEY = sha256 of the cache format, the model's kind
/// and weights sha256, the task, its resolved config, languages and training data.
fn cache_file(session: &Session, loaded: &LoadedModel, task: &str, what: &serde_json::Value) -> std::path::PathBuf {
    let identity = format!("{}\n{}", loaded.source.kind.name(), loaded.source.weights_sha256);
    task_cache_file(session, &identity, task, what)
}

/// `MODELS/tasks/TASK-KEY.json`, KEY = sha256 of the cache format, what the task read (`identity`), the task and
/// `what` (its resolved settings).
pub(super) fn task_cache_file(
    session: &Session,
    identity: &str,
    task: &str,
    what: &serde_json::Value,
) -> std::path::PathBuf {
    use sha2::{Digest, Sha256};
    let key = format!("{TASK_CACHE_FORMAT}\n{identity}\n{task}\n{what}");
    let hash = hex::encode(Sha256::digest(key.as_bytes()));
    session.env.models_dir.join("tasks").join(format!("{task}-{}.json", &hash[..16]))
}

/// A task with its resolved config (and, for NER, its English training data).
enum Setup {
    Nli(NliConfig),
    Ner(NerConfig, NerTrainData),
    Parse(ParseConfig),
}

/// Fine-tunes `model` on task `task` with the options and `overrides`; returns the English dev score and the score
/// per language. Results are cached by model weights and resolved settings (`--fresh` recomputes).
fn run_task(session: &Session, task: &str, model: &ModelRef, opts: &Map, overrides: &JsonMap) -> Result<GridRun> {
    let mut opts = opts.clone();
    let stack = stack_options(&mut opts, session.env.scale)?;
    if stack.is_some() && task == "nli" {
        return Err(Error::Invalid("stack_layer is for the token tasks (ner, parse), not nli".into()));
    }
    let (langs, train_data, base) = options(&opts)?;
    // The main model must read every language but those a target model reads (English at least).
    let targets: Vec<String> = stack.as_ref().map(|s| s.targets.keys().cloned().collect()).unwrap_or_default();
    let langs = langs.or_else(|| (!targets.is_empty()).then(|| targets.clone()));
    let own = |langs: &[String]| own_langs(langs, &targets);
    if let Some(t) = targets.iter().find(|t| !langs.as_ref().is_some_and(|l| l.contains(t))) {
        return Err(Error::Invalid(format!("target model for '{t}', which is not among the evaluation languages")));
    }
    let mut cfg_over = base;
    cfg_over.extend(overrides.clone());
    cfg_over.entry("seed").or_insert(serde_json::json!(session.env.seed));
    let compute = session.env.compute;
    let loaded = super::ns_features::open(session, model)?;
    let (catalog, roots) = (&session.data.0, &session.data.1);
    let scale = session.env.scale;
    let (langs, setup) = match task {
        "nli" => {
            let cfg = configured(NliConfig::at(scale), &cfg_over)?;
            let known = xnli_languages(catalog)?;
            let langs = langs.unwrap_or_else(|| default_langs(&loaded, &known));
            crate::tasks::nli_transfer::check_setup(&loaded, &langs, &known, &cfg)?;
            (langs, Setup::Nli(cfg))
        }
        "ner" => {
            let cfg = configured(NerConfig::at(scale), &cfg_over)?;
            let known = panx_languages(catalog)?;
            let langs = langs.unwrap_or_else(|| default_langs(&loaded, &known));
            crate::tasks::ner_transfer::check_setup(&loaded, &own(&langs), &known, &cfg)?;
            if let Some(t) = targets.iter().find(|t| !known.contains(t)) {
                return Err(Error::Invalid(format!("no PAN-X dev set for language '{t}'")));
            }
            (langs, Setup::Ner(cfg, train_data.as_deref().unwrap_or("panx").parse()?))
        }
        "parse" => {
            let cfg = configured(ParseConfig::at(scale), &cfg_over)?;
            let langs = langs.unwrap_or_else(|| crate::tasks::parse_transfer::default_langs(&loaded));
            crate::tasks::parse_transfer::check_setup(&loaded, &own(&langs), &cfg)?;
            for t in &targets {
                crate::tasks::parse_transfer::eval_treebank(t)?;
            }
            (langs, Setup::Parse(cfg))
        }
        other => return Err(Error::Invalid(format!("unknown task '{other}': expected nli, ner or parse"))),
    };
    let (seed, freeze) = match &setup {
        Setup::Nli(c) => (c.seed, c.freeze_plan()),
        Setup::Ner(c, _) => (c.seed, c.freeze_plan()),
        Setup::Parse(c) => (c.seed, c.freeze_plan()),
    };
    if let Some(st) = &stack {
        st.plan.check(&freeze, &targets)?;
    }
    let (cfg_json, train_data) = match &setup {
        Setup::Nli(c) => (json(c)?, "panx"),
        Setup::Ner(c, source) => (json(c)?, source.name()),
        Setup::Parse(c) => (json(c)?, "panx"),
    };
    let mut what = serde_json::json!({ "config": cfg_json, "langs": langs, "train_data": train_data, "device": session.env.compute.device_name() });
    if let Some(st) = &stack {
        // Target models enter the key by their weights (opened here only to read the hash).
        let mut shas = std::collections::BTreeMap::new();
        for (l, m) in &st.targets {
            shas.insert(l.clone(), super::ns_features::open(session, m)?.source.weights_sha256);
        }
        let p = &st.plan;
        let names: std::collections::BTreeMap<&String, &str> =
            st.targets.iter().map(|(l, m)| (l, m.name.as_str())).collect();
        let options = serde_json::json!({ "layer": p.layer, "depth": p.depth, "map_sentences": p.map_sentences,
                                          "targets": names });
        what["stack"] = serde_json::json!({ "options": options, "target_weights": shas, "map": p.map });
    }
    let cache = cache_file(session, &loaded, task, &what);
    if !session.env.fresh {
        if let Ok(text) = std::fs::read_to_string(&cache) {
            let (run, files): (GridRun, FilesRead) = serde_json::from_str(&text)
                .map_err(|e| Error::Invalid(format!("{}: {e} (delete it or run with --fresh)", cache.display())))?;
            session.note_data(&files);
            session.env.log.push(format!("task {task} on {}: cached result {}", model.name, cache.display()));
            return Ok(GridRun { setting: overrides.clone(), ..run });
        }
    }
    let map_files = std::cell::RefCell::new(FilesRead::new());
    let task_model = |loaded: LoadedModel| -> Result<TaskModel> {
        match &stack {
            None => Ok(loaded.into()),
            Some(st) => {
                let (m, files) = stacked_model(session, loaded, &langs, st, seed)?;
                map_files.borrow_mut().extend(files);
                Ok(m)
            }
        }
    };
    let (run, mut files) = match setup {
        Setup::Nli(cfg) => {
            let data = load_nli_data(catalog, roots, &langs)?;
            let r = run_nli(loaded, &data, &langs, &cfg, compute, false)?;
            let scores = r.xnli.iter().map(|(l, a)| (l.clone(), a.accuracy)).collect();
            let result = json(&r)?;
            let run = GridRun {
                setting: overrides.clone(),
                en_dev: r.en_dev_accuracy,
                scores,
                result,
                items: r.items,
                mds_items: r.mds_items,
            };
            (run, r.files)
        }
        Setup::Ner(cfg, source) => {
            let data = load_ner_data(catalog, roots, source, &langs)?;
            let r = run_ner(task_model(loaded)?, &data, &langs, &cfg, compute, false)?;
            let scores = r.eval.iter().map(|(l, e)| (l.clone(), e.scores.f1)).collect();
            let result = json(&r)?;
            let run = GridRun {
                setting: overrides.clone(),
                en_dev: r.en_dev_f1,
                scores,
                result,
                items: r.items,
                mds_items: Default::default(),
            };
            (run, r.files)
        }
        Setup::Parse(cfg) => {
            let data = load_parse_data(catalog, roots, &langs)?;
            let r = run_parse(task_model(loaded)?, &data, &langs, &cfg, compute, false)?;
            let scores = r.results.iter().map(|(l, e)| (l.clone(), e.las)).collect();
            let result = json(&r)?;
            let run = GridRun {
                setting: overrides.clone(),
                en_dev: r.en_dev_las,
                scores,
                result,
                items: r.items,
                mds_items: Default::default(),
            };
            (run, r.files)
        }
    };
    files.extend(map_files.into_inner());
    session.note_data(&files);
    session.env.log.push(format!(
        "task {task} on {}: English dev {:.4}, {}",
        model.name,
        run.en_dev,
        scores_line(&run.scores)
    ));
    crate::atomic_file::write_atomic(
        &cache,
        &serde_json::to_string(&(&run, &files)).map_err(|e| Error::Invalid(e.to_string()))?,
    )?;
    Ok(run)
}

pub(super) fn json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| Error::Invalid(format!("task result: {e}")))
}

pub(super) fn scores_line(scores: &std::collections::BTreeMap<String, f64>) -> String {
    scores.iter().map(|(l, s)| format!("{l} {s:.4}")).collect::<Vec<_>>().join(", ")
}

pub(super) fn to_dynamic<T: serde::Serialize>(v: &T) -> Res<Dynamic> {
    rhai::serde::to_dynamic(v)
}

/// The script's view of a run: `#{ en_dev, scores, items, result }`, and `mds_items` when the run shifted.
pub(super) fn run_map(r: &GridRun) -> Res<Dynamic> {
    let mut m = serde_json::json!({ "en_dev": r.en_dev, "scores": r.scores, "items": r.items, "result": r.result });
    if !r.mds_items.is_empty() {
        m["mds_items"] = serde_json::to_value(&r.mds_items).map_err(|e| rhai_err(e.to_string()))?;
    }
    to_dynamic(&m)
}

/// The `task` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("run", move |ctx: NativeCallContext, task: &str, model: ModelRef, opts: Map| {
        let f = || -> Res<Dynamic> {
            let r = run_task(&s, task, &model, &opts, &JsonMap::new()).map_err(rhai_err)?;
            run_map(&r)
        };
        f().map_err(|e| at(&ctx, e))
    });
    let s = session.clone();
    m.set_native_fn("frozen_nli", move |ctx: NativeCallContext, rep: Dynamic, opts: Map| {
        let f = || -> Res<Dynamic> {
            let r = super::ns_task_frozen::run(&s, rep, &opts).map_err(rhai_err)?;
            run_map(&r)
        };
        f().map_err(|e| at(&ctx, e))
    });
    let s = session.clone();
    m.set_native_fn("grid", move |ctx: NativeCallContext, task: &str, model: ModelRef, opts: Map, axes: Map| {
        let f = || -> Res<Dynamic> {
            let json = json_of(&axes)?;
            let mut list = Vec::new();
            for (k, v) in json.as_object().cloned().unwrap_or_default() {
                let values =
                    v.as_array().cloned().ok_or_else(|| rhai_err(format!("grid axis '{k}' must be an array")))?;
                list.push((k, values));
            }
            let settings = combinations(&list).map_err(rhai_err)?;
            let report = run_grid(settings, 2, |set| run_task(&s, task, &model, &opts, set)).map_err(rhai_err)?;
            to_dynamic(&report)
        };
        f().map_err(|e| at(&ctx, e))
    });
    m
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run_text, session};
    use crate::model::{MlmModel, ModelConfig, SharingPlan};
    use crate::text::tokenize::{AnchorScheme, CrossTokenizer, TokenizerSpec};
    use std::path::{Path, PathBuf};

    /// A randomly initialised 2 × 16 en–fr checkpoint `dir/ckpt` with a joint BPE trained on XNLI dev premises.
    fn checkpoint(dir: &Path, data: &Path) -> PathBuf {
        let mut files = Vec::new();
        for lang in ["en", "fr"] {
            let tsv = std::fs::read_to_string(data.join(format!("xnli/dev-{lang}.tsv"))).unwrap();
            let lines: Vec<&str> = tsv.lines().take(400).filter_map(|l| l.split('\t').next()).collect();
            let path = dir.join(format!("{lang}.txt"));
            std::fs::write(&path, lines.join("\n")).unwrap();
            files.push((lang.to_string(), path));
        }
        let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 300), &files).unwrap();
        let cfg = ModelConfig {
            vocab_size: tok.vocab_size(),
            hidden: 16,
            layers: 2,
            heads: 2,
            max_positions: 64,
            languages: vec!["en".into(), "fr".into()],
            sharing: SharingPlan { sep_emb: false, sep_layers: 0 },
            ..ModelConfig::default()
        };
        let ckpt = dir.join("ckpt");
        tok.save(&ckpt.join("tokenizer")).unwrap();
        let vs = {
            let _rng = crate::device::torch_rng_lock();
            tch::manual_seed(3);
            let vs = tch::nn::VarStore::new(tch::Device::Cpu);
            MlmModel::new(&vs.root(), &cfg).unwrap();
            vs
        };
        vs.save(ckpt.join("model.safetensors")).unwrap();
        cfg.save_json(ckpt.join("config.json")).unwrap();
        ckpt
    }

    /// Every score a task run reports is what `results::score` makes of its `items`: XNLI accuracy, NER span F1 and
    /// LAS per language (English included), the MDS accuracies with and without the shift and at each α, and the
    /// frozen-representation accuracy. Read back from the cache, the items are the same.
    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn task_items_reproduce_every_reported_score() {
        let data = crate::data::formats::test_mirror().expect("the data mirror (without it this test is ignored)");
        let dir = tempfile::tempdir().unwrap();
        let ckpt = checkpoint(dir.path(), &data);
        let mut s = session(dir.path());
        s.env.given_models.insert("tiny".into(), ckpt);
        let script = r#"
            let m = model::given("tiny");
            let caps = #{ nli: #{ max_train: 64, dev_size: 32, max_eval: 60 },
                          ner: #{ max_train: 64, dev_size: 20, max_eval: 40 },
                          parse: #{ max_train: 64, max_dev: 20, max_eval: 30 } };
            for t in ["nli", "ner", "parse"] {
                let opts = caps[t];
                opts.langs = ["en", "fr"];
                let r = task::run(t, m, opts);
                for x in ["en", "fr"] {
                    results::score(`${t}/${x}`, r.items[x]);
                    results::value(`${t}/${x}`, r.scores[x]);
                }
                if t == "ner" {
                    results::value("ner/ratio", r.items.fr.ratio.len() == r.result["eval"].fr.sentences);
                }
            }
            let mds = #{ langs: ["fr"], max_train: 64, dev_size: 32, max_eval: 60, freeze_layers: 1,
                         mds: #{ layer: 1, alphas: [0.0, 1.0] } };
            let r = task::run("nli", m, mds);
            let d = r.result.mds.fr;
            results::score("mds/without", r.mds_items.fr.test_without);
            results::value("mds/without", d.test_accuracy_without);
            results::score("mds/with", r.mds_items.fr.test_with);
            results::value("mds/with", d.test_accuracy_with);
            results::score("mds/alpha1", r.mds_items.fr.selection[1]);
            results::value("mds/alpha1", d.selection[1][1]);
            results::value("mds/pairs", r.mds_items.fr.test_with.items.len() == d.test_pairs);
            let again = task::run("nli", m, mds);
            results::value("cached", again.items == r.items && again.mds_items.fr.test_with == r.mds_items.fr.test_with);
            let f = task::frozen_nli(m, #{ langs: ["fr"], max_train: 64, dev_size: 32, max_eval: 60 });
            results::score("frozen/fr", f.items.fr);
            results::value("frozen/fr", f.scores.fr);
        "#;
        let _ = run_text(&s, dir.path(), "items.rhai", script).unwrap();
        s.with_record(|rec| {
            assert_eq!(rec.scores.len(), 10, "{:?}", rec.scores.keys());
            for (key, score) in &rec.scores {
                let reported = rec.values[key].as_f64().unwrap();
                assert!(
                    (score.estimate - reported).abs() < 1e-12,
                    "{key}: items {} vs reported {reported}",
                    score.estimate
                );
                assert!(score.items > 0 && score.low <= score.estimate && score.estimate <= score.high, "{key}");
            }
            for key in ["ner/ratio", "mds/pairs", "cached"] {
                assert_eq!(rec.values[key], serde_json::json!(true), "{key}");
            }
            assert_eq!(rec.scores["nli/fr"].items, 60, "one item per XNLI pair");
            assert_eq!(rec.scores["mds/with"].items, 30, "the test half of the pairs");
        });
    }
}
