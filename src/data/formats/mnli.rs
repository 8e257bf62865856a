//! The English NLI training subset drawn from MultiNLI (Williams, Nangia & Bowman 2018, "A Broad-Coverage
//! Challenge Corpus for Sentence Understanding through Inference", NAACL).
//!
//! Format: CSV (RFC 4180) with the header `label,text,assertion` (label, premise, hypothesis). Fields may be
//! quoted; quoted fields may contain commas, doubled quotes (`""`) and line breaks. A quote inside an unquoted
//! field, text after a closing quote, an unterminated quoted field, a record without exactly three fields or
//! an unknown label is an error naming `file:line` (the line where the record starts). Text is trimmed and
//! normalised to NFC.
//!
//! The four mirrored files overlap; [`read_dedup`] merges them by (premise, hypothesis), keeping the first
//! occurrence and dropping every pair whose copies disagree on the label.
use super::{nfc, NliExample, NliLabel};
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The result of merging several MNLI files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MnliLoad {
    /// Distinct (premise, hypothesis) pairs with a consistent label, in order of first occurrence.
    pub examples: Vec<NliExample>,
    /// Rows dropped because an earlier row had the same (premise, hypothesis) pair (conflicting copies included).
    pub duplicates: usize,
    /// Distinct pairs dropped because their copies carry different labels.
    pub conflicts: usize,
}

/// Read one CSV record (possibly spanning several lines). Returns the 1-based line where it starts and its
/// fields, or `None` at the end of the file.
fn next_record(reader: &mut LineReader) -> Result<Option<(usize, Vec<String>)>> {
    let Some(mut line) = reader.next_line()? else { return Ok(None) };
    let start = reader.line_no();
    let path = reader.path().to_path_buf();
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut at_field_start = true;
    let mut after_quote = false;
    loop {
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_quotes {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        field.push('"');
                    } else {
                        in_quotes = false;
                        after_quote = true;
                    }
                } else {
                    field.push(c);
                }
                continue;
            }
            match c {
                ',' => {
                    fields.push(std::mem::take(&mut field));
                    at_field_start = true;
                    after_quote = false;
                }
                _ if after_quote => {
                    return Err(Error::format(
                        &path,
                        reader.line_no(),
                        format!("{c:?} after a closing quote (expected `,` or the end of the record)"),
                    ))
                }
                '"' if at_field_start => {
                    in_quotes = true;
                    at_field_start = false;
                }
                '"' => {
                    return Err(Error::format(
                        &path,
                        reader.line_no(),
                        "quote inside an unquoted field (expected quotes only around a whole field, doubled inside it)",
                    ))
                }
                _ => {
                    field.push(c);
                    at_field_start = false;
                }
            }
        }
        if !in_quotes {
            fields.push(field);
            return Ok(Some((start, fields)));
        }
        match reader.next_line()? {
            Some(l) => {
                field.push('\n');
                line = l;
            }
            None => {
                return Err(Error::format(
                    &path,
                    start,
                    "quoted field runs to the end of the file (expected a closing `\"`)",
                ))
            }
        }
    }
}

/// Read one MNLI CSV file; every row must carry a known label.
pub fn read_file(path: &Path) -> Result<Vec<NliExample>> {
    let mut reader = LineReader::open(path)?;
    match next_record(&mut reader)? {
        Some((_, h)) if h.iter().map(|f| f.trim()).eq(["label", "text", "assertion"]) => {}
        Some((line, h)) => {
            return Err(Error::format(
                path,
                line,
                format!("header {:?} (expected `label,text,assertion`)", h.join(",")),
            ))
        }
        None => return Err(Error::format_file(path, "empty file (expected the header `label,text,assertion`)")),
    }
    let mut out = Vec::new();
    while let Some((line, fields)) = next_record(&mut reader)? {
        if fields.len() == 1 && fields[0].trim().is_empty() {
            continue; // blank line
        }
        let [label, premise, hypothesis] = fields.as_slice() else {
            return Err(Error::format(
                path,
                line,
                format!("{} fields (expected 3: label,text,assertion)", fields.len()),
            ));
        };
        let label = NliLabel::parse(label).ok_or_else(|| {
            Error::format(
                path,
                line,
                format!("unknown label {label:?} (expected entailment, neutral or contradiction)"),
            )
        })?;
        out.push(NliExample { premise: nfc(premise), hypothesis: nfc(hypothesis), label: Some(label) });
    }
    Ok(out)
}

