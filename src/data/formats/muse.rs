//! MUSE bilingual dictionaries (Conneau, Lample, Ranzato, Denoyer & Jégou 2018, "Word Translation Without
//! Parallel Data", ICLR; <https://github.com/facebookresearch/MUSE>).
//!
//! Two layouts occur:
//! - [`DictLayout::TargetAtSource`]: the `.dict` files under `dict/muse`, one pair a line written
//!   `target @ source` (so `en-fr.dict` lines are `french @ english`);
//! - [`DictLayout::SourceTarget`]: the standard MUSE release files (`en-de.5000-6500.txt`, the part-of-speech
//!   splits in `dict/muse-de-pos`), one pair a line written `source<whitespace>target`.
//!
//! Lines are ordered by source-word frequency, so the rank of a source word is the order of its first appearance.
//! MUSE's train split is the unique source words ranked `[0, 5000)` and its test split those ranked
//! `[5000, 6500)`; [`split_by_source_rank`] rebuilds both from a full dictionary. Blank lines are skipped; words
//! are trimmed and normalised to NFC.
use super::nfc;
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

/// One dictionary entry: a source word and one of its translations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DictPair {
    pub src: String,
    pub tgt: String,
}

/// How a dictionary line is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictLayout {
    /// `target @ source` (the `.dict` files of the mirror).
    TargetAtSource,
    /// `source<whitespace>target` (the MUSE release files).
    SourceTarget,
}

/// Rank range of MUSE's train split (unique source words by frequency).
pub const MUSE_TRAIN: Range<usize> = 0..5000;
/// Rank range of MUSE's test split.
pub const MUSE_TEST: Range<usize> = 5000..6500;

/// The layout of a dictionary file, judged by its extension: `.dict` is `target @ source`, anything else
/// `source target`.
pub fn layout_for(path: &Path) -> DictLayout {
    match path.extension().and_then(|e| e.to_str()) {
        Some("dict") => DictLayout::TargetAtSource,
        _ => DictLayout::SourceTarget,
    }
}

/// Read a dictionary, keeping file order (which is source-frequency order).
pub fn read(path: &Path, layout: DictLayout) -> Result<Vec<DictPair>> {
    let mut reader = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some(line) = reader.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = reader.line_no();
        let pair = match layout {
            DictLayout::TargetAtSource => match line.split_once(" @ ") {
                Some((tgt, src)) if !tgt.trim().is_empty() && !src.trim().is_empty() && !src.contains(" @ ") => {
                    DictPair { src: nfc(src), tgt: nfc(tgt) }
                }
                _ => {
                    return Err(Error::format(
                        path,
                        line_no,
                        format!("malformed dictionary line {line:?} (expected `target @ source`)"),
                    ))
                }
            },
            DictLayout::SourceTarget => {
                let fields: Vec<&str> = line.split_whitespace().collect();
                match fields.as_slice() {
                    [src, tgt] => DictPair { src: nfc(src), tgt: nfc(tgt) },
                    _ => {
                        return Err(Error::format(
                            path,
                            line_no,
                            format!(
                            "malformed dictionary line {line:?} with {} fields (expected `source<whitespace>target`)",
                            fields.len()
                        ),
                        ))
                    }
                }
            }
        };
        out.push(pair);
    }
    Ok(out)
}

/// Train and test pairs selected by source-word rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub train: Vec<DictPair>,
    pub test: Vec<DictPair>,
}

/// Select the pairs whose source word's rank (order of first appearance among unique source words) falls in
/// `train` or `test`. Every translation of a selected source word is kept, in file order.
pub fn split_by_source_rank(pairs: &[DictPair], train: Range<usize>, test: Range<usize>) -> Split {
    let mut rank: HashMap<&str, usize> = HashMap::new();
    let mut split = Split { train: Vec::new(), test: Vec::new() };
    for p in pairs {
        let next = rank.len();
        let r = *rank.entry(p.src.as_str()).or_insert(next);
        if train.contains(&r) {
            split.train.push(p.clone());
        }
        if test.contains(&r) {
            split.test.push(p.clone());
        }
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;
    use std::collections::HashSet;

    fn dp(s: &str, t: &str) -> DictPair {
        DictPair { src: s.into(), tgt: t.into() }
    }

    #[test]
    fn reads_both_layouts() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("en-fr.dict");
        std::fs::write(&a, "le @ the\nla @ the\nchat @ cat\n\n").unwrap();
        assert_eq!(layout_for(&a), DictLayout::TargetAtSource);
        assert_eq!(read(&a, layout_for(&a)).unwrap(), vec![dp("the", "le"), dp("the", "la"), dp("cat", "chat")]);
        let b = dir.path().join("en-de.txt");
        std::fs::write(&b, "the\tdie\ncat Katze\n").unwrap();
        assert_eq!(layout_for(&b), DictLayout::SourceTarget);
        assert_eq!(read(&b, layout_for(&b)).unwrap(), vec![dp("the", "die"), dp("cat", "Katze")]);
    }

    #[test]
    fn malformed_lines_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("x.dict");
        std::fs::write(&a, "le @ the\nchat cat\n").unwrap();
        let e = read(&a, DictLayout::TargetAtSource).unwrap_err().to_string();
        assert!(e.contains("x.dict:2") && e.contains("expected `target @ source`"), "{e}");
        let b = dir.path().join("y.txt");
        std::fs::write(&b, "the die der\n").unwrap();
        let e = read(&b, DictLayout::SourceTarget).unwrap_err().to_string();
        assert!(e.contains("y.txt:1") && e.contains("3 fields"), "{e}");
    }

    #[test]
    fn splits_by_unique_source_rank() {
        let pairs = vec![dp("a", "1"), dp("a", "2"), dp("b", "3"), dp("c", "4"), dp("b", "5"), dp("d", "6")];
        let s = split_by_source_rank(&pairs, 0..1, 1..3);
        assert_eq!(s.train, vec![dp("a", "1"), dp("a", "2")]);
        assert_eq!(s.test, vec![dp("b", "3"), dp("c", "4"), dp("b", "5")]);
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_en_de_split_matches_official_test_words() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let full = d.join("dict/muse/en-de.dict");
        if !full.is_file() {
            return;
        }
        let pairs = read(&full, layout_for(&full)).unwrap();
        assert_eq!(pairs.len(), 101_931);
        let split = split_by_source_rank(&pairs, MUSE_TRAIN, MUSE_TEST);
        let test_src: HashSet<&str> = split.test.iter().map(|p| p.src.as_str()).collect();
        let train_src: HashSet<&str> = split.train.iter().map(|p| p.src.as_str()).collect();
        assert_eq!(test_src.len(), 1500);
        assert_eq!(train_src.len(), 5000);
        assert_eq!(split.test.len(), 3660);
        let mut official = HashSet::new();
        let mut official_pairs = 0;
        for pos in ["a", "n", "nw", "o", "pn", "v"] {
            let f = d.join(format!("dict/muse-de-pos/en-de.5000-6500.{pos}.txt"));
            let ps = read(&f, layout_for(&f)).unwrap();
            official_pairs += ps.len();
            official.extend(ps.into_iter().map(|p| p.src));
        }
        let official: HashSet<&str> = official.iter().map(String::as_str).collect();
        assert_eq!(official_pairs, 3775);
        assert_eq!(test_src, official);
    }
}
