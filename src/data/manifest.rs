//! Dataset manifests: one TOML file per dataset in `data-manifests/` (written by `data-manifests/generate.py` from
//! the mirror's `SOURCES.tsv`), each naming its files with byte counts, sha256 and the upstream URL at a pinned
//! commit. [`Catalog`] loads and cross-checks them; [`read_sources_tsv`] reads the mirror's own file list.
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// How a dataset's files are laid out; selects the reader in [`crate::data::formats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// ELTeC TEI XML novels.
    EltecTei,
    /// Plain-text novel, one paragraph per line.
    Novel,
    /// WikiExtractor output (`<doc …>` blocks).
    Zhwiki,
    /// One document per line.
    LineDocs,
    /// News test sets, one sentence per line.
    NewsLines,
    /// MUSE bilingual dictionary.
    MuseDict,
    /// Line-aligned parallel text.
    Parallel,
    /// XNLI in the XTREME TSV layout.
    XnliTsv,
    /// MultiNLI CSV (`label,text,assertion`).
    MnliCsv,
    /// PAN-X / WikiAnn in the XTREME TSV layout.
    PanxTsv,
    /// CoNLL-2003 NER columns.
    Conll2003,
    /// Character-per-line BMES tagging.
    Bmes,
    /// Universal Dependencies CoNLL-U.
    Conllu,
    /// XTREME udpos TSV.
    UdposTsv,
}

impl Format {
    /// The name used in manifests (kebab-case).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::EltecTei => "eltec-tei",
            Format::Novel => "novel",
            Format::Zhwiki => "zhwiki",
            Format::LineDocs => "line-docs",
            Format::NewsLines => "news-lines",
            Format::MuseDict => "muse-dict",
            Format::Parallel => "parallel",
            Format::XnliTsv => "xnli-tsv",
            Format::MnliCsv => "mnli-csv",
            Format::PanxTsv => "panx-tsv",
            Format::Conll2003 => "conll2003",
            Format::Bmes => "bmes",
            Format::Conllu => "conllu",
            Format::UdposTsv => "udpos-tsv",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a file is for: data to read, or documentation (LICENSE, README) kept with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileRole {
    /// A data file (the default).
    #[default]
    Data,
    /// A LICENSE or README file.
    Doc,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_data_role(r: &FileRole) -> bool {
    *r == FileRole::Data
}

/// One file of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// Path in the mirror, relative (ends in `.gz` when `gzip_in_mirror`).
    pub path: String,
    /// Size of the upstream file (decompressed when `gzip_in_mirror`).
    pub bytes: u64,
    /// sha256 of the upstream file, 64 lowercase hex digits.
    pub sha256: String,
    /// Upstream URL at the pinned commit.
    pub url: String,
    /// Whether the mirror stores this file gzip-compressed while upstream does not.
    #[serde(default, skip_serializing_if = "is_false")]
    pub gzip_in_mirror: bool,
    /// The file's language, where it can be known from its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Data or documentation.
    #[serde(default, skip_serializing_if = "is_data_role")]
    pub role: FileRole,
}

impl FileEntry {
    /// Path in the download cache, which holds the upstream bytes: [`FileEntry::path`] without the trailing `.gz`
    /// when the mirror stores the file compressed.
    pub fn cache_path(&self) -> &str {
        if self.gzip_in_mirror {
            self.path.strip_suffix(".gz").unwrap_or(&self.path)
        } else {
            &self.path
        }
    }

    /// Whether this is a data file (not a LICENSE/README).
    pub fn is_data(&self) -> bool {
        self.role == FileRole::Data
    }
}

/// One dataset's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Stable dataset id (also the manifest's file stem).
    pub id: String,
    /// What the dataset is.
    pub description: String,
    /// Languages present (ISO 639-1).
    pub languages: Vec<String>,
    /// File layout.
    pub format: Format,
    /// Text domain of running-text datasets: `novels`, `wiki`, `web` or `news`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Licence as the source states it.
    pub licence: String,
    /// Bibliographic reference(s) to cite.
    pub citation: String,
    /// Project home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Known problems and caveats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The dataset's files.
    #[serde(default)]
    pub files: Vec<FileEntry>,
}

/// The domains a manifest may name.
pub const DOMAINS: [&str; 4] = ["novels", "wiki", "web", "news"];

