//! `train::` and `model::` — the model zoo from scripts. Models are trained on first use at the run's `SCALE`
//! and `SEED` and cached by a hash of everything that determines them ([`crate::train::model_cache`]).
//!
//! ```rhai
//! let cfg = train::config(#{ preset: "sep-emb", langs: "en-fr" });  // the run config as a map (no training)
//! let bi = train::model(#{ preset: "default", langs: "en-fr" });    // trained (or cached) bilingual model
//! let en = train::model(#{ preset: "mono", langs: "en", steps: 200 });
//! let rnd = model::random_like(bi);                                 // same shape, random weights (SEED)
//! let rnd2 = model::random_like(bi, SEED + 1);                      // another draw
//! let text = train::describe();   // the scale's pre-training in words, for captions
//! let text = train::describe(bi); // …of that model, from its own config (steps, shape, data cap)
//! let text = train::describe(train::config(#{ preset: "mono", langs: "en", steps: 200 }));  // …of a config
//! let s = train::settings();      // …and as a map (layers, hidden, heads, vocab, steps, …)
//! let c = train::corpus(bi);      // its pre-training text: #{ en: #{ datasets, domains, sentences, … }, fr: … }
//! if model::is_given("mbert") { let m = model::given("mbert"); }     // --model mbert=DIR on the command line
//! ```
use rhai::{Dynamic, Map, Module, NativeCallContext};

use super::handles::{ModelRef, ModelSource};
use super::ns_common::{from_script, native, rhai_err, Res, Session};
use crate::train::model_cache::ensure_trained;
use crate::train::presets::Pretraining;
use crate::train::request::{describe, describe_run, ModelRequest};

fn request_of(map: Map) -> Res<ModelRequest> {
    from_script(&Dynamic::from_map(map), "model request")
}

/// The `train` module of `session`.
pub fn train_module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("config", move |ctx: NativeCallContext, req: Map| {
        native(&ctx, || -> Res<Dynamic> {
            let req = request_of(req)?;
            let cfg = req.run_config(s.env.scale, s.env.seed, &s.env.compute)?;
            rhai::serde::to_dynamic(&cfg)
        })
    });
    let s = session.clone();
    m.set_native_fn("describe", move || Ok(describe(&Pretraining::at(s.env.scale))));
    m.set_native_fn("describe", move |ctx: NativeCallContext, model: ModelRef| {
        native(&ctx, || Ok(describe_model(&model)))
    });
    m.set_native_fn("describe", move |ctx: NativeCallContext, cfg: Map| {
        native(&ctx, || -> Res<String> {
            let cfg: crate::train::run::RunConfig = from_script(&Dynamic::from_map(cfg), "run config")?;
            Ok(describe_run(&cfg))
        })
    });
    let s = session.clone();
    m.set_native_fn("settings", move || rhai::serde::to_dynamic(Pretraining::at(s.env.scale)));
    let s = session.clone();
    m.set_native_fn("snapshot", move |ctx: NativeCallContext, model: ModelRef, step: i64| {
        native(&ctx, || snapshot(&s, &model, step))
    });
    m.set_native_fn("curve", move |ctx: NativeCallContext, model: ModelRef| native(&ctx, || curve(&model)));
    let s = session.clone();
    m.set_native_fn("corpus", move |ctx: NativeCallContext, model: ModelRef| native(&ctx, || corpus(&s, &model)));
    let s = session.clone();
    m.set_native_fn("model", move |ctx: NativeCallContext, req: Map| {
        native(&ctx, || -> Res<ModelRef> {
            let req = request_of(req)?;
            let name = req.name();
            let cfg = req.run_config(s.env.scale, s.env.seed, &s.env.compute)?;
            let label = req.label(&cfg, s.env.scale);
            let (catalog, roots) = &*s.data;
            if let Some(plan) = &s.plan {
                // Planning mode: record the pre-training; the model is handed out at its cache folder, trained
                // or not (the first analysis of an untrained one stops the planning run).
                let cached = crate::train::model_cache::locate(&label, &cfg, catalog, &s.env.models_dir)?;
                let job = crate::jobs::pretrain_job(&cached, s.env.compute.device.is_cuda());
                let trained = job.done;
                plan.lock().map_err(|_| rhai_err("planning: the recorder is poisoned"))?.add(job);
                if trained {
                    // What a figure run records of it: a planning run with every job done is the figure's run.
                    s.env.log.push(format!("model {name}: preparing ({} scale, seed {})", s.env.scale, cfg.train.seed));
                    note_model(&s, &name, &cached)?;
                }
                return Ok(ModelRef { name, source: ModelSource::Cached(Box::new(cached)) });
            }
            s.env.log.push(format!("model {name}: preparing ({} scale, seed {})", s.env.scale, cfg.train.seed));
            let cached = ensure_trained(&label, &cfg, catalog, roots, &s.env.models_dir, s.env.fresh)?;
            note_model(&s, &name, &cached)?;
            Ok(ModelRef { name, source: ModelSource::Cached(Box::new(cached)) })
        })
    });
    m
}

