//! The Rhai experiment runtime (DESIGN.md "Shape"): one script per figure or table describes the experiment end to
//! end; heavy state (models, features) stays in Rust behind opaque handles; each namespace is one file.
//!
//! - [`env`](mod@env): `SCALE`, `SEED`, `DEVICE`, `FIGURE`, the outputs folder, the run log.
//! - [`engine`]: the engine, `import` from `scripts/`, error mapping to script:line:column.
//! - [`runner`]: one script end to end (its record with provenance, the run log, rendering through
//!   [`crate::report`], which holds the record, its rendering and `REPRODUCTION.md` without the Rhai engine).
//! - [`handles`]: the opaque `Model` and `Features` types; [`ns_common`]: the run's `Session` and what every
//!   namespace shares.
//! - Namespaces: [`ns_results`] (`results::`), [`ns_data`] (`data::`), [`ns_train`] (`train::`, `model::`),
//!   [`ns_features`] (`features::`), [`ns_cka`] (`cka::`), [`ns_align`] (`align::`, `retrieve::`),
//!   [`ns_lang`] (`lang::`), [`ns_words`] (`words::`), [`ns_task`] (`task::`; [`ns_task_frozen`] its `frozen_nli`),
//!   [`ns_wordvec`] (`wordvec::`).
pub mod engine;
pub mod env;
pub mod handles;
pub mod ns_align;
pub mod ns_cka;
pub mod ns_common;
pub mod ns_data;
pub mod ns_features;
pub mod ns_lang;
pub mod ns_results;
pub mod ns_task;
pub mod ns_task_frozen;
pub mod ns_train;
pub mod ns_words;
pub mod ns_wordvec;
pub mod runner;
#[cfg(test)]
pub(crate) mod testing;

pub use engine::run_file;
pub use env::{RunLog, ScriptEnv};
pub use ns_common::Session;

/// Every namespace module, by name.
pub fn namespaces(session: &Session) -> Vec<(&'static str, rhai::Module)> {
    vec![
        ("results", ns_results::module(session)),
        ("data", ns_data::module(session)),
        ("train", ns_train::train_module(session)),
        ("model", ns_train::model_module(session)),
        ("features", ns_features::module(session)),
        ("cka", ns_cka::module()),
        ("align", ns_align::align_module()),
        ("retrieve", ns_align::retrieve_module()),
        ("lang", ns_lang::module(session)),
        ("words", ns_words::module(session)),
        ("task", ns_task::module(session)),
        ("wordvec", ns_wordvec::module(session)),
    ]
}
