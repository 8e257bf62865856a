//! `results::` — what a script reports: values, the paper's values, title, caption, substitutions, chart and table
//! specs. Everything lands in the run's [`FigureRecord`](crate::report::record::FigureRecord).
//!
//! ```rhai
//! results::title("Linear CKA per layer");   // a script of one's own; a registered figure's is the registry's
//! results::value("en-fr", [0.91, 0.83]);     // any number, string, array or map
//! results::paper("avg", 0.74);
//! results::substitution("XNLI dev sentences replace the study's back-translated paraphrases");
//! results::score("en-fr/p1", #{ items: hits, chance: 0.0001 });   // 95 % bootstrap interval over items
//! results::score("en-fr/f1", #{ ratio: per_sentence_num_den, scale: 100.0 });
//! results::score("en-fr/cka/L3", #{ estimate: 0.41, range: [0.0, 1.0] });  // no per-item form: interval from seeds
//! // … or from replicates on resamples of the items (cka::linear_bootstrap): bias-shifted percentiles
//! results::score("en-fr/cka/L3", #{ estimate: 0.41, replicates: reps[3], resampled_items: 2000, range: [0.0, 1.0] });
//! results::difference("a−b/f1", "a/f1", "b/f1");   // paired bootstrap of a − b on the same test items
//! // Replicates of per-layer means on shared resamples of the items (reps[layer][resample]), for a statistic of
//! // those means (a correlation across layers) recomputed per resample and scored with `replicates`:
//! let reps = results::mean_replicates([hits_l0, hits_l1, hits_l2], SEED);
//! let iv = results::interval("en-fr/f1");          // #{ estimate, low, high } of a registered score (whiskers)
//! results::difference("gain-gap", "gain/full", "gain/short");   // a difference of two per-item (items) differences
//! results::claim(#{ id: "order", source: "Emerging §5.2", quote: "…", statement: "…", paper: "0.69 > 0.58",
//!                   checks: [#{ left: "bi/avg", op: ">", right: "mono/avg", label: "en-fr" }] });
//! results::chart(#{ kind: "Line", title: "…", … });   // a crate::plot ChartSpec as a map
//! ```
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rhai::{Array, Dynamic, Map, Module};

use rhai::NativeCallContext;

use super::ns_common::{floats, from_script, native, rhai_err, Res, Session};
use crate::analysis::bootstrap::mean_replicates;
use crate::claims::score::RESAMPLES;
use crate::claims::ScoreSpec;

fn json(v: &Dynamic) -> Res<serde_json::Value> {
    rhai::serde::from_dynamic::<serde_json::Value>(v).map_err(rhai_err)
}

