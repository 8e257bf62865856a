//! Hugging Face `config.json` ↔ [`ModelConfig`], for each architecture of [`super::arch`] (keys as in
//! `transformers` `models/*/configuration_*.py`; a missing optional key takes that class's default).
//!
//! | crossling | BERT, RoBERTa, XLM-R, ELECTRA | DistilBERT |
//! |---|---|---|
//! | `vocab_size` | `vocab_size` | `vocab_size` |
//! | `hidden`, `layers`, `heads`, `ffn` | `hidden_size`, `num_hidden_layers`, `num_attention_heads`, `intermediate_size` | `dim`, `n_layers`, `n_heads`, `hidden_dim` |
//! | `max_positions` | `max_position_embeddings` (RoBERTa / XLM-R: minus `pad_token_id + 1`) | `max_position_embeddings` |
//! | `type_vocab_size` | `type_vocab_size` (default 2) | 0 (no token types) |
//! | `layer_norm_eps` | `layer_norm_eps` (default 1e-12) | 1e-12 (fixed in the code) |
//! | `dropout`, `attention_dropout` | `hidden_dropout_prob`, `attention_probs_dropout_prob` | `dropout`, `attention_dropout` |
//! | `tie_output` | `tie_word_embeddings` (default true) | `tie_word_embeddings` (default true) |
//!
//! RoBERTa and XLM-R number positions from `pad_token_id + 1` (`create_position_ids_from_input_ids`: the
//! cumulative count of non-padding tokens, plus `pad_token_id`), so a sequence's token `t` (right padding, no
//! padding id among its tokens) uses row `pad_token_id + 1 + t`. crossling numbers from 0, so the import drops
//! the first `pad_token_id + 1` rows ([`HfConfig::position_offset`]) and `max_positions` shrinks by as much
//! (514 → 512 for `roberta-base` and `xlm-roberta-base`). Padded positions get other rows than in HF, which changes
//! nothing at the real tokens (padding is masked out of attention) and those rows are never used.
//!
//! Only what crossling computes is accepted: the exact erf GELU (`hidden_act` / `activation` = `"gelu"`),
//! absolute positions, a bidirectional encoder (`is_decoder` false) and, for ELECTRA, `embedding_size` =
//! `hidden_size` (no `embeddings_project`). Anything else is an error naming the file and the key.
use std::path::Path;

use serde_json::{json, Value};

use super::arch::{identify, Arch, Layout};
use crate::error::{Error, Result};
use crate::model::ModelConfig;

/// Whether a parsed `config.json` is a Hugging Face one (it has `model_type` or `architectures`).
pub fn is_hf_config(v: &Value) -> bool {
    v.get("model_type").is_some() || v.get("architectures").is_some()
}

/// A Hugging Face `config.json` as crossling reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct HfConfig {
    pub arch: Arch,
    /// The first `architectures` entry, when given (`BertForSequenceClassification`).
    pub class: Option<String>,
    /// The layout that class saves; `None` without a class or for one crossling does not know (then the
    /// tensors tell).
    pub layout: Option<Layout>,
    /// The encoder's shape (shared, no languages).
    pub model: ModelConfig,
    /// Rows of HF's position table before crossling's position 0: `pad_token_id + 1` for RoBERTa and XLM-R, else 0.
    pub position_offset: usize,
}

/// Reads a Hugging Face `config.json` of any supported architecture.
pub fn read_hf_config(path: &Path) -> Result<HfConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| Error::format_file(path, format!("invalid JSON: {e}")))?;
    hf_config(&v).map_err(|msg| Error::format_file(path, msg))
}

