//! Model configuration: the architecture of the BERT-style encoder and the sharing plan of Wu et al. (2020, §3–4),
//! as a serde struct (`deny_unknown_fields`) with defaults and named presets (`smoke`, `cpu`, `paper`).
use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::scale::Scale;

/// Which parameters are per language (Wu et al. 2020, §4 "Parameter sharing": *Sep Emb*, *Sep L1-k*).
///
/// Everything not listed here is shared by all languages. A separated part lives under a `lang.{lang}`
/// segment of its usual Hugging Face name; nothing else is renamed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SharingPlan {
    /// Separate word and position embeddings per language (`bert.embeddings.lang.{lang}.word_embeddings.weight`,
    /// `….lang.{lang}.position_embeddings.weight`: "the embedding layers (including positional embeddings)", §4.3);
    /// the tied output softmax of a language uses that language's embeddings and its own bias
    /// (`cls.predictions.lang.{lang}.bias`). The embedding LayerNorm stays shared.
    pub sep_emb: bool,
    /// Number of bottom transformer layers (layers `0..k`, i.e. the paper's L1..Lk) that get one copy per
    /// language (`bert.encoder.layer.{i}.lang.{lang}.…`).
    pub sep_layers: usize,
}

impl SharingPlan {
    /// True when any parameter is per language.
    pub fn is_separated(&self) -> bool {
        self.sep_emb || self.sep_layers > 0
    }
}

/// Architecture of the masked language model (Devlin et al. 2019 post-LN BERT) plus its sharing plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// Size of the (joint or per-language-shaped) vocabulary.
    pub vocab_size: usize,
    /// Model width `d`.
    pub hidden: usize,
    /// Number of transformer layers `L`.
    pub layers: usize,
    /// Number of attention heads `H`; must divide `hidden`.
    pub heads: usize,
    /// Width of the feed-forward layer; `None` means `4 * hidden` (see [`ModelConfig::ffn_dim`]).
    pub ffn: Option<usize>,
    /// Number of learned positions (the study used 256-token streams).
    pub max_positions: usize,
    /// Dropout on embeddings, attention output and feed-forward output.
    pub dropout: f64,
    /// Dropout on attention probabilities.
    pub attention_dropout: f64,
    /// LayerNorm epsilon.
    pub layer_norm_eps: f64,
    /// Language codes, needed when the sharing plan separates anything.
    pub languages: Vec<String>,
    /// Which parameters are per language.
    pub sharing: SharingPlan,
    /// Tie the output softmax to the word embeddings (as BERT does).
    pub tie_output: bool,
    /// Rows of `token_type_embeddings` (Hugging Face BERT's segment embeddings); 0 = absent (crossling's own
    /// models). When positive, row 0 is added at every position, as HF BERT does with `token_type_ids = None`.
    /// Omitted from the JSON when 0, so configs written before this field existed read and write unchanged.
    #[serde(skip_serializing_if = "is_zero")]
    pub type_vocab_size: usize,
    /// Pre-LN layers (Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture"): each block's
    /// LayerNorm moves to the block's input, `x + Dropout(f(LayerNorm(x)))`, and one more LayerNorm
    /// (`encoder.LayerNorm`) normalises the last layer's output; `false` is BERT's post-LN,
    /// `LayerNorm(x + Dropout(f(x)))`. Same parameter names otherwise. Omitted from the JSON when false, so configs
    /// written before this field existed read and write unchanged (and keep their model-cache keys).
    #[serde(skip_serializing_if = "is_false")]
    pub pre_ln: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            vocab_size: 32_000,
            hidden: 768,
            layers: 8,
            heads: 12,
            ffn: None,
            max_positions: 512,
            dropout: 0.1,
            attention_dropout: 0.1,
            layer_norm_eps: 1e-12,
            languages: Vec::new(),
            sharing: SharingPlan::default(),
            tie_output: true,
            type_vocab_size: 0,
            pre_ln: false,
        }
    }
}

impl ModelConfig {
    /// The architecture of a scale — the one place it is written: `smoke` 2 layers × 32 wide × 2 heads (tests),
    /// `cpu` 4 × 128 × 4 (the reference runs on two cores), `paper` 8 × 768 × 12 (Wu, Conneau et al. 2020, §3).
    /// Shares everything; set [`ModelConfig::sharing`] for an ablation.
    pub fn at<I, S>(scale: Scale, vocab_size: usize, languages: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let (layers, hidden, heads) = match scale {
            Scale::Smoke => (2, 32, 2),
            Scale::Cpu => (4, 128, 4),
            Scale::Paper => (8, 768, 12),
        };
        ModelConfig {
            vocab_size,
            hidden,
            layers,
            heads,
            languages: languages.into_iter().map(Into::into).collect(),
            ..ModelConfig::default()
        }
    }

