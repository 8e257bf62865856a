//! Per-language text corpora for pre-training, built from dataset manifests.
//!
//! For one language the builder streams the documents of the chosen running-text datasets, splits paragraphs into
//! sentences, optionally segments Chinese into words, drops exact duplicate sentences (the WMT English test sets
//! repeat each other), and writes one sentence per line to `<lang>.train.txt` and `<lang>.valid.txt` with a
//! `<lang>.corpus.json` record (spec, counts, domains, sha256 of every input file).
//!
//! * **Split**: by blocks of [`SPLIT_BLOCK_PARAGRAPHS`] consecutive paragraphs of a document: a block goes to
//!   validation when `h(seed, unit) mod 1000 < valid_per_mille` (`h` = FNV-1a 64), where the unit of the first
//!   block is the document id and that of block `b > 0` is `"{id}#{b}"`. A short document (one block) therefore
//!   never straddles train and validation, and a corpus of a few dozen novels still holds out text (a whole-novel
//!   split at 2% leaves a 83-novel corpus with no validation text one time in five). Deterministic and
//!   independent of caps. `documents` counts the documents that contributed to a side.
//! * **Order and caps**: input files are visited in an order shuffled by `h(seed, path)`; the train side stops at
//!   `max_sentences` sentences or `max_bytes` bytes (UTF-8, with newlines), and the validation side at the same caps
//!   scaled by `valid_per_mille / 1000`. The Liu study's 200k / 1000k sentences per language are such caps.
//! * **Domain**: each manifest's `domain` (novels, wiki, web, news) is recorded, so a domain ablation picks
//!   datasets by domain.
//! * **Halves** (pseudo-languages, [`crate::text::pseudo`]): with `half`, the builder reads the files of `half.lang`
//!   (sentence splitting and segmentation follow that language) and keeps only the documents `d` with
//!   top bit of `h(HALF_SALT, id(d))` = `half.half` ([`document_half`]), whatever the seed; the output files are still
//!   named after `lang`. A half with a `rewrite` (synthetic languages) writes every kept sentence rewritten
//!   ([`crate::text::rewrite`]); the de-duplication still compares the source's sentences.
//! * **Atomic**: everything is written to `*.tmp` files and renamed at the end; an error leaves no output.
use crate::data::documents::{file_documents, file_lang, is_running_text, paragraphs_are_sentences};
use crate::data::manifest::Catalog;
use crate::data::resolve::DataRoots;
use crate::error::{Error, Result};
use crate::text::segment::segment_zh;
use crate::text::sentences::split_sentences;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Paragraphs per split unit (see the module docs).
pub const SPLIT_BLOCK_PARAGRAPHS: usize = 50;

/// What goes into one language's corpus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusSpec {
    /// Language code (`en`, `fr`, `de`, `ru`, `zh`).
    pub lang: String,
    /// Dataset ids (running-text manifests); only their files in `lang` are read.
    pub datasets: Vec<String>,
    /// Cap on training sentences (validation gets `valid_per_mille / 1000` of it).
    #[serde(default)]
    pub max_sentences: Option<usize>,
    /// Cap on training bytes.
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// Documents held out for validation, per mille.
    #[serde(default = "default_valid_per_mille")]
    pub valid_per_mille: u32,
    /// Seed of the split and of the file order.
    #[serde(default)]
    pub seed: u64,
    /// Segment Chinese sentences into space-separated words (jieba).
    #[serde(default = "default_true")]
    pub segment_zh: bool,
    /// Drop exact duplicate sentences.
    #[serde(default = "default_true")]
    pub dedup: bool,
    /// Drop sentences with fewer characters than this.
    #[serde(default = "default_min_chars")]
    pub min_chars: usize,
    /// Read another language's files and keep one half of its documents (pseudo-languages and their source language:
    /// [`crate::text::pseudo`]). Omitted from the JSON when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half: Option<DocumentHalf>,
}

/// One half of a language's documents (see [`document_half`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentHalf {
    /// The language whose dataset files are read.
    pub lang: String,
    /// 0 or 1.
    pub half: u8,
    /// A synthetic language's rewrite of every sentence ([`crate::text::rewrite`]); omitted from the JSON when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<crate::text::rewrite::Rewrite>,
}

/// Salt of the document halves: fixed, so the halves are the same for every seed and every run.
pub const HALF_SALT: u64 = 0x4841_4C46; // "HALF"

