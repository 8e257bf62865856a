//! Evaluation text of the figures, read from the bundle: multi-way parallel XNLI sentences (Emerging §5.3 CKA,
//! Figure 7) and Tatoeba sentence pairs (Emerging §5.2, Figure 6). Each function returns the text and the
//! `(path, sha256)` of every file it read, for provenance. Also the MUSE bilingual dictionaries with their
//! train / test split (Emerging §5.1, Figure 4).
use std::collections::{BTreeMap, HashSet};

use crate::data::formats::muse::{
    layout_for, read as read_muse, split_by_source_rank, DictPair, Split, MUSE_TEST, MUSE_TRAIN,
};
use crate::data::formats::{parallel, xnli};
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};

pub use crate::data::FilesRead;

/// The MUSE dictionary `pair` (`en-fr`: English → French) split by unique-source-word rank into train [0, 5000) and
/// test [5000, 6500), as MUSE's `.0-5000.txt` / `.5000-6500.txt` files are.
///
/// Two dictionaries are the identity of the source's words, each word paired with one target (one translation per
/// word), split by the same ranks: for a synthetic target (`en-enx`: [`crate::text::pseudo::eval_source`]) its
/// rewrite, and for the source language itself (`en-en`, `fr-fr`: two models of one language, word by word) the
/// word. The words are the source words of one MUSE file, in its order: `en-fr` for English, `L-en` for any other L.
pub fn muse_split(catalog: &Catalog, roots: &DataRoots, pair: &str) -> Result<(Split, FilesRead)> {
    let (pairs, files) = muse_pairs(catalog, roots, pair)?;
    let pairs = match identity_target(pair) {
        Some(target) => {
            let mut seen = HashSet::new();
            pairs
                .into_iter()
                .filter(|p| seen.insert(p.src.clone()))
                .map(|p| DictPair { tgt: target.word(&p.src), src: p.src })
                .collect()
        }
        None => pairs,
    };
    Ok((split_by_source_rank(&pairs, MUSE_TRAIN, MUSE_TEST), files))
}

/// What an identity dictionary pairs each source word with.
enum IdentityTarget {
    /// The word itself (`en-en`).
    Same,
    /// Its rewrite in a synthetic language of the source (`en-enx`).
    Rewritten(crate::text::rewrite::Rewrite),
}

impl IdentityTarget {
    fn word(&self, w: &str) -> String {
        match self {
            IdentityTarget::Same => w.to_string(),
            IdentityTarget::Rewritten(r) => r.word(w),
        }
    }
}

/// `pair`'s identity target when its dictionary is an identity (see [`muse_split`]), else `None`.
fn identity_target(pair: &str) -> Option<IdentityTarget> {
    let (src, tgt) = pair.split_once('-')?;
    if src == tgt {
        return Some(IdentityTarget::Same);
    }
    crate::text::pseudo::eval_source(tgt).filter(|(s, _)| *s == src).map(|(_, r)| IdentityTarget::Rewritten(r))
}

/// The mirror path of the MUSE file behind `pair` (`en-enx` and `en-en` read `en-fr`, `fr-fr` reads `fr-en`: see
/// [`muse_split`]).
pub fn muse_path(pair: &str) -> String {
    let file_pair = match (identity_target(pair), pair.split_once('-')) {
        (Some(_), Some(("en", _))) => "en-fr".to_string(),
        (Some(_), Some((src, _))) => format!("{src}-en"),
        _ => pair.to_string(),
    };
    format!("dict/muse/{file_pair}.dict")
}

/// Every pair of the MUSE file behind `pair` ([`muse_path`]), in file order.
fn muse_pairs(catalog: &Catalog, roots: &DataRoots, pair: &str) -> Result<(Vec<DictPair>, FilesRead)> {
    let muse = catalog.get("muse")?;
    let wanted = muse_path(pair);
    let file = muse.files.iter().find(|f| f.path == wanted).ok_or_else(|| {
        let known: Vec<&str> = muse.files.iter().map(|f| f.path.as_str()).collect();
        Error::Invalid(format!("no MUSE dictionary '{pair}' (known: {})", known.join(", ")))
    })?;
    let path = roots.resolve(file)?;
    let pairs = read_muse(&path, layout_for(&path))?;
    Ok((pairs, vec![(file.path.clone(), file.sha256.clone())]))
}

