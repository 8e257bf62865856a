//! The Slurm executor on a real single-node cluster (issue 27; issue 68 §5): `tests/slurm/local-cluster.sh` starts a
//! private cluster on the loopback (its own slurm.conf, munge key and socket, state and spool folders in a temporary
//! folder; Debian's slurmctld, slurmd and munge, installed beforehand) and stops exactly the daemons it started when
//! its standard input ends; the smoke table1 grid goes through `grid submit --slurm` (one job array per dependency
//! level, chained by afterok) with `--export=NONE` (`SBATCH_EXPORT`, as sites that pass jobs no environment set it),
//! so a job has only what its script exports, and its record equals the one-process run. Needs root and the
//! packages, so it is ignored by default; run it with `cargo test --release --test slurm -- --ignored --nocapture`.
mod common;

use common::{mirror, text};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The running cluster: `local-cluster.sh` with its standard input held open. Dropping it closes that input, and the
/// script stops its daemons and removes its folder (also when the test panics).
struct Cluster {
    child: Child,
    stdin: Option<ChildStdin>,
    conf: PathBuf,
}

impl Cluster {
    fn start() -> Cluster {
        let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/local-cluster.sh");
        let mut child =
            Command::new(&setup).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("local-cluster.sh");
        let stdin = child.stdin.take();
        let mut conf = None;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(c) = line.strip_prefix("SLURM_CONF=") {
                conf = Some(PathBuf::from(c));
            }
            if line == "ready" {
                break;
            }
        }
        let Some(conf) = conf else {
            let status = child.wait().unwrap();
            panic!("the local cluster did not start ({status}); see local-cluster.sh's messages above");
        };
        Cluster { child, stdin, conf }
    }

    /// crossling with one libtorch thread, offline, on the mirror `data`, caches under `dir`, and this cluster's
    /// configuration for sbatch and squeue; sbatch passes the job no environment.
    fn crossling(&self, args: &[&str], data: &Path, dir: &Path) -> Output {
        Command::new(env!("CARGO_BIN_EXE_crossling"))
            .args(args)
            .env("CROSSLING_DATA", data)
            .env("CROSSLING_OFFLINE", "1")
            .env("CROSSLING_CACHE", dir.join("cache"))
            .env("CROSSLING_MODELS", dir.join("models"))
            .env("OMP_NUM_THREADS", "1")
            .env("SLURM_CONF", &self.conf)
            .env("SBATCH_EXPORT", "NONE")
            .output()
            .expect("run crossling")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs root and a local Slurm cluster (tests/slurm/local-cluster.sh); run with --ignored"]
fn the_smoke_table1_grid_runs_on_slurm_and_equals_the_one_process_run() {
    let data = mirror().expect("the data mirror");
    let cluster = Cluster::start();
    let crossling = |args: &[&str], data: &Path, dir: &Path| cluster.crossling(args, data, dir);

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
    let script = std::fs::read_to_string(grid.path().join("plan.json.d/slurm/level-0.sbatch")).unwrap();
    for var in ["CROSSLING_MODELS", "CROSSLING_DATA", "CROSSLING_CACHE", "CROSSLING_OFFLINE", "CROSSLING_MANIFESTS"] {
        assert!(script.contains(&format!("export {var}=")), "{var} in\n{script}");
    }

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
    let o = common::crossling_one_thread(
        &["figure", "table1", "--scale", "smoke", "--out", ref_out.to_str().unwrap()],
        &data,
        one.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let read = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("table1.json")).unwrap()).unwrap()
    };
    let (a, b) = (read(&out), read(&ref_out));
    assert_eq!(a["values"], b["values"]);
    assert_eq!(a["scores"], b["scores"]);
}
