//! Opening data files for streaming: transparent gzip (detected by the magic bytes `1f 8b`, not the name),
//! line reading with 1-based line numbers, strict UTF-8 with the offending line named, and CRLF tolerance.
//!
//! Every reader in [`crate::data::formats`] reads through [`LineReader`], so truncated gzip streams and invalid
//! UTF-8 give the same precise `file:line: …` errors everywhere.
use crate::error::{Error, Result};
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Open `path` for reading, decompressing gzip when the file starts with the gzip magic bytes.
pub fn open_maybe_gz(path: &Path) -> Result<Box<dyn Read + Send>> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut file, &mut magic).map_err(|e| Error::io(path, e))?;
    let head = std::io::Cursor::new(magic[..n].to_vec());
    let chained = head.chain(file);
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(MultiGzDecoder::new(chained)))
    } else {
        Ok(Box::new(chained))
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..])? {
            0 => break,
            k => filled += k,
        }
    }
    Ok(filled)
}

/// A streaming line reader over a (possibly gzipped) UTF-8 text file.
///
/// Lines come without their terminator (`\n` or `\r\n`); a leading UTF-8 byte-order mark is dropped.
pub struct LineReader {
    path: PathBuf,
    inner: BufReader<Box<dyn Read + Send>>,
    line_no: usize,
    buf: Vec<u8>,
}

impl LineReader {
    /// Open `path` (gzip detected automatically).
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Self::from_reader(path, open_maybe_gz(path)?))
    }

    /// Wrap an already open stream; `path` is used in error messages only.
    pub fn from_reader(path: &Path, reader: Box<dyn Read + Send>) -> Self {
        LineReader {
            path: path.to_path_buf(),
            inner: BufReader::with_capacity(1 << 16, reader),
            line_no: 0,
            buf: Vec::new(),
        }
    }

    /// The file this reader reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 1-based number of the line most recently returned (0 before the first).
    pub fn line_no(&self) -> usize {
        self.line_no
    }

    /// The next line, or `None` at the end of the file.
    pub fn next_line(&mut self) -> Result<Option<String>> {
        self.buf.clear();
        let n = self.inner.read_until(b'\n', &mut self.buf).map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::UnexpectedEof || e.kind() == std::io::ErrorKind::InvalidInput
            {
                format!("truncated or corrupt gzip stream after line {}: {e}", self.line_no)
            } else {
                format!("read error after line {}: {e}", self.line_no)
            };
            Error::format_file(&self.path, what)
        })?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        let bytes =
            if self.line_no == 1 && self.buf.starts_with(&[0xEF, 0xBB, 0xBF]) { &self.buf[3..] } else { &self.buf[..] };
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(s.to_owned())),
            Err(e) => Err(Error::format(
                &self.path,
                self.line_no,
                format!("invalid UTF-8 at byte {} of the line (expected UTF-8 text)", e.valid_up_to()),
            )),
        }
    }
}

impl Iterator for LineReader {
    type Item = Result<(usize, String)>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_line() {
            Ok(Some(l)) => Some(Ok((self.line_no, l))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Read a whole (possibly gzipped) file as UTF-8, naming the first invalid line on failure.
pub fn read_to_string(path: &Path) -> Result<String> {
    let mut out = String::new();
    let mut reader = LineReader::open(path)?;
    while let Some(line) = reader.next_line()? {
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;

    #[test]
    fn reads_plain_and_gzip_with_crlf_and_bom() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        std::fs::write(&plain, b"\xEF\xBB\xBFone\r\ntwo\nthree").unwrap();
        let lines: Vec<_> = LineReader::open(&plain).unwrap().map(|r| r.unwrap().1).collect();
        assert_eq!(lines, ["one", "two", "three"]);

        let gz = dir.path().join("b.bin");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(b"x\ny\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let lines: Vec<_> = LineReader::open(&gz).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(lines, [(1, "x".to_string()), (2, "y".to_string())]);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.txt");
        std::fs::write(&p, b"ok\nb\xffd\n").unwrap();
        let err = read_to_string(&p).unwrap_err().to_string();
        assert!(err.contains("bad.txt:2: invalid UTF-8"), "{err}");
    }

    #[test]
    fn truncated_gzip_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.gz");
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        for i in 0..2000 {
            writeln!(enc, "line number {i} with some text").unwrap();
        }
        let bytes = enc.finish().unwrap();
        std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
        let err = read_to_string(&p).unwrap_err().to_string();
        assert!(err.contains("t.gz") && err.contains("gzip"), "{err}");
    }
}