impl Manifest {
    /// Total upstream bytes of all files (data and doc).
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }

    /// Files whose own `lang` is `lang`, or, for files without one, all files when `lang` is the manifest's only
    /// language.
    pub fn files_for_lang<'a>(&'a self, lang: &'a str) -> impl Iterator<Item = &'a FileEntry> + 'a {
        let only = self.languages.len() == 1 && self.languages[0] == lang;
        self.files.iter().filter(move |f| match &f.lang {
            Some(l) => l == lang,
            None => only,
        })
    }

    /// Parse a manifest from TOML text; `path` names it in errors. Checks the fields, not the file name.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let m: Manifest = toml::from_str(text).map_err(|e| manifest_err(path, e.to_string().trim_end()))?;
        m.validate(path)?;
        Ok(m)
    }

    fn validate(&self, path: &Path) -> Result<()> {
        if self.id.trim().is_empty() {
            return Err(manifest_err(path, "empty id"));
        }
        if self.languages.is_empty() {
            return Err(manifest_err(path, format!("dataset '{}' lists no languages", self.id)));
        }
        if let Some(d) = &self.domain {
            if !DOMAINS.contains(&d.as_str()) {
                return Err(manifest_err(
                    path,
                    format!("dataset '{}': domain '{d}' is not one of {}", self.id, DOMAINS.join(", ")),
                ));
            }
        }
        let mut seen = HashSet::new();
        for f in &self.files {
            if f.path.is_empty() || f.path.starts_with('/') || f.path.split('/').any(|c| c == "..") {
                return Err(manifest_err(path, format!("file path '{}' must be relative, without '..'", f.path)));
            }
            if !seen.insert(f.path.as_str()) {
                return Err(manifest_err(path, format!("file '{}' is listed twice", f.path)));
            }
            if !is_sha256(&f.sha256) {
                return Err(manifest_err(
                    path,
                    format!("file '{}': sha256 '{}' is not 64 lowercase hex digits", f.path, f.sha256),
                ));
            }
            if f.gzip_in_mirror && !f.path.ends_with(".gz") {
                return Err(manifest_err(
                    path,
                    format!("file '{}': gzip_in_mirror is set but the path does not end in .gz", f.path),
                ));
            }
            if f.url.is_empty() {
                return Err(manifest_err(path, format!("file '{}' has an empty url", f.path)));
            }
        }
        Ok(())
    }
}

fn manifest_err(path: &Path, msg: impl Into<String>) -> Error {
    Error::Manifest { path: path.to_path_buf(), msg: msg.into() }
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// All manifests of a folder, sorted by id.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The folder the manifests were read from.
    pub dir: PathBuf,
    manifests: Vec<Manifest>,
}

impl Catalog {
    /// Read every `*.toml` in `dir`. Fails on a malformed manifest, an id that differs from the file stem, or an id
    /// or file path that two manifests share.
    pub fn load(dir: &Path) -> Result<Catalog> {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        let mut paths = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "toml") && p.is_file() {
                paths.push(p);
            }
        }
        paths.sort();
        let mut manifests = Vec::with_capacity(paths.len());
        let mut ids: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for p in paths {
            let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
            let m = Manifest::parse(&text, &p)?;
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if m.id != stem {
                return Err(manifest_err(
                    &p,
                    format!("id '{}' does not match the file name (expected id '{stem}')", m.id),
                ));
            }
            if let Some(other) = ids.get(&m.id) {
                return Err(manifest_err(&p, format!("duplicate id '{}' (also in {})", m.id, other.display())));
            }
            ids.insert(m.id.clone(), p.clone());
            for f in &m.files {
                if let Some(other) = files.get(&f.path) {
                    return Err(manifest_err(&p, format!("file '{}' is also listed by dataset '{other}'", f.path)));
                }
                files.insert(f.path.clone(), m.id.clone());
            }
            manifests.push(m);
        }
        manifests.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Catalog { dir: dir.to_path_buf(), manifests })
    }

    /// `$CROSSLING_MANIFESTS` if set, else the crate's `data-manifests/` folder.
    pub fn default_dir() -> PathBuf {
        crate::paths::env_or_beside_crate("CROSSLING_MANIFESTS", "data-manifests")
    }

    /// [`Catalog::load`] on [`Catalog::default_dir`].
    pub fn load_default() -> Result<Catalog> {
        Catalog::load(&Catalog::default_dir())
    }

    /// The manifest with this id.
    pub fn get(&self, id: &str) -> Result<&Manifest> {
        self.manifests.iter().find(|m| m.id == id).ok_or_else(|| Error::UnknownDataset {
            id: id.to_string(),
            known: self.manifests.iter().map(|m| m.id.as_str()).collect::<Vec<_>>().join(", "),
        })
    }

    /// All manifests, sorted by id.
    pub fn manifests(&self) -> &[Manifest] {
        &self.manifests
    }

    /// The manifests named by `ids` in the order given (duplicates dropped); all of them when `ids` is empty.
    pub fn select(&self, ids: &[String]) -> Result<Vec<&Manifest>> {
        if ids.is_empty() {
            return Ok(self.manifests.iter().collect());
        }
        let mut out: Vec<&Manifest> = Vec::with_capacity(ids.len());
        for id in ids {
            let m = self.get(id)?;
            if !out.iter().any(|o| o.id == m.id) {
                out.push(m);
            }
        }
        Ok(out)
    }
}

