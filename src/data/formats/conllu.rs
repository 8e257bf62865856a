//! CoNLL-U, the file format of Universal Dependencies (<https://universaldependencies.org/format.html>).
//!
//! A sentence is a block of lines ended by a blank line (or the end of the file):
//! - comment lines starting with `#`, before the first word line; kept verbatim in [`Sentence::comments`], with
//!   `# sent_id = …` and `# text = …` also parsed into [`Sentence::sent_id`] and [`Sentence::text`];
//! - word lines of 10 tab-separated columns `ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC`, where ID is
//!   an integer (a syntactic word, numbered consecutively from 1), a range `a-b` (a multiword token spanning
//!   words a..=b, placed just before word a) or a decimal `i.k` (an empty node after word i, enhanced graphs).
//!
//! Validation: 10 columns, word ids consecutive from 1, HEAD `_` (parsed as `None`) or an integer no greater
//! than the number of words, multiword ranges `a-b` with `a < b`, `a` the next word id and `b` within the
//! sentence, empty-node ids `i.k` with `i` the last word id seen and `k` counting 1, 2, … Errors name `file:line`.
//! [`open`] streams sentences; [`read`] collects them. [`Sentence::glued`] reads the sentence's spacing from the MISC
//! column's `SpaceAfter=No` and from multiword tokens whose form is their words written together.
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A syntactic word (integer ID).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub id: usize,
    pub form: String,
    pub lemma: String,
    pub upos: String,
    pub xpos: String,
    pub feats: String,
    /// `None` where HEAD is `_`; `Some(0)` for the root.
    pub head: Option<usize>,
    pub deprel: String,
    pub deps: String,
    pub misc: String,
}

/// A multiword token line (`a-b`), covering words `first..=last`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiwordToken {
    pub first: usize,
    pub last: usize,
    pub form: String,
    pub misc: String,
}

/// An empty node (`i.k`) of the enhanced representation; `line` keeps the whole line verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmptyNode {
    pub id: (usize, usize),
    pub form: String,
    pub line: String,
}

/// One CoNLL-U sentence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sentence {
    pub sent_id: Option<String>,
    pub text: Option<String>,
    /// Every comment line, verbatim (including the leading `#`).
    pub comments: Vec<String>,
    pub tokens: Vec<Token>,
    pub multiword: Vec<MultiwordToken>,
    pub empty_nodes: Vec<EmptyNode>,
}

/// Whether a MISC column holds `SpaceAfter=No` (no space after the token in the sentence's text).
pub fn no_space_after(misc: &str) -> bool {
    misc.split('|').any(|f| f == "SpaceAfter=No")
}

impl Sentence {
    /// For each syntactic word, whether it follows the word before it with no space in the sentence's text: the
    /// surface token before it (a multiword token ending at the word before, or that word) has `SpaceAfter=No`.
    /// False for the first word. A word inside a multiword token but its first is glued when the token's form is
    /// its words' forms written together (`didn't` = `did` `n't`, Arabic `وقال` = `و` `قال`: the words are cut
    /// from the surface string, so `n't` follows `did` with no space), and spaced otherwise (`du` = `de` `le`:
    /// `le` has no surface string of its own).
    pub fn glued(&self) -> Vec<bool> {
        let span_of = |id: usize| self.multiword.iter().find(|m| (m.first..=m.last).contains(&id));
        let spells_its_words = |m: &MultiwordToken| {
            let parts: Option<String> =
                (m.first..=m.last).map(|id| self.tokens.get(id - 1).map(|t| t.form.as_str())).collect();
            parts.is_some_and(|p| p == m.form)
        };
        (1..=self.tokens.len())
            .map(|id| {
                if id == 1 {
                    return false;
                }
                if let Some(m) = span_of(id).filter(|m| m.first != id) {
                    return spells_its_words(m);
                }
                let before = match span_of(id - 1) {
                    Some(m) => &m.misc,
                    None => &self.tokens[id - 2].misc,
                };
                no_space_after(before)
            })
            .collect()
    }
}

/// A streaming CoNLL-U reader; yields one sentence at a time and stops after the first error.
pub struct Reader {
    lines: LineReader,
    path: PathBuf,
    done: bool,
}

