//! `crossling train` end to end on the real mirror with a tiny model: corpora, tokenizer, training, checkpoints,
//! metrics; a finished run is not silently overwritten; resume needs the same config.
mod common;

use common::{crossling, mirror, text};

const RUN: &str = r#"
languages = ["en", "fr"]
[corpus]
max_sentences = 300
valid_per_mille = 100
[corpus.datasets]
en = ["eltec-en"]
fr = ["eltec-fr"]
[tokenizer]
scheme = "joint"
vocab_size = 400
[train]
seq_len = 32
batch_size = 4
steps = 4
warmup_steps = 2
eval_every = 2
eval_batches = 1
checkpoint_every = 2
seed = 7
[train.model]
hidden = 32
layers = 1
heads = 2
max_positions = 64
"#;

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn train_writes_checkpoints_and_refuses_to_clobber() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("run.toml");
    std::fs::write(&cfg, RUN).unwrap();
    let out = tmp.path().join("out");
    let (cfg_s, out_s) = (cfg.to_str().unwrap(), out.to_str().unwrap());
    let cache = tmp.path().join("cache");

    let o = crossling(&["train", "--config", cfg_s, "--out", out_s], Some(&data), &cache);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("trained steps 0..4"), "{}", text(&o));
    for f in [
        "run.toml",
        "tokenizer/crossling-tokenizer.json",
        "corpora/en.train.txt",
        "last/model.safetensors",
        "best/config.json",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let metrics = std::fs::read_to_string(out.join("metrics.jsonl")).unwrap();
    assert!(metrics.lines().count() >= 4, "{metrics}");
    assert!(metrics.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));

    // Anchor statistics of the trained joint tokenizer: en and fr share some token types.
    let (tok_dir, en, fr) = (out.join("tokenizer"), out.join("corpora/en.train.txt"), out.join("corpora/fr.train.txt"));
    let a = format!("en={}", en.display());
    let b = format!("fr={}", fr.display());
    let o = crossling(
        &["anchors", "--tokenizer", tok_dir.to_str().unwrap(), "--a", &a, "--b", &b, "--json"],
        Some(&data),
        &cache,
    );
    assert!(o.status.success(), "{}", text(&o));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(stats["shared_types"].as_u64().unwrap() > 10, "{stats}");
    let o =
        crossling(&["anchors", "--tokenizer", tok_dir.to_str().unwrap(), "--a", "en", "--b", &b], Some(&data), &cache);
    assert!(!o.status.success() && text(&o).contains("expected LANG=FILE"), "{}", text(&o));

    // Extra anchors: the same run with dictionary code-switching of the training text.
    let cs_cfg = tmp.path().join("cs.toml");
    std::fs::write(&cs_cfg, format!("{RUN}\n[codeswitch]\ndictionary = \"en-fr\"\n")).unwrap();
    let cs_out = tmp.path().join("cs-out");
    let o = crossling(
        &["train", "--config", cs_cfg.to_str().unwrap(), "--out", cs_out.to_str().unwrap()],
        Some(&data),
        &cache,
    );
    assert!(o.status.success(), "{}", text(&o));
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cs_out.join("corpora/codeswitch.json")).unwrap()).unwrap();
    for lang in ["en", "fr"] {
        let switched = record["stats"][lang]["switched"].as_u64().unwrap();
        let words = record["stats"][lang]["words"].as_u64().unwrap();
        assert!(switched > 0 && switched * 100 <= words * 15, "{lang}: {record}");
    }
    assert!(record["dictionary_pairs"].as_u64().unwrap() > 5000, "{record}");

    // A named preset at smoke scale trains end to end too.
    let p_out = tmp.path().join("preset-out");
    let args =
        ["train", "--preset", "sep-emb", "--pair", "en-de", "--scale", "smoke", "--out", p_out.to_str().unwrap()];
    let o = crossling(&args, Some(&data), &cache);
    assert!(o.status.success(), "{}", text(&o));
    let model_cfg = std::fs::read_to_string(p_out.join("last/config.json")).unwrap();
    assert!(model_cfg.contains("\"sep_emb\": true") || model_cfg.contains("\"sep_emb\":true"), "{model_cfg}");

    // A second run into the same folder must not overwrite the trained model.
    let o = crossling(&["train", "--config", cfg_s, "--out", out_s], Some(&data), &cache);
    assert!(!o.status.success());
    assert!(text(&o).contains("--resume"), "{}", text(&o));

    // Resuming a finished run is a no-op that succeeds.
    let o = crossling(&["train", "--config", cfg_s, "--out", out_s, "--resume"], Some(&data), &cache);
    assert!(o.status.success(), "{}", text(&o));

    // A run killed before its first checkpoint (simulated: no last/ or best/) resumes from step 0.
    let killed = tmp.path().join("killed");
    let killed_s = killed.to_str().unwrap();
    assert!(crossling(&["train", "--config", cfg_s, "--out", killed_s], Some(&data), &cache).status.success());
    std::fs::remove_dir_all(killed.join("last")).unwrap();
    std::fs::remove_dir_all(killed.join("best")).unwrap();
    let o = crossling(&["train", "--config", cfg_s, "--out", killed_s, "--resume"], Some(&data), &cache);
    assert!(o.status.success() && text(&o).contains("trained steps 0..4"), "{}", text(&o));

    // A finished run can be extended: only the step budget changed.
    std::fs::write(&cfg, RUN.replace("steps = 4", "steps = 6")).unwrap();
    let o = crossling(&["train", "--config", cfg_s, "--out", out_s, "--resume"], Some(&data), &cache);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("trained steps 4..6"), "{}", text(&o));

    // Any other change cannot resume this folder.
    std::fs::write(&cfg, RUN.replace("steps = 4", "steps = 6").replace("hidden = 32", "hidden = 64")).unwrap();
    let o = crossling(&["train", "--config", cfg_s, "--out", out_s, "--resume"], Some(&data), &cache);
    assert!(!o.status.success());
    assert!(text(&o).contains("different run config"), "{}", text(&o));
}
