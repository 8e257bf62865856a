//! Arrays on disk: matrices and per-layer stacks as `.npy` and `.safetensors`, read and written without Python;
//! [`stream`]: safetensors with metadata, written whole or streamed piece by piece.
//!
//! **`.npy`** (NumPy format description, `numpy.lib.format`): the magic `\x93NUMPY`, a major/minor version, a
//! header length (u16 little-endian for v1, u32 for v2 and v3; v3 headers are UTF-8), then a Python dict literal
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (n, d), }` padded with spaces and ending in `\n`, then the
//! raw data. Read: little-endian (or byte-order-free `|`) `f2`, `f4`, `f8`, `i8`, C or Fortran order. Written:
//! v1 (v2 when the header outgrows u16), C order, header padded to a multiple of 64 bytes.
//!
//! **`.safetensors`** (Hugging Face): a u64 little-endian header length `N`, an `N`-byte JSON object mapping each
//! tensor name to `{"dtype", "shape", "data_offsets": [begin, end]}` (offsets relative to the end of the header;
//! an optional `__metadata__` entry of strings), then the data. Read and written: `F16`, `BF16`, `F32`, `F64`,
//! `I64`, little-endian, row-major.
//!
//! A matrix is a 2-D array `[rows, dim]`; a stack is a 3-D array `[layers, rows, dim]`. The matrix and stack
//! readers return f32 for f16/bf16/f32 data and f64 for f64/i64 data. Every error names the file, and where it
//! concerns the data, the shape and dtype.
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;
use tch::{Kind, Tensor};

pub mod stream;

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

fn element_size(kind: Kind) -> usize {
    match kind {
        Kind::Half | Kind::BFloat16 => 2,
        Kind::Float => 4,
        _ => 8,
    }
}

/// Build a tensor from little-endian bytes; checks the byte count against the shape.
fn from_le_bytes(file: &Path, data: &[u8], shape: &[i64], kind: Kind, dtype: &str) -> Result<Tensor> {
    let numel: i64 = shape.iter().product();
    let need = numel as usize * element_size(kind);
    if data.len() != need {
        return Err(Error::format_file(
            file,
            format!("shape {shape:?} of {dtype} needs {need} data bytes, the file holds {}", data.len()),
        ));
    }
    if cfg!(target_endian = "big") {
        return Err(Error::format_file(file, "reading little-endian arrays on a big-endian host is not supported"));
    }
    Tensor::f_from_data_size(data, shape, kind).map_err(|e| Error::format_file(file, format!("{shape:?} {dtype}: {e}")))
}

/// The value after `'key':` in a numpy header dict.
fn header_value<'a>(file: &Path, header: &'a str, key: &str) -> Result<&'a str> {
    let pat = format!("'{key}':");
    let at =
        header.find(&pat).ok_or_else(|| Error::format_file(file, format!("npy header has no '{key}': {header}")))?;
    Ok(header[at + pat.len()..].trim_start())
}

/// Parse an npy header into (kind, dtype string, fortran order, shape).
fn parse_npy_header(file: &Path, header: &str) -> Result<(Kind, String, bool, Vec<i64>)> {
    let descr = header_value(file, header, "descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|s| s.split_once('\''))
        .map(|(d, _)| d.to_string())
        .ok_or_else(|| Error::format_file(file, format!("npy header: unreadable descr in {header}")))?;
    let kind = match descr.as_str() {
        "<f2" => Kind::Half,
        "<f4" => Kind::Float,
        "<f8" => Kind::Double,
        "<i8" => Kind::Int64,
        d => {
            return Err(Error::format_file(
                file,
                format!("npy dtype '{d}' is not supported (little-endian f2, f4, f8 or i8 are)"),
            ))
        }
    };
    let fortran = header_value(file, header, "fortran_order")?;
    let fortran = if fortran.starts_with("True") {
        true
    } else if fortran.starts_with("False") {
        false
    } else {
        return Err(Error::format_file(file, format!("npy header: unreadable fortran_order in {header}")));
    };
    let shape = header_value(file, header, "shape")?;
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.split_once(')'))
        .map(|(s, _)| s)
        .ok_or_else(|| Error::format_file(file, format!("npy header: unreadable shape in {header}")))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<i64>()
                .map_err(|_| Error::format_file(file, format!("npy header: bad dimension '{s}' in {header}")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((kind, descr, fortran, shape))
}

/// Read an `.npy` file in its stored element kind (f16, f32, f64 or i64), C-contiguous.
pub fn read_npy(file: &Path) -> Result<Tensor> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, e))?;
    if bytes.len() < 10 || &bytes[..6] != NPY_MAGIC {
        return Err(Error::format_file(file, "not an .npy file (no \\x93NUMPY magic)"));
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(Error::format_file(file, format!("npy format version {v} is not supported (1, 2, 3 are)"))),
    };
    let data_start = start + header_len;
    if bytes.len() < data_start {
        return Err(Error::format_file(file, format!("truncated npy header ({header_len} bytes announced)")));
    }
    let header = std::str::from_utf8(&bytes[start..data_start])
        .map_err(|_| Error::format_file(file, "npy header is not UTF-8"))?;
    let (kind, dtype, fortran, shape) = parse_npy_header(file, header)?;
    if fortran && shape.len() > 1 {
        let reversed: Vec<i64> = shape.iter().rev().copied().collect();
        let t = from_le_bytes(file, &bytes[data_start..], &reversed, kind, &dtype)?;
        let perm: Vec<i64> = (0..shape.len() as i64).rev().collect();
        Ok(t.permute(perm).contiguous())
    } else {
        from_le_bytes(file, &bytes[data_start..], &shape, kind, &dtype)
    }
}

fn npy_descr(kind: Kind) -> Result<&'static str> {
    match kind {
        Kind::Half => Ok("<f2"),
        Kind::Float => Ok("<f4"),
        Kind::Double => Ok("<f8"),
        Kind::Int64 => Ok("<i8"),
        k => Err(Error::Invalid(format!("cannot write {k:?} to .npy (f16, f32, f64, i64 can be written)"))),
    }
}

fn tensor_bytes(t: &Tensor) -> Vec<u8> {
    let t = t.to_device(tch::Device::Cpu).contiguous();
    let numel = t.numel();
    let mut buf = vec![0u8; numel * element_size(t.kind())];
    t.copy_data_u8(&mut buf, numel);
    buf
}

/// Write a tensor (f16, f32, f64 or i64, any shape) as `.npy`, C order.
pub fn write_npy(file: &Path, t: &Tensor) -> Result<()> {
    let descr = npy_descr(t.kind())?;
    let shape = t.size();
    let dims = match shape.len() {
        1 => format!("{},", shape[0]),
        _ => shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}");
    let (version, prefix) = if header.len() + 11 <= u16::MAX as usize { (1u8, 10) } else { (2u8, 12) };
    let total = (prefix + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(total - prefix - header.len() - 1));
    header.push('\n');
    let mut out = Vec::with_capacity(total + t.numel() * element_size(t.kind()));
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&tensor_bytes(t));
    std::fs::write(file, out).map_err(|e| Error::io(file, e))
}

#[derive(serde::Deserialize, serde::Serialize)]
struct StEntry {
    dtype: String,
    shape: Vec<i64>,
    data_offsets: [usize; 2],
}

fn st_kind(file: &Path, dtype: &str) -> Result<Kind> {
    Ok(match dtype {
        "F16" => Kind::Half,
        "BF16" => Kind::BFloat16,
        "F32" => Kind::Float,
        "F64" => Kind::Double,
        "I64" => Kind::Int64,
        d => {
            return Err(Error::format_file(
                file,
                format!("safetensors dtype {d} is not supported (F16, BF16, F32, F64, I64 are)"),
            ))
        }
    })
}

/// The tensor a `.safetensors` file gives when none is named: its only one, else `hidden_states` when it holds one
/// (what `crossling features` writes, beside its offsets and ids).
pub const DEFAULT_TENSOR: &str = "hidden_states";

/// Read one tensor of a `.safetensors` file in its stored kind: the one named, else the only one or
/// [`DEFAULT_TENSOR`].
pub fn read_safetensors(file: &Path, name: Option<&str>) -> Result<Tensor> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, e))?;
    if bytes.len() < 8 {
        return Err(Error::format_file(file, "not a .safetensors file (shorter than its 8-byte header length)"));
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8])) as usize;
    if bytes.len() < 8 + n {
        return Err(Error::format_file(file, format!("truncated safetensors header ({n} bytes announced)")));
    }
    let header: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&bytes[8..8 + n])
        .map_err(|e| Error::format_file(file, format!("safetensors header is not a JSON object: {e}")))?;
    let names: Vec<&String> = header.keys().filter(|k| *k != "__metadata__").collect();
    let key = match name {
        Some(n) => header
            .get_key_value(n)
            .map(|(k, _)| k)
            .ok_or_else(|| Error::format_file(file, format!("no tensor named '{n}'; the file holds {names:?}")))?,
        None if names.len() == 1 => names[0],
        None => match header.get_key_value(DEFAULT_TENSOR) {
            Some((k, _)) => k,
            None => {
                return Err(Error::format_file(
                    file,
                    format!("holds {} tensors {names:?}; name one (FILE.safetensors#NAME)", names.len()),
                ))
            }
        },
    };
    let entry: StEntry = serde_json::from_value(header[key].clone())
        .map_err(|e| Error::format_file(file, format!("tensor '{key}': bad header entry: {e}")))?;
    let kind = st_kind(file, &entry.dtype)?;
    let data = &bytes[8 + n..];
    let [b, e] = entry.data_offsets;
    if b > e || e > data.len() {
        return Err(Error::format_file(
            file,
            format!("tensor '{key}' {:?}: data offsets [{b}, {e}] outside the {} data bytes", entry.shape, data.len()),
        ));
    }
    from_le_bytes(file, &data[b..e], &entry.shape, kind, &format!("{} '{key}'", entry.dtype))
}

/// Write named tensors (f16, bf16, f32, f64, i64) to a `.safetensors` file.
pub fn write_safetensors(file: &Path, tensors: &[(&str, &Tensor)]) -> Result<()> {
    let mut header = BTreeMap::new();
    let mut data = Vec::new();
    for (name, t) in tensors {
        let dtype = match t.kind() {
            Kind::Half => "F16",
            Kind::BFloat16 => "BF16",
            Kind::Float => "F32",
            Kind::Double => "F64",
            Kind::Int64 => "I64",
            k => return Err(Error::Invalid(format!("cannot write {k:?} tensor '{name}' to safetensors"))),
        };
        let b = tensor_bytes(t);
        let entry = StEntry { dtype: dtype.into(), shape: t.size(), data_offsets: [data.len(), data.len() + b.len()] };
        data.extend_from_slice(&b);
        header.insert(name.to_string(), entry);
    }
    let mut json = serde_json::to_vec(&header).map_err(|e| Error::Invalid(format!("safetensors header: {e}")))?;
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + json.len() + data.len());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&data);
    std::fs::write(file, out).map_err(|e| Error::io(file, e))
}

/// Split `FILE.safetensors#NAME` into the path and the tensor name.
pub fn split_spec(spec: &str) -> (&Path, Option<&str>) {
    match spec.rsplit_once('#') {
        Some((p, n)) if p.ends_with(".safetensors") && !n.is_empty() => (Path::new(p), Some(n)),
        _ => (Path::new(spec), None),
    }
}

