//! `crossling task nli | ner | parse` end to end on the real mirror with a tiny en–fr checkpoint (separate embeddings,
//! so the language-specific parameters are frozen): the JSON record's shape, scores in [0, 1], the default languages
//! (those of the model), the human-readable summary, and refusals of bad input.
mod common;

use std::path::{Path, PathBuf};

use common::{crossling, mirror, text};
use crossling::model::{ModelConfig, SharingPlan};
use crossling::text::tokenize::{AnchorScheme, CrossTokenizer, TokenizerSpec};

/// A checkpoint `dir/ckpt` (config.json + model.safetensors, tokenizer in `dir/ckpt/tokenizer`) of a 2 × 16 model
/// with separate en / fr embeddings and a joint BPE trained on the premises of XNLI dev en / fr.
fn checkpoint(dir: &Path, data: &Path) -> PathBuf {
    checkpoint_with(dir, data, "fr")
}

/// [`checkpoint`] with English and `second` (its XNLI dev premises: zh is simplified script).
fn checkpoint_with(dir: &Path, data: &Path, second: &str) -> PathBuf {
    let mut files = Vec::new();
    for lang in ["en", second] {
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
        languages: vec!["en".into(), second.into()],
        sharing: SharingPlan { sep_emb: true, sep_layers: 0 },
        ..ModelConfig::default()
    };
    common::save_checkpoint(dir, &tok, &cfg)
}

