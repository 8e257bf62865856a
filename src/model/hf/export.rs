//! Exporting a crossling model as a Hugging Face `BertForMaskedLM` folder that `transformers` loads with no
//! missing or unexpected keys and that computes the same function (checked to 1e-5 by `tests/hf_interop.rs`).
//!
//! The folder holds `config.json` ([`super::config::hf_config_json`]), `model.safetensors` (HF names via
//! [`super::names::export_name`]; a model without token-type embeddings gets 2 zero rows, which adds nothing;
//! tied decoder weight and bias are left out, as `save_pretrained` does), and the tokenizer: `tokenizer.json`
//! with a `[CLS] $A [SEP]` post-processor, `tokenizer_config.json` and `special_tokens_map.json`. For the
//! per-language vocabulary schemes the exported tokenizer is that language's BPE with its local ids replaced by
//! the model's global ids, so `AutoTokenizer` produces exactly the ids crossling feeds the model for that
//! language. (Chinese: crossling segments raw text with jieba first; give the exported tokenizer segmented text.)
//!
//! A model read from a Hugging Face checkpoint without a masked-LM head (its `VarStore` holds no `cls.predictions.*`,
//! see [`super::import`]) is refused. Any architecture that loads exports: RoBERTa and XLM-R as the BERT of the
//! same function (their position table already starts at crossling's position 0).
//!
//! Nothing half-written is left: the folder is assembled under a temporary name beside `out` and renamed.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tch::{nn::VarStore, Kind, Tensor};
use tokenizers::processors::template::TemplateProcessing;

use super::config::{exported_type_vocab_size, hf_config_json};
use super::names::export_name;
use crate::arrays::stream::write_tensors;
use crate::error::{Error, Result};
use crate::model::tokenizer::ModelTokenizer;
use crate::model::ModelConfig;
use crate::text::tokenize::AnchorScheme;

/// What [`export_hf`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSummary {
    pub out: PathBuf,
    /// The language whose view was exported (`None` for a shared model exported without one).
    pub lang: Option<String>,
    /// Number of tensors in `model.safetensors`.
    pub tensors: usize,
    pub vocab_size: usize,
}

