//! Rendering a [`FigureRecord`]: each chart spec to `ID.png` + `ID.svg` (`ID-2.*`, … for further charts) and each
//! table to `ID.md` + `ID.csv` (`ID-2.*`, …). Used after a run and by `crossling plot ID` from the JSON alone.
use std::path::{Path, PathBuf};

use super::record::FigureRecord;
use crate::atomic_file::write_atomic;
use crate::error::{Error, Result};
use crate::plot::{ChartSpec, Table};

fn stem(out_dir: &Path, id: &str, i: usize) -> PathBuf {
    if i == 0 {
        out_dir.join(id)
    } else {
        out_dir.join(format!("{id}-{}", i + 1))
    }
}

/// Parses a chart spec from a record.
pub fn chart_spec(v: &serde_json::Value) -> Result<ChartSpec> {
    serde_json::from_value(v.clone()).map_err(|e| Error::Invalid(format!("chart spec: {e}")))
}

/// Parses a table spec from a record.
pub fn table_spec(v: &serde_json::Value) -> Result<Table> {
    serde_json::from_value(v.clone()).map_err(|e| Error::Invalid(format!("table spec: {e}")))
}

/// Writes every chart and table of `record` into `out_dir`; returns the files written.
pub fn render_record(record: &FigureRecord, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (i, v) in record.charts.iter().enumerate() {
        let spec = chart_spec(v).map_err(|e| Error::Invalid(format!("{}: chart {}: {e}", record.id, i + 1)))?;
        written.extend(crate::plot::render(&spec, &stem(out_dir, &record.id, i))?);
    }
    for (i, v) in record.tables.iter().enumerate() {
        let table = table_spec(v).map_err(|e| Error::Invalid(format!("{}: table {}: {e}", record.id, i + 1)))?;
        let s = stem(out_dir, &record.id, i);
        let (md, csv) = (s.with_extension("md"), s.with_extension("csv"));
        let mut text = table.to_markdown()?;
        text.push_str(&format!("\n{}\n", record.caption));
        write_atomic(&md, &text)?;
        write_atomic(&csv, table.to_csv()?)?;
        written.extend([md, csv]);
    }
    Ok(written)
}

/// Standard base64 (RFC 4648, with `=` padding).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            s.push(if i <= c.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    s
}

/// What an evcxr Jupyter cell prints to show a rendered file inline (evcxr's `EVCXR_BEGIN_CONTENT` protocol): a
/// PNG as an image, a Markdown table as Markdown; `None` for other files (SVG, CSV).
pub fn notebook_display(path: &Path) -> Result<Option<String>> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| Error::io(p, e));
    Ok(match path.extension().and_then(|e| e.to_str()) {
        Some("png") => Some(format!("EVCXR_BEGIN_CONTENT image/png\n{}\nEVCXR_END_CONTENT", base64(&read(path)?))),
        Some("md") => Some(format!(
            "EVCXR_BEGIN_CONTENT text/markdown\n{}\nEVCXR_END_CONTENT",
            String::from_utf8_lossy(&read(path)?)
        )),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_and_notebook_display_picks_by_extension() {
        assert_eq!([base64(b"Man"), base64(b"Ma"), base64(b"M"), base64(b"")], ["TWFu", "TWE=", "TQ==", ""]);
        assert_eq!(base64(&[0xfb, 0xff, 0xbf]), "+/+/");
        let dir = tempfile::tempdir().unwrap();
        let (png, md, csv) = (dir.path().join("a.png"), dir.path().join("a.md"), dir.path().join("a.csv"));
        std::fs::write(&png, [1u8, 2, 3]).unwrap();
        std::fs::write(&md, "| a |").unwrap();
        std::fs::write(&csv, "a").unwrap();
        assert_eq!(notebook_display(&png).unwrap().unwrap(), "EVCXR_BEGIN_CONTENT image/png\nAQID\nEVCXR_END_CONTENT");
        assert!(notebook_display(&md).unwrap().unwrap().contains("text/markdown\n| a |\n"));
        assert!(notebook_display(&csv).unwrap().is_none());
        assert!(notebook_display(&dir.path().join("b.png")).unwrap_err().to_string().contains("b.png"));
    }
}
