//! ELTeC novels: TEI XML at encoding level 1, from the European Literary Text Collection built by COST Action
//! CA16204 "Distant Reading for European Literary History" (`mono/{en,fr,de}/*.xml.gz` in the mirror).
//!
//! Only running text is kept: the content of `<p>` elements and of `<l>` verse lines (one paragraph each) inside
//! `<text>…<body>`. The `<teiHeader>`, `<front>` and `<back>` matter and every `<note>` subtree (also notes nested
//! inside paragraphs) are skipped. Inline elements (`<hi>`, `<emph>`, `<foreign>`, `<quote>`, …) keep their text,
//! `<lb/>`, `<pb/>` and `<cb/>` become a space, whitespace runs collapse to one space, entities are decoded and
//! every paragraph is NFC-normalised; empty paragraphs are dropped.
//!
//! The file is streamed (gzip detected by magic bytes) through quick-xml; malformed XML is reported with the line
//! number computed from the reader's byte position.
use super::{nfc, Document};
use crate::data::text_file::open_maybe_gz;
use crate::error::{Error, Result};
use quick_xml::events::{BytesRef, Event};
use quick_xml::Reader;
use std::collections::VecDeque;
use std::io::{BufReader, Read};
use std::path::Path;

/// Read one ELTeC TEI file into a [`Document`] whose id is the file name without `.xml` / `.xml.gz`.
pub fn read(path: &Path) -> Result<Document> {
    let counter = LineCounter::new(open_maybe_gz(path)?);
    let mut reader = Reader::from_reader(BufReader::with_capacity(1 << 16, counter));
    reader.config_mut().trim_text(false);
    let mut state = State::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) => {
                let pos = reader.error_position();
                let line = reader.get_mut().get_mut().line_at(pos);
                return Err(malformed(path, line, &e.to_string(), "well-formed TEI XML"));
            }
        };
        let pos = reader.buffer_position();
        let line = reader.get_mut().get_mut().line_at(pos);
        let at = |msg: &str, expected: &str| malformed(path, line, msg, expected);
        match event {
            Event::Start(e) => state.start(local_name(e.local_name().as_ref())),
            Event::End(_) => state.end().ok_or_else(|| at("closing tag without an opening tag", "balanced tags"))?,
            Event::Empty(e) => state.empty(&local_name(e.local_name().as_ref())),
            Event::Text(t) if state.collecting() => {
                let s = t.decode().map_err(|e| at(&e.to_string(), "UTF-8 text"))?;
                state.buffer.push_str(&s);
            }
            Event::CData(t) if state.collecting() => {
                let s = t.decode().map_err(|e| at(&e.to_string(), "UTF-8 text"))?;
                state.buffer.push_str(&s);
            }
            Event::GeneralRef(r) if state.collecting() => {
                let s = resolve_ref(&r).map_err(|m| at(&m, "a character reference or one of the five XML entities"))?;
                state.buffer.push_str(&s);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(open) = state.stack.last() {
        let pos = reader.buffer_position();
        let line = reader.get_mut().get_mut().line_at(pos);
        return Err(malformed(path, line, &format!("end of file inside <{}>", open.0), "closing tags"));
    }
    if !state.saw_body {
        return Err(Error::format_file(path, "no <body> inside <text> (expected an ELTeC TEI file with running text)"));
    }
    Ok(Document { id: doc_id(path), paragraphs: state.paragraphs })
}

fn malformed(path: &Path, line: usize, msg: &str, expected: &str) -> Error {
    Error::format(path, line, format!("malformed TEI XML: {msg} (expected {expected})"))
}

fn local_name(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Resolve `&name;` / `&#…;` to its text.
fn resolve_ref(r: &BytesRef<'_>) -> std::result::Result<String, String> {
    if r.is_char_ref() {
        return match r.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            Ok(None) => Err("bad character reference".into()),
            Err(e) => Err(e.to_string()),
        };
    }
    let name = r.decode().map_err(|e| e.to_string())?;
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| format!("unknown entity &{name};"))
}

/// File name without `.gz` and `.xml`.
fn doc_id(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.strip_suffix(".xml").unwrap_or(name).to_string()
}

/// What an open element means for text collection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Body,
    Skip,
    Para,
    Other,
}

#[derive(Default)]
struct State {
    stack: Vec<(String, Kind)>,
    text_depth: usize,
    body_depth: usize,
    skip_depth: usize,
    para_depth: usize,
    saw_body: bool,
    buffer: String,
    paragraphs: Vec<String>,
}

impl State {
    /// Inside `<text><body>` and outside any skipped subtree.
    fn active(&self) -> bool {
        self.text_depth > 0 && self.body_depth > 0 && self.skip_depth == 0
    }

    fn collecting(&self) -> bool {
        self.active() && self.para_depth > 0
    }

    fn start(&mut self, name: String) {
        let kind = match name.as_str() {
            "text" => Kind::Text,
            "body" if self.text_depth > 0 => Kind::Body,
            "teiHeader" | "front" | "back" | "note" => Kind::Skip,
            "p" | "l" if self.active() => Kind::Para,
            _ => Kind::Other,
        };
        match kind {
            Kind::Text => self.text_depth += 1,
            Kind::Body => {
                self.body_depth += 1;
                self.saw_body = true;
            }
            Kind::Skip => self.skip_depth += 1,
            Kind::Para => {
                // A paragraph or verse line nested in another one: what came before it is a paragraph of its own.
                self.flush();
                self.para_depth += 1;
            }
            Kind::Other => {}
        }
        self.stack.push((name, kind));
    }