/// `NAME[l]` → (`NAME`, `Some(l)`); anything else → (`name`, `None`).
fn layer_index(name: &str) -> (&str, Option<i64>) {
    if let Some(open) = name.strip_suffix(']').and_then(|n| n.rfind('[').map(|i| (&n[..i], &n[i + 1..]))) {
        if let Ok(l) = open.1.parse::<i64>() {
            return (open.0, Some(l));
        }
    }
    (name, None)
}

/// Read an array by extension: `.npy`, or `.safetensors` (with `#NAME` to pick a tensor), in its stored kind.
/// `#NAME[l]` picks entry `l` of the tensor's first axis (one layer of a stack `[layers, rows, dim]`).
pub fn read_array(spec: &str) -> Result<Tensor> {
    let (path, name) = split_spec(spec);
    let (name, layer) = match name.map(layer_index) {
        Some((n, l)) => (Some(n), l),
        None => (None, None),
    };
    let t = match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => read_npy(path)?,
        Some("safetensors") => read_safetensors(path, name)?,
        _ => return Err(Error::format_file(path, "unknown array format; expected .npy or .safetensors")),
    };
    match layer {
        None => Ok(t),
        Some(l) => {
            let s = t.size();
            if s.is_empty() || l < 0 || l >= s[0] {
                return Err(Error::format_file(
                    path,
                    format!("[{l}] is out of range for tensor '{}' of shape {s:?}", name.unwrap_or_default()),
                ));
            }
            Ok(t.get(l))
        }
    }
}

