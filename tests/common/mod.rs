//! Helpers shared by the integration tests: the real-data mirror and running the `crossling` binary.
#![allow(dead_code)] // each test crate uses a subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The real-data mirror: `$CROSSLING_DATA`, else `../shared/data` beside the crate; `None` when absent (tests
/// that need real data are then ignored, with the reason: `no_data_mirror` in build.rs).
pub fn mirror() -> Option<PathBuf> {
    let p = std::env::var_os("CROSSLING_DATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    p.join("SOURCES.tsv").is_file().then_some(p)
}

/// Run the binary offline with `data` as the mirror (or none) and `cache` as the cache.
pub fn crossling(args: &[&str], data: Option<&Path>, cache: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crossling"));
    // Models and task results go to the test's own cache, not the user's.
    cmd.args(args)
        .env("CROSSLING_CACHE", cache)
        .env("CROSSLING_MODELS", cache.join("models"))
        .env("CROSSLING_OFFLINE", "1");
    match data {
        Some(d) => cmd.env("CROSSLING_DATA", d),
        None => cmd.env_remove("CROSSLING_DATA"),
    };
    cmd.output().expect("run crossling")
}

/// Run the binary offline on the mirror `data`, with `dir/cache` and `dir/models` as caches and one libtorch thread
/// (so that runs compared with each other do the same arithmetic).
pub fn crossling_one_thread(args: &[&str], data: &Path, dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(args)
        .env("CROSSLING_DATA", data)
        .env("CROSSLING_OFFLINE", "1")
        .env("CROSSLING_CACHE", dir.join("cache"))
        .env("CROSSLING_MODELS", dir.join("models"))
        .env("OMP_NUM_THREADS", "1")
        .output()
        .expect("run crossling")
}

/// stdout and stderr together, for assertion messages.
pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A tiny English setup in `dir`: a joint BPE of 50 merges trained on a repeated English line (`dir/en.txt`) and a
/// 2-layer, 16-wide, 2-head config over its vocabulary with `max_positions` positions.
pub fn tiny_english(
    dir: &Path,
    max_positions: usize,
) -> (crossling::text::tokenize::CrossTokenizer, crossling::model::ModelConfig) {
    use crossling::text::tokenize::{AnchorScheme, CrossTokenizer, TokenizerSpec};
    let en = dir.join("en.txt");
    std::fs::write(&en, "the cat sat on the mat . a dog ran to the house , the cats sat\n".repeat(20)).unwrap();
    let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 50), &[("en".into(), en)]).unwrap();
    let cfg = crossling::model::ModelConfig {
        vocab_size: tok.vocab_size(),
        hidden: 16,
        layers: 2,
        heads: 2,
        max_positions,
        ..crossling::model::ModelConfig::default()
    };
    (tok, cfg)
}

/// Saves a randomly initialised (seed 3) model of `cfg` with `tok` as a crossling checkpoint `dir/ckpt`
/// (config.json + model.safetensors, tokenizer in `dir/ckpt/tokenizer`).
pub fn save_checkpoint(
    dir: &Path,
    tok: &crossling::text::tokenize::CrossTokenizer,
    cfg: &crossling::model::ModelConfig,
) -> PathBuf {
    let ckpt = dir.join("ckpt");
    tok.save(&ckpt.join("tokenizer")).unwrap();
    tch::manual_seed(3);
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    crossling::model::MlmModel::new(&vs.root(), cfg).unwrap();
    vs.save(ckpt.join("model.safetensors")).unwrap();
    cfg.save_json(ckpt.join("config.json")).unwrap();
    ckpt
}

/// `$CROSSLING_PYTHON`, else the project's `.venv/bin/python` ([`crossling::paths::python`]), checked to import
/// transformers, tokenizers, safetensors and torch (the reference implementations of tests/reference/); fails with
/// what to run when it cannot.
pub fn reference_python() -> PathBuf {
    let py = crossling::paths::python(None);
    assert!(py.is_file(), "{} is missing: run ./setup.sh to create the venv with transformers", py.display());
    let ok = Command::new(&py).args(["-c", "import transformers, tokenizers, safetensors, torch"]).status();
    assert!(
        ok.is_ok_and(|s| s.success()),
        "{} cannot import transformers/tokenizers/safetensors/torch: run ./setup.sh",
        py.display()
    );
    py
}

/// Runs `tests/reference/SCRIPT` with `args` under `py`; fails with its output when it fails.
pub fn run_reference(py: &Path, script: &str, args: &[&str]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(script);
    let out = Command::new(py).arg(&path).args(args).output().expect("run python");
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every `*.json` under `dir` (the committed records under `figures/`), appended to `out`.
pub fn records(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("figures/ is readable").flatten() {
        let p = entry.path();
        if p.is_dir() {
            records(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}
