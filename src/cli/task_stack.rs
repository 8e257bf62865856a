//! The stack options of `crossling task ner | parse`: fresh Transformer layers on a frozen layer of the model, other
//! languages read by their own models through per-layer Procrustes maps (Wu, Conneau et al. 2020 §5.1.2, Figure 5;
//! `crossling::tasks::aligned_stack`).
use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use crossling::data::evalsets::FilesRead;
use crossling::data::manifest::Catalog;
use crossling::data::resolve::DataRoots;
use crossling::device::Compute;
use crossling::model::LoadedModel;
use crossling::tasks::aligned_stack::{build_stack, own_langs, StackPlan};
use crossling::tasks::backbone::TaskModel;
use crossling::tasks::finetune::FreezePlan;

#[derive(Args)]
pub struct StackArgs {
    /// Instead of fine-tuning the model, train fresh Transformer layers and the head on its frozen layer I
    /// (0 = embeddings), as Emerging §5.1.2 does.
    #[arg(long, value_name = "I")]
    pub stack_layer: Option<usize>,
    /// Fresh layers of the stack (default: 4 · L / 8, the study's four over eight layers).
    #[arg(long, requires = "stack_layer")]
    pub stack_depth: Option<usize>,
    /// LANG=DIR: read LANG with layer I of the model in DIR, mapped into the model's space by orthogonal Procrustes on
    /// fast_align word pairs of XNLI parallel sentences; repeatable. Other languages are read by the model itself.
    #[arg(long = "target", value_name = "LANG=DIR", requires = "stack_layer")]
    pub targets: Vec<String>,
    /// XNLI parallel sentences the maps are fit on (default 10,000; 200 at smoke).
    #[arg(long, requires = "stack_layer")]
    pub map_sentences: Option<usize>,
}

impl StackArgs {
    /// The target languages and model folders of `--target`.
    pub fn target_dirs(&self) -> Result<BTreeMap<String, PathBuf>> {
        let mut out = BTreeMap::new();
        for t in &self.targets {
            let Some((lang, dir)) = t.split_once('=') else { bail!("--target {t}: expected LANG=DIR") };
            if out.insert(lang.trim().to_string(), PathBuf::from(dir.trim())).is_some() {
                bail!("--target names '{lang}' twice");
            }
        }
        Ok(out)
    }

    /// The languages the main model must read itself: `langs` without the target languages (English at least).
    pub fn own_langs(&self, langs: &[String]) -> Result<Vec<String>> {
        let targets: Vec<String> = self.target_dirs()?.into_keys().collect();
        Ok(own_langs(langs, &targets))
    }

    /// The stack's settings at `scale` (`None` without `--stack-layer`), checked with the task's freezing plan.
    pub fn plan(&self, scale: crossling::Scale, freeze: &FreezePlan) -> Result<Option<StackPlan>> {
        let Some(layer) = self.stack_layer else { return Ok(None) };
        let mut plan = StackPlan::new(layer, scale);
        plan.depth = self.stack_depth;
        plan.map_sentences = self.map_sentences.unwrap_or(plan.map_sentences);
        let targets: Vec<String> = self.target_dirs()?.into_keys().collect();
        plan.check(freeze, &targets)?;
        Ok(Some(plan))
    }

    /// The model a run fine-tunes: `main` itself, or the stack on it with the data files its maps read.
    #[allow(clippy::too_many_arguments)] // the run's settings, each from a different source
    pub fn task_model(
        &self,
        main: LoadedModel,
        langs: &[String],
        scale: crossling::Scale,
        freeze: &FreezePlan,
        seed: u64,
        compute: Compute,
        catalog: &Catalog,
    ) -> Result<(TaskModel, FilesRead)> {
        let Some(plan) = self.plan(scale, freeze)? else { return Ok((main.into(), FilesRead::new())) };
        let mut targets = BTreeMap::new();
        for (lang, dir) in self.target_dirs()? {
            let m =
                LoadedModel::open(&dir, compute.device).with_context(|| format!("loading model {}", dir.display()))?;
            targets.insert(lang, m);
        }
        let built = build_stack(catalog, &DataRoots::from_env(), main, targets, langs, &plan, seed)?;
        for line in &built.log {
            eprintln!("{line}");
        }
        Ok((built.model, built.files))
    }
}
