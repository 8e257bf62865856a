//! `crossling figure`, `crossling run` and `crossling plot`: run the Rhai script of a figure (or one's own), write
//! `ID.json` with provenance and render it; re-render a figure from its JSON.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;
use crossling::device::{Compute, Precision};
use crossling::figures::{self, FIGURES};
use crossling::report::record::FigureRecord;
use crossling::report::registry_files;
use crossling::report::render::render_record_as;
use crossling::script::runner::{run_script, RunOptions};
use crossling::Scale;

/// What to run at which scale, device and seeds, and where the records go: shared by `figure`, `run` and `plan`.
#[derive(Args)]
pub struct RunTarget {
    /// smoke (seconds, for tests), cpu (default; 2 cores) or paper (the studies' shapes; GPUs).
    #[arg(long, value_enum, default_value_t = Scale::Cpu)]
    pub scale: Scale,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// The seed every random choice derives from.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Repeat the whole figure over N seeds (SEED, SEED+1, …; models trained and cached per seed): the record's
    /// scores give the mean, standard deviation, per-seed values and an interval over seeds.
    #[arg(long, default_value_t = 1)]
    pub seeds: usize,
    /// Outputs folder (default for `figure` and `plan`: the project's figures/ at cpu scale, figures/paper/ at paper
    /// scale, out/smoke/ at smoke scale; ./outputs for `run`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl RunTarget {
    /// The outputs folder of a figure run (`--out`, or the scale's default), absolute.
    pub fn figure_out(&self) -> Result<PathBuf> {
        let out = self.out.clone().unwrap_or_else(|| default_figure_dir(self.scale));
        Ok(if out.is_absolute() { out } else { std::env::current_dir()?.join(out) })
    }

    /// The plan of figures `ids` at this target, their records going to `out_dir`.
    pub fn plan_request(&self, ids: &[String], out_dir: PathBuf) -> crossling::grid::plan::PlanRequest {
        crossling::grid::plan::PlanRequest {
            figures: ids.to_vec(),
            scale: self.scale,
            device: self.device.clone(),
            seed: self.seed,
            seeds: self.seeds,
            models_dir: crossling::train::model_cache::models_root(),
            out_dir,
            scripts_dir: figures::scripts_dir(),
        }
    }
}

/// Options shared by `figure` and `run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    target: RunTarget,
    /// Retrain and re-extract instead of using cached models.
    #[arg(long)]
    fresh: bool,
    /// Replace a record of another scale in the outputs folder (refused otherwise).
    #[arg(long)]
    force: bool,
    /// A model for scripts that accept one, as NAME=DIR (e.g. mbert=/models/bert-base-multilingual-cased) or
    /// NAME=REGISTRY-NAME (e.g. real=e5-small, fetched into the model cache on first use); repeatable.
    #[arg(long = "model")]
    models: Vec<String>,
}

/// Figure ids as given, `all` expanded to every figure with a script.
pub fn figure_ids(ids: &[String]) -> Vec<String> {
    if ids == ["all"] {
        figures::runnable(&figures::scripts_dir()).iter().map(|f| f.id.to_string()).collect()
    } else {
        ids.to_vec()
    }
}

#[derive(Args)]
pub struct FigureArgs {
    /// `list`, `all`, or figure ids (fig7, liu-fig7, …).
    #[arg(required = true)]
    ids: Vec<String>,
    #[command(flatten)]
    run: RunArgs,
    /// Train and fine-tune in N parallel one-thread processes (the figures planned as a job graph and run by
    /// `grid run`; the plan and job logs go to OUT/logs/); 1: everything in this process.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// With `list`: print the registry (src/figures/registry.rs) as JSON, for other tools.
    #[arg(long)]
    json: bool,
    /// With `list`: rewrite what is made from the registry: README.md's figure table (with the claims and times of
    /// the records in figures/) and notebooks/figures.json (read by notebooks/build.py).
    #[arg(long, conflicts_with = "json")]
    write: bool,
}

#[derive(Args)]
pub struct ScriptArgs {
    /// A Rhai script (see scripts/ for examples).
    script: PathBuf,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args)]
pub struct PlotArgs {
    /// Records to re-render: NAME reads NAME.json in the folder and writes NAME.png, NAME.md, … beside it.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Folder holding ID.json (default: the project's figures/).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn figures_dir() -> PathBuf {
    crossling::paths::beside_crate("figures")
}

/// Where `figure` writes at `scale` unless `--out` says otherwise: the reference runs live in `figures/` (`cpu`)
/// and `figures/paper/`; anything else goes to `out/<scale>/` of the project, so a smoke run never replaces them.
pub(super) fn default_figure_dir(scale: Scale) -> PathBuf {
    match scale {
        Scale::Cpu => figures_dir(),
        Scale::Paper => figures_dir().join("paper"),
        other => crossling::paths::beside_crate("out").join(other.name()),
    }
}

