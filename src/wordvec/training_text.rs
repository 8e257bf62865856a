//! The text a static model trains on: an MLM run's own training corpora (`<run>/corpora/LANG.train.txt`, one
//! sentence per line, Chinese already segmented into words by the corpus builder), so that the static baselines
//! see exactly the sentences the MLM saw (Liu et al. 2020, §3: "the same data").
//!
//! Two units:
//! - [`Unit::Subword`] — each sentence is encoded with the run's tokenizer exactly as the MLM's token stream is
//!   ([`crate::text::stream::encode_corpus`]: the same ids, without the `[SEP]` separators), and each id becomes its
//!   token string; a word's vector is then the mean of its subwords' vectors ([`subword_mean`]).
//! - [`Unit::Word`] — whitespace-separated words of the same lines (fastText's unit; the Emerging Figure 4a baseline).
//!
//! Languages are concatenated in the order given (Liu's joint training of one embedding space over all languages).
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::corpus::{Corpus, CorpusBuilder};
use super::vectors::WordVectors;
use crate::error::{Error, Result};
use crate::text::tokenize::CrossTokenizer;

/// What a token of the static model is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// The MLM's subword tokens.
    Subword,
    /// Whitespace-separated words.
    Word,
}

impl std::str::FromStr for Unit {
    type Err = Error;
    fn from_str(s: &str) -> Result<Unit> {
        match s {
            "subword" => Ok(Unit::Subword),
            "word" => Ok(Unit::Word),
            other => Err(Error::Invalid(format!("unknown unit '{other}': expected subword or word"))),
        }
    }
}

/// The training file of `lang` in run folder `run_dir`.
pub fn train_file(run_dir: &Path, lang: &str) -> PathBuf {
    run_dir.join("corpora").join(format!("{lang}.train.txt"))
}

/// Reads the training corpora of `langs` from the run folder `run_dir` (at most `max_sentences` non-blank lines
/// per language when given) into a [`Corpus`] with `min_count`. Errors name the file and line.
pub fn read_run_corpus(
    run_dir: &Path,
    langs: &[String],
    unit: Unit,
    max_sentences: Option<usize>,
    min_count: u64,
) -> Result<Corpus> {
    let tok = match unit {
        Unit::Subword => Some(CrossTokenizer::load(&run_dir.join("tokenizer"))?),
        Unit::Word => None,
    };
    let mut b = CorpusBuilder::default();
    for lang in langs {
        let path = train_file(run_dir, lang);
        let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut taken = 0usize;
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            if max_sentences.is_some_and(|m| taken >= m) {
                break;
            }
            let line = line.map_err(|e| Error::format(&path, i + 1, format!("unreadable line: {e}")))?;
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            taken += 1;
            match &tok {
                Some(t) => {
                    let ids = t.encode(text, lang).map_err(|e| Error::format(&path, i + 1, e.to_string()))?;
                    let tokens = ids.iter().map(|&id| t.id_to_token(id).unwrap_or_else(|| format!("[{id}]")));
                    b.push_sentence(tokens);
                }
                None => b.push_sentence(text.split_whitespace()),
            }
        }
        if taken == 0 {
            return Err(Error::format_file(&path, format!("no sentences of '{lang}' (expected one per line)")));
        }
    }
    b.finish(min_count)
}

/// The vector of `word` in `lang` as the mean of its subword tokens' vectors (`None` when the tokenizer gives no
/// token or one of its tokens has no vector, e.g. below the static model's min-count).
pub fn subword_mean(vectors: &WordVectors, tok: &CrossTokenizer, word: &str, lang: &str) -> Result<Option<Vec<f32>>> {
    let ids = tok.encode(word, lang)?;
    if ids.is_empty() {
        return Ok(None);
    }
    let mut sum = vec![0f32; vectors.dim()];
    for id in &ids {
        let Some(v) = tok.id_to_token(*id).and_then(|t| vectors.get(&t)) else { return Ok(None) };
        sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
    }
    let n = ids.len() as f32;
    Ok(Some(sum.into_iter().map(|s| s / n).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_unit_reads_each_language_and_names_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("corpora")).unwrap();
        std::fs::write(train_file(dir.path(), "en"), "the cat\n\nthe dog\n").unwrap();
        std::fs::write(train_file(dir.path(), "zh"), "猫 在\n狗 在\n").unwrap();
        let langs = vec!["en".to_string(), "zh".to_string()];
        let c = read_run_corpus(dir.path(), &langs, Unit::Word, None, 1).unwrap();
        assert_eq!(c.n_sentences(), 4);
        assert_eq!(c.vocab.counts()[..2], [2, 2]);
        let one = read_run_corpus(dir.path(), &langs, Unit::Word, Some(1), 1).unwrap();
        assert_eq!(one.n_sentences(), 2);
        let e = read_run_corpus(dir.path(), &["de".to_string()], Unit::Word, None, 1).unwrap_err().to_string();
        assert!(e.contains("de.train.txt"), "{e}");
        let e = read_run_corpus(dir.path(), &langs, Unit::Subword, None, 1).unwrap_err().to_string();
        assert!(e.contains("tokenizer"), "{e}");
        assert_eq!("word".parse::<Unit>().unwrap(), Unit::Word);
        assert!("char".parse::<Unit>().is_err());
    }
}
