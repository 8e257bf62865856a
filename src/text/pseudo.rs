//! Pseudo-languages: "languages" made of another language's text, for controls that need two languages with the
//! same text distribution. The first is the English′ of Emerging (Wu, Conneau et al. 2020) §5.2, Figure 7, whose
//! bilingual en–en′ model "is trained on English data but with separate embeddings matrix as in §4.3".
//!
//! | code | text read | half of the source's documents | paired with the source, the source reads |
//! |---|---|---|---|
//! | `en2` | English (the datasets of `en`) | 1 | half 0 |
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

/// One pseudo-language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pseudo {
    /// Its code in language lists (`en-en2`).
    pub code: &'static str,
    /// The language whose datasets it reads.
    pub source: &'static str,
    /// The half of the source's documents it reads (the source, in the same run, reads the other).
    pub half: u8,
    /// What it stands for.
    pub what: &'static str,
}

/// Every pseudo-language.
pub const PSEUDO_LANGUAGES: [Pseudo; 1] = [Pseudo {
    code: "en2",
    source: "en",
    half: 1,
    what: "English′: the second half of the English documents (Emerging §5.2's bilingual en–en′ model)",
}];

/// The pseudo-language `code`, if it is one.
pub fn pseudo(code: &str) -> Option<&'static Pseudo> {
    PSEUDO_LANGUAGES.iter().find(|p| p.code == code)
}

/// The language whose text `code` reads: the source of a pseudo-language, else `code` itself.
pub fn text_language(code: &str) -> &str {
    pseudo(code).map_or(code, |p| p.source)
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
            out.insert(lang.to_string(), DocumentHalf { lang: p.source.to_string(), half });
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
        assert_eq!(h["en"], DocumentHalf { lang: "en".into(), half: 0 });
        assert_eq!(h["en2"], DocumentHalf { lang: "en".into(), half: 1 });
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