fn as_float(t: Tensor) -> Tensor {
    match t.kind() {
        Kind::Float | Kind::Double => t,
        Kind::Int64 => t.to_kind(Kind::Double),
        _ => t.to_kind(Kind::Float),
    }
}

/// Read a matrix `[rows, dim]` (f32 or f64), checking it is 2-D, non-empty and finite.
pub fn read_matrix(spec: &str) -> Result<Tensor> {
    let t = as_float(read_array(spec)?);
    let (path, _) = split_spec(spec);
    let s = t.size();
    if s.len() != 2 || s[0] == 0 || s[1] == 0 {
        return Err(Error::format_file(path, format!("expected a non-empty matrix [rows, dim], got shape {s:?}")));
    }
    check_finite(&t, path)?;
    Ok(t)
}

/// Read a per-layer stack `[layers, rows, dim]` (f32 or f64), checking it is 3-D, non-empty and finite.
pub fn read_stack(spec: &str) -> Result<Tensor> {
    let t = as_float(read_array(spec)?);
    let (path, _) = split_spec(spec);
    let s = t.size();
    if s.len() != 3 || s.contains(&0) {
        return Err(Error::format_file(
            path,
            format!("expected a non-empty layer stack [layers, rows, dim], got shape {s:?}"),
        ));
    }
    check_finite(&t, path)?;
    Ok(t)
}

