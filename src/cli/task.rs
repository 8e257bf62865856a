//! `crossling task …`: fine-tuned tasks for zero-shot cross-lingual transfer (Wu, Conneau et al. 2020 §3, Table 1).
//! `task nli` fine-tunes on English MNLI and reports XNLI dev accuracy per language (`crossling::tasks::nli`,
//! `crossling::tasks::nli::transfer`). `nli`, `ner` and `parse` run through `crossling::tasks::run`, the library call
//! the scripts' `task::run` makes, so they read and write the same result cache (`--fresh` recomputes).
use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use super::task_common::{report, run_cli_task, training_line, FinetuneArgs};
use crossling::tasks::nli::transfer::NliResult;
use crossling::tasks::nli::MdsEval;
use crossling::tasks::run::{JsonMap, TaskKind};

#[derive(Subcommand)]
pub enum TaskCommand {
    /// Zero-shot NLI: fine-tune on English MNLI (best epoch by a held-out English dev set), report XNLI dev accuracy
    /// for each language.
    #[command(after_help = "Example:\n  crossling task nli --model runs/en-fr/best --langs fr --scale cpu")]
    Nli(NliArgs),
    /// Zero-shot NER: fine-tune a BIO tagger on English PAN-X (best state by English dev span F1), report PAN-X dev
    /// span F1 for each language.
    #[command(after_help = "Example:\n  crossling task ner --model runs/en-fr/best --langs fr --scale cpu")]
    Ner(super::task_ner::NerArgs),
    /// Zero-shot dependency parsing: a biaffine parser fine-tuned on English UD (best state by English dev LAS),
    /// UAS / LAS on the GSD test set of each language.
    #[command(after_help = "Example:\n  crossling task parse --model runs/en-fr/best --langs fr --scale cpu")]
    Parse(super::task_parse::ParseArgs),
    /// Zero-shot NLI with one classifier (BiLSTM-max + MLP) trained on English MNLI on top of a frozen
    /// representation: the model's layers, or static vectors of its tokens (--vectors); XNLI dev accuracy per language.
    #[command(after_help = "Example:\n  crossling task nli-frozen --model runs/en-fr/best --langs fr --scale cpu")]
    NliFrozen(super::task_frozen::FrozenNliArgs),
}

#[derive(Args)]
pub struct NliArgs {
    #[command(flatten)]
    pub common: FinetuneArgs,
    /// Also evaluate each non-English language with the mean-difference shift added at test time (Liu et al. 2020,
    /// Table 4): α chosen on the first half of its XNLI dev pairs, reported on the rest.
    #[arg(long)]
    pub mds: bool,
    /// The shifted layer (default: the frozen bottom, else the middle layer).
    #[arg(long, requires = "mds")]
    pub mds_layer: Option<usize>,
    /// Candidate α values, comma-separated (default 0,0.25,0.5,0.75,1,1.5,2).
    #[arg(long, requires = "mds")]
    pub mds_alphas: Option<String>,
}

pub fn run(cmd: TaskCommand) -> Result<()> {
    match cmd {
        TaskCommand::Nli(a) => nli(a),
        TaskCommand::Ner(a) => super::task_ner::ner(a),
        TaskCommand::Parse(a) => super::task_parse::parse(a),
        TaskCommand::NliFrozen(a) => super::task_frozen::nli_frozen(a),
    }
}

/// The command-line settings as config fields over the NLI preset.
fn overrides(args: &NliArgs) -> Result<JsonMap> {
    let mut o = args.common.overrides()?;
    if args.mds {
        let mut m = MdsEval { layer: args.mds_layer, ..MdsEval::default() };
        if let Some(text) = &args.mds_alphas {
            m.alphas = text
                .split(',')
                .map(|x| x.trim().parse::<f64>().map_err(|_| anyhow::anyhow!("--mds-alphas: '{x}' is not a number")))
                .collect::<Result<_>>()?;
        }
        o.insert("mds".into(), serde_json::to_value(m)?);
    }
    Ok(o)
}

fn nli(args: NliArgs) -> Result<()> {
    let over = overrides(&args)?;
    let a = &args.common;
    let (result, files) = run_cli_task(a, TaskKind::Nli, over, None, None)?;
    let mut r: NliResult = serde_json::from_value(result).context("reading the NLI result")?;
    r.files = files;
    report(a, &r, print_summary)
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
        r.config.finetune.batch_size,
        r.config.finetune.lr,
        r.train_seconds
    );
    println!("{}", training_line(&r.loss, &r.freeze));
    println!("English dev ({} MNLI pairs held out): {:.4} (kept step {})", r.dev_pairs, r.en_dev_accuracy, r.best_step);
    for (lang, a) in &r.xnli {
        let cut =
            if a.truncated > 0 { format!(", {} cut to {} tokens", a.truncated, r.max_len) } else { String::new() };
        println!("XNLI dev {lang}: {:.4} ({} pairs{cut})", a.accuracy, a.pairs);
    }
    for (lang, m) in &r.mds {
        println!(
            "MDS {lang} at layer {}: α {} chosen on {} pairs; the other {}: {:.4} without, {:.4} with the shift (‖D‖ {:.3})",
            m.layer, m.best_alpha, m.select_pairs, m.test_pairs, m.test_accuracy_without, m.test_accuracy_with, m.shift_norm
        );
    }
}
