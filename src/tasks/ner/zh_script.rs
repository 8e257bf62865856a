//! PAN-X Chinese in simplified script: an NER task option (`zh_script: "simplified"`, [`crate::tasks::ner::NerConfig`]).
//!
//! PAN-X `dev-zh.tsv` is traditional script, one character a token (WikiAnn is built from the Chinese Wikipedia as
//! written), while the Chinese pre-training text of this project's models is simplified (and jieba-segmented). A model
//! that has seen simplified characters only reads most traditional ones as unknown or rare subwords, so en–zh NER
//! scores about 2 F1 whatever the model (issue 69). Wu, Conneau et al. (2020) scored Chinese NER on their own data; the
//! option converts PAN-X zh to simplified script before it is encoded, so that the test set is in the script the model
//! was trained on. A pretrained encoder that reads traditional script (XLM-R, mBERT) needs no conversion, so it is off by
//! default.
//!
//! **Conversion.** OpenCC's traditional → simplified tables (`t2s`: TSPhrases, then TSCharacters; Apache-2.0), through
//! the pure-Rust `ferrous-opencc` crate. Every OpenCC `t2s` entry maps a string to one of the same length in characters,
//! so a sentence is converted whole (its tokens joined, so that the phrase table sees the context of an ambiguous
//! character such as 乾 / 干) and split back at the tokens' character counts: the tokens and their tags stay aligned
//! one to one. A sentence whose conversion would change its length in characters (none does with the shipped tables) is
//! converted token by token instead, which keeps the tokens and tags whatever a token becomes. Tags are never touched.
use std::sync::OnceLock;

use ferrous_opencc::config::BuiltinConfig;
use ferrous_opencc::OpenCC;
use serde::{Deserialize, Serialize};

use crate::data::formats::TaggedSentence;
use crate::error::{Error, Result};

/// The script the Chinese evaluation sentences are read in (absent: as the data file gives them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZhScript {
    /// Converted to simplified characters with OpenCC's `t2s` tables.
    Simplified,
}

impl ZhScript {
    /// The name [`std::str::FromStr`] reads and the JSON holds.
    pub fn name(self) -> &'static str {
        match self {
            ZhScript::Simplified => "simplified",
        }
    }
}

impl std::str::FromStr for ZhScript {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "simplified" | "hans" | "zh-hans" => Ok(ZhScript::Simplified),
            _ => Err(Error::Invalid(format!(
                "unknown Chinese script '{s}': expected simplified (leave the option out to read the file as it is)"
            ))),
        }
    }
}

/// What converting a set of sentences changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Converted {
    pub sentences: usize,
    pub tokens: usize,
    /// Tokens whose text changed.
    pub tokens_changed: usize,
    pub characters: usize,
    /// Characters that changed.
    pub characters_changed: usize,
    /// Sentences converted token by token (their whole conversion changed their length; see the module docs).
    pub token_by_token: usize,
}

impl Converted {
    /// A line for the run's notes.
    pub fn note(&self, lang: &str) -> String {
        format!(
            "PAN-X dev {lang} converted to simplified script (OpenCC t2s tables, crate ferrous-opencc): {} of {} \
             characters changed, in {} of {} tokens of {} sentences; tags unchanged",
            self.characters_changed, self.characters, self.tokens_changed, self.tokens, self.sentences
        )
    }
}

/// OpenCC's traditional → simplified converter, built once.
fn t2s() -> Result<&'static OpenCC> {
    static CONVERTER: OnceLock<std::result::Result<OpenCC, String>> = OnceLock::new();
    CONVERTER
        .get_or_init(|| OpenCC::from_config(BuiltinConfig::T2s).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Invalid(format!("OpenCC t2s converter: {e}")))
}

