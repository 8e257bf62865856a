//! English CoNLL-2003 named-entity data (Tjong Kim Sang & De Meulder 2003, "Introduction to the CoNLL-2003
//! Shared Task: Language-Independent Named Entity Recognition", CoNLL).
//!
//! Format: one token a line, space-separated columns `word POS … tag` (the mirrored files have three columns,
//! `word POS tag`; the original release has four, `word POS chunk tag`); the NER tag is the last column, BIO over
//! PER, ORG, LOC and MISC. A blank line separates sentences; `-DOCSTART-` lines (document boundaries) are
//! skipped. Fewer than two columns or an unknown tag is an error naming `file:line`.
use super::{read_token_lines, TaggedSentence};
use crate::error::{Error, Result};
use std::path::Path;

fn valid_tag(t: &str) -> bool {
    t == "O" || matches!(t.split_once('-'), Some(("B" | "I", "PER" | "ORG" | "LOC" | "MISC")))
}

/// Read a CoNLL-2003 file into sentences of (word, NER tag).
pub fn read(path: &Path) -> Result<Vec<TaggedSentence>> {
    read_token_lines(path, |line_no, line| {
        if line.starts_with("-DOCSTART-") {
            return Ok(None);
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (Some(word), Some(tag)) = (cols.first(), cols.last()) else { return Ok(None) };
        if cols.len() < 2 {
            return Err(Error::format(
                path,
                line_no,
                format!("{} column(s) (expected `word POS tag`, space-separated, tag last)", cols.len()),
            ));
        }
        if !valid_tag(tag) {
            return Err(Error::format(
                path,
                line_no,
                format!("unknown tag {tag:?} (expected O or B-/I- with PER, ORG, LOC or MISC)"),
            ));
        }
        Ok(Some((word.to_string(), Some(tag.to_string()))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    #[test]
    fn parses_and_skips_docstart() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-PER\n")
            .unwrap();
        let s = read(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].tokens, ["EU", "rejects"]);
        assert_eq!(s[0].tags, ["B-ORG", "O"]);
        assert_eq!(s[1].tags, ["B-PER"]);
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.txt");
        std::fs::write(&p, "EU NNP B-ORG\nlonely\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("bad.txt:2") && e.contains("1 column"), "{e}");
        std::fs::write(&p, "EU NNP B-XYZ\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("bad.txt:1") && e.contains("unknown tag"), "{e}");
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_conll2003_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let f = d.join("ner/conll2003/train.txt");
        if !f.is_file() {
            return;
        }
        let s = read(&f).unwrap();
        assert_eq!(s.len(), 14_041);
        assert_eq!(s.iter().map(|s| s.tokens.len()).sum::<usize>(), 203_621);
        assert_eq!(read(&d.join("ner/conll2003/dev.txt")).unwrap().len(), 3_250);
        assert_eq!(read(&d.join("ner/conll2003/test.txt")).unwrap().len(), 3_453);
    }
}
