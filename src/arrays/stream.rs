//! Writing safetensors files with metadata, whole or streamed.
//!
//! Format (<https://github.com/huggingface/safetensors>): an 8-byte little-endian header length `N`, a JSON header
//! of `N` bytes (`{"__metadata__": {str: str}, NAME: {"dtype", "shape", "data_offsets": [begin, end]}}`, padded
//! with spaces to a multiple of 8), then the tensors' little-endian bytes, each at `8 + N + begin`.
//!
//! [`StreamWriter`] lays the header out first from the tensors' shapes, so a large tensor can be filled piece by
//! piece at any element offset ([`StreamWriter::write_f32`]) without ever holding it in memory.
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tch::{Kind, Tensor};

use crate::error::{Error, Result};

/// Element types the writer supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F32,
    I64,
}

impl Dtype {
    fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "F32",
            Dtype::I64 => "I64",
        }
    }
    fn size(self) -> u64 {
        match self {
            Dtype::F32 => 4,
            Dtype::I64 => 8,
        }
    }
}

/// Name, element type and shape of one tensor of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
}

/// A safetensors file whose header is written and whose tensors are filled in afterwards.
#[derive(Debug)]
pub struct StreamWriter {
    file: File,
    path: PathBuf,
    data_start: u64,
    /// name → (dtype, byte offset of the tensor in the data section, element count)
    layout: BTreeMap<String, (Dtype, u64, u64)>,
}

impl StreamWriter {
    /// Creates `path` (truncating it) with the header for `tensors` and `metadata`; the data section is zeros
    /// until written.
    pub fn create(path: &Path, tensors: &[TensorSpec], metadata: &BTreeMap<String, String>) -> Result<Self> {
        let mut header = serde_json::Map::new();
        if !metadata.is_empty() {
            header.insert("__metadata__".into(), serde_json::to_value(metadata).unwrap_or_default());
        }
        let mut layout = BTreeMap::new();
        let mut offset = 0u64;
        for t in tensors {
            let n: u64 = t.shape.iter().map(|&d| d as u64).product();
            let bytes = n * t.dtype.size();
            header.insert(
                t.name.clone(),
                serde_json::json!({"dtype": t.dtype.name(), "shape": t.shape, "data_offsets": [offset, offset + bytes]}),
            );
            if layout.insert(t.name.clone(), (t.dtype, offset, n)).is_some() {
                return Err(Error::Invalid(format!("safetensors: tensor '{}' given twice", t.name)));
            }
            offset += bytes;
        }
        let mut json = serde_json::Value::Object(header).to_string().into_bytes();
        while !json.len().is_multiple_of(8) {
            json.push(b' ');
        }
        let mut file = File::create(path).map_err(|e| Error::io(path, e))?;
        file.write_all(&(json.len() as u64).to_le_bytes()).map_err(|e| Error::io(path, e))?;
        file.write_all(&json).map_err(|e| Error::io(path, e))?;
        let data_start = 8 + json.len() as u64;
        file.set_len(data_start + offset).map_err(|e| Error::io(path, e))?;
        Ok(StreamWriter { file, path: path.to_path_buf(), data_start, layout })
    }

    fn seek_to(&mut self, name: &str, dtype: Dtype, element: u64, count: u64) -> Result<()> {
        let &(d, start, n) = self
            .layout
            .get(name)
            .ok_or_else(|| Error::Invalid(format!("safetensors: no tensor '{name}' in the header")))?;
        if d != dtype || element + count > n {
            return Err(Error::Invalid(format!(
                "safetensors: writing {count} {dtype:?} elements at {element} into '{name}' ({n} {d:?} elements)"
            )));
        }
        let pos = self.data_start + start + element * dtype.size();
        self.file.seek(SeekFrom::Start(pos)).map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }

    /// Writes `values` into f32 tensor `name` starting at flat element `element`.
    pub fn write_f32(&mut self, name: &str, element: u64, values: &[f32]) -> Result<()> {
        self.seek_to(name, Dtype::F32, element, values.len() as u64)?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.file.write_all(&bytes).map_err(|e| Error::io(&self.path, e))
    }

