//! Extra anchors (Wu, Conneau et al. 2020, §4 and Table 1 "Extra anchors"): the training text of both languages is
//! code-switched with a bilingual dictionary before tokenization. Each dictionary word is replaced by a uniformly
//! chosen translation with probability `p` (0.3), and at most `max_fraction` (15 %) of the words of each group of
//! `group` sentences (a stand-in for a training batch) are changed.
//!
//! The dictionary is a MUSE pair (`muse` dataset, e.g. `en-fr`), restricted to its **train** split (unique source
//! words ranked [0, 5000)), so the [5000, 6500) test split used by word-retrieval figures never leaks into
//! pre-training. Sentences of the pair's source language use source→target translations; sentences of the
//! target language use the reversed pairs.
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::data::text_file::LineReader;
use crate::error::{Error, Result};
use crate::text::codeswitch::{CodeSwitcher, SplitMix64, SwitchStats};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// How to code-switch the training text of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeSwitchConfig {
    /// MUSE pair `SRC-TGT`, e.g. `en-fr` (file `dict/muse/en-fr.dict` of the `muse` dataset).
    pub dictionary: String,
    #[serde(default = "default_p")]
    pub p: f64,
    #[serde(default = "default_max_fraction")]
    pub max_fraction: f64,
    /// Sentences per group over which the `max_fraction` cap holds.
    #[serde(default = "default_group")]
    pub group: usize,
}

fn default_p() -> f64 {
    0.3
}
fn default_max_fraction() -> f64 {
    0.15
}
fn default_group() -> usize {
    64
}

impl CodeSwitchConfig {
    /// The two languages of the dictionary pair.
    pub fn languages(&self) -> Result<(String, String)> {
        match self.dictionary.split_once('-') {
            Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
            _ => Err(Error::Invalid(format!(
                "codeswitch.dictionary '{}': expected a MUSE pair like en-fr",
                self.dictionary
            ))),
        }
    }

    fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.p) || !(0.0..=1.0).contains(&self.max_fraction) || self.group == 0 {
            return Err(Error::Invalid(format!(
                "codeswitch: p ({}) and max_fraction ({}) must be in [0, 1] and group ({}) positive",
                self.p, self.max_fraction, self.group
            )));
        }
        Ok(())
    }
}

/// The MUSE train-split pairs of `pair` (`en-fr` → (english, french) pairs).
pub fn muse_train_pairs(catalog: &Catalog, roots: &DataRoots, pair: &str) -> Result<Vec<(String, String)>> {
    let (split, _) = crate::text::evalsets::muse_split(catalog, roots, pair)?;
    Ok(split.train.into_iter().map(|p| (p.src, p.tgt)).collect())
}

/// Code-switch the corpus file `path` in place (atomically), translating with `pairs` (this language → other).
pub fn switch_file(path: &Path, pairs: &[(String, String)], cfg: &CodeSwitchConfig, seed: u64) -> Result<SwitchStats> {
    cfg.validate()?;
    let switcher = CodeSwitcher::new(pairs, false);
    let mut rng = SplitMix64::new(seed);
    let tmp = path.with_extension("switch.tmp");
    let result = (|| -> Result<SwitchStats> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?);
        let mut total = SwitchStats::default();
        let mut group = Vec::with_capacity(cfg.group);
        let mut reader = LineReader::open(path)?;
        loop {
            let line = reader.next_line()?;
            let end = line.is_none();
            if let Some(line) = line {
                group.push(line);
            }
            if group.len() == cfg.group || (end && !group.is_empty()) {
                let (switched, stats) = switcher.switch_batch(&group, cfg.p, cfg.max_fraction, &mut rng);
                for s in &switched {
                    writeln!(out, "{s}").map_err(|e| Error::io(&tmp, e))?;
                }
                total.add(&stats);
                group.clear();
            }
            if end {
                break;
            }
        }
        out.flush().map_err(|e| Error::io(&tmp, e))?;
        Ok(total)
    })();
    match result {
        Ok(stats) => {
            std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
            Ok(stats)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_only_dictionary_words_within_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("en.train.txt");
        let lines: Vec<String> = (0..200).map(|i| format!("the cat sat on mat number {i}")).collect();
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let pairs = vec![("cat".to_string(), "chat".to_string()), ("mat".to_string(), "tapis".to_string())];
        let cfg = CodeSwitchConfig { dictionary: "en-fr".into(), p: 0.3, max_fraction: 0.15, group: 50 };
        let stats = switch_file(&p, &pairs, &cfg, 1).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 200);
        assert_eq!(stats.sentences, 200);
        assert!(stats.switched > 0 && stats.switched <= 4 * (50 * 7 * 15 / 100), "{stats:?}");
        assert!(text.contains("chat") || text.contains("tapis"));
        assert!(text.lines().all(|l| l.starts_with("the ") && l.contains(" sat on ")));
        assert!(!p.with_extension("switch.tmp").exists());
    }

    #[test]
    fn bad_settings_are_errors() {
        let cfg = CodeSwitchConfig { dictionary: "enfr".into(), p: 0.3, max_fraction: 0.15, group: 64 };
        assert!(cfg.languages().unwrap_err().to_string().contains("expected a MUSE pair"));
        let cfg = CodeSwitchConfig { p: 1.5, ..cfg };
        assert!(cfg.validate().is_err());
    }
}
