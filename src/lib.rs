//! # crossling
//!
//! Reproduces, end to end and from real data, two studies of cross-lingual structure in masked language models —
//! Wu, Conneau, Li, Zettlemoyer & Stoyanov (ACL 2020), *Emerging Cross-lingual Structure in Pretrained Language
//! Models*, and Liu, Hsu, Chuang & Lee (2020), *A Study of Cross-Lingual Ability and Language-specific Information
//! in Multilingual BERT* — and exposes the same primitives for researchers' own models.
//!
//! Modules follow the flow of `DESIGN.md`, lowest first; each imports only modules above it in this list
//! (`tests/module_graph.rs` checks it):
//! - [`error`]: the library's one error type (file, line, what was expected).
//! - [`atomic_file`]: whole-file writes through a temporary sibling and a rename. [`progress`]: progress bars.
//!   [`paths`]: the project's folders (an environment variable, else beside the crate or in the user cache).
//!   [`scale`]: [`Scale`] (smoke | cpu | paper). [`arrays`]: `.npy` / `.safetensors` files. [`device`]: device
//!   and precision ([`device::Compute`]), facts about the linked libtorch.
//! - [`data`]: manifests, resolution (mirror ▸ cache ▸ download) with sha256 checks, one reader per format.
//! - [`text`]: corpus building (per-language streams, splits, caps, domains, sentence splitting, Chinese
//!   segmentation), tokenizers, code-switching, masking, synthetic languages, the figures' evaluation text.
//! - [`nn`]: the network pieces the encoder, trainer and task heads share: dropout, residual, Adam and its schedule,
//!   length batching and padding, the LSTM.
//! - [`model`]: the encoder with its sharing plan, the MLM head, tokenizers, checkpoint files, Hugging Face
//!   import and export, loading any model for inference.
//! - [`train`]: the MLM trainer with exact resume, presets of the ablations, the model cache.
//! - [`features`]: hidden states of every layer, sentence and word pooling, dumps to files.
//! - [`wordvec`]: static word vectors (word2vec, fastText, GloVe) on the same corpora.
//! - [`analysis`]: normalization, Procrustes, NN / CSLS / inverted-softmax retrieval and its metrics, CKA,
//!   bootstrap intervals, language means and the mean-difference shift.
//! - [`plot`]: figures (line, grouped bars, heat maps, schematics, panel grids) from serde chart specs to PNG +
//!   SVG with a bundled font, and result tables to Markdown + CSV.
//! - [`claims`]: the papers' claims as predicates over scores with intervals, and the verdict rule.
//! - [`tasks`]: zero-shot transfer — NLI, NER, dependency parsing, frozen classifiers, word alignment — and one
//!   request → result entry point with its cache ([`tasks::run`]).
//! - [`jobs`]: the units of work a figure needs (pre-training, fine-tuning, figure), their ids and costs.
//! - [`figures`]: the figure registry: each figure's study, title, what it tests, data, models and cost; its script.
//! - [`report`]: figure records, their rendering, `REPRODUCTION.md` and the figure table, without the Rhai engine.
//! - [`script`]: the Rhai runtime (one namespace per file) that runs a figure's script into its record.
//! - [`grid`]: a figure as a graph of cached jobs (plan, one job, local workers, Slurm).
pub mod analysis;
pub mod arrays;
pub mod atomic_file;
pub mod claims;
pub mod cpu_time;
pub mod data;
pub mod device;
pub mod error;
pub mod features;
pub mod figures;
pub mod grid;
pub mod jobs;
pub mod model;
pub mod nn;
pub mod paths;
pub mod plot;
pub mod progress;
pub mod report;
pub mod scale;
pub mod script;
pub mod tasks;
pub mod text;
pub mod train;
pub mod wordvec;

pub use error::{Error, Result};
pub use scale::Scale;

/// The languages of the studies, in their order.
pub const LANGUAGES: [&str; 5] = ["en", "fr", "de", "ru", "zh"];
