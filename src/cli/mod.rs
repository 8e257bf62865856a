//! The `crossling` command line, one file per command group. Library errors carry file, line and cause; here
//! they become one message and a non-zero exit.
use clap::{Parser, Subcommand};

mod anchors;
mod bench;
mod data;
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
    /// Benchmarks: `bench train` (training tokens/s of crossling vs PyTorch eager, FLOP/s vs a measured peak).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
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
            Command::Bench(cmd) => bench::run(cmd),
            Command::Info => info::run(),
        }
    }
}
