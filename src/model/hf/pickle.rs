//! Reading a PyTorch `pytorch_model.bin` (`torch.save` of a state dict) without Python, in both of its formats
//! (torch/serialization.py, `_save` and `_legacy_save`):
//!
//! - **zip** (PyTorch ≥ 1.6): a zip archive `<name>/data.pkl` + `<name>/data/<key>` (+ `byteorder`, `version`).
//!   `data.pkl` is a Python pickle (protocol 2) of a dict `name → torch._utils._rebuild_tensor_v2(storage, offset,
//!   size, stride, …)`, where each `storage` is a persistent id `('storage', torch.<Type>Storage, key, location,
//!   numel)` naming the raw little-endian bytes in `data/<key>`.
//! - **legacy** (before 1.6; old hub checkpoints such as bert-base-multilingual-cased's): five pickles in a row — the
//!   magic number 0x1950a86a20f9469cfc6c, the protocol version, a dict of system facts (`little_endian`), the state
//!   dict as above but with persistent ids `('storage', type, key, location, numel, view_metadata)`, and the list
//!   of storage keys — then, for each key of that list in order, its element count as a little-endian int64 and its
//!   raw bytes.
//!
//! This module runs the small subset of the pickle machine that such files use and rebuilds each tensor as
//! `as_strided(storage, size, stride, offset)`. Anything else (a pickle that needs arbitrary Python objects, a
//! big-endian file, a legacy storage view) is refused with a message saying how to convert the file to
//! `model.safetensors`.
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use tch::{Kind, Tensor};

use crate::error::{Error, Result};

/// How to convert a checkpoint this reader cannot handle.
const CONVERT_HINT: &str = "convert it with Python: `from transformers import BertForMaskedLM; \
     BertForMaskedLM.from_pretrained(DIR).save_pretrained(DIR)` writes model.safetensors";

#[derive(Debug, Clone)]
#[allow(dead_code)] // scalar payloads are only shown in error messages (Debug)
enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Tuple(Vec<Value>),
    List(Vec<Value>),
    Dict(Vec<(Value, Value)>),
    Global(String, String),
    Storage {
        key: String,
        kind: Kind,
    },
    Tensor {
        key: String,
        kind: Kind,
        offset: i64,
        size: Vec<i64>,
        stride: Vec<i64>,
    },
    Mark,
    /// An integer too wide for `i64` (`LONG1` of more than 8 bytes), as its little-endian bytes.
    BigInt(Vec<u8>),
    /// The result of calling something this reader does not model.
    Opaque(String),
}

/// The value of a legacy file's first pickle, 0x1950a86a20f9469cfc6c, as little-endian bytes.
const LEGACY_MAGIC: [u8; 10] = [0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];

/// Every tensor of the state dict in `path`, in file order.
pub fn read_state_dict(path: &Path) -> Result<Vec<(String, Tensor)>> {
    let bad = |msg: String| Error::format_file(path, format!("{msg}; {CONVERT_HINT}"));
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).map_err(|e| Error::io(path, e))?;
    if head[..n].starts_with(b"PK") {
        read_zip(path, &bad)
    } else if head[..n].first() == Some(&0x80) {
        read_legacy(path, &bad) // a pickle (PROTO opcode, any protocol): the legacy format or nothing
    } else {
        Err(bad("neither a PyTorch zip checkpoint nor a legacy torch.save file".into()))
    }
}

