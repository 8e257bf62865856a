//! One document per line: `mono/zh/zhwiki_sampled.txt.gz` (Wikipedia articles flattened to a line each) and
//! `mono/zh/CLUECorpusSmall_sampled.txt.gz` (CLUECorpusSmall web text). Each non-blank line becomes a
//! [`Document`] with id `"{stem}#{line_no}"` (stem: the file name without `.gz` and `.txt`; 1-based line number)
//! and a single trimmed, NFC paragraph. Blank lines are skipped.
use super::{nfc, Document};
use crate::data::text_file::LineReader;
use crate::error::Result;
use std::path::Path;

/// Streaming reader yielding one [`Document`] per non-blank line.
pub struct Reader {
    lines: LineReader,
    stem: String,
    done: bool,
}

/// Open a (possibly gzipped) one-document-per-line file.
pub fn open(path: &Path) -> Result<Reader> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let stem = name.strip_suffix(".txt").unwrap_or(name).to_string();
    Ok(Reader { lines: LineReader::open(path)?, stem, done: false })
}

impl Iterator for Reader {
    type Item = Result<Document>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            match self.lines.next_line() {
                Ok(Some(line)) => {
                    let para = nfc(&line);
                    if !para.is_empty() {
                        let id = format!("{}#{}", self.stem, self.lines.line_no());
                        return Some(Ok(Document { id, paragraphs: vec![para] }));
                    }
                }
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;
    use std::path::PathBuf;

    #[test]
    fn one_document_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("corpus_sampled.txt.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all("第一篇。\n\n \u{3000}\n  第二篇。 \nCafe\u{301}\n".as_bytes()).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let docs: Vec<Document> = open(&p).unwrap().collect::<Result<_>>().unwrap();
        let ids: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["corpus_sampled#1", "corpus_sampled#4", "corpus_sampled#5"]);
        assert_eq!(docs[1].paragraphs, ["第二篇。"]);
        assert_eq!(docs[2].paragraphs, ["Café"]);
    }

    #[test]
    fn invalid_utf8_stops_with_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.txt");
        std::fs::write(&p, b"ok\n\xff\nlater\n").unwrap();
        let mut r = open(&p).unwrap();
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err().to_string();
        assert!(err.contains("bad.txt:2: invalid UTF-8"), "{err}");
        assert!(r.next().is_none());
    }

    fn data_dir() -> PathBuf {
        crate::data::formats::test_mirror().unwrap_or_default()
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn reads_real_line_docs() {
        let root = data_dir().join("mono/zh");
        for name in ["zhwiki_sampled.txt.gz", "CLUECorpusSmall_sampled.txt.gz"] {
            let p = root.join(name);
            let docs: Vec<Document> = open(&p).unwrap().take(200).collect::<Result<_>>().unwrap();
            assert_eq!(docs.len(), 200, "{name}");
            let stem = name.trim_end_matches(".txt.gz");
            assert_eq!(docs[0].id, format!("{stem}#1"));
            assert!(docs.iter().all(|d| d.paragraphs.len() == 1 && !d.paragraphs[0].is_empty()));
            let han = docs
                .iter()
                .flat_map(|d| d.paragraphs[0].chars())
                .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
                .count();
            assert!(han > 1000, "{name}: {han} Han characters");
        }
    }
}
