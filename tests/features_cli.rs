//! `crossling features` and `crossling export` on a tiny crossling checkpoint: ragged layout (shapes, offsets,
//! word indices), layer 0 = the embedding output, every layer = an unbatched forward pass, metadata, refusals
//! (empty file, over-long line without --truncate), an export that loads back with the same outputs, pooled
//! features (`--pool`) that feed `crossling analyse` as written (`--layer`, every layer), and `crossling analyse lang` (means of language, MDS grid).
mod common;

use std::collections::HashMap;
use std::path::Path;

use crossling::arrays::stream::read_metadata;
use crossling::model::LoadedModel;
use tch::{Device, Kind, Tensor};

/// A checkpoint folder `dir/ckpt` (config.json + model.safetensors) with its tokenizer in `dir/ckpt/tokenizer`.
fn checkpoint(dir: &Path) -> std::path::PathBuf {
    let (tok, cfg) = common::tiny_english(dir, 16);
    common::save_checkpoint(dir, &tok, &cfg)
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

#[test]
fn pooled_features_are_means_of_the_ragged_rows_and_feed_analyse() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ckpt = checkpoint(d);
    let text = d.join("text.txt");
    std::fs::write(&text, "the cat sat .\na dog\nthe cats ran to the house\nthe mat\n").unwrap();
    let (c, t) = (ckpt.to_str().unwrap(), text.to_str().unwrap());
    let (ragged, pooled, words) = (d.join("r.safetensors"), d.join("p.safetensors"), d.join("w.safetensors"));
    for (out, pool) in [(&ragged, "none"), (&pooled, "sentence"), (&words, "word-first")] {
        let r = run(
            &["features", "--model", c, "--text", t, "--lang", "en", "--out", out.to_str().unwrap(), "--pool", pool],
            d,
        );
        assert!(r.status.success(), "{}", common::text(&r));
    }
    let r: HashMap<String, Tensor> = Tensor::read_safetensors(&ragged).unwrap().into_iter().collect();
    let p: HashMap<String, Tensor> = Tensor::read_safetensors(&pooled).unwrap().into_iter().collect();
    assert_eq!(p["hidden_states"].size(), [3, 4, 16]);
    assert_eq!(Vec::<i64>::try_from(&p["offsets"]).unwrap(), [0, 1, 2, 3, 4]);
    assert_eq!(read_metadata(&pooled).unwrap()["pool"], "sentence");
    let offsets = Vec::<i64>::try_from(&r["offsets"]).unwrap();
    for i in 0..4 {
        // Rows of line i without [CLS] (first) and [SEP] (last).
        let (a, b) = (offsets[i] + 1, offsets[i + 1] - 1);
        let mean = r["hidden_states"].narrow(1, a, b - a).mean_dim([1i64].as_slice(), false, Kind::Float);
        let diff = (mean - p["hidden_states"].select(1, i as i64)).abs().max().double_value(&[]);
        assert!(diff < 1e-5, "line {i}: pooled row differs from the mean of its tokens by {diff:e}");
    }
    let w: HashMap<String, Tensor> = Tensor::read_safetensors(&words).unwrap().into_iter().collect();
    assert_eq!(Vec::<i64>::try_from(&w["offsets"]).unwrap(), [0, 4, 6, 12, 14]);
    assert_eq!(w["hidden_states"].size(), [3, 14, 16]);

    // A stack and one layer of it go straight into `analyse`.
    let stack = format!("{}#hidden_states", pooled.display());
    let r = run(&["analyse", "cka", &stack, &stack, "--diagonal", "--json"], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let diag: Vec<f64> = v["diagonal"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(diag.len(), 3);
    assert!(diag.iter().all(|x| (x - 1.0).abs() < 1e-9), "{diag:?}");
    let layer = format!("{}#hidden_states[2]", pooled.display());
    let r = run(&["analyse", "retrieve", "--src", &layer, "--tgt", &layer, "--method", "nn", "--json"], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["src_to_tgt"]["accuracy_by_index"].as_f64(), Some(1.0), "{v}");
    let r = run(&["analyse", "cka", &format!("{}#hidden_states[3]", pooled.display()), &layer], d);
    assert!(!r.status.success() && common::text(&r).contains("out of range"), "{}", common::text(&r));

    // The files as `features` wrote them: the hidden states by default, --layer picks one, retrieve runs every layer.
    let p = pooled.to_str().unwrap();
    let r = run(&["analyse", "cka", p, p, "--layer", "2"], d);
    assert!(r.status.success(), "{}", common::text(&r));
    assert!((String::from_utf8_lossy(&r.stdout).trim().parse::<f64>().unwrap() - 1.0).abs() < 1e-9);
    let r = run(&["analyse", "retrieve", "--src", p, "--tgt", p, "--method", "nn"], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let out = String::from_utf8_lossy(&r.stdout);
    assert_eq!(out.lines().filter(|l| l.starts_with("layer ")).count(), 6, "two directions × 3 layers: {out}");
    let r = run(&["analyse", "retrieve", "--src", p, "--tgt", p, "--method", "nn", "--layer", "1", "--json"], d);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!((v["layer"].as_i64(), v["tgt_to_src"]["accuracy_by_index"].as_f64()), (Some(1), Some(1.0)), "{v}");
    let r = run(&["analyse", "align", "--src", p, "--tgt", p], d);
    assert!(!r.status.success() && common::text(&r).contains("--layer"), "{}", common::text(&r));
    let r = run(&["analyse", "cka", p, p, "--layer", "3"], d);
    assert!(!r.status.success() && common::text(&r).contains("layers 0 to 2"), "{}", common::text(&r));
    // Token rows against sentence rows: the error says how to get one row per line.
    let r = run(&["analyse", "cka", ragged.to_str().unwrap(), p, "--layer", "1"], d);
    assert!(!r.status.success() && common::text(&r).contains("--pool sentence"), "{}", common::text(&r));

    let bad =
        run(&["features", "--model", c, "--text", t, "--lang", "en", "--out", "x.safetensors", "--pool", "max"], d);
    assert!(!bad.status.success() && common::text(&bad).contains("unknown --pool 'max'"), "{}", common::text(&bad));
}

#[test]
fn analyse_lang_reports_means_shift_and_the_mds_grid() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ckpt = checkpoint(d);
    let write = |name: &str, text: &str| {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let src = write("src.txt", "the cat sat on the mat .\n\nthe cats sat\n");
    let tgt = write("tgt.txt", "a dog ran to the house ,\na dog ran\n");
    let test_src = write("test_src.txt", "the cat sat .\nthe mat\n");
    let test_ref = write("test_ref.txt", "a dog ran .\na house\n");
    let means = d.join("means.safetensors");
    let c = ckpt.to_str().unwrap();
    let base =
        ["analyse", "lang", "--model", c, "--src", "en", "--corpus-src", &src, "--tgt", "en", "--corpus-tgt", &tgt];
    let mut args: Vec<&str> = base.to_vec();
    let m = means.display().to_string();
    args.extend(["--test-src", &test_src, "--test-ref", &test_ref, "--layers", "0,2", "--alphas", "0,1.5"]);
    args.extend(["--samples", "1", "--means-out", &m, "--json"]);
    let r = run(&args, d);
    assert!(r.status.success(), "{}", common::text(&r));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["per_layer"].as_array().unwrap().len(), 3);
    let g = &v["mds"];
    assert_eq!(g["bleu1"].as_array().unwrap().len(), 2);
    assert_eq!(g["bleu1"][0].as_array().unwrap().len(), 2);
    assert_eq!(g["samples"].as_array().unwrap().len(), 1);
    let norms: Vec<f64> = g["shift_norms"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let f: HashMap<String, Tensor> = Tensor::read_safetensors(&means).unwrap().into_iter().collect();
    assert_eq!(f["shift"].size(), [3, 16]);
    for (l, n) in norms.iter().enumerate() {
        let d = (&f["mean_tgt"] - &f["mean_src"] - &f["shift"]).abs().max().double_value(&[]);
        assert!(d < 1e-6);
        let want = f["shift"].get(l as i64).norm().double_value(&[]);
        assert!((n - want).abs() < 1e-4 * want.max(1.0), "layer {l}: {n} vs {want}");
        let cli = v["per_layer"][l]["shift_norm"].as_f64().unwrap();
        assert!((cli - want).abs() < 1e-4 * want.max(1.0));
    }

    // The script functions lang::means / shift / norms give the same shift norms.
    let script = d.join("shift.rhai");
    let list = |f: &str| {
        let lines: Vec<String> = std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("{l:?}"))
            .collect();
        format!("[{}]", lines.join(", "))
    };
    std::fs::write(
        &script,
        format!(
            "let m = model::given(\"tiny\");\nlet d = lang::shift(lang::means(m, {}, \"en\"), lang::means(m, {}, \"en\"));\n\
             results::value(\"norms\", lang::norms(d));\nresults::caption(\"shift norms\");\n",
            list(&src),
            list(&tgt)
        ),
    )
    .unwrap();
    let outputs = d.join("outputs");
    let tiny = format!("tiny={c}");
    let r = run(&["run", script.to_str().unwrap(), "--model", &tiny, "--out", outputs.to_str().unwrap()], d);
    assert!(r.status.success(), "{}", common::text(&r));
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outputs.join("shift.json")).unwrap()).unwrap();
    let script_norms: Vec<f64> =
        rec["values"]["norms"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(script_norms.len(), norms.len());
    for (a, b) in script_norms.iter().zip(&norms) {
        assert!((a - b).abs() < 1e-6 * b.max(1.0), "{script_norms:?} vs {norms:?}");
    }

    // Without test files: the means table alone; readable text output.
    let r = run(&base, d);
    assert!(r.status.success(), "{}", common::text(&r));
    assert!(common::text(&r).contains("cos(R(src), R(tgt))"), "{}", common::text(&r));

    // Bad input: test files of different lengths, a blank test line, a layer beyond the model.
    let short = write("short.txt", "a dog\n");
    let mut a = base.to_vec();
    a.extend(["--test-src", &test_src, "--test-ref", &short]);
    let e = common::text(&run(&a, d));
    assert!(e.contains("test_src.txt has 2 lines but") && e.contains("short.txt has 1"), "{e}");
    let blank = write("blank.txt", "a dog\n\n");
    let mut a = base.to_vec();
    a.extend(["--test-src", &blank, "--test-ref", &test_ref]);
    let e = common::text(&run(&a, d));
    assert!(e.contains("blank.txt:2: blank line"), "{e}");
    let mut a = base.to_vec();
    a.extend(["--test-src", &test_src, "--test-ref", &test_ref, "--layers", "5"]);
    let e = common::text(&run(&a, d));
    assert!(e.contains("layer 5 > the model's 2 layers"), "{e}");
    let empty = write("empty.txt", "\n\n");
    let mut a = base.to_vec();
    a[7] = &empty;
    let e = common::text(&run(&a, d));
    assert!(e.contains("empty.txt: no sentences"), "{e}");
}
