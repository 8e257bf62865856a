//! WMT newstest monolingual sets (the WMT news translation shared tasks' test sets), as mirrored in
//! `mono/news/PAIR.newstestYEAR.LANG.gz`: gzipped UTF-8, one sentence per line. Each non-blank line is a paragraph
//! (trimmed, NFC); the document id is the file name without `.gz`.
use super::{nfc, Document};
use crate::data::text_file::LineReader;
use crate::error::Result;
use std::path::Path;

/// Read one newstest file into a [`Document`].
pub fn read(path: &Path) -> Result<Document> {
    let mut reader = LineReader::open(path)?;
    let mut paragraphs = Vec::new();
    while let Some(line) = reader.next_line()? {
        let para = nfc(&line);
        if !para.is_empty() {
            paragraphs.push(para);
        }
    }
    let name = file_name(path);
    let id = name.strip_suffix(".gz").unwrap_or(&name).to_string();
    Ok(Document { id, paragraphs })
}

/// The language code of a `PAIR.newstestYEAR.LANG[.gz]` file name (`de-en.newstest2014.de.gz` → `de`);
/// `None` for names not in that pattern.
pub fn lang_of(path: &Path) -> Option<String> {
    let name = file_name(path);
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        [pair, set, lang] if !pair.is_empty() && set.starts_with("newstest") && !lang.is_empty() => {
            Some((*lang).to_string())
        }
        _ => None,
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;
    use std::path::PathBuf;

    #[test]
    fn reads_gzip_sentences() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("de-en.newstest2014.de.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all("Erster Satz.\n\n  Zweiter Satz. \r\nCafe\u{301}.\n".as_bytes()).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let doc = read(&p).unwrap();
        assert_eq!(doc.id, "de-en.newstest2014.de");
        assert_eq!(doc.paragraphs, ["Erster Satz.", "Zweiter Satz.", "Café."]);
    }

    #[test]
    fn lang_from_name() {
        assert_eq!(lang_of(Path::new("x/cs-de.newstest2009.de.gz")).as_deref(), Some("de"));
        assert_eq!(lang_of(Path::new("zh-en.newstest2019.zh")).as_deref(), Some("zh"));
        assert_eq!(lang_of(Path::new("notes.txt.gz")), None);
        assert_eq!(lang_of(Path::new("a.b.c.d.gz")), None);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("en-de.newstest2015.en");
        std::fs::write(&p, b"fine\n\xc3\n").unwrap();
        let err = read(&p).unwrap_err().to_string();
        assert!(err.contains("newstest2015.en:2: invalid UTF-8"), "{err}");
    }

    fn data_dir() -> PathBuf {
        crate::data::formats::test_mirror().unwrap_or_default()
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn reads_real_newstest() {
        let p = data_dir().join("mono/news/cs-de.newstest2009.de.gz");
        let doc = read(&p).unwrap();
        assert_eq!(lang_of(&p).as_deref(), Some("de"));
        assert!(doc.paragraphs.len() > 1000, "{}", doc.paragraphs.len());
        assert_eq!(doc.paragraphs[0], "Die Prager Börse stürzt gegen Geschäftsschluss ins Minus.");
        assert!(doc.paragraphs.iter().all(|p| !p.is_empty() && p.trim() == p));
    }
}