/// The zip format (see the module docs).
fn read_zip(path: &Path, bad: &dyn Fn(String) -> Error) -> Result<Vec<(String, Tensor)>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable PyTorch zip checkpoint ({e})")))?;
    let pkl = zip
        .file_names()
        .find(|n| n.ends_with("/data.pkl") || *n == "data.pkl")
        .map(str::to_string)
        .ok_or_else(|| bad("no data.pkl in the archive".into()))?;
    let prefix = pkl.strip_suffix("data.pkl").unwrap_or_default().to_string();
    let mut bytes = Vec::new();
    zip.by_name(&pkl)
        .and_then(|mut f| f.read_to_end(&mut bytes).map_err(Into::into))
        .map_err(|e| bad(format!("reading {pkl}: {e}")))?;
    if let Ok(mut f) = zip.by_name(&format!("{prefix}byteorder")) {
        let mut order = String::new();
        let _ = f.read_to_string(&mut order);
        if order.trim() == "big" {
            return Err(bad("big-endian checkpoint".into()));
        }
    }
    let root = state_dict(Machine::new(&bytes).run().map_err(|m| bad(format!("{pkl}: {m}")))?, bad)?;
    let mut storages: HashMap<String, Tensor> = HashMap::new();
    for (_, key, kind, ..) in &root {
        if !storages.contains_key(key) {
            let entry = format!("{prefix}data/{key}");
            let mut raw = Vec::new();
            zip.by_name(&entry)
                .and_then(|mut f| f.read_to_end(&mut raw).map_err(Into::into))
                .map_err(|e| bad(format!("reading storage {entry}: {e}")))?;
            let elem = kind.elt_size_in_bytes();
            if raw.len() % elem != 0 {
                return Err(bad(format!("storage {entry} has {} bytes, not a multiple of {elem}", raw.len())));
            }
            storages.insert(key.clone(), Tensor::from_data_size(&raw, &[(raw.len() / elem) as i64], *kind));
        }
    }
    rebuild(root, &storages, bad)
}

/// The legacy format (see the module docs).
fn read_legacy(path: &Path, bad: &dyn Fn(String) -> Error) -> Result<Vec<(String, Tensor)>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut m = Machine::new(&bytes);
    if !matches!(m.run_one(), Ok(Value::BigInt(b)) if b == LEGACY_MAGIC) {
        return Err(bad("neither a PyTorch zip checkpoint nor a legacy torch.save file (a pickle whose first value \
                        is not torch's magic number 0x1950a86a20f9469cfc6c)"
            .into()));
    }
    let mut next = |what: &str| m.run_one().map_err(|e| bad(format!("{what}: {e}")));
    next("the protocol version")?;
    let Value::Dict(info) = next("the system facts")? else {
        return Err(bad("the third pickle, the system facts, is not a dict".into()));
    };
    let little = info.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == "little_endian"));
    if matches!(little, Some((_, Value::Bool(false)))) {
        return Err(bad("big-endian checkpoint".into()));
    }
    let root = state_dict(next("the state dict")?, bad)?;
    let Value::List(keys) = next("the list of storage keys")? else {
        return Err(bad("the pickle after the state dict is not the list of storage keys".into()));
    };
    // Every storage the state-dict pickle named (an unused one, e.g. of an optimizer's state, is read and dropped).
    let named = std::mem::take(&mut m.storages);
    let mut pos = m.pos;
    let mut storages: HashMap<String, Tensor> = HashMap::new();
    for key in keys {
        let Value::Str(key) = key else { return Err(bad("a storage key is not a string".into())) };
        let &(kind, want) = named.get(&key).ok_or_else(|| bad(format!("storage {key} is named by no tensor")))?;
        let truncated = || bad(format!("truncated: storage {key} ends past the file's {} bytes", bytes.len()));
        let count = bytes.get(pos..pos + 8).ok_or_else(truncated)?;
        let numel = i64::from_le_bytes(count.try_into().expect("8 bytes"));
        if let Some(w) = want.filter(|&w| w != numel) {
            return Err(bad(format!("storage {key} holds {numel} elements where the pickle says {w}")));
        }
        let len = usize::try_from(numel).map_err(|_| bad(format!("storage {key} has {numel} elements")))?;
        let start = pos + 8;
        let end = len.checked_mul(kind.elt_size_in_bytes()).and_then(|n| n.checked_add(start));
        let raw = end.and_then(|e| bytes.get(start..e)).ok_or_else(truncated)?;
        storages.insert(key, Tensor::from_data_size(raw, &[numel], kind));
        pos = start + raw.len();
    }
    rebuild(root, &storages, bad)
}

/// A tensor of the state dict before its storage is read: name, storage key, kind, offset, size, stride.
type Pending = (String, String, Kind, i64, Vec<i64>, Vec<i64>);

/// The entries of a state-dict pickle (or of its `state_dict` entry) as pending tensors; names starting with `_`
/// that are not tensors (metadata) are skipped, any other non-tensor is an error.
fn state_dict(root: Value, bad: &dyn Fn(String) -> Error) -> Result<Vec<Pending>> {
    let items = match root {
        Value::Dict(items) => match items.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == "state_dict")) {
            Some((_, Value::Dict(inner))) => inner.clone(),
            _ => items,
        },
        other => return Err(bad(format!("the pickle holds {}, not a state dict", describe(&other)))),
    };
    let mut out = Vec::new();
    for (k, v) in items {
        let Value::Str(name) = k else { continue };
        match v {
            Value::Tensor { key, kind, offset, size, stride } => out.push((name, key, kind, offset, size, stride)),
            _ if name.starts_with('_') => {}
            other => return Err(bad(format!("entry '{name}' is {}, not a tensor", describe(&other)))),
        }
    }
    Ok(out)
}

