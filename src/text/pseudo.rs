//! Pseudo-languages: "languages" made of another language's text, for controls that need two languages with the
//! same text distribution. The first is the English′ of Emerging (Wu, Conneau et al. 2020) §5.2, Figure 7, whose
//! bilingual en–en′ model "is trained on English data but with separate embeddings matrix as in §4.3".
//!
//! | code | text read | half of the source's documents | paired with the source, the source reads | rewrite |
//! |---|---|---|---|---|
//! | `en2` | English (the datasets of `en`) | 1 | half 0 | none |
//! | `enx` | English | 1 | half 0 | English in an unused script ([`crate::text::rewrite`]) |
//! | `enxrev` | English | 1 | half 0 | `enx` with every sentence's word order reversed (the negative control) |
//!
//! **Rewrites.** `enx` and `enxrev` are synthetic languages (K et al. 2020; Dufter & Schütze 2020): their training
//! text and every evaluation set read in them (XNLI, PAN-X, UD; [`eval_source`]) are their source's, rewritten by
//! [`crate::text::rewrite`]. Each is scored on the very sentences its source is scored on, rewritten (PAN-X English
//! dev after the sentences that select the fine-tuned model, XNLI English dev, UD EWT test; the bundle's PAN-X and
//! XNLI test files carry no labels), so the source's own score is the in-language reference of a zero-shot score.
//!
//! **Halves.** A document belongs to the half given by the top bit of `FNV-1a(HALF_SALT, id)`
//! ([`crate::text::corpus::document_half`]; a novel's id is its file stem), the same for every seed and every run, so
//! the two halves are disjoint and not parallel: of the 99 English novels, 50 are in half 0 and 49 in half 1. A run over a pseudo-language and its source language (`en-en2`) reads half 0 of the source's documents
//! as the source and half 1 as the pseudo-language; each side is then capped, split into train / validation and
//! de-duplicated as any corpus ([`crate::text::corpus`]). A pseudo-language in a run without its source reads its own
//! half all the same. A later pseudo-language of English (e.g. English in another script) takes half 1 too, so
//! `en-en2` and such a pair see the same two halves of English text; two pseudo-languages of one source cannot share
//! a run (both would read half 1).
//!
//! A run's config records the halves (`[corpus.halves]`, [`crate::train::run::RunCorpus::halves`]); the table is
//! absent from the config of any run without a pseudo-language, so such runs keep their model-cache keys.
use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::text::corpus::DocumentHalf;
use crate::text::rewrite::Rewrite;

/// One pseudo-language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pseudo {
    /// Its code in language lists (`en-en2`).
    pub code: &'static str,
    /// The language whose datasets it reads.
    pub source: &'static str,
    /// The half of the source's documents it reads (the source, in the same run, reads the other).
    pub half: u8,
    /// How its text is rewritten from the source's (none: the source's text as it is).
    pub rewrite: Option<Rewrite>,
    /// What it stands for.
    pub what: &'static str,
}

/// Every pseudo-language.
pub const PSEUDO_LANGUAGES: [Pseudo; 3] = [
    Pseudo {
        code: "en2",
        source: "en",
        half: 1,
        rewrite: None,
        what: "English′: the second half of the English documents (Emerging §5.2's bilingual en–en′ model)",
    },
    Pseudo {
        code: "enx",
        source: "en",
        half: 1,
        rewrite: Some(Rewrite::Script),
        what: "synthetic English in an unused script: the second half of the English documents, no shared subword",
    },
    Pseudo {
        code: "enxrev",
        source: "en",
        half: 1,
        rewrite: Some(Rewrite::ScriptReversed),
        what: "enx with the word order of every sentence reversed (negative control)",
    },
];

/// The pseudo-language `code`, if it is one.
pub fn pseudo(code: &str) -> Option<&'static Pseudo> {
    PSEUDO_LANGUAGES.iter().find(|p| p.code == code)
}

/// The language whose text `code` reads: the source of a pseudo-language, else `code` itself.
pub fn text_language(code: &str) -> &str {
    pseudo(code).map_or(code, |p| p.source)
}

