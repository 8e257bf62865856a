//! `crossling task ner`: zero-shot NER — fine-tune a BIO tagger on English PAN-X (or CoNLL-2003), report span F1 on
//! PAN-X dev per language (`crossling::tasks::ner`, `crossling::tasks::ner_transfer`).
use anyhow::Result;
use clap::Args;

use super::task::{apply_finetune_args, load_catalog, open_model, report, stack_line, training_line, FinetuneArgs};
use super::task_stack::StackArgs;
use crossling::data::resolve::DataRoots;
use crossling::device::{Compute, Precision};
use crossling::tasks::ner::NerConfig;
use crossling::tasks::ner_transfer::{check_setup, load_ner_data, panx_languages, run_ner, NerResult, NerTrainData};
use crossling::tasks::nli_transfer::default_langs;

#[derive(Args)]
pub struct NerArgs {
    #[command(flatten)]
    pub common: FinetuneArgs,
    #[command(flatten)]
    pub stack: StackArgs,
    /// English training data: panx (PAN-X train-en / dev-en, the study's) or conll2003 (MISC trained as O).
    #[arg(long, default_value = "panx")]
    pub train_data: String,
}

/// The preset of `--scale` with the command-line overrides.
fn config(a: &FinetuneArgs) -> Result<NerConfig> {
    let mut c = NerConfig::at(a.scale);
    apply_finetune_args!(c, a);
    c.validate()?;
    Ok(c)
}

pub fn ner(args: NerArgs) -> Result<()> {
    let source: NerTrainData = args.train_data.parse()?;
    let a = &args.common;
    let cfg = config(a)?;
    args.stack.plan(a.scale, &cfg.freeze_plan())?; // stack options checked before any model is loaded
    let (compute, catalog) = (Compute::resolve(&a.device, Precision::Auto)?, load_catalog()?);
    let panx_langs = panx_languages(&catalog)?;
    let targets: Vec<String> = args.stack.target_dirs()?.into_keys().collect();
    let (m, langs) = open_model(&a.model, a.langs.as_deref(), compute, "PAN-X", &panx_langs, |m| {
        if targets.is_empty() {
            default_langs(m, &panx_langs)
        } else {
            targets.clone()
        }
    })?;
    check_setup(&m, &args.stack.own_langs(&langs)?, &panx_langs, &cfg)?;
    if let Some(t) = targets.iter().find(|t| !panx_langs.contains(t)) {
        anyhow::bail!("no PAN-X dev set for language '{t}'");
    }
    let data = load_ner_data(&catalog, &DataRoots::from_env(), source, &langs)?;
    let (model, map_files) =
        args.stack.task_model(m, &langs, a.scale, &cfg.freeze_plan(), cfg.seed, compute, &catalog)?;
    let mut r = run_ner(model, &data, &langs, &cfg, compute, !a.json)?;
    r.files.extend(map_files);
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
        r.config.batch_size,
        r.config.lr,
        r.train_seconds
    );
    println!("{}", training_line(&r.loss, &r.freeze));
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
