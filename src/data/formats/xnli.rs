//! XNLI (Conneau, Rinott, Lample, Williams, Bowman, Schwenk & Stoyanov 2018, "XNLI: Evaluating Cross-lingual
//! Sentence Representations", EMNLP) in the XTREME layout (Hu et al. 2020): one example a line,
//! `premise<TAB>hypothesis<TAB>label`, no header, no quoting (text never contains tabs).
//!
//! XTREME withholds the test labels: the test files have only two columns (`premise<TAB>hypothesis`, no trailing
//! tab). A missing or blank label gives `label: None`; a non-blank label other than
//! `entailment`/`neutral`/`contradiction` (or `contradictory`) is an error, as is any other column count.
//! Text is trimmed and normalised to NFC.
use super::{nfc, NliExample, NliLabel};
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use std::path::Path;

/// Read an XNLI TSV file (labelled dev or unlabelled test).
pub fn read(path: &Path) -> Result<Vec<NliExample>> {
    let mut reader = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some(line) = reader.next_line()? {
        let line_no = reader.line_no();
        let cols: Vec<&str> = line.split('\t').collect();
        let (premise, hypothesis, label) = match cols.as_slice() {
            [p, h] => (p, h, ""),
            [p, h, l] => (p, h, *l),
            _ => {
                return Err(Error::format(
                    path,
                    line_no,
                    format!("{} tab-separated columns (expected `premise<TAB>hypothesis<TAB>label`)", cols.len()),
                ))
            }
        };
        let label = if label.trim().is_empty() {
            None
        } else {
            Some(NliLabel::parse(label).ok_or_else(|| {
                Error::format(
                    path,
                    line_no,
                    format!("unknown label {label:?} (expected entailment, neutral, contradiction or blank)"),
                )
            })?)
        };
        out.push(NliExample { premise: nfc(premise), hypothesis: nfc(hypothesis), label });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    #[test]
    fn parses_labelled_and_unlabelled() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dev.tsv");
        std::fs::write(&p, "A man.\tA person.\tentailment\nX\tY\t\nU\tV\n").unwrap();
        let ex = read(&p).unwrap();
        assert_eq!(ex.len(), 3);
        assert_eq!(ex[0].label, Some(NliLabel::Entailment));
        assert_eq!(ex[0].hypothesis, "A person.");
        assert_eq!(ex[1].label, None);
        assert_eq!(ex[2].label, None);
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.tsv");
        std::fs::write(&p, "a\tb\tneutral\na\tb\tmaybe\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("bad.tsv:2") && e.contains("unknown label"), "{e}");
        std::fs::write(&p, "a\tb\tneutral\tx\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("bad.tsv:1") && e.contains("4 tab-separated columns"), "{e}");
        std::fs::write(&p, "just one column\n").unwrap();
        assert!(read(&p).is_err());
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_xnli_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let dev = d.join("xnli/dev-en.tsv");
        if !dev.is_file() {
            return;
        }
        let ex = read(&dev).unwrap();
        assert_eq!(ex.len(), 2490);
        for l in [NliLabel::Entailment, NliLabel::Neutral, NliLabel::Contradiction] {
            assert_eq!(ex.iter().filter(|e| e.label == Some(l)).count(), 830);
        }
        let test = read(&d.join("xnli/test-zh.tsv")).unwrap();
        assert_eq!(test.len(), 5010);
        assert!(test.iter().all(|e| e.label.is_none()));
    }
}
