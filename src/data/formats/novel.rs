//! Plain-text novels: the Russian novels (`mono/ru/*.txt.gz`) and the four classic Chinese novels, one file per
//! chapter (`mono/zh/<novel>-<chapter>.txt.gz`). UTF-8 text, one paragraph per line; blank or whitespace-only lines
//! (U+00A0 and U+3000 count as whitespace) separate paragraphs and are dropped.
//!
//! The `红楼梦` chapter files carry a scraping artefact: each repeats its chapter as ever-shorter tails. For those
//! files (language `zh`) the documented repair is applied: split the whole text on whitespace runs and keep only the
//! first occurrence of each segment, in order ([`dedupe_segments`]); each kept segment is a paragraph.
use super::{nfc, Document};
use crate::data::text_file::LineReader;
use crate::error::Result;
use std::collections::HashSet;
use std::path::Path;

/// File-name prefix of the chapter files that need [`dedupe_segments`].
const REPEATED_TAILS_PREFIX: &str = "红楼梦";

/// Read one novel (or chapter) file; `lang` is the corpus language (`ru`, `zh`, …). The id is the file stem
/// (the name without `.gz` and `.txt`).
pub fn read(path: &Path, lang: &str) -> Result<Document> {
    let mut reader = LineReader::open(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let paragraphs = if lang == "zh" && name.starts_with(REPEATED_TAILS_PREFIX) {
        let mut text = String::new();
        while let Some(line) = reader.next_line()? {
            text.push_str(&line);
            text.push('\n');
        }
        dedupe_segments(&text)
    } else {
        let mut paragraphs = Vec::new();
        while let Some(line) = reader.next_line()? {
            let para = nfc(&line);
            if !para.is_empty() {
                paragraphs.push(para);
            }
        }
        paragraphs
    };
    Ok(Document { id: stem(&name), paragraphs })
}

/// Split `text` on whitespace runs (Unicode white space, so U+00A0 and U+3000 included) and keep the first
/// occurrence of each NFC-normalised segment, in order.
pub fn dedupe_segments(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    text.split_whitespace().map(nfc).filter(|s| !s.is_empty() && seen.insert(s.clone())).collect()
}

fn stem(name: &str) -> String {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    name.strip_suffix(".txt").unwrap_or(name).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;
    use std::path::PathBuf;

    #[test]
    fn dedupe_keeps_first_occurrences_in_order() {
        let text = "甲乙丙。\n\n    丁戊。\u{3000}己庚。\n乙丙。\u{a0}丁戊。 己庚。\n甲乙丙。 新句。";
        assert_eq!(dedupe_segments(text), ["甲乙丙。", "丁戊。", "己庚。", "乙丙。", "新句。"]);
        assert!(dedupe_segments(" \u{3000}\n").is_empty());
    }

    #[test]
    fn lines_are_paragraphs_and_blank_lines_drop() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("Чехов.txt.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all("Дама с собачкой\r\n     \n\u{a0}\u{3000}\n     Говорили, что  e\u{301}\n\nКонец\n".as_bytes())
            .unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let doc = read(&p, "ru").unwrap();
        assert_eq!(doc.id, "Чехов");
        assert_eq!(doc.paragraphs, ["Дама с собачкой", "Говорили, что  é", "Конец"]);
    }

    #[test]
    fn hongloumeng_files_are_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let body = "第一回\n\n    甲。乙。 丙。\n乙。 丙。\n丙。\n";
        let p = dir.path().join("红楼梦-第一回.txt");
        std::fs::write(&p, body).unwrap();
        assert_eq!(read(&p, "zh").unwrap().paragraphs, ["第一回", "甲。乙。", "丙。", "乙。"]);
        let q = dir.path().join("西游记-第一回.txt");
        std::fs::write(&q, body).unwrap();
        assert_eq!(read(&q, "zh").unwrap().paragraphs.len(), 4);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.txt");
        std::fs::write(&p, b"ok\n\nb\xffd\n").unwrap();
        let err = read(&p, "ru").unwrap_err().to_string();
        assert!(err.contains("bad.txt:3: invalid UTF-8"), "{err}");
    }

    fn data_dir() -> PathBuf {
        crate::data::formats::test_mirror().unwrap_or_default()
    }

    fn first_file(dir: &Path, prefix: &str) -> Option<PathBuf> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
            .collect();
        names.sort();
        names.into_iter().next()
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn reads_real_novels() {
        let root = data_dir().join("mono");
        if let Some(p) = first_file(&root.join("ru"), "") {
            let doc = read(&p, "ru").unwrap();
            assert!(doc.paragraphs.len() > 20, "{}", doc.paragraphs.len());
            assert!(doc.paragraphs.iter().all(|p| !p.is_empty() && p.trim() == p));
            assert!(doc.paragraphs.iter().any(|p| p.contains("что")));
        }
        if let Some(p) = first_file(&root.join("zh"), "西游记") {
            let doc = read(&p, "zh").unwrap();
            assert!(doc.paragraphs.len() > 5);
            assert!(doc.paragraphs[1..].iter().any(|p| p.contains('。')));
        }
        if let Some(p) = first_file(&root.join("zh"), "红楼梦") {
            let raw = crate::data::text_file::read_to_string(&p).unwrap();
            let doc = read(&p, "zh").unwrap();
            let kept: usize = doc.paragraphs.iter().map(|p| p.chars().count()).sum();
            assert!(kept * 3 < raw.chars().count(), "repair kept {kept} characters");
            let unique: HashSet<_> = doc.paragraphs.iter().collect();
            assert_eq!(unique.len(), doc.paragraphs.len());
        }
    }
}
