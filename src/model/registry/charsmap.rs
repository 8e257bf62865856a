//! A SentencePiece `precompiled_charsmap` built from a per-code-point normaliser, so that a `tokenizer.json`
//! `Precompiled` normaliser (read by the `tokenizers` crate and by `transformers`) applies exactly that map.
//!
//! Format (SentencePiece `normalizer.cc`, read by the `spm_precompiled` crate): u32 little-endian byte size of the
//! trie, the trie as u32 units of a darts-clone double array over the UTF-8 bytes of the keys, then the
//! replacements, each UTF-8 and NUL-terminated; a key's leaf value is the byte offset of its replacement.
//!
//! Double-array units (darts-clone): bits 0–7 the label of the node, bit 8 "has a leaf", bits 10–31 the offset to
//! the node's children block (`offset << 10`; the `1 << 9` form for large offsets is not needed here); a child
//! with label `c` of the node at `p` sits at `p ^ offset ^ c`, its leaf at `p ^ offset` as `value | 1 << 31`.
//! Each node gets its own base (distinct bases make a label match unambiguous).
use std::collections::BTreeMap;

use crate::error::{Error, Result};

#[derive(Default)]
struct Node {
    children: BTreeMap<u8, Node>,
    value: Option<u32>,
}

/// The charsmap bytes for `map` (code point → replacement; an empty replacement deletes the code point).
pub fn build(map: &[(char, String)]) -> Result<Vec<u8>> {
    let mut root = Node::default();
    let mut normalized: Vec<u8> = Vec::new();
    for (from, to) in map {
        let mut buf = [0u8; 4];
        let mut node = &mut root;
        for &b in from.encode_utf8(&mut buf).as_bytes() {
            node = node.children.entry(b).or_default();
        }
        if to.contains('\0') {
            return Err(Error::Invalid(format!("normaliser: the replacement of {from:?} contains NUL")));
        }
        node.value = Some(normalized.len() as u32);
        normalized.extend_from_slice(to.as_bytes());
        normalized.push(0);
    }
    let units = place(&root)?;
    let mut out = Vec::with_capacity(4 + units.len() * 4 + normalized.len());
    out.extend(((units.len() * 4) as u32).to_le_bytes());
    for u in &units {
        out.extend(u.to_le_bytes());
    }
    out.extend(normalized);
    Ok(out)
}

/// Lays the trie out as a double array, breadth first, each node's children at the first free base.
fn place(root: &Node) -> Result<Vec<u32>> {
    let mut units: Vec<u32> = vec![0; 256];
    let mut used: Vec<bool> = vec![false; 256];
    let mut base_used: Vec<bool> = vec![false; 256];
    used[0] = true;
    let mut queue: std::collections::VecDeque<(&Node, usize)> = [(root, 0usize)].into();
    let mut search_from = 0usize;
    while let Some((node, pos)) = queue.pop_front() {
        let mut labels: Vec<u8> = node.children.keys().copied().collect();
        if node.value.is_some() {
            labels.insert(0, 0);
        }
        if labels.is_empty() {
            continue;
        }
        let mut base = search_from;
        loop {
            let block_end = (base | 0xFF) + 1;
            if units.len() < block_end {
                units.resize(block_end, 0);
                used.resize(block_end, false);
                base_used.resize(block_end, false);
            }
            if !base_used[base] && labels.iter().all(|&l| !used[base ^ l as usize]) {
                break;
            }
            base += 1;
        }
        while search_from < used.len() && used[search_from] {
            search_from += 1;
        }
        let offset = pos ^ base;
        if offset >= 1 << 21 {
            return Err(Error::Invalid(format!("normaliser trie too large: offset {offset} needs the 2^21+ form")));
        }
        base_used[base] = true;
        units[pos] |= (offset as u32) << 10;
        if let Some(v) = node.value {
            units[pos] |= 1 << 8;
            used[base] = true;
            units[base] = v | 1 << 31;
        }
        for (&label, child) in &node.children {
            let p = base ^ label as usize;
            used[p] = true;
            units[p] = label as u32;
            queue.push_back((child, p));
        }
    }
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenizers::normalizers::precompiled::Precompiled;
    use tokenizers::{NormalizedString, Normalizer};

    fn normalize(p: &Precompiled, s: &str) -> String {
        let mut n = NormalizedString::from(s);
        p.normalize(&mut n).unwrap();
        n.get().to_string()
    }

    #[test]
    fn the_built_map_is_what_the_tokenizers_crate_applies() {
        let map: Vec<(char, String)> = vec![
            ('\t', " ".into()),
            ('\u{1}', String::new()),
            ('Ａ', "A".into()),
            ('ﬁ', "fi".into()),
            ('①', "1".into()),
            ('\u{200b}', " ".into()),
            ('𝐀', "A".into()),
            ('é', "é".into()),
        ];
        let bytes = build(&map).unwrap();
        let p = Precompiled::from(&bytes).unwrap();
        assert_eq!(normalize(&p, "a\tb\u{1}Ａﬁ①\u{200b}𝐀x"), "a bAfi1 Ax");
        // Unmapped characters, and characters sharing a first byte with mapped ones, are kept.
        assert_eq!(normalize(&p, "Bé ü 北京 Ё"), "Bé ü 北京 Ё");
    }
}
