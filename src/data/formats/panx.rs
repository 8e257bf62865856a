//! WikiAnn / PAN-X named-entity data (Pan, Zhang, May, Nothman, Knight & Ji 2017, "Cross-lingual Name Tagging
//! and Linking for 282 Languages", ACL) in the XTREME layout (Hu, Ruder, Siddhant, Neubig, Firat & Johnson 2020).
//!
//! Format: one token a line, `token<TAB>tag`, a blank line between sentences; tags are BIO over PER, ORG and
//! LOC (`O`, `B-PER`, `I-LOC`, …). The raw XTREME files prefix every token with its language (`en:London`);
//! when the first token of a file carries such a prefix (2–3 lowercase ASCII letters and `:`), that prefix is
//! stripped from every token that has it. The mirrored files carry no prefix.
//!
//! Test files in the XTREME layout carry no tags (one column): for such files every sentence has an **empty**
//! `tags` vector. A file that mixes tagged and untagged lines is an error.
use super::{read_token_lines, TaggedSentence};
use crate::error::{Error, Result};
use std::path::Path;

fn valid_tag(t: &str) -> bool {
    t == "O" || matches!(t.split_once('-'), Some(("B" | "I", "PER" | "ORG" | "LOC")))
}

fn lang_prefix(token: &str) -> Option<String> {
    let (p, rest) = token.split_once(':')?;
    ((2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_lowercase()) && !rest.is_empty())
        .then(|| format!("{p}:"))
}

/// Read a PAN-X file. Untagged (test) files give sentences with empty `tags`.
pub fn read(path: &Path) -> Result<Vec<TaggedSentence>> {
    let mut tagged: Option<bool> = None;
    let mut prefix: Option<Option<String>> = None;
    read_token_lines(path, |line_no, line| {
        let cols: Vec<&str> = line.split('\t').collect();
        let (token, tag) = match cols.as_slice() {
            [tok] => (*tok, None),
            [tok, tag] => (*tok, Some(*tag)),
            _ => {
                return Err(Error::format(
                    path,
                    line_no,
                    format!("{} tab-separated columns (expected `token<TAB>tag`)", cols.len()),
                ))
            }
        };
        let is_tagged = tag.is_some();
        if *tagged.get_or_insert(is_tagged) != is_tagged {
            return Err(Error::format(
                path,
                line_no,
                "tagged and untagged lines mixed (expected every line `token<TAB>tag`, or every line `token`)",
            ));
        }
        if token.is_empty() {
            return Err(Error::format(path, line_no, "empty token (expected `token<TAB>tag`)"));
        }
        let prefix = prefix.get_or_insert_with(|| lang_prefix(token));
        let token = match prefix {
            Some(p) => token.strip_prefix(p.as_str()).unwrap_or(token),
            None => token,
        };
        if let Some(tag) = tag {
            if !valid_tag(tag) {
                return Err(Error::format(
                    path,
                    line_no,
                    format!("unknown tag {tag:?} (expected O, B-PER, I-PER, B-ORG, I-ORG, B-LOC or I-LOC)"),
                ));
            }
        }
        Ok(Some((token.to_string(), tag.map(str::to_string))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    #[test]
    fn parses_tagged_prefixed_and_untagged() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("train.tsv");
        std::fs::write(&p, "en:New\tB-LOC\nen:York\tI-LOC\n\n\nen:Hi\tO\n").unwrap();
        let s = read(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].tokens, ["New", "York"]);
        assert_eq!(s[0].tags, ["B-LOC", "I-LOC"]);
        assert_eq!(s[1].tokens, ["Hi"]);
        let t = dir.path().join("test.tsv");
        std::fs::write(&t, "to:\nParis\n\nx\n").unwrap();
        let s = read(&t).unwrap();
        assert_eq!(s[0].tokens, ["to:", "Paris"]);
        assert!(s.iter().all(|s| s.tags.is_empty()));
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.tsv");
        for (text, at, what) in [
            ("a\tO\nb\tB-MISC\n", "bad.tsv:2", "unknown tag"),
            ("a\tO\tx\n", "bad.tsv:1", "3 tab-separated columns"),
            ("a\tO\nb\n", "bad.tsv:2", "mixed"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = read(&p).unwrap_err().to_string();
            assert!(e.contains(at) && e.contains(what), "{e}");
        }
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_panx_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let f = d.join("ner/panx/train-en.tsv");
        if !f.is_file() {
            return;
        }
        let s = read(&f).unwrap();
        assert_eq!(s.len(), 20_000);
        assert_eq!(s.iter().map(|s| s.tokens.len()).sum::<usize>(), 160_394);
        assert_eq!(read(&d.join("ner/panx/dev-zh.tsv")).unwrap().len(), 10_000);
        let t = read(&d.join("ner/panx/test-fr.tsv")).unwrap();
        assert_eq!(t.len(), 10_000);
        assert!(t.iter().all(|s| s.tags.is_empty()));
    }
}
