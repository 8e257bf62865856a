//! Parameter names between crossling and Hugging Face checkpoints — the one place that knows each
//! architecture's names (sources: `transformers` `models/*/modeling_*.py`, the `__init__` of each module).
//!
//! crossling's own names are those of HF `BertForMaskedLM`: the encoder under `bert.` (`bert.embeddings.…`,
//! `bert.encoder.layer.{i}.attention.self.query.weight`, …) and the head under `cls.predictions.`
//! (`transform.dense`, `transform.LayerNorm`, `bias`, `decoder.weight` when untied). A per-language part carries
//! `lang.{lang}.` after its group (`bert.embeddings.lang.fr.word_embeddings.weight`); export of language `l`
//! ([`export_name`]) keeps the `lang.l.` copies with the segment removed and drops other languages' copies.
//!
//! Import ([`Mapper`]) reads any layout of the five architectures of [`super::arch`]. The encoder may sit under
//! the architecture's base prefix (`roberta.encoder.…`, models with a head) or at the root (`encoder.…`, the
//! bare `…Model` layout); [`Mapper::new`] tells which from the names. Each architecture has
//! * encoder rules, module renames relative to the base (`#` = a layer index):
//!   BERT, RoBERTa, XLM-R and ELECTRA use BERT's names; DistilBERT renames `transformer.layer.#.attention.q_lin` →
//!   `encoder.layer.#.attention.self.query`, `k_lin` → `key`, `v_lin` → `value`, `out_lin` →
//!   `attention.output.dense`, `sa_layer_norm` → `attention.output.LayerNorm`, `ffn.lin1` → `intermediate.dense`,
//!   `ffn.lin2` → `output.dense`, `output_layer_norm` → `output.LayerNorm`;
//! * head rules onto `cls.predictions`: BERT's own names; RoBERTa / XLM-R `lm_head.{dense, layer_norm, bias,
//!   decoder}`; DistilBERT `vocab_transform`, `vocab_layer_norm`, `vocab_projector.{weight, bias}`; ELECTRA's
//!   generator `generator_predictions.{dense, LayerNorm}`, `generator_lm_head.{weight, bias}`;
//! * ignored parts, reported as a note: the pooler, BERT's next-sentence head `cls.seq_relationship`, ELECTRA's
//!   `discriminator_predictions` and every task head (`classifier`, `pre_classifier`, `qa_outputs`,
//!   `sequence_summary`).
//!
//! Tied copies (the decoder weight when `tie_word_embeddings`, the decoder bias that HF ties to the head's
//! `bias`) and the index buffers `embeddings.position_ids` / `embeddings.token_type_ids` are skipped silently.
//! TensorFlow-converted checkpoints spell LayerNorm parameters `gamma` / `beta`; both are accepted. For RoBERTa
//! and XLM-R the position table loses its first `pad_token_id + 1` rows (see [`super::config`]).
use super::arch::Arch;

/// The HF name of crossling variable `ours` in the view of `lang`; `None` when it belongs to another language
/// (or to some language when `lang` is `None`).
pub fn export_name(ours: &str, lang: Option<&str>) -> Option<String> {
    let parts: Vec<&str> = ours.split('.').collect();
    match parts.iter().position(|&p| p == "lang") {
        Some(i) if i + 1 < parts.len() => {
            if lang != Some(parts[i + 1]) {
                return None;
            }
            let kept: Vec<&str> = parts[..i].iter().chain(&parts[i + 2..]).copied().collect();
            Some(kept.join("."))
        }
        _ => Some(ours.to_string()),
    }
}

/// A rename of a module path (or of one tensor): `(hf, ours)`; `#` stands for one layer index.
type Rule = (&'static str, &'static str);

/// The encoder of BERT, RoBERTa, XLM-R and ELECTRA: BERT's names.
const BERT_ENCODER: &[Rule] = &[("embeddings", "embeddings"), ("encoder", "encoder")];

