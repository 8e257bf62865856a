//! `crossling bench …`: benchmarks, not tests. Each times crossling's implementation against a reference run in the
//! same command on the same data, shape and threads, and prints the ratio (machines differ from session to session;
//! only ratios from one run compare). The Python references sit beside them in `reference/` and run from the
//! project's `.venv`.
//!
//! - [`train`]: MLM training tokens/s vs PyTorch eager `BertForMaskedLM` (`reference/bench_train.py`).
//! - [`finetune`]: NLI fine-tuning pairs/s vs the same head in PyTorch (`reference/bench_finetune.py`).
//! - [`word2vec`]: word2vec words/s and quality vs gensim (`reference/bench_word2vec.py`).
//! - [`analysis`]: CKA and CSLS vs numpy / PyTorch (`reference/bench_cka.py`, `reference/bench_csls.py`).
//! - [`features`]: hidden-state extraction vs Hugging Face `transformers` (`reference/bench_features.py`).
//! - [`common`]: the shared options and helpers of the benchmarks.
use anyhow::Result;
use clap::Subcommand;

pub mod analysis;
pub mod common;
pub mod features;
pub mod finetune;
pub mod train;
pub mod word2vec;

/// Every benchmark (the groups flattened into one `bench` command).
#[derive(Subcommand)]
pub enum BenchCommand {
    #[command(flatten)]
    Train(train::BenchCommand),
    #[command(flatten)]
    Analysis(analysis::BenchAnalysisCommand),
}

/// Runs one benchmark.
pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Train(cmd) => train::run(cmd),
        BenchCommand::Analysis(cmd) => analysis::run(cmd),
    }
}
