//! The `crossling` command line, one file per command group. Library errors carry file, line and cause; here
//! they become one message and a non-zero exit.
use clap::{Parser, Subcommand};

mod analyse;
mod analyse_lang;
mod anchors;
mod claims;
mod data;
mod export;
mod features;
mod figure;
mod grid;
mod info;
mod models;
mod task;
mod task_common;
mod task_frozen;
mod task_ner;
mod task_parse;
mod task_stack;
mod train;
mod wordvec;

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
    /// Anchor statistics of a trained tokenizer on two languages' corpora: shared token types and their share,
    /// tokens per word, [UNK] share, Han entries of the vocabulary.
    Anchors(anchors::AnchorsArgs),
    /// Representation analysis: CKA, Procrustes alignment, word and sentence retrieval, means of language / MDS.
    #[command(subcommand)]
    Analyse(analyse::AnalyseCommand),
    /// Benchmarks that print measured ratios against a reference run (train, finetune, cka, csls, features); not tests.
    #[command(subcommand)]
    Bench(crate::bench::BenchCommand),
    /// Every layer's hidden states for each line of a text file, ragged, in one safetensors file.
    Features(features::FeaturesArgs),
    /// Export a model (or one language's view) as a Hugging Face BertForMaskedLM folder with its tokenizer.
    Export(export::ExportArgs),
    /// Regenerate figures and tables of the studies from their scripts: `figure list [--json | --write] | all | ID…`.
    Figure(figure::FigureArgs),
    /// Run one's own Rhai experiment script (same namespaces and constants as the figures).
    Run(figure::ScriptArgs),
    /// Re-render figures from their JSON records alone (no recomputation).
    Plot(figure::PlotArgs),
    /// Every claim of both papers with the paper's numbers, ours with intervals, seeds and verdicts (from the
    /// records); `--write` regenerates REPRODUCTION.md.
    Claims(claims::ClaimsArgs),
    /// Tasks for zero-shot cross-lingual transfer: `task nli | ner | parse | nli-frozen`.
    #[command(subcommand)]
    Task(task::TaskCommand),
    /// Static word vectors (word2vec, fastText-style, GloVe) trained on a run's own corpora: `wordvec train`.
    #[command(subcommand)]
    Wordvec(wordvec::WordvecCommand),
    /// Plan figures as a graph of cached jobs (pre-trainings, fine-tunings, the figure) into a JSON plan file; a
    /// figure whose every job is already cached is run to its record while planning.
    Plan(grid::PlanArgs),
    /// One job of a plan: `job run ID --plan FILE`.
    #[command(subcommand)]
    Job(grid::JobCommand),
    /// Run a plan: `grid run PLAN --workers N` here, `grid submit PLAN --slurm` on a cluster, `grid status PLAN`.
    #[command(subcommand)]
    Grid(grid::GridCommand),
    /// Pretrained encoders by name: `models list | fetch NAME | path NAME | verify NAME`.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// Print the crossling version, the linked libtorch and the devices it sees.
    Info,
}

impl Cli {
    /// Runs the parsed command.
    pub fn dispatch(self) -> anyhow::Result<()> {
        match self.command {
            Command::Data(cmd) => data::run(cmd),
            Command::Train(args) => train::run(args),
            Command::Wordvec(cmd) => wordvec::run(cmd),
            Command::Anchors(args) => anchors::run(args),
            Command::Analyse(cmd) => analyse::run(cmd),
            Command::Bench(cmd) => crate::bench::run(cmd),
            Command::Features(args) => features::run(args),
            Command::Export(args) => export::run(args),
            Command::Figure(args) => figure::figure(args),
            Command::Run(args) => figure::run(args),
            Command::Plot(args) => figure::plot(args),
            Command::Claims(args) => claims::run(args),
            Command::Task(cmd) => task::run(cmd),
            Command::Plan(args) => grid::plan(args),
            Command::Job(cmd) => grid::job(cmd),
            Command::Grid(cmd) => grid::grid(cmd),
            Command::Models(cmd) => models::run(cmd),
            Command::Info => info::run(),
        }
    }
}
