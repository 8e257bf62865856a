//! The Slurm executor on a real single-node cluster (issue 27): `tests/slurm/local-cluster.sh` installs and starts
//! Debian's slurmctld, slurmd and munge on the loopback; the smoke table1 grid goes through `grid submit --slurm`
//! (one job array per dependency level, chained by afterok) and its record equals the one-process run. Needs root
//! and the packages, so it is ignored by default; run it with
//! `cargo test --release --test slurm -- --ignored --nocapture`.
mod common;

use common::{crossling_one_thread as crossling, mirror, text};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
#[ignore = "needs root and a local Slurm cluster (tests/slurm/local-cluster.sh); run with --ignored"]
fn the_smoke_table1_grid_runs_on_slurm_and_equals_the_one_process_run() {
    let data = mirror().expect("the data mirror");
    let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/local-cluster.sh");
    let o = Command::new(&setup).output().unwrap();
    assert!(o.status.success(), "local cluster: {}", text(&o));

    // The cache must be on a filesystem the node sees: here the same machine.
    let grid = tempfile::tempdir().unwrap();
    let (out, plan) = (grid.path().join("out"), grid.path().join("plan.json"));
    let o = crossling(
        &["plan", "table1", "--scale", "smoke", "--out", out.to_str().unwrap(), "--plan", plan.to_str().unwrap()],
        &data,
        grid.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o =
        crossling(&["grid", "submit", plan.to_str().unwrap(), "--slurm", "--partition", "debug"], &data, grid.path());
    assert!(o.status.success(), "{}", text(&o));
    let submitted = text(&o);
    eprintln!("{submitted}");
    assert!(submitted.contains("level 0: 10 job(s)") && submitted.contains("level 1: 30 job(s)"), "{submitted}");
    assert!(submitted.contains("level 2: 1 job(s)") && submitted.contains("submitted: "), "{submitted}");

    let t0 = Instant::now();
    let status = loop {
        let o = crossling(&["grid", "status", plan.to_str().unwrap()], &data, grid.path());
        let s = text(&o);
        let last = s.lines().last().unwrap_or_default().to_string();
        if last.contains(" 0 running, 0 pending") || last.contains("failed") && !last.contains(" 0 failed") {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(1800), "the grid did not finish in 30 min: {s}");
        std::thread::sleep(Duration::from_secs(5));
    };
    eprintln!("{}", status.lines().last().unwrap_or_default());
    assert!(status.contains("41 jobs: 41 done, 0 failed"), "{status}");
    eprintln!("slurm grid: {:.0} s", t0.elapsed().as_secs_f64());

    let one = tempfile::tempdir().unwrap();
    let ref_out = one.path().join("out");
    let o = crossling(&["figure", "table1", "--scale", "smoke", "--out", ref_out.to_str().unwrap()], &data, one.path());
    assert!(o.status.success(), "{}", text(&o));
    let read = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("table1.json")).unwrap()).unwrap()
    };
    let (a, b) = (read(&out), read(&ref_out));
    assert_eq!(a["values"], b["values"]);
    assert_eq!(a["scores"], b["scores"]);
}
