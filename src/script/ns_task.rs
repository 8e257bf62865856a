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
//! `items_of_best` (see [`crate::tasks::sweep`]).
//! Results are cached in `$CROSSLING_MODELS/tasks/` by the model's weights and every resolved setting, so figures
//! that share runs (table1 and fig3) fine-tune once; the CLI's `task` commands read the same cache. Scores are
//! fractions: XNLI accuracy (`nli`), PAN-X span F1 (`ner`), LAS (`parse`, with UAS in `result`). The data files read
//! go into the figure's provenance.
//!
//! The runs themselves are [`crate::tasks::run`]'s: this namespace converts the script's options into a
//! [`TaskRequest`], makes one library call and converts the result.
use std::collections::BTreeMap;

use rhai::{Dynamic, EvalAltResult, ImmutableString, Map, Module, NativeCallContext};

use super::handles::ModelRef;
use super::ns_common::{json_of, native, options, rhai_err, with_context, Res, Session};
use crate::error::{Error, Result};
use crate::tasks::aligned_stack::StackPlan;
use crate::tasks::run::{run_task, run_task_grid, OpenModel, StackRequest, TaskContext, TaskKind, TaskRequest};
use crate::tasks::sweep::GridRun;

/// Removes the stack options from `opts`: `None` when `stack_layer` is not given (the others are then errors);
/// else the plan and the target models by language.
fn stack_options(opts: &mut Map, scale: crate::Scale) -> Result<Option<(StackPlan, BTreeMap<String, ModelRef>)>> {
    let int = |v: Dynamic, what: &str| -> Result<usize> {
        v.as_int()
            .ok()
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| Error::Invalid(format!("{what} must be a non-negative integer, got {v}")))
    };
    let layer = opts.remove("stack_layer").map(|v| int(v, "stack_layer")).transpose()?;
    let depth = opts.remove("stack_depth").map(|v| int(v, "stack_depth")).transpose()?;
    let sentences = opts.remove("map_sentences").map(|v| int(v, "map_sentences")).transpose()?;
    let mut targets = BTreeMap::new();
    if let Some(v) = opts.remove("targets") {
        let map = v
            .try_cast::<Map>()
            .ok_or_else(|| Error::Invalid("targets must be a map of language → model, e.g. #{ fr: mono_fr }".into()))?;
        for (lang, m) in map {
            let m = m.try_cast::<ModelRef>().ok_or_else(|| Error::Invalid(format!("targets.{lang} is not a model")))?;
            targets.insert(lang.to_string(), m);
        }
    }
    let Some(layer) = layer else {
        if depth.is_some() || sentences.is_some() || !targets.is_empty() {
            return Err(Error::Invalid("stack_depth, targets and map_sentences need stack_layer".into()));
        }
        return Ok(None);
    };
    let mut plan = StackPlan::new(layer, scale);
    plan.depth = depth;
    plan.map_sentences = sentences.unwrap_or(plan.map_sentences);
    Ok(Some((plan, targets)))
}

/// Converts the script's arguments of `task::run` / `task::grid` into a request at the session's scale, seed and
/// compute, and calls `f` with it.
fn with_request<T>(
    session: &Session,
    task: &str,
    model: &ModelRef,
    opts: &Map,
    f: impl FnOnce(&TaskContext, &TaskRequest) -> Result<T>,
) -> Result<T> {
    let mut opts = opts.clone();
    let stack = stack_options(&mut opts, session.env.scale)?;
    let (langs, train_data, overrides) = options(&opts)?;
    let task: TaskKind = task.parse()?;
    let train_data = crate::tasks::run::ner_train_data(task, train_data)?;
    let stack = stack.as_ref().map(|(plan, targets)| StackRequest {
        plan: plan.clone(),
        targets: targets.iter().map(|(l, m)| (l.clone(), m as &dyn OpenModel)).collect(),
    });
    let req = TaskRequest {
        task,
        model,
        langs,
        overrides,
        seed: Some(session.env.seed),
        scale: session.env.scale,
        compute: session.env.compute,
        stack,
        train_data,
    };
    with_context(session, |ctx| f(ctx, &req))
}

/// `task::run`: one run (or its cached result), its data files noted in the provenance.
fn run(session: &Session, task: &str, model: &ModelRef, opts: &Map) -> Result<GridRun> {
    let out = with_request(session, task, model, opts, run_task)?;
    session.note_data(&out.files);
    Ok(out.run)
}

pub(super) fn to_dynamic<T: serde::Serialize>(v: &T) -> Res<Dynamic> {
    rhai::serde::to_dynamic(v)
}

/// The script's view of a run: `#{ en_dev, scores, items, result }`, and `mds_items` when the run shifted.
pub(super) fn run_map(r: &GridRun) -> Res<Dynamic> {
    let mut m = serde_json::json!({ "en_dev": r.en_dev, "scores": r.scores, "items": r.items, "result": r.result });
    if !r.mds_items.is_empty() {
        m["mds_items"] = serde_json::to_value(&r.mds_items).map_err(rhai_err)?;
    }
    to_dynamic(&m)
}

