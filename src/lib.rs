//! # crossling
//!
//! Reproduces, end to end and from real data, two studies of cross-lingual structure in masked language models —
//! Wu, Conneau, Li, Zettlemoyer & Stoyanov (ACL 2020), *Emerging Cross-lingual Structure in Pretrained Language
//! Models*, and Liu, Hsu, Chuang & Lee (2020), *A Study of Cross-Lingual Ability and Language-specific Information
//! in Multilingual BERT* — and exposes the same primitives for researchers' own models.
//!
//! Modules follow the flow of `DESIGN.md`:
//! - [`analysis`]: normalization, Procrustes, NN / CSLS / inverted-softmax retrieval and its metrics, CKA,
//!   bootstrap intervals, `.npy` / `.safetensors` arrays.
//! - [`atomic_file`]: whole-file writes through a temporary sibling and a rename.
//! - [`claims`]: the papers' claims as predicates over scores with intervals, the verdict rule, `REPRODUCTION.md`.
//! - [`data`]: manifests, resolution (mirror ▸ cache ▸ download) with sha256 checks, one reader per format.
//! - [`device`]: device selection and facts about the linked libtorch.
//! - [`grid`]: a figure as a graph of cached jobs (plan, one job, local workers, Slurm).
//! - [`text`]: corpus building (per-language streams, splits, caps, domains, sentence splitting, Chinese
//!   segmentation).
//! - [`tasks`]: zero-shot evaluation building blocks — NER span F1 with BIO repair, UAS / LAS, greedy and
//!   single-root MST decoding, fast_align word alignment with grow-diag-final-and, AER.
//! - [`plot`]: figures (line, grouped bars, heat maps, schematics, panel grids) from serde chart specs to PNG +
//!   SVG with a bundled font, and result tables to Markdown + CSV.
pub mod analysis;
pub mod atomic_file;
pub mod claims;
pub mod data;
pub mod device;
pub mod error;
pub mod features;
pub mod figures;
pub mod grid;
pub mod model;
pub mod plot;
pub mod progress;
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
