//! `task::frozen_nli` — zero-shot XNLI with one classifier on a frozen representation, static vectors or a model
//! (Liu et al. 2020 §3.1.2; [`crate::tasks::frozen_nli`] states the classifier):
//! ```rhai
//! let glove = wordvec::train(m, #{ kind: "glove" });
//! let a = task::frozen_nli(glove, #{ langs: ["fr", "de"] });       // #{ en_dev, scores: #{ fr, de }, items, result }
//! let b = task::frozen_nli(m, #{ langs: ["fr", "de"], epochs: 5 });  // the same classifier on m's hidden states
//! ```
//! Options: `langs` (default: every XNLI language the representation reads) and any field of
//! [`crate::tasks::frozen_nli::FrozenNliConfig`], starting from the preset of the run's `SCALE`, seeded with `SEED`. Static vectors must be of
//! a model's subword tokens (`unit: "subword"`, the default), so that both read the same tokens. The run is
//! [`crate::tasks::run_frozen::run_frozen_nli_task`], with its cache in `$CROSSLING_MODELS/tasks/` (shared with
//! `crossling task nli-frozen`). While planning, a run not in the cache is deferred to the figure job.
//! `items: #{ LANG: #{ items: [1.0 or 0.0 per XNLI pair] } }` are the per-pair outcomes behind each accuracy, ready
//! for `results::score` (see [`super::ns_task`]).
use rhai::{Dynamic, Map};

use super::handles::ModelRef;
use super::ns_common::Session;
use super::ns_common::{options, with_context};
use super::ns_wordvec::StaticVectors;
use crate::error::{Error, Result};
use crate::model::ModelTokenizer;
use crate::tasks::run_frozen::{run_frozen_nli_task, FrozenNliRequest, Representation};
use crate::tasks::sweep::GridRun;

/// Runs (or reads from the cache) the frozen-representation NLI of `rep` with the script options `opts`.
pub fn run(session: &Session, rep: Dynamic, opts: &Map) -> Result<GridRun> {
    let (langs, train_data, overrides) = options(opts)?;
    if train_data.is_some() {
        return Err(Error::Invalid("task::frozen_nli trains on MNLI; train_data is not an option".into()));
    }
    let vectors = rep.clone().try_cast::<StaticVectors>();
    let model = rep.clone().try_cast::<ModelRef>();
    let representation = match (&vectors, &model) {
        (Some(v), _) => {
            let tok = v.tokenizer.as_ref().ok_or_else(|| {
                Error::Invalid(format!(
                    "task::frozen_nli: {} are word vectors; the classifier reads a model's subword tokens (train \
                     them with unit: \"subword\")",
                    v.name
                ))
            })?;
            Representation::Static {
                name: v.name.clone(),
                source: format!("wordvec:{}", v.key),
                vectors: &v.vectors,
                tokenizer: ModelTokenizer::crossling((**tok).clone()),
            }
        }
        (None, Some(m)) => Representation::Model(m),
        (None, None) => {
            return Err(Error::Invalid(format!(
                "task::frozen_nli: {} is neither a model nor static vectors",
                rep.type_name()
            )))
        }
    };
    let req = FrozenNliRequest {
        representation,
        langs,
        overrides,
        seed: Some(session.env.seed),
        scale: session.env.scale,
        compute: session.env.compute,
    };
    let out = match with_context(session, |ctx| run_frozen_nli_task(ctx, &req)) {
        Err(Error::NotCached(path)) => {
            if let Some(plan) = &session.plan {
                let what =
                    format!("planning stops at task::frozen_nli ({}): it runs inside the figure job", path.display());
                plan.lock()
                    .map_err(|_| Error::Invalid("planning: the recorder is poisoned".into()))?
                    .defer(what.clone());
                // The error carries the deferral's words: the planner takes it for that stop by them.
                return Err(Error::Invalid(what));
            }
            return Err(Error::NotCached(path));
        }
        other => other?,
    };
    session.note_data(&out.files);
    Ok(out.run)
}
