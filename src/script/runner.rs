//! Runs one figure or experiment script end to end: the engine, the record with provenance, the run log, and the
//! outputs (`ID.json`, then the rendered charts and tables) in the outputs folder.
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::engine::run_file;
use super::env::{RunLog, ScriptEnv};
use super::ns_common::Session;
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::report::provenance::{git_revision, now_utc};
use crate::report::record::FigureRecord;
use crate::scale::Scale;

/// How to run a script.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub scale: Scale,
    pub seed: u64,
    /// Device and precision (resolved from `--device` where the command started).
    pub compute: Compute,
    /// Retrain / re-extract instead of using cached models and features.
    pub fresh: bool,
    /// The outputs folder (`figures/` for the registry's figures).
    pub out_dir: PathBuf,
    /// Where `import "lib/…"` looks.
    pub scripts_dir: PathBuf,
    /// Models given on the command line, by name.
    pub given_models: std::collections::BTreeMap<String, PathBuf>,
    /// How many seeds to run (`seed`, `seed + 1`, …); models are trained per seed.
    pub seeds: usize,
    /// Replace an existing `ID.json` of another scale (refused otherwise, before anything runs).
    pub force: bool,
    /// The model cache ([`crate::train::model_cache::models_root`] unless a plan names another).
    pub models_dir: PathBuf,
}

impl RunOptions {
    /// What `crossling figure ID --scale SCALE --out OUT_DIR` runs with: seed 0 on the cpu, cached models, the
    /// project's `scripts/`, no given models (notebooks start from this and change fields).
    pub fn figure(scale: Scale, out_dir: PathBuf) -> Self {
        RunOptions {
            scale,
            seed: 0,
            compute: Compute::cpu(),
            fresh: false,
            out_dir,
            scripts_dir: crate::figures::scripts_dir(),
            given_models: Default::default(),
            seeds: 1,
            force: false,
            models_dir: crate::train::model_cache::models_root(),
        }
    }

    /// The seeds a run goes through: `seed`, `seed + 1`, … (`seeds` of them).
    pub fn seed_list(&self) -> Vec<u64> {
        (0..self.seeds as u64).map(|i| self.seed + i).collect()
    }

    /// The environment of one run of figure `id` at `seed` under these options, logging to `log`.
    pub fn env(&self, id: &str, seed: u64, log: RunLog) -> ScriptEnv {
        ScriptEnv {
            scale: self.scale,
            seed,
            compute: self.compute,
            figure: id.to_string(),
            // Set by the runner, which knows the script (crate::figures::registered_run).
            registered_title: None,
            out_dir: self.out_dir.clone(),
            scripts_dir: self.scripts_dir.clone(),
            fresh: self.fresh,
            models_dir: self.models_dir.clone(),
            given_models: self.given_models.clone(),
            log,
        }
    }
}

/// Runs `script` as figure `id` once per seed (`opts.seed`, `opts.seed + 1`, … `opts.seeds` of them); writes
/// `out_dir/ID.json` and `out_dir/logs/ID.log`, then renders the record. The record's values and charts are the
/// first seed's; its scores combine every seed ([`crate::claims::score::combine_all`]) and its claims are evaluated
/// on them ([`crate::claims::rule::evaluate`]).
pub fn run_script(script: &Path, id: &str, opts: &RunOptions) -> Result<FigureRecord> {
    if opts.seeds == 0 {
        return Err(Error::Invalid("--seeds must be at least 1".into()));
    }
    refuse_other_scale(&opts.out_dir.join(format!("{id}.json")), opts.scale, opts.force)?;
    // Before the runs, so that a folder that cannot be made stops the command before hours of work.
    std::fs::create_dir_all(opts.out_dir.join("logs")).map_err(|e| Error::io(&opts.out_dir, e))?;
    let started = Started::now(script)?;
    let seeds = opts.seed_list();
    let mut runs = Vec::with_capacity(seeds.len());
    let mut log = Vec::new();
    for &seed in &seeds {
        if seeds.len() > 1 {
            log.push(seed_header(id, runs.len(), seeds.len(), seed));
            eprintln!("{}", log.last().map(String::as_str).unwrap_or_default());
        }
        let (outcome, lines) = run_once(script, id, opts, seed);
        log.extend(lines);
        match outcome {
            Ok(record) => runs.push(record),
            Err(e) => {
                // The log is written whether the run failed or not; a failed run writes no record.
                log.push(format!("error: {e}"));
                write_log(&opts.out_dir, id, &log)?;
                return Err(e);
            }
        }
    }
    finish_record(script, id, opts, runs, log, started)
}

