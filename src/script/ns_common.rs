//! What every namespace shares: the [`Session`] of a run (settings, data catalog, the record being built), the
//! result type and errors of namespace functions, conversions between script values and Rust ones, and the
//! library's view of a session ([`with_context`]) with the script options of a task ([`options`]: `task::` and its
//! `frozen_nli`).
use std::sync::{Arc, Mutex};

use rhai::{Dynamic, EvalAltResult, Map, NativeCallContext, Position};

use super::env::ScriptEnv;
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};
use crate::report::record::FigureRecord;
use crate::tasks::run::{JsonMap, TaskContext};

/// What namespaces share during one run: the settings, the data catalog and the record being built.
#[derive(Debug, Clone)]
pub struct Session {
    pub env: ScriptEnv,
    pub record: Arc<Mutex<FigureRecord>>,
    /// The dataset manifests and where their files are found.
    pub data: Arc<(Catalog, DataRoots)>,
    /// Planning mode ([`crate::grid::plan`], [`crate::jobs`]): model and task requests are recorded here instead of run.
    pub plan: Option<crate::jobs::SharedRecorder>,
}

impl Session {
    /// A session with an empty record for `env.figure`; loads the manifests.
    pub fn new(env: ScriptEnv) -> Result<Self> {
        Ok(Session::with_data(env, Catalog::load_default()?, DataRoots::from_env()))
    }

    /// A session reading data through `roots`.
    pub fn with_data(env: ScriptEnv, catalog: Catalog, roots: DataRoots) -> Self {
        let record =
            FigureRecord { format: crate::report::record::RECORD_FORMAT, id: env.figure.clone(), ..Default::default() };
        Session { env, record: Arc::new(Mutex::new(record)), data: Arc::new((catalog, roots)), plan: None }
    }

    /// This session in planning mode, recording into `recorder` (see [`crate::grid::plan`]).
    pub fn planning(mut self, recorder: crate::jobs::SharedRecorder) -> Self {
        self.plan = Some(recorder);
        self
    }

    /// Records data files read (mirror path → sha256) in the provenance.
    pub fn note_data(&self, files: &[(String, String)]) {
        self.with_record(|r| {
            for (p, sha) in files {
                r.provenance.data.insert(p.clone(), sha.clone());
            }
        });
    }

    /// Runs `f` on the record.
    pub fn with_record<T>(&self, f: impl FnOnce(&mut FigureRecord) -> T) -> T {
        let mut guard = match self.record.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}

/// What a namespace function returns: a value, or a Rhai error (a library [`Error`] converts with `?`).
pub type Res<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A Rust error as a Rhai runtime error (without a position; see [`at`] and [`native`]).
pub fn rhai_err(e: impl std::fmt::Display) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorRuntime(Dynamic::from(e.to_string()), Position::NONE))
}

/// A library error in a namespace function becomes a Rhai runtime error with its message.
impl From<Error> for Box<EvalAltResult> {
    fn from(e: Error) -> Self {
        rhai_err(e)
    }
}

/// Runs the body of a namespace function called from a script; an error gets the position of the script's call
/// (see [`at`]). Inside, `?` converts library errors.
pub fn native<T>(ctx: &NativeCallContext, body: impl FnOnce() -> Res<T>) -> Res<T> {
    body().map_err(|e| at(ctx, e))
}

/// A script value (an options map, a spec) as the serde type `T`; an error names `what` (e.g. `words::align spec`).
pub fn from_script<T: serde::de::DeserializeOwned>(value: &Dynamic, what: &str) -> Res<T> {
    rhai::serde::from_dynamic(value).map_err(|e| rhai_err(format!("{what}: {e}")))
}

/// A script array of strings as a `Vec`; any other element is an error that names `what` and the element.
pub fn strings(a: &rhai::Array, what: &str) -> Res<Vec<String>> {
    a.iter()
        .map(|d| d.clone().into_string().map_err(|t| rhai_err(format!("{what}: expected strings, found {t}"))))
        .collect()
}

/// Numbers as a script array of floats.
pub fn floats(v: impl IntoIterator<Item = f64>) -> rhai::Array {
    v.into_iter().map(Dynamic::from_float).collect()
}

/// Gives an error from a namespace function the position of the script's call (Rhai leaves it empty for
/// qualified calls such as `results::value(…)`).
pub fn at(ctx: &NativeCallContext, mut e: Box<EvalAltResult>) -> Box<EvalAltResult> {
    if e.position().is_none() {
        e.set_position(ctx.call_position());
    }
    e
}

/// A script map as JSON.
pub fn json_of(map: &Map) -> Res<serde_json::Value> {
    rhai::serde::from_dynamic(&Dynamic::from_map(map.clone()))
}

/// Splits a script options map into the evaluation languages, the training data (NER) and config overrides
/// ([`crate::tasks::run::split_options`]).
pub fn options(opts: &Map) -> Result<(Option<Vec<String>>, Option<String>, JsonMap)> {
    let json = json_of(opts).map_err(|e| Error::Invalid(format!("task options: {e}")))?;
    crate::tasks::run::split_options(json)
}

/// Calls `f` with the library's view of `session`: its data, model cache, `--fresh` and run log.
pub fn with_context<T>(session: &Session, f: impl FnOnce(&TaskContext) -> Result<T>) -> Result<T> {
    let log = |line: String| session.env.log.push(line);
    let (catalog, roots) = (&session.data.0, &session.data.1);
    let ctx = TaskContext {
        catalog,
        roots,
        models_dir: &session.env.models_dir,
        fresh: session.env.fresh,
        cached_only: session.plan.is_some(),
        progress: false,
        log: &log,
    };
    f(&ctx)
}
