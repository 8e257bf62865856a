//! Tokenizer fidelity against `transformers` itself (tests/reference/hf_tokenizers.py): on folders whose
//! `tokenizer.json` differs from what `AutoTokenizer` encodes with — padding and truncation blocks
//! (sentence-transformers), added tokens, a lowercasing default that the file contradicts, another pair template,
//! an XLM-R tokenizer class that rebuilds the normalizer and pre-tokenizer — crossling gives AutoTokenizer's ids
//! for single texts and pairs, and `AutoModel`'s hidden states at every layer on those ids (within 1e-5); the token
//! tasks' gold words, glued ones included, encode to the ids of their running text.
//!
//! Needs `.venv/bin/python` with transformers: the test fails (never skips) without them, as tests/hf_interop.rs.
mod common;

use std::collections::HashMap;
use std::path::Path;

use crossling::model::LoadedModel;
use serde_json::json;
use tch::{Device, Tensor};

const TOL: f64 = 1e-5;

struct Case {
    folder: &'static str,
    sentences: &'static [&'static str],
    pairs: &'static [(&'static str, &'static str)],
    class: &'static str,
}

const CASES: [Case; 5] = [
    Case {
        folder: "st",
        sentences: &["The cats sat on the mat.", "a dog"],
        pairs: &[("the cat", "a dog ran")],
        class: "BertTokenizer",
    },
    Case {
        folder: "added",
        sentences: &["The <ent> sat in New York [E1] .", "new york<ent>dog"],
        pairs: &[("[E1] cat", "<ent>")],
        class: "BertTokenizer",
    },
    Case { folder: "cased", sentences: &["The Cat sat in Paris é", "CAT"], pairs: &[], class: "BertTokenizer" },
    Case { folder: "pair", sentences: &["The cat"], pairs: &[("the cat", "a dog")], class: "TokenizersBackend" },
    Case {
        folder: "xlmr",
        sentences: &["The  cat sat on   Paris.", "un chien", "``le chat''"],
        pairs: &[("the cat", "un chien")],
        class: "XLMRobertaTokenizer",
    },
];

fn read_safetensors(path: &Path) -> HashMap<String, Tensor> {
    Tensor::read_safetensors(path).unwrap().into_iter().collect()
}

/// The five fixture folders of tests/reference/hf_tokenizers.py, in a temporary folder.
fn fixture_folders(py: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::run_reference(py, "hf_tokenizers.py", &["create", dir.path().to_str().unwrap()]);
    dir
}

#[test]
fn folders_encode_as_transformers_does() {
    let py = common::reference_python();
    let dir = fixture_folders(&py);
    let d = dir.path();
    let jobs: Vec<_> = CASES
        .iter()
        .map(|c| {
            json!({"model": d.join(c.folder), "sentences": c.sentences, "pairs": c.pairs,
                   "out": d.join(format!("{}_out", c.folder))})
        })
        .collect();
    std::fs::write(d.join("jobs.json"), serde_json::to_string(&jobs).unwrap()).unwrap();
    common::run_reference(&py, "hf_tokenizers.py", &["run", d.join("jobs.json").to_str().unwrap()]);

    for c in &CASES {
        let out = d.join(format!("{}_out", c.folder));
        let theirs: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
        assert_eq!(theirs["class"], json!(c.class), "{}: the tokenizer class transformers chose", c.folder);
        let m = LoadedModel::open(&d.join(c.folder), Device::Cpu).unwrap();
        let hidden = read_safetensors(&out.with_extension("safetensors"));
        for (i, s) in c.sentences.iter().enumerate() {
            let enc = m.tokenizer.encode_words(s, "en").unwrap();
            let ids = &enc.tokenized.ids;
            assert_eq!(json!(ids), theirs["ids"][i], "{}: ids of {s:?}", c.folder);
            // Each content id has a word, each special none, and the words cover the content in order.
            let content = m.tokenizer.encode_content(s, "en").unwrap();
            let with_word: Vec<i64> =
                ids.iter().zip(&enc.tokenized.word_of).filter(|(_, w)| w.is_some()).map(|(&id, _)| id).collect();
            assert_eq!(with_word, content, "{}: {s:?}", c.folder);
            let input = Tensor::from_slice(ids).view([1, -1]);
            let ours = m.hidden_states(&input, None, "en").unwrap();
            let h = &hidden[&format!("h{i}")];
            assert_eq!(h.size()[0] as usize, ours.hidden_states.len(), "{}: layers", c.folder);
            for (layer, o) in ours.hidden_states.iter().enumerate() {
                let diff = (h.get(layer as i64) - o.get(0)).abs().max().double_value(&[]);
                assert!(diff < TOL, "{}: {s:?} layer {layer} differs from transformers by {diff:e}", c.folder);
            }
        }
        for (i, (a, b)) in c.pairs.iter().enumerate() {
            let (ca, cb) = (m.tokenizer.encode_content(a, "en").unwrap(), m.tokenizer.encode_content(b, "en").unwrap());
            let framed = m.tokenizer.frame(&ca, Some(&cb)).unwrap();
            assert_eq!(json!(framed.ids), theirs["pairs"][i], "{}: pair ids of ({a:?}, {b:?})", c.folder);
            let added = framed.ids.len() - ca.len() - cb.len();
            assert_eq!(added, m.tokenizer.added_specials(true), "{}: specials added to a pair", c.folder);
        }
    }
}