/// `== ID: seed S (i of n)`: the line that opens seed `S`'s part of a run log of several seeds.
pub(crate) fn seed_header(id: &str, done: usize, of: usize, seed: u64) -> String {
    format!("== {id}: seed {seed} ({} of {of})", done + 1)
}

/// The revision, script hash, time and clock of a run as it starts (edits made while it runs do not describe it).
pub(crate) struct Started {
    revision: String,
    script_sha256: String,
    at: String,
    clock: Instant,
}

impl Started {
    pub(crate) fn now(script: &Path) -> Result<Self> {
        Ok(Started {
            revision: git_revision(crate::paths::crate_dir()),
            script_sha256: crate::data::resolve::hash_file(script, false)?.1,
            at: now_utc(),
            clock: Instant::now(),
        })
    }
}

fn write_log(out_dir: &Path, id: &str, log: &[String]) -> Result<()> {
    let log_dir = out_dir.join("logs");
    std::fs::create_dir_all(&log_dir).map_err(|e| Error::io(&log_dir, e))?;
    let path = log_dir.join(format!("{id}.log"));
    std::fs::write(&path, log.join("\n") + "\n").map_err(|e| Error::io(&path, e))
}

/// Writes the record of `runs` (one per seed of `opts`, in order, each run to its end) with its log: the first
/// seed's values and charts, scores combined over every seed and claims evaluated on them, provenance; then renders
/// it. Shared by [`run_script`] and the planner, whose run of a figure with every job done is a whole run
/// ([`crate::grid::plan::make_plan`]).
pub(crate) fn finish_record(
    script: &Path,
    id: &str,
    opts: &RunOptions,
    mut runs: Vec<FigureRecord>,
    mut log: Vec<String>,
    started: Started,
) -> Result<FigureRecord> {
    let seeds = opts.seed_list();
    if runs.len() != seeds.len() {
        return Err(Error::Invalid(format!("{id}: {} runs for {} seeds", runs.len(), seeds.len())));
    }
    let now = crate::data::resolve::hash_file(script, false)?.1;
    if now != started.script_sha256 {
        log.push(format!(
            "note: {} changed while the run went on (sha256 {} at the start, {now} at the end); the record keeps the \
             start's, so it reads as made by an earlier version of the script",
            script.display(),
            started.script_sha256
        ));
    }
    std::fs::create_dir_all(&opts.out_dir).map_err(|e| Error::io(&opts.out_dir, e))?;
    write_log(&opts.out_dir, id, &log)?;
    let project = crate::paths::crate_dir();
    let score_runs: Vec<_> = runs.iter().map(|r| r.scores.clone()).collect();
    let later: Vec<FigureRecord> = runs.drain(1..).collect();
    let mut record = runs.swap_remove(0);
    merge_seed_provenance(&mut record.provenance, &seeds[1..], &later);
    record.scores = crate::claims::score::combine_all(&score_runs)
        .map_err(|e| Error::Invalid(format!("{}: {e}", script.display())))?;
    let scores = record.scores.clone();
    crate::claims::rule::evaluate(&mut record.claims, &scores)
        .map_err(|e| Error::Invalid(format!("{}: {e}", script.display())))?;
    if record.caption.trim().is_empty() {
        return Err(Error::Invalid(format!(
            "{}: the script set no caption (results::caption): every figure states what it shows, its scale and any \
             substitution",
            script.display()
        )));
    }
    record.caption = with_seeds_note(&record.caption, &seeds);
    // A registered figure's record has the registry's title (results::title refuses another); any other script's is
    // its own, else its id.
    if let Some(title) = crate::figures::registered_run(&opts.scripts_dir, id, script).map(|f| f.title) {
        record.title = title.to_string();
    } else if record.title.is_empty() {
        record.title = id.to_string();
    }
    let p = &mut record.provenance;
    p.revision = started.revision;
    p.crossling_version = env!("CARGO_PKG_VERSION").to_string();
    p.libtorch = crate::device::torch_info().describe();
    p.scale = opts.scale.name().to_string();
    p.seed = opts.seed;
    p.seeds = seeds;
    p.device = opts.compute.describe();
    p.threads = Some(i64::from(tch::get_num_threads()));
    p.machine = Some(crate::device::machine::cpu_description());
    p.script = script.strip_prefix(project).unwrap_or(script).display().to_string();
    p.script_sha256 = started.script_sha256;
    p.started_at = started.at;
    p.wall_time_s = (started.clock.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    p.log = log;
    record.save(&opts.out_dir.join(format!("{id}.json")))?;
    crate::report::render::render_record(&record, &opts.out_dir)?;
    Ok(record)
}

/// `caption` with, for a record of several seeds, a closing sentence on what shows which seed: the charts and
/// tables are drawn by the first seed's run (the caption's own `seed S` is that run's), while the record's scores
/// and the claims combine every seed ([`crate::claims::score`]). One seed: `caption` as it is.
fn with_seeds_note(caption: &str, seeds: &[u64]) -> String {
    if seeds.len() < 2 {
        return caption.to_string();
    }
    format!(
        "{} Seeds {}: the charts and tables show the run of seed {}; the record's scores and the claims combine \
         the {} seeds (mean of the per-seed estimates, their standard deviation and values, and an interval over the \
         seeds and the test items).",
        caption.trim_end(),
        crate::report::render::seed_list(seeds),
        seeds[0],
        seeds.len()
    )
}

/// Adds the models and data files of the later seeds' runs to the first seed's provenance, so a record of
/// `--seeds N` names every model its scores rest on: a model the same at every seed (a seed-independent baseline)
/// once, another seed's model as `NAME (seed S)`.
fn merge_seed_provenance(first: &mut crate::report::record::Provenance, seeds: &[u64], later: &[FigureRecord]) {
    for (seed, run) in seeds.iter().zip(later) {
        for (name, model) in &run.provenance.models {
            if first.models.get(name) != Some(model) {
                first.models.insert(format!("{name} (seed {seed})"), model.clone());
            }
        }
        for (path, sha) in &run.provenance.data {
            first.data.entry(path.clone()).or_insert_with(|| sha.clone());
        }
    }
}

/// Refuses to replace the record at `path` when it holds another scale than `scale` (unless `force`): the
/// committed `cpu` records are not to be overwritten by a smoke test run.
pub(crate) fn refuse_other_scale(path: &Path, scale: Scale, force: bool) -> Result<()> {
    if force || !path.is_file() {
        return Ok(());
    }
    let old = FigureRecord::load(path)?;
    if old.provenance.scale != scale.name() {
        return Err(Error::Invalid(format!(
            "{} holds a record at scale '{}'; this run is at '{scale}': choose another --out, or pass --force to \
             replace it",
            path.display(),
            old.provenance.scale
        )));
    }
    Ok(())
}

/// One run of `script` at `seed`: its record (models and data in the provenance, the rest filled by the caller)
/// and its log lines.
fn run_once(script: &Path, id: &str, opts: &RunOptions, seed: u64) -> (Result<FigureRecord>, Vec<String>) {
    let mut env = opts.env(id, seed, RunLog::default());
    env.registered_title = crate::figures::registered_run(&opts.scripts_dir, id, script).map(|f| f.title);
    let session = match Session::new(env.clone()) {
        Ok(s) => s,
        Err(e) => return (Err(e), Vec::new()),
    };
    let outcome = run_file(&session, script);
    let lines = env.log.lines();
    (outcome.map(|_| session.with_record(|r| r.clone())), lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_keeps_the_script_hash_of_its_start_and_names_its_machine() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("mine.rhai");
        std::fs::write(&script, "let x = 1;\n").unwrap();
        let (_, at_start) = crate::data::resolve::hash_file(&script, false).unwrap();
        let started = Started::now(&script).unwrap();
        std::fs::write(&script, "let x = 2;\n").unwrap(); // edited while the run goes on
        let opts = RunOptions::figure(Scale::Smoke, dir.path().join("out"));
        let run = FigureRecord {
            format: crate::report::record::RECORD_FORMAT,
            caption: "A record with nothing in it, smoke scale.".into(),
            ..Default::default()
        };
        let rec = finish_record(&script, "mine", &opts, vec![run], Vec::new(), started).unwrap();
        assert_eq!(rec.provenance.script_sha256, at_start);
        assert!(
            rec.provenance.log.iter().any(|l| l.contains("changed while the run went on")),
            "{:?}",
            rec.provenance.log
        );
        assert!(rec.provenance.machine.as_deref().is_some_and(|m| m.contains("logical CPU")));
    }

    #[test]
    fn a_record_of_another_scale_is_kept_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fig7.json");
        assert!(refuse_other_scale(&path, Scale::Smoke, false).is_ok(), "nothing there yet");
        let mut rec = FigureRecord { format: crate::report::record::RECORD_FORMAT, ..Default::default() };
        rec.provenance.scale = "cpu".into();
        rec.save(&path).unwrap();
        let e = refuse_other_scale(&path, Scale::Smoke, false).unwrap_err().to_string();
        assert!(e.contains("scale 'cpu'") && e.contains("--force"), "{e}");
        assert!(refuse_other_scale(&path, Scale::Cpu, false).is_ok());
        assert!(refuse_other_scale(&path, Scale::Smoke, true).is_ok());
    }

    #[test]
    fn a_record_of_several_seeds_names_every_seeds_models() {
        let run = |models: &[(&str, &str)], data: &[(&str, &str)]| {
            let mut r = FigureRecord::default();
            for (name, folder) in models {
                r.provenance.models.insert(name.to_string(), serde_json::json!({ "dir": folder }));
            }
            for (path, sha) in data {
                r.provenance.data.insert(path.to_string(), sha.to_string());
            }
            r
        };
        let mut first = run(&[("mono-en", "mono-en-s0"), ("fasttext", "ft")], &[("a.txt", "1")]).provenance;
        let later = [
            run(&[("mono-en", "mono-en-s1"), ("fasttext", "ft")], &[("a.txt", "1"), ("b.txt", "2")]),
            run(&[("mono-en", "mono-en-s2")], &[]),
        ];
        merge_seed_provenance(&mut first, &[1, 2], &later);
        let names: Vec<&str> = first.models.keys().map(String::as_str).collect();
        assert_eq!(names, ["fasttext", "mono-en", "mono-en (seed 1)", "mono-en (seed 2)"]);
        assert_eq!(first.models["mono-en (seed 2)"]["dir"], "mono-en-s2");
        assert_eq!(first.data.len(), 2);
    }

    #[test]
    fn a_caption_of_several_seeds_says_which_seed_the_charts_show() {
        assert_eq!(with_seeds_note("CKA per layer, seed 0.", &[0]), "CKA per layer, seed 0.");
        let c = with_seeds_note("CKA per layer, seed 3. ", &[3, 4, 5]);
        assert!(
            c.starts_with("CKA per layer, seed 3. Seeds 3, 4, 5: the charts and tables show the run of seed 3;"),
            "{c}"
        );
        assert!(c.contains("combine the 3 seeds"), "{c}");
    }

    #[test]
    fn zero_seeds_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = RunOptions::figure(Scale::Smoke, dir.path().to_path_buf());
        opts.seeds = 0;
        let e = run_script(&dir.path().join("x.rhai"), "x", &opts).unwrap_err().to_string();
        assert!(e.contains("--seeds"), "{e}");
    }
}
