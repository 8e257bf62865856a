//! The `crossling` command line, one file per command group. Library errors carry file, line and cause; here
//! they become one message and a non-zero exit.
use clap::{Parser, Subcommand};

mod anchors;
mod data;
mod export;
mod features;
mod info;
mod train;

#[derive(Parser)]
#[command(
    name = "crossling",
    version,
    about = "Cross-lingual structure in masked language models: data, models, analyses, figures"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Datasets: list, verify, fetch, count, and build pre-training corpora.
    #[command(subcommand)]
    Data(data::DataCommand),
    /// Pre-train a masked language model from a run config (corpora → tokenizer → MLM training).
    Train(train::TrainArgs),
    /// Anchor statistics of a trained tokenizer on two languages' corpora: shared token types and their share.
    Anchors(anchors::AnchorsArgs),
    /// Every layer's hidden states for each line of a text file, ragged, in one safetensors file.
    Features(features::FeaturesArgs),
    /// Export a model (or one language's view) as a Hugging Face BertForMaskedLM folder with its tokenizer.
    Export(export::ExportArgs),
    /// Print the crossling version, the linked libtorch and the devices it sees.
    Info,
}

impl Cli {
    /// Runs the parsed command.
    pub fn dispatch(self) -> anyhow::Result<()> {
        match self.command {
            Command::Data(cmd) => data::run(cmd),
            Command::Train(args) => train::run(args),
            Command::Anchors(args) => anchors::run(args),
            Command::Features(args) => features::run(args),
            Command::Export(args) => export::run(args),
            Command::Info => info::run(),
        }
    }
}
