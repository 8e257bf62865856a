//! Rendering a [`FigureRecord`]: each chart spec to `ID.png` + `ID.svg` (`ID-2.*`, … for further charts) and each
//! table to `ID.md` + `ID.csv` (`ID-2.*`, …). Used after a run and by `crossling plot ID` from the JSON alone.
use std::path::{Path, PathBuf};

use super::record::FigureRecord;
use crate::error::{Error, Result};
use crate::plot::{ChartSpec, Table};

fn stem(out_dir: &Path, id: &str, i: usize) -> PathBuf {
    if i == 0 {
        out_dir.join(id)
    } else {
        out_dir.join(format!("{id}-{}", i + 1))
    }
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
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
        write_atomic(&csv, &table.to_csv()?)?;
        written.extend([md, csv]);
    }
    Ok(written)
}
