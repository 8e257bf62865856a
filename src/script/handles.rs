//! Opaque handles that scripts pass around: models (trained and cached, randomly initialised, or a folder given
//! by the user) and per-layer feature stacks. Heavy state stays in Rust; a script sees a few read-only properties.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rhai::Engine;
use tch::Tensor;

use crate::train::model_cache::CachedModel;

/// Where a model's weights come from.
#[derive(Debug, Clone)]
pub enum ModelSource {
    /// Trained by crossling and cached (see [`crate::train::model_cache`]).
    Cached(Box<CachedModel>),
    /// The architecture and tokenizer of another model with freshly initialised weights (the "Random" baseline
    /// of Emerging Figure 7).
    Random { like: Box<ModelRef>, seed: u64 },
    /// A folder given by the user: a crossling checkpoint or run, or a Hugging Face BERT.
    Folder(PathBuf),
}

/// A model as scripts see it: a name and where it comes from; loaded on first use.
#[derive(Debug, Clone)]
pub struct ModelRef {
    pub name: String,
    pub source: ModelSource,
}

impl ModelRef {
    /// The folder holding weights and tokenizer (for `Random`, that of the model it imitates).
    pub fn dir(&self) -> PathBuf {
        match &self.source {
            ModelSource::Cached(c) => c.dir.clone(),
            ModelSource::Random { like, .. } => like.dir(),
            ModelSource::Folder(p) => p.clone(),
        }
    }

    /// An error unless a cached model (or the template of a `Random` one) has finished its pre-training.
    pub fn check_trained(&self) -> crate::error::Result<()> {
        match &self.source {
            ModelSource::Cached(c) if !crate::train::model_cache::is_trained(&c.dir, &c.config) => {
                Err(crate::error::Error::Invalid(format!(
                    "model {}: its pre-training has not finished ({})",
                    self.name,
                    c.dir.display()
                )))
            }
            ModelSource::Random { like, .. } => like.check_trained(),
            _ => Ok(()),
        }
    }

    /// Languages of a crossling-trained model (empty when unknown).
    pub fn languages(&self) -> Vec<String> {
        match &self.source {
            ModelSource::Cached(c) => c.config.languages.clone(),
            ModelSource::Random { like, .. } => like.languages(),
            ModelSource::Folder(_) => Vec::new(),
        }
    }
}

impl crate::tasks::run::OpenModel for ModelRef {
    fn name(&self) -> &str {
        &self.name
    }

    /// Loads the model on `device` (a `Random` model: its template's architecture and tokenizer, re-initialised).
    /// A cached model whose pre-training has not finished is an error, not its last checkpoint: a planning run
    /// hands out models at their cache folders trained or not, and one interrupted midway holds weights that load.
    fn open(&self, device: tch::Device) -> crate::error::Result<crate::model::LoadedModel> {
        self.check_trained()?;
        match &self.source {
            ModelSource::Random { like, seed } => {
                crate::model::LoadedModel::open(&like.dir(), device)?.reinitialised(*seed)
            }
            _ => crate::model::LoadedModel::open(&self.dir(), device),
        }
    }
}

/// Hidden states pooled per item (sentence or word) for every layer: `[layers + 1, items, hidden]` f32, on the
/// CPU. Behind a mutex because a libtorch tensor may not be shared between threads without one.
#[derive(Debug, Clone)]
pub struct Features {
    pub stack: Arc<Mutex<Tensor>>,
    /// What the rows are (e.g. `sentences of xnli en`), for messages.
    pub what: String,
}

impl Features {
    /// Wraps a stack.
    pub fn new(stack: Tensor, what: impl Into<String>) -> Self {
        Features { stack: Arc::new(Mutex::new(stack)), what: what.into() }
    }

    /// A shallow copy of the stack (shares storage).
    pub fn tensor(&self) -> Tensor {
        match self.stack.lock() {
            Ok(t) => t.shallow_clone(),
            Err(p) => p.into_inner().shallow_clone(),
        }
    }
}

/// Registers the handle types and their properties.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<ModelRef>("Model");
    engine.register_get("name", |m: &mut ModelRef| m.name.clone());
    engine.register_get("dir", |m: &mut ModelRef| m.dir().display().to_string());
    engine.register_get("languages", |m: &mut ModelRef| {
        m.languages().into_iter().map(rhai::Dynamic::from).collect::<rhai::Array>()
    });
    engine.register_fn("to_string", |m: &mut ModelRef| format!("Model({})", m.name));
    engine.register_type_with_name::<Features>("Features");
    engine.register_get("layers", |f: &mut Features| f.tensor().size()[0]);
    engine.register_get("rows", |f: &mut Features| f.tensor().size()[1]);
    engine.register_get("dim", |f: &mut Features| f.tensor().size()[2]);
    engine.register_fn("to_string", |f: &mut Features| {
        let s = f.tensor().size();
        format!("Features({}: {} layers x {} x {})", f.what, s[0], s[1], s[2])
    });
}