/// Fail on the first NaN or infinity, naming the file, the row and column (and layer, for a stack).
pub fn check_finite(t: &Tensor, file: &Path) -> Result<()> {
    if !t.is_floating_point() {
        return Ok(());
    }
    let bad = t.isfinite().logical_not();
    if bad.any().int64_value(&[]) == 0 {
        return Ok(());
    }
    let first = bad.nonzero().get(0).to_kind(Kind::Int64).to_device(tch::Device::Cpu).contiguous();
    let at = Vec::<i64>::try_from(&first).map_err(|e| Error::Invalid(format!("tensor to i64 values: {e}")))?;
    let value = t.double_value(&at);
    let s = t.size();
    let place = match at.as_slice() {
        [r, c] => format!("row {r}, column {c}"),
        [l, r, c] => format!("layer {l}, row {r}, column {c}"),
        other => format!("index {other:?}"),
    };
    Err(Error::format_file(file, format!("non-finite value {value} at {place} (shape {s:?}, 0-based)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: Kind) -> Tensor {
        let t = Tensor::arange(24, (Kind::Double, tch::Device::Cpu)).reshape([2, 3, 4]);
        if kind == Kind::Int64 {
            t.to_kind(kind)
        } else {
            (t * 0.5).to_kind(kind)
        }
    }

    #[test]
    fn npy_round_trips_every_kind_and_rank() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [Kind::Half, Kind::Float, Kind::Double, Kind::Int64] {
            for t in [sample(kind), sample(kind).get(1), sample(kind).get(0).get(2)] {
                let p = dir.path().join("a.npy");
                write_npy(&p, &t).unwrap();
                let bytes = std::fs::read(&p).unwrap();
                let header_end = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
                assert_eq!(header_end % 64, 0);
                let back = read_npy(&p).unwrap();
                assert_eq!(back.kind(), kind);
                assert_eq!(back.size(), t.size());
                assert!(back.equal(&t), "{kind:?} {:?}", t.size());
            }
        }
    }

    /// Hand-written v2 and v3 headers with Fortran order: the data are the transpose laid out column-major.
    #[test]
    fn npy_v2_v3_and_fortran_order() {
        let dir = tempfile::tempdir().unwrap();
        for version in [2u8, 3] {
            let header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n";
            let mut bytes = NPY_MAGIC.to_vec();
            bytes.extend_from_slice(&[version, 0]);
            bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
            bytes.extend_from_slice(header.as_bytes());
            // Column-major [[1,2,3],[4,5,6]] is 1,4,2,5,3,6.
            for v in [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            let p = dir.path().join(format!("v{version}.npy"));
            std::fs::write(&p, bytes).unwrap();
            let t = read_npy(&p).unwrap();
            assert_eq!(t.size(), [2, 3]);
            assert_eq!(Vec::<f32>::try_from(t.reshape([-1])).unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        }
    }

    #[test]
    fn npy_errors_name_file_and_shape() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("short.npy");
        write_npy(&p, &sample(Kind::Float)).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.truncate(bytes.len() - 4);
        std::fs::write(&p, &bytes).unwrap();
        let e = read_npy(&p).unwrap_err().to_string();
        assert!(e.contains("short.npy") && e.contains("[2, 3, 4]") && e.contains("96"), "{e}");
        let e = read_matrix(p.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("short.npy"), "{e}");
        let big = dir.path().join("big.npy");
        let mut b = NPY_MAGIC.to_vec();
        let h = "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n";
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(&[0; 4]);
        std::fs::write(&big, b).unwrap();
        assert!(read_npy(&big).unwrap_err().to_string().contains("'>f4'"));
        let stack = dir.path().join("s.npy");
        write_npy(&stack, &sample(Kind::Float)).unwrap();
        let e = read_matrix(stack.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("s.npy") && e.contains("[2, 3, 4]"), "{e}");
        assert_eq!(read_stack(stack.to_str().unwrap()).unwrap().size(), [2, 3, 4]);
        let not = dir.path().join("x.npy");
        std::fs::write(&not, b"hello world").unwrap();
        assert!(read_npy(&not).unwrap_err().to_string().contains("magic"));
    }

    #[test]
    fn safetensors_round_trip_and_named_tensors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.safetensors");
        let a = sample(Kind::Float);
        let b = sample(Kind::BFloat16).get(0);
        write_safetensors(&p, &[("layers", &a), ("emb", &b)]).unwrap();
        let spec = format!("{}#layers", p.display());
        assert!(read_array(&spec).unwrap().equal(&a));
        assert!(read_safetensors(&p, Some("emb")).unwrap().equal(&b));
        assert_eq!(read_stack(&spec).unwrap().size(), [2, 3, 4]);
        let layer = read_matrix(&format!("{}#layers[1]", p.display())).unwrap();
        assert!(layer.equal(&a.get(1)));
        let e = read_matrix(&format!("{}#layers[2]", p.display())).unwrap_err().to_string();
        assert!(e.contains("f.safetensors") && e.contains("[2] is out of range") && e.contains("[2, 3, 4]"), "{e}");
        let e = read_safetensors(&p, None).unwrap_err().to_string();
        assert!(e.contains("f.safetensors") && e.contains("emb") && e.contains("layers"), "{e}");
        let e = read_safetensors(&p, Some("nope")).unwrap_err().to_string();
        assert!(e.contains("nope"), "{e}");
        let one = dir.path().join("one.safetensors");
        write_safetensors(&one, &[("x", &a.get(1).to_kind(Kind::Double))]).unwrap();
        assert_eq!(read_matrix(one.to_str().unwrap()).unwrap().kind(), Kind::Double);
        // A features file: hidden_states beside offsets, read without a name.
        let feats = dir.path().join("feats.safetensors");
        let offsets = Tensor::from_slice(&[0i64, 2, 3]);
        write_safetensors(&feats, &[("hidden_states", &a), ("offsets", &offsets)]).unwrap();
        assert!(read_stack(feats.to_str().unwrap()).unwrap().equal(&a));
    }

    #[test]
    fn finiteness_check_names_row_and_column() {
        let t = Tensor::zeros([3, 4], (Kind::Float, tch::Device::Cpu));
        assert!(check_finite(&t, Path::new("ok.npy")).is_ok());
        let _ = t.get(2).get(1).fill_(f64::NAN);
        let e = check_finite(&t, Path::new("emb.npy")).unwrap_err().to_string();
        assert!(e.contains("emb.npy") && e.contains("row 2, column 1") && e.contains("NaN"), "{e}");
        let s = Tensor::zeros([2, 3, 4], (Kind::Double, tch::Device::Cpu));
        let _ = s.get(1).get(0).get(3).fill_(f64::INFINITY);
        let e = check_finite(&s, Path::new("st.npy")).unwrap_err().to_string();
        assert!(e.contains("layer 1, row 0, column 3") && e.contains("inf"), "{e}");
    }
}