/// Open a CoNLL-U file (gzip detected automatically) for streaming.
pub fn open(path: &Path) -> Result<Reader> {
    Ok(Reader { lines: LineReader::open(path)?, path: path.to_path_buf(), done: false })
}

/// Read a whole CoNLL-U file.
pub fn read(path: &Path) -> Result<Vec<Sentence>> {
    open(path)?.collect()
}

fn comment_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix('#')?.trim_start().strip_prefix(key)?.trim_start();
    Some(rest.strip_prefix('=')?.trim())
}

impl Reader {
    fn err(&self, line: usize, msg: impl Into<String>) -> Error {
        Error::format(&self.path, line, msg)
    }

    fn parse_usize(&self, s: &str, line: usize, what: &str) -> Result<usize> {
        s.parse::<usize>().map_err(|_| self.err(line, format!("{what} {s:?} (expected a non-negative integer)")))
    }

    /// Read the next sentence, or `None` at the end of the file.
    fn next_sentence(&mut self) -> Result<Option<Sentence>> {
        let mut s = Sentence::default();
        let mut heads: Vec<(usize, usize)> = Vec::new(); // (head, line) for the final check
        let mut ranges: Vec<(usize, usize)> = Vec::new(); // (last, line)
        let mut started = false;
        let mut first_line = 0;
        while let Some(line) = self.lines.next_line()? {
            let line_no = self.lines.line_no();
            if line.trim().is_empty() {
                if started {
                    break;
                }
                continue;
            }
            if !started {
                started = true;
                first_line = line_no;
            }
            if line.starts_with('#') {
                if !s.tokens.is_empty() || !s.multiword.is_empty() || !s.empty_nodes.is_empty() {
                    return Err(
                        self.err(line_no, "comment after word lines (expected comments before the first word line)")
                    );
                }
                if let Some(v) = comment_value(&line, "sent_id") {
                    s.sent_id = Some(v.to_string());
                } else if let Some(v) = comment_value(&line, "text") {
                    s.text = Some(v.to_string());
                }
                s.comments.push(line);
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() != 10 {
                return Err(self.err(
                    line_no,
                    format!(
                        "{} tab-separated columns (expected 10: ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC)",
                        cols.len()
                    ),
                ));
            }
            let id = cols[0];
            let next_id = s.tokens.len() + 1;
            if let Some((a, b)) = id.split_once('-') {
                let first = self.parse_usize(a, line_no, "multiword range start")?;
                let last = self.parse_usize(b, line_no, "multiword range end")?;
                if first != next_id || last <= first {
                    return Err(self.err(
                        line_no,
                        format!(
                            "multiword range {id} (expected {next_id}-N with N > {next_id}, before word {next_id})"
                        ),
                    ));
                }
                ranges.push((last, line_no));
                s.multiword.push(MultiwordToken { first, last, form: cols[1].to_string(), misc: cols[9].to_string() });
            } else if let Some((a, b)) = id.split_once('.') {
                let word = self.parse_usize(a, line_no, "empty node word id")?;
                let k = self.parse_usize(b, line_no, "empty node index")?;
                let expected_k = match s.empty_nodes.last() {
                    Some(e) if e.id.0 == word => e.id.1 + 1,
                    _ => 1,
                };
                if word != s.tokens.len() || k != expected_k {
                    return Err(
                        self.err(line_no, format!("empty node id {id} (expected {}.{expected_k})", s.tokens.len()))
                    );
                }
                s.empty_nodes.push(EmptyNode { id: (word, k), form: cols[1].to_string(), line: line.clone() });
            } else {
                let n = self.parse_usize(id, line_no, "word id")?;
                if n != next_id {
                    return Err(self.err(line_no, format!("word id {n} (expected {next_id}: ids consecutive from 1)")));
                }
                let head = match cols[6] {
                    "_" => None,
                    h => {
                        let h = self.parse_usize(h, line_no, "HEAD")?;
                        heads.push((h, line_no));
                        Some(h)
                    }
                };
                s.tokens.push(Token {
                    id: n,
                    form: cols[1].to_string(),
                    lemma: cols[2].to_string(),
                    upos: cols[3].to_string(),
                    xpos: cols[4].to_string(),
                    feats: cols[5].to_string(),
                    head,
                    deprel: cols[7].to_string(),
                    deps: cols[8].to_string(),
                    misc: cols[9].to_string(),
                });
            }
        }
        if !started {
            return Ok(None);
        }
        let n = s.tokens.len();
        if n == 0 {
            return Err(self.err(first_line, "sentence without word lines (expected at least one word line)"));
        }
        if let Some(&(h, line)) = heads.iter().find(|(h, _)| *h > n) {
            return Err(self.err(line, format!("HEAD {h} (expected 0..={n}, the sentence has {n} words)")));
        }
        if let Some(&(last, line)) = ranges.iter().find(|(last, _)| *last > n) {
            return Err(self.err(line, format!("multiword range ends at {last} (expected ≤ {n}, the number of words)")));
        }
        Ok(Some(s))
    }
}

impl Iterator for Reader {
    type Item = Result<Sentence>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_sentence() {
            Ok(Some(s)) => Some(Ok(s)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::formats::test_mirror;

    fn row(id: &str, form: &str, head: &str) -> String {
        format!("{id}\t{form}\t{form}\tX\t_\t_\t{head}\tdep\t_\t_\n")
    }

    #[test]
    fn parses_multiword_empty_nodes_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.conllu");
        let mut text = String::from("# newdoc id = d1\n# sent_id = s1\n# text = du chat\n");
        text += &row("1-2", "du", "_");
        text += &row("1", "de", "3");
        text += &row("2", "le", "3");
        text += &row("2.1", "elided", "_");
        text += &row("3", "chat", "0");
        text += "\n\n# sent_id = s2\n";
        text += &row("1", "oui", "_");
        std::fs::write(&p, text).unwrap();
        let s = read(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].sent_id.as_deref(), Some("s1"));
        assert_eq!(s[0].text.as_deref(), Some("du chat"));
        assert_eq!(s[0].comments, ["# newdoc id = d1", "# sent_id = s1", "# text = du chat"]);
        assert_eq!(s[0].tokens.len(), 3);
        assert_eq!(s[0].tokens[0].head, Some(3));
        assert_eq!(s[0].tokens[2].head, Some(0));
        assert_eq!(s[0].multiword, vec![MultiwordToken { first: 1, last: 2, form: "du".into(), misc: "_".into() }]);
        assert_eq!(s[0].empty_nodes.len(), 1);
        assert_eq!(s[0].empty_nodes[0].id, (2, 1));
        assert_eq!(s[0].empty_nodes[0].line, row("2.1", "elided", "_").trim_end());
        assert_eq!(s[1].tokens[0].head, None);
        assert_eq!(s[1].text, None);
    }

