//! `crossling task parse`: zero-shot dependency parsing — fine-tune the biaffine parser with the encoder on English
//! UD (LinES + ParTUT train, best state by EWT dev LAS), report UAS / LAS on the GSD test treebanks of fr / de / ru and
//! GSDSimp for zh (`crossling::tasks::parse`, `crossling::tasks::parse_transfer`).
use anyhow::{Context, Result};
use clap::Args;

use super::task::{apply_finetune_args, load_catalog, open_model, report, stack_line, training_line, FinetuneArgs};
use super::task_stack::StackArgs;
use crossling::data::resolve::DataRoots;
use crossling::device::{Compute, Precision};
use crossling::tasks::parse::{Decode, ParseConfig};
use crossling::tasks::parse_transfer::{
    check_setup, default_langs, eval_treebank, load_parse_data, parse_languages, run_parse, ParseResult,
};

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

/// The preset of `--scale` (smoke: 200 sentences, 1 epoch, lr 2e-3; cpu: all 5,238 sentences, 4 epochs, lr 2e-3,
/// arc / label MLPs 128 / 64; paper: all sentences, 3 epochs, lr 5e-5, MLPs 500 / 100) with the overrides.
fn config(a: &ParseArgs) -> Result<ParseConfig> {
    let common = &a.common;
    let mut c = ParseConfig::at(common.scale);
    apply_finetune_args!(c, common);
    c.include_punct |= a.include_punct;
    if let Some(d) = &a.decode {
        c.decode = Decode::from_name(d).context("--decode")?;
    }
    c.validate()?;
    Ok(c)
}

/// Runs `task parse`.
pub fn parse(args: ParseArgs) -> Result<()> {
    let cfg = config(&args)?;
    args.stack.plan(args.common.scale, &cfg.freeze_plan())?; // stack options checked before any model is loaded
    let a = &args.common;
    let (compute, catalog) = (Compute::resolve(&a.device, Precision::Auto)?, load_catalog()?);
    let known: Vec<String> = parse_languages().iter().map(|l| l.to_string()).collect();
    let targets: Vec<String> = args.stack.target_dirs()?.into_keys().collect();
    let (m, langs) = open_model(&a.model, a.langs.as_deref(), compute, "parsing", &known, |m| {
        if targets.is_empty() {
            default_langs(m)
        } else {
            targets.clone()
        }
    })?;
    check_setup(&m, &args.stack.own_langs(&langs)?, &cfg)?;
    for t in &targets {
        eval_treebank(t)?;
    }
    let data = load_parse_data(&catalog, &DataRoots::from_env(), &langs)?;
    let (model, map_files) =
        args.stack.task_model(m, &langs, a.scale, &cfg.freeze_plan(), cfg.seed, compute, &catalog)?;
    let mut r = run_parse(model, &data, &langs, &cfg, compute, !a.json)?;
    r.files.extend(map_files);
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
        r.config.batch_size,
        r.config.lr,
        100.0 * r.config.warmup_fraction,
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