/// [`describe_run`] of a trained model's own config; a random encoder is described by the model it imitates, a
/// model given on the command line by its folder (its pre-training is not this project's).
fn describe_model(model: &ModelRef) -> String {
    match &model.source {
        ModelSource::Cached(cached) => describe_run(&cached.config),
        ModelSource::Random { like, .. } => format!("randomly initialised like {}", describe_model(like)),
        ModelSource::Folder(dir) => format!("the model given in {}", dir.display()),
    }
}

/// Logs trained model `name` as ready and records it in the run's provenance: its data files, and its key, folder,
/// checkpoint, weights' sha256 and config under `provenance.models[name]`.
fn note_model(s: &Session, name: &str, cached: &crate::train::model_cache::CachedModel) -> Res<()> {
    s.env.log.push(format!("model {name}: ready in {}", cached.dir.display()));
    let files: Vec<(String, String)> = cached.data.iter().map(|(p, h)| (p.clone(), h.clone())).collect();
    s.note_data(&files);
    let checkpoint = crate::model::load::run_checkpoint(&cached.dir)
        .ok_or_else(|| rhai_err(format!("{}: the trained run has no checkpoint", cached.dir.display())))?;
    // Recorded when the checkpoint was saved; loading the model checks the file against it.
    let state = crate::train::checkpoint::read_state(&checkpoint)?;
    let info = serde_json::json!({
        "key": cached.key,
        "dir": cached.dir.display().to_string(),
        "checkpoint": checkpoint.file_name().map(|n| n.to_string_lossy().into_owned()),
        "weights_sha256": state.model_sha256,
        "config": cached.config,
    });
    s.with_record(|r| r.provenance.models.insert(name.to_string(), info));
    Ok(())
}

/// The copy of trained `model` kept after `step` (one of its request's `snapshots`), named `NAME@step`.
fn snapshot(s: &Session, model: &ModelRef, step: i64) -> Res<ModelRef> {
    let ModelSource::Cached(cached) = &model.source else {
        return Err(rhai_err(format!("train::snapshot: '{}' is not a model trained by train::model", model.name)));
    };
    let steps = &cached.config.train.snapshot_steps;
    let step = u64::try_from(step).ok().filter(|s| steps.contains(s)).ok_or_else(|| {
        rhai_err(format!("train::snapshot: '{}' keeps no snapshot after step {step}; it keeps {steps:?}", model.name))
    })?;
    let dir = crate::train::TrainConfig::snapshot_dir(&cached.dir, step);
    let state = crate::train::checkpoint::read_state(&dir)?;
    let name = format!("{}@{step}", model.name);
    let info = serde_json::json!({ "snapshot_of": model.name, "step": step, "dir": dir.display().to_string(),
                                    "weights_sha256": state.model_sha256 });
    s.with_record(|r| r.provenance.models.insert(name.clone(), info));
    Ok(ModelRef { name, source: ModelSource::Folder(dir) })
}

/// The validation perplexities of trained `model`, one map `#{ step, tokens, ppl: #{ LANG: … }, tokens_per_s }` per
/// evaluation, from its `metrics.jsonl`; `tokens_per_s` is the mean of the trainer's per-step throughput over the
/// steps since the previous evaluation (absent when the log has none).
fn curve(model: &ModelRef) -> Res<rhai::Array> {
    let ModelSource::Cached(cached) = &model.source else {
        return Err(rhai_err(format!("train::curve: '{}' is not a model trained by train::model", model.name)));
    };
    let path = cached.dir.join("metrics.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| rhai_err(crate::error::Error::io(&path, e)))?;
    let tokens_per_step = (cached.config.train.batch_size * cached.config.train.seq_len) as i64;
    let mut out = rhai::Array::new();
    // Training throughput of the steps since the previous validation row (their per-step `tokens_per_s`).
    let (mut rate_sum, mut rate_steps) = (0.0, 0u32);
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| rhai_err(format!("{}:{}: not a JSON object: {e}", path.display(), i + 1)))?;
        if let Some(rate) = v["tokens_per_s"].as_f64() {
            rate_sum += rate;
            rate_steps += 1;
        }
        let (Some(step), Some(ppl)) = (v["step"].as_u64(), v.get("valid_ppl")) else { continue };
        let mut row = Map::new();
        row.insert("step".into(), Dynamic::from(step as i64));
        row.insert("tokens".into(), Dynamic::from(step as i64 * tokens_per_step));
        row.insert("ppl".into(), rhai::serde::to_dynamic(ppl)?);
        if rate_steps > 0 {
            row.insert("tokens_per_s".into(), Dynamic::from(rate_sum / f64::from(rate_steps)));
        }
        (rate_sum, rate_steps) = (0.0, 0);
        out.push(Dynamic::from_map(row));
    }
    Ok(out)
}

