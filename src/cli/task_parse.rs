//! `crossling task parse`: zero-shot dependency parsing — fine-tune the biaffine parser with the encoder on English
//! UD (LinES + ParTUT train, best state by EWT dev LAS), report UAS / LAS on the GSD test treebanks of fr / de / ru and
//! GSDSimp for zh (`crossling::tasks::parse`, `crossling::tasks::parse::transfer`).
use anyhow::{Context, Result};
use clap::Args;

use super::task_common::{report, run_cli_task, stack_line, training_line, FinetuneArgs};
use super::task_stack::StackArgs;
use crossling::tasks::parse::transfer::ParseResult;
use crossling::tasks::parse::Decode;
use crossling::tasks::run::{JsonMap, TaskKind};

#[derive(Args)]
pub struct ParseArgs {
    #[command(flatten)]
    pub common: FinetuneArgs,
    #[command(flatten)]
    pub stack: StackArgs,
    /// Head decoding: mst (a tree with exactly one root child) or greedy (each word's best head).
    #[arg(long)]
    pub decode: Option<String>,
    /// Score punctuation tokens too (excluded by default).
    #[arg(long)]
    pub include_punct: bool,
}

/// The command-line settings as config fields over the preset of `--scale` (smoke: 200 sentences, 1 epoch, lr 2e-3;
/// cpu: all 5,238 sentences, 4 epochs, lr 2e-3, arc / label MLPs 128 / 64; paper: all sentences, 3 epochs, lr 5e-5,
/// MLPs 500 / 100).
fn overrides(a: &ParseArgs) -> Result<JsonMap> {
    let mut o = a.common.overrides()?;
    if a.include_punct {
        o.insert("include_punct".into(), true.into());
    }
    if let Some(d) = &a.decode {
        o.insert("decode".into(), serde_json::to_value(Decode::from_name(d).context("--decode")?)?);
    }
    Ok(o)
}

/// Runs `task parse` (see [`run_cli_task`]).
pub fn parse(args: ParseArgs) -> Result<()> {
    let over = overrides(&args)?;
    let a = &args.common;
    let stack = args.stack.request(a.scale)?;
    let (result, files) = run_cli_task(a, TaskKind::Parse, over, stack, None)?;
    let mut r: ParseResult = serde_json::from_value(result).context("reading the parsing result")?;
    r.files = files;
    report(a, &r, print_summary)
}

fn print_summary(r: &ParseResult) {
    println!(
        "Parsing on {} ({}, {} layers × {}), {}: {} English UD sentences ({}) × {} epoch(s), {} steps (batch {}, lr \
         {:e}, warm-up {:.0}% then linear decay) in {:.1} s",
        r.model.path,
        r.model.kind,
        r.model.layers,
        r.model.hidden,
        r.device,
        r.train_sentences,
        r.train_treebanks.join(" + "),
        r.epochs,
        r.steps,
        r.config.finetune.batch_size,
        r.config.finetune.lr,
        100.0 * r.config.finetune.warmup_fraction,
        r.train_seconds
    );
    println!("{}; {} labels; decoding {}; {}", training_line(&r.loss, &r.freeze), r.labels.len(), r.decode, r.scoring);
    if let Some(line) = stack_line(&r.model) {
        println!("{line}");
    }
    println!(
        "English dev ({}, {} sentences): LAS {:.4} (kept step {})",
        r.dev_treebank, r.dev_sentences, r.en_dev_las, r.best_step
    );
    for (lang, p) in &r.results {
        let cut = if p.truncated_words > 0 {
            format!(", {} words cut at {} subwords", p.truncated_words, r.max_len)
        } else {
            String::new()
        };
        println!(
            "{lang} ({} test, {} sentences, {} words scored{cut}): UAS {:.4}  LAS {:.4}",
            p.treebank, p.sentences, p.scored, p.uas, p.las
        );
    }
}
