//! Wikipedia dumps in the WikiExtractor output format (`mono/zh/zhwiki_wiki_00.gz`):
//!
//! ```text
//! <doc id="13" url="https://zh.wikipedia.org/wiki?curid=13" title="数学">
//! 数学
//!
//! 数学是利用符号语言研究数量、结构、变化以及空间等概念的一门学科……
//! </doc>
//! ```
//!
//! The first non-blank line inside a `<doc>` is the article title and is skipped; every further non-blank line is
//! a paragraph (NFC). The document id is the `id` attribute. Malformed structure (a `<doc>` inside an open doc, text
//! outside any doc, a `<doc>` line without an id, a doc left open at the end of the file) is a `file:line` error.
use super::{nfc, Document};
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use std::path::Path;

/// Streaming reader of WikiExtractor `<doc>` blocks; yields one [`Document`] per article.
pub struct Reader {
    lines: LineReader,
    done: bool,
}

/// Open a (possibly gzipped) WikiExtractor file.
pub fn open(path: &Path) -> Result<Reader> {
    Ok(Reader { lines: LineReader::open(path)?, done: false })
}

/// An article being read.
struct Open {
    id: String,
    start_line: usize,
    title_seen: bool,
    paragraphs: Vec<String>,
}

impl Reader {
    fn err(&self, line: usize, msg: impl Into<String>) -> Error {
        Error::format(self.lines.path(), line, msg)
    }

    fn next_doc(&mut self) -> Result<Option<Document>> {
        let mut current: Option<Open> = None;
        while let Some(line) = self.lines.next_line()? {
            let line_no = self.lines.line_no();
            let trimmed = line.trim();
            if is_doc_start(trimmed) {
                if let Some(open) = &current {
                    return Err(self.err(
                        line_no,
                        format!(
                            "<doc> inside the open doc {} from line {} (expected </doc> first)",
                            open.id, open.start_line
                        ),
                    ));
                }
                let id = attr(trimmed, "id").filter(|id| !id.is_empty()).ok_or_else(|| {
                    self.err(line_no, "<doc> line without an id attribute (expected <doc id=\"…\" …>)")
                })?;
                current = Some(Open { id, start_line: line_no, title_seen: false, paragraphs: Vec::new() });
            } else if trimmed == "</doc>" {
                let Some(open) = current.take() else {
                    return Err(self.err(line_no, "</doc> without an open doc (expected <doc …> first)"));
                };
                return Ok(Some(Document { id: open.id, paragraphs: open.paragraphs }));
            } else if trimmed.is_empty() {
                continue;
            } else if let Some(open) = current.as_mut() {
                if open.title_seen {
                    open.paragraphs.push(nfc(trimmed));
                } else {
                    open.title_seen = true;
                }
            } else {
                return Err(self.err(line_no, "text outside any doc (expected <doc id=\"…\" …>)"));
            }
        }
        match current {
            Some(open) => Err(self.err(
                self.lines.line_no(),
                format!("end of file inside doc {} opened at line {} (expected </doc>)", open.id, open.start_line),
            )),
            None => Ok(None),
        }
    }
}

impl Iterator for Reader {
    type Item = Result<Document>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_doc().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

fn is_doc_start(line: &str) -> bool {
    line == "<doc>" || (line.starts_with("<doc") && line[4..].starts_with(|c: char| c.is_whitespace() || c == '>'))
}

/// The value of `name="…"` in a start-tag line, with the five XML entities decoded.
fn attr(tag: &str, name: &str) -> Option<String> {
    let pattern = format!(" {name}=\"");
    let start = tag.find(&pattern)? + pattern.len();
    let len = tag[start..].find('"')?;
    let raw = &tag[start..start + len];
    Some(
        raw.replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;
    use std::path::PathBuf;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn all(path: &Path) -> Result<Vec<Document>> {
        open(path)?.collect()
    }

    #[test]
    fn reads_docs_skipping_titles() {
        let dir = tempfile::tempdir().unwrap();
        let text = "<doc id=\"13\" url=\"u\" title=\"数学\">\n数学\n\n数学是一门学科。\n  第二段。  \n</doc>\n\n\
                    <doc id=\"7\" url=\"u\" title=\"空\">\n空\n</doc>\n";
        let p = dir.path().join("wiki_00.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let docs = all(&p).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].id, "13");
        assert_eq!(docs[0].paragraphs, ["数学是一门学科。", "第二段。"]);
        assert_eq!(docs[1].id, "7");
        assert!(docs[1].paragraphs.is_empty());
    }

    #[test]
    fn structural_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("nested.txt", "<doc id=\"1\">\nT\nx\n<doc id=\"2\">\n</doc>\n", ":4:", "inside the open doc"),
            ("outside.txt", "<doc id=\"1\">\nT\n</doc>\n\nstray text\n", ":5:", "outside any doc"),
            ("noid.txt", "<doc url=\"u\" title=\"t\">\nT\n</doc>\n", ":1:", "without an id"),
            ("unclosed.txt", "<doc id=\"1\">\nT\ntext\n", ":3:", "end of file inside doc 1"),
        ];
        for (name, text, line, what) in cases {
            let p = write(dir.path(), name, text);
            let err = all(&p).unwrap_err().to_string();
            assert!(err.contains(&format!("{name}{line}")) && err.contains(what), "{err}");
        }
    }

    #[test]
    fn iteration_stops_after_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "e.txt", "junk\n<doc id=\"1\">\nT\n</doc>\n");
        let mut r = open(&p).unwrap();
        assert!(matches!(r.next(), Some(Err(_))));
        assert!(r.next().is_none());
    }

    fn data_dir() -> PathBuf {
        crate::data::formats::test_mirror().unwrap_or_default()
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn reads_real_zhwiki() {
        let p = data_dir().join("mono/zh/zhwiki_wiki_00.gz");
        let docs: Vec<Document> = open(&p).unwrap().take(50).collect::<Result<_>>().unwrap();
        assert_eq!(docs.len(), 50);
        assert_eq!(docs[0].id, "13");
        assert!(docs[0].paragraphs[0].starts_with("数学是"), "{}", docs[0].paragraphs[0]);
        assert!(docs.iter().all(|d| d.paragraphs.iter().all(|p| !p.is_empty() && !p.starts_with("<doc"))));
    }
}
