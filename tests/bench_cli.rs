//! `crossling bench` through the real binary. Where it finds the PyTorch reference scripts: a binary run away from
//! its build folder (a GPU node) names that folder with `$CROSSLING_BENCH_REFERENCE`, and a missing script stops the
//! benchmark before it measures anything, naming the variable. And `--reference-first`, which runs the reference
//! before crossling's steps.
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

#[test]
fn bench_train_can_run_the_reference_first() {
    let python = common::reference_python();
    let tiny = ["--layers", "1", "--hidden", "32", "--heads", "2", "--vocab", "500", "--seq", "16", "--batch", "2"];
    let o = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(["bench", "train", "--shape", "cpu", "--steps", "1", "--warmup", "0", "--threads", "1"])
        .args(tiny)
        .arg("--reference-first")
        .arg("--python")
        .arg(&python)
        .output()
        .expect("run crossling");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}{err}");
    let (before, ours) = (err.find("pytorch cpu fp32 (before crossling)"), err.find("crossling cpu fp32"));
    assert!(before.is_some() && ours.is_some() && before < ours, "{err}");
    assert!(out.contains("ratio crossling / pytorch (fp32)"), "{out}");
}
