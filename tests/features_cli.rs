//! `crossling features` and `crossling export` on a tiny crossling checkpoint: ragged layout (shapes, offsets,
//! word indices), layer 0 = the embedding output, every layer = an unbatched forward pass, metadata, refusals
//! (empty file, over-long line without --truncate), and an export that loads back with the same outputs.
mod common;

use std::collections::HashMap;
use std::path::Path;

use crossling::model::safetensors_file::read_metadata;
use crossling::model::{LoadedModel, MlmModel, ModelConfig};
use crossling::text::tokenize::{AnchorScheme, CrossTokenizer, TokenizerSpec};
use tch::{nn::VarStore, Device, Kind, Tensor};

/// A checkpoint folder `dir/ckpt` (config.json + model.safetensors) with its tokenizer in `dir/ckpt/tokenizer`.
fn checkpoint(dir: &Path) -> std::path::PathBuf {
    let en = dir.join("en.txt");
    std::fs::write(&en, "the cat sat on the mat . a dog ran to the house , the cats sat\n".repeat(20)).unwrap();
    let tok = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 50), &[("en".into(), en)]).unwrap();
    let ckpt = dir.join("ckpt");
    tok.save(&ckpt.join("tokenizer")).unwrap();
    let cfg = ModelConfig {
        vocab_size: tok.vocab_size(),
        hidden: 16,
        layers: 2,
        heads: 2,
        max_positions: 16,
        ..ModelConfig::default()
    };
    tch::manual_seed(3);
    let vs = VarStore::new(Device::Cpu);
    MlmModel::new(&vs.root(), &cfg).unwrap();
    vs.save(ckpt.join("model.safetensors")).unwrap();
    cfg.save_json(ckpt.join("config.json")).unwrap();
    ckpt
}

fn run(args: &[&str], cache: &Path) -> std::process::Output {
    common::crossling(args, None, cache)
}

#[test]
fn features_are_ragged_and_equal_unbatched_forward_passes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ckpt = checkpoint(d);
    let lines = ["the cat sat .", "a dog", "the cats ran to the house , a cat sat"];
    let text = d.join("text.txt");
    std::fs::write(&text, lines.join("\n") + "\n").unwrap();
    let out = d.join("f.safetensors");
    let (c, t, o) = (ckpt.to_str().unwrap(), text.to_str().unwrap(), out.to_str().unwrap());

    // The third line has 10 words → at least 12 tokens with specials; --max-len 8 refuses it unless --truncate.
    let r = run(&["features", "--model", c, "--text", t, "--lang", "en", "--out", o, "--max-len", "8"], d);
    assert!(!r.status.success());
    let msg = common::text(&r);
    assert!(msg.contains("text.txt:3") && msg.contains("--truncate"), "{msg}");
    assert!(!out.exists());

    let r = run(&["features", "--model", c, "--text", t, "--lang", "en", "--out", o, "--batch-tokens", "16"], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let f: HashMap<String, Tensor> = Tensor::read_safetensors(&out).unwrap().into_iter().collect();
    let m = LoadedModel::open(&ckpt, Device::Cpu).unwrap();
    let enc: Vec<_> = lines.iter().map(|l| m.tokenizer.encode_words(l, "en").unwrap().tokenized).collect();
    let total: i64 = enc.iter().map(|e| e.ids.len() as i64).sum();
    assert_eq!(f["hidden_states"].size(), [3, total, 16]);
    assert_eq!(f["input_ids"].size(), [total]);
    let offsets = Vec::<i64>::try_from(&f["offsets"]).unwrap();
    let mut want = vec![0i64];
    for e in &enc {
        want.push(want.last().unwrap() + e.ids.len() as i64);
    }
    assert_eq!(offsets, want);
    let ids = Vec::<i64>::try_from(&f["input_ids"]).unwrap();
    let word_of = Vec::<i64>::try_from(&f["word_of"]).unwrap();
    for (i, e) in enc.iter().enumerate() {
        let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
        assert_eq!(ids[a..b], e.ids[..]);
        let w: Vec<i64> = e.word_of.iter().map(|w| w.map_or(-1, |x| x as i64)).collect();
        assert_eq!(word_of[a..b], w[..]);
        let x = Tensor::from_slice(&e.ids).view([1, -1]);
        let direct = m.hidden_states(&x, None, "en").unwrap().hidden_states;
        let emb = tch::no_grad(|| m.model.encoder.embeddings.forward(&x, "en", false).unwrap());
        let rows = f["hidden_states"].narrow(1, a as i64, (b - a) as i64);
        assert!(rows.get(0).allclose(&emb.squeeze_dim(0), 1e-6, 1e-6, false), "line {i}: layer 0 is the embedding");
        for (l, h) in direct.iter().enumerate() {
            let diff = (rows.get(l as i64) - h.squeeze_dim(0)).abs().max().double_value(&[]);
            assert!(diff < 1e-5, "line {i} layer {l}: batched and unbatched differ by {diff:e}");
        }
    }
    let meta = read_metadata(&out).unwrap();
    assert_eq!(meta["kind"], "crossling");
    assert_eq!((meta["layers"].as_str(), meta["hidden"].as_str(), meta["lang"].as_str()), ("2", "16", "en"));
    assert_eq!(meta["weights_sha256"], m.source.weights_sha256);
    assert_eq!(meta["text_sha256"].len(), 64);

    let r =
        run(&["features", "--model", c, "--text", t, "--lang", "en", "--out", o, "--max-len", "8", "--truncate"], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let f: HashMap<String, Tensor> = Tensor::read_safetensors(&out).unwrap().into_iter().collect();
    let offsets = Vec::<i64>::try_from(&f["offsets"]).unwrap();
    assert_eq!(offsets[3] - offsets[2], 8);
    assert_eq!(f["input_ids"].int64_value(&[offsets[3] - 1]), 3, "a truncated line still ends with [SEP]");

    let empty = d.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let r = run(&["features", "--model", c, "--text", empty.to_str().unwrap(), "--lang", "en", "--out", o], d);
    assert!(!r.status.success() && common::text(&r).contains("empty"), "{}", common::text(&r));

    // Export, then load the HF folder back: same hidden states.
    let hf = d.join("hf");
    let r = run(&["export", "--model", c, "--out", hf.to_str().unwrap()], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let back = LoadedModel::open(&hf, Device::Cpu).unwrap();
    let x = Tensor::from_slice(&enc[0].ids).view([1, -1]);
    let a = m.hidden_states(&x, None, "en").unwrap();
    let b = back.hidden_states(&x, None, "en").unwrap();
    assert_eq!(back.tokenizer.encode_words(lines[0], "en").unwrap().tokenized, enc[0]);
    let diff = (a.last() - b.last()).abs().max().double_value(&[]);
    assert!(diff < 1e-5, "export round trip differs by {diff:e}");
    assert_eq!(b.last().kind(), Kind::Float);
    let r = run(&["export", "--model", c, "--out", hf.to_str().unwrap()], d);
    assert!(!r.status.success() && common::text(&r).contains("already exists"), "{}", common::text(&r));
}