/// Read several MNLI files and de-duplicate by (premise, hypothesis): the first occurrence is kept; pairs whose
/// copies disagree on the label are counted in `conflicts` and dropped altogether.
pub fn read_dedup(paths: &[PathBuf]) -> Result<MnliLoad> {
    let mut kept: Vec<(NliExample, bool)> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut duplicates = 0;
    for path in paths {
        for ex in read_file(path)? {
            let key = (ex.premise.clone(), ex.hypothesis.clone());
            match index.get(&key) {
                Some(&i) => {
                    duplicates += 1;
                    if kept[i].0.label != ex.label {
                        kept[i].1 = true;
                    }
                }
                None => {
                    index.insert(key, kept.len());
                    kept.push((ex, false));
                }
            }
        }
    }
    let conflicts = kept.iter().filter(|(_, c)| *c).count();
    let examples = kept.into_iter().filter(|(_, c)| !c).map(|(e, _)| e).collect();
    Ok(MnliLoad { examples, duplicates, conflicts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    #[test]
    fn parses_quoted_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        std::fs::write(
            &p,
            "label,text,assertion\r\nentailment,\"I wrote, \"\"How?\"\"\",plain\nneutral,\"two\nlines\",\"\"\n\ncontradiction,a,b",
        )
        .unwrap();
        let ex = read_file(&p).unwrap();
        assert_eq!(ex.len(), 3);
        assert_eq!(ex[0].premise, "I wrote, \"How?\"");
        assert_eq!(ex[0].hypothesis, "plain");
        assert_eq!(ex[1].premise, "two\nlines");
        assert_eq!(ex[1].hypothesis, "");
        assert_eq!(ex[2].label, Some(NliLabel::Contradiction));
    }

    #[test]
    fn malformed_records_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.csv");
        let cases = [
            ("label,text,assertion\nneutral,a\n", "b.csv:2", "2 fields"),
            ("label,text,assertion\nneutral,a,b\nmaybe,a,b\n", "b.csv:3", "unknown label"),
            ("label,text,assertion\nneutral,\"a\nb,c\n", "b.csv:2", "closing"),
            ("label,text,assertion\nneutral,a\"b,c\n", "b.csv:2", "unquoted"),
            ("label,text,assertion\nneutral,\"a\"b,c\n", "b.csv:2", "after a closing quote"),
            ("premise,hypothesis,label\n", "b.csv:1", "header"),
        ];
        for (text, at, what) in cases {
            std::fs::write(&p, text).unwrap();
            let e = read_file(&p).unwrap_err().to_string();
            assert!(e.contains(at) && e.contains(what), "{e}");
        }
    }

    #[test]
    fn dedup_counts_duplicates_and_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.csv");
        std::fs::write(&a, "label,text,assertion\nneutral,p1,h1\nentailment,p2,h2\nneutral,p3,h3\n").unwrap();
        std::fs::write(&b, "label,text,assertion\nneutral,p1,h1\ncontradiction,p2,h2\nneutral,p4,h4\n").unwrap();
        let load = read_dedup(&[a, b]).unwrap();
        assert_eq!(load.duplicates, 2);
        assert_eq!(load.conflicts, 1);
        let prem: Vec<&str> = load.examples.iter().map(|e| e.premise.as_str()).collect();
        assert_eq!(prem, ["p1", "p3", "p4"]);
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_mnli_dedup() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let dir = d.join("mnli");
        if !dir.is_dir() {
            return;
        }
        let paths: Vec<PathBuf> = ["dev1.02f7852", "dev1.6869b8a", "dev2.02f7852", "dev2.6869b8a"]
            .iter()
            .map(|s| dir.join(format!("{s}.csv")))
            .collect();
        let load = read_dedup(&paths).unwrap();
        // 82,470 rows in all; 78,356 distinct (premise, hypothesis) pairs, 2 of them with conflicting labels
        // (so 78,358 distinct labelled triples), leaving 78,354 usable pairs.
        assert_eq!(load.duplicates, 82_470 - 78_356);
        assert_eq!(load.conflicts, 2);
        assert_eq!(load.examples.len(), 78_354);
    }
}