/// DistilBERT's encoder (`Embeddings`, `Transformer`, `TransformerBlock`, `DistilBertSelfAttention`, `FFN`).
const DISTILBERT_ENCODER: &[Rule] = &[
    ("embeddings", "embeddings"),
    ("transformer.layer.#.attention.q_lin", "encoder.layer.#.attention.self.query"),
    ("transformer.layer.#.attention.k_lin", "encoder.layer.#.attention.self.key"),
    ("transformer.layer.#.attention.v_lin", "encoder.layer.#.attention.self.value"),
    ("transformer.layer.#.attention.out_lin", "encoder.layer.#.attention.output.dense"),
    ("transformer.layer.#.sa_layer_norm", "encoder.layer.#.attention.output.LayerNorm"),
    ("transformer.layer.#.ffn.lin1", "encoder.layer.#.intermediate.dense"),
    ("transformer.layer.#.ffn.lin2", "encoder.layer.#.output.dense"),
    ("transformer.layer.#.output_layer_norm", "encoder.layer.#.output.LayerNorm"),
];

const BERT_HEAD: &[Rule] = &[("cls.predictions", "cls.predictions")];

/// `RobertaLMHead` / `XLMRobertaLMHead`.
const ROBERTA_HEAD: &[Rule] = &[
    ("lm_head.dense", "cls.predictions.transform.dense"),
    ("lm_head.layer_norm", "cls.predictions.transform.LayerNorm"),
    ("lm_head.bias", "cls.predictions.bias"),
    ("lm_head.decoder", "cls.predictions.decoder"),
];

/// `DistilBertForMaskedLM`.
const DISTILBERT_HEAD: &[Rule] = &[
    ("vocab_transform", "cls.predictions.transform.dense"),
    ("vocab_layer_norm", "cls.predictions.transform.LayerNorm"),
    ("vocab_projector.weight", "cls.predictions.decoder.weight"),
    ("vocab_projector.bias", "cls.predictions.bias"),
];

/// `ElectraForMaskedLM` (the generator): `ElectraGeneratorPredictions` + `generator_lm_head`.
const ELECTRA_HEAD: &[Rule] = &[
    ("generator_predictions.dense", "cls.predictions.transform.dense"),
    ("generator_predictions.LayerNorm", "cls.predictions.transform.LayerNorm"),
    ("generator_lm_head.weight", "cls.predictions.decoder.weight"),
    ("generator_lm_head.bias", "cls.predictions.bias"),
];

/// Why a part is ignored.
const POOLER: &str = "pooler (input of the next-sentence and classification heads), unused";
const NSP: &str = "next-sentence-prediction head, unused";
const TASK: &str = "task head, unused: only the encoder is read";
const RTD: &str = "ELECTRA's replaced-token-detection head, unused: only the encoder is read";

/// Parts of the encoder that are ignored (relative to the base).
const BASE_IGNORED: &[(&str, &str)] = &[("pooler", POOLER)];

impl Arch {
    fn encoder_rules(self) -> &'static [Rule] {
        match self {
            Arch::DistilBert => DISTILBERT_ENCODER,
            Arch::Bert | Arch::Roberta | Arch::XlmRoberta | Arch::Electra => BERT_ENCODER,
        }
    }

    fn head_rules(self) -> &'static [Rule] {
        match self {
            Arch::Bert => BERT_HEAD,
            Arch::Roberta | Arch::XlmRoberta => ROBERTA_HEAD,
            Arch::DistilBert => DISTILBERT_HEAD,
            Arch::Electra => ELECTRA_HEAD,
        }
    }

    /// Heads outside the encoder that are ignored, with the reason.
    fn ignored_heads(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Arch::Bert => &[("cls.seq_relationship", NSP), ("classifier", TASK), ("qa_outputs", TASK)],
            Arch::Roberta | Arch::XlmRoberta => &[("classifier", TASK), ("qa_outputs", TASK)],
            Arch::DistilBert => &[("pre_classifier", TASK), ("classifier", TASK), ("qa_outputs", TASK)],
            Arch::Electra => &[
                ("discriminator_predictions", RTD),
                ("classifier", TASK),
                ("qa_outputs", TASK),
                ("sequence_summary", TASK),
            ],
        }
    }
}

/// Rewrites `name` by the first rule whose `from` side matches it as a whole or as a module prefix.
fn rewrite(name: &str, rules: &[Rule], reverse: bool) -> Option<String> {
    rules.iter().find_map(|&(hf, ours)| {
        let (from, to) = if reverse { (ours, hf) } else { (hf, ours) };
        let (index, rest) = match_prefix(name, from)?;
        let head = match index {
            Some(i) => to.replacen('#', i, 1),
            None => to.to_string(),
        };
        Some(format!("{head}{rest}"))
    })
}

