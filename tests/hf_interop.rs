//! Hugging Face interop, both directions, against `transformers` itself (tests/reference/hf_bert.py):
//! * import: a tiny random `BertForMaskedLM` saved by transformers as `model.safetensors` (with `tokenizer.json`)
//!   and as `pytorch_model.bin` (with only `vocab.txt`) loads into crossling and gives every layer's hidden states
//!   and the MLM logits within 1e-5 on a padded batch; our tokenizer gives AutoTokenizer's ids.
//! * export: a shared crossling model (joint BPE) and the `fr` view of a `sep_emb` + `sep_layers = 1` bilingual
//!   model (per-language BPE) load in transformers with no missing or unexpected keys and give our outputs within
//!   1e-5; AutoTokenizer on the exported tokenizer gives the ids crossling feeds the model.
//!
//! Needs `.venv/bin/python` with transformers: the test fails (never skips) without them.
mod common;

use std::path::{Path, PathBuf};

use crossling::model::hf::export_hf;
use crossling::model::{LoadedModel, MlmModel, ModelConfig, ModelTokenizer, SharingPlan};
use crossling::text::tokenize::{AnchorScheme, CrossTokenizer, TokenizerSpec};
use serde_json::json;
use tch::{nn::VarStore, Device, Kind, Tensor};

const TOL: f64 = 1e-5;

fn python() -> PathBuf {
    common::reference_python()
}

fn reference(py: &Path, args: &[&str]) {
    common::run_reference(py, "hf_bert.py", args)
}

/// A padded batch of rows of different lengths (ids in `lo..hi`, `[CLS]`=2 first, `[SEP]`=3 last, pad 0).
fn batch(lens: &[usize], lo: i64, hi: i64) -> (Tensor, Tensor) {
    let t = *lens.iter().max().unwrap();
    let (mut ids, mut mask) = (Vec::new(), Vec::new());
    let mut s: i64 = 17;
    for &n in lens {
        for j in 0..t {
            s = (s * 1103515245 + 12345) % 2147483648;
            let id = if j == 0 {
                2
            } else if j + 1 == n {
                3
            } else {
                lo + s % (hi - lo)
            };
            ids.push(if j < n { id } else { 0 });
            mask.push(i64::from(j < n));
        }
    }
    let shape = [lens.len() as i64, t as i64];
    (Tensor::from_slice(&ids).view(shape), Tensor::from_slice(&mask).view(shape))
}

struct Ours {
    hidden: Tensor, // [L+1, batch, seq, d]
    logits: Tensor, // [batch, seq, vocab]
    /// `[batch, seq, 1]` f32: 1 at real tokens. Padded positions are compared only at layer 0: above it crossling
    /// leaves them zero (`crossling::nn::packing`), transformers computes values that nothing reads.
    real: Tensor,
}

fn forward(model: &MlmModel, ids: &Tensor, mask: &Tensor, lang: &str) -> Ours {
    tch::no_grad(|| {
        let out = model.encoder.forward(ids, Some(mask), lang, false).unwrap();
        let logits = model.logits(out.last(), lang).unwrap();
        Ours { hidden: Tensor::stack(&out.hidden_states, 0), logits, real: mask.to_kind(Kind::Float).unsqueeze(-1) }
    })
}

/// Largest absolute difference per layer and for the logits; panics above [`TOL`].
fn compare(what: &str, ours: &Ours, theirs: &Path) -> f64 {
    let t: std::collections::HashMap<String, Tensor> = Tensor::read_safetensors(theirs).unwrap().into_iter().collect();
    let (h, l) = (&t["hidden_states"], &t["logits"]);
    assert_eq!(h.size(), ours.hidden.size(), "{what}: hidden-state shapes");
    assert_eq!(l.size(), ours.logits.size(), "{what}: logit shapes");
    let mut worst = 0f64;
    for layer in 0..h.size()[0] {
        let diff = (h.get(layer) - ours.hidden.get(layer)).abs(); // [batch, seq, d]
        let diff = if layer == 0 { diff } else { diff * &ours.real };
        let d = diff.max().double_value(&[]);
        assert!(d < TOL, "{what}: layer {layer} differs from transformers by {d:e}");
        worst = worst.max(d);
    }
    let d = ((l - &ours.logits).abs() * &ours.real).max().double_value(&[]);
    assert!(d < TOL, "{what}: logits differ from transformers by {d:e}");
    eprintln!("{what}: max |diff| hidden {worst:.2e}, logits {d:.2e}");
    worst.max(d)
}