/// Each pending tensor as a view of its storage, copied out.
fn rebuild(
    pending: Vec<Pending>,
    storages: &HashMap<String, Tensor>,
    bad: &dyn Fn(String) -> Error,
) -> Result<Vec<(String, Tensor)>> {
    let mut out = Vec::new();
    for (name, key, _, offset, size, stride) in pending {
        let storage = storages.get(&key).ok_or_else(|| bad(format!("tensor '{name}': storage {key} was not read")))?;
        let numel: i64 = storage.size()[0];
        let reach = offset + size.iter().zip(&stride).map(|(&n, &s)| (n - 1).max(0) * s).sum::<i64>();
        if size.iter().all(|&n| n > 0) && reach >= numel {
            return Err(bad(format!("tensor '{name}' reaches element {reach} of a storage of {numel}")));
        }
        out.push((name, storage.as_strided(size.as_slice(), stride.as_slice(), Some(offset)).copy()));
    }
    Ok(out)
}

fn describe(v: &Value) -> String {
    match v {
        Value::Opaque(what) => format!("an object built by {what}"),
        Value::Global(m, n) => format!("the global {m}.{n}"),
        other => format!("{:?}", std::mem::discriminant(other)).replace("Discriminant", "a value "),
    }
}

fn storage_kind(name: &str) -> Option<Kind> {
    Some(match name {
        "FloatStorage" => Kind::Float,
        "HalfStorage" => Kind::Half,
        "BFloat16Storage" => Kind::BFloat16,
        "DoubleStorage" => Kind::Double,
        "LongStorage" => Kind::Int64,
        "IntStorage" => Kind::Int,
        "ShortStorage" => Kind::Int16,
        "CharStorage" => Kind::Int8,
        "ByteStorage" => Kind::Uint8,
        "BoolStorage" => Kind::Bool,
        _ => return None,
    })
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    stack: Vec<Value>,
    memo: HashMap<u32, Value>,
    /// Every storage a persistent id named: key → kind and element count (when the id gives it).
    storages: HashMap<String, (Kind, Option<i64>)>,
}

type Step<T> = std::result::Result<T, String>;

impl<'a> Machine<'a> {
    fn new(data: &'a [u8]) -> Self {
        Machine { data, pos: 0, stack: Vec::new(), memo: HashMap::new(), storages: HashMap::new() }
    }