/// Where an evaluation set of `code` comes from: `None` for a language read as it is; for a synthetic language, its
/// source and the rewrite applied to the source's evaluation set.
pub fn eval_source(code: &str) -> Option<(&'static str, Rewrite)> {
    pseudo(code).and_then(|p| p.rewrite.map(|r| (p.source, r)))
}

/// The language whose evaluation files `code` reads: its source for a synthetic language, else `code` itself (a
/// pseudo-language without a rewrite, `en2`, has no evaluation files of its own).
pub fn eval_file_language(code: &str) -> &str {
    eval_source(code).map_or(code, |(source, _)| source)
}

/// `langs` (the languages a dataset covers) followed by every synthetic language whose source is among them: the
/// languages whose evaluation sets can be read from it.
pub fn with_synthetic(mut langs: Vec<String>) -> Vec<String> {
    let extra: Vec<String> = PSEUDO_LANGUAGES
        .iter()
        .filter(|p| p.rewrite.is_some() && langs.iter().any(|l| l == p.source))
        .map(|p| p.code.to_string())
        .collect();
    langs.extend(extra);
    langs
}

/// The document halves of a run over `languages` (see the module docs); empty when no language is a pseudo-language.
pub fn halves(languages: &[String]) -> Result<BTreeMap<String, DocumentHalf>> {
    let mut out: BTreeMap<String, DocumentHalf> = BTreeMap::new();
    for p in languages.iter().filter_map(|l| pseudo(l)) {
        let mut claim = |lang: &str, half: u8| -> Result<()> {
            let taken = out.values().any(|h| h.lang == p.source && h.half == half);
            if taken || out.contains_key(lang) {
                return Err(Error::Invalid(format!(
                    "languages {}: two pseudo-languages of '{}' would read the same half of its documents",
                    languages.join("-"),
                    p.source
                )));
            }
            let rewrite = if lang == p.code { p.rewrite } else { None };
            out.insert(lang.to_string(), DocumentHalf { lang: p.source.to_string(), half, rewrite });
            Ok(())
        };
        claim(p.code, p.half)?;
        if languages.iter().any(|l| l == p.source) {
            claim(p.source, 1 - p.half)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(s: &str) -> Vec<String> {
        s.split('-').map(String::from).collect()
    }

    #[test]
    fn a_pseudo_language_and_its_source_read_opposite_halves() {
        let h = halves(&langs("en-en2")).unwrap();
        assert_eq!(h["en"], DocumentHalf { lang: "en".into(), half: 0, rewrite: None });
        assert_eq!(h["en2"], DocumentHalf { lang: "en".into(), half: 1, rewrite: None });
        let x = halves(&langs("en-enxrev")).unwrap();
        assert_eq!(x["en"], DocumentHalf { lang: "en".into(), half: 0, rewrite: None });
        assert_eq!(x["enxrev"].rewrite, Some(Rewrite::ScriptReversed));
        assert_eq!(eval_source("enx"), Some(("en", Rewrite::Script)));
        assert_eq!((eval_source("en2"), eval_source("fr")), (None, None));
        assert_eq!((eval_file_language("enxrev"), eval_file_language("en2")), ("en", "en2"));
        assert_eq!(with_synthetic(langs("en-fr")), langs("en-fr-enx-enxrev"));
        assert_eq!(with_synthetic(langs("fr")), langs("fr"));
        assert!(halves(&langs("en2-enx")).is_err(), "two pseudo-languages of English read the same half");
        assert_eq!(halves(&langs("en2")).unwrap().len(), 1);
        assert!(halves(&langs("en-fr")).unwrap().is_empty(), "no pseudo-language, no halves");
        assert_eq!((text_language("en2"), text_language("fr")), ("en", "fr"));
    }

    #[test]
    fn pseudo_languages_are_distinct_and_read_half_one() {
        let mut codes: Vec<&str> = PSEUDO_LANGUAGES.iter().map(|p| p.code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), PSEUDO_LANGUAGES.len());
        assert!(PSEUDO_LANGUAGES.iter().all(|p| p.half == 1 && pseudo(p.source).is_none()));
    }
}