fn options(a: &RunArgs, default_out: PathBuf) -> Result<RunOptions> {
    let mut given = BTreeMap::new();
    for m in &a.models {
        match m.split_once('=') {
            Some((name, dir)) if !name.is_empty() && !dir.is_empty() => {
                // A registry name (e5-small) stands for its fetched folder.
                given.insert(name.to_string(), crossling::model::registry::resolve(dir)?);
            }
            _ => bail!("--model expects NAME=DIR, got '{m}'"),
        }
    }
    let t = &a.target;
    Ok(RunOptions {
        scale: t.scale,
        seed: t.seed,
        compute: Compute::resolve(&t.device, Precision::Auto)?,
        fresh: a.fresh,
        out_dir: t.out.clone().unwrap_or(default_out),
        scripts_dir: figures::scripts_dir(),
        given_models: given,
        seeds: t.seeds,
        force: a.force,
        models_dir: crossling::train::model_cache::models_root(),
    })
}

fn report(rec: &FigureRecord, out: &Path) {
    println!(
        "{}: {} ({:.1} s, {} scale) -> {}",
        rec.id,
        rec.title,
        rec.provenance.wall_time_s,
        rec.provenance.scale,
        out.join(format!("{}.json", rec.id)).display()
    );
}

/// `crossling figure …`.
pub fn figure(a: FigureArgs) -> Result<()> {
    let scripts = figures::scripts_dir();
    if a.ids == ["list"] {
        return list(&a, &scripts);
    }
    if a.json || a.write {
        bail!("--json and --write go with `figure list`");
    }
    let ids = figure_ids(&a.ids);
    let opts = options(&a.run, default_figure_dir(a.run.target.scale))?;
    if a.workers > 1 {
        return with_workers(&ids, &a, &opts);
    }
    for id in &ids {
        figures::info(id)?;
        let Some(script) = figures::script(&scripts, id) else {
            bail!(
                "figure {id} has no script yet ({}/{id}.rhai); `crossling figure list` shows which exist",
                scripts.display()
            );
        };
        let rec = run_script(&script, id, &opts)?;
        report(&rec, &opts.out_dir);
    }
    Ok(())
}

/// `crossling figure list [--json | --write]`: the registry as a table or JSON, or the files made from it rewritten.
fn list(a: &FigureArgs, scripts: &Path) -> Result<()> {
    if a.json {
        print!("{}", figures::registry_json());
    } else if a.write {
        for (path, text) in registry_files::generated(crossling::paths::crate_dir())? {
            if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
                println!("figure list: {} is up to date", path.display());
                continue;
            }
            crossling::atomic_file::write_atomic(&path, text)?;
            println!("figure list: wrote {}", path.display());
            if path.extension().is_some_and(|e| e == "json") {
                println!("  now regenerate the notebooks from it: .venv/bin/python notebooks/build.py");
            }
        }
    } else {
        println!("{:<17} {:<21} {:<8} title", "id", "reproduces", "script");
        for f in FIGURES {
            let has = if figures::script(scripts, f.id).is_some() { "yes" } else { "not yet" };
            println!("{:<17} {:<21} {:<8} {}", f.id, f.reference(), has, f.title);
        }
    }
    Ok(())
}

/// `figure IDS --workers N`: plan the figures and run the plan with N one-thread workers (`crossling grid run`).
fn with_workers(ids: &[String], a: &FigureArgs, opts: &RunOptions) -> Result<()> {
    use crossling::grid::local::{run_local, LocalOptions};
    use crossling::grid::plan::make_plan;
    if !opts.given_models.is_empty() || opts.fresh {
        bail!("--workers runs cached jobs: it takes neither --model nor --fresh");
    }
    let out = a.run.target.figure_out()?;
    for id in ids {
        if opts.out_dir.join(format!("{id}.json")).is_file() && !opts.force {
            let old = FigureRecord::load(&opts.out_dir.join(format!("{id}.json")))?;
            if old.provenance.scale != opts.scale.name() {
                bail!(
                    "{}/{id}.json holds a record at scale '{}': choose another --out, or pass --force",
                    out.display(),
                    old.provenance.scale
                );
            }
        }
    }
    let req = a.run.target.plan_request(ids, out.clone());
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs)?;
    let plan_path = logs.join(format!("plan-{}.json", ids.join("-")));
    make_plan(&req)?.save(&plan_path)?;
    let local = LocalOptions {
        workers: a.workers,
        threads_per_worker: 1,
        gpus: Vec::new(),
        exe: std::env::current_exe()?,
        log_dir: logs.join("jobs"),
        progress: true,
    };
    let summary = run_local(&plan_path, &local)?;
    for id in ids {
        let rec = FigureRecord::load(&out.join(format!("{id}.json")))?;
        report(&rec, &out);
    }
    eprintln!("{} job(s) in {} planning pass(es); plan {}", summary.ran.len(), summary.passes, plan_path.display());
    Ok(())
}

/// `crossling run SCRIPT`.
pub fn run(a: ScriptArgs) -> Result<()> {
    let id = a.script.file_stem().and_then(|s| s.to_str()).unwrap_or("run").to_string();
    let opts = options(&a.run, PathBuf::from("outputs"))?;
    let rec = run_script(&a.script, &id, &opts)?;
    report(&rec, &opts.out_dir);
    Ok(())
}

/// `crossling plot ID…`.
pub fn plot(a: PlotArgs) -> Result<()> {
    let out = a.out.unwrap_or_else(figures_dir);
    for id in &a.ids {
        let rec = FigureRecord::load(&out.join(format!("{id}.json")))?;
        for f in render_record_as(&rec, &out, id)? {
            println!("wrote {}", f.display());
        }
    }
    Ok(())
}