    fn take(&mut self, n: usize) -> Step<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or("truncated pickle")?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Step<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Step<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| "truncated pickle")?))
    }
    fn line(&mut self) -> Step<String> {
        let start = self.pos;
        while self.pos < self.data.len() && self.data[self.pos] != b'\n' {
            self.pos += 1;
        }
        let s = String::from_utf8_lossy(&self.data[start..self.pos]).to_string();
        self.pos += 1;
        Ok(s)
    }
    fn pop(&mut self) -> Step<Value> {
        self.stack.pop().ok_or_else(|| "pickle stack underflow".to_string())
    }
    fn pop_mark(&mut self) -> Step<Vec<Value>> {
        let i = self.stack.iter().rposition(|v| matches!(v, Value::Mark)).ok_or("pickle MARK missing")?;
        let items = self.stack.split_off(i + 1);
        self.stack.pop();
        Ok(items)
    }
    fn top(&mut self) -> Step<&mut Value> {
        self.stack.last_mut().ok_or_else(|| "pickle stack underflow".to_string())
    }
    fn str_of(&mut self, n: usize) -> Step<Value> {
        Ok(Value::Str(String::from_utf8_lossy(self.take(n)?).to_string()))
    }

    /// Runs the pickle that starts at the current position, to its `STOP`.
    fn run(mut self) -> Step<Value> {
        self.run_one()
    }

    /// Runs one pickle from the current position and leaves the position after its `STOP` (a legacy file holds
    /// several in a row); each pickle has its own stack and memo.
    fn run_one(&mut self) -> Step<Value> {
        self.stack.clear();
        self.memo.clear();
        loop {
            let op = self.u8()?;
            match op {
                0x80 => {
                    self.u8()?; // PROTO
                }
                0x95 => {
                    self.take(8)?; // FRAME
                }
                b'.' => return self.pop(),
                b'(' => self.stack.push(Value::Mark),
                b'}' => self.stack.push(Value::Dict(Vec::new())),
                b']' => self.stack.push(Value::List(Vec::new())),
                b')' => self.stack.push(Value::Tuple(Vec::new())),
                b'N' => self.stack.push(Value::None),
                0x88 => self.stack.push(Value::Bool(true)),
                0x89 => self.stack.push(Value::Bool(false)),
                b'K' => {
                    let v = self.u8()? as i64;
                    self.stack.push(Value::Int(v));
                }
                b'M' => {
                    let b = self.take(2)?;
                    self.stack.push(Value::Int(u16::from_le_bytes([b[0], b[1]]) as i64));
                }
                b'J' => {
                    let v = self.u32()? as i32 as i64;
                    self.stack.push(Value::Int(v));
                }
                0x8a => {
                    let n = self.u8()? as usize;
                    let b = self.take(n)?;
                    if n > 8 {
                        self.stack.push(Value::BigInt(b.to_vec()));
                        continue;
                    }
                    let mut buf = if b.last().is_some_and(|&x| x & 0x80 != 0) { [0xffu8; 8] } else { [0u8; 8] };
                    buf[..n].copy_from_slice(b);
                    self.stack.push(Value::Int(i64::from_le_bytes(buf)));
                }
                b'G' => {
                    let b = self.take(8)?;
                    self.stack.push(Value::Float(f64::from_be_bytes(b.try_into().map_err(|_| "truncated")?)));
                }
                b'X' => {
                    let n = self.u32()? as usize;
                    let v = self.str_of(n)?;
                    self.stack.push(v);
                }
                0x8c => {
                    let n = self.u8()? as usize;
                    let v = self.str_of(n)?;
                    self.stack.push(v);
                }
                0x8d => {
                    let b = self.take(8)?;
                    let n = u64::from_le_bytes(b.try_into().map_err(|_| "truncated")?) as usize;
                    let v = self.str_of(n)?;
                    self.stack.push(v);
                }
                b'C' => {
                    let n = self.u8()? as usize;
                    self.take(n)?;
                    self.stack.push(Value::Opaque("bytes".into()));
                }
                b'B' => {
                    let n = self.u32()? as usize;
                    self.take(n)?;
                    self.stack.push(Value::Opaque("bytes".into()));
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.stack.push(Value::Global(module, name));
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    match (module, name) {
                        (Value::Str(m), Value::Str(n)) => self.stack.push(Value::Global(m, n)),
                        _ => return Err("STACK_GLOBAL needs two strings".into()),
                    }
                }
                b'q' => {
                    let i = self.u8()? as u32;
                    let v = self.top()?.clone();
                    self.memo.insert(i, v);
                }
                b'r' => {
                    let i = self.u32()?;
                    let v = self.top()?.clone();
                    self.memo.insert(i, v);
                }
                0x94 => {
                    let i = self.memo.len() as u32;
                    let v = self.top()?.clone();
                    self.memo.insert(i, v);
                }
                b'h' | b'j' => {
                    let i = if op == b'h' { self.u8()? as u32 } else { self.u32()? };
                    let v = self.memo.get(&i).cloned().ok_or_else(|| format!("memo {i} missing"))?;
                    self.stack.push(v);
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::Tuple(items));
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    let at = self.stack.len().checked_sub(n).ok_or("pickle stack underflow")?;
                    let items = self.stack.split_off(at);
                    self.stack.push(Value::Tuple(items));
                }
                b'l' => {
                    let items = self.pop_mark()?;
                    self.stack.push(Value::List(items));
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    let pairs =
                        items.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0].clone(), c[1].clone())).collect();
                    self.stack.push(Value::Dict(pairs));
                }
                b'a' => {
                    let v = self.pop()?;
                    if let Value::List(l) = self.top()? {
                        l.push(v);
                    }
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    if let Value::List(l) = self.top()? {
                        l.extend(items);
                    }
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    if let Value::Dict(d) = self.top()? {
                        d.push((k, v));
                    }
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    if let Value::Dict(d) = self.top()? {
                        d.extend(items.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0].clone(), c[1].clone())));
                    }
                }
                b'Q' => {
                    let pid = self.pop()?;
                    let (storage, numel) = persistent(pid)?;
                    if let Value::Storage { key, kind } = &storage {
                        self.storages.insert(key.clone(), (*kind, numel));
                    }
                    self.stack.push(storage);
                }
                b'R' => {
                    let args = self.pop()?;
                    let func = self.pop()?;
                    self.stack.push(call(func, args)?);
                }
                0x81 => {
                    let _args = self.pop()?;
                    let cls = self.pop()?;
                    self.stack.push(Value::Opaque(format!("{cls:?}")));
                }
                b'b' => {
                    self.pop()?; // BUILD: object state (e.g. an OrderedDict's _metadata) is not needed
                }
                other => return Err(format!("unsupported pickle opcode 0x{other:02x} at byte {}", self.pos - 1)),
            }
        }
    }
}

