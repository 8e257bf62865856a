//! Zero-shot XNLI with one classifier on a frozen representation, from a request, with the task-result cache — the
//! single entry point that the script function `task::frozen_nli`, the CLI `task nli-frozen` and notebooks share
//! (Liu et al. 2020 §3.1.2; the classifier is [`crate::tasks::frozen_nli`], its training and scoring
//! [`crate::tasks::frozen_nli::transfer`]).
//!
//! A [`FrozenNliRequest`] names the representation — a model's layers, or static vectors of a model's subword
//! tokens — the evaluation languages (default: every XNLI language the representation reads), config overrides over
//! [`FrozenNliConfig::at`] a [`Scale`], the seed and the compute. [`run_frozen_nli_task`] checks the setup, then
//! reads the result from the cache or trains the classifier, scores it and writes it.
//!
//! **Cache.** The same folder and key as [`crate::tasks::run`] (`MODELS/tasks/nli_frozen-KEY.json`): IDENTITY is the
//! representation's source (a model's kind and weights sha256; static vectors' cache key or file sha256), WHAT the
//! resolved config, the languages, the device and [`FROZEN_NLI_REVISION`].
use crate::device::Compute;
use crate::error::{Error, Result};
use crate::model::ModelTokenizer;
use crate::scale::Scale;
use crate::tasks::common::{check_eval_languages, model_languages};
use crate::tasks::frozen_nli::transfer::{run_frozen_nli, RepresentationInfo};
use crate::tasks::frozen_nli::{Frozen, FrozenNliConfig};
use crate::tasks::nli::transfer::{has_xnli, load_nli_data, readable_langs, xnli_languages};
use crate::tasks::run::{
    cache_file, configured, json, read_cached, scores_line, write_cached, JsonMap, OpenModel, TaskContext, TaskOutcome,
};
use crate::tasks::sweep::GridRun;
use crate::wordvec::WordVectors;

/// The task's name in the cache.
pub const TASK: &str = "nli_frozen";
/// Revision of the classifier's implementation in the cache key; bump when it changes what a run computes.
pub const FROZEN_NLI_REVISION: u32 = 2;

/// What the classifier reads.
pub enum Representation<'a> {
    /// Every layer of a model (embeddings included), frozen.
    Model(&'a dyn OpenModel),
    /// Static vectors of the subword tokens of `tokenizer`; `source` identifies them for the cache (a vectors cache
    /// key, or a file's sha256).
    Static { name: String, source: String, vectors: &'a WordVectors, tokenizer: ModelTokenizer },
}

/// What a run asks for (see the module docs).
pub struct FrozenNliRequest<'a> {
    pub representation: Representation<'a>,
    /// Evaluation languages; `None`: every XNLI language the representation reads.
    pub langs: Option<Vec<String>>,
    /// Config fields over the preset at `scale` (unknown fields are errors).
    pub overrides: JsonMap,
    /// The seed unless `overrides` sets one; `None`: the preset's.
    pub seed: Option<u64>,
    pub scale: Scale,
    pub compute: Compute,
}

impl FrozenNliRequest<'_> {
    /// The resolved, validated classifier config.
    pub fn config(&self) -> Result<FrozenNliConfig> {
        let mut over = self.overrides.clone();
        if let Some(seed) = self.seed {
            over.entry("seed").or_insert(serde_json::json!(seed));
        }
        let cfg: FrozenNliConfig = configured(FrozenNliConfig::at(self.scale), &over)?;
        cfg.validate()?;
        Ok(cfg)
    }
}

/// The frozen representation on `compute`'s device, with what identifies it.
fn open(rep: &Representation, compute: Compute) -> Result<(Frozen, RepresentationInfo)> {
    Ok(match rep {
        Representation::Static { name, source, vectors, tokenizer } => {
            let info = RepresentationInfo {
                name: name.clone(),
                kind: "static".into(),
                source: source.clone(),
                layers: 1,
                dim: vectors.dim(),
            };
            (Frozen::from_static(vectors, tokenizer.clone(), compute.device), info)
        }
        Representation::Model(m) => {
            let loaded = m.open(compute.device)?;
            let info = RepresentationInfo {
                name: m.name().to_string(),
                kind: "model".into(),
                source: format!("{}:{}", loaded.source.kind.name(), loaded.source.weights_sha256),
                layers: loaded.config.layers + 1,
                dim: loaded.config.hidden,
            };
            (Frozen::Contextual(loaded), info)
        }
    })
}

/// Runs the request (or reads its result from the cache); see the module docs. The result's `setting` is empty and
/// its `result` a [`crate::tasks::frozen_nli::transfer::FrozenNliResult`].
pub fn run_frozen_nli_task(ctx: &TaskContext, req: &FrozenNliRequest) -> Result<TaskOutcome> {
    let cfg = req.config()?;
    let (frozen, info) = open(&req.representation, req.compute)?;
    let known = xnli_languages(ctx.catalog)?;
    // The languages the representation reads (`None`: any): its evaluation languages default to the XNLI ones it
    // reads, and every language asked for must be one of them.
    let reads = match &frozen {
        Frozen::Contextual(m) => model_languages(m),
        Frozen::Static { tokenizer, .. } => tokenizer.languages().map(<[String]>::to_vec),
    };
    let langs = req.langs.clone().unwrap_or_else(|| readable_langs(reads.as_deref(), &known));
    if langs.is_empty() {
        return Err(Error::Invalid(format!("{} reads none of the XNLI languages ({})", info.name, known.join(", "))));
    }
    let reader = format!("{} {}", if info.kind == "static" { "static vectors" } else { "model" }, info.name);
    check_eval_languages(&reader, reads.as_deref(), &langs, "the frozen-NLI classifier", |l| has_xnli(l, &known))?;
    let what = serde_json::json!({ "config": json(&cfg)?, "langs": langs, "device": req.compute.device_name(),
                                   "revision": FROZEN_NLI_REVISION });
    let cache = cache_file(ctx.models_dir, &info.source, TASK, &what);
    let label = format!("task nli-frozen on {}", info.name);
    if !ctx.fresh {
        if let Some((run, files)) = read_cached(&cache)? {
            (ctx.log)(format!("{label}: cached result {}", cache.display()));
            return Ok(TaskOutcome { run, files, cached: true });
        }
    }
    if ctx.cached_only {
        return Err(Error::NotCached(cache));
    }
    let cap = cfg.max_train.map_or_else(|| "all".to_string(), |n| n.to_string());
    (ctx.log)(format!("{label}: training the classifier ({cap} MNLI pairs max)"));
    let data = load_nli_data(ctx.catalog, ctx.roots, &langs)?;
    let r = run_frozen_nli(frozen, info, &data, &langs, &cfg, req.compute, ctx.progress)?;
    let scores = r.xnli.iter().map(|(l, a)| (l.clone(), a.accuracy.accuracy)).collect();
    (ctx.log)(format!("{label}: English dev {:.4}, {}", r.en_dev_accuracy, scores_line(&scores)));
    let result = json(&r)?;
    let run = GridRun {
        setting: JsonMap::new(),
        en_dev: r.en_dev_accuracy,
        scores,
        result,
        items: r.items,
        mds_items: Default::default(),
    };
    write_cached(&cache, &run, &r.files)?;
    Ok(TaskOutcome { run, files: r.files, cached: false })
}
