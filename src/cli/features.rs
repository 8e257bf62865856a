//! `crossling features`: every layer's hidden states for each line of a text file, ragged, in one safetensors
//! file (see `crossling::model::dump` for the layout).
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

use crossling::device::parse_device;
use crossling::model::dump::{dump_hidden_states, DumpOptions};
use crossling::model::LoadedModel;

#[derive(Args)]
pub struct FeaturesArgs {
    /// Model folder: a crossling checkpoint or run, or a Hugging Face BERT folder.
    #[arg(long)]
    model: PathBuf,
    /// Text file, one sequence per line.
    #[arg(long)]
    text: PathBuf,
    /// Language of the text (selects per-language parameters and vocabulary; `zh` is jieba-segmented for crossling
    /// models).
    #[arg(long)]
    lang: String,
    /// Output `.safetensors` file.
    #[arg(long)]
    out: PathBuf,
    /// Padded tokens per forward pass (memory bound).
    #[arg(long, default_value_t = 8192)]
    batch_tokens: usize,
    /// Longest sequence in tokens, [CLS] and [SEP] included (default and upper bound: the model's positions).
    #[arg(long)]
    max_len: Option<usize>,
    /// Cut longer lines instead of stopping with an error.
    #[arg(long)]
    truncate: bool,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: String,
}

pub fn run(a: FeaturesArgs) -> Result<()> {
    let device = parse_device(&a.device)?;
    let m = LoadedModel::open(&a.model, device).with_context(|| format!("loading model {}", a.model.display()))?;
    for note in &m.notes {
        eprintln!("note: {note}");
    }
    let opts = DumpOptions { batch_tokens: a.batch_tokens, max_len: a.max_len, truncate: a.truncate };
    let s = dump_hidden_states(&m, &a.text, &a.lang, &opts, &a.out)?;
    println!(
        "wrote {}: {} lines, {} tokens, {} layers + embeddings, width {}{}",
        s.out.display(),
        s.lines,
        s.tokens,
        s.layers,
        s.hidden,
        if s.truncated_lines > 0 { format!(", {} lines truncated", s.truncated_lines) } else { String::new() }
    );
    Ok(())
}