/// The storage a persistent id names, and its element count when the id gives it as an integer.
fn persistent(pid: Value) -> Step<(Value, Option<i64>)> {
    let Value::Tuple(items) = pid else { return Err("persistent id is not a tuple".into()) };
    match items.as_slice() {
        // zip: ('storage', type, key, location, numel); legacy: the same and a view's metadata (None: no view).
        [Value::Str(tag), Value::Global(_, ty), Value::Str(key), _location, numel, rest @ ..]
            if tag == "storage" && rest.len() <= 1 =>
        {
            if !matches!(rest, [] | [Value::None]) {
                return Err(format!("storage {key} is a legacy storage view, which this reader does not rebuild"));
            }
            let kind = storage_kind(ty).ok_or_else(|| format!("unsupported storage type {ty}"))?;
            let numel = if let Value::Int(n) = numel { Some(*n) } else { None };
            Ok((Value::Storage { key: key.clone(), kind }, numel))
        }
        _ => Err("persistent id is not ('storage', type, key, location, numel[, view])".into()),
    }
}

fn ints(v: &Value) -> Step<Vec<i64>> {
    match v {
        Value::Tuple(items) | Value::List(items) => items
            .iter()
            .map(|x| match x {
                Value::Int(n) => Ok(*n),
                _ => Err("tensor size or stride is not an integer tuple".to_string()),
            })
            .collect(),
        _ => Err("tensor size or stride is not a tuple".into()),
    }
}

