//! Parameter names between crossling and Hugging Face `BertForMaskedLM`.
//!
//! crossling names are HF names, except that a per-language part carries `lang.{lang}.` after its group
//! (`bert.embeddings.lang.fr.word_embeddings.weight`, `bert.encoder.layer.0.lang.fr.attention.self.query.weight`,
//! `cls.predictions.lang.fr.bias`). Export of language `l` keeps the `lang.l.` copies with the segment removed
//! and drops other languages' copies. Import accepts HF's names plus two legacy spellings (`LayerNorm.gamma` /
//! `LayerNorm.beta` from TensorFlow conversions) and ignores tensors a masked LM does not use.

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

/// What to do with one tensor of a HF checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportName {
    /// Load it into the crossling variable of this name.
    Load(String),
    /// Skip it, with the reason (reported as a note).
    Ignore(&'static str),
    /// Skip it silently: a copy of a tensor that is loaded under another name.
    Alias,
}

/// Maps one HF tensor name; `tied` is the config's `tie_word_embeddings`.
pub fn import_name(hf: &str, tied: bool) -> ImportName {
    if hf.starts_with("bert.pooler.") {
        return ImportName::Ignore("pooler (next-sentence head input), unused by a masked LM");
    }
    if hf.starts_with("cls.seq_relationship.") {
        return ImportName::Ignore("next-sentence-prediction head, unused by a masked LM");
    }
    if hf == "bert.embeddings.position_ids" || hf == "bert.embeddings.token_type_ids" {
        return ImportName::Alias; // index buffers, recomputed
    }
    if hf == "cls.predictions.decoder.bias" || (tied && hf == "cls.predictions.decoder.weight") {
        return ImportName::Alias; // HF ties these to cls.predictions.bias / the word embeddings
    }
    let legacy = |suffix: &str, new: &str| {
        hf.strip_suffix(suffix).filter(|stem| stem.ends_with("LayerNorm")).map(|stem| format!("{stem}.{new}"))
    };
    let name = legacy(".gamma", "weight").or_else(|| legacy(".beta", "bias")).unwrap_or_else(|| hf.to_string());
    ImportName::Load(name)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn import_ignores_unused_heads_and_renames_legacy_norms() {
        assert!(matches!(import_name("bert.pooler.dense.weight", true), ImportName::Ignore(_)));
        assert!(matches!(import_name("cls.seq_relationship.bias", true), ImportName::Ignore(_)));
        assert_eq!(import_name("cls.predictions.decoder.weight", true), ImportName::Alias);
        assert_eq!(
            import_name("cls.predictions.decoder.weight", false),
            ImportName::Load("cls.predictions.decoder.weight".into())
        );
        assert_eq!(import_name("cls.predictions.decoder.bias", false), ImportName::Alias);
        assert_eq!(import_name("bert.embeddings.position_ids", true), ImportName::Alias);
        assert_eq!(
            import_name("bert.embeddings.LayerNorm.gamma", true),
            ImportName::Load("bert.embeddings.LayerNorm.weight".into())
        );
        assert_eq!(
            import_name("bert.encoder.layer.0.output.LayerNorm.beta", true),
            ImportName::Load("bert.encoder.layer.0.output.LayerNorm.bias".into())
        );
        assert_eq!(
            import_name("bert.encoder.layer.0.output.dense.weight", true),
            ImportName::Load("bert.encoder.layer.0.output.dense.weight".into())
        );
    }
}