fn key_ok(key: &str) -> Res<()> {
    if key.trim().is_empty() {
        return Err(rhai_err("results: empty key"));
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `results` module of `session`.
pub fn module(session: &Session) -> Module {
    let mut m = Module::new();
    let s = session.clone();
    m.set_native_fn("value", move |ctx: NativeCallContext, key: &str, v: Dynamic| {
        native(&ctx, || {
            key_ok(key)?;
            let v = json(&v)?;
            s.with_record(|r| r.values.insert(key.to_string(), v));
            Ok(())
        })
    });
    let s = session.clone();
    m.set_native_fn("get", move |ctx: NativeCallContext, key: &str| {
        native(&ctx, || {
            let v = s.with_record(|r| r.values.get(key).cloned());
            match v {
                Some(v) => rhai::serde::to_dynamic(v).map_err(rhai_err),
                None => Err(rhai_err(format!("results: no value '{key}'"))),
            }
        })
    });
    // results::interval(KEY): #{ estimate, low, high } of a score this run has registered (this seed's: with
    // --seeds N the record combines the seeds after the last run), e.g. for whiskers on its bars.
    let s = session.clone();
    m.set_native_fn("interval", move |ctx: NativeCallContext, key: &str| {
        native(&ctx, || {
            let score = s.with_record(|r| r.scores.get(key).cloned());
            let Some(score) = score else {
                return Err(rhai_err(format!("results::interval: no score '{key}' (results::score registers one)")));
            };
            let mut out = Map::new();
            out.insert("estimate".into(), Dynamic::from(score.estimate));
            out.insert("low".into(), Dynamic::from(score.low));
            out.insert("high".into(), Dynamic::from(score.high));
            Ok(Dynamic::from_map(out))
        })
    });
    // results::mean_replicates(SERIES, SEED): reps[s][r], the mean of series s (per-item values, every series over the
    // same items) on bootstrap resample r; 1,000 resamples drawn from SEED and the item count, shared by every series.
    m.set_native_fn("mean_replicates", |ctx: NativeCallContext, series: Array, seed: i64| {
        native(&ctx, || -> Res<Array> {
            let series: Vec<Vec<f64>> = from_script(&Dynamic::from_array(series), "results::mean_replicates")?;
            let reps = mean_replicates(&series, RESAMPLES, seed as u64)?;
            Ok(reps.into_iter().map(|row| Dynamic::from_array(floats(row))).collect())
        })
    });
    let s = session.clone();
    m.set_native_fn("paper", move |ctx: NativeCallContext, key: &str, v: Dynamic| {
        native(&ctx, || {
            key_ok(key)?;
            let v = json(&v)?;
            s.with_record(|r| r.paper.insert(key.to_string(), v));
            Ok(())
        })
    });
    // The specs of this run's scores, for paired differences of two of them.
    let specs: Arc<Mutex<BTreeMap<String, ScoreSpec>>> = Arc::default();
    let s = session.clone();
    let sp = specs.clone();
    m.set_native_fn("score", move |ctx: NativeCallContext, key: &str, spec: Dynamic| {
        native(&ctx, || {
            key_ok(key)?;
            let spec: ScoreSpec = from_script(&spec, &format!("results::score('{key}')"))?;
            let score = spec.score(key, s.env.seed)?;
            let fresh = s.with_record(|r| r.scores.insert(key.to_string(), score).is_none());
            if !fresh {
                return Err(rhai_err(format!("results::score: '{key}' was scored twice")));
            }
            lock(&sp).insert(key.to_string(), spec);
            Ok(())
        })
    });
    // results::difference(KEY, LEFT, RIGHT): the paired difference LEFT − RIGHT of two scores of this run on the
    // same test items (ScoreSpec::difference). Asking again for the same KEY of the same two scores does nothing.
    // A difference of two `items` scores is itself an `items` score that a later difference may name.
    let s = session.clone();
    m.set_native_fn("difference", move |ctx: NativeCallContext, key: &str, left: &str, right: &str| {
        native(&ctx, || {
            key_ok(key)?;
            let wanted = Some([left.to_string(), right.to_string()]);
            let existing = s.with_record(|r| r.scores.get(key).map(|sc| sc.difference_of.clone()));
            match existing {
                Some(of) if of == wanted => return Ok(()),
                Some(_) => return Err(rhai_err(format!("results::difference: '{key}' is already another score"))),
                None => {}
            }
            let mut specs = lock(&specs);
            // Every score of the run has a spec but a difference of ratios (ScoreSpec::difference gives none).
            let ratio_difference =
                |k: &str| s.with_record(|r| r.scores.get(k).is_some_and(|sc| sc.difference_of.is_some()));
            let get = |k: &str| {
                specs.get(k).ok_or_else(|| {
                    rhai_err(if ratio_difference(k) {
                        format!(
                            "results::difference '{key}': '{k}' is a difference of ratios, which is not a mean of \
                             per-item values and cannot be differenced again"
                        )
                    } else {
                        format!("results::difference '{key}': no score '{k}' yet (results::score it first)")
                    })
                })
            };
            let (l, r) = (get(left)?, get(right)?);
            let (score, spec) = l.difference(r, key, s.env.seed, [left, right])?;
            // A per-item difference can be differenced again (a difference of two gains on the same items); a
            // difference of ratios cannot, and says so when named.
            if let Some(d) = spec {
                specs.insert(key.to_string(), d);
            }
            s.with_record(|r| r.scores.insert(key.to_string(), score));
            Ok(())
        })
    });
    let s = session.clone();
    m.set_native_fn("claim", move |ctx: NativeCallContext, spec: Dynamic| {
        native(&ctx, || {
            let claim: crate::claims::Claim = from_script(&spec, "results::claim")?;
            if claim.verdict.is_some() || !claim.outcomes.is_empty() {
                return Err(rhai_err(format!("results::claim '{}': verdicts are computed, not given", claim.id)));
            }
            if claim.id.trim().is_empty() || claim.quote.trim().is_empty() || claim.source.trim().is_empty() {
                return Err(rhai_err("results::claim: id, source (e.g. \"Emerging §5.2\") and quote are required"));
            }
            let dup = s.with_record(|r| {
                let dup = r.claims.iter().any(|c| c.id == claim.id);
                if !dup {
                    r.claims.push(claim.clone());
                }
                dup
            });
            if dup {
                return Err(rhai_err(format!("results::claim: '{}' declared twice", claim.id)));
            }
            Ok(())
        })
    });
    let s = session.clone();
    // A registered figure's title is the registry's (the runner sets it): a script of one may not say otherwise.
    m.set_native_fn("title", move |ctx: NativeCallContext, t: &str| {
        native(&ctx, || {
            if let Some(title) = s.env.registered_title.filter(|title| *title != t) {
                return Err(rhai_err(format!(
                    "results::title: {}'s title is the registry's, \"{title}\" (src/figures/registry.rs); drop this \
                     call or change the title there",
                    s.env.figure
                )));
            }
            s.with_record(|r| r.title = t.to_string());
            Ok(())
        })
    });
    let s = session.clone();
    m.set_native_fn("caption", move |ctx: NativeCallContext, t: &str| {
        native(&ctx, || {
            s.with_record(|r| r.caption = t.to_string());
            Ok(())
        })
    });
    let s = session.clone();
    m.set_native_fn("substitution", move |ctx: NativeCallContext, t: &str| {
        native(&ctx, || {
            s.with_record(|r| r.substitutions.push(t.to_string()));
            Ok(())
        })
    });
    let s = session.clone();
    m.set_native_fn("chart", move |ctx: NativeCallContext, spec: Dynamic| {
        native(&ctx, || {
            let v = json(&spec)?;
            crate::report::charts::check_chart(&v)?;
            s.with_record(|r| r.charts.push(v));
            Ok(())
        })
    });
    let s = session.clone();
    m.set_native_fn("table", move |ctx: NativeCallContext, spec: Dynamic| {
        native(&ctx, || {
            let v = json(&spec)?;
            crate::report::charts::check_table(&v)?;
            s.with_record(|r| r.tables.push(v));
            Ok(())
        })
    });
    m
}

#[cfg(test)]
mod tests {
    use super::super::engine::run_file;
    use super::super::env::{RunLog, ScriptEnv};
    use super::*;

    #[test]
    fn values_reach_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::new(ScriptEnv {
            scale: crate::Scale::Smoke,
            seed: 1,
            compute: crate::device::Compute::cpu(),
            figure: "f".into(),
            registered_title: None,
            out_dir: dir.path().join("out"),
            scripts_dir: dir.path().to_path_buf(),
            fresh: false,
            models_dir: dir.path().join("models"),
            given_models: Default::default(),
            log: RunLog::default(),
        })
        .unwrap();
        let p = dir.path().join("s.rhai");
        std::fs::write(
            &p,
            "results::title(\"T\"); results::value(\"a\", [1, 2.5, \"x\"]); results::paper(\"a\", #{ v: 0.5 });\n\
             results::substitution(\"S\"); results::caption(\"C\"); results::get(\"a\")[1]",
        )
        .unwrap();
        let v = run_file(&s, &p).unwrap();
        assert_eq!(v.as_float().unwrap(), 2.5);
        s.with_record(|r| {
            assert_eq!((r.title.as_str(), r.caption.as_str()), ("T", "C"));
            assert_eq!(r.values["a"], serde_json::json!([1, 2.5, "x"]));
            assert_eq!(r.paper["a"], serde_json::json!({"v": 0.5}));
            assert_eq!(r.substitutions, ["S"]);
        });
        std::fs::write(&p, "results::get(\"missing\")").unwrap();
        assert!(run_file(&s, &p).unwrap_err().to_string().contains("no value 'missing'"));
    }

    #[test]
    fn a_registered_figure_keeps_the_registry_title() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::new(ScriptEnv {
            scale: crate::Scale::Smoke,
            seed: 1,
            compute: crate::device::Compute::cpu(),
            figure: "fig7".into(),
            registered_title: crate::figures::find("fig7").map(|f| f.title),
            out_dir: dir.path().join("out"),
            scripts_dir: dir.path().to_path_buf(),
            fresh: false,
            models_dir: dir.path().join("models"),
            given_models: Default::default(),
            log: RunLog::default(),
        })
        .unwrap();
        let p = dir.path().join("s.rhai");
        std::fs::write(&p, "results::title(\"Linear CKA per layer\")").unwrap();
        let e = run_file(&s, &p).unwrap_err().to_string();
        assert!(e.contains("fig7's title is the registry's") && e.contains("src/figures/registry.rs"), "{e}");
        let title = crate::figures::info("fig7").unwrap().title;
        std::fs::write(&p, format!("results::title(\"{title}\")")).unwrap();
        let _ = run_file(&s, &p).unwrap();
        s.with_record(|r| assert_eq!(r.title, title));
    }

    #[test]
    fn scores_and_claims_reach_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let s = super::super::testing::session(dir.path());
        let p = dir.path().join("s.rhai");
        std::fs::write(
            &p,
            "results::score(\"acc\", #{ items: [1.0, 0.0, 1.0, 1.0], chance: 33.3, scale: 100.0 });\n\
             results::score(\"cka\", #{ estimate: 0.4 });\n\
             results::claim(#{ id: \"c\", source: \"§1\", quote: \"q\", statement: \"acc above chance\",\n\
                checks: [#{ left: \"acc\", op: \">\", right: 33.3 }] });",
        )
        .unwrap();
        let _ = run_file(&s, &p).unwrap();
        // The interval of a registered score, as the record holds it; an unknown key is an error.
        std::fs::write(&p, "let iv = results::interval(\"acc\"); [iv.estimate, iv.low, iv.high]").unwrap();
        let iv: Vec<f64> =
            run_file(&s, &p).unwrap().into_array().unwrap().iter().map(|v| v.as_float().unwrap()).collect();
        s.with_record(|r| assert_eq!(iv, [r.scores["acc"].estimate, r.scores["acc"].low, r.scores["acc"].high]));
        assert!(iv[1] < 75.0 && iv[2] > 75.0 - 1e-9, "{iv:?}");
        std::fs::write(&p, "results::interval(\"nope\")").unwrap();
        assert!(run_file(&s, &p).unwrap_err().to_string().contains("no score 'nope'"));
        s.with_record(|r| {
            assert_eq!(r.scores["acc"].estimate, 75.0);
            assert_eq!(r.scores["acc"].items, 4);
            assert!(!r.scores["cka"].has_interval());
            assert_eq!(r.claims[0].checks[0].right, crate::claims::Operand::Value(33.3));
        });
        // Paired differences of two scores of the run, once per key.
        std::fs::write(
            &p,
            "results::score(\"a\", #{ items: [1.0, 1.0, 0.0, 1.0], scale: 100.0 });\n\
             results::score(\"b\", #{ items: [1.0, 0.0, 0.0, 0.0], scale: 100.0 });\n\
             results::difference(\"a−b\", \"a\", \"b\"); results::difference(\"a−b\", \"a\", \"b\");",
        )
        .unwrap();
        let _ = run_file(&s, &p).unwrap();
        s.with_record(|r| {
            assert_eq!(r.scores["a−b"].estimate, 50.0);
            assert_eq!(r.scores["a−b"].difference_of, Some(["a".to_string(), "b".to_string()]));
        });
        // A difference of two per-item differences (a gain minus a gain), item by item.
        std::fs::write(
            &p,
            "results::score(\"f\", #{ items: [1.0, 1.0, 0.0, 1.0], scale: 100.0 });\n\
             results::score(\"g\", #{ items: [1.0, 0.0, 1.0, 0.0], scale: 100.0 });\n\
             results::score(\"h\", #{ items: [0.0, 0.0, 0.0, 0.0], scale: 100.0 });\n\
             results::difference(\"f−h\", \"f\", \"h\"); results::difference(\"g−h\", \"g\", \"h\");\n\
             results::difference(\"(f−h)−(g−h)\", \"f−h\", \"g−h\");",
        )
        .unwrap();
        let _ = run_file(&s, &p).unwrap();
        s.with_record(|r| {
            let d = &r.scores["(f−h)−(g−h)"];
            // f − h = [1, 1, 0, 1], g − h = [1, 0, 1, 0]: the items differ by 0, 1, −1, 1, mean 0.25.
            assert_eq!((d.estimate, d.items, d.range), (25.0, 4, Some([-200.0, 200.0])));
            assert_eq!(d.difference_of, Some(["f−h".to_string(), "g−h".to_string()]));
        });
        std::fs::write(
            &p,
            "results::score(\"c\", #{ items: [1.0, 1.0, 0.0, 1.0] }); results::score(\"e\", #{ items: [1.0] });\n\
             results::difference(\"c−e\", \"c\", \"e\")",
        )
        .unwrap();
        assert!(run_file(&s, &p).unwrap_err().to_string().contains("same test items"));
        // A difference of ratios is scored but cannot be differenced again, and the error says why.
        std::fs::write(
            &p,
            "results::score(\"r1\", #{ ratio: [[1.0, 2.0], [1.0, 1.0]] });\n\
             results::score(\"r2\", #{ ratio: [[0.0, 2.0], [1.0, 1.0]] });\n\
             results::difference(\"r1−r2\", \"r1\", \"r2\"); results::difference(\"rr\", \"r1−r2\", \"r1\")",
        )
        .unwrap();
        let e = run_file(&s, &p).unwrap_err().to_string();
        assert!(e.contains("'r1−r2' is a difference of ratios"), "{e}");
        for (bad, says) in [
            ("results::score(\"acc\", #{ estimate: 1.0 })", "scored twice"),
            ("results::score(\"x\", #{ itmes: [1.0] })", "itmes"),
            (
                "results::claim(#{ id: \"c\", source: \"§1\", quote: \"q\", statement: \"s\", checks: [] })",
                "declared twice",
            ),
            ("results::claim(#{ id: \"d\", source: \"\", quote: \"q\", statement: \"s\", checks: [] })", "required"),
            ("results::difference(\"d\", \"nothing\", \"acc\")", "no score 'nothing' yet"),
        ] {
            std::fs::write(&p, bad).unwrap();
            let e = run_file(&s, &p).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