fn write_inputs(path: &Path, ids: &Tensor, mask: &Tensor) {
    Tensor::write_safetensors(&[("input_ids", ids), ("attention_mask", mask)], path).unwrap();
}

fn corpora(dir: &Path) -> Vec<(String, PathBuf)> {
    let text = [
        ("en", "the cat sat on the mat . a dog ran to the house , the cats sat 2020 paris"),
        ("fr", "le chat est sur le tapis . un chien court vers la maison , les chats 2020 paris"),
    ];
    text.iter()
        .map(|(l, t)| {
            let p = dir.join(format!("{l}.txt"));
            std::fs::write(&p, format!("{t}\n").repeat(30)).unwrap();
            (l.to_string(), p)
        })
        .collect()
}

fn model(cfg: &ModelConfig, seed: i64) -> (VarStore, MlmModel) {
    tch::manual_seed(seed);
    let vs = VarStore::new(Device::Cpu);
    let m = MlmModel::new(&vs.root(), cfg).unwrap();
    // Random biases and LayerNorm parameters, so a mis-mapped tensor cannot hide behind zeros and ones.
    tch::no_grad(|| {
        for (_, mut v) in vs.variables() {
            if v.dim() == 1 {
                let noise = Tensor::randn(v.size(), (Kind::Float, Device::Cpu)) * 0.1;
                let _ = v.g_add_(&noise);
            }
        }
    });
    (vs, m)
}

fn our_ids(tok: &ModelTokenizer, sentences: &[&str], lang: &str) -> Vec<Vec<i64>> {
    sentences.iter().map(|s| tok.encode_words(s, lang).unwrap().tokenized.ids).collect()
}

