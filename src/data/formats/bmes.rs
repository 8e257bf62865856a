//! Chinese resume NER (ResumeNER; Zhang & Yang 2018, "Chinese NER Using Lattice LSTM", ACL) in its
//! character-level BMES layout.
//!
//! Format: one character and its tag a line, separated by a space (`上 B-NAME`), a blank line between
//! sentences; LF or CRLF line ends. Tags are `O` or `B-`/`M-`/`E-`/`S-` followed by an upper-case type
//! (`NAME`, `ORG`, `TITLE`, `EDU`, …).
//!
//! A line that is not `char tag` (the mirrored `train.char.bmes` has one, line 68,949: `-NAME`, a tag whose
//! character was lost) is an error naming `file:line` in [`read`]; [`read_lenient`] skips such lines and returns
//! them so callers can report them.
use super::{read_token_lines, TaggedSentence};
use crate::error::{Error, Result};
use std::path::Path;

fn valid_tag(t: &str) -> bool {
    t == "O"
        || matches!(t.split_once('-'), Some(("B" | "M" | "E" | "S", ty))
            if !ty.is_empty() && ty.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
}

/// Parse one non-blank line, or say what is wrong with it.
fn parse_line(line: &str) -> std::result::Result<(String, String), String> {
    let fields: Vec<&str> = line.split([' ', '\t']).filter(|f| !f.is_empty()).collect();
    match fields.as_slice() {
        [ch, tag] if valid_tag(tag) => Ok((ch.to_string(), tag.to_string())),
        [_, tag] => Err(format!("unknown tag {tag:?} (expected O or B-/M-/E-/S- and an upper-case type)")),
        _ => Err(format!(
            "malformed line {line:?} with {} field(s) (expected `character tag`, e.g. `上 B-NAME`)",
            fields.len()
        )),
    }
}

/// Sentences plus the malformed lines skipped, as `(line number, text)`.
pub type Lenient = (Vec<TaggedSentence>, Vec<(usize, String)>);

fn read_impl(path: &Path, lenient: bool) -> Result<Lenient> {
    let mut skipped = Vec::new();
    let sentences = read_token_lines(path, |line_no, line| match parse_line(line) {
        Ok((ch, tag)) => Ok(Some((ch, Some(tag)))),
        Err(_) if lenient => {
            skipped.push((line_no, line.to_string()));
            Ok(None)
        }
        Err(msg) => Err(Error::format(path, line_no, msg)),
    })?;
    Ok((sentences, skipped))
}

/// Read a BMES file strictly: any malformed line is an error naming `file:line`.
pub fn read(path: &Path) -> Result<Vec<TaggedSentence>> {
    Ok(read_impl(path, false)?.0)
}

/// Read a BMES file, skipping malformed lines; returns the sentences and the skipped `(line number, text)`.
pub fn read_lenient(path: &Path) -> Result<Lenient> {
    read_impl(path, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    #[test]
    fn parses_crlf_sentences() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bmes");
        std::fs::write(&p, "上 B-NAME\r\n海 E-NAME\r\n， O\r\n\r\n我 S-NAME\r\n").unwrap();
        let s = read(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].tokens, ["上", "海", "，"]);
        assert_eq!(s[0].tags, ["B-NAME", "E-NAME", "O"]);
    }

    #[test]
    fn malformed_line_strict_and_lenient() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.bmes");
        std::fs::write(&p, "上 B-NAME\n-NAME\n海 E-NAME\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("b.bmes:2") && e.contains("expected `character tag`"), "{e}");
        let (s, skipped) = read_lenient(&p).unwrap();
        assert_eq!(s[0].tokens, ["上", "海"]);
        assert_eq!(skipped, vec![(2, "-NAME".to_string())]);
        std::fs::write(&p, "上 X-NAME\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("b.bmes:1") && e.contains("unknown tag"), "{e}");
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_resume_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let f = d.join("ner/resume-zh/train.char.bmes");
        if !f.is_file() {
            return;
        }
        let e = read(&f).unwrap_err().to_string();
        assert!(e.contains("train.char.bmes:68949"), "{e}");
        let (s, skipped) = read_lenient(&f).unwrap();
        assert_eq!(s.len(), 3_821);
        assert_eq!(skipped, vec![(68_949, "-NAME".to_string())]);
        assert_eq!(read(&d.join("ner/resume-zh/dev.char.bmes")).unwrap().len(), 463);
        assert_eq!(read(&d.join("ner/resume-zh/test.char.bmes")).unwrap().len(), 477);
    }
}
