//! Hugging Face interoperability: reading the encoders researchers use — BERT (Devlin et al. 2019), RoBERTa
//! (Liu et al. 2019), XLM-R (Conneau et al. 2020), DistilBERT (Sanh et al. 2019), ELECTRA (Clark et al. 2020) —
//! in any layout `transformers` saves (bare `…Model`, `…ForMaskedLM`, `BertForPreTraining`, task models), and
//! writing crossling models as `BertForMaskedLM` folders.
//!
//! crossling's parameter names are HF `BertForMaskedLM`'s; a per-language part adds a `lang.{lang}` segment
//! (Wu et al. 2020 §4). So export keeps one language's copy of each part and drops the segment, and import is a
//! per-architecture rename, a shape check and a copy.
//!
//! - [`arch`]: the architectures and layouts (`model_type`, class names, base prefix, special tokens).
//! - [`names`]: the name mapping of every architecture, both directions, and which HF tensors are ignored.
//! - [`config`]: HF `config.json` ↔ [`ModelConfig`](crate::model::ModelConfig), per architecture.
//! - [`weights`]: the weight files (single, sharded with an index, safetensors or PyTorch pickle).
//! - [`pickle`]: reading a PyTorch `pytorch_model.bin` (zip + pickle) without Python.
//! - [`import`]: a HF folder → a crossling model (with or without its masked-LM head).
//! - [`export`]: a crossling model (or one language's view of it) → a HF folder with weights and tokenizer.
//! - [`tokenizer_class`]: what `transformers.AutoTokenizer` makes of a folder's `tokenizer.json`.
pub mod arch;
pub mod config;
pub mod export;
pub mod import;
pub mod names;
pub mod pickle;
pub mod tokenizer_class;
pub mod weights;

pub use arch::{Arch, Layout};
pub use export::{export_hf, ExportSummary};
pub use import::{import_hf, HfImport};