/// The pre-training text of `model` as its corpus records give it (`corpora/LANG.corpus.json`, see
/// [`crate::text::corpus`], and `corpora/codeswitch.json` for Extra anchors, see [`crate::train::extra_anchors`]):
/// `#{ LANG: #{ datasets, domains, sentences, bytes } }` for the training side of each language, with `switched`
/// (words code-switched / words) and `dictionary_pairs` where the text was code-switched. `()` while a plan is made
/// and the model is not trained yet (the records are written when its corpora are built).
fn corpus(s: &Session, model: &ModelRef) -> Res<Dynamic> {
    let ModelSource::Cached(cached) = &model.source else {
        return Err(rhai_err(format!("train::corpus: '{}' is not a model trained by train::model", model.name)));
    };
    if s.plan.is_some() && !crate::train::model_cache::is_trained(&cached.dir, &cached.config) {
        return Ok(Dynamic::UNIT);
    }
    let read = |path: &std::path::Path| -> Res<serde_json::Value> {
        let text = std::fs::read_to_string(path).map_err(|e| rhai_err(crate::error::Error::io(path, e)))?;
        serde_json::from_str(&text).map_err(|e| rhai_err(format!("{}: not a JSON record: {e}", path.display())))
    };
    let corpora = cached.dir.join("corpora");
    let switch_path = corpora.join("codeswitch.json");
    let switch = if switch_path.is_file() { Some(read(&switch_path)?) } else { None };
    let mut out = Map::new();
    for lang in &cached.config.languages {
        let path = corpora.join(format!("{lang}.corpus.json"));
        let summary: crate::text::corpus::CorpusSummary = serde_json::from_value(read(&path)?)
            .map_err(|e| rhai_err(format!("{}: not a corpus record: {e}", path.display())))?;
        let mut m = Map::new();
        m.insert("datasets".into(), rhai::serde::to_dynamic(&summary.spec.datasets)?);
        m.insert("domains".into(), rhai::serde::to_dynamic(&summary.domains)?);
        m.insert("sentences".into(), Dynamic::from(summary.train.sentences as i64));
        m.insert("bytes".into(), Dynamic::from(summary.train.bytes as i64));
        if let Some(sw) = &switch {
            let stats = &sw["stats"][lang.as_str()];
            let (Some(switched), Some(words)) = (stats["switched"].as_f64(), stats["words"].as_f64()) else {
                return Err(rhai_err(format!("{}: no switched / words counts for '{lang}'", switch_path.display())));
            };
            m.insert("switched".into(), Dynamic::from(if words > 0.0 { switched / words } else { 0.0 }));
            m.insert("dictionary_pairs".into(), Dynamic::from(sw["dictionary_pairs"].as_i64().unwrap_or(0)));
        }
        out.insert(lang.as_str().into(), Dynamic::from_map(m));
    }
    Ok(Dynamic::from_map(out))
}

/// A model with the architecture and tokenizer of `like` and weights drawn with `seed`.
fn random_like(s: &Session, like: ModelRef, seed: u64) -> ModelRef {
    let name =
        if seed == s.env.seed { format!("random-{}", like.name) } else { format!("random-{}-s{seed}", like.name) };
    s.with_record(|r| {
        r.provenance.models.insert(name.clone(), serde_json::json!({ "random_like": like.name, "seed": seed }))
    });
    ModelRef { name, source: ModelSource::Random { like: Box::new(like), seed } }
}

