//! The Hugging Face encoder architectures crossling reads and the checkpoint layouts of each.
//!
//! All five are post-LN BERT encoders (Devlin et al. 2019) that differ in names and small details, read off
//! `transformers`' modeling files (`models/{bert,roberta,xlm_roberta,distilbert,electra}/modeling_*.py`):
//!
//! | `model_type` | classes | base prefix | differences from BERT |
//! |---|---|---|---|
//! | `bert` | `Bert*` | `bert.` | — |
//! | `roberta`, `xlm-roberta` | `Roberta*`, `XLMRoberta*` | `roberta.` | positions start at `pad_token_id + 1` (`create_position_ids_from_input_ids`); head `lm_head` |
//! | `distilbert` | `DistilBert*` | `distilbert.` | no token types, no pooler; layer names `transformer.layer.{i}.{attention.q_lin, sa_layer_norm, ffn.lin1, …}`; head `vocab_transform` / `vocab_layer_norm` / `vocab_projector` |
//! | `electra` | `Electra*` | `electra.` | `embedding_size` may differ from `hidden_size` (then an `embeddings_project` layer, which crossling does not have: refused); generator head `generator_predictions` / `generator_lm_head` |
//!
//! A **layout** is what a class saves around the encoder ([`Layout`]): the bare encoder (`BertModel`: tensors
//! without the base prefix, the layout of sentence-transformers and most fine-tuned encoders), the encoder with a
//! masked-LM head (`…ForMaskedLM`, `BertForPreTraining`), or with a task head (`…ForSequenceClassification`,
//! `ElectraForPreTraining`'s replaced-token detector, …), which crossling ignores. The tensor names themselves are
//! mapped in [`super::names`]; the `config.json` keys in [`super::config`].
use std::fmt;

use serde_json::Value;

use crate::model::tokenizer::SpecialNames;

/// A Hugging Face encoder architecture crossling can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    Bert,
    Roberta,
    XlmRoberta,
    DistilBert,
    Electra,
}

/// What a checkpoint holds around the encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The bare encoder (`BertModel`, `RobertaModel`, …), pooler included where the class has one.
    Encoder,
    /// Encoder + masked-LM head (`…ForMaskedLM`).
    MaskedLm,
    /// BERT pre-training: masked-LM head + next-sentence head (the latter ignored).
    PreTraining,
    /// Encoder + a task head (classification, tagging, QA, multiple choice, ELECTRA's replaced-token detector):
    /// the encoder is read, the head ignored.
    Task,
}

impl Layout {
    /// Whether the layout carries a masked-LM head.
    pub fn has_mlm_head(self) -> bool {
        matches!(self, Layout::MaskedLm | Layout::PreTraining)
    }

    /// A few words for notes and errors.
    pub fn describe(self) -> &'static str {
        match self {
            Layout::Encoder => "encoder only, no masked-LM head",
            Layout::MaskedLm => "encoder + masked-LM head",
            Layout::PreTraining => "encoder + masked-LM head + next-sentence head",
            Layout::Task => "encoder + task head",
        }
    }
}

/// Task-model class suffixes shared by every architecture.
const TASKS: [(&str, Layout); 4] = [
    ("ForSequenceClassification", Layout::Task),
    ("ForTokenClassification", Layout::Task),
    ("ForQuestionAnswering", Layout::Task),
    ("ForMultipleChoice", Layout::Task),
];

impl Arch {
    /// Every supported architecture.
    pub const ALL: [Arch; 5] = [Arch::Bert, Arch::Roberta, Arch::XlmRoberta, Arch::DistilBert, Arch::Electra];

