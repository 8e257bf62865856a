//! Builds the stacked model of a contextual-alignment transfer run (Wu, Conneau et al. 2020, §5.1.2, Figure 5):
//! fresh layers on frozen layer `i` ([`crate::tasks::backbone`]), English and every language without a target model read
//! by the main model, each target language read by its own model through the layer-`i` Procrustes map into the main
//! model's space ([`crate::tasks::contextual_map`], fit on the first `map_sentences` XNLI parallel sentences).
//!
//! Maps are fit for all layers at once and kept for the life of the process, keyed by both models' weights, the
//! language, the sentence count and the map settings, so a per-layer sweep fits each language pair once.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

use tch::Tensor;

use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};
use crate::model::LoadedModel;
use crate::tasks::backbone::{check_layer, check_reads, default_stack_depth, StackInput, TaskModel};
use crate::tasks::common::TRAIN_LANG;
use crate::tasks::contextual_map::{contextual_maps, MapConfig};
use crate::tasks::finetune::FreezePlan;
use crate::text::evalsets::{xnli_parallel, FilesRead};

/// The settings of a stacked run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StackPlan {
    /// The frozen layer read (0 = embeddings).
    pub layer: usize,
    /// Fresh layers; `None`: [`default_stack_depth`] of the main model.
    pub depth: Option<usize>,
    /// XNLI parallel sentences the maps are fit on.
    pub map_sentences: usize,
    pub map: MapConfig,
}

impl StackPlan {
    /// The study's 10k XNLI sentences (200 at `smoke`), the default fresh depth and map settings.
    pub fn new(layer: usize, scale: crate::Scale) -> Self {
        let map_sentences = if scale == crate::Scale::Smoke { 200 } else { 10_000 };
        StackPlan { layer, depth: None, map_sentences, map: MapConfig::default() }
    }
}

impl StackPlan {
    /// Checks the plan with the task's freezing plan and the target languages, before any model work: a stack
    /// freezes the encoders itself, and English is always read by the main model.
    pub fn check(&self, freeze: &FreezePlan, targets: &[String]) -> Result<()> {
        if self.depth == Some(0) || self.map_sentences == 0 {
            return Err(Error::Invalid("stack_depth and map_sentences must be at least 1".into()));
        }
        if *freeze != FreezePlan::default() {
            return Err(Error::Invalid(format!(
                "a stack on frozen layer {} already freezes the pretrained encoders: freeze_layers and \
                 freeze_embeddings must stay unset",
                self.layer
            )));
        }
        if targets.iter().any(|t| t == TRAIN_LANG) {
            return Err(Error::Invalid(
                "English is read by the main model (the training language); it cannot have a target model".into(),
            ));
        }
        Ok(())
    }
}

/// A stacked model with the data files its maps read and what to log.
pub struct BuiltStack {
    pub model: TaskModel,
    pub files: FilesRead,
    pub log: Vec<String>,
}

/// Per layer (W, provenance), and the files read.
type Fitted = (Vec<(Tensor, serde_json::Value)>, FilesRead);

fn cache() -> &'static Mutex<HashMap<String, Fitted>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Fitted>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The map of `plan.layer` from `lang`'s model `x` into `main`, its provenance and the files read (fit for every
/// layer on first use in this process); `log` gets a line when it is fit.
fn layer_map(
    catalog: &Catalog,
    roots: &DataRoots,
    main: &LoadedModel,
    x: &LoadedModel,
    lang: &str,
    plan: &StackPlan,
    log: &mut Vec<String>,
) -> Result<(Tensor, serde_json::Value, FilesRead)> {
    let key = format!(
        "{}|{}|{lang}|{}|{}",
        main.source.weights_sha256,
        x.source.weights_sha256,
        plan.map_sentences,
        serde_json::to_string(&plan.map).map_err(|e| Error::Invalid(e.to_string()))?
    );
    let mut fitted = cache().lock().unwrap_or_else(|p| p.into_inner());
    if !fitted.contains_key(&key) {
        let langs = [TRAIN_LANG.to_string(), lang.to_string()];
        let (text, files) = xnli_parallel(catalog, roots, &langs, plan.map_sentences)?;
        let maps = contextual_maps(main, x, lang, &text[TRAIN_LANG], &text[lang], &plan.map)?;
        log.push(format!(
            "contextual maps {lang}→en: {} sentences, {} one-to-one word pairs; mean pair cosine after the map by layer: {}",
            maps.sentences,
            maps.pairs,
            maps.layers.iter().map(|l| format!("{:.3}", l.cos_after)).collect::<Vec<_>>().join(" ")
        ));
        let per_layer = (0..maps.layers.len()).map(|i| (maps.layers[i].w.shallow_clone(), maps.info(i))).collect();
        fitted.insert(key.clone(), (per_layer, files));
    }
    let (per_layer, files) = &fitted[&key];
    let (w, info) =
        per_layer.get(plan.layer).ok_or_else(|| Error::Invalid(format!("no map of layer {}", plan.layer)))?;
    Ok((w.to_device(main.vs.device()), info.clone(), files.clone()))
}

/// The languages the main model of a stacked run reads itself: `langs` without the `targets` (English at least).
pub fn own_langs(langs: &[String], targets: &[String]) -> Vec<String> {
    let own: Vec<String> = langs.iter().filter(|l| !targets.contains(l)).cloned().collect();
    if own.is_empty() {
        vec![TRAIN_LANG.to_string()]
    } else {
        own
    }
}

/// The stack of a run on `langs` (see the module docs); `targets` are the languages' own models.
pub fn build_stack(
    catalog: &Catalog,
    roots: &DataRoots,
    main: LoadedModel,
    targets: BTreeMap<String, LoadedModel>,
    langs: &[String],
    plan: &StackPlan,
    seed: u64,
) -> Result<BuiltStack> {
    check_layer(&main, plan.layer)?;
    let names: Vec<String> = targets.keys().cloned().collect();
    plan.check(&FreezePlan::default(), &names)?;
    if let Some(t) = targets.keys().find(|t| !langs.contains(t)) {
        return Err(Error::Invalid(format!("target model for '{t}', which is not among the evaluation languages")));
    }
    for (lang, x) in &targets {
        check_reads(x, lang)?;
        check_layer(x, plan.layer)?;
    }
    let depth = plan.depth.unwrap_or_else(|| default_stack_depth(main.config.layers));
    let mut inputs = BTreeMap::new();
    inputs.insert(TRAIN_LANG.to_string(), StackInput { source: 0, map: None, map_info: None });
    let (mut sources, mut files, mut log) = (Vec::new(), FilesRead::new(), Vec::new());
    let mut targets = targets;
    for lang in langs {
        let input = match targets.remove(lang) {
            None => StackInput { source: 0, map: None, map_info: None },
            Some(x) => {
                let (w, info, read) = layer_map(catalog, roots, &main, &x, lang, plan, &mut log)?;
                files.extend(read);
                sources.push(x);
                StackInput { source: sources.len(), map: Some(w), map_info: Some(info) }
            }
        };
        inputs.insert(lang.clone(), input);
    }
    sources.insert(0, main);
    Ok(BuiltStack { model: TaskModel::stacked(sources, inputs, plan.layer, depth, seed)?, files, log })
}