/// Tatoeba's three-letter codes for our languages.
fn tatoeba_code(lang: &str) -> Result<&'static str> {
    Ok(match lang {
        "fr" => "fra",
        "de" => "deu",
        "ru" => "rus",
        "zh" => "cmn",
        other => return Err(Error::Invalid(format!("no Tatoeba pairs with English for '{other}' (fr, de, ru, zh)"))),
    })
}

/// Up to `n` sentences, parallel across `langs`: XNLI dev then test rows, each row's hypothesis and (on its first
/// occurrence) its premise. Rows whose text is empty in any language are skipped, so index `i` is the same
/// sentence in every language. A synthetic language (`enx`) reads its source's file, rewritten.
pub fn xnli_parallel(
    catalog: &Catalog,
    roots: &DataRoots,
    langs: &[String],
    n: usize,
) -> Result<(BTreeMap<String, Vec<String>>, FilesRead)> {
    if langs.is_empty() {
        return Err(Error::Invalid("xnli_parallel: no languages given".into()));
    }
    let m = catalog.get("xnli")?;
    let mut files = Vec::new();
    let mut per_lang: BTreeMap<String, Vec<String>> = langs.iter().map(|l| (l.clone(), Vec::new())).collect();
    'splits: for split in ["dev", "test"] {
        let mut rows = Vec::new();
        for lang in langs {
            let path = format!("xnli/{split}-{}.tsv", crate::text::pseudo::eval_file_language(lang));
            let entry = m.files.iter().find(|f| f.path == path).ok_or_else(|| {
                Error::Invalid(format!("xnli has no {split} file for '{lang}' (languages: {})", m.languages.join(", ")))
            })?;
            let local = roots.resolve(entry)?;
            files.push((entry.path.clone(), entry.sha256.clone()));
            let mut read = xnli::read(&local)?;
            if let Some((_, r)) = crate::text::pseudo::eval_source(lang) {
                r.nli_examples(&mut read);
            }
            rows.push(read);
        }
        let len = rows[0].len();
        if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != len) {
            return Err(Error::Invalid(format!(
                "xnli {split}: {} has {} rows but {} has {len}; the files are not parallel",
                langs[i],
                r.len(),
                langs[0]
            )));
        }
        let mut seen_premise = HashSet::new();
        for row in 0..len {
            let new_premise = seen_premise.insert(rows[0][row].premise.clone());
            for is_premise in [false, true] {
                if is_premise && !new_premise {
                    continue;
                }
                let texts: Vec<&str> = rows
                    .iter()
                    .map(|r| if is_premise { r[row].premise.as_str() } else { r[row].hypothesis.as_str() })
                    .collect();
                if texts.iter().any(|t| t.trim().is_empty()) {
                    continue;
                }
                for (lang, t) in langs.iter().zip(texts) {
                    if let Some(v) = per_lang.get_mut(lang) {
                        v.push(t.to_string());
                    }
                }
                if per_lang[&langs[0]].len() >= n {
                    break 'splits;
                }
            }
        }
    }
    Ok((per_lang, files))
}