/// If `name` is `pattern` or starts with `pattern.` (`#` matching one all-digit segment), the digits matched and
/// the rest of the name (empty or starting with `.`).
fn match_prefix<'a>(name: &'a str, pattern: &str) -> Option<(Option<&'a str>, &'a str)> {
    let mut index = None;
    let mut pos = 0;
    for (k, seg) in pattern.split('.').enumerate() {
        if k > 0 {
            pos += name[pos..].strip_prefix('.').map(|_| 1)?;
        }
        let end = name[pos..].find('.').map_or(name.len(), |e| pos + e);
        let got = &name[pos..end];
        if seg == "#" {
            if got.is_empty() || !got.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            index = Some(got);
        } else if got != seg {
            return None;
        }
        pos = end;
    }
    Some((index, &name[pos..]))
}

/// What to do with one tensor of a HF checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportName {
    /// Load it into the crossling variable `name`, dropping its first `skip_rows` rows (RoBERTa's position table).
    Load { name: String, skip_rows: usize },
    /// Skip it: it belongs to `part` (the checkpoint's module name, e.g. `classifier`), unused for `why`.
    Ignore { part: String, why: &'static str },
    /// Skip it silently: a copy of a tensor loaded under another name, or an index buffer.
    Alias,
    /// The decoder's bias, which HF ties to the head's `bias`: a copy, except in old checkpoints that store the
    /// output bias only here (then it is loaded as `cls.predictions.bias`).
    TiedBias,
    /// No rule knows it.
    Unknown,
}

/// The name mapping of one checkpoint: its architecture, whether its encoder sits under the base prefix,
/// whether the decoder is tied, and how many position rows precede crossling's position 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapper {
    pub arch: Arch,
    /// The encoder's tensors are `{base}.…` (a model with a head) rather than at the root (`…Model`).
    pub prefixed: bool,
    pub tied: bool,
    pub position_offset: usize,
}

