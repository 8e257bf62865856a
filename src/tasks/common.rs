//! What every zero-shot transfer task shares: the training language, the languages a model reads, the checks made
//! before any data is read, and the provenance of the fine-tuned model ([`ModelInfo`]).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::LoadedModel;

/// The training (and dev) language.
pub const TRAIN_LANG: &str = "en";

/// The languages `model` can read: its tokenizer's (crossling) or its per-language parameters' languages; `None`
/// when any language goes (a Hugging Face model, or a shared crossling model with a joint tokenizer of no stated
/// languages).
pub fn model_languages(model: &LoadedModel) -> Option<Vec<String>> {
    let mut langs: Option<Vec<String>> = model.tokenizer.languages().map(<[String]>::to_vec);
    if model.config.sharing.is_separated() {
        let sep = &model.config.languages;
        langs = Some(match langs {
            Some(l) => l.into_iter().filter(|x| sep.contains(x)).collect(),
            None => sep.clone(),
        });
    }
    langs.filter(|l| !l.is_empty())
}

/// The checks every transfer task makes before reading data: `freeze_layers` fits the model, then
/// [`check_eval_languages`] with the languages the model reads ([`model_languages`]). `task` names the task in
/// messages.
pub fn check_languages(
    model: &LoadedModel,
    langs: &[String],
    freeze_layers: usize,
    task: &str,
    has_eval_data: impl Fn(&str) -> Result<()>,
) -> Result<()> {
    if freeze_layers > model.config.layers {
        return Err(Error::Invalid(format!(
            "cannot freeze {freeze_layers} layers of a {}-layer model",
            model.config.layers
        )));
    }
    let reader = format!("model {}", model.source.path.display());
    check_eval_languages(&reader, model_languages(model).as_deref(), langs, task, has_eval_data)
}

/// The language checks of every transfer task, on a model or on static vectors alike: `langs` is not empty,
/// `has_eval_data(lang)` accepts each language, and a representation that reads the languages `reads` (`None`: any)
/// reads English (the training language) and each of them. `reader` names the representation in messages
/// (`model PATH`), `task` the task.
pub fn check_eval_languages(
    reader: &str,
    reads: Option<&[String]>,
    langs: &[String],
    task: &str,
    has_eval_data: impl Fn(&str) -> Result<()>,
) -> Result<()> {
    if langs.is_empty() {
        return Err(Error::Invalid("no evaluation languages given".into()));
    }
    for l in langs {
        has_eval_data(l)?;
    }
    if let Some(known) = reads {
        let needed = std::iter::once(TRAIN_LANG).chain(langs.iter().map(String::as_str));
        if let Some(l) = needed.into_iter().find(|l| !known.iter().any(|k| k == l)) {
            return Err(Error::Invalid(format!(
                "{reader} has no language '{l}' (its languages: {}){}",
                known.join(", "),
                if l == TRAIN_LANG { format!("; {task} trains on English") } else { String::new() }
            )));
        }
    }
    Ok(())
}

/// Where the fine-tuned model came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub path: String,
    /// `crossling` or `huggingface`.
    pub kind: String,
    pub weights_sha256: String,
    pub layers: usize,
    pub hidden: usize,
    /// Per-language parameters: separate embeddings, number of separate bottom layers.
    pub sep_emb: bool,
    pub sep_layers: usize,
    /// The languages of the model (`None`: any).
    pub languages: Option<Vec<String>>,
    /// When the head read fresh layers stacked on a frozen layer of this model (and others), that stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<StackInfo>,
}

/// The provenance of a stack (inside [`ModelInfo`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackInfo {
    /// The frozen layer read (0 = embeddings).
    pub layer: usize,
    /// Fresh Transformer layers trained on top.
    pub depth: usize,
    /// Per language: the encoder that reads it and its map into English space (`null`: none).
    pub inputs: BTreeMap<String, StackInputInfo>,
}

/// One language's input of a stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackInputInfo {
    pub model: String,
    pub weights_sha256: String,
    pub map: Option<serde_json::Value>,
}

impl ModelInfo {
    /// The provenance of a loaded model.
    pub fn of(loaded: &LoadedModel) -> Self {
        ModelInfo {
            path: loaded.source.path.display().to_string(),
            kind: loaded.source.kind.name().to_string(),
            weights_sha256: loaded.source.weights_sha256.clone(),
            layers: loaded.config.layers,
            hidden: loaded.config.hidden,
            sep_emb: loaded.config.sharing.sep_emb,
            sep_layers: loaded.config.sharing.sep_layers,
            languages: model_languages(loaded),
            stack: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn evaluation_languages_are_checked_against_the_data_and_the_reader() {
        let reads = strings(&["en", "fr"]);
        let has = |l: &str| if l == "xx" { Err(Error::Invalid("no data for xx".into())) } else { Ok(()) };
        let check = |reads: Option<&[String]>, langs: &[&str]| {
            check_eval_languages("model m", reads, &strings(langs), "NLI", has).map_err(|e| e.to_string())
        };
        assert!(check(Some(&reads), &["fr"]).is_ok());
        assert!(check(None, &["de", "zh"]).is_ok());
        assert_eq!(check(Some(&reads), &[]).unwrap_err(), "no evaluation languages given");
        assert!(check(Some(&reads), &["fr", "xx"]).unwrap_err().contains("no data for xx"));
        assert!(check(Some(&reads), &["de"])
            .unwrap_err()
            .contains("model m has no language 'de' (its languages: en, fr)"));
        let french_only = strings(&["fr"]);
        let e = check(Some(&french_only), &["fr"]).unwrap_err();
        assert!(e.contains("has no language 'en'") && e.contains("NLI trains on English"), "{e}");
    }
}
