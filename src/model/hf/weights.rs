//! The weight files of a Hugging Face folder, as `save_pretrained` writes them (`transformers`
//! `modeling_utils.py`, `utils/hub.py`): one `model.safetensors`; or shards `model-0000N-of-0000M.safetensors`
//! listed by `model.safetensors.index.json` (`{"metadata": …, "weight_map": {tensor: shard file}}`); or the
//! PyTorch pickles `pytorch_model.bin` / `pytorch_model-0000N-of-0000M.bin` with `pytorch_model.bin.index.json`
//! (read without Python by [`super::pickle`]). safetensors wins when both are present.
//!
//! The provenance hash of a single file is its sha256; of a sharded checkpoint, the sha256 of the lines
//! `"{shard file name} {shard sha256}\n"`, shards sorted by name.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tch::Tensor;

use crate::error::{Error, Result};
use crate::model::checkpoint::sha256_file;

/// Where a checkpoint's tensors are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightFiles {
    /// The index of a sharded checkpoint.
    pub index: Option<PathBuf>,
    /// The weight files (shards sorted by name).
    pub files: Vec<PathBuf>,
}

impl WeightFiles {
    /// The file to name in messages: the single file, or the index.
    pub fn display_path(&self) -> &Path {
        self.index.as_deref().or(self.files.first().map(PathBuf::as_path)).unwrap_or(Path::new("."))
    }

    /// The provenance hash (see the module docs).
    pub fn sha256(&self) -> Result<String> {
        match (&self.index, self.files.as_slice()) {
            (None, [one]) => sha256_file(one),
            _ => {
                let mut h = Sha256::new();
                for f in &self.files {
                    let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    h.update(format!("{name} {}\n", sha256_file(f)?).as_bytes());
                }
                Ok(hex::encode(h.finalize()))
            }
        }
    }

    /// Every tensor of every file. For shards, each tensor must be in the shard the index names and every
    /// tensor the index names must be found.
    pub fn read(&self) -> Result<Vec<(String, Tensor)>> {
        let Some(index) = &self.index else {
            let mut all = Vec::new();
            for f in &self.files {
                all.extend(read_file(f)?);
            }
            return Ok(all);
        };
        let map = weight_map(index)?;
        let mut all = Vec::new();
        let mut seen = BTreeSet::new();
        for f in &self.files {
            let shard = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            for (name, t) in read_file(f)? {
                match map.get(&name) {
                    Some(s) if *s == shard => {
                        seen.insert(name.clone());
                        all.push((name, t));
                    }
                    // A tensor the index places elsewhere (or does not list) is not part of the checkpoint.
                    _ => {}
                }
            }
        }
        let lost: Vec<&String> = map.keys().filter(|n| !seen.contains(*n)).collect();
        if !lost.is_empty() {
            let first: Vec<String> = lost.iter().take(3).map(|n| format!("'{n}' ({})", map[*n])).collect();
            return Err(Error::format_file(
                index,
                format!("{} tensor(s) of the index are not in their shard, e.g. {}", lost.len(), first.join(", ")),
            ));
        }
        Ok(all)
    }
}

/// The weight files of the HF folder `dir`: `model.safetensors`, else its sharded index, else
/// `pytorch_model.bin`, else its sharded index. None of them is an error listing the folder's weight-like files.
pub fn find_weights(dir: &Path) -> Result<WeightFiles> {
    for (single, index) in
        [("model.safetensors", "model.safetensors.index.json"), ("pytorch_model.bin", "pytorch_model.bin.index.json")]
    {
        let p = dir.join(single);
        if p.is_file() {
            return Ok(WeightFiles { index: None, files: vec![p] });
        }
        let ix = dir.join(index);
        if ix.is_file() {
            let map = weight_map(&ix)?;
            let mut shards: Vec<&String> = Vec::new();
            for s in map.values() {
                if !shards.contains(&s) {
                    shards.push(s);
                }
            }
            shards.sort();
            let mut files = Vec::with_capacity(shards.len());
            for s in shards {
                if s.contains('/') || s.contains('\\') || s == ".." {
                    return Err(Error::format_file(&ix, format!("shard '{s}' is not a file name in the folder")));
                }
                let f = dir.join(s);
                if !f.is_file() {
                    return Err(Error::format_file(
                        &ix,
                        format!("lists shard '{s}', which is not in {}", dir.display()),
                    ));
                }
                files.push(f);
            }
            return Ok(WeightFiles { index: Some(ix), files });
        }
    }
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            [".safetensors", ".bin", ".h5", ".msgpack", ".ckpt", ".pt", ".pth", ".onnx"].iter().any(|x| n.ends_with(x))
        })
        .collect();
    found.sort();
    Err(Error::Invalid(format!(
        "{}: no weights crossling can read (model.safetensors, model-0000N-of-0000M.safetensors with \
         model.safetensors.index.json, or pytorch_model.bin); found {}",
        dir.display(),
        if found.is_empty() { "no weight files".to_string() } else { found.join(", ") }
    )))
}

