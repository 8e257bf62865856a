//! Hugging Face BERT interoperability (Devlin et al. 2019 `BertForMaskedLM`, as implemented by `transformers`).
//!
//! crossling's parameter names already are HF's; a per-language part adds a `lang.{lang}` segment (Wu et al.
//! 2020 §4). So export keeps one language's copy of each part and drops the segment, and import is a name and
//! shape check plus a copy.
//!
//! - [`names`]: the name mapping in both directions and which HF tensors are ignored.
//! - [`config`]: HF `config.json` ↔ [`ModelConfig`](crate::model::ModelConfig).
//! - [`pickle`]: reading a PyTorch `pytorch_model.bin` (zip + pickle) without Python.
//! - [`import`]: a HF folder → a crossling model.
//! - [`export`]: a crossling model (or one language's view of it) → a HF folder with weights and tokenizer.
pub mod config;
pub mod export;
pub mod import;
pub mod names;
pub mod pickle;

pub use export::{export_hf, ExportSummary};
pub use import::{import_hf, HfImport};