/// Runs `compute` (a `task::run` or `task::grid`) and converts its result with `convert`. While planning (see
/// [`crate::grid::plan`]) the run is recorded as a job: done when its result was cached, pending (the script gets
/// `()`) when it is not, or when its model is a pre-training not done yet (then nothing is read).
fn run_or_plan<T>(
    session: &Session,
    task: &str,
    model: &ModelRef,
    opts: &Map,
    axes: Option<Vec<(String, Vec<serde_json::Value>)>>,
    compute: impl FnOnce() -> Result<T>,
    convert: impl FnOnce(T) -> Res<Dynamic>,
) -> Res<Dynamic> {
    let untrained = match (&session.plan, &model.source) {
        (Some(_), super::handles::ModelSource::Cached(c)) => !crate::train::model_cache::is_trained(&c.dir, &c.config),
        _ => false,
    };
    let outcome = if untrained { Err(Error::NotCached(model.dir())) } else { compute() };
    match outcome {
        Err(Error::NotCached(_)) => {
            record_task_job(session, task, model, opts, axes, false)?;
            Ok(Dynamic::UNIT)
        }
        Err(e) => Err(e.into()),
        Ok(v) => {
            let result = convert(v)?;
            record_task_job(session, task, model, opts, axes, true)?;
            Ok(result)
        }
    }
}

/// Planning mode: records the fine-tuning job of `task` on `model` after the model's pre-training job, `done` or
/// not. Nothing is recorded outside planning, nor for a done run that is no job (a stacked run, or one on a given
/// or random model); such a run that is not done stops the planning run with an error.
fn record_task_job(
    session: &Session,
    task: &str,
    model: &ModelRef,
    opts: &Map,
    axes: Option<Vec<(String, Vec<serde_json::Value>)>>,
    done: bool,
) -> Res<()> {
    use crate::jobs::{encoder_weights, model_job_id, task_cost, task_job_id, Job, JobSpec};
    let Some(plan) = &session.plan else { return Ok(()) };
    let cached = match &model.source {
        super::handles::ModelSource::Cached(c) if !opts.contains_key("stack_layer") => c,
        _ if done => return Ok(()),
        _ => {
            let what = format!(
                "planning stops at task {task} on {}: a stacked run, or one on a model no job trains, runs inside the \
                 figure job",
                model.name
            );
            plan.lock().map_err(|_| rhai_err("planning: the recorder is poisoned"))?.defer(what.clone());
            return Err(rhai_err(what));
        }
    };
    let model_job = model_job_id(&cached.label, &cached.key);
    let options = json_of(opts)?;
    let seed = session.env.seed;
    let identity = serde_json::json!({ "options": options, "axes": axes, "seed": seed,
                                       "scale": session.env.scale.name() });
    let settings = axes.as_ref().map_or(1, |a| a.iter().map(|(_, v)| v.len().max(1)).product());
    let job = Job {
        id: task_job_id(task, &model_job, &identity),
        spec: JobSpec::Task { task: task.to_string(), model: model_job.clone(), options, axes, seed },
        deps: vec![model_job],
        cost_s: settings as f64 * task_cost(task, session.env.scale, encoder_weights(&cached.config)),
        threads: 1,
        gpu: session.env.compute.device.is_cuda(),
        done,
    };
    plan.lock().map_err(|_| rhai_err("planning: the recorder is poisoned"))?.add(job);
    Ok(())
}

/// The `task` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("run", move |ctx: NativeCallContext, task: &str, model: ModelRef, opts: Map| {
        native(&ctx, || run_or_plan(&s, task, &model, &opts, None, || run(&s, task, &model, &opts), |r| run_map(&r)))
    });
    let s = session.clone();
    m.set_native_fn("frozen_nli", move |ctx: NativeCallContext, rep: Dynamic, opts: Map| {
        native(&ctx, || run_map(&super::ns_task_frozen::run(&s, rep, &opts)?))
    });
    let s = session.clone();
    m.set_native_fn("grid", move |ctx: NativeCallContext, task: &str, model: ModelRef, opts: Map, axes: Map| {
        native(&ctx, || {
            let mut list = Vec::new();
            for (k, v) in json_of(&axes)?.as_object().cloned().unwrap_or_default() {
                let values =
                    v.as_array().cloned().ok_or_else(|| rhai_err(format!("grid axis '{k}' must be an array")))?;
                list.push((k, values));
            }
            let grid = || with_request(&s, task, &model, &opts, |ctx, req| run_task_grid(ctx, req, &list));
            run_or_plan(&s, task, &model, &opts, Some(list.clone()), grid, |(report, files)| {
                s.note_data(&files);
                to_dynamic(&report)
            })
        })
    });
    if let Some(plan) = &session.plan {
        // Planning mode: a fine-tuning not run yet is `()` to the script (run_or_plan), and reading a property or
        // an index of a `()` stops the planning run there on purpose. (Indexers are global: `x.name` on a type
        // without that property falls back to the indexer.)
        let p = plan.clone();
        m.set_indexer_get_fn(move |ctx: NativeCallContext, _: &mut (), name: ImmutableString| {
            read_pending(&ctx, &p, &format!("`{name}`"))
        });
        let p = plan.clone();
        m.set_indexer_get_fn(move |ctx: NativeCallContext, _: &mut (), i: rhai::INT| {
            read_pending(&ctx, &p, &format!("`[{i}]`"))
        });
    }
    m
}

/// A planning run reads `what` of a `()`: a stop by design while a fine-tuning is pending (the `()` is taken for
/// its result, [`crate::jobs::Recorder::stop`]); otherwise the script's own error, as Rhai gives it without the
/// indexer.
fn read_pending(ctx: &NativeCallContext, plan: &crate::jobs::SharedRecorder, what: &str) -> Res<Dynamic> {
    let mut rec = plan.lock().map_err(|_| rhai_err("planning: the recorder is poisoned"))?;
    if !rec.has_pending_task() {
        return Err(Box::new(EvalAltResult::ErrorIndexingType("()".into(), ctx.call_position())));
    }
    let why = format!("reads {what} of a fine-tuning's result, whose job has not run yet");
    rec.stop(why.clone());
    Err(Box::new(EvalAltResult::ErrorRuntime(why.into(), ctx.call_position())))
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
