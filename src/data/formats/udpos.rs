//! Universal Dependencies part-of-speech data in the XTREME layout (Hu et al. 2020, built from UD treebanks,
//! <https://universaldependencies.org>): one word a line, `word<TAB>UPOS`, a blank line between sentences.
//! Tags must be one of the 17 UD universal POS tags; anything else, or a line without exactly two columns, is an
//! error naming `file:line`.
use super::{read_token_lines, TaggedSentence};
use crate::error::{Error, Result};
use std::path::Path;

/// The 17 universal POS tags of UD v2.
pub const UPOS_TAGS: [&str; 17] = [
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ",
    "SYM", "VERB", "X",
];

/// Read a `word<TAB>UPOS` file.
pub fn read(path: &Path) -> Result<Vec<TaggedSentence>> {
    read_token_lines(path, |line_no, line| {
        let cols: Vec<&str> = line.split('\t').collect();
        let [word, tag] = cols.as_slice() else {
            return Err(Error::format(
                path,
                line_no,
                format!("{} tab-separated columns (expected `word<TAB>UPOS`)", cols.len()),
            ));
        };
        if !UPOS_TAGS.contains(tag) {
            return Err(Error::format(
                path,
                line_no,
                format!("unknown UPOS tag {tag:?} (expected one of {})", UPOS_TAGS.join(" ")),
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
    fn parses_sentences() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.tsv");
        std::fs::write(&p, "Manasse\tPROPN\nist\tAUX\n\n\n:\tPUNCT").unwrap();
        let s = read(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].tokens, ["Manasse", "ist"]);
        assert_eq!(s[0].tags, ["PROPN", "AUX"]);
        assert_eq!(s[1].tags, ["PUNCT"]);
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.tsv");
        std::fs::write(&p, "a\tNOUN\nb\tNN\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("bad.tsv:2") && e.contains("unknown UPOS tag \"NN\""), "{e}");
        std::fs::write(&p, "a NOUN\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("bad.tsv:1") && e.contains("1 tab-separated columns"), "{e}");
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_udpos_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let f = d.join("ud/udpos/dev-de.tsv");
        if !f.is_file() {
            return;
        }
        let s = read(&f).unwrap();
        // The README says 19,232: that is the number of blank separator lines; the last sentence has no blank
        // line after it, so there are 19,233 sentences (UD German-GSD dev 799 + German-HDT dev 18,434).
        assert_eq!(s.len(), 19_233);
        assert_eq!(s.iter().map(|s| s.tokens.len()).sum::<usize>(), 331_835);
        assert_eq!(read(&d.join("ud/udpos/dev-en.tsv")).unwrap().len(), 3_974);
        assert_eq!(read(&d.join("ud/udpos/dev-zh.tsv")).unwrap().len(), 1_000);
    }
}
