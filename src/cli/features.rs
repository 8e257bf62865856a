//! `crossling features`: every layer's hidden states for each line of a text file, ragged, in one safetensors
//! file (see `crossling::features::dump` for the layout).
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

use crossling::device::parse_device;
use crossling::features::dump::{dump_hidden_states, pooling_name, DumpOptions};
use crossling::features::Pooling;
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
    /// Pool instead of writing every token: sentence (mean of a line's subwords, specials excluded), word-mean or
    /// word-first (one row per word); none writes every token.
    #[arg(long, default_value = "none")]
    pool: String,
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
    let pool = match a.pool.as_str() {
        "none" => None,
        "sentence" => Some(Pooling::SentenceMean),
        "word-mean" => Some(Pooling::WordMean),
        "word-first" => Some(Pooling::WordFirst),
        other => bail!("unknown --pool '{other}': expected none, sentence, word-mean or word-first"),
    };
    let opts = DumpOptions { batch_tokens: a.batch_tokens, max_len: a.max_len, truncate: a.truncate, pool };
    let s = dump_hidden_states(&m, &a.text, &a.lang, &opts, &a.out)?;
    println!(
        "wrote {}: {} lines, {} tokens, {} rows ({}), {} layers + embeddings, width {}{}",
        s.out.display(),
        s.lines,
        s.tokens,
        s.rows,
        if pool.is_none() { "every token" } else { pooling_name(pool) },
        s.layers,
        s.hidden,
        if s.truncated_lines > 0 { format!(", {} lines truncated", s.truncated_lines) } else { String::new() }
    );
    Ok(())
}
