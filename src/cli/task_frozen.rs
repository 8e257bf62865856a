//! `crossling task nli-frozen`: zero-shot XNLI with one classifier on a frozen representation — a model's layers,
//! or static vectors of its tokens (`crossling::tasks::frozen_nli`, Liu et al. 2020 §3.1.2).
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

use crossling::data::resolve::DataRoots;
use crossling::device::{Compute, Precision};
use crossling::tasks::frozen_nli::{Frozen, FrozenNliConfig};
use crossling::tasks::frozen_nli_transfer::{run_frozen_nli, FrozenNliResult, RepresentationInfo};
use crossling::tasks::nli_transfer::{default_langs, load_nli_data, xnli_languages};
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
}

fn config(a: &FrozenNliArgs) -> Result<FrozenNliConfig> {
    let mut c = FrozenNliConfig::at(a.scale);
    c.lr = a.lr.unwrap_or(c.lr);
    c.batch_size = a.batch.unwrap_or(c.batch_size);
    c.epochs = a.epochs.unwrap_or(c.epochs);
    c.lstm_hidden = a.lstm_hidden.unwrap_or(c.lstm_hidden);
    c.seed = a.seed.unwrap_or(c.seed);
    if let Some(m) = &a.max_train {
        c.max_train = match m.trim() {
            "all" => None,
            n => Some(n.parse().map_err(|_| anyhow::anyhow!("--max-train: '{n}' is not a number or `all`"))?),
        };
    }
    c.validate()?;
    Ok(c)
}

pub fn nli_frozen(a: FrozenNliArgs) -> Result<()> {
    let cfg = config(&a)?;
    let compute = Compute::resolve(&a.device, Precision::Auto)?;
    let catalog = super::task::load_catalog()?;
    let known = xnli_languages(&catalog)?;
    let (m, langs) =
        super::task::open_model(&a.model, a.langs.as_deref(), compute, "XNLI", &known, |m| default_langs(m, &known))?;
    if let Some(l) = langs.iter().find(|l| !known.contains(l)) {
        anyhow::bail!("no XNLI dev set for language '{l}' (the mirror has {})", known.join(", "));
    }
    if let Some(own) = m.tokenizer.languages() {
        if let Some(l) = langs.iter().find(|l| !own.contains(l)) {
            anyhow::bail!("model {} has no language '{l}' (its languages: {})", a.model.display(), own.join(", "));
        }
    }
    let (frozen, info) = match &a.vectors {
        None => {
            let info = RepresentationInfo {
                name: a.model.display().to_string(),
                kind: "model".into(),
                source: format!("{}:{}", m.source.kind.name(), m.source.weights_sha256),
                layers: m.config.layers + 1,
                dim: m.config.hidden,
            };
            (Frozen::Contextual(m), info)
        }
        Some(path) => {
            let v = WordVectors::load(path).with_context(|| format!("loading vectors {}", path.display()))?;
            let sha = crossling::model::checkpoint::sha256_file(path)?;
            let info = RepresentationInfo {
                name: path.display().to_string(),
                kind: "static".into(),
                source: format!("file-sha256:{sha}"),
                layers: 1,
                dim: v.dim(),
            };
            (Frozen::from_static(&v, m.tokenizer, compute.device), info)
        }
    };
    let data = load_nli_data(&catalog, &DataRoots::from_env(), &langs)?;
    let r = run_frozen_nli(frozen, info, &data, &langs, &cfg, compute, !a.json)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
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
