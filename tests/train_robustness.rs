//! `crossling train` under bad input and hard kills, and the monolingual / multilingual presets of the model zoo,
//! on the real mirror with tiny models.
mod common;

use common::{crossling, mirror, text};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `train --config` on `toml` in a fresh folder; returns (success, output, whether a model was written).
fn train_toml(toml: &str, data: &Path, dir: &Path, name: &str) -> (bool, String, bool) {
    let cfg = dir.join(format!("{name}.toml"));
    std::fs::write(&cfg, toml).unwrap();
    let out = dir.join(name);
    let o = crossling(
        &["train", "--config", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
        Some(data),
        &dir.join("cache"),
    );
    (o.status.success(), text(&o), out.join("last").exists())
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn bad_input_is_refused_before_training() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, String, &str); 5] = [
        ("empty", RUN.replace("max_sentences = 300", "max_sentences = 0"), "0 training and 0 validation sentences"),
        ("vocab", RUN.replace("vocab_size = 400", "vocab_size = 400000"), "fewer than the 400000 asked for"),
        ("sep", format!("{RUN}[train.model.sharing]\nsep_layers = 3\n"), "sep_layers (3) must not exceed layers (1)"),
        ("unknown", RUN.replace("seed = 7", "seed = 7\nstep = 3"), "unknown field `step`"),
        ("missing-lang", RUN.replace("fr = [\"eltec-fr\"]", "fr = [\"eltec-en\"]"), "has no 'fr' text"),
    ];
    for (name, toml, expected) in cases {
        let (ok, out, trained) = train_toml(&toml, &data, tmp.path(), name);
        assert!(!ok && out.contains(expected), "{name}: expected '{expected}' in:\n{out}");
        assert!(!trained, "{name}: a checkpoint was written although the config is bad");
        assert!(!out.contains("trained steps"), "{name}: training started:\n{out}");
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn monolingual_and_multilingual_presets_train() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for (preset, langs) in [("mono", "zh"), ("multilingual", "en-fr-de-ru-zh")] {
        let out = tmp.path().join(preset);
        let args = ["train", "--preset", preset, "--langs", langs, "--scale", "smoke", "--out", out.to_str().unwrap()];
        let o = crossling(&args, Some(&data), &cache);
        assert!(o.status.success(), "{preset}: {}", text(&o));
        for lang in langs.split('-') {
            assert!(text(&o).contains(&format!("validation perplexity {lang}:")), "{preset}: {}", text(&o));
        }
        let cfg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("best/config.json")).unwrap()).unwrap();
        assert_eq!(cfg["languages"].as_array().unwrap().len(), langs.split('-').count(), "{cfg}");
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn every_ablation_of_table_1_trains_at_smoke_scale_with_a_self_contained_checkpoint() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for preset in crossling::train::presets::ABLATIONS {
        let pair = if preset == "extra-anchors" { "en-fr" } else { "en-ru" };
        let out = tmp.path().join(preset);
        let args = ["train", "--preset", preset, "--langs", pair, "--scale", "smoke", "--out", out.to_str().unwrap()];
        let o = crossling(&args, Some(&data), &cache);
        assert!(o.status.success(), "{preset}: {}", text(&o));
        let cfg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("best/config.json")).unwrap()).unwrap();
        let sharing = &cfg["sharing"];
        let expect_sep_emb = preset.starts_with("sep-emb");
        assert_eq!(sharing["sep_emb"], expect_sep_emb, "{preset}: {cfg}");
        assert_eq!(sharing["sep_layers"].as_u64().unwrap() > 0, preset.contains("-l1-"), "{preset}: {cfg}");
        // The checkpoint carries its tokenizer, so the folder alone opens for inference.
        let ck = tmp.path().join(format!("{preset}-best"));
        std::fs::rename(out.join("best"), &ck).unwrap();
        crossling::model::load::LoadedModel::open(&ck, tch::Device::Cpu)
            .unwrap_or_else(|e| panic!("{preset}: checkpoint without its run folder: {e}"));
    }
}

/// The step recorded in a checkpoint folder, if it holds a complete one.
fn checkpoint_step(dir: &Path) -> Option<u64> {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trainer_state.json")).ok()?).ok()?;
    state["step"].as_u64()
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn kill_9_loses_at_most_one_checkpoint_interval() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let (steps, every) = (60u64, 4u64);
    let run = RUN
        .replace("steps = 4", &format!("steps = {steps}"))
        .replace("checkpoint_every = 2", &format!("checkpoint_every = {every}"))
        .replace("eval_every = 2", &format!("eval_every = {every}"))
        .replace("hidden = 32", "hidden = 64")
        .replace("seq_len = 32", "seq_len = 64")
        .replace("batch_size = 4", "batch_size = 8");
    let cfg = tmp.path().join("run.toml");
    std::fs::write(&cfg, &run).unwrap();

    // The uninterrupted reference.
    let reference = tmp.path().join("reference");
    let args = |out: &Path, resume: bool| {
        let mut a = vec!["train".to_string(), "--config".into(), cfg.display().to_string()];
        a.extend(["--out".to_string(), out.display().to_string()]);
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let strs = |v: &[String]| v.iter().map(String::clone).collect::<Vec<_>>();
    let a = strs(&args(&reference, false));
    let o = crossling(&a.iter().map(String::as_str).collect::<Vec<_>>(), Some(&data), &cache);
    assert!(o.status.success(), "{}", text(&o));

    // The same run, killed with SIGKILL once a checkpoint past step 2 intervals exists.
    let killed = tmp.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(args(&killed, false))
        .env("CROSSLING_DATA", &data)
        .env("CROSSLING_CACHE", &cache)
        .env("CROSSLING_OFFLINE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if checkpoint_step(&killed.join("last")).is_some_and(|s| s >= 2 * every) {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        assert!(started.elapsed() < Duration::from_secs(120), "no checkpoint within 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let kept = checkpoint_step(&killed.join("last")).expect("last/ is a complete checkpoint after the kill");
    assert!(kept >= 2 * every && kept.is_multiple_of(every) && kept < steps, "kept step {kept}");

    // Resume finishes the run from the kept checkpoint, and ends where the uninterrupted run ended.
    let a = strs(&args(&killed, true));
    let o = crossling(&a.iter().map(String::as_str).collect::<Vec<_>>(), Some(&data), &cache);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&format!("trained steps {kept}..{steps}")), "{}", text(&o));
    let sha = |dir: &Path| {
        let state: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("last/trainer_state.json")).unwrap()).unwrap();
        state["model_sha256"].as_str().unwrap().to_string()
    };
    assert_eq!(sha(&killed), sha(&reference), "the resumed run's final weights differ from the uninterrupted run's");
}