/// The half (0 or 1) of the document with id `id`: the top bit of `FNV-1a(HALF_SALT, id)`. (Not the lowest bit: FNV's
/// lowest bit is the parity of the odd bytes of the id, so `mod 2` splits by spelling and unevenly; the top bit splits
/// the English novels about evenly. Measured: docs/performance.md, *Measurements behind design choices*.)
pub fn document_half(id: &str) -> u8 {
    (fnv1a(HALF_SALT, id.as_bytes()) >> 63) as u8
}

/// Documents held out for validation, per mille, unless a spec says otherwise.
pub const DEFAULT_VALID_PER_MILLE: u32 = 20;

fn default_valid_per_mille() -> u32 {
    DEFAULT_VALID_PER_MILLE
}
fn default_true() -> bool {
    true
}
fn default_min_chars() -> usize {
    2
}

impl CorpusSpec {
    /// A spec with defaults for `lang` over `datasets`.
    pub fn new(lang: &str, datasets: &[&str]) -> Self {
        CorpusSpec {
            lang: lang.into(),
            datasets: datasets.iter().map(|s| s.to_string()).collect(),
            max_sentences: None,
            max_bytes: None,
            valid_per_mille: default_valid_per_mille(),
            seed: 0,
            segment_zh: true,
            dedup: true,
            min_chars: default_min_chars(),
            half: None,
        }
    }
}

/// Counts of one side of the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideCounts {
    pub documents: usize,
    pub sentences: usize,
    pub bytes: u64,
}

/// An input file and its checksum, for provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputFile {
    pub dataset: String,
    pub path: String,
    pub sha256: String,
}

/// What a build wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusSummary {
    pub spec: CorpusSpec,
    pub domains: Vec<String>,
    pub train: SideCounts,
    pub valid: SideCounts,
    pub duplicates_dropped: usize,
    pub inputs: Vec<InputFile>,
    pub train_path: PathBuf,
    pub valid_path: PathBuf,
}

/// FNV-1a, 64 bit: a stable hash for deterministic splits (not `std`'s randomised hasher).
pub fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

struct Side {
    tmp: PathBuf,
    out: BufWriter<std::fs::File>,
    counts: SideCounts,
    max_sentences: Option<usize>,
    max_bytes: Option<u64>,
}

impl Side {
    fn create(path: &Path, max_sentences: Option<usize>, max_bytes: Option<u64>) -> Result<Side> {
        let tmp = path.with_extension("txt.tmp");
        let file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(Side { tmp, out: BufWriter::new(file), counts: SideCounts::default(), max_sentences, max_bytes })
    }
    fn full(&self) -> bool {
        self.max_sentences.is_some_and(|m| self.counts.sentences >= m)
            || self.max_bytes.is_some_and(|m| self.counts.bytes >= m)
    }
    fn push(&mut self, sentence: &str) -> Result<()> {
        writeln!(self.out, "{sentence}").map_err(|e| Error::io(&self.tmp, e))?;
        self.counts.sentences += 1;
        self.counts.bytes += sentence.len() as u64 + 1;
        Ok(())
    }
}