    #[test]
    fn glued_words_follow_space_after_no_of_the_surface_token_before() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.conllu");
        // One sentence from (ID, FORM, HEAD, MISC) rows.
        let sentence = |rows: &[(&str, &str, &str, &str)]| -> String {
            let lines: String = rows
                .iter()
                .map(|(id, form, head, misc)| format!("{id}\t{form}\t{form}\tX\t_\t_\t{head}\tdep\t_\t{misc}\n"))
                .collect();
            lines + "\n"
        };
        // « Où va-t-il du chat, » : `-t-il` is glued to `va`, `du` = `de` `le`, the comma glued to `chat`.
        let mut text = sentence(&[
            ("1", "Où", "2", "_"),
            ("2", "va", "0", "SpaceAfter=No"),
            ("3", "-t-il", "2", "_"),
            ("4-5", "du", "_", "_"),
            ("4", "de", "6", "_"),
            ("5", "le", "6", "_"),
            ("6", "chat", "2", "SpaceAfter=No|Translit=x"),
            ("7", ",", "2", "_"),
        ]);
        // "I didn't go": `didn't` = `did` `n't`, cut from the surface string, so `n't` is glued to `did`.
        text += &sentence(&[
            ("1", "I", "3", "_"),
            ("2-3", "didn't", "_", "_"),
            ("2", "did", "4", "_"),
            ("3", "n't", "4", "_"),
            ("4", "go", "0", "_"),
        ]);
        // A made-up "Don'tcha knowit,": a spelled token first in its sentence, glued by its own SpaceAfter=No to
        // the next token, a three-part spelled token, and a comma glued by the SpaceAfter=No of the token line.
        text += &sentence(&[
            ("1-2", "Don't", "_", "SpaceAfter=No"),
            ("1", "Do", "5", "_"),
            ("2", "n't", "5", "_"),
            ("3-4", "cha", "_", "_"),
            ("3", "ch", "5", "_"),
            ("4", "a", "5", "_"),
            ("5-7", "knowit", "_", "SpaceAfter=No"),
            ("5", "kn", "0", "_"),
            ("6", "ow", "5", "_"),
            ("7", "it", "5", "_"),
            ("8", ",", "5", "_"),
        ]);
        std::fs::write(&p, text).unwrap();
        let s = read(&p).unwrap();
        assert_eq!(s[0].glued(), [false, false, true, false, false, false, true]);
        assert_eq!(s[1].glued(), [false, false, true, false]);
        assert_eq!(s[2].glued(), [false, true, true, true, false, true, true, true]);
        assert!(!no_space_after("SpaceAfter=Nope") && no_space_after("A=1|SpaceAfter=No"));
    }