    /// Width of the feed-forward layer: `ffn`, or `4 * hidden` when unset.
    pub fn ffn_dim(&self) -> usize {
        self.ffn.unwrap_or(4 * self.hidden)
    }

    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads.max(1)
    }

    /// Checks the configuration; every error says which field is wrong and what was expected.
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::Invalid(format!("model config: {msg}")));
        if self.vocab_size == 0 {
            return bad("vocab_size must be positive".into());
        }
        if self.hidden == 0 || self.heads == 0 {
            return bad(format!("hidden ({}) and heads ({}) must be positive", self.hidden, self.heads));
        }
        if !self.hidden.is_multiple_of(self.heads) {
            return bad(format!("hidden ({}) must be divisible by heads ({})", self.hidden, self.heads));
        }
        if self.layers == 0 {
            return bad("layers must be at least 1".into());
        }
        if self.ffn == Some(0) {
            return bad("ffn must be positive when given".into());
        }
        if self.max_positions == 0 {
            return bad("max_positions must be positive".into());
        }
        for (name, p) in [("dropout", self.dropout), ("attention_dropout", self.attention_dropout)] {
            if !(0.0..1.0).contains(&p) {
                return bad(format!("{name} must be in [0, 1), got {p}"));
            }
        }
        if self.layer_norm_eps.is_nan() || self.layer_norm_eps <= 0.0 {
            return bad(format!("layer_norm_eps must be positive, got {}", self.layer_norm_eps));
        }
        if self.sharing.sep_layers > self.layers {
            return bad(format!(
                "sharing.sep_layers ({}) must not exceed layers ({})",
                self.sharing.sep_layers, self.layers
            ));
        }
        if self.sharing.is_separated() && self.languages.is_empty() {
            return bad("languages must be non-empty when sharing.sep_emb or sharing.sep_layers > 0".into());
        }
        let mut seen = BTreeSet::new();
        for lang in &self.languages {
            if lang.is_empty() || lang.contains('.') {
                return bad(format!("language code '{lang}' must be non-empty and contain no '.'"));
            }
            if !seen.insert(lang.as_str()) {
                return bad(format!("duplicate language '{lang}' in languages"));
            }
        }
        Ok(())
    }

    /// Serialises to pretty JSON (the `config.json` stored beside a checkpoint).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(|e| Error::Invalid(format!("model config: {e}")))
    }

    /// Parses and validates JSON; unknown fields are errors.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: ModelConfig =
            serde_json::from_str(text).map_err(|e| Error::Invalid(format!("model config JSON: {e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Writes [`ModelConfig::to_json`] to `path`.
    pub fn save_json(&self, path: impl AsRef<Path>) -> Result<()> {
        std::fs::write(path.as_ref(), self.to_json()?).map_err(|e| Error::io(path.as_ref(), e))
    }

    /// Reads and validates a `config.json`; errors name the file.
    pub fn load_json(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let cfg: ModelConfig = serde_json::from_str(&text).map_err(|e| Error::format_file(path, e.to_string()))?;
        cfg.validate().map_err(|e| Error::format_file(path, e.to_string()))?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<impl std::fmt::Debug>) -> String {
        r.expect_err("expected an error").to_string()
    }

    #[test]
    fn presets_and_defaults() {
        let c = ModelConfig::at(Scale::Smoke, 100, ["en", "fr"]);
        assert_eq!((c.layers, c.hidden, c.heads, c.ffn_dim()), (2, 32, 2, 128));
        let c = ModelConfig::at(Scale::Cpu, 100, Vec::<String>::new());
        assert_eq!((c.layers, c.hidden, c.heads), (4, 128, 4));
        for scale in Scale::ALL {
            ModelConfig::at(scale, 100, ["en"]).validate().unwrap();
        }
        let c = ModelConfig::at(Scale::Paper, 100, ["en"]);
        assert_eq!((c.layers, c.hidden, c.heads, c.max_positions), (8, 768, 12, 512));
        assert!(c.tie_output && c.dropout == 0.1 && c.layer_norm_eps == 1e-12);
        assert!(ModelConfig::default().validate().is_ok());
    }

    #[test]
    fn config_errors_are_clear() {
        let c = ModelConfig { hidden: 65, heads: 2, ..ModelConfig::default() };
        let m = err(c.validate());
        assert!(m.contains("hidden (65) must be divisible by heads (2)"), "{m}");

        let mut c = ModelConfig::at(Scale::Smoke, 10, ["en", "fr"]);
        c.sharing.sep_layers = 3;
        let m = err(c.validate());
        assert!(m.contains("sep_layers (3) must not exceed layers (2)"), "{m}");

        let c = ModelConfig { sharing: SharingPlan { sep_emb: true, sep_layers: 0 }, ..ModelConfig::default() };
        assert!(err(c.validate()).contains("languages must be non-empty"));

        let c = ModelConfig { languages: vec!["en".into(), "en".into()], ..ModelConfig::default() };
        assert!(err(c.validate()).contains("duplicate language 'en'"));

        let m = err(ModelConfig::from_json(r#"{"hiden": 64}"#));
        assert!(m.contains("unknown field `hiden`"), "{m}");
        let m = err(ModelConfig::from_json(r#"{"sharing": {"sep_embs": true}}"#));
        assert!(m.contains("unknown field `sep_embs`"), "{m}");
    }

    #[test]
    fn json_round_trip() {
        let mut c = ModelConfig::at(Scale::Smoke, 50, ["en", "fr"]);
        c.sharing = SharingPlan { sep_emb: true, sep_layers: 1 };
        c.ffn = Some(100);
        let back = ModelConfig::from_json(&c.to_json().unwrap()).unwrap();
        assert_eq!(back, c);
        assert!(!c.to_json().unwrap().contains("type_vocab_size"), "absent token types are not written");
        c.type_vocab_size = 2;
        let back = ModelConfig::from_json(&c.to_json().unwrap()).unwrap();
        assert_eq!(back.type_vocab_size, 2);
        c.type_vocab_size = 0;
        assert!(!c.to_json().unwrap().contains("pre_ln"), "post-LN is not written: old cache keys stay");
        c.pre_ln = true;
        assert!(ModelConfig::from_json(&c.to_json().unwrap()).unwrap().pre_ln);
        c.pre_ln = false;
        let partial = ModelConfig::from_json(r#"{"vocab_size": 10, "hidden": 8, "heads": 2}"#).unwrap();
        assert_eq!(partial.layers, 8);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        c.save_json(&path).unwrap();
        assert_eq!(ModelConfig::load_json(&path).unwrap(), c);
    }
}
