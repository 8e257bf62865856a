//! `crossling task ner`: zero-shot NER — fine-tune a BIO tagger on English PAN-X (or CoNLL-2003), report span F1 on
//! PAN-X dev per language (`crossling::tasks::ner`, `crossling::tasks::ner::transfer`).
use anyhow::{Context, Result};
use clap::Args;

use super::task_common::{report, run_cli_task, stack_line, training_line, FinetuneArgs};
use super::task_stack::StackArgs;
use crossling::tasks::ner::transfer::{NerResult, NerTrainData};
use crossling::tasks::ner::zh_script::ZhScript;
use crossling::tasks::run::TaskKind;

#[derive(Args)]
pub struct NerArgs {
    #[command(flatten)]
    pub common: FinetuneArgs,
    #[command(flatten)]
    pub stack: StackArgs,
    /// English training data: panx (PAN-X train-en / dev-en, the study's) or conll2003 (MISC trained as O).
    #[arg(long, default_value = "panx")]
    pub train_data: String,
    /// Read PAN-X Chinese in this script: simplified converts its traditional characters with OpenCC's tables (for
    /// models pre-trained on simplified text); left out, as the file gives it.
    #[arg(long, value_name = "SCRIPT")]
    pub zh_script: Option<String>,
}

/// Runs `task ner` (see [`run_cli_task`]).
pub fn ner(args: NerArgs) -> Result<()> {
    let source: NerTrainData = args.train_data.parse()?;
    let a = &args.common;
    let stack = args.stack.request(a.scale)?;
    let mut overrides = a.overrides()?;
    if let Some(script) = &args.zh_script {
        let script: ZhScript = script.parse()?;
        overrides.insert("zh_script".into(), script.name().into());
    }
    let (result, files) = run_cli_task(a, TaskKind::Ner, overrides, stack, Some(source))?;
    let mut r: NerResult = serde_json::from_value(result).context("reading the NER result")?;
    r.files = files;
    report(a, &r, print_summary)
}

fn print_summary(r: &NerResult) {
    println!(
        "NER on {} ({}, {} layers × {}), {}: {} English sentences ({:?}) × {} epoch(s), {} steps (batch {}, peak lr {:e}) in {:.1} s",
        r.model.path,
        r.model.kind,
        r.model.layers,
        r.model.hidden,
        r.device,
        r.train_sentences,
        r.train_data,
        r.epochs,
        r.steps,
        r.config.finetune.batch_size,
        r.config.finetune.lr,
        r.train_seconds
    );
    println!("{}", training_line(&r.loss, &r.freeze));
    for note in r.notes.iter().filter(|n| n.contains("simplified script")) {
        println!("{note}");
    }
    if let Some(line) = stack_line(&r.model) {
        println!("{line}");
    }
    println!("English dev ({} sentences): span F1 {:.4} (kept step {})", r.dev_sentences, r.en_dev_f1, r.best_step);
    for (lang, e) in &r.eval {
        let cut =
            if e.truncated > 0 { format!(", {} cut to {} subwords", e.truncated, r.max_len) } else { String::new() };
        println!(
            "PAN-X dev {lang}: F1 {:.4}  P {:.4}  R {:.4}  ({} sentences, {} gold spans{cut})",
            e.scores.f1, e.scores.precision, e.scores.recall, e.sentences, e.scores.counts.gold
        );
    }
}