/// Exports the model in `vs` (built from `cfg`) with `tokenizer` to the new folder `out`; `lang` picks the
/// language view (required when the model or the tokenizer is per language).
pub fn export_hf(
    vs: &VarStore,
    cfg: &ModelConfig,
    tokenizer: &ModelTokenizer,
    lang: Option<&str>,
    out: &Path,
) -> Result<ExportSummary> {
    let lang = check_lang(cfg, tokenizer, lang)?;
    if cfg.pre_ln {
        return Err(Error::Invalid(
            "this model is pre-LN (`pre_ln = true`): Hugging Face's BertForMaskedLM is post-LN and would compute \
             another function with these weights, so export writes no folder for it"
                .into(),
        ));
    }
    if !vs.variables().keys().any(|n| n.starts_with("cls.predictions.")) {
        return Err(Error::Invalid(
            "this model has no masked-LM head (it was read from a checkpoint saved without one, e.g. a BertModel); \
             export writes BertForMaskedLM folders, which need it"
                .into(),
        ));
    }
    if out.exists() {
        return Err(Error::Invalid(format!("{} already exists; remove it or choose another --out", out.display())));
    }
    let name = out.file_name().ok_or_else(|| Error::Invalid(format!("{} has no folder name", out.display())))?;
    let tmp = out.with_file_name(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let written = write_folder(vs, cfg, tokenizer, lang.as_deref(), &tmp);
    let tensors = match written {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, out).map_err(|e| Error::io(out, e))?;
    Ok(ExportSummary { out: out.to_path_buf(), lang, tensors, vocab_size: cfg.vocab_size })
}

/// The language to export: required and checked when anything is per language.
fn check_lang(cfg: &ModelConfig, tokenizer: &ModelTokenizer, lang: Option<&str>) -> Result<Option<String>> {
    let tok_langs = tokenizer.languages().map(<[String]>::to_vec);
    let per_lang_tok =
        matches!(tokenizer, ModelTokenizer::Crossling { tokenizer: t, .. } if t.spec().scheme != AnchorScheme::Joint);
    let known: Vec<String> =
        if cfg.sharing.is_separated() { cfg.languages.clone() } else { tok_langs.clone().unwrap_or_default() };
    match lang {
        None if cfg.sharing.is_separated() || per_lang_tok => Err(Error::Invalid(format!(
            "this model has per-language {}; choose the language to export with --lang ({})",
            if cfg.sharing.is_separated() { "parameters" } else { "vocabularies" },
            known.join(", ")
        ))),
        None => Ok(None),
        Some(l) => {
            let in_model = !cfg.sharing.is_separated() || cfg.languages.iter().any(|x| x == l);
            let in_tok = tok_langs.as_ref().is_none_or(|ls| ls.iter().any(|x| x == l));
            if !in_model || !in_tok {
                return Err(Error::Invalid(format!(
                    "unknown language '{l}' for this model; known: {}",
                    known.join(", ")
                )));
            }
            Ok(Some(l.to_string()))
        }
    }
}

fn write_folder(
    vs: &VarStore,
    cfg: &ModelConfig,
    tokenizer: &ModelTokenizer,
    lang: Option<&str>,
    dir: &Path,
) -> Result<usize> {
    let mut tensors: BTreeMap<String, Tensor> = BTreeMap::new();
    for (ours, t) in vs.variables() {
        if let Some(hf) = export_name(&ours, lang) {
            if tensors.insert(hf.clone(), t.detach()).is_some() {
                return Err(Error::Invalid(format!("two variables export to '{hf}'")));
            }
        }
    }
    if cfg.type_vocab_size == 0 {
        let rows = exported_type_vocab_size(cfg) as i64;
        tensors.insert(
            "bert.embeddings.token_type_embeddings.weight".into(),
            Tensor::zeros([rows, cfg.hidden as i64], (Kind::Float, tch::Device::Cpu)),
        );
    }
    let list: Vec<(String, Tensor)> = tensors.into_iter().collect();
    let meta: BTreeMap<String, String> = [("format".to_string(), "pt".to_string())].into();
    write_tensors(&dir.join("model.safetensors"), &list, &meta)?;

    let sp = tokenizer.specials();
    let view = ModelConfig { languages: Vec::new(), sharing: Default::default(), ..cfg.clone() };
    write_json(&dir.join("config.json"), &hf_config_json(&view, sp.pad))?;
    write_json(&dir.join("tokenizer.json"), &tokenizer_json(tokenizer, lang)?)?;
    let names: BTreeMap<&str, String> = [
        ("cls_token", sp.cls),
        ("sep_token", sp.sep),
        ("pad_token", sp.pad),
        ("mask_token", sp.mask),
        ("unk_token", sp.unk),
    ]
    .into_iter()
    .map(|(k, id)| (k, tokenizer.id_to_token(id).unwrap_or_default()))
    .collect();
    let mut tc = json!({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": cfg.max_positions,
        "clean_up_tokenization_spaces": false,
    });
    for (k, v) in &names {
        tc[*k] = json!(v);
    }
    write_json(&dir.join("tokenizer_config.json"), &tc)?;
    write_json(&dir.join("special_tokens_map.json"), &serde_json::to_value(&names).unwrap_or_default())?;
    Ok(list.len())
}

/// `tokenizer.json` of the exported view: ids are the model's, `[CLS] … [SEP]` is added by the post-processor.
fn tokenizer_json(tokenizer: &ModelTokenizer, lang: Option<&str>) -> Result<Value> {
    let sp = tokenizer.specials();
    let (mut v, map): (Value, Option<Vec<u32>>) = match tokenizer {
        ModelTokenizer::Crossling { tokenizer: t, .. } => {
            let l = lang.map(str::to_string).or_else(|| t.langs().first().cloned()).unwrap_or_default();
            let (hf, local_to_global) = t.hf_view(&l)?;
            let s = hf.to_string(false).map_err(|e| Error::Invalid(format!("serializing tokenizer: {e}")))?;
            (
                serde_json::from_str(&s).map_err(|e| Error::Invalid(format!("tokenizer JSON: {e}")))?,
                Some(local_to_global.to_vec()),
            )
        }
        ModelTokenizer::HuggingFace(h) => {
            let s = h.tokenizer.to_string(false).map_err(|e| Error::Invalid(format!("serializing tokenizer: {e}")))?;
            (serde_json::from_str(&s).map_err(|e| Error::Invalid(format!("tokenizer JSON: {e}")))?, None)
        }
    };
    if let Some(map) = map {
        let remap = |id: &Value| -> Result<Value> {
            let local = id.as_u64().ok_or_else(|| Error::Invalid("tokenizer id is not an integer".into()))?;
            let global =
                map.get(local as usize).ok_or_else(|| Error::Invalid(format!("local id {local} has no global id")))?;
            Ok(json!(global))
        };
        if let Some(vocab) = v.pointer_mut("/model/vocab").and_then(Value::as_object_mut) {
            for id in vocab.values_mut() {
                *id = remap(id)?;
            }
        }
        if let Some(added) = v.get_mut("added_tokens").and_then(Value::as_array_mut) {
            for tok in added {
                let new = remap(&tok["id"])?;
                tok["id"] = new;
            }
        }
    }
    let token = |id: u32| tokenizer.id_to_token(id).unwrap_or_default();
    let (cls, sep) = (token(sp.cls), token(sp.sep));
    let post = TemplateProcessing::builder()
        .try_single(format!("{cls} $A {sep}"))
        .and_then(|b| b.try_pair(format!("{cls} $A {sep} $B:1 {sep}:1")))
        .map_err(|e| Error::Invalid(format!("post-processor: {e}")))?
        .special_tokens(vec![(cls.clone(), sp.cls), (sep.clone(), sp.sep)])
        .build()
        .map_err(|e| Error::Invalid(format!("post-processor: {e}")))?;
    v["post_processor"] = serde_json::to_value(&post).map_err(|e| Error::Invalid(format!("post-processor: {e}")))?;
    v["truncation"] = Value::Null;
    v["padding"] = Value::Null;
    Ok(v)
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}
