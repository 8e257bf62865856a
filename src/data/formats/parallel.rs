//! Line-aligned parallel text: two files, one sentence a line, line *i* of one the translation of line *i* of
//! the other. Used for Tatoeba (`tatoeba.fra-eng.fra` / `tatoeba.fra-eng.eng`, as in the XTREME sentence-retrieval
//! task of Hu et al. 2020), the WMT newstest sets and TICO-19 (gzipped pairs; gzip is detected by magic bytes).
//!
//! Lines are trimmed and normalised to NFC; empty lines are kept so that alignment is never shifted.
use super::nfc;
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use std::path::Path;

fn read_lines(path: &Path) -> Result<Vec<String>> {
    let mut reader = LineReader::open(path)?;
    let mut out = Vec::new();
    while let Some(line) = reader.next_line()? {
        out.push(nfc(&line));
    }
    Ok(out)
}

/// Read two line-aligned files into `(src, tgt)` pairs. Files with different line counts are an error naming
/// both files and both counts.
pub fn read_pairs(src: &Path, tgt: &Path) -> Result<Vec<(String, String)>> {
    let a = read_lines(src)?;
    let b = read_lines(tgt)?;
    if a.len() != b.len() {
        return Err(Error::format_file(
            src,
            format!(
                "{} has {} lines but {} has {} (expected line-aligned files with equal line counts)",
                src.display(),
                a.len(),
                tgt.display(),
                b.len()
            ),
        ));
    }
    Ok(a.into_iter().zip(b).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;
    use std::io::Write;

    #[test]
    fn reads_aligned_plain_and_gzip() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("x.fra");
        std::fs::write(&a, " Bonjour \r\n\ne\u{301}te\u{301}\n").unwrap();
        let b = dir.path().join("x.eng.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(b"Hello\n\nsummer\n").unwrap();
        std::fs::write(&b, enc.finish().unwrap()).unwrap();
        let pairs = read_pairs(&a, &b).unwrap();
        assert_eq!(
            pairs,
            vec![
                ("Bonjour".to_string(), "Hello".to_string()),
                (String::new(), String::new()),
                ("\u{e9}t\u{e9}".to_string(), "summer".to_string())
            ]
        );
    }

    #[test]
    fn unequal_counts_name_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.fra");
        let b = dir.path().join("a.eng");
        std::fs::write(&a, "1\n2\n3\n").unwrap();
        std::fs::write(&b, "1\n2\n").unwrap();
        let e = read_pairs(&a, &b).unwrap_err().to_string();
        assert!(e.contains("a.fra has 3 lines") && e.contains("a.eng has 2"), "{e}");
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_parallel_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let t = d.join("parallel/tatoeba");
        if t.is_dir() {
            let p = read_pairs(&t.join("tatoeba.fra-eng.fra"), &t.join("tatoeba.fra-eng.eng")).unwrap();
            assert_eq!(p.len(), 1000);
        }
        let w = d.join("parallel/wmt");
        if w.is_dir() {
            let p = read_pairs(&w.join("de-en.newstest2012.de.gz"), &w.join("de-en.newstest2012.en.gz")).unwrap();
            assert_eq!(p.len(), 3003);
        }
        let c = d.join("parallel/tico19");
        if c.is_dir() {
            let p = read_pairs(&c.join("en-zh.tico19-test.en.gz"), &c.join("en-zh.tico19-test.zh.gz")).unwrap();
            assert_eq!(p.len(), 2100);
        }
    }
}
