//! Static word vectors: one row per word, and their two on-disk formats.
//!
//! - **`.vec`** — the text format of `word2vec.c` (`-binary 0`) and fastText: a header line `N D`, then `N` lines
//!   `word v_1 … v_D` separated by single spaces. Words may not contain whitespace.
//! - **`.safetensors`** — one `F32` tensor `vectors` of shape `[N, D]`; the metadata holds `words` (the `N` words
//!   joined by `\n`) and any provenance entries of [`WordVectors::metadata`].
//!
//! Both are written to a temporary file and renamed into place, so an interrupted save leaves nothing half-written.
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use tch::Tensor;

use crate::arrays::stream::{read_metadata, Dtype, StreamWriter, TensorSpec};
use crate::error::{Error, Result};

/// Words and their vectors, row-major `[N, D]` f32.
#[derive(Debug, Clone, PartialEq)]
pub struct WordVectors {
    words: Vec<String>,
    dim: usize,
    data: Vec<f32>,
    index: HashMap<String, usize>,
    /// Provenance written with the safetensors file (model kind, config, corpus, seed, …).
    pub metadata: BTreeMap<String, String>,
}

impl WordVectors {
    /// Vectors from `words` and their rows `data` (`words.len() · dim` values). Words must be distinct, non-empty
    /// and free of whitespace.
    pub fn new(words: Vec<String>, dim: usize, data: Vec<f32>) -> Result<WordVectors> {
        if dim == 0 || data.len() != words.len() * dim {
            return Err(Error::Invalid(format!(
                "{} values for {} words of dimension {dim} (expected {})",
                data.len(),
                words.len(),
                words.len() * dim
            )));
        }
        let mut index = HashMap::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            if w.is_empty() || w.chars().any(char::is_whitespace) {
                return Err(Error::Invalid(format!("word {i} ({w:?}) is empty or contains whitespace")));
            }
            if index.insert(w.clone(), i).is_some() {
                return Err(Error::Invalid(format!("word '{w}' appears twice")));
            }
        }
        Ok(WordVectors { words, dim, data, index, metadata: BTreeMap::new() })
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Row-major values, `[N, D]`.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The row of word `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The index of `word`.
    pub fn index(&self, word: &str) -> Option<usize> {
        self.index.get(word).copied()
    }

    /// The vector of `word`.
    pub fn get(&self, word: &str) -> Option<&[f32]> {
        self.index(word).map(|i| self.row(i))
    }

    /// All vectors as one tensor.
    /// # Shapes
    /// → `[N, D]` f32 on the CPU
    pub fn to_tensor(&self) -> Tensor {
        Tensor::from_slice(&self.data).view([self.words.len() as i64, self.dim as i64])
    }

    /// Writes the `.vec` text format (see the module docs).
    pub fn save_vec(&self, path: &Path) -> Result<()> {
        let tmp = tmp_path(path);
        let write = || -> std::io::Result<()> {
            let mut w = BufWriter::new(std::fs::File::create(&tmp)?);
            writeln!(w, "{} {}", self.words.len(), self.dim)?;
            let mut line = String::new();
            for (i, word) in self.words.iter().enumerate() {
                line.clear();
                line.push_str(word);
                for v in self.row(i) {
                    line.push(' ');
                    line.push_str(&format!("{v}")); // shortest text that reads back to the same f32
                }
                line.push('\n');
                w.write_all(line.as_bytes())?;
            }
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        write().map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    /// Reads the `.vec` text format; errors name the file, the line and what was expected.
    pub fn load_vec(path: &Path) -> Result<WordVectors> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut lines = std::io::BufReader::new(file).lines();
        let header = lines
            .next()
            .ok_or_else(|| Error::format(path, 1, "empty file (expected a header line `N D`)"))?
            .map_err(|e| Error::io(path, e))?;
        let nums: Vec<usize> = header.split_whitespace().filter_map(|t| t.parse().ok()).collect();
        let [n, dim] = nums[..] else {
            return Err(Error::format(path, 1, format!("header {header:?} (expected two integers `N D`)")));
        };
        let (mut words, mut data) = (Vec::with_capacity(n), Vec::with_capacity(n * dim));
        for (k, line) in lines.enumerate() {
            let no = k + 2;
            let line = line.map_err(|e| Error::io(path, e))?;
            if line.trim().is_empty() {
                continue;
            }
            let mut parts = line.split(' ').filter(|t| !t.is_empty());
            let word = parts.next().unwrap_or_default().to_string();
            let before = data.len();
            for t in parts {
                let v: f32 = t.parse().map_err(|_| Error::format(path, no, format!("{t:?} is not a number")))?;
                data.push(v);
            }
            if data.len() - before != dim {
                return Err(Error::format(
                    path,
                    no,
                    format!("word '{word}' has {} values (expected {dim})", data.len() - before),
                ));
            }
            words.push(word);
        }
        if words.len() != n {
            return Err(Error::format_file(path, format!("{} words (the header announces {n})", words.len())));
        }
        WordVectors::new(words, dim, data).map_err(|e| Error::format_file(path, e.to_string()))
    }

    /// Writes the `.safetensors` format (see the module docs).
    pub fn save_safetensors(&self, path: &Path) -> Result<()> {
        let tmp = tmp_path(path);
        let mut meta = self.metadata.clone();
        meta.insert("words".into(), self.words.join("\n"));
        let spec = TensorSpec { name: "vectors".into(), dtype: Dtype::F32, shape: vec![self.words.len(), self.dim] };
        let mut w = StreamWriter::create(&tmp, &[spec], &meta)?;
        w.write_f32("vectors", 0, &self.data)?;
        w.finish()?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    /// Reads the `.safetensors` format written by [`WordVectors::save_safetensors`].
    pub fn load_safetensors(path: &Path) -> Result<WordVectors> {
        let mut meta = read_metadata(path)?;
        let words = meta
            .remove("words")
            .ok_or_else(|| Error::format_file(path, "no `words` entry in the metadata (expected the vocabulary)"))?;
        let t = crate::arrays::read_safetensors(path, Some("vectors"))?;
        let size = t.size();
        let words: Vec<String> =
            if words.is_empty() { Vec::new() } else { words.split('\n').map(String::from).collect() };
        if size.len() != 2 || size[0] as usize != words.len() {
            return Err(Error::format_file(
                path,
                format!("tensor `vectors` has shape {size:?} (expected [{}, D], one row per word)", words.len()),
            ));
        }
        let data = Vec::<f32>::try_from(t.to_kind(tch::Kind::Float).contiguous().view([-1]))
            .map_err(|e| Error::format_file(path, e.to_string()))?;
        let mut v =
            WordVectors::new(words, size[1] as usize, data).map_err(|e| Error::format_file(path, e.to_string()))?;
        v.metadata = meta;
        Ok(v)
    }

    /// Reads `.vec` or `.safetensors` by extension.
    pub fn load(path: &Path) -> Result<WordVectors> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("safetensors") => WordVectors::load_safetensors(path),
            Some("vec") | Some("txt") => WordVectors::load_vec(path),
            _ => Err(Error::format_file(path, "unknown word-vector format; expected .vec or .safetensors")),
        }
    }
}

fn tmp_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> WordVectors {
        let words = vec!["▁the".to_string(), "chat".into(), "猫".into()];
        WordVectors::new(words, 2, vec![0.1, -2.5e-8, 3.0, 1.0 / 3.0, -0.0, 7.25]).unwrap()
    }

    #[test]
    fn both_formats_round_trip_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = sample();
        v.metadata.insert("kind".into(), "word2vec".into());
        v.save_vec(&dir.path().join("a.vec")).unwrap();
        v.save_safetensors(&dir.path().join("a.safetensors")).unwrap();
        let text = WordVectors::load(&dir.path().join("a.vec")).unwrap();
        assert_eq!(text.data(), v.data());
        assert_eq!(text.words(), v.words());
        let st = WordVectors::load(&dir.path().join("a.safetensors")).unwrap();
        assert_eq!(st, v);
        assert_eq!(st.get("猫").unwrap(), &[-0.0, 7.25]);
        assert!(!dir.path().join("a.vec.tmp").exists());
    }

    #[test]
    fn bad_files_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.vec");
        std::fs::write(&p, "2 3\nx 1 2 3\ny 1 2\n").unwrap();
        let e = WordVectors::load(&p).unwrap_err().to_string();
        assert!(e.contains("b.vec:3") && e.contains("has 2 values (expected 3)"), "{e}");
        std::fs::write(&p, "2 3\nx 1 2 z\n").unwrap();
        let e = WordVectors::load(&p).unwrap_err().to_string();
        assert!(e.contains("b.vec:2") && e.contains("\"z\" is not a number"), "{e}");
        std::fs::write(&p, "3 1\nx 1\n").unwrap();
        let e = WordVectors::load(&p).unwrap_err().to_string();
        assert!(e.contains("1 words (the header announces 3)"), "{e}");
        assert!(WordVectors::new(vec!["a b".into()], 1, vec![0.0]).is_err());
        assert!(WordVectors::new(vec!["a".into()], 2, vec![0.0]).is_err());
    }
}