/// The `model` module of `session`.
pub fn model_module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("random_like", move |like: ModelRef| Ok(random_like(&s, like, s.env.seed)));
    let s = session.clone();
    m.set_native_fn("random_like", move |ctx: NativeCallContext, like: ModelRef, seed: i64| {
        native(&ctx, || {
            let seed = u64::try_from(seed).map_err(|_| rhai_err(format!("seed must be ≥ 0, got {seed}")))?;
            Ok(random_like(&s, like, seed))
        })
    });
    let s = session.clone();
    m.set_native_fn("given", move |ctx: NativeCallContext, name: &str| {
        native(&ctx, || {
            let Some(dir) = s.env.given_models.get(name) else {
                let known: Vec<&str> = s.env.given_models.keys().map(String::as_str).collect();
                return Err(rhai_err(format!(
                    "no model '{name}' was given on the command line (--model {name}=DIR); given: {}",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                )));
            };
            let l = crate::model::load::LoadedModel::open(dir, tch::Device::Cpu)?;
            let (kind, sha) = (l.source.kind.name(), l.source.weights_sha256);
            s.with_record(|r| {
                r.provenance.models.insert(
                    name.to_string(),
                    serde_json::json!({ "given": dir.display().to_string(), "kind": kind, "weights_sha256": sha }),
                )
            });
            Ok(ModelRef { name: name.to_string(), source: ModelSource::Folder(dir.clone()) })
        })
    });
    let s = session.clone();
    m.set_native_fn("is_given", move |name: &str| Ok(s.env.given_models.contains_key(name)));
    m
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run_text, session};

    #[test]
    fn the_session_compute_and_scale_reach_the_training_config() {
        use crate::device::{Compute, Precision};
        use crate::Scale;
        let req: super::ModelRequest =
            serde_json::from_value(serde_json::json!({"preset": "mono", "langs": "en", "shape": {"hidden": 64}}))
                .unwrap();
        let cfg = req.run_config(Scale::Cpu, 3, &Compute::cpu()).unwrap();
        assert_eq!((cfg.train.device.as_str(), cfg.train.precision, cfg.train.seed), ("cpu", Precision::Fp32, 3));
        assert_eq!((cfg.train.model.layers, cfg.train.model.hidden), (4, 64), "the shape changes the scale's");
        // A GPU session's compute reaches the config: without a GPU the config says so instead of training elsewhere.
        let gpu = Compute { device: tch::Device::Cuda(0), bf16: true };
        if !tch::Cuda::is_available() {
            let e = req.run_config(Scale::Cpu, 3, &gpu).unwrap_err().to_string();
            assert!(e.contains("cuda:0"), "{e}");
        }
        let text = super::describe(&crate::train::presets::Pretraining::at(Scale::Cpu));
        assert!(
            text.starts_with(
                "4-layer pre-LN, 128-wide models (4 heads) pre-trained for 6,000 steps of 32 × 64 tokens, 40 % masked"
            ),
            "{text}"
        );
        assert!(text.ends_with("on up to 100,000 sentences per language"), "{text}");
    }

    #[test]
    fn a_data_seed_fixes_the_text_and_changes_the_key_only_when_it_differs() {
        use crate::device::Compute;
        use crate::Scale;
        let request = |extra: serde_json::Value| {
            let mut v = serde_json::json!({"preset": "mono", "langs": "en", "seed": 101});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let req: super::ModelRequest = serde_json::from_value(v).unwrap();
            let cfg = req.run_config(Scale::Cpu, 0, &Compute::cpu()).unwrap();
            let key = crate::train::model_cache::cache_key(&cfg, &Default::default()).unwrap();
            (req.label(&cfg, Scale::Cpu), cfg.data_seed(), cfg.train.seed, key, req.name())
        };
        let plain = request(serde_json::json!({}));
        assert_eq!(plain.0, "mono-en-s101-cpu");
        assert_eq!((plain.1, plain.2), (101, 101));
        assert_eq!(request(serde_json::json!({"data_seed": 101})), plain, "the model's own seed changes nothing");
        let same_text = request(serde_json::json!({"data_seed": 0}));
        assert_eq!(same_text.0, "mono-en-s101-d0-cpu");
        assert_eq!((plain.4.as_str(), same_text.4.as_str()), ("mono-en-s101", "mono-en-s101-d0"), "names agree");
        assert_eq!((same_text.1, same_text.2), (0, 101), "the text's seed, the model's seed");
        assert_ne!(same_text.3, plain.3);
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn config_model_cache_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(dir.path());
        let v =
            run_text(&s, dir.path(), "c.rhai", "train::config(#{ preset: \"sep-emb\", langs: \"en-fr\" })").unwrap();
        let cfg: serde_json::Value = rhai::serde::from_dynamic(&v).unwrap();
        assert_eq!(cfg["train"]["model"]["sharing"]["sep_emb"], true);
        assert_eq!(cfg["train"]["seed"], 42);

        let e =
            run_text(&s, dir.path(), "bad.rhai", "\ntrain::model(#{ preset: \"mono\", lang: \"en\" })").unwrap_err();
        assert!(e.to_string().contains("bad.rhai:2:") && e.to_string().contains("unknown field `lang`"), "{e}");

        let script =
            "let m = train::model(#{ preset: \"mono\", langs: \"en\", steps: 2 }); let r = model::random_like(m); \
                      [m.name, m.languages[0], r.name, m.dir]";
        let first = std::time::Instant::now();
        let v = run_text(&s, dir.path(), "m.rhai", script).unwrap().into_array().unwrap();
        let took = first.elapsed();
        assert_eq!(v[0].clone().into_string().unwrap(), "mono-en");
        assert_eq!(v[1].clone().into_string().unwrap(), "en");
        assert_eq!(v[2].clone().into_string().unwrap(), "random-mono-en");
        let model_dir = std::path::PathBuf::from(v[3].clone().into_string().unwrap());
        assert!(model_dir.join("last/model.safetensors").is_file());
        assert!(model_dir.starts_with(dir.path().join("models")));
        // Second use: cached, no retraining (the checkpoint is untouched).
        let stamp = std::fs::metadata(model_dir.join("last/model.safetensors")).unwrap().modified().unwrap();
        let _ = run_text(&s, dir.path(), "m.rhai", script).unwrap();
        assert_eq!(std::fs::metadata(model_dir.join("last/model.safetensors")).unwrap().modified().unwrap(), stamp);
        s.with_record(|r| {
            let m = &r.provenance.models["mono-en"];
            let weights = model_dir.join(m["checkpoint"].as_str().unwrap()).join("model.safetensors");
            let sha = crate::model::checkpoint::sha256_file(&weights).unwrap();
            assert_eq!(m["weights_sha256"], sha.as_str(), "the record names the exact weights");
            assert!(r.provenance.data.keys().any(|p| p.starts_with("mono/en/")));
        });
        assert!(took.as_secs() < 60);

        // Planning hands out a model at its cache folder, trained or not; one whose run stopped midway (here: the
        // 2-step run's files under the folder of a 4-step request) must stop the analysis, not load its last
        // checkpoint.
        let planning = session(dir.path()).planning(std::sync::Arc::new(std::sync::Mutex::new(Default::default())));
        let four = "train::model(#{ preset: \"mono\", langs: \"en\", steps: 4 })";
        let partial = run_text(&planning, dir.path(), "p.rhai", &format!("{four}.dir")).unwrap().into_string().unwrap();
        let copied = std::process::Command::new("cp").arg("-r").arg(&model_dir).arg(&partial).status().unwrap();
        assert!(copied.success());
        for analysis in [
            format!("features::sentences({four}, [\"a b\"], \"en\")"),
            format!("features::sentences(model::random_like({four}), [\"a b\"], \"en\")"),
        ] {
            let e = run_text(&planning, dir.path(), "p.rhai", &analysis).unwrap_err().to_string();
            assert!(e.contains("mono-en: its pre-training has not finished"), "{e}");
        }

        // Its pre-training text, from the corpus record the training wrote.
        let c = run_text(
            &s,
            dir.path(),
            "c.rhai",
            "let m = train::model(#{ preset: \"mono\", langs: \"en\", steps: 2 }); train::corpus(m)",
        )
        .unwrap();
        let c: serde_json::Value = rhai::serde::from_dynamic(&c).unwrap();
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(model_dir.join("corpora/en.corpus.json")).unwrap()).unwrap();
        assert_eq!(c["en"]["sentences"], record["train"]["sentences"]);
        assert!(c["en"]["sentences"].as_i64().unwrap() > 0 && c["en"]["domains"].is_array(), "{c}");
        assert!(c["en"].get("switched").is_none(), "not code-switched: {c}");
        let e = run_text(
            &s,
            dir.path(),
            "r.rhai",
            "train::corpus(model::random_like(train::model(#{ preset: \"mono\", langs: \"en\", steps: 2 })))",
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a model trained by train::model"), "{e}");
    }
}