/// The first `n` Tatoeba pairs of `lang` with English, as (English, `lang`) sentence lists; empty lines are
/// dropped pairwise.
pub fn tatoeba(
    catalog: &Catalog,
    roots: &DataRoots,
    lang: &str,
    n: usize,
) -> Result<(Vec<String>, Vec<String>, FilesRead)> {
    let code = tatoeba_code(lang)?;
    let m = catalog.get("tatoeba")?;
    let find = |suffix: &str| {
        let path = format!("parallel/tatoeba/tatoeba.{code}-eng.{suffix}");
        m.files.iter().find(|f| f.path == path).ok_or_else(|| Error::Invalid(format!("tatoeba has no file {path}")))
    };
    let (e_en, e_xx) = (find("eng")?, find(code)?);
    let pairs = parallel::read_pairs(&roots.resolve(e_en)?, &roots.resolve(e_xx)?)?;
    let (mut en, mut xx) = (Vec::new(), Vec::new());
    for (a, b) in pairs.into_iter().filter(|(a, b)| !a.is_empty() && !b.is_empty()).take(n) {
        en.push(a);
        xx.push(b);
    }
    let files = vec![(e_en.path.clone(), e_en.sha256.clone()), (e_xx.path.clone(), e_xx.sha256.clone())];
    Ok((en, xx, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    fn roots() -> Option<DataRoots> {
        let mirror = test_mirror()?;
        Some(DataRoots { mirror: Some(mirror), cache: std::env::temp_dir(), allow_download: false, progress: false })
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn xnli_is_parallel_and_capped() {
        let roots = roots().expect("the data mirror (without it this test is ignored)");
        let catalog = Catalog::load_default().unwrap();
        let langs: Vec<String> = ["en", "fr", "zh"].iter().map(|s| s.to_string()).collect();
        let (text, files) = xnli_parallel(&catalog, &roots, &langs, 50).unwrap();
        assert_eq!(files.len(), 3);
        for l in &langs {
            assert_eq!(text[l].len(), 50, "{l}");
        }
        // Row 0: hypothesis then premise, in every language.
        assert_ne!(text["en"][0], text["en"][1]);
        assert_ne!(text["en"][0], text["fr"][0]);
        let (all, _) = xnli_parallel(&catalog, &roots, &langs[..1], 100_000).unwrap();
        assert!(all["en"].len() > 9000, "{}", all["en"].len());
        let (x, _) = xnli_parallel(&catalog, &roots, &["en".to_string(), "enx".to_string()], 10).unwrap();
        let rw = crate::text::rewrite::Rewrite::Script;
        assert_eq!(x["enx"], x["en"].iter().map(|t| rw.sentence(t)).collect::<Vec<_>>());
        assert!(xnli_parallel(&catalog, &roots, &["xx".to_string()], 5)
            .unwrap_err()
            .to_string()
            .contains("no dev file"));
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn tatoeba_pairs() {
        let roots = roots().expect("the data mirror (without it this test is ignored)");
        let catalog = Catalog::load_default().unwrap();
        let (en, de, files) = tatoeba(&catalog, &roots, "de", 20).unwrap();
        assert_eq!((en.len(), de.len(), files.len()), (20, 20, 2));
        assert!(tatoeba(&catalog, &roots, "en", 5).is_err());
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn a_synthetic_target_gets_the_identity_dictionary() {
        let roots = roots().expect("the data mirror (without it this test is ignored)");
        let catalog = Catalog::load_default().unwrap();
        let (fr, _) = muse_split(&catalog, &roots, "en-fr").unwrap();
        let (x, files) = muse_split(&catalog, &roots, "en-enx").unwrap();
        assert_eq!(files[0].0, "dict/muse/en-fr.dict");
        let words = |ps: &[DictPair]| ps.iter().map(|p| p.src.clone()).collect::<std::collections::BTreeSet<_>>();
        assert_eq!(words(&x.train), words(&fr.train));
        assert_eq!(words(&x.test), words(&fr.test));
        assert_eq!(x.test.len(), words(&x.test).len(), "one translation per word");
        let rw = crate::text::rewrite::Rewrite::Script;
        assert!(x.test.iter().all(|p| p.tgt == rw.word(&p.src)));
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn a_language_with_itself_gets_the_identity_dictionary() {
        let roots = roots().expect("the data mirror (without it this test is ignored)");
        let catalog = Catalog::load_default().unwrap();
        let words = |ps: &[DictPair]| ps.iter().map(|p| p.src.clone()).collect::<std::collections::BTreeSet<_>>();
        for (pair, of, file) in [("en-en", "en-fr", "dict/muse/en-fr.dict"), ("de-de", "de-en", "dict/muse/de-en.dict")]
        {
            let (muse, _) = muse_split(&catalog, &roots, of).unwrap();
            let (same, files) = muse_split(&catalog, &roots, pair).unwrap();
            assert_eq!(files[0].0, file, "{pair}");
            assert_eq!((words(&same.train), words(&same.test)), (words(&muse.train), words(&muse.test)), "{pair}");
            assert_eq!(same.test.len(), words(&same.test).len(), "{pair}: one translation per word");
            assert!(same.train.iter().chain(&same.test).all(|p| p.tgt == p.src), "{pair}");
        }
        assert_eq!(muse_path("fr-en"), "dict/muse/fr-en.dict", "a real pair reads its own file");
        assert!(muse_split(&catalog, &roots, "xx-xx").unwrap_err().to_string().contains("no MUSE dictionary"));
    }
}
