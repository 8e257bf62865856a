//! `crossling train`: pre-train a masked language model from a run config or a named preset.
use anyhow::{bail, Context, Result};
use clap::Args;
use crossling::data::manifest::Catalog;
use crossling::data::resolve::DataRoots;
use std::path::PathBuf;

#[derive(Args)]
pub struct TrainArgs {
    /// Run config (TOML): languages, [corpus], [tokenizer], [train] — see `crossling::train::run`.
    #[arg(long, required_unless_present = "preset", conflicts_with = "preset")]
    config: Option<PathBuf>,
    /// A named run instead of --config: an Emerging Table 1 ablation (default, domain-mismatch, no-anchors,
    /// default-anchors, extra-anchors, sep-emb, sep-l1-3, sep-l1-6, sep-emb-l1-3, sep-emb-l1-6), `mono` (one
    /// language) or `multilingual` (e.g. --langs en-fr-de-ru-zh).
    #[arg(long)]
    preset: Option<String>,
    /// Languages of a preset joined by '-': one for `mono`, two for the ablations, three or more for
    /// `multilingual` (e.g. en-fr-de-ru-zh).
    #[arg(long, alias = "pair", default_value = "en-fr")]
    langs: String,
    /// Scale of a preset: smoke, cpu or paper.
    #[arg(long, value_enum, default_value_t = crossling::Scale::Cpu)]
    scale: crossling::Scale,
    /// Output folder (corpora, tokenizer, metrics.jsonl, last/, best/).
    #[arg(long)]
    out: PathBuf,
    /// Continue the run in --out from its last checkpoint.
    #[arg(long)]
    resume: bool,
}

pub fn run(args: TrainArgs) -> Result<()> {
    let cfg = match (&args.config, &args.preset) {
        (Some(path), _) => crossling::train::run::RunConfig::load(path)?,
        (None, Some(name)) => crossling::train::presets::preset(name, &args.langs, args.scale)?,
        (None, None) => bail!("give --config FILE or --preset NAME"),
    };
    let catalog = Catalog::load_default().context("loading data manifests")?;
    let roots = DataRoots::from_env();
    let s = crossling::train::run::run_pretraining(&cfg, &catalog, &roots, &args.out, args.resume)?;
    println!("trained steps {}..{}", s.start_step, s.final_step);
    for (lang, ppl) in &s.valid_ppl {
        println!("validation perplexity {lang}: {ppl:.2}");
    }
    if let (Some(ppl), Some(step)) = (s.best_valid_ppl, s.best_step) {
        println!(
            "best {} perplexity {ppl:.2} at step {step} -> {}",
            cfg.train.select_lang,
            args.out.join("best").display()
        );
    }
    Ok(())
}