fn their_ids(path: &Path) -> Vec<Vec<i64>> {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn import_and_export_match_transformers() {
    let py = python();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    reference(&py, &["create", d.join("hf").to_str().unwrap()]);
    let sentences = ["The cats sat on the mat.", "a dog ran to the house!", "le chat sur un chien"];
    let mut jobs = Vec::new();

    // --- import: transformers' checkpoints, safetensors and pickle.
    let (ids, mask) = batch(&[9, 6, 3], 5, 100);
    write_inputs(&d.join("import_in.safetensors"), &ids, &mask);
    let mut imported = Vec::new();
    for sub in ["st", "bin"] {
        let m = LoadedModel::open(&d.join("hf").join(sub), Device::Cpu).unwrap();
        assert_eq!(m.config.type_vocab_size, 2);
        assert!(m.notes.is_empty(), "{:?}", m.notes);
        imported.push((sub, forward(&m.model, &ids, &mask, "en"), our_ids(&m.tokenizer, &sentences, "en")));
        jobs.push(json!({"model": d.join("hf").join(sub), "inputs": d.join("import_in.safetensors"),
            "out": d.join(format!("import_{sub}.safetensors")), "sentences": sentences,
            "tokens_out": d.join(format!("import_{sub}.json"))}));
    }

    // --- export: a shared model with a joint tokenizer.
    let files = corpora(d);
    let joint = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::Joint, 60), &files).unwrap();
    let cfg = ModelConfig {
        vocab_size: joint.vocab_size(),
        hidden: 32,
        layers: 2,
        heads: 4,
        ffn: Some(64),
        max_positions: 32,
        languages: vec!["en".into(), "fr".into()],
        ..ModelConfig::default()
    };
    let (vs, shared) = model(&cfg, 11);
    let tok = ModelTokenizer::crossling(joint);
    // A pre-LN model has no BertForMaskedLM equivalent: refused, nothing written.
    let pre = ModelConfig { pre_ln: true, ..cfg.clone() };
    let (vs_pre, _) = model(&pre, 11);
    let e = export_hf(&vs_pre, &pre, &tok, None, &d.join("pre")).unwrap_err().to_string();
    assert!(e.contains("pre-LN") && !d.join("pre").exists(), "{e}");
    export_hf(&vs, &cfg, &tok, None, &d.join("shared")).unwrap();
    let (ids_s, mask_s) = batch(&[8, 5, 2], 5, cfg.vocab_size as i64);
    write_inputs(&d.join("shared_in.safetensors"), &ids_s, &mask_s);
    let shared_out = forward(&shared, &ids_s, &mask_s, "en");
    let en = ["the cat sat on the mat .", "a dog ran to the house"];
    jobs.push(json!({"model": d.join("shared"), "inputs": d.join("shared_in.safetensors"),
        "out": d.join("shared_out.safetensors"), "sentences": en, "tokens_out": d.join("shared.json")}));

    // --- export: the fr view of a sep_emb + sep_layers = 1 model with per-language vocabularies.
    let union = CrossTokenizer::train(&TokenizerSpec::new(AnchorScheme::PerLanguageUnion, 100), &files).unwrap();
    let cfg2 = ModelConfig {
        vocab_size: union.vocab_size(),
        sharing: SharingPlan { sep_emb: true, sep_layers: 1 },
        ..cfg.clone()
    };
    let (vs2, bi) = model(&cfg2, 12);
    let tok2 = ModelTokenizer::crossling(union);
    assert!(export_hf(&vs2, &cfg2, &tok2, None, &d.join("nolang")).unwrap_err().to_string().contains("--lang"));
    assert!(!d.join("nolang").exists());
    export_hf(&vs2, &cfg2, &tok2, Some("fr"), &d.join("fr")).unwrap();
    let (ids_f, mask_f) = batch(&[7, 7, 4], 5, cfg2.vocab_size as i64);
    write_inputs(&d.join("fr_in.safetensors"), &ids_f, &mask_f);
    let fr_out = forward(&bi, &ids_f, &mask_f, "fr");
    // The en view differs (its own embeddings and bottom layer), so the comparison below is about the fr view.
    let en_view = forward(&bi, &ids_f, &mask_f, "en");
    assert!((&en_view.logits - &fr_out.logits).abs().max().double_value(&[]) > 1e-3);
    let fr = ["le chat est sur le tapis .", "un chien court vers la maison , 2020"];
    jobs.push(json!({"model": d.join("fr"), "inputs": d.join("fr_in.safetensors"),
        "out": d.join("fr_out.safetensors"), "sentences": fr, "tokens_out": d.join("fr.json")}));

    std::fs::write(d.join("jobs.json"), serde_json::to_string(&jobs).unwrap()).unwrap();
    reference(&py, &["run", d.join("jobs.json").to_str().unwrap()]);

    for (sub, ours, ids) in &imported {
        compare(&format!("import {sub}"), ours, &d.join(format!("import_{sub}.safetensors")));
        assert_eq!(ids, &their_ids(&d.join(format!("import_{sub}.json"))), "import {sub}: tokenizer ids");
    }
    compare("export shared", &shared_out, &d.join("shared_out.safetensors"));
    assert_eq!(our_ids(&tok, &en, "en"), their_ids(&d.join("shared.json")), "export shared: tokenizer ids");
    compare("export fr view", &fr_out, &d.join("fr_out.safetensors"));
    let ours_fr = our_ids(&tok2, &fr, "fr");
    assert_eq!(ours_fr, their_ids(&d.join("fr.json")), "export fr: tokenizer ids");
    assert!(ours_fr.iter().flatten().all(|&i| i != 1), "the fr sentences should need no [UNK]: {ours_fr:?}");
}