    /// Writes `values` into i64 tensor `name` starting at flat element `element`.
    pub fn write_i64(&mut self, name: &str, element: u64, values: &[i64]) -> Result<()> {
        self.seek_to(name, Dtype::I64, element, values.len() as u64)?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.file.write_all(&bytes).map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes and fsyncs the file.
    pub fn finish(mut self) -> Result<()> {
        self.file.flush().map_err(|e| Error::io(&self.path, e))?;
        self.file.sync_all().map_err(|e| Error::io(&self.path, e))
    }
}

/// Writes whole tensors (converted to f32, or kept i64 when integer) with `metadata`.
pub fn write_tensors(path: &Path, tensors: &[(String, Tensor)], metadata: &BTreeMap<String, String>) -> Result<()> {
    let specs: Vec<TensorSpec> = tensors
        .iter()
        .map(|(name, t)| TensorSpec {
            name: name.clone(),
            dtype: if is_integer(t.kind()) { Dtype::I64 } else { Dtype::F32 },
            shape: t.size().iter().map(|&d| d as usize).collect(),
        })
        .collect();
    let mut w = StreamWriter::create(path, &specs, metadata)?;
    for ((name, t), spec) in tensors.iter().zip(&specs) {
        let flat = t.to_device(tch::Device::Cpu).contiguous().view([-1]);
        match spec.dtype {
            Dtype::F32 => {
                let v = Vec::<f32>::try_from(flat.to_kind(Kind::Float))
                    .map_err(|e| Error::Invalid(format!("tensor '{name}': {e}")))?;
                w.write_f32(name, 0, &v)?;
            }
            Dtype::I64 => {
                let v = Vec::<i64>::try_from(flat.to_kind(Kind::Int64))
                    .map_err(|e| Error::Invalid(format!("tensor '{name}': {e}")))?;
                w.write_i64(name, 0, &v)?;
            }
        }
    }
    w.finish()
}

fn is_integer(kind: Kind) -> bool {
    matches!(kind, Kind::Int64 | Kind::Int | Kind::Int16 | Kind::Int8 | Kind::Uint8)
}

/// The `__metadata__` of a safetensors file (empty when it has none).
pub fn read_metadata(path: &Path) -> Result<BTreeMap<String, String>> {
    let header = read_header(path)?;
    Ok(header
        .get("__metadata__")
        .and_then(|m| serde_json::from_value::<BTreeMap<String, String>>(m.clone()).ok())
        .unwrap_or_default())
}

/// The JSON header of a safetensors file.
pub fn read_header(path: &Path) -> Result<serde_json::Value> {
    use std::io::Read;
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len).map_err(|e| Error::io(path, e))?;
    let n = u64::from_le_bytes(len);
    if n > 100_000_000 {
        return Err(Error::format_file(path, format!("not a safetensors file (header length {n})")));
    }
    let mut buf = vec![0u8; n as usize];
    f.read_exact(&mut buf).map_err(|e| Error::io(path, e))?;
    serde_json::from_slice(&buf).map_err(|e| Error::format_file(path, format!("not a safetensors header: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_and_whole_writes_read_back_with_tch() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.safetensors");
        let meta: BTreeMap<String, String> = [("k".to_string(), "v".to_string())].into();
        let specs = vec![
            TensorSpec { name: "x".into(), dtype: Dtype::F32, shape: vec![2, 3] },
            TensorSpec { name: "ids".into(), dtype: Dtype::I64, shape: vec![3] },
        ];
        let mut w = StreamWriter::create(&p, &specs, &meta).unwrap();
        w.write_f32("x", 3, &[4.0, 5.0, 6.0]).unwrap();
        w.write_f32("x", 0, &[1.0, 2.0, 3.0]).unwrap();
        w.write_i64("ids", 0, &[7, -1, 9]).unwrap();
        assert!(w.write_f32("x", 5, &[1.0, 2.0]).is_err());
        assert!(w.write_f32("ids", 0, &[1.0]).is_err());
        w.finish().unwrap();
        let t: BTreeMap<String, Tensor> = Tensor::read_safetensors(&p).unwrap().into_iter().collect();
        assert_eq!(Vec::<f32>::try_from(t["x"].view([-1])).unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(t["x"].size(), [2, 3]);
        assert_eq!(Vec::<i64>::try_from(&t["ids"]).unwrap(), [7, -1, 9]);
        assert_eq!(read_metadata(&p).unwrap(), meta);

        let q = dir.path().join("b.safetensors");
        write_tensors(&q, &[("w".into(), Tensor::from_slice(&[1.5f64, 2.5]).view([1, 2]))], &BTreeMap::new()).unwrap();
        let t = Tensor::read_safetensors(&q).unwrap();
        assert_eq!(t[0].1.kind(), Kind::Float);
        assert_eq!(Vec::<f32>::try_from(t[0].1.view([-1])).unwrap(), [1.5, 2.5]);
        assert!(read_metadata(&q).unwrap().is_empty());
    }
}