fn in_unit(v: &serde_json::Value) -> bool {
    v.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x))
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn nli_smoke_reports_accuracies_and_refuses_bad_input() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = checkpoint(tmp.path(), &data);
    let c = ckpt.to_str().unwrap();
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        let mut all = vec!["task", "nli", "--model", c];
        all.extend_from_slice(args);
        crossling(&all, Some(&data), &cache)
    };

    let o = run(&["--scale", "smoke", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(r["task"], "nli");
    assert_eq!(r["train_lang"], "en");
    assert_eq!((r["train_pairs"].as_u64(), r["dev_pairs"].as_u64()), (Some(300), Some(100)));
    assert_eq!(r["steps"].as_u64(), Some(19), "300 pairs in batches of 16, 1 epoch");
    assert_eq!(r["config"]["batch_size"].as_u64(), Some(16));
    assert_eq!(r["max_len"].as_u64(), Some(64));
    assert!(in_unit(&r["en_dev_accuracy"]), "{r}");
    let xnli = r["xnli"].as_object().unwrap();
    assert_eq!(xnli.keys().collect::<Vec<_>>(), ["en", "fr"], "default: the model's XNLI languages");
    for (lang, a) in xnli {
        assert!(in_unit(&a["accuracy"]), "{lang}: {a}");
        assert_eq!(a["pairs"].as_u64(), Some(100), "{lang}");
    }
    assert_eq!(r["dev_history"].as_array().unwrap().len(), 1);
    assert_eq!(r["best_step"].as_u64(), Some(19));
    assert!(r["loss"]["first"].as_f64().is_some_and(f64::is_finite), "{r}");
    assert!(!r["loss"]["curve"].as_array().unwrap().is_empty());
    assert!(r["freeze"]["language_specific_tensors"].as_u64().unwrap() >= 2, "en and fr embeddings are frozen");
    assert!(r["files"].as_array().unwrap().len() >= 6, "4 MNLI files + 2 XNLI dev files");
    assert_eq!(r["model"]["kind"], "crossling");

    let o = run(&["--scale", "smoke", "--langs", "fr", "--max-train", "40", "--batch", "8", "--freeze-layers", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("5 steps (batch 8") && out.contains("XNLI dev fr: 0."), "{out}");
    assert!(!out.contains("XNLI dev en"), "{out}");

    // The mean-difference shift at test time (Liu Table 4): α chosen on half of the evaluated pairs.
    let o =
        run(&["--scale", "smoke", "--langs", "fr", "--freeze-layers", "1", "--mds", "--mds-alphas", "0,1", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = &r["mds"]["fr"];
    assert_eq!(
        (m["layer"].as_u64(), m["select_pairs"].as_u64(), m["test_pairs"].as_u64()),
        (Some(1), Some(50), Some(50))
    );
    assert_eq!(m["selection"].as_array().unwrap().len(), 2, "{m}");
    assert!(m["shift_norm"].as_f64().unwrap() > 0.0 && in_unit(&m["test_accuracy_with"]), "{m}");
    assert!([0.0, 1.0].contains(&m["best_alpha"].as_f64().unwrap()), "{m}");
    assert!(r["mds"].get("en").is_none(), "no shift for English");

    let refusals: [(&[&str], &str); 8] = [
        (&["--scale", "smoke", "--langs", "de"], "has no language 'de' (its languages: en, fr)"),
        (&["--scale", "smoke", "--langs", "fr,xx"], "no XNLI dev set for language 'xx'"),
        (&["--scale", "smoke", "--langs", "fr,"], "empty language code"),
        (&["--scale", "huge"], "invalid value 'huge' for '--scale <SCALE>'"),
        (&["--scale", "smoke", "--lr", "0"], "lr must be a positive number"),
        (&["--scale", "smoke", "--max-train", "many"], "--max-train: 'many'"),
        (&["--scale", "smoke", "--freeze-layers", "3"], "cannot freeze 3 layers of a 2-layer model"),
        (&["--scale", "smoke", "--mds", "--mds-alphas", "0,x"], "--mds-alphas: 'x' is not a number"),
    ];
    for (args, want) in refusals {
        let o = run(args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
    let o = crossling(&["task", "nli", "--model", tmp.path().join("nope").to_str().unwrap()], Some(&data), &cache);
    assert!(!o.status.success() && text(&o).contains("does not exist"), "{}", text(&o));
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn ner_smoke_reports_span_scores_and_refuses_bad_input() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = checkpoint(tmp.path(), &data);
    let c = ckpt.to_str().unwrap();
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        let mut all = vec!["task", "ner", "--model", c];
        all.extend_from_slice(args);
        crossling(&all, Some(&data), &cache)
    };

    let o = run(&["--scale", "smoke", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!((r["task"].as_str(), r["train_data"].as_str()), (Some("ner"), Some("panx")));
    assert_eq!((r["train_sentences"].as_u64(), r["dev_sentences"].as_u64()), (Some(200), Some(50)));
    assert_eq!(r["steps"].as_u64(), Some(13), "200 sentences in batches of 16, 1 epoch");
    assert_eq!(r["config"]["schedule"], "linear_decay");
    assert!(in_unit(&r["en_dev_f1"]), "{r}");
    let eval = r["eval"].as_object().unwrap();
    assert_eq!(eval.keys().collect::<Vec<_>>(), ["en", "fr"], "default: the model's PAN-X languages");
    for (lang, e) in eval {
        assert!(in_unit(&e["f1"]) && in_unit(&e["precision"]) && in_unit(&e["recall"]), "{lang}: {e}");
        assert_eq!(e["sentences"].as_u64(), Some(100), "{lang}");
        assert!(e["counts"]["gold"].as_u64().unwrap() > 50, "{lang}: {e}");
    }
    assert_eq!(r["files"].as_array().unwrap().len(), 3, "train-en, dev-en, dev-fr");
    assert!(r["freeze"]["language_specific_tensors"].as_u64().unwrap() >= 2);

    let o = run(&["--scale", "smoke", "--langs", "fr", "--train-data", "conll2003", "--max-train", "32"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("32 English sentences (Conll2003)") && out.contains("PAN-X dev fr: F1 0."), "{out}");
    assert!(!out.contains("PAN-X dev en"), "{out}");

    let refusals: [(&[&str], &str); 3] = [
        (&["--scale", "smoke", "--langs", "de"], "has no language 'de' (its languages: en, fr)"),
        (&["--scale", "smoke", "--langs", "fr,xx"], "no PAN-X dev set for language 'xx'"),
        (&["--scale", "smoke", "--train-data", "ontonotes"], "unknown NER training data 'ontonotes'"),
    ];
    for (args, want) in refusals {
        let o = run(args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
}

/// `--zh-script simplified` reads PAN-X zh (traditional script) converted to simplified: the option is in the
/// result's config (so in its cache key: the second run is computed, not read back), the conversion in its notes;
/// without it the config has no such field and the file is read as it is.
#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn ner_reads_panx_zh_in_simplified_script_when_asked() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = checkpoint_with(tmp.path(), &data, "zh");
    let c = ckpt.to_str().unwrap();
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        let mut all = vec!["task", "ner", "--model", c, "--scale", "smoke", "--langs", "zh", "--max-train", "32"];
        all.extend_from_slice(args);
        crossling(&all, Some(&data), &cache)
    };
    let json = |o: &std::process::Output| -> serde_json::Value {
        assert!(o.status.success(), "{}", text(o));
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
    };
    let plain = json(&run(&["--json"]));
    assert!(plain["config"].get("zh_script").is_none(), "{}", plain["config"]);
    let converted = |r: &serde_json::Value| {
        r["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("converted to simplified script"))
    };
    assert!(!converted(&plain), "{}", plain["notes"]);
    let o = run(&["--zh-script", "simplified"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("PAN-X dev zh converted to simplified script"), "{out}");
    assert!(!text(&o).contains("cached result"), "another key than the plain run's: {}", text(&o));
    let simplified = json(&run(&["--zh-script", "simplified", "--json"]));
    assert_eq!(simplified["config"]["zh_script"], "simplified");
    assert!(converted(&simplified), "{}", simplified["notes"]);
    assert_eq!(simplified["eval"]["zh"]["sentences"], plain["eval"]["zh"]["sentences"]);
    assert_eq!(simplified["eval"]["zh"]["counts"]["gold"], plain["eval"]["zh"]["counts"]["gold"], "the same tags");
    let o = run(&["--zh-script", "traditional"]);
    assert!(!o.status.success() && text(&o).contains("expected simplified"), "{}", text(&o));
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn parse_smoke_reports_attachment_scores_and_refuses_bad_input() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = checkpoint(tmp.path(), &data);
    let c = ckpt.to_str().unwrap();
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        let mut all = vec!["task", "parse", "--model", c];
        all.extend_from_slice(args);
        crossling(&all, Some(&data), &cache)
    };

    let o = run(&["--scale", "smoke", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(r["task"], "parse");
    assert_eq!(r["train_sentences"].as_u64(), Some(200));
    assert!(in_unit(&r["en_dev_las"]), "{r}");
    let results = r["results"].as_object().unwrap();
    assert_eq!(results.keys().collect::<Vec<_>>(), ["en", "fr"], "default: the model's parsing languages");
    for (lang, e) in results {
        assert!(in_unit(&e["uas"]) && in_unit(&e["las"]), "{lang}: {e}");
        assert!(e["las"].as_f64() <= e["uas"].as_f64(), "{lang}: LAS ≤ UAS: {e}");
        assert!(e["scored"].as_u64().unwrap() > 0 && e["excluded"].as_u64().unwrap() > 0, "{lang}: PUNCT excluded");
    }
    assert!(r["labels"].as_array().unwrap().iter().all(|l| !l.as_str().unwrap().contains(':')), "universal labels");

    let o = run(&["--scale", "smoke", "--langs", "fr", "--decode", "greedy", "--include-punct"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("fr") && out.contains("LAS"), "{out}");

    let refusals: [(&[&str], &str); 3] = [
        (&["--scale", "smoke", "--langs", "de"], "has no language 'de' (its languages: en, fr)"),
        (&["--scale", "smoke", "--decode", "eisner"], "--decode"),
        (&["--scale", "smoke", "--freeze-layers", "3"], "cannot freeze 3 layers of a 2-layer model"),
    ];
    for (args, want) in refusals {
        let o = run(args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn stacked_parsing_reads_a_target_language_through_its_own_model_and_map() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = checkpoint(tmp.path(), &data);
    let c = ckpt.to_str().unwrap();
    let cache = tmp.path().join("cache");
    let target = format!("fr={c}");
    let run = |args: &[&str]| {
        let mut all = vec!["task", "parse", "--model", c, "--scale", "smoke"];
        all.extend_from_slice(args);
        crossling(&all, Some(&data), &cache)
    };
    let o = run(&["--stack-layer", "1", "--target", &target, "--map-sentences", "60", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let stack = &r["model"]["stack"];
    assert_eq!((stack["layer"].as_u64(), stack["depth"].as_u64()), (Some(1), Some(1)), "{stack}");
    assert!(stack["inputs"]["en"]["map"].is_null(), "{stack}");
    let map = &stack["inputs"]["fr"]["map"];
    assert_eq!(map["sentences"].as_u64(), Some(60), "{map}");
    assert!(map["pairs"].as_u64().unwrap() > 100 && in_unit(&map["mean_cosine_after"]), "{map}");
    let results = r["results"].as_object().unwrap();
    assert_eq!(results.keys().collect::<Vec<_>>(), ["fr"], "default: the target languages");
    assert!(in_unit(&results["fr"]["las"]) && in_unit(&r["en_dev_las"]), "{r}");
    // Only the fresh layers and the parser train; the encoders are frozen.
    assert!(r["freeze"]["frozen_params"].as_u64().unwrap() > r["freeze"]["trainable_params"].as_u64().unwrap() / 4);
    assert!(r["files"].to_string().contains("xnli/dev-fr.tsv"), "the maps' data is in the provenance");
    let o = run(&["--stack-layer", "1", "--langs", "fr"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("stack: 1 fresh layer(s) on frozen layer 1; en by") && out.contains("ud-fr-gsd"), "{out}");

    let refusals: [(&[&str], &str); 4] = [
        (&["--target", &target], "--stack-layer"),
        (&["--stack-layer", "1", "--target", "fr"], "expected LANG=DIR"),
        (&["--stack-layer", "3"], "layer 3 does not exist in the 2-layer model"),
        (&["--stack-layer", "0", "--freeze-layers", "1"], "must stay unset"),
    ];
    for (args, want) in refusals {
        let o = run(args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn frozen_nli_reads_a_model_or_static_vectors_of_its_tokens() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = checkpoint(tmp.path(), &data);
    let c = ckpt.to_str().unwrap();
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        let mut all = vec!["task", "nli-frozen", "--model", c, "--scale", "smoke"];
        all.extend_from_slice(args);
        crossling(&all, Some(&data), &cache)
    };
    let o = run(&["--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!((r["task"].as_str(), r["representation"]["kind"].as_str()), (Some("nli_frozen"), Some("model")));
    assert_eq!(r["representation"]["layers"].as_u64(), Some(3), "embedding output + 2 layers");
    assert_eq!(r["layer_weights"].as_array().unwrap().len(), 3);
    assert_eq!((r["train_pairs"].as_u64(), r["dev_pairs"].as_u64()), (Some(300), Some(100)));
    let xnli = r["xnli"].as_object().unwrap();
    assert_eq!(xnli.keys().collect::<Vec<_>>(), ["en", "fr"], "default: the model's XNLI languages");
    assert!(xnli.values().all(|a| in_unit(&a["accuracy"]) && a.get("token_coverage").is_none()), "{r}");
    // The same run again comes from the task cache the scripts' task::frozen_nli shares; --fresh trains again.
    let again = run(&["--json"]);
    assert!(text(&again).contains("cached result"), "{}", text(&again));
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&again.stdout).unwrap(), r);
    assert!(!text(&run(&["--json", "--fresh"])).contains("cached result"));

    // Static vectors of the checkpoint's tokens, all but the specials and one token.
    let tok = CrossTokenizer::load(&ckpt.join("tokenizer")).unwrap();
    let mut vec = format!("{} 8\n", tok.vocab_size() - 6);
    for id in 5..tok.vocab_size() as u32 - 1 {
        let row: Vec<String> = (0..8).map(|k| format!("{:.3}", ((id * 7 + k) % 11) as f32 / 11.0 - 0.5)).collect();
        vec.push_str(&format!("{} {}\n", tok.id_to_token(id).unwrap(), row.join(" ")));
    }
    let vectors = tmp.path().join("v.vec");
    std::fs::write(&vectors, vec).unwrap();
    let o = run(&["--vectors", vectors.to_str().unwrap(), "--langs", "fr", "--max-train", "64", "--batch", "8"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("(static, 1 layer(s) × 8)") && out.contains("8 steps"), "{out}");
    assert!(out.contains("XNLI dev fr: 0.") && out.contains("% of tokens with a vector"), "{out}");

    let refusals: [(&[&str], &str); 4] = [
        (&["--langs", "de"], "has no language 'de' (its languages: en, fr)"),
        (&["--langs", "fr,xx"], "no XNLI dev set for language 'xx'"),
        (&["--epochs", "0"], "epochs"),
        (&["--vectors", "/nonexistent.vec"], "nonexistent.vec"),
    ];
    for (args, want) in refusals {
        let o = run(args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
}
