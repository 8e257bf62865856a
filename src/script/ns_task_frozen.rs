//! `task::frozen_nli` — zero-shot XNLI with one classifier on a frozen representation, static vectors or a model
//! (Liu et al. 2020 §3.1.2; [`crate::tasks::frozen_nli`] states the classifier):
//! ```rhai
//! let glove = wordvec::train(m, #{ kind: "glove" });
//! let a = task::frozen_nli(glove, #{ langs: ["fr", "de"] });       // #{ en_dev, scores: #{ fr, de }, items, result }
//! let b = task::frozen_nli(m, #{ langs: ["fr", "de"], epochs: 5 });  // the same classifier on m's hidden states
//! ```
//! Options: `langs` (default: every XNLI language the representation reads) and any field of
//! [`FrozenNliConfig`], starting from the preset of the run's `SCALE`, seeded with `SEED`. Static vectors must be of
//! a model's subword tokens (`unit: "subword"`, the default), so that both read the same tokens. Results are cached
//! in `$CROSSLING_MODELS/tasks/` by the model's weights or the vectors' cache key and every resolved setting.
//! `items: #{ LANG: #{ items: [1.0 or 0.0 per XNLI pair] } }` are the per-pair outcomes behind each accuracy, ready
//! for `results::score` (see [`super::ns_task`]).
use rhai::{Dynamic, Map};

use super::engine::Session;
use super::handles::ModelRef;
use super::ns_task::{options, JsonMap};
use super::ns_wordvec::StaticVectors;
use crate::error::{Error, Result};
use crate::model::ModelTokenizer;
use crate::tasks::frozen_nli::{Frozen, FrozenNliConfig};
use crate::tasks::frozen_nli_transfer::{run_frozen_nli, RepresentationInfo};
use crate::tasks::grid::GridRun;
use crate::tasks::nli_transfer::{default_langs, load_nli_data, xnli_languages};
use crate::tasks::run::{cache_file, configured, json, read_cached, scores_line, write_cached};

const TASK: &str = "nli_frozen";
/// Revision of the classifier's implementation in the cache key; bump when it changes what a run computes.
const FROZEN_NLI_REVISION: u32 = 2;

/// The representation of a script value, with what identifies it for the cache.
fn representation(session: &Session, rep: Dynamic, device: tch::Device) -> Result<(Frozen, RepresentationInfo)> {
    if let Some(v) = rep.clone().try_cast::<StaticVectors>() {
        let tok = v.tokenizer.as_ref().ok_or_else(|| {
            Error::Invalid(format!(
                "task::frozen_nli: {} are word vectors; the classifier reads a model's subword tokens (train them \
                 with unit: \"subword\")",
                v.name
            ))
        })?;
        let frozen = Frozen::from_static(&v.vectors, ModelTokenizer::crossling((**tok).clone()), device);
        let info = RepresentationInfo {
            name: v.name.clone(),
            kind: "static".into(),
            source: format!("wordvec:{}", v.key),
            layers: 1,
            dim: v.vectors.dim(),
        };
        return Ok((frozen, info));
    }
    if let Some(m) = rep.clone().try_cast::<ModelRef>() {
        let loaded = super::ns_features::open(session, &m)?;
        let info = RepresentationInfo {
            name: m.name.clone(),
            kind: "model".into(),
            source: format!("{}:{}", loaded.source.kind.name(), loaded.source.weights_sha256),
            layers: loaded.config.layers + 1,
            dim: loaded.config.hidden,
        };
        return Ok((Frozen::Contextual(loaded), info));
    }
    Err(Error::Invalid(format!("task::frozen_nli: {} is neither a model nor static vectors", rep.type_name())))
}

/// Runs (or reads from the cache) the frozen-representation NLI of `rep` with the script options `opts`.
pub fn run(session: &Session, rep: Dynamic, opts: &Map) -> Result<GridRun> {
    let (langs, train_data, mut over) = options(opts)?;
    if train_data.is_some() {
        return Err(Error::Invalid("task::frozen_nli trains on MNLI; train_data is not an option".into()));
    }
    over.entry("seed").or_insert(serde_json::json!(session.env.seed));
    let cfg: FrozenNliConfig = configured(FrozenNliConfig::at(session.env.scale), &over)?;
    cfg.validate()?;
    let compute = session.env.compute;
    let (frozen, info) = representation(session, rep, compute.device)?;
    let (catalog, roots) = (&session.data.0, &session.data.1);
    let known = xnli_languages(catalog)?;
    let langs = match (langs, &frozen) {
        (Some(l), _) => l,
        (None, Frozen::Contextual(m)) => default_langs(m, &known),
        (None, Frozen::Static { tokenizer, .. }) => {
            let own = tokenizer.languages().map(<[String]>::to_vec).unwrap_or_else(|| known.clone());
            known.iter().filter(|l| own.contains(l)).cloned().collect()
        }
    };
    if let Some(l) = langs.iter().find(|l| !known.contains(l)) {
        return Err(Error::Invalid(format!(
            "no XNLI dev set for language '{l}' (the bundle has {})",
            known.join(", ")
        )));
    }
    if let Some(own) = frozen.tokenizer().languages() {
        if let Some(l) = langs.iter().find(|l| !own.contains(l)) {
            return Err(Error::Invalid(format!("{} does not read '{l}' (it reads {})", info.name, own.join(", "))));
        }
    }
    let what = serde_json::json!({ "config": json(&cfg)?, "langs": langs, "device": session.env.compute.device_name(),
                                   "revision": FROZEN_NLI_REVISION });
    let cache = cache_file(&session.env.models_dir, &info.source, TASK, &what);
    let label = format!("task::frozen_nli on {}", info.name);
    if !session.env.fresh {
        if let Some((run, files)) = read_cached(&cache)? {
            session.note_data(&files);
            session.env.log.push(format!("{label}: cached result {}", cache.display()));
            return Ok(run);
        }
    }
    let cap = cfg.max_train.map_or_else(|| "all".to_string(), |n| n.to_string());
    session.env.log.push(format!("{label}: training the classifier ({cap} MNLI pairs max)"));
    let data = load_nli_data(catalog, roots, &langs)?;
    let r = run_frozen_nli(frozen, info, &data, &langs, &cfg, compute, true)?;
    let scores = r.xnli.iter().map(|(l, a)| (l.clone(), a.accuracy.accuracy)).collect();
    session.note_data(&r.files);
    session.env.log.push(format!("{label}: English dev {:.4}, {}", r.en_dev_accuracy, scores_line(&scores)));
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
    Ok(run)
}