fn hf_config(v: &Value) -> std::result::Result<HfConfig, String> {
    let (arch, class) = identify(v)?;
    let layout = class.as_deref().and_then(|c| arch.layout_of(c));
    let int = |key: &str| -> std::result::Result<usize, String> {
        v.get(key)
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .ok_or_else(|| format!("key '{key}' missing or not a non-negative integer"))
    };
    let int_or = |key: &str, default: usize| match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(_) => int(key),
    };
    let float = |key: &str, default: f64| -> std::result::Result<f64, String> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(x) => x.as_f64().ok_or_else(|| format!("key '{key}' is not a number: {x}")),
        }
    };
    let act_key = if arch == Arch::DistilBert { "activation" } else { "hidden_act" };
    let act = v.get(act_key).and_then(Value::as_str).unwrap_or("gelu");
    if act != "gelu" {
        return Err(format!(
            "key '{act_key}' is '{act}'; only 'gelu' (the exact erf GELU crossling computes) is supported"
        ));
    }
    let pos = v.get("position_embedding_type").and_then(Value::as_str).unwrap_or("absolute");
    if pos != "absolute" {
        return Err(format!("key 'position_embedding_type' is '{pos}'; only 'absolute' is supported"));
    }
    if v.get("is_decoder").and_then(Value::as_bool) == Some(true) {
        return Err("key 'is_decoder' is true; only bidirectional encoders are supported".into());
    }
    let tie_output = v.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(true);
    let mut position_offset = 0;
    let cfg = if arch == Arch::DistilBert {
        ModelConfig {
            vocab_size: int("vocab_size")?,
            hidden: int("dim")?,
            layers: int("n_layers")?,
            heads: int("n_heads")?,
            ffn: Some(int("hidden_dim")?),
            max_positions: int("max_position_embeddings")?,
            dropout: float("dropout", 0.1)?,
            attention_dropout: float("attention_dropout", 0.1)?,
            layer_norm_eps: 1e-12,
            tie_output,
            type_vocab_size: 0,
            ..ModelConfig::default()
        }
    } else {
        let hidden = int("hidden_size")?;
        let mut max_positions = int("max_position_embeddings")?;
        if matches!(arch, Arch::Roberta | Arch::XlmRoberta) {
            position_offset = int_or("pad_token_id", 1)? + 1;
            if max_positions <= position_offset {
                return Err(format!(
                    "key 'max_position_embeddings' ({max_positions}) leaves no position after the \
                     pad_token_id + 1 = {position_offset} rows RoBERTa reserves"
                ));
            }
            max_positions -= position_offset;
        }
        if arch == Arch::Electra {
            let e = int_or("embedding_size", 128)?;
            if e != hidden {
                return Err(format!(
                    "key 'embedding_size' is {e} but 'hidden_size' is {hidden}: an ELECTRA model with an \
                     embeddings_project layer is not supported (only embedding_size = hidden_size, e.g. the base and \
                     large discriminators)"
                ));
            }
        }
        ModelConfig {
            vocab_size: int("vocab_size")?,
            hidden,
            layers: int("num_hidden_layers")?,
            heads: int("num_attention_heads")?,
            ffn: Some(int("intermediate_size")?),
            max_positions,
            dropout: float("hidden_dropout_prob", 0.1)?,
            attention_dropout: float("attention_probs_dropout_prob", 0.1)?,
            layer_norm_eps: float("layer_norm_eps", 1e-12)?,
            tie_output,
            type_vocab_size: int_or("type_vocab_size", 2)?,
            ..ModelConfig::default()
        }
    };
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(HfConfig { arch, class, layout, model: cfg, position_offset })
}

/// The HF `config.json` of a (shared or single-language view of a) crossling model. A model without token-type
/// embeddings is exported with `type_vocab_size = 2` and zero rows, which computes the same function.
pub fn hf_config_json(cfg: &ModelConfig, pad_token_id: u32) -> Value {
    json!({
        "architectures": ["BertForMaskedLM"],
        "model_type": "bert",
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden,
        "num_hidden_layers": cfg.layers,
        "num_attention_heads": cfg.heads,
        "intermediate_size": cfg.ffn_dim(),
        "hidden_act": "gelu",
        "hidden_dropout_prob": cfg.dropout,
        "attention_probs_dropout_prob": cfg.attention_dropout,
        "max_position_embeddings": cfg.max_positions,
        "type_vocab_size": exported_type_vocab_size(cfg),
        "layer_norm_eps": cfg.layer_norm_eps,
        "initializer_range": 0.02,
        "position_embedding_type": "absolute",
        "pad_token_id": pad_token_id,
        "tie_word_embeddings": cfg.tie_output,
    })
}

