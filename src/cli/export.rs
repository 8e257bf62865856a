//! `crossling export`: a crossling model (or one language's view of a bilingual one) as a Hugging Face
//! `BertForMaskedLM` folder with its tokenizer.
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

use crossling::model::hf::export_hf;
use crossling::model::LoadedModel;

#[derive(Args)]
pub struct ExportArgs {
    /// Model folder: a crossling checkpoint or run (or a Hugging Face folder, re-exported).
    #[arg(long)]
    model: PathBuf,
    /// Language view to export (required for per-language parameters or vocabularies).
    #[arg(long)]
    lang: Option<String>,
    /// New output folder (must not exist).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(a: ExportArgs) -> Result<()> {
    let m = LoadedModel::open(&a.model, tch::Device::Cpu)
        .with_context(|| format!("loading model {}", a.model.display()))?;
    let s = export_hf(&m.vs, &m.config, &m.tokenizer, a.lang.as_deref(), &a.out)?;
    println!(
        "wrote {}: BertForMaskedLM, {} tensors, vocabulary {}{}",
        s.out.display(),
        s.tensors,
        s.vocab_size,
        s.lang.map(|l| format!(", language view '{l}'")).unwrap_or_default()
    );
    Ok(())
}
