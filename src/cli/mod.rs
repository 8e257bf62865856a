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
    #[command(after_help = "Example:\n  crossling train --preset default --langs en-fr --scale cpu --out runs/en-fr")]
    Train(train::TrainArgs),
    /// Anchor statistics of a trained tokenizer on two languages' corpora: shared token types and their share,
    /// tokens per word, [UNK] share, Han entries of the vocabulary.
    #[command(
        after_help = "Example:\n  crossling anchors --tokenizer runs/en-fr/tokenizer --a en=en.txt --b fr=fr.txt"
    )]
    Anchors(anchors::AnchorsArgs),
    /// Representation analysis: CKA, Procrustes alignment, word and sentence retrieval, means of language / MDS.
    #[command(subcommand)]
    Analyse(analyse::AnalyseCommand),
    /// Benchmarks that print measured ratios against a reference run (train, finetune, cka, csls, features); not tests.
    #[command(subcommand)]
    Bench(crate::bench::BenchCommand),
    /// Every layer's hidden states for each line of a text file, ragged, in one safetensors file.
    #[command(
        after_help = "Example:\n  crossling features --model e5-small --text en.txt --lang en --pool sentence --out en.safetensors"
    )]
    Features(features::FeaturesArgs),
    /// Export a model (or one language's view) as a Hugging Face BertForMaskedLM folder with its tokenizer.
    #[command(after_help = "Example:\n  crossling export --model runs/en-fr/best --lang fr --out hf-fr")]
    Export(export::ExportArgs),
    /// Regenerate figures and tables of the studies from their scripts: `figure list [--json | --write] | all | ID…`.
    #[command(after_help = "Example:\n  crossling figure fig7 --workers 2   (crossling figure list: every id)")]
    Figure(figure::FigureArgs),
    /// Run one's own Rhai experiment script (same namespaces and constants as the figures).
    #[command(after_help = "Example:\n  crossling run scripts/real/language.rhai --model real=e5-small --out outputs")]
    Run(figure::ScriptArgs),
    /// Re-render figures from their JSON records alone (no recomputation).
    #[command(after_help = "Example:\n  crossling plot fig7")]
    Plot(figure::PlotArgs),
    /// Every claim of both papers with the paper's numbers, ours with intervals, seeds and verdicts (from the
    /// records); `--write` regenerates REPRODUCTION.md.
    #[command(after_help = "Example:\n  crossling claims --write")]
    Claims(claims::ClaimsArgs),
    /// Tasks for zero-shot cross-lingual transfer: `task nli | ner | parse | nli-frozen`.
    #[command(subcommand)]
    Task(task::TaskCommand),
    /// Static word vectors (word2vec, fastText-style, GloVe) trained on a run's own corpora: `wordvec train`.
    #[command(subcommand)]
    Wordvec(wordvec::WordvecCommand),
    /// Plan figures as a graph of cached jobs (pre-trainings, fine-tunings, the figure) into a JSON plan file; a
    /// figure whose every job is already cached is run to its record while planning.
    #[command(after_help = "Example:\n  crossling plan table1 --scale cpu --plan plan.json")]
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
    #[command(after_help = "Example:\n  crossling info")]
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

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every command a user can run says what it does and shows one worked example in its `--help`.
    #[test]
    fn every_command_has_an_about_and_an_example() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>, leaves: &mut usize) {
            let path = format!("{path} {}", cmd.get_name());
            let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|c| c.get_name() != "help").collect();
            if subs.is_empty() {
                *leaves += 1;
                let example = cmd.get_after_help().map(|h| h.to_string()).unwrap_or_default();
                if cmd.get_about().is_none() || !example.starts_with("Example:\n  crossling ") {
                    missing.push(path.trim().to_string());
                }
            }
            for c in subs {
                walk(c, &path, missing, leaves);
            }
        }
        let (mut missing, mut leaves) = (Vec::new(), 0);
        walk(&Cli::command(), "", &mut missing, &mut leaves);
        assert!(leaves >= 38, "{leaves} commands found");
        assert!(missing.is_empty(), "commands without an about line or an `Example:` after their help: {missing:?}");
    }
}
