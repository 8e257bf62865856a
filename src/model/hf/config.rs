//! Hugging Face BERT `config.json` ↔ [`ModelConfig`].
//!
//! | HF key | crossling |
//! |---|---|
//! | `vocab_size`, `hidden_size`, `num_hidden_layers`, `num_attention_heads`, `intermediate_size` | `vocab_size`, `hidden`, `layers`, `heads`, `ffn` |
//! | `max_position_embeddings`, `type_vocab_size`, `layer_norm_eps` | `max_positions`, `type_vocab_size`, `layer_norm_eps` |
//! | `hidden_dropout_prob`, `attention_probs_dropout_prob` | `dropout`, `attention_dropout` |
//! | `tie_word_embeddings` (default true) | `tie_output` |
//!
//! Only what crossling computes is accepted: `hidden_act = "gelu"` (the erf GELU) and
//! `position_embedding_type = "absolute"`; anything else is an error naming the file and the key.
use std::path::Path;

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::model::ModelConfig;

/// Whether a parsed `config.json` is a Hugging Face one (it has `model_type` or `architectures`).
pub fn is_hf_config(v: &Value) -> bool {
    v.get("model_type").is_some() || v.get("architectures").is_some()
}

/// Reads a HF BERT `config.json` as a [`ModelConfig`] (shared, no languages).
pub fn read_hf_config(path: &Path) -> Result<ModelConfig> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| Error::format_file(path, format!("invalid JSON: {e}")))?;
    hf_to_model_config(&v).map_err(|msg| Error::format_file(path, msg))
}

fn hf_to_model_config(v: &Value) -> std::result::Result<ModelConfig, String> {
    let int = |key: &str| -> std::result::Result<usize, String> {
        v.get(key)
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .ok_or_else(|| format!("key '{key}' missing or not a non-negative integer"))
    };
    let float = |key: &str, default: f64| -> std::result::Result<f64, String> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(x) => x.as_f64().ok_or_else(|| format!("key '{key}' is not a number: {x}")),
        }
    };
    if let Some(t) = v.get("model_type").and_then(Value::as_str) {
        if t != "bert" {
            return Err(format!("key 'model_type' is '{t}'; only 'bert' checkpoints can be imported"));
        }
    }
    let act = v.get("hidden_act").and_then(Value::as_str).unwrap_or("gelu");
    if act != "gelu" {
        return Err(format!(
            "key 'hidden_act' is '{act}'; only 'gelu' (the exact erf GELU crossling computes) is supported"
        ));
    }
    let pos = v.get("position_embedding_type").and_then(Value::as_str).unwrap_or("absolute");
    if pos != "absolute" {
        return Err(format!("key 'position_embedding_type' is '{pos}'; only 'absolute' is supported"));
    }
    if v.get("is_decoder").and_then(Value::as_bool) == Some(true) {
        return Err("key 'is_decoder' is true; only bidirectional encoders are supported".into());
    }
    let cfg = ModelConfig {
        vocab_size: int("vocab_size")?,
        hidden: int("hidden_size")?,
        layers: int("num_hidden_layers")?,
        heads: int("num_attention_heads")?,
        ffn: Some(int("intermediate_size")?),
        max_positions: int("max_position_embeddings")?,
        dropout: float("hidden_dropout_prob", 0.1)?,
        attention_dropout: float("attention_probs_dropout_prob", 0.1)?,
        layer_norm_eps: float("layer_norm_eps", 1e-12)?,
        languages: Vec::new(),
        sharing: Default::default(),
        tie_output: v.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(true),
        type_vocab_size: match v.get("type_vocab_size") {
            None => 2,
            Some(_) => int("type_vocab_size")?,
        },
    };
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
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
        let cfg = hf_to_model_config(&base()).unwrap();
        assert_eq!((cfg.vocab_size, cfg.hidden, cfg.layers, cfg.heads, cfg.ffn_dim()), (100, 32, 2, 4, 64));
        assert_eq!((cfg.max_positions, cfg.type_vocab_size, cfg.tie_output), (64, 2, true));
        let back = hf_to_model_config(&hf_config_json(&cfg, 0)).unwrap();
        assert_eq!(back, cfg);
        let ours = ModelConfig { type_vocab_size: 0, ..cfg.clone() };
        assert_eq!(hf_config_json(&ours, 0)["type_vocab_size"], 2);
    }

    #[test]
    fn unsupported_settings_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.json");
        for (key, value, want) in [
            ("hidden_act", json!("gelu_new"), "'hidden_act' is 'gelu_new'"),
            ("position_embedding_type", json!("relative_key"), "'position_embedding_type' is 'relative_key'"),
            ("model_type", json!("roberta"), "only 'bert'"),
            ("hidden_size", json!("x"), "'hidden_size' missing"),
        ] {
            let mut v = base();
            v[key] = value;
            std::fs::write(&p, v.to_string()).unwrap();
            let e = read_hf_config(&p).unwrap_err().to_string();
            assert!(e.contains("config.json") && e.contains(want), "{e}");
        }
    }
}