/// `weight_map` of a sharded checkpoint's index: tensor name → shard file name.
fn weight_map(index: &Path) -> Result<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(index).map_err(|e| Error::io(index, e))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| Error::format(index, e.line(), format!("invalid JSON: {e}")))?;
    let map = v
        .get("weight_map")
        .and_then(Value::as_object)
        .ok_or_else(|| Error::format_file(index, "no 'weight_map' object"))?;
    map.iter()
        .map(|(k, s)| {
            s.as_str()
                .map(|s| (k.clone(), s.to_string()))
                .ok_or_else(|| Error::format_file(index, format!("weight_map['{k}'] is not a file name")))
        })
        .collect()
}

/// Every tensor of one `.safetensors` or PyTorch `.bin` file.
pub fn read_file(path: &Path) -> Result<Vec<(String, Tensor)>> {
    if path.extension().is_some_and(|e| e == "safetensors") {
        Tensor::read_safetensors(path).map_err(|e| Error::format_file(path, e.to_string()))
    } else {
        super::pickle::read_state_dict(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    fn t(v: f32) -> Tensor {
        Tensor::full([2], v as f64, (Kind::Float, Device::Cpu))
    }

    #[test]
    fn single_and_sharded_safetensors() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let e = find_weights(d).unwrap_err().to_string();
        assert!(e.contains("no weights crossling can read") && e.contains("found no weight files"), "{e}");
        std::fs::write(d.join("tf_model.h5"), "x").unwrap();
        assert!(find_weights(d).unwrap_err().to_string().contains("found tf_model.h5"));

        Tensor::write_safetensors(&[("a", t(1.0)), ("b", t(2.0))], d.join("model-00001-of-00002.safetensors")).unwrap();
        Tensor::write_safetensors(&[("c", t(3.0))], d.join("model-00002-of-00002.safetensors")).unwrap();
        let index = serde_json::json!({"metadata": {}, "weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
            "c": "model-00002-of-00002.safetensors"}});
        std::fs::write(d.join("model.safetensors.index.json"), index.to_string()).unwrap();
        let w = find_weights(d).unwrap();
        assert_eq!(w.files.len(), 2);
        assert!(w.display_path().ends_with("model.safetensors.index.json"));
        let mut names: Vec<String> = w.read().unwrap().into_iter().map(|(n, _)| n).collect();
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(w.sha256().unwrap().len(), 64);

        let mut bad = index.clone();
        bad["weight_map"]["d"] = "model-00002-of-00002.safetensors".into();
        std::fs::write(d.join("model.safetensors.index.json"), bad.to_string()).unwrap();
        let e = find_weights(d).unwrap().read().unwrap_err().to_string();
        assert!(e.contains("1 tensor(s) of the index are not in their shard, e.g. 'd'"), "{e}");
        bad["weight_map"]["d"] = "model-00003-of-00003.safetensors".into();
        std::fs::write(d.join("model.safetensors.index.json"), bad.to_string()).unwrap();
        let e = find_weights(d).unwrap_err().to_string();
        assert!(e.contains("lists shard 'model-00003-of-00003.safetensors'"), "{e}");

        Tensor::write_safetensors(&[("a", t(1.0))], d.join("model.safetensors")).unwrap();
        let w = find_weights(d).unwrap();
        assert_eq!((w.index, w.files), (None, vec![d.join("model.safetensors")]));
    }
}
