//! The scripts that run the studies' analyses on a pretrained encoder (`scripts/real/*.rhai`: sentence, word,
//! language, transfer; `--model real=…`), and liu-table4 with `--model mbert=…`, end to end at `smoke` scale on the
//! real mirror, with a tiny random Hugging Face BERT (tests/reference/hf_bert.py) as the encoder: each writes a record
//! whose claims carry checks and verdicts, and names the model it read. The committed e5-small records
//! (`figures/real/e5-small/`) are made the same way with `--model real=e5-small` (`mbert=e5-small`).
mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{mirror, text};

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn real_model_scripts_run_at_smoke_scale_on_a_given_encoder() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let py = common::reference_python();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    common::run_reference(&py, "hf_bert.py", &["create", w.join("hf").to_str().unwrap()]);
    // language.rhai and liu-table4 (its shift) take means of language over non-special tokens: a byte-level BPE
    // (RoBERTa) reads every script, where the tiny WordPiece would read Russian and Chinese as [UNK] only.
    let sentences = w.join("sentences.txt");
    std::fs::write(&sentences, "the cat sat\n").unwrap();
    common::run_reference(
        &py,
        "hf_arch.py",
        &["create", "roberta", w.join("arch").to_str().unwrap(), sentences.to_str().unwrap()],
    );
    for (name, model) in [
        ("sentence", w.join("hf/st")),
        ("word", w.join("hf/st")),
        ("language", w.join("arch/RobertaModel-st")),
        ("transfer", w.join("hf/st")),
    ] {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scripts/real/{name}.rhai"));
        let out = w.join("out");
        let o = crossling_at_smoke(w, &data, &["run", script.to_str().unwrap()], &out, "real", &model);
        assert!(o.status.success(), "{name}: {}", text(&o));
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{name}.json"))).unwrap()).unwrap();
        let claims = record["claims"].as_array().unwrap();
        assert!(!claims.is_empty(), "{name}: no claims");
        for c in claims {
            assert!(!c["checks"].as_array().unwrap().is_empty(), "{name}: claim {} has no checks", c["id"]);
            assert!(c["verdict"].is_string(), "{name}: claim {} has no verdict", c["id"]);
        }
        let given = record["provenance"]["models"]["real"]["given"].as_str().unwrap_or_default();
        assert_eq!(given, model.display().to_string(), "{name}: the record names the model it read");
        assert!(out.join(format!("{name}.png")).is_file(), "{name}: no image");
    }
    // Liu Table 4 on a given encoder: the figure itself with `--model mbert=…` (its fine-tuning budget for a given
    // encoder, the embeddings frozen in both rows, stated in a substitution).
    let model = w.join("arch/RobertaModel-st");
    let out = w.join("out-table4");
    let o = crossling_at_smoke(w, &data, &["figure", "liu-table4"], &out, "mbert", &model);
    assert!(o.status.success(), "liu-table4: {}", text(&o));
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("liu-table4.json")).unwrap()).unwrap();
    let subs = record["substitutions"].to_string();
    assert!(subs.contains("embeddings frozen in both rows"), "liu-table4 states the given encoder's budget: {subs}");
    assert_eq!(record["provenance"]["models"]["mbert"]["given"].as_str(), Some(model.to_str().unwrap()));
}

/// `crossling ARGS --scale smoke --out OUT --model ROLE=MODEL`, offline, with its caches under `w`.
fn crossling_at_smoke(w: &Path, data: &Path, args: &[&str], out: &Path, role: &str, model: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(args)
        .args(["--scale", "smoke", "--out", out.to_str().unwrap()])
        .arg("--model")
        .arg(format!("{role}={}", model.display()))
        .env("CROSSLING_DATA", data)
        .env("CROSSLING_OFFLINE", "1")
        .env("CROSSLING_CACHE", w.join("cache"))
        .env("CROSSLING_MODELS", w.join("models"))
        .output()
        .expect("run crossling")
}