    #[test]
    fn errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.conllu");
        let cases = [
            (row("1", "a", "0") + row("3", "b", "1").as_str(), "bad.conllu:2", "expected 2"),
            (row("1", "a", "0") + "2\tb\tb\tX\n", "bad.conllu:2", "4 tab-separated columns"),
            (row("1", "a", "0") + row("2", "b", "5").as_str(), "bad.conllu:2", "HEAD 5"),
            (row("1", "a", "x"), "bad.conllu:1", "HEAD \"x\""),
            (
                row("1-3", "ab", "_") + row("1", "a", "0").as_str() + row("2", "b", "1").as_str(),
                "bad.conllu:1",
                "range ends at 3",
            ),
            (row("2-3", "ab", "_"), "bad.conllu:1", "multiword range 2-3"),
            (row("1", "a", "0") + row("1.2", "e", "_").as_str(), "bad.conllu:2", "expected 1.1"),
            (row("1", "a", "0") + "# late\n", "bad.conllu:2", "comment after"),
            ("# only a comment\n\n".to_string(), "bad.conllu:1", "without word lines"),
        ];
        for (text, at, what) in cases {
            std::fs::write(&p, text).unwrap();
            let e = read(&p).unwrap_err().to_string();
            assert!(e.contains(at) && e.contains(what), "{e}");
        }
    }

    #[test]
    fn streaming_stops_after_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.conllu");
        std::fs::write(
            &p,
            row("1", "a", "0") + "\n" + row("2", "b", "0").as_str() + "\n" + row("1", "c", "0").as_str(),
        )
        .unwrap();
        let items: Vec<_> = open(&p).unwrap().collect();
        assert_eq!(items.len(), 2);
        assert!(items[0].is_ok() && items[1].is_err());
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn real_conllu_counts() {
        let d = test_mirror().expect("the data mirror (without it this test is ignored)");
        let f = d.join("ud/UD_French-GSD/fr_gsd-ud-dev.conllu");
        if !f.is_file() {
            return;
        }
        let s = read(&f).unwrap();
        assert_eq!(s.len(), 1_476);
        assert!(s.iter().all(|s| s.sent_id.is_some() && s.text.is_some()));
        assert_eq!(s.iter().map(|s| s.multiword.len()).sum::<usize>(), 1_057);
        let ewt = read(&d.join("ud/UD_English-EWT/en_ewt-ud-dev.conllu")).unwrap();
        assert_eq!(ewt.len(), 2_001);
        assert_eq!(ewt.iter().map(|s| s.empty_nodes.len()).sum::<usize>(), 4);
        assert_eq!(read(&d.join("ud/UD_German-GSD/de_gsd-ud-dev.conllu")).unwrap().len(), 799);
    }
}