/// Build the corpus of `spec` into `out_dir` (created if needed). See the module docs for the rules.
pub fn build_corpus(catalog: &Catalog, roots: &DataRoots, spec: &CorpusSpec, out_dir: &Path) -> Result<CorpusSummary> {
    if spec.valid_per_mille > 1000 {
        return Err(Error::Invalid(format!("valid_per_mille must be at most 1000, got {}", spec.valid_per_mille)));
    }
    if let Some(h) = spec.half.as_ref().filter(|h| h.half > 1) {
        return Err(Error::Invalid(format!("corpus '{}': half must be 0 or 1, got {}", spec.lang, h.half)));
    }
    // The language of the text read: `half.lang` for a pseudo-language, else the corpus's own.
    let text_lang = spec.half.as_ref().map_or(spec.lang.as_str(), |h| h.lang.as_str());
    let mut files = Vec::new();
    let mut domains = Vec::new();
    for id in &spec.datasets {
        let manifest = catalog.get(id)?;
        if !is_running_text(manifest.format) {
            return Err(Error::Invalid(format!("dataset '{id}' ({}) is not running text", manifest.format)));
        }
        let mut any = false;
        for file in manifest.files.iter().filter(|f| f.is_data()) {
            if file_lang(manifest, file) == Some(text_lang) {
                files.push((manifest, file));
                any = true;
            }
        }
        if !any {
            return Err(Error::Invalid(format!(
                "dataset '{id}' has no '{}' text (languages: {})",
                text_lang,
                manifest.languages.join(", ")
            )));
        }
        if let Some(d) = &manifest.domain {
            if !domains.contains(d) {
                domains.push(d.clone());
            }
        }
    }
    files.sort_by_key(|(_, f)| fnv1a(spec.seed, f.path.as_bytes()));

    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let train_path = out_dir.join(format!("{}.train.txt", spec.lang));
    let valid_path = out_dir.join(format!("{}.valid.txt", spec.lang));
    let scale = |n: u64| ((n as f64) * spec.valid_per_mille as f64 / 1000.0).ceil() as u64;
    let mut train = Side::create(&train_path, spec.max_sentences, spec.max_bytes)?;
    let mut valid =
        Side::create(&valid_path, spec.max_sentences.map(|n| scale(n as u64) as usize), spec.max_bytes.map(scale))?;
    let mut seen: HashSet<u64> = HashSet::new();
    let mut duplicates = 0usize;
    let mut inputs = Vec::new();
    let bar = crate::progress::bar(files.len() as u64, "corpus {msg} [{bar:30}] {pos}/{len} files, eta {eta}");
    bar.set_message(spec.lang.clone());

    let result = (|| -> Result<()> {
        for (manifest, file) in &files {
            if train.full() && valid.full() {
                break;
            }
            inputs.push(InputFile {
                dataset: manifest.id.clone(),
                path: file.path.clone(),
                sha256: file.sha256.clone(),
            });
            let per_sentence = paragraphs_are_sentences(manifest.format);
            for doc in file_documents(manifest, file, roots)? {
                let doc = doc?;
                if spec.half.as_ref().is_some_and(|h| document_half(&doc.id) != h.half) {
                    continue;
                }
                // Split unit: blocks of SPLIT_BLOCK_PARAGRAPHS paragraphs; block 0 is hashed as the bare document
                // id, so a short document is one unit, and a novel still yields held-out text.
                let mut counted = [false, false]; // [train, valid]: the document was counted on that side
                'block: for (b, block) in doc.paragraphs.chunks(SPLIT_BLOCK_PARAGRAPHS).enumerate() {
                    let unit = if b == 0 { doc.id.clone() } else { format!("{}#{b}", doc.id) };
                    let is_valid = fnv1a(spec.seed, unit.as_bytes()) % 1000 < spec.valid_per_mille as u64;
                    let side = if is_valid { &mut valid } else { &mut train };
                    if side.full() {
                        continue;
                    }
                    if !std::mem::replace(&mut counted[is_valid as usize], true) {
                        side.counts.documents += 1;
                    }
                    for paragraph in block {
                        let sentences =
                            if per_sentence { vec![paragraph.clone()] } else { split_sentences(paragraph, text_lang) };
                        for sentence in sentences {
                            if sentence.chars().count() < spec.min_chars {
                                continue;
                            }
                            if spec.dedup && !seen.insert(fnv1a(0, sentence.as_bytes())) {
                                duplicates += 1;
                                continue;
                            }
                            let line = if text_lang == "zh" && spec.segment_zh {
                                segment_zh(&sentence).join(" ")
                            } else {
                                sentence
                            };
                            let line = match spec.half.as_ref().and_then(|h| h.rewrite) {
                                Some(r) => r.sentence(&line),
                                None => line,
                            };
                            side.push(&line)?;
                            if side.full() {
                                continue 'block;
                            }
                        }
                    }
                }
            }
            bar.inc(1);
        }
        Ok(())
    })();
    bar.finish_and_clear();
    let finish = |side: Side, path: &Path| -> Result<SideCounts> {
        let Side { tmp, out, counts, .. } = side;
        let file = out.into_inner().map_err(|e| Error::io(&tmp, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        Ok(counts)
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(&train.tmp);
        let _ = std::fs::remove_file(&valid.tmp);
        return Err(e);
    }
    let train = finish(train, &train_path)?;
    let valid = finish(valid, &valid_path)?;
    let summary = CorpusSummary {
        spec: spec.clone(),
        domains,
        train,
        valid,
        duplicates_dropped: duplicates,
        inputs,
        train_path,
        valid_path,
    };
    let json_path = out_dir.join(format!("{}.corpus.json", spec.lang));
    let text = serde_json::to_string_pretty(&summary).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::atomic_file::write_atomic(&json_path, text)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable_and_seeded() {
        assert_eq!(fnv1a(0, b"abc"), fnv1a(0, b"abc"));
        assert_ne!(fnv1a(0, b"abc"), fnv1a(1, b"abc"));
        // Fixed value: changing the hash would silently change every split.
        assert_eq!(fnv1a(0, b""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    #[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
    fn document_halves_are_fixed_and_split_the_english_novels() {
        // Fixed values: changing the salt or the hash would silently change every pseudo-language corpus.
        let first: Vec<u8> = ["ENG18400_Trollope", "ENG18471_Bronte", "ENG18480_Thackeray", "ENG18481_Dickens"]
            .iter()
            .map(|id| document_half(id))
            .collect();
        assert_eq!(first, [1, 0, 0, 1]);
        let mirror = crate::data::formats::test_mirror().expect("the data mirror (without it this test is ignored)");
        let catalog = Catalog::load_default().unwrap();
        let roots =
            DataRoots { mirror: Some(mirror), cache: std::env::temp_dir(), allow_download: false, progress: false };
        let ids: Vec<String> = catalog
            .get("eltec-en")
            .unwrap()
            .files
            .iter()
            .filter(|f| f.is_data())
            .map(|f| f.path.rsplit('/').next().unwrap_or("").split('.').next().unwrap_or("").to_string())
            .collect();
        let in_half_1 = ids.iter().filter(|id| document_half(id) == 1).count();
        assert_eq!((in_half_1, ids.len()), (49, 99));

        // Two halves built like en and en2 of `en-en2`: the second reads English files, and no long sentence is in
        // both (short ones, "Yes, sir.", may recur across novels).
        let dir = tempfile::tempdir().unwrap();
        let mut sides = Vec::new();
        for (lang, half) in [("en", 0u8), ("en2", 1u8)] {
            let spec = CorpusSpec {
                max_sentences: Some(400),
                half: Some(DocumentHalf { lang: "en".into(), half, rewrite: None }),
                ..CorpusSpec::new(lang, &["eltec-en"])
            };
            let summary = build_corpus(&catalog, &roots, &spec, dir.path()).unwrap();
            assert_eq!(summary.train.sentences, 400, "{lang}");
            assert_eq!(summary.train_path, dir.path().join(format!("{lang}.train.txt")));
            let text = std::fs::read_to_string(&summary.train_path).unwrap();
            sides.push(text.lines().filter(|l| l.len() > 60).map(String::from).collect::<HashSet<_>>());
        }
        assert!(sides[0].len() > 50 && sides[1].len() > 50);
        assert!(sides[0].is_disjoint(&sides[1]), "the halves share sentences");
        // The synthetic enx reads en2's half and writes each of its lines rewritten.
        let en2 = std::fs::read_to_string(dir.path().join("en2.train.txt")).unwrap();
        let rewrite = crate::text::rewrite::Rewrite::Script;
        let spec = CorpusSpec {
            max_sentences: Some(400),
            half: Some(DocumentHalf { lang: "en".into(), half: 1, rewrite: Some(rewrite) }),
            ..CorpusSpec::new("enx", &["eltec-en"])
        };
        let enx =
            std::fs::read_to_string(build_corpus(&catalog, &roots, &spec, dir.path()).unwrap().train_path).unwrap();
        let expected: Vec<String> = en2.lines().map(|l| rewrite.sentence(l)).collect();
        assert_eq!(enx.lines().collect::<Vec<_>>(), expected);
        assert!(serde_json::to_string(&spec).unwrap().contains(r#""rewrite":"script""#));
        let bad = CorpusSpec {
            half: Some(DocumentHalf { lang: "en".into(), half: 2, rewrite: None }),
            ..CorpusSpec::new("en2", &["eltec-en"])
        };
        assert!(build_corpus(&catalog, &roots, &bad, dir.path()).unwrap_err().to_string().contains("0 or 1"));
        // Without `half`, the spec's JSON has no such field (run configs keep their model-cache keys).
        assert!(!serde_json::to_string(&CorpusSpec::new("en", &["eltec-en"])).unwrap().contains("half"));
    }

    #[test]
    fn spec_rejects_unknown_fields() {
        let err = serde_json::from_str::<CorpusSpec>(r#"{"lang":"en","datasets":[],"max_sentense":5}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
    }
}
