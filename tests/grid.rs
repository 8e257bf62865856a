//! Figures as job graphs (issue 27): the plan of table1 and fig7 at `smoke` (jobs, edges, what is done), the local
//! executor with two workers against the one-process run (equal records), and a failed job of liu-table4 (its
//! dependants wait; a second run does only what is missing). The Slurm executor's scripts are unit-tested in `src/grid/slurm.rs`;
//! its run on a real single-node cluster is `tests/slurm.rs` (behind a flag).
mod common;

use common::{crossling_one_thread as crossling, mirror, text};
use crossling::grid::plan::{JobSpec, Plan};
use std::path::Path;

fn record(dir: &Path, id: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{id}.json"))).unwrap()).unwrap()
}

fn kind(spec: &JobSpec) -> &'static str {
    match spec {
        JobSpec::Pretrain { .. } => "pretrain",
        JobSpec::Task { .. } => "task",
        JobSpec::Figure { .. } => "figure",
    }
}

/// `plan` reports where each figure waits for its jobs (issue 68 §5: it printed "planning stopped … Unknown property
/// 'score' …", a script error it went on after); a script error of its own fails `plan` (src/grid/plan.rs).
#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn the_smoke_plan_of_table1_says_what_it_waits_for_without_a_script_error() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let grid = tempfile::tempdir().unwrap();
    let (out, plan_path) = (grid.path().join("out"), grid.path().join("plan.json"));
    let args =
        ["plan", "table1", "--scale", "smoke", "--out", out.to_str().unwrap(), "--plan", plan_path.to_str().unwrap()];
    let o = crossling(&args, &data, grid.path());
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(!said.contains("planning stopped") && !said.contains("Unknown property"), "{said}");
    assert!(
        said.contains("table1: planned up to what the script needs from jobs not done yet (seed 0, lib/transfer:")
            && said.contains("reads `score` of a fine-tuning's result, whose job has not run yet"),
        "{said}"
    );
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn table1_and_fig7_through_the_local_executor_equal_the_one_process_run() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let grid = tempfile::tempdir().unwrap();
    let (out, plan_path) = (grid.path().join("out"), grid.path().join("plan.json"));
    let (o_dir, p_dir) = (out.to_str().unwrap(), plan_path.to_str().unwrap());
    let plan_args = ["plan", "table1", "fig7", "--scale", "smoke", "--out", o_dir, "--plan", p_dir];
    let o = crossling(&plan_args, &data, grid.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("planning stopped") && !text(&o).contains("Unknown property"), "{}", text(&o));
    let plan = Plan::load(&plan_path).unwrap();
    // table1 at smoke: 10 ablations on en–fr, 3 tasks each; fig7: 5 monolingual models, a second English one,
    // en–en′ and 4 bilingual pairs, en–fr Default shared with table1.
    let count = |k: &str| plan.jobs.iter().filter(|j| kind(&j.spec) == k).count();
    assert_eq!((count("pretrain"), count("task"), count("figure")), (20, 30, 2));
    // Both scripts ask for every job before reading one, so planning stops only after the whole grid.
    assert!(plan.planning.iter().all(|f| !f.complete && f.stopped.len() == 1), "{:?}", plan.planning);
    assert!(plan.jobs.iter().all(|j| !j.done), "an empty cache");
    for job in &plan.jobs {
        match &job.spec {
            JobSpec::Task { model, .. } => {
                assert_eq!(job.deps, vec![model.clone()]);
                assert!(matches!(plan.job(model).unwrap().spec, JobSpec::Pretrain { .. }));
            }
            JobSpec::Pretrain { .. } => assert!(job.deps.is_empty()),
            JobSpec::Figure { figure } => {
                let n = if figure == "table1" { 40 } else { 11 };
                assert_eq!(job.deps.len(), n, "{figure} depends on everything it asks for");
            }
        }
    }

    let o = crossling(&["grid", "run", plan_path.to_str().unwrap(), "--workers", "2"], &data, grid.path());
    assert!(o.status.success(), "{}", text(&o));
    // 50 pre-trainings and fine-tunings; the re-planning after them ran each figure to its end on a full cache, so
    // it wrote both records and no figure job was left to run.
    assert!(text(&o).contains("50 job(s) run"), "{}", text(&o));
    let plan = Plan::load(&plan_path).unwrap();
    assert!(plan.jobs.iter().all(|j| j.done), "{:?}", plan.jobs.iter().filter(|j| !j.done).collect::<Vec<_>>());

    let one = tempfile::tempdir().unwrap();
    let ref_out = one.path().join("out");
    let o = crossling(
        &["figure", "table1", "fig7", "--scale", "smoke", "--out", ref_out.to_str().unwrap()],
        &data,
        one.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    for id in ["table1", "fig7"] {
        let (a, b) = (record(&out, id), record(&ref_out, id));
        assert_eq!(a["values"], b["values"], "{id}: values");
        assert_eq!(a["scores"], b["scores"], "{id}: scores");
        assert_eq!(a["claims"], b["claims"], "{id}: claims");
        // Written from the planning runs, the record still names every model and data file its scores rest on.
        let (ma, mb) = (a["provenance"]["models"].as_object().unwrap(), b["provenance"]["models"].as_object().unwrap());
        assert_eq!(ma.keys().collect::<Vec<_>>(), mb.keys().collect::<Vec<_>>(), "{id}: models");
        for (name, m) in ma {
            assert_eq!(
                (&m["key"], &m["weights_sha256"]),
                (&mb[name]["key"], &mb[name]["weights_sha256"]),
                "{id}: {name}"
            );
        }
        assert_eq!(a["provenance"]["data"], b["provenance"]["data"], "{id}: data files");
    }

    // Planned again, everything is done.
    let o = crossling(&plan_args, &data, grid.path());
    assert!(o.status.success(), "{}", text(&o));
    let plan = Plan::load(&plan_path).unwrap();
    assert!(plan.jobs.iter().filter(|j| kind(&j.spec) != "figure").all(|j| j.done));
    let o = crossling(&["grid", "status", plan_path.to_str().unwrap()], &data, grid.path());
    assert!(text(&o).contains("52 jobs: 52 done, 0 failed, 0 running, 0 pending"), "{}", text(&o));
    // Every job ran through `job run`, so each done marker carries its measured wall and (on Linux) CPU time.
    assert!(text(&o).contains("measured over the 52 done jobs with a time"), "{}", text(&o));
    if cfg!(target_os = "linux") {
        assert!(text(&o).contains("CPU hours over the 52 with a CPU time"), "{}", text(&o));
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn a_failed_job_stops_its_dependants_and_a_second_run_does_only_what_is_missing() {
    let data = mirror().expect("the data mirror (without it this test is ignored)");
    let dir = tempfile::tempdir().unwrap();
    let (out, plan_path) = (dir.path().join("out"), dir.path().join("plan.json"));
    let args = [
        "plan",
        "liu-table4",
        "--scale",
        "smoke",
        "--out",
        out.to_str().unwrap(),
        "--plan",
        plan_path.to_str().unwrap(),
    ];
    let o = crossling(&args, &data, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    // Break one fine-tuning: an option its config does not have.
    let mut plan = Plan::load(&plan_path).unwrap();
    let broken = plan.jobs.iter().position(|j| kind(&j.spec) == "task").unwrap();
    let broken_id = plan.jobs[broken].id.clone();
    if let JobSpec::Task { options, .. } = &mut plan.jobs[broken].spec {
        options["no_such_option"] = serde_json::json!(1);
    }
    plan.save(&plan_path).unwrap();
    let o = crossling(&["grid", "run", plan_path.to_str().unwrap(), "--workers", "2"], &data, dir.path());
    let msg = text(&o);
    assert!(!o.status.success(), "{msg}");
    assert!(
        msg.contains(&format!("{broken_id}: failed"))
            && msg.contains(&format!("{}: not started", plan.figure_job("liu-table4").unwrap().id)),
        "{msg}"
    );
    let failed = dir.path().join("models/jobs").join(format!("{broken_id}.failed"));
    assert!(std::fs::read_to_string(&failed).unwrap().contains("no_such_option"));
    assert!(!out.join("liu-table4.json").exists(), "no figure from a failed grid");

    // The plan made again runs the one missing fine-tuning and, after it, the frozen-encoder fine-tuning that
    // liu-table4 asks for only once the first one's result is in the cache (the pre-training is not run again);
    // planning liu-table4 once more after that is its run.
    let o = crossling(&args, &data, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let o = crossling(&["grid", "run", plan_path.to_str().unwrap(), "--workers", "2"], &data, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 job(s) run in 3 planning pass(es)"), "{}", text(&o));
    assert!(out.join("liu-table4.json").is_file());
    let figure_id = Plan::load(&plan_path).unwrap().figure_job("liu-table4").unwrap().id.clone();
    assert!(figure_id.starts_with("figure-liu-table4-"), "{figure_id}");
    assert!(dir.path().join("models/jobs").join(format!("{figure_id}.done")).is_file());
}