/// Converts the tokens of `sentences` to simplified script in place (tags untouched; see the module docs).
pub fn to_simplified(sentences: &mut [TaggedSentence]) -> Result<Converted> {
    let cc = t2s()?;
    let mut out = Converted { sentences: sentences.len(), ..Converted::default() };
    for s in sentences.iter_mut() {
        let joined: String = s.tokens.concat();
        let whole: Vec<char> = cc.convert(&joined).chars().collect();
        let converted: Vec<String> = if whole.len() == joined.chars().count() {
            let mut at = 0;
            s.tokens
                .iter()
                .map(|t| {
                    let n = t.chars().count();
                    at += n;
                    whole[at - n..at].iter().collect()
                })
                .collect()
        } else {
            out.token_by_token += 1;
            s.tokens.iter().map(|t| cc.convert(t)).collect()
        };
        for (old, new) in s.tokens.iter_mut().zip(converted) {
            out.tokens += 1;
            out.characters += old.chars().count();
            if *old != new {
                out.tokens_changed += 1;
                out.characters_changed += old.chars().zip(new.chars()).filter(|(a, b)| a != b).count()
                    + old.chars().count().abs_diff(new.chars().count());
                *old = new;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(rows: &[(&str, &str)]) -> TaggedSentence {
        TaggedSentence {
            tokens: rows.iter().map(|r| r.0.to_string()).collect(),
            tags: rows.iter().map(|r| r.1.to_string()).collect(),
        }
    }

    /// Sentences of PAN-X `dev-zh.tsv` (one traditional character a token): the characters become simplified, one
    /// token each, and the tags are those of the file.
    #[test]
    fn panx_zh_tokens_become_simplified_with_their_tags() {
        let mut rows = vec![
            sentence(&[("前", "B-LOC"), ("鎮", "I-LOC"), ("區", "I-LOC")]),
            sentence(&[("#", "O"), ("埃", "B-LOC"), ("居", "I-LOC"), ("布", "I-LOC"), ("朗", "I-LOC")]),
            sentence(&[
                ("廣", "O"),
                ("達", "O"),
                ("店", "O"),
                ("#", "O"),
                ("桃", "O"),
                ("園", "O"),
                ("縣", "O"),
                ("龜", "O"),
                ("山", "O"),
                ("鄉", "O"),
            ]),
            sentence(&[("New", "B-ORG"), ("York", "I-ORG"), ("時", "I-ORG"), ("報", "I-ORG")]),
        ];
        let tags: Vec<Vec<String>> = rows.iter().map(|s| s.tags.clone()).collect();
        let c = to_simplified(&mut rows).unwrap();
        assert_eq!(rows[0].tokens, ["前", "镇", "区"]);
        assert_eq!(rows[1].tokens, ["#", "埃", "居", "布", "朗"]);
        assert_eq!(rows[2].tokens, ["广", "达", "店", "#", "桃", "园", "县", "龟", "山", "乡"]);
        // Latin tokens of several characters keep their place and text.
        assert_eq!(rows[3].tokens, ["New", "York", "时", "报"]);
        assert_eq!(rows.iter().map(|s| s.tags.clone()).collect::<Vec<_>>(), tags);
        assert_eq!((c.sentences, c.tokens, c.tokens_changed, c.token_by_token), (4, 22, 10, 0));
        assert_eq!(c.characters, 3 + 5 + 10 + 3 + 4 + 2);
        assert_eq!(c.characters_changed, 10);
        assert!(c.note("zh").contains("10 of 27 characters changed"), "{}", c.note("zh"));
        // Simplified text stays as it is.
        let mut again = rows.clone();
        assert_eq!(to_simplified(&mut again).unwrap().tokens_changed, 0);
        assert_eq!(again[2].tokens, rows[2].tokens);
        // The phrase table sees the sentence: 乾 is 干 in 乾淨 (clean) but stays in 乾隆 (an emperor's name).
        let mut ctx = vec![sentence(&[("乾", "O"), ("淨", "O"), ("乾", "B-PER"), ("隆", "I-PER")])];
        to_simplified(&mut ctx).unwrap();
        assert_eq!(ctx[0].tokens, ["干", "净", "乾", "隆"]);
    }

    #[test]
    fn the_option_reads_its_names() {
        assert_eq!("simplified".parse::<ZhScript>().unwrap(), ZhScript::Simplified);
        assert_eq!(ZhScript::Simplified.name(), "simplified");
        assert!("traditional".parse::<ZhScript>().unwrap_err().to_string().contains("expected simplified"));
        assert_eq!(serde_json::to_value(ZhScript::Simplified).unwrap(), "simplified");
    }
}
