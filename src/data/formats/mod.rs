//! One streaming reader per data format of the bundle. Each reader reads through
//! [`crate::data::text_file::LineReader`] (gzip detected by magic bytes, strict UTF-8) and reports malformed input as
//! [`crate::Error::Format`] with `file:line` and what was expected.
//!
//! Shared record types live here so that corpus building, tasks and analysis see one vocabulary.

pub mod bmes;
pub mod conll2003;
pub mod conllu;
pub mod eltec;
pub mod line_docs;
pub mod mnli;
pub mod muse;
pub mod news;
pub mod novel;
pub mod panx;
pub mod parallel;
pub mod udpos;
pub mod xnli;
pub mod zhwiki;

/// A unit of running text: a novel, a chapter, a Wikipedia article, a news test set.
/// Paragraphs are non-empty, trimmed, Unicode NFC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Stable identifier (file stem, article id, or `file#line`).
    pub id: String,
    pub paragraphs: Vec<String>,
}

/// A sentence of tokens with one tag per token (NER BIO tags, BMES tags, UPOS tags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaggedSentence {
    pub tokens: Vec<String>,
    pub tags: Vec<String>,
}

/// NLI gold label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NliLabel {
    Entailment,
    Neutral,
    Contradiction,
}

impl NliLabel {
    /// Parse the label spellings used by XNLI / MNLI (`entailment`, `neutral`, `contradiction`, `contradictory`).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "entailment" => Some(NliLabel::Entailment),
            "neutral" => Some(NliLabel::Neutral),
            "contradiction" | "contradictory" => Some(NliLabel::Contradiction),
            _ => None,
        }
    }

    /// Class index used by classifiers: entailment 0, neutral 1, contradiction 2.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A premise–hypothesis pair; `label` is `None` where the source withholds it (XNLI test in the XTREME layout).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NliExample {
    pub premise: String,
    pub hypothesis: String,
    pub label: Option<NliLabel>,
}

/// One token and its tag (`None` in untagged files), from one non-blank line; `Ok(None)` skips the line.
pub(crate) type TokenLine = Option<(String, Option<String>)>;

/// Read a file of sentences separated by blank lines, one token a line (PAN-X, CoNLL-2003, BMES, udpos).
/// `parse(line_no, line)` turns each non-blank line into a token and tag, skips it, or fails naming the line.
pub(crate) fn read_token_lines(
    path: &std::path::Path,
    mut parse: impl FnMut(usize, &str) -> crate::Result<TokenLine>,
) -> crate::Result<Vec<TaggedSentence>> {
    let mut reader = crate::data::text_file::LineReader::open(path)?;
    let mut out = Vec::new();
    let mut cur = TaggedSentence::default();
    while let Some(line) = reader.next_line()? {
        if line.trim().is_empty() {
            if !cur.tokens.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some((token, tag)) = parse(reader.line_no(), &line)? {
            cur.tokens.push(token);
            cur.tags.extend(tag);
        }
    }
    if !cur.tokens.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// The real-data mirror for tests: `$CROSSLING_DATA`, else `../shared/data` beside the crate; `None` when absent
/// (the real-data tests are then ignored, with the reason: `no_data_mirror` in build.rs).
#[cfg(test)]
pub(crate) fn test_mirror() -> Option<std::path::PathBuf> {
    let d = crate::paths::env_or_beside_crate("CROSSLING_DATA", crate::data::resolve::WORKSPACE_MIRROR);
    d.join("SOURCES.tsv").is_file().then_some(d)
}

/// Normalise a piece of running text to Unicode NFC and trim it.
pub fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.trim().nfc().collect()
}