    /// The `model_type` of its `config.json`.
    pub fn model_type(self) -> &'static str {
        match self {
            Arch::Bert => "bert",
            Arch::Roberta => "roberta",
            Arch::XlmRoberta => "xlm-roberta",
            Arch::DistilBert => "distilbert",
            Arch::Electra => "electra",
        }
    }

    /// The start of its class names (`Bert` of `BertForMaskedLM`).
    pub fn class_prefix(self) -> &'static str {
        match self {
            Arch::Bert => "Bert",
            Arch::Roberta => "Roberta",
            Arch::XlmRoberta => "XLMRoberta",
            Arch::DistilBert => "DistilBert",
            Arch::Electra => "Electra",
        }
    }

    /// The name of the encoder inside a model with a head (`base_model_prefix`): `bert`, `roberta`, …
    pub fn base_prefix(self) -> &'static str {
        match self {
            Arch::Bert => "bert",
            Arch::Roberta | Arch::XlmRoberta => "roberta",
            Arch::DistilBert => "distilbert",
            Arch::Electra => "electra",
        }
    }

    /// The class suffixes crossling knows for this architecture and their layouts.
    pub fn classes(self) -> Vec<(&'static str, Layout)> {
        let mut v = vec![("Model", Layout::Encoder), ("ForMaskedLM", Layout::MaskedLm)];
        match self {
            Arch::Bert => {
                v.push(("ForPreTraining", Layout::PreTraining));
                v.push(("ForNextSentencePrediction", Layout::Task));
            }
            Arch::Electra => v.push(("ForPreTraining", Layout::Task)),
            Arch::Roberta | Arch::XlmRoberta | Arch::DistilBert => {}
        }
        v.extend(TASKS);
        v
    }

    /// The layout of class `class` (`BertForSequenceClassification` → [`Layout::Task`]); `None` for a class
    /// of another architecture or one crossling does not know.
    pub fn layout_of(self, class: &str) -> Option<Layout> {
        let suffix = class.strip_prefix(self.class_prefix())?;
        self.classes().into_iter().find(|(s, _)| *s == suffix).map(|(_, l)| l)
    }

    /// The architecture of a `model_type`.
    pub fn from_model_type(t: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.model_type() == t)
    }

    /// The architecture whose classes start like `class` (the longest class prefix wins).
    pub fn from_class(class: &str) -> Option<Arch> {
        Arch::ALL.into_iter().filter(|a| class.starts_with(a.class_prefix())).max_by_key(|a| a.class_prefix().len())
    }

    /// Special-token names of its tokenizers, used when `tokenizer_config.json` does not name them.
    pub fn special_names(self) -> SpecialNames {
        match self {
            Arch::Bert | Arch::DistilBert | Arch::Electra => SpecialNames::default(),
            Arch::Roberta | Arch::XlmRoberta => SpecialNames {
                pad: "<pad>".into(),
                unk: "<unk>".into(),
                cls: "<s>".into(),
                sep: "</s>".into(),
                mask: "<mask>".into(),
            },
        }
    }

    /// Whether the checkpoint has token-type embeddings.
    pub fn has_token_types(self) -> bool {
        self != Arch::DistilBert
    }

    /// One line listing every supported architecture and class, for errors.
    pub fn supported() -> String {
        let archs: Vec<String> = Arch::ALL
            .iter()
            .map(|a| {
                let extra: Vec<String> = a
                    .classes()
                    .iter()
                    .filter(|(s, _)| !["Model", "ForMaskedLM"].contains(s) && !TASKS.iter().any(|(t, _)| t == s))
                    .map(|(s, _)| format!("{}{s}", a.class_prefix()))
                    .collect();
                let extra = if extra.is_empty() { String::new() } else { format!(", {}", extra.join(", ")) };
                format!("{} ({p}Model, {p}ForMaskedLM{extra})", a.model_type(), p = a.class_prefix())
            })
            .collect();
        format!(
            "model_type {}; each also as a task model (…ForSequenceClassification, …ForTokenClassification, \
             …ForQuestionAnswering, …ForMultipleChoice) whose head is ignored",
            archs.join(", ")
        )
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.model_type())
    }
}

/// The architecture of a parsed `config.json` and its first `architectures` entry, when there is one.
///
/// `model_type` decides; without it, the class name does. An unknown `model_type` or class is an error naming
/// what was found and what is supported.
pub fn identify(v: &Value) -> std::result::Result<(Arch, Option<String>), String> {
    let class = v.get("architectures").and_then(Value::as_array).and_then(|a| a.first()).and_then(Value::as_str);
    let found = |what: String| {
        format!(
            "{what}{}; crossling reads {}",
            class.map(|c| format!(" (architectures: {c})")).unwrap_or_default(),
            Arch::supported()
        )
    };
    let arch = match v.get("model_type").and_then(Value::as_str) {
        Some(t) => Arch::from_model_type(t).ok_or_else(|| found(format!("key 'model_type' is '{t}'")))?,
        None => match class {
            Some(c) => Arch::from_class(c).ok_or_else(|| found("no key 'model_type'".into()))?,
            None => return Err(format!("neither 'model_type' nor 'architectures' is given; {}", found(String::new()))),
        },
    };
    Ok((arch, class.map(str::to_string)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classes_have_layouts() {
        assert_eq!(Arch::Bert.layout_of("BertModel"), Some(Layout::Encoder));
        assert_eq!(Arch::Bert.layout_of("BertForPreTraining"), Some(Layout::PreTraining));
        assert_eq!(Arch::Electra.layout_of("ElectraForPreTraining"), Some(Layout::Task));
        assert_eq!(Arch::XlmRoberta.layout_of("XLMRobertaForMaskedLM"), Some(Layout::MaskedLm));
        assert_eq!(Arch::DistilBert.layout_of("DistilBertForTokenClassification"), Some(Layout::Task));
        assert_eq!(Arch::Roberta.layout_of("RobertaForCausalLM"), None);
        assert_eq!(Arch::Roberta.layout_of("BertModel"), None);
        assert_eq!(Arch::from_class("XLMRobertaModel"), Some(Arch::XlmRoberta));
        assert_eq!(Arch::from_class("DistilBertModel"), Some(Arch::DistilBert));
        assert_eq!(Arch::from_class("GPT2Model"), None);
        assert!(Layout::PreTraining.has_mlm_head() && !Layout::Task.has_mlm_head());
    }

    #[test]
    fn identify_names_what_was_found_and_what_is_supported() {
        let (a, c) = identify(&json!({"model_type": "xlm-roberta", "architectures": ["XLMRobertaModel"]})).unwrap();
        assert_eq!((a, c.as_deref()), (Arch::XlmRoberta, Some("XLMRobertaModel")));
        assert_eq!(identify(&json!({"architectures": ["ElectraForPreTraining"]})).unwrap().0, Arch::Electra);
        let e = identify(&json!({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]})).unwrap_err();
        assert!(e.contains("'model_type' is 'gpt2' (architectures: GPT2LMHeadModel)"), "{e}");
        for want in ["bert (BertModel, BertForMaskedLM, BertForPreTraining", "xlm-roberta", "distilbert", "electra"] {
            assert!(e.contains(want), "{e}");
        }
        let e = identify(&json!({"architectures": ["T5EncoderModel"]})).unwrap_err();
        assert!(e.contains("no key 'model_type' (architectures: T5EncoderModel)"), "{e}");
        assert!(identify(&json!({})).unwrap_err().contains("neither"));
    }
}
