//! `crossling task …`: fine-tuned tasks for zero-shot cross-lingual transfer (Wu, Conneau et al. 2020 §3, Table 1).
//! `task nli` fine-tunes on English MNLI and reports XNLI dev accuracy per language (`crossling::tasks::nli`,
//! `crossling::tasks::nli_transfer`).
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;

use crossling::data::manifest::Catalog;
use crossling::data::resolve::DataRoots;
use crossling::model::LoadedModel;
use crossling::tasks::nli::{NliConfig, NLI_SCALES};
use crossling::tasks::nli_transfer::{check_setup, default_langs, load_nli_data, run_nli, xnli_languages, NliResult};
use crossling::train::step::{Compute, Precision};

#[derive(Subcommand)]
pub enum TaskCommand {
    /// Zero-shot NLI: fine-tune on English MNLI (best epoch by a held-out English dev set), report XNLI dev accuracy
    /// for each language.
    Nli(NliArgs),
}

#[derive(Args)]
pub struct NliArgs {
    /// Model folder: a crossling checkpoint or run, or a Hugging Face BERT folder.
    #[arg(long)]
    model: PathBuf,
    /// XNLI languages to evaluate, comma-separated (en, fr, de, ru, zh); default: every XNLI language the model has.
    #[arg(long)]
    langs: Option<String>,
    /// Preset: smoke (300 pairs, 1 epoch), cpu (20,000 pairs, 2 epochs, lr 2e-4) or paper (all pairs, 3 epochs, lr
    /// 2e-5); batch 32 except smoke (16).
    #[arg(long, default_value = "cpu")]
    scale: String,
    /// Fixed learning rate (overrides the preset).
    #[arg(long)]
    lr: Option<f64>,
    /// Pairs per step.
    #[arg(long)]
    batch: Option<usize>,
    /// Passes over the training pairs.
    #[arg(long)]
    epochs: Option<usize>,
    /// Cap on English training pairs, or `all`.
    #[arg(long)]
    max_train: Option<String>,
    /// Freeze the bottom K transformer layers (language-specific parameters are always frozen).
    #[arg(long)]
    freeze_layers: Option<usize>,
    /// Freeze the embeddings too.
    #[arg(long)]
    freeze_embeddings: bool,
    /// Also evaluate on the English dev set every N steps (default: at the end of each epoch only).
    #[arg(long)]
    eval_every: Option<u64>,
    /// Seed of the train / dev split, the classifier's initialisation, the batch order and dropout.
    #[arg(long)]
    seed: Option<u64>,
    /// cpu, cuda or cuda:N (bf16 autocast on CUDA).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: TaskCommand) -> Result<()> {
    match cmd {
        TaskCommand::Nli(a) => nli(a),
    }
}

/// The preset of `--scale` with the command-line overrides.
fn config(a: &NliArgs) -> Result<NliConfig> {
    if !NLI_SCALES.contains(&a.scale.as_str()) {
        bail!("unknown --scale '{}': expected {}", a.scale, NLI_SCALES.join(", "));
    }
    let mut c = NliConfig::preset(&a.scale)?;
    c.lr = a.lr.unwrap_or(c.lr);
    c.batch_size = a.batch.unwrap_or(c.batch_size);
    c.epochs = a.epochs.unwrap_or(c.epochs);
    c.freeze_layers = a.freeze_layers.unwrap_or(c.freeze_layers);
    c.freeze_embeddings |= a.freeze_embeddings;
    c.eval_every = a.eval_every.unwrap_or(c.eval_every);
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

/// `fr,de` → `["fr", "de"]`: trimmed, lowercase, no duplicates, none empty.
fn parse_langs(text: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for l in text.split(',').map(|s| s.trim().to_ascii_lowercase()) {
        if l.is_empty() {
            bail!("--langs '{text}': empty language code (expected e.g. fr,de,ru,zh)");
        }
        if !out.contains(&l) {
            out.push(l);
        }
    }
    Ok(out)
}

fn nli(a: NliArgs) -> Result<()> {
    let cfg = config(&a)?;
    let compute = Compute::resolve(&a.device, Precision::Auto)?;
    let catalog = Catalog::load_default().context("loading data manifests")?;
    let xnli_langs = xnli_languages(&catalog)?;
    let m =
        LoadedModel::open(&a.model, compute.device).with_context(|| format!("loading model {}", a.model.display()))?;
    for note in &m.notes {
        eprintln!("note: {note}");
    }
    let langs = match &a.langs {
        Some(t) => parse_langs(t)?,
        None => default_langs(&m, &xnli_langs),
    };
    if langs.is_empty() {
        bail!("model {} has none of the XNLI languages ({})", a.model.display(), xnli_langs.join(", "));
    }
    check_setup(&m, &langs, &xnli_langs, &cfg)?;
    let data = load_nli_data(&catalog, &DataRoots::from_env(), &langs)?;
    let r = run_nli(m, &data, &langs, &cfg, compute, !a.json)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_summary(&r);
    }
    Ok(())
}

fn print_summary(r: &NliResult) {
    println!(
        "NLI on {} ({}, {} layers × {}), {}: {} English MNLI pairs × {} epoch(s), {} steps (batch {}, lr {:e}) in {:.1} s",
        r.model.path,
        r.model.kind,
        r.model.layers,
        r.model.hidden,
        r.device,
        r.train_pairs,
        r.epochs,
        r.steps,
        r.config.batch_size,
        r.config.lr,
        r.train_seconds
    );
    let (first, last) = (r.loss.first.unwrap_or(f64::NAN), r.loss.last.unwrap_or(f64::NAN));
    let tensors = r.freeze.frozen_tensors + r.freeze.trainable_tensors;
    println!("training loss {first:.3} → {last:.3}; frozen {} of {tensors} tensors", r.freeze.frozen_tensors);
    println!("English dev ({} MNLI pairs held out): {:.4} (kept step {})", r.dev_pairs, r.en_dev_accuracy, r.best_step);
    for (lang, a) in &r.xnli {
        let cut =
            if a.truncated > 0 { format!(", {} cut to {} tokens", a.truncated, r.max_len) } else { String::new() };
        println!("XNLI dev {lang}: {:.4} ({} pairs{cut})", a.accuracy, a.pairs);
    }
}
