//! `crossling bench` through the real binary. Where it finds the PyTorch reference scripts: a binary run away from
//! its build folder (a GPU node) names that folder with `$CROSSLING_BENCH_REFERENCE`, and a missing script stops the
//! benchmark before it measures anything, naming the variable. And `--reference-first`, which runs the reference
//! before crossling's steps. And the blocks of both sides: the `cpu` scale's pre-LN, or BERT's with `--post-ln`.
//! And `bench features`: each side times the same batches `--repeats` times and the ratio is of the best times.
mod common;

use std::process::Command;

#[test]
fn bench_train_stops_at_once_when_the_reference_folder_lacks_its_script() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(["bench", "train", "--shape", "cpu", "--steps", "1", "--warmup", "0", "--threads", "1"])
        .env("CROSSLING_BENCH_REFERENCE", tmp.path())
        .output()
        .expect("run crossling");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let missing = tmp.path().join("bench_train.py");
    assert!(err.contains(&missing.display().to_string()) && err.contains("CROSSLING_BENCH_REFERENCE"), "{err}");
    // Stopped before its own measurements (the matmul peak comes first).
    assert!(!err.contains("matmul peak"), "{err}");
}

/// Runs `bench train` with the reference on a tiny model of the `cpu` scale (one timed step, one thread) with `extra`
/// flags; returns its stdout and stderr after checking that it succeeded.
fn tiny_cpu_bench(extra: &[&str]) -> (String, String) {
    let python = common::reference_python();
    let tiny = ["--layers", "1", "--hidden", "32", "--heads", "2", "--vocab", "500", "--seq", "16", "--batch", "2"];
    let o = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(["bench", "train", "--shape", "cpu", "--steps", "1", "--warmup", "0", "--threads", "1"])
        .args(tiny)
        .args(extra)
        .arg("--python")
        .arg(&python)
        .output()
        .expect("run crossling");
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "{out}{err}");
    (out, err)
}

#[test]
fn bench_train_can_run_the_reference_first() {
    let (out, err) = tiny_cpu_bench(&["--reference-first"]);
    let (before, ours) = (err.find("pytorch cpu fp32 (before crossling)"), err.find("crossling cpu fp32"));
    assert!(before.is_some() && ours.is_some() && before < ours, "{err}");
    assert!(out.contains("ratio crossling / pytorch (fp32)"), "{out}");
}

/// The one shape's report of `bench train --json` on the tiny model with `extra` flags.
fn tiny_cpu_report(extra: &[&str]) -> serde_json::Value {
    let mut flags = vec!["--json"];
    flags.extend_from_slice(extra);
    let (out, _) = tiny_cpu_bench(&flags);
    let report: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    report["shapes"][0].clone()
}

#[test]
fn bench_train_times_the_cpu_scales_pre_ln_blocks_on_both_sides_and_post_ln_on_request() {
    let hidden = 32;
    // (flags, blocks, reference model, extra reference parameters): Hugging Face's token-type rows (RoBERTa: 1,
    // BERT: 2) and RoBERTa's two position rows before the first position, each `hidden` wide.
    let cases: [(&[&str], &str, &str, i64); 2] =
        [(&[], "pre-LN", "RobertaPreLayerNormForMaskedLM", 3), (&["--post-ln"], "post-LN", "BertForMaskedLM", 2)];
    for (flags, blocks, model, extra_rows) in cases {
        let s = tiny_cpu_report(flags);
        assert_eq!(s["blocks"], blocks, "{s}");
        assert_eq!(s["dropout"], 0.0, "the cpu scale trains without dropout: {s}");
        let run = &s["runs"][0];
        assert_eq!(run["pytorch"]["model"], model, "{run}");
        assert_eq!(run["pytorch"]["pre_ln"], blocks == "pre-LN", "{run}");
        let ours = run["crossling"]["parameters"].as_i64().unwrap();
        let theirs = run["pytorch"]["parameters"].as_i64().unwrap();
        assert_eq!(theirs - ours, extra_rows * hidden, "the same blocks on both sides ({blocks}): {run}");
    }
}

#[test]
fn bench_features_times_the_same_batches_repeats_times_on_each_side_and_reports_the_best() {
    let python = common::reference_python();
    let o = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(["bench", "features", "--shape", "smoke", "--sentences", "12", "--repeats", "2", "--threads", "1"])
        .args(["--fixed-batch", "4", "--json", "--python"])
        .arg(&python)
        .output()
        .expect("run crossling");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}{err}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let times = |key: &str| -> Vec<f64> {
        r[key].as_array().unwrap_or_else(|| panic!("{key} in {r}")).iter().map(|x| x.as_f64().unwrap()).collect()
    };
    for (runs, best) in [
        ("crossling_runs_seconds", "crossling_seconds"),
        ("transformers_same_batches_runs_seconds", "transformers_same_batches_seconds"),
    ] {
        let runs = times(runs);
        assert_eq!(runs.len(), 2, "{r}");
        assert_eq!(r[best].as_f64().unwrap(), runs.iter().copied().fold(f64::INFINITY, f64::min), "{r}");
    }
    let ratio = r["ratio_same_batches"].as_f64().unwrap();
    let expected = r["transformers_same_batches_seconds"].as_f64().unwrap() / r["crossling_seconds"].as_f64().unwrap();
    assert!((ratio - expected).abs() < 1e-12, "{r}");
    assert!(r["max_abs_difference"].as_f64().unwrap() < 1e-4, "both sides compute the same features: {r}");
}
