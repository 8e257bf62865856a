//! `crossling bench` through the real binary: where it finds the PyTorch reference scripts. A binary run away from
//! its build folder (a GPU node) names that folder with `$CROSSLING_BENCH_REFERENCE`; a missing script stops the
//! benchmark before it measures anything, naming the variable.
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