/// Token-type rows of an exported model: the model's own, or 2 zero rows when it has none.
pub fn exported_type_vocab_size(cfg: &ModelConfig) -> usize {
    if cfg.type_vocab_size > 0 {
        cfg.type_vocab_size
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Value {
        json!({"model_type": "bert", "vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2,
               "num_attention_heads": 4, "intermediate_size": 64, "max_position_embeddings": 64,
               "hidden_act": "gelu", "type_vocab_size": 2, "layer_norm_eps": 1e-12})
    }

    #[test]
    fn round_trip_through_hf_json() {
        let c = hf_config(&base()).unwrap();
        let cfg = c.model;
        assert_eq!((c.arch, c.class, c.layout, c.position_offset), (Arch::Bert, None, None, 0));
        assert_eq!((cfg.vocab_size, cfg.hidden, cfg.layers, cfg.heads, cfg.ffn_dim()), (100, 32, 2, 4, 64));
        assert_eq!((cfg.max_positions, cfg.type_vocab_size, cfg.tie_output), (64, 2, true));
        let back = hf_config(&hf_config_json(&cfg, 0)).unwrap();
        assert_eq!(back.model, cfg);
        assert_eq!((back.class.as_deref(), back.layout), (Some("BertForMaskedLM"), Some(Layout::MaskedLm)));
        let ours = ModelConfig { type_vocab_size: 0, ..cfg.clone() };
        assert_eq!(hf_config_json(&ours, 0)["type_vocab_size"], 2);
    }

    #[test]
    fn other_architectures() {
        let mut v = base();
        v["model_type"] = json!("xlm-roberta");
        v["architectures"] = json!(["XLMRobertaModel"]);
        v["pad_token_id"] = json!(1);
        v["type_vocab_size"] = json!(1);
        v["max_position_embeddings"] = json!(66);
        let c = hf_config(&v).unwrap();
        assert_eq!((c.arch, c.layout, c.position_offset), (Arch::XlmRoberta, Some(Layout::Encoder), 2));
        assert_eq!((c.model.max_positions, c.model.type_vocab_size), (64, 1));

        let d = json!({"model_type": "distilbert", "architectures": ["DistilBertForSequenceClassification"],
                       "vocab_size": 100, "dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64,
                       "max_position_embeddings": 64, "activation": "gelu", "dropout": 0.2});
        let c = hf_config(&d).unwrap();
        assert_eq!((c.arch, c.layout), (Arch::DistilBert, Some(Layout::Task)));
        assert_eq!((c.model.hidden, c.model.ffn_dim(), c.model.type_vocab_size, c.model.dropout), (32, 64, 0, 0.2));

        let mut e = base();
        e["model_type"] = json!("electra");
        e["embedding_size"] = json!(32);
        assert_eq!(hf_config(&e).unwrap().arch, Arch::Electra);
    }

    #[test]
    fn unsupported_settings_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.json");
        for (key, value, want) in [
            ("hidden_act", json!("gelu_new"), "'hidden_act' is 'gelu_new'"),
            ("position_embedding_type", json!("relative_key"), "'position_embedding_type' is 'relative_key'"),
            ("model_type", json!("deberta-v2"), "'model_type' is 'deberta-v2'; crossling reads model_type bert"),
            ("hidden_size", json!("x"), "'hidden_size' missing"),
            ("is_decoder", json!(true), "'is_decoder' is true"),
        ] {
            let mut v = base();
            v[key] = value;
            std::fs::write(&p, v.to_string()).unwrap();
            let e = read_hf_config(&p).unwrap_err().to_string();
            assert!(e.contains("config.json") && e.contains(want), "{e}");
        }
        let mut v = base();
        v["model_type"] = json!("electra");
        v["embedding_size"] = json!(16);
        assert!(hf_config(&v).unwrap_err().contains("'embedding_size' is 16 but 'hidden_size' is 32"));
        v["model_type"] = json!("distilbert");
        v["activation"] = json!("relu");
        assert!(hf_config(&v).unwrap_err().contains("'activation' is 'relu'"));
        let mut v = base();
        v["model_type"] = json!("roberta");
        v["max_position_embeddings"] = json!(2);
        assert!(hf_config(&v).unwrap_err().contains("leaves no position"));
    }
}