/// One row of the mirror's `SOURCES.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRow {
    /// Path in the mirror.
    pub path: String,
    /// Size of the upstream file (decompressed for files the mirror gzips).
    pub bytes: u64,
    /// sha256 of the upstream file.
    pub sha256: String,
    /// GitHub `owner/name`.
    pub repo: String,
    /// Pinned commit.
    pub commit: String,
    /// Path in the repository.
    pub upstream_path: String,
    /// Licence as stated by the source.
    pub licence: String,
}

impl SourceRow {
    /// `https://raw.githubusercontent.com/<repo>/<commit>/<upstream_path>`, the path percent-encoded (RFC 3986
    /// unreserved characters and `/` kept), as `generate.py` writes it.
    pub fn raw_url(&self) -> String {
        format!(
            "https://raw.githubusercontent.com/{}/{}/{}",
            self.repo,
            self.commit,
            percent_encode_path(&self.upstream_path)
        )
    }
}

/// Percent-encode every byte of `path` except ASCII letters, digits, `-._~` and `/` (Python's
/// `urllib.parse.quote(path, safe="/")`).
pub fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

const SOURCES_HEADER: [&str; 7] = ["path", "bytes", "sha256", "repo", "commit", "upstream_path", "licence"];

/// Read the mirror's `SOURCES.tsv` (`path bytes sha256 repo commit upstream_path licence`, with that header).
pub fn read_sources_tsv(path: &Path) -> Result<Vec<SourceRow>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.split('\t').eq(SOURCES_HEADER.iter().copied()) => {}
        _ => return Err(Error::format(path, 1, format!("header must be '{}'", SOURCES_HEADER.join("\\t")))),
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != SOURCES_HEADER.len() {
            return Err(Error::format(
                path,
                n,
                format!("expected {} tab-separated columns, found {}", SOURCES_HEADER.len(), cols.len()),
            ));
        }
        let bytes = cols[1]
            .parse::<u64>()
            .map_err(|_| Error::format(path, n, format!("bytes '{}' is not a number", cols[1])))?;
        if !is_sha256(cols[2]) {
            return Err(Error::format(path, n, format!("sha256 '{}' is not 64 lowercase hex digits", cols[2])));
        }
        rows.push(SourceRow {
            path: cols[0].to_string(),
            bytes,
            sha256: cols[2].to_string(),
            repo: cols[3].to_string(),
            commit: cols[4].to_string(),
            upstream_path: cols[5].to_string(),
            licence: cols[6].to_string(),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "e045e723c1edcaeb518cb13b2b3853019654f4646c7c27032e63b10a0c4b13a2";

    fn tiny(id: &str, extra: &str, sha: &str) -> String {
        format!(
            "id = \"{id}\"\ndescription = \"d\"\nlanguages = [\"en\", \"fr\"]\nformat = \"eltec-tei\"\n\
             domain = \"novels\"\nlicence = \"CC0\"\ncitation = \"c\"\n{extra}\n\
             [[files]]\npath = \"mono/en/a.xml.gz\"\nbytes = 12\nsha256 = \"{sha}\"\nurl = \"https://x/a.xml\"\n\
             gzip_in_mirror = true\nlang = \"en\"\n\n\
             [[files]]\npath = \"mono/LICENSE\"\nbytes = 3\nsha256 = \"{SHA}\"\nurl = \"https://x/LICENSE\"\nrole = \"doc\"\n"
        )
    }

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn tiny_manifest_parses() {
        let m = Manifest::parse(&tiny("t", "homepage = \"https://h\"", SHA), Path::new("t.toml")).unwrap();
        assert_eq!(m.id, "t");
        assert_eq!(m.format, Format::EltecTei);
        assert_eq!(m.format.to_string(), "eltec-tei");
        assert_eq!(m.domain.as_deref(), Some("novels"));
        assert_eq!(m.homepage.as_deref(), Some("https://h"));
        assert_eq!(m.notes, None);
        assert_eq!(m.files.len(), 2);
        assert_eq!(m.files[0].cache_path(), "mono/en/a.xml");
        assert!(m.files[0].is_data());
        assert_eq!(m.files[1].cache_path(), "mono/LICENSE");
        assert!(!m.files[1].is_data());
        assert_eq!(m.total_bytes(), 15);
        assert_eq!(m.files_for_lang("en").count(), 1);
        assert_eq!(m.files_for_lang("fr").count(), 0);
        // Round trip through the serializer.
        let again: Manifest = toml::from_str(&toml::to_string(&m).unwrap()).unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn every_format_round_trips_its_name() {
        for f in [
            Format::EltecTei,
            Format::Novel,
            Format::Zhwiki,
            Format::LineDocs,
            Format::NewsLines,
            Format::MuseDict,
            Format::Parallel,
            Format::XnliTsv,
            Format::MnliCsv,
            Format::PanxTsv,
            Format::Conll2003,
            Format::Bmes,
            Format::Conllu,
            Format::UdposTsv,
        ] {
            #[derive(Deserialize)]
            struct W {
                f: Format,
            }
            let w: W = toml::from_str(&format!("f = \"{f}\"")).unwrap();
            assert_eq!(w.f, f);
        }
    }

    #[test]
    fn unknown_field_is_named() {
        let err = Manifest::parse(&tiny("t", "colour = \"red\"", SHA), Path::new("t.toml")).unwrap_err().to_string();
        assert!(err.contains("t.toml") && err.contains("colour") && err.contains("line"), "{err}");
        let text = tiny("t", "", SHA).replace("lang = \"en\"", "language = \"en\"");
        let err = Manifest::parse(&text, Path::new("t.toml")).unwrap_err().to_string();
        assert!(err.contains("language"), "{err}");
    }

    #[test]
    fn syntax_error_gives_line_and_column() {
        let err = Manifest::parse("id = \"t\"\ndescription = \n", Path::new("bad.toml")).unwrap_err().to_string();
        assert!(err.contains("bad.toml") && err.contains("line 2") && err.contains("column"), "{err}");
    }

    #[test]
    fn bad_sha_is_rejected() {
        let upper = SHA.to_uppercase();
        for bad in ["abc", upper.as_str(), &format!("{}g", &SHA[..63])] {
            let err = Manifest::parse(&tiny("t", "", bad), Path::new("t.toml")).unwrap_err().to_string();
            assert!(
                err.contains("sha256") && err.contains("64 lowercase hex") && err.contains("mono/en/a.xml.gz"),
                "{err}"
            );
        }
    }

    #[test]
    fn bad_domain_is_rejected() {
        let text = tiny("t", "", SHA).replace("domain = \"novels\"", "domain = \"poetry\"");
        let err = Manifest::parse(&text, Path::new("t.toml")).unwrap_err().to_string();
        assert!(err.contains("poetry"), "{err}");
    }

    #[test]
    fn catalog_checks_ids_and_shared_files() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.toml", &tiny("b", "", SHA));
        write(dir.path(), "notes.txt", "ignored");
        let cat = Catalog::load(dir.path()).unwrap();
        assert_eq!(cat.manifests().len(), 1);
        assert_eq!(cat.get("b").unwrap().id, "b");
        let err = cat.get("zz").unwrap_err().to_string();
        assert!(err.contains("zz") && err.contains("known ids: b"), "{err}");
        assert_eq!(cat.select(&[]).unwrap().len(), 1);
        assert_eq!(cat.select(&["b".into(), "b".into()]).unwrap().len(), 1);
        assert!(cat.select(&["nope".into()]).is_err());

        // Mismatched id.
        write(dir.path(), "a.toml", &tiny("not-a", "", SHA));
        let err = Catalog::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("a.toml") && err.contains("'not-a'") && err.contains("file name"), "{err}");

        // Same file in two manifests.
        write(dir.path(), "a.toml", &tiny("a", "", SHA));
        let err = Catalog::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("mono/en/a.xml.gz") && err.contains("also listed"), "{err}");

        // Empty id.
        let dir2 = tempfile::tempdir().unwrap();
        write(dir2.path(), "x.toml", &tiny("", "", SHA));
        let err = Catalog::load(dir2.path()).unwrap_err().to_string();
        assert!(err.contains("empty id"), "{err}");
    }

    #[test]
    fn sources_tsv_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("SOURCES.tsv");
        let header = SOURCES_HEADER.join("\t");
        std::fs::write(&p, format!("{header}\nmono/ru/a b.txt.gz\t5\t{SHA}\to/r\tc0ffee\tcorpus/a b.txt\tPD\n"))
            .unwrap();
        let rows = read_sources_tsv(&p).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].bytes, 5);
        assert_eq!(rows[0].raw_url(), "https://raw.githubusercontent.com/o/r/c0ffee/corpus/a%20b.txt");
        std::fs::write(&p, format!("{header}\nx\tfive\t{SHA}\to/r\tc\tx\tl\n")).unwrap();
        let err = read_sources_tsv(&p).unwrap_err().to_string();
        assert!(err.contains("SOURCES.tsv:2") && err.contains("five"), "{err}");
        std::fs::write(&p, format!("{header}\nx\t1\t{SHA}\n")).unwrap();
        let err = read_sources_tsv(&p).unwrap_err().to_string();
        assert!(err.contains("SOURCES.tsv:2") && err.contains("columns"), "{err}");
        assert_eq!(percent_encode_path("三/a·b"), "%E4%B8%89/a%C2%B7b");
    }
}
