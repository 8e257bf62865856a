//! Result tables (Wu, Conneau et al. 2020 Table 1; Liu et al. 2020 Tables 1–4) as Markdown and CSV.
//!
//! Markdown: `### title`, a blank line, a GitHub pipe table (columns whose cells are all numbers are
//! right-aligned; `|` in text is escaped), then one `- note` line per note. Numbers are printed with their
//! cell's format string (see [`super::format`]).
//! CSV (RFC 4180): the header row then the data rows, CRLF line ends, a field quoted when it contains a comma,
//! a double quote, CR or LF, with inner quotes doubled; numbers in full precision (Rust's shortest round-trip
//! form) so the CSV can be re-analysed; empty cells are empty fields. Title and notes are not part of the CSV.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::format::NumberFormat;
use crate::error::{Error, Result};

/// One table cell. JSON: `{"value": 0.57, "format": "{:.2}"}`, `"text"`, or `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    Number {
        value: f64,
        #[serde(default = "default_format")]
        format: String,
    },
    Text(String),
    Empty,
}

fn default_format() -> String {
    "{:.2}".to_string()
}

impl Cell {
    /// A number printed with `format` (e.g. `"{:.1}"`) in Markdown.
    pub fn num(value: f64, format: &str) -> Cell {
        Cell::Number { value, format: format.to_string() }
    }

    /// A text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    fn markdown(&self) -> Result<String> {
        Ok(match self {
            Cell::Number { value, format } => NumberFormat::parse(format)?.format(*value),
            Cell::Text(s) => s.replace('|', "\\|").replace(['\n', '\r'], " "),
            Cell::Empty => String::new(),
        })
    }

    fn csv(&self) -> String {
        match self {
            Cell::Number { value, .. } => format!("{value}"),
            Cell::Text(s) => csv_field(s),
            Cell::Empty => String::new(),
        }
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A titled table with column headers, rows of cells and footnotes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Table {
    /// Checks that every row has one cell per column and every format string parses.
    pub fn validate(&self) -> Result<()> {
        for (i, row) in self.rows.iter().enumerate() {
            if row.len() != self.columns.len() {
                return Err(Error::Invalid(format!(
                    "table '{}': row {i} has {} cells but there are {} columns",
                    self.title,
                    row.len(),
                    self.columns.len()
                )));
            }
            for cell in row {
                if let Cell::Number { format, .. } = cell {
                    NumberFormat::parse(format).map_err(|e| Error::Invalid(format!("table '{}': {e}", self.title)))?;
                }
            }
        }
        Ok(())
    }

    /// The table as Markdown (see the module documentation).
    pub fn to_markdown(&self) -> Result<String> {
        self.validate()?;
        let numeric: Vec<bool> = (0..self.columns.len())
            .map(|c| {
                let mut cells = self.rows.iter().map(|r| &r[c]).filter(|x| !matches!(x, Cell::Empty)).peekable();
                cells.peek().is_some() && cells.all(|x| matches!(x, Cell::Number { .. }))
            })
            .collect();
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = format!("### {}\n\n", self.title);
        out += &line(self.columns.iter().map(|c| Cell::text(c.as_str()).markdown()).collect::<Result<_>>()?);
        out += &line(numeric.iter().map(|&n| if n { "---:" } else { "---" }.to_string()).collect());
        for row in &self.rows {
            out += &line(row.iter().map(Cell::markdown).collect::<Result<_>>()?);
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out += &format!("- {n}\n");
            }
        }
        Ok(out)
    }

    /// The table as RFC 4180 CSV (see the module documentation).
    pub fn to_csv(&self) -> Result<String> {
        self.validate()?;
        let mut out = self.columns.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(",") + "\r\n";
        for row in &self.rows {
            out += &(row.iter().map(Cell::csv).collect::<Vec<_>>().join(",") + "\r\n");
        }
        Ok(out)
    }

    /// Writes `out_stem.md` and `out_stem.csv` (each with [`crate::atomic_file::write_atomic`], which creates the
    /// folder) and returns both.
    pub fn write(&self, out_stem: &Path) -> Result<Vec<PathBuf>> {
        let mut written = vec![];
        for (ext, body) in [("md", self.to_markdown()?), ("csv", self.to_csv()?)] {
            let mut path = out_stem.as_os_str().to_owned();
            path.push(format!(".{ext}"));
            let path = PathBuf::from(path);
            crate::atomic_file::write_atomic(&path, body)?;
            written.push(path);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table {
            title: "XNLI accuracy".into(),
            columns: vec!["model".into(), "en".into(), "fr, de".into()],
            rows: vec![
                vec![Cell::text("mBERT | base"), Cell::num(0.8123, "{:.1%}"), Cell::num(71.25, "{:.1}")],
                vec![Cell::text("say \"hi\"\nthere"), Cell::Empty, Cell::num(0.5, "{:.2}")],
            ],
            notes: vec!["Paper values in parentheses.".into()],
        }
    }

    #[test]
    fn markdown_golden() {
        let expected = "### XNLI accuracy\n\n\
                        | model | en | fr, de |\n\
                        | --- | ---: | ---: |\n\
                        | mBERT \\| base | 81.2% | 71.2 |\n\
                        | say \"hi\" there |  | 0.50 |\n\
                        \n- Paper values in parentheses.\n";
        assert_eq!(sample().to_markdown().unwrap(), expected);
    }

    #[test]
    fn csv_golden_rfc4180() {
        let expected = "model,en,\"fr, de\"\r\n\
                        mBERT | base,0.8123,71.25\r\n\
                        \"say \"\"hi\"\"\nthere\",,0.5\r\n";
        assert_eq!(sample().to_csv().unwrap(), expected);
    }

    #[test]
    fn ragged_rows_and_bad_formats_are_rejected() {
        let mut t = sample();
        t.rows[1].pop();
        let e = t.to_csv().unwrap_err().to_string();
        assert!(e.contains("row 1 has 2 cells but there are 3 columns"), "{e}");
        let mut t = sample();
        t.rows[0][1] = Cell::num(1.0, "{:q}");
        assert!(t.to_markdown().is_err());
    }

    #[test]
    fn serde_round_trip_and_cell_json_forms() {
        let t = sample();
        let back: Table = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        let cells: Vec<Cell> = serde_json::from_str(r#"[{"value": 1.5}, "x", null]"#).unwrap();
        assert_eq!(cells, vec![Cell::num(1.5, "{:.2}"), Cell::text("x"), Cell::Empty]);
    }

    #[test]
    fn write_creates_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let paths = sample().write(&dir.path().join("sub/table1")).unwrap();
        assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), sample().to_markdown().unwrap());
        assert_eq!(std::fs::read_to_string(&paths[1]).unwrap(), sample().to_csv().unwrap());
        assert!(paths[1].ends_with("sub/table1.csv"));
    }
}