    /// `None` on a closing tag with nothing open.
    fn end(&mut self) -> Option<()> {
        let (_, kind) = self.stack.pop()?;
        match kind {
            Kind::Text => self.text_depth -= 1,
            Kind::Body => self.body_depth -= 1,
            Kind::Skip => self.skip_depth -= 1,
            Kind::Para => {
                self.flush();
                self.para_depth -= 1;
            }
            Kind::Other => {}
        }
        Some(())
    }

    fn empty(&mut self, name: &str) {
        match name {
            "lb" | "pb" | "cb" if self.collecting() => self.buffer.push(' '),
            "body" if self.text_depth > 0 => self.saw_body = true,
            _ => {}
        }
    }

    fn flush(&mut self) {
        let collapsed = self.buffer.split_whitespace().collect::<Vec<_>>().join(" ");
        let para = nfc(&collapsed);
        if !para.is_empty() {
            self.paragraphs.push(para);
        }
        self.buffer.clear();
    }
}

/// Wraps the decompressed byte stream and remembers where its newlines are, so that a byte position can be turned
/// into a 1-based line number. Positions are queried in increasing order, so passed newlines are counted and
/// forgotten (a running count), which keeps memory small.
struct LineCounter {
    inner: Box<dyn Read + Send>,
    offset: u64,
    newlines: VecDeque<u64>,
    passed: usize,
}

impl LineCounter {
    fn new(inner: Box<dyn Read + Send>) -> Self {
        LineCounter { inner, offset: 0, newlines: VecDeque::new(), passed: 0 }
    }

    /// 1-based line of byte offset `pos` (all bytes before `pos` must have been read).
    fn line_at(&mut self, pos: u64) -> usize {
        while let Some(&nl) = self.newlines.front() {
            if nl >= pos {
                break;
            }
            self.newlines.pop_front();
            self.passed += 1;
        }
        self.passed + 1
    }
}

impl Read for LineCounter {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let start = self.offset;
        self.newlines.extend(buf[..n].iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| start + i as u64));
        self.offset += n as u64;
        Ok(n)
    }
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

    const SAMPLE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0">
  <teiHeader><fileDesc><p>Header paragraph</p></fileDesc></teiHeader>
  <text>
    <front><p>Preface text</p></front>
    <body>
      <div><head>CHAPTER I.</head>
        <p>It was a <hi rend="italic">dark</hi> and
           stormy<lb/>night<note place="foot"><p>A footnote.</p></note> &amp; cold &#233;t&#xE9;.</p>
        <p>   </p>
        <p><emph>Foreign</emph> <foreign xml:lang="fr">mot</foreign> <quote>“quoted”</quote>.<pb n="2"/>Next</p>
        <lg><l>First verse line,</l><l>second line.</l></lg>
        <p>Cafe&#x301; end</p>
      </div>
    </body>
    <back><p>Appendix</p></back>
  </text>
</TEI>
"#;

    #[test]
    fn keeps_only_body_running_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "ENG0001_Test.xml", SAMPLE);
        let doc = read(&p).unwrap();
        assert_eq!(doc.id, "ENG0001_Test");
        assert_eq!(
            doc.paragraphs,
            [
                "It was a dark and stormy night & cold été.",
                "Foreign mot “quoted”. Next",
                "First verse line,",
                "second line.",
                "Café end",
            ]
        );
        let all = doc.paragraphs.join("\n");
        for skipped in ["Header", "Preface", "footnote", "Appendix", "CHAPTER"] {
            assert!(!all.contains(skipped), "{skipped} leaked: {all}");
        }
    }

    #[test]
    fn reads_gzip_and_strips_xml_gz() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("FRA0001.xml.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(SAMPLE.as_bytes()).unwrap();
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let doc = read(&p).unwrap();
        assert_eq!(doc.id, "FRA0001");
        assert_eq!(doc.paragraphs.len(), 5);
    }

    #[test]
    fn malformed_xml_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = "<TEI>\n<text>\n<body>\n<p>one</p>\n\n<p>two\nmore</x>\n</body></text></TEI>\n";
        let p = write(dir.path(), "bad.xml", text);
        let err = read(&p).unwrap_err().to_string();
        assert!(err.contains("bad.xml:7: malformed TEI XML"), "{err}");
        assert!(err.contains("(expected"), "{err}");
    }

    #[test]
    fn unclosed_and_unknown_entity_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "open.xml", "<TEI>\n<text>\n<body>\n<p>one\n");
        let err = read(&p).unwrap_err().to_string();
        assert!(err.contains("open.xml:") && err.contains("malformed TEI XML"), "{err}");
        let p = write(dir.path(), "ent.xml", "<TEI><text><body>\n\n<p>a &bogus; b</p></body></text></TEI>");
        let err = read(&p).unwrap_err().to_string();
        assert!(err.contains("ent.xml:3:") && err.contains("bogus"), "{err}");
    }

    #[test]
    fn missing_body_is_a_file_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "nobody.xml", "<TEI><teiHeader/><text><front><p>x</p></front></text></TEI>");
        let err = read(&p).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}: ", p.display())) && err.contains("<body>"), "{err}");
    }

    fn data_dir() -> PathBuf {
        crate::data::formats::test_mirror().unwrap_or_default()
    }

    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    #[test]
    fn reads_real_eltec_novel() {
        let p = data_dir().join("mono/en/ENG18400_Trollope.xml.gz");
        let doc = read(&p).unwrap();
        assert_eq!(doc.id, "ENG18400_Trollope");
        assert!(doc.paragraphs.len() > 100, "{}", doc.paragraphs.len());
        let all = doc.paragraphs.join("\n");
        assert!(all.contains("Michael Armstrong"));
        assert!(!all.contains('<'));
        // The preface is front matter.
        assert!(!all.contains("When the author of \"Michael Armstrong\" first determined"));
        assert!(doc.paragraphs.iter().all(|p| !p.is_empty() && !p.contains("  ")));
    }
}
