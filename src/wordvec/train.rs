//! One entry point for every static model: the kind, its settings as a JSON map (checked field by field: a
//! misspelt setting is an error, not a silent default), and the corpus.
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::corpus::Corpus;
use super::vectors::WordVectors;
use super::{fasttext, glove, word2vec};
use crate::error::{Error, Result};

/// The static models crossling trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaticKind {
    /// word2vec (Mikolov et al. 2013): skip-gram or CBOW with negative sampling.
    Word2vec,
    /// fastText-style skip-gram with character n-grams (Bojanowski et al. 2017).
    Fasttext,
    /// GloVe (Pennington et al. 2014).
    Glove,
}

impl std::str::FromStr for StaticKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<StaticKind> {
        match s {
            "word2vec" => Ok(StaticKind::Word2vec),
            "fasttext" => Ok(StaticKind::Fasttext),
            "glove" => Ok(StaticKind::Glove),
            other => {
                Err(Error::Invalid(format!("unknown static model '{other}': expected word2vec, fasttext or glove")))
            }
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(
    kind: StaticKind,
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<T> {
    serde_json::from_value(serde_json::Value::Object(config.clone()))
        .map_err(|e| Error::Invalid(format!("{kind:?} settings: {e}")))
}

/// Trains `kind` on `corpus` with the settings `config` (`scratch` holds GloVe's co-occurrence spills); returns
/// the vectors of the vocabulary and the trainer's report with the resolved settings.
pub fn train_static(
    kind: StaticKind,
    corpus: &Corpus,
    config: &serde_json::Map<String, serde_json::Value>,
    scratch: &Path,
    progress: bool,
) -> Result<(WordVectors, serde_json::Value)> {
    match kind {
        StaticKind::Word2vec => {
            let cfg: word2vec::Word2VecConfig = parse(kind, config)?;
            let (vectors, report) = word2vec::train(corpus, &cfg, progress)?;
            Ok((vectors, serde_json::json!({ "config": json(&cfg), "report": json(&report) })))
        }
        StaticKind::Fasttext => {
            let cfg: fasttext::FastTextConfig = parse(kind, config)?;
            let model = fasttext::FastText::train(corpus, &cfg, progress)?;
            Ok((model.to_vectors()?, serde_json::json!({ "config": json(&cfg) })))
        }
        StaticKind::Glove => {
            let cfg: glove::GloveConfig = parse(kind, config)?;
            let (vectors, report) = glove::train(corpus, &cfg, scratch, progress)?;
            Ok((vectors, serde_json::json!({ "config": json(&cfg), "report": json(&report) })))
        }
    }
}

/// A serialisable value as JSON (`null` if it cannot be).
fn json<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}