impl Mapper {
    /// The mapping for a checkpoint with tensors `names`: prefixed when any name starts with the base prefix.
    pub fn new<'a>(arch: Arch, names: impl IntoIterator<Item = &'a str>, tied: bool, position_offset: usize) -> Mapper {
        let base = format!("{}.", arch.base_prefix());
        let prefixed = names.into_iter().any(|n| n.starts_with(&base));
        Mapper { arch, prefixed, tied, position_offset }
    }

    /// Maps one HF tensor name.
    pub fn import(&self, hf: &str) -> ImportName {
        let legacy = |suffix: &str, new: &str| {
            hf.strip_suffix(suffix).filter(|stem| stem.ends_with("LayerNorm")).map(|stem| format!("{stem}.{new}"))
        };
        let name = legacy(".gamma", "weight").or_else(|| legacy(".beta", "bias")).unwrap_or_else(|| hf.to_string());
        let base = if self.prefixed {
            name.strip_prefix(self.arch.base_prefix()).and_then(|r| r.strip_prefix('.'))
        } else {
            Some(name.as_str())
        };
        if let Some(rel) = base {
            if rel == "embeddings.position_ids" || rel == "embeddings.token_type_ids" {
                return ImportName::Alias;
            }
            if let Some(&(p, why)) = BASE_IGNORED.iter().find(|(p, _)| match_prefix(rel, p).is_some()) {
                let part = if self.prefixed { format!("{}.{p}", self.arch.base_prefix()) } else { p.to_string() };
                return ImportName::Ignore { part, why };
            }
            if let Some(ours) = rewrite(rel, self.arch.encoder_rules(), false) {
                let skip_rows = if ours == "embeddings.position_embeddings.weight" { self.position_offset } else { 0 };
                return ImportName::Load { name: format!("bert.{ours}"), skip_rows };
            }
            if self.prefixed {
                return ImportName::Unknown;
            }
        }
        if let Some(&(p, why)) = self.arch.ignored_heads().iter().find(|(p, _)| match_prefix(&name, p).is_some()) {
            return ImportName::Ignore { part: p.to_string(), why };
        }
        match rewrite(&name, self.arch.head_rules(), false) {
            Some(ours) if ours == "cls.predictions.decoder.bias" => ImportName::TiedBias,
            Some(ours) if ours == "cls.predictions.decoder.weight" && self.tied => ImportName::Alias,
            Some(ours) => ImportName::Load { name: ours, skip_rows: 0 },
            None => ImportName::Unknown,
        }
    }

    /// The checkpoint's name for crossling variable `ours` (for messages about missing tensors).
    pub fn hf_name(&self, ours: &str) -> String {
        if let Some(rel) = ours.strip_prefix("bert.") {
            let hf = rewrite(rel, self.arch.encoder_rules(), true).unwrap_or_else(|| rel.to_string());
            if self.prefixed {
                format!("{}.{hf}", self.arch.base_prefix())
            } else {
                hf
            }
        } else {
            rewrite(ours, self.arch.head_rules(), true).unwrap_or_else(|| ours.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> ImportName {
        ImportName::Load { name: name.into(), skip_rows: 0 }
    }

    #[test]
    fn export_keeps_one_language_and_drops_the_segment() {
        assert_eq!(
            export_name("bert.embeddings.lang.fr.word_embeddings.weight", Some("fr")).as_deref(),
            Some("bert.embeddings.word_embeddings.weight")
        );
        assert_eq!(export_name("bert.embeddings.lang.en.word_embeddings.weight", Some("fr")), None);
        assert_eq!(
            export_name("bert.encoder.layer.0.lang.fr.attention.self.query.weight", Some("fr")).as_deref(),
            Some("bert.encoder.layer.0.attention.self.query.weight")
        );
        assert_eq!(export_name("cls.predictions.lang.fr.bias", Some("fr")).as_deref(), Some("cls.predictions.bias"));
        assert_eq!(
            export_name("cls.predictions.lang.fr.decoder.weight", Some("fr")).as_deref(),
            Some("cls.predictions.decoder.weight")
        );
        assert_eq!(
            export_name("bert.encoder.layer.1.output.dense.bias", None).as_deref(),
            Some("bert.encoder.layer.1.output.dense.bias")
        );
        assert_eq!(export_name("cls.predictions.lang.fr.bias", None), None);
    }

    #[test]
    fn bert_masked_lm_names_ignored_heads_and_legacy_norms() {
        let m = Mapper::new(Arch::Bert, ["bert.embeddings.word_embeddings.weight"], true, 0);
        assert!(m.prefixed);
        assert!(m.import("bert.pooler.dense.weight") == ImportName::Ignore { part: "bert.pooler".into(), why: POOLER });
        assert!(
            m.import("cls.seq_relationship.bias")
                == ImportName::Ignore { part: "cls.seq_relationship".into(), why: NSP }
        );
        assert!(matches!(m.import("classifier.weight"), ImportName::Ignore { .. }));
        assert_eq!(m.import("cls.predictions.decoder.weight"), ImportName::Alias);
        assert_eq!(m.import("cls.predictions.decoder.bias"), ImportName::TiedBias);
        assert_eq!(m.import("bert.embeddings.position_ids"), ImportName::Alias);
        assert_eq!(m.import("bert.embeddings.LayerNorm.gamma"), load("bert.embeddings.LayerNorm.weight"));
        assert_eq!(
            m.import("bert.encoder.layer.0.output.LayerNorm.beta"),
            load("bert.encoder.layer.0.output.LayerNorm.bias")
        );
        assert_eq!(
            m.import("bert.encoder.layer.11.output.dense.weight"),
            load("bert.encoder.layer.11.output.dense.weight")
        );
        assert_eq!(m.import("cls.predictions.transform.dense.bias"), load("cls.predictions.transform.dense.bias"));
        // Under a prefixed layout, an unprefixed encoder tensor belongs to nothing.
        assert_eq!(m.import("encoder.layer.0.output.dense.weight"), ImportName::Unknown);
        assert_eq!(m.import("bert.lm.weight"), ImportName::Unknown);
        let untied = Mapper { tied: false, ..m };
        assert_eq!(untied.import("cls.predictions.decoder.weight"), load("cls.predictions.decoder.weight"));
    }

    #[test]
    fn bare_encoders_have_no_prefix() {
        let m = Mapper::new(Arch::Bert, ["embeddings.word_embeddings.weight", "pooler.dense.bias"], true, 0);
        assert!(!m.prefixed);
        assert_eq!(
            m.import("encoder.layer.1.attention.self.key.bias"),
            load("bert.encoder.layer.1.attention.self.key.bias")
        );
        assert!(m.import("pooler.dense.weight") == ImportName::Ignore { part: "pooler".into(), why: POOLER });
        assert_eq!(m.import("embeddings.token_type_ids"), ImportName::Alias);
        assert_eq!(
            m.hf_name("bert.encoder.layer.1.attention.self.key.bias"),
            "encoder.layer.1.attention.self.key.bias"
        );
    }

    #[test]
    fn roberta_head_and_position_offset() {
        let m = Mapper::new(Arch::XlmRoberta, ["roberta.embeddings.word_embeddings.weight"], true, 2);
        assert_eq!(
            m.import("roberta.embeddings.position_embeddings.weight"),
            ImportName::Load { name: "bert.embeddings.position_embeddings.weight".into(), skip_rows: 2 }
        );
        assert_eq!(m.import("lm_head.dense.weight"), load("cls.predictions.transform.dense.weight"));
        assert_eq!(m.import("lm_head.layer_norm.bias"), load("cls.predictions.transform.LayerNorm.bias"));
        assert_eq!(m.import("lm_head.bias"), load("cls.predictions.bias"));
        assert_eq!(m.import("lm_head.decoder.weight"), ImportName::Alias);
        assert_eq!(m.import("lm_head.decoder.bias"), ImportName::TiedBias);
        assert!(matches!(m.import("classifier.out_proj.weight"), ImportName::Ignore { .. }));
        assert_eq!(m.hf_name("cls.predictions.transform.LayerNorm.weight"), "lm_head.layer_norm.weight");
        assert_eq!(m.hf_name("bert.embeddings.LayerNorm.weight"), "roberta.embeddings.LayerNorm.weight");
    }

    #[test]
    fn distilbert_layers_and_head() {
        let m = Mapper::new(Arch::DistilBert, ["distilbert.embeddings.word_embeddings.weight"], true, 0);
        for (hf, ours) in [
            (
                "distilbert.transformer.layer.3.attention.q_lin.weight",
                "bert.encoder.layer.3.attention.self.query.weight",
            ),
            (
                "distilbert.transformer.layer.0.attention.out_lin.bias",
                "bert.encoder.layer.0.attention.output.dense.bias",
            ),
            (
                "distilbert.transformer.layer.1.sa_layer_norm.weight",
                "bert.encoder.layer.1.attention.output.LayerNorm.weight",
            ),
            ("distilbert.transformer.layer.1.ffn.lin1.weight", "bert.encoder.layer.1.intermediate.dense.weight"),
            ("distilbert.transformer.layer.1.ffn.lin2.bias", "bert.encoder.layer.1.output.dense.bias"),
            ("distilbert.transformer.layer.10.output_layer_norm.bias", "bert.encoder.layer.10.output.LayerNorm.bias"),
            ("distilbert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.weight"),
            ("vocab_transform.weight", "cls.predictions.transform.dense.weight"),
            ("vocab_layer_norm.bias", "cls.predictions.transform.LayerNorm.bias"),
            ("vocab_projector.bias", "cls.predictions.bias"),
        ] {
            assert_eq!(m.import(hf), load(ours), "{hf}");
            assert_eq!(m.hf_name(ours), hf, "{ours}");
        }
        assert_eq!(m.import("vocab_projector.weight"), ImportName::Alias);
        assert!(matches!(m.import("pre_classifier.weight"), ImportName::Ignore { .. }));
        assert_eq!(m.import("distilbert.transformer.layer.x.ffn.lin1.weight"), ImportName::Unknown);
    }

    #[test]
    fn electra_generator_head_and_discriminator() {
        let m = Mapper::new(Arch::Electra, ["electra.embeddings.word_embeddings.weight"], true, 0);
        assert_eq!(
            m.import("generator_predictions.LayerNorm.weight"),
            load("cls.predictions.transform.LayerNorm.weight")
        );
        assert_eq!(m.import("generator_lm_head.bias"), load("cls.predictions.bias"));
        assert_eq!(m.import("generator_lm_head.weight"), ImportName::Alias);
        assert!(matches!(m.import("discriminator_predictions.dense.weight"), ImportName::Ignore { .. }));
        assert!(matches!(m.import("sequence_summary.summary.weight"), ImportName::Ignore { .. }));
        assert_eq!(m.import("electra.embeddings_project.weight"), ImportName::Unknown);
    }

    #[test]
    fn prefix_matching_respects_segments() {
        assert_eq!(match_prefix("encoder.layer.12.x", "encoder.layer.#"), Some((Some("12"), ".x")));
        assert_eq!(match_prefix("encoder.layers.1", "encoder.layer"), None);
        assert_eq!(match_prefix("lm_head.bias", "lm_head.bias"), Some((None, "")));
        assert_eq!(match_prefix("lm_head.biased", "lm_head.bias"), None);
        assert_eq!(match_prefix("lm_head", "lm_head.bias"), None);
    }
}
