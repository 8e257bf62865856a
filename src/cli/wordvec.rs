//! `crossling wordvec train`: static word vectors (word2vec, fastText-style, GloVe) trained on a pre-training run's
//! own corpora — the run's subword tokens (Liu et al. 2020's "same data, same tokens") or whitespace words — and
//! written as `.vec` (word2vec / fastText text format) or `.safetensors` (vectors + vocabulary + provenance).
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use crossling::wordvec::train::{train_static, StaticKind};
use crossling::wordvec::training_text::{read_run_corpus, Unit};

#[derive(Subcommand)]
pub enum WordvecCommand {
    /// Train static vectors on a run folder's training corpora (`corpora/LANG.train.txt`).
    #[command(after_help = "Example:\n  crossling wordvec train --run runs/en-fr --kind fasttext --out en-fr.vec")]
    Train(TrainArgs),
}

#[derive(Args)]
pub struct TrainArgs {
    /// A pre-training run folder (made by `crossling train`, or a cached model of the figures).
    #[arg(long)]
    run: PathBuf,
    /// word2vec, fasttext or glove.
    #[arg(long)]
    kind: String,
    /// subword (the run's tokens) or word (whitespace words).
    #[arg(long, default_value = "subword")]
    unit: String,
    /// Comma-separated languages trained jointly (default: all of the run's).
    #[arg(long)]
    langs: Option<String>,
    /// Sentences per language (default: all).
    #[arg(long)]
    max_sentences: Option<usize>,
    /// Words seen fewer times are dropped (default 5 for words, 1 for subwords).
    #[arg(long)]
    min_count: Option<u64>,
    /// A setting of the kind, KEY=VALUE (JSON value or plain string), repeatable: `--set dim=128 --set arch=cbow`.
    #[arg(long = "set")]
    settings: Vec<String>,
    /// Output: FILE.vec or FILE.safetensors.
    #[arg(long)]
    out: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn settings(pairs: &[String]) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut out = serde_json::Map::new();
    for p in pairs {
        let Some((k, v)) = p.split_once('=') else { bail!("--set {p:?}: expected KEY=VALUE, e.g. dim=128") };
        let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        out.insert(k.trim().to_string(), value);
    }
    Ok(out)
}

/// Runs `wordvec train`.
pub fn run(cmd: WordvecCommand) -> Result<()> {
    let WordvecCommand::Train(a) = cmd;
    let ext = a.out.extension().and_then(|e| e.to_str()).unwrap_or_default();
    if !matches!(ext, "vec" | "safetensors") {
        bail!("--out {}: expected a .vec or .safetensors file", a.out.display());
    }
    let kind: StaticKind = a.kind.parse()?;
    let unit: Unit = a.unit.parse()?;
    let config = settings(&a.settings)?;
    let langs: Vec<String> = match &a.langs {
        Some(l) => l.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        None => {
            crossling::train::run::RunConfig::load(&a.run.join("run.toml"))
                .with_context(|| format!("{} is not a run folder (no readable run.toml)", a.run.display()))?
                .languages
        }
    };
    let min_count = a.min_count.unwrap_or(if unit == Unit::Word { 5 } else { 1 });
    let started = std::time::Instant::now();
    let corpus = read_run_corpus(&a.run, &langs, unit, a.max_sentences, min_count)?;
    eprintln!(
        "corpus: {} sentences, {} tokens, {} words (min count {min_count}) of {}",
        corpus.n_sentences(),
        corpus.n_tokens(),
        corpus.vocab.len(),
        langs.join(", ")
    );
    let scratch = tempfile_dir(&a.out)?;
    let (mut vectors, report) = train_static(kind, &corpus, &config, &scratch, !a.json)?;
    let _ = std::fs::remove_dir_all(&scratch);
    let report = serde_json::json!({
        "run": a.run.display().to_string(), "kind": kind, "unit": unit, "langs": langs, "min_count": min_count,
        "sentences": corpus.n_sentences(), "tokens": corpus.n_tokens(), "vocabulary": corpus.vocab.len(),
        "seconds": started.elapsed().as_secs_f64(), "trainer": report,
        "crossling": env!("CARGO_PKG_VERSION"),
    });
    vectors.metadata.insert("report".into(), report.to_string());
    if ext == "vec" {
        vectors.save_vec(&a.out)?;
    } else {
        vectors.save_safetensors(&a.out)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{}: {} vectors of dimension {} ({:.1} s)",
            a.out.display(),
            vectors.len(),
            vectors.dim(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// A scratch folder beside the output (GloVe spills its co-occurrence runs there), removed afterwards.
fn tempfile_dir(out: &std::path::Path) -> Result<PathBuf> {
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let dir = parent.join(format!(".wordvec-scratch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}
