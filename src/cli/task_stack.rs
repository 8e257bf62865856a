//! The stack options of `crossling task ner | parse`: fresh Transformer layers on a frozen layer of the model, other
//! languages read by their own models through per-layer Procrustes maps (Wu, Conneau et al. 2020 §5.1.2, Figure 5;
//! `crossling::tasks::aligned_stack`).
use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use super::task_common::CliModel;
use crossling::tasks::aligned_stack::StackPlan;

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

    /// The stack's settings at `scale` and its target models (`None` without `--stack-layer`); the library checks
    /// the plan with the task's freezing plan before any model is loaded.
    pub fn request(&self, scale: crossling::Scale) -> Result<Option<(StackPlan, BTreeMap<String, CliModel>)>> {
        let Some(layer) = self.stack_layer else { return Ok(None) };
        let mut plan = StackPlan::new(layer, scale);
        plan.depth = self.stack_depth;
        plan.map_sentences = self.map_sentences.unwrap_or(plan.map_sentences);
        let targets = self.target_dirs()?.into_iter().map(|(lang, dir)| (lang, CliModel::new(&dir))).collect();
        Ok(Some((plan, targets)))
    }
}