fn call(func: Value, args: Value) -> Step<Value> {
    let Value::Global(module, name) = &func else { return Ok(Value::Opaque("a non-global callable".into())) };
    let args = match args {
        Value::Tuple(a) => a,
        _ => return Err(format!("arguments of {module}.{name} are not a tuple")),
    };
    match (module.as_str(), name.as_str()) {
        ("torch._utils", "_rebuild_tensor_v2") | ("torch._utils", "_rebuild_tensor") => match args.as_slice() {
            [Value::Storage { key, kind }, Value::Int(offset), size, stride, ..] => Ok(Value::Tensor {
                key: key.clone(),
                kind: *kind,
                offset: *offset,
                size: ints(size)?,
                stride: ints(stride)?,
            }),
            _ => Err(format!("unexpected arguments to {module}.{name}")),
        },
        ("torch._utils", "_rebuild_parameter") => {
            args.into_iter().next().ok_or_else(|| "empty _rebuild_parameter".into())
        }
        ("collections", "OrderedDict") => Ok(Value::Dict(Vec::new())),
        _ => Ok(Value::Opaque(format!("{module}.{name}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neither_format_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pytorch_model.bin");
        for bytes in [&b"\x80\x02}q\x00."[..], b"{\"w\": 1}", b""] {
            std::fs::write(&p, bytes).unwrap();
            let e = read_state_dict(&p).unwrap_err().to_string();
            assert!(
                e.contains("pytorch_model.bin")
                    && e.contains("neither a PyTorch zip checkpoint nor a legacy torch.save file")
                    && e.contains("save_pretrained"),
                "{e}"
            );
        }
    }

    /// tests/fixtures/legacy_checkpoint.bin, written by `torch.save(…, _use_new_zipfile_serialization=False)` (its
    /// generator beside it): a tensor, its transpose and a tail view sharing one storage, and an int64 tensor.
    fn legacy_fixture() -> Vec<u8> {
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/legacy_checkpoint.bin")).unwrap()
    }

    #[test]
    fn a_legacy_checkpoint_reads_as_torch_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pytorch_model.bin");
        std::fs::write(&p, legacy_fixture()).unwrap();
        let tensors = read_state_dict(&p).unwrap();
        let names: Vec<&str> = tensors.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["w", "w_t", "tail", "ids"]);
        let floats = |t: &Tensor| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap();
        assert_eq!(tensors[0].1.size(), [2, 3]);
        assert_eq!(floats(&tensors[0].1), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]);
        assert_eq!(tensors[1].1.size(), [3, 2]);
        assert_eq!(floats(&tensors[1].1), [0.0, 1.5, 0.5, 2.0, 1.0, 2.5]);
        assert_eq!(floats(&tensors[2].1), [1.0, 1.5, 2.0, 2.5]);
        assert_eq!(tensors[3].1.kind(), Kind::Int64);
        assert_eq!(Vec::<i64>::try_from(&tensors[3].1).unwrap(), [7, -1, 40_000_000_000]);
    }

    #[test]
    fn a_legacy_checkpoint_dict_with_other_storages_and_protocol_4_reads() {
        // {"state_dict": the same tensors, "optimizer": {"step": 5 doubles}}, pickled with protocol 4 (FRAME).
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pytorch_model.bin");
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/legacy_checkpoint_nested_p4.bin");
        std::fs::copy(fixture, &p).unwrap();
        let tensors = read_state_dict(&p).unwrap();
        let names: Vec<&str> = tensors.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["w", "w_t", "tail", "ids"]);
        assert_eq!(Vec::<f32>::try_from(tensors[2].1.shallow_clone()).unwrap(), [1.0, 1.5, 2.0, 2.5]);
    }

    #[test]
    fn a_storage_whose_count_disagrees_with_its_pickle_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pytorch_model.bin");
        let mut bytes = legacy_fixture();
        // The keys' list ends with APPENDS, STOP; the first storage's int64 element count (6) follows.
        let at = bytes.windows(10).position(|w| w == [b'e', b'.', 6, 0, 0, 0, 0, 0, 0, 0]).unwrap() + 2;
        bytes[at] = 5;
        std::fs::write(&p, &bytes).unwrap();
        let e = read_state_dict(&p).unwrap_err().to_string();
        assert!(e.contains("holds 5 elements where the pickle says 6"), "{e}");
    }

    #[test]
    fn a_truncated_legacy_checkpoint_names_the_storage_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pytorch_model.bin");
        let full = legacy_fixture();
        std::fs::write(&p, &full[..full.len() - 3]).unwrap();
        let e = read_state_dict(&p).unwrap_err().to_string();
        assert!(e.contains("pytorch_model.bin") && e.contains("truncated: storage"), "{e}");
        // Cut inside the state dict's pickle.
        std::fs::write(&p, &full[..300]).unwrap();
        let e = read_state_dict(&p).unwrap_err().to_string();
        assert!(e.contains("the state dict: truncated pickle"), "{e}");
    }

    #[test]
    fn pickle_machine_reads_a_protocol_2_state_dict() {
        // Hand-assembled: OrderedDict([('w', _rebuild_tensor_v2(pid, 1, (2,), (1,), False, OrderedDict()))])
        let mut p: Vec<u8> = vec![0x80, 2];
        p.extend(b"ccollections\nOrderedDict\nq\x00)Rq\x01(X\x01\x00\x00\x00wq\x02");
        p.extend(b"ctorch._utils\n_rebuild_tensor_v2\nq\x03((X\x07\x00\x00\x00storageq\x04ctorch\nFloatStorage\nq\x05");
        p.extend(b"X\x01\x00\x00\x000q\x06X\x03\x00\x00\x00cpuq\x07K\x04tq\x08QK\x01K\x02\x85K\x01\x85\x89h\x00)Rq\x09tq\x0aRq\x0bu}b.");
        let v = Machine::new(&p).run().unwrap();
        let Value::Dict(items) = v else { panic!("{v:?}") };
        assert_eq!(items.len(), 1);
        match &items[0].1 {
            Value::Tensor { key, kind, offset, size, stride } => {
                assert_eq!(
                    (key.as_str(), *kind, *offset, size.as_slice(), stride.as_slice()),
                    ("0", Kind::Float, 1, &[2i64][..], &[1i64][..])
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