/// Gold words glued to the word before them (a suffix, punctuation, a word of an unspaced language) are read as the
/// running text reads them: on the XLM-R-style folder, each sentence's word-by-word ids equal the ids AutoTokenizer
/// gives the sentence written out whole (tests/reference/running_text.py), where each sentence's last word read on its
/// own after a space would start with a word-start piece.
#[test]
fn glued_words_encode_as_the_running_text_does() {
    use crossling::tasks::word_inputs::WordEncoder;
    let py = common::reference_python();
    let dir = fixture_folders(&py);
    let d = dir.path();
    // (words, glued): « le chats. », « un chien. », « caton » (two words written without a space).
    let sentences: [(&[&str], &[bool]); 3] = [
        (&["le", "chat", "s", "."], &[false, false, true, true]),
        (&["un", "chien", "."], &[false, false, true]),
        (&["cat", "on"], &[false, true]),
    ];
    let text = |(words, glued): &(&[&str], &[bool])| {
        words
            .iter()
            .zip(*glued)
            .enumerate()
            .map(|(i, (w, &g))| if i > 0 && !g { format!(" {w}") } else { w.to_string() })
            .collect::<String>()
    };
    let texts: Vec<String> = sentences.iter().map(text).collect();
    let (job, out) = (d.join("running.json"), d.join("running_out.json"));
    std::fs::write(&job, json!({"model": d.join("xlmr"), "texts": texts}).to_string()).unwrap();
    common::run_reference(&py, "running_text.py", &[job.to_str().unwrap(), out.to_str().unwrap()]);
    let theirs: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();

    let m = LoadedModel::open(&d.join("xlmr"), Device::Cpu).unwrap();
    let lone = m.tokenizer.token_to_id("▁").unwrap() as i64;
    let mut enc = WordEncoder::new(&m.tokenizer, "fr");
    for (((words, glued), t), th) in sentences.iter().zip(&texts).zip(&theirs) {
        let item = enc.encode(words, glued, 64).unwrap();
        assert_eq!(json!(item.ids[1..item.ids.len() - 1]), th["ids"], "{t:?}");
        assert!(item.first.iter().all(|&f| item.ids[f as usize] != lone), "{t:?}: a word read at a lone ▁");
        // Read after a space, the last word would start with a word-start piece: `▁` alone, or `▁on`.
        let last = words.last().unwrap();
        let spaced = m.tokenizer.encode_content(last, "fr").unwrap();
        assert_ne!(spaced, enc.pieces(last, true).unwrap(), "{t:?}: {last:?} reads the same either way");
    }
}
