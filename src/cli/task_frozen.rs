//! `crossling task nli-frozen`: zero-shot XNLI with one classifier on a frozen representation — a model's layers,
//! or static vectors of its tokens (`crossling::tasks::frozen_nli`, Liu et al. 2020 §3.1.2). It runs through
//! `crossling::tasks::run_frozen`, the library call the scripts' `task::frozen_nli` makes, so both read and write
//! the same result cache (`--fresh` recomputes).
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

use crossling::data::resolve::DataRoots;
use crossling::device::{Compute, Precision};
use crossling::model::LoadedModel;
use crossling::tasks::frozen_nli::transfer::FrozenNliResult;
use crossling::tasks::run::JsonMap;
use crossling::tasks::run_frozen::{run_frozen_nli_task, FrozenNliRequest, Representation};
use crossling::wordvec::WordVectors;
use crossling::Scale;

#[derive(Args)]
pub struct FrozenNliArgs {
    /// Model folder (crossling checkpoint or run, or Hugging Face BERT): read frozen, or, with --vectors, only its
    /// tokenizer.
    #[arg(long)]
    pub model: PathBuf,
    /// Static vectors of the model's subword tokens (.vec or .safetensors, e.g. from `crossling wordvec train
    /// --unit subword`): the classifier reads these instead of the model's layers.
    #[arg(long)]
    pub vectors: Option<PathBuf>,
    /// Evaluation languages, comma-separated; default: every XNLI language the model reads.
    #[arg(long)]
    pub langs: Option<String>,
    /// Preset: smoke, cpu or paper.
    #[arg(long, value_enum, default_value_t = Scale::Cpu)]
    pub scale: Scale,
    /// Adam's learning rate.
    #[arg(long)]
    pub lr: Option<f64>,
    /// Pairs per step.
    #[arg(long)]
    pub batch: Option<usize>,
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Cap on English training pairs, or `all`.
    #[arg(long)]
    pub max_train: Option<String>,
    /// Width of each LSTM direction.
    #[arg(long)]
    pub lstm_hidden: Option<usize>,
    /// Seed of the data split, the classifier's initialisation, the batch order and dropout.
    #[arg(long)]
    pub seed: Option<u64>,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Train again instead of reading a cached result (results are cached in `$CROSSLING_MODELS/tasks/` with the
    /// figures' runs, by the representation and every resolved setting).
    #[arg(long)]
    pub fresh: bool,
}

/// The options as overrides of the preset (`--max-train all` lifts the cap).
fn overrides(a: &FrozenNliArgs) -> Result<JsonMap> {
    let mut o = JsonMap::new();
    let mut set = |k: &str, v: serde_json::Value| {
        o.insert(k.into(), v);
    };
    if let Some(v) = a.lr {
        set("lr", v.into());
    }
    if let Some(v) = a.batch {
        set("batch_size", v.into());
    }
    if let Some(v) = a.epochs {
        set("epochs", v.into());
    }
    if let Some(v) = a.lstm_hidden {
        set("lstm_hidden", v.into());
    }
    if let Some(v) = a.seed {
        set("seed", v.into());
    }
    if let Some(m) = &a.max_train {
        let cap = match m.trim() {
            "all" => serde_json::Value::Null,
            n => n.parse::<u64>().map_err(|_| anyhow::anyhow!("--max-train: '{n}' is not a number or `all`"))?.into(),
        };
        set("max_train", cap);
    }
    Ok(o)
}

pub fn nli_frozen(a: FrozenNliArgs) -> Result<()> {
    let compute = Compute::resolve(&a.device, Precision::Auto)?;
    let catalog = super::task_common::load_catalog()?;
    let roots = DataRoots::from_env();
    let models_dir = crossling::train::model_cache::models_root();
    let langs = a.langs.as_deref().map(super::task_common::parse_langs).transpose()?;
    let model = super::task_common::CliModel::new(&a.model);
    let vectors = match &a.vectors {
        None => None,
        Some(path) => {
            let v = WordVectors::load(path).with_context(|| format!("loading vectors {}", path.display()))?;
            let sha = crossling::model::checkpoint::sha256_file(path)?;
            let tok = LoadedModel::open(&a.model, compute.device)
                .with_context(|| format!("loading model {}", a.model.display()))?
                .tokenizer;
            Some((path, v, sha, tok))
        }
    };
    let representation = match &vectors {
        None => Representation::Model(&model),
        Some((path, v, sha, tok)) => Representation::Static {
            name: path.display().to_string(),
            source: format!("file-sha256:{sha}"),
            vectors: v,
            tokenizer: tok.clone(),
        },
    };
    let req =
        FrozenNliRequest { representation, langs, overrides: overrides(&a)?, seed: None, scale: a.scale, compute };
    let out = super::task_common::with_cli_context(&catalog, &roots, &models_dir, a.fresh, a.json, |ctx| {
        run_frozen_nli_task(ctx, &req)
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out.run.result)?);
    } else {
        let r: FrozenNliResult =
            serde_json::from_value(out.run.result).context("reading the cached nli-frozen result")?;
        print_summary(&r);
    }
    Ok(())
}

fn print_summary(r: &FrozenNliResult) {
    let rep = &r.representation;
    println!(
        "NLI on frozen {} ({}, {} layer(s) × {}), {}: classifier of {} parameters, {} English MNLI pairs × {} epoch(s), \
         {} steps in {:.1} s",
        rep.name,
        rep.kind,
        rep.layers,
        rep.dim,
        r.device,
        r.trainable_parameters,
        r.train_pairs,
        r.epochs,
        r.steps,
        r.train_seconds
    );
    let w: Vec<String> = r.layer_weights.iter().map(|x| format!("{x:.3}")).collect();
    println!("layer weights: {}", w.join(" "));
    println!("English dev ({} MNLI pairs held out): {:.4} (kept step {})", r.dev_pairs, r.en_dev_accuracy, r.best_step);
    for (lang, a) in &r.xnli {
        let cov = a.token_coverage.map(|c| format!(", {:.1} % of tokens with a vector", 100.0 * c)).unwrap_or_default();
        println!("XNLI dev {lang}: {:.4} ({} pairs{cov})", a.accuracy.accuracy, a.accuracy.pairs);
    }
}
