//! Every Hugging Face architecture, layout and weight-file format crossling reads, against `transformers` itself
//! (tests/reference/hf_arch.py): transformers creates tiny random models (2 layers, hidden 32) with tokenizers
//! trained on five languages and saves them; `crossling features` must give transformers' hidden states in every
//! layer within 1e-5 at every token (each sentence run alone in transformers, in padded length-sorted batches by
//! crossling), crossling's tokenizer must give AutoTokenizer's ids on text in en, fr, de, ru and zh, and a model
//! with a masked-LM head must give its logits within 1e-5; a model without one must refuse to decode.
//!
//! One test per architecture (BERT, RoBERTa, XLM-R, DistilBERT, ELECTRA: its masked LM — for ELECTRA the
//! discriminator — in model.safetensors, sharded safetensors and pytorch_model.bin, plus its bare `…Model` and a
//! task model) and one per BERT layout (`BertModel`, `BertForMaskedLM` in every format, `BertForPreTraining`, the
//! task models). The layout tests also check the error texts: unknown architecture, missing tokenizer, tensors
//! that do not fit, and the one-line refusals of what needs the head.
//!
//! Needs `.venv/bin/python` with transformers: the tests fail (never skip) without it.
mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crossling::model::LoadedModel;
use serde::Deserialize;
use tch::{Device, Tensor};

const TOL: f64 = 1e-5;

/// Text in the five languages: words seen and unseen by the tokenizers, accents, case, punctuation, digits.
const SENTENCES: [(&str, &str); 10] = [
    ("en", "The quick brown fox jumps over the lazy dog in 2020."),
    ("en", "Cross-lingual models share structure, don't they?"),
    ("fr", "Le château est près de la forêt, n'est-ce pas ?"),
    ("fr", "Où sont les élèves aujourd'hui ?"),
    ("de", "Die Straße führt über die Brücke nach München."),
    ("de", "Größere Sprachmodelle lernen schneller."),
    ("ru", "Москва — столица России."),
    ("ru", "Мы читаем интересные книги каждый день."),
    ("zh", "我们在北京学习语言模型。"),
    ("zh", "今天天气很好，我们去公园吧！"),
];

fn python() -> PathBuf {
    common::reference_python()
}

fn reference(py: &Path, args: &[&str]) {
    common::run_reference(py, "hf_arch.py", args)
}

/// A folder the reference wrote (`folders.json`).
#[derive(Debug, Deserialize)]
struct Folder {
    name: String,
    class: String,
    format: String,
    mlm: bool,
}

/// What one folder gave.
#[derive(Debug)]
struct Checked {
    name: String,
    /// Largest |Δ| over layers and tokens of the hidden states, and of the logits (when there is a head).
    hidden: f64,
    logits: Option<f64>,
    /// The notes `crossling features` printed.
    notes: Vec<String>,
}

fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.size(), b.size());
    (a - b).abs().max().double_value(&[])
}

/// Creates the reference suite in `d/hf`, checks every folder (see the module docs), returns what each gave.
fn check_suite(suite: &str, d: &Path, expect: &[&str]) -> Vec<Checked> {
    let py = python();
    let root = d.join("hf");
    let text = d.join("sentences.txt");
    let lines: Vec<&str> = SENTENCES.iter().map(|(_, s)| *s).collect();
    std::fs::write(&text, lines.join("\n") + "\n").unwrap();
    reference(&py, &["create", suite, root.to_str().unwrap(), text.to_str().unwrap()]);
    let folders: Vec<Folder> =
        serde_json::from_str(&std::fs::read_to_string(root.join("folders.json")).unwrap()).unwrap();
    let names: Vec<&str> = folders.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, expect, "the reference's folders");

    let mut ours = Vec::new();
    for f in &folders {
        let dir = root.join(&f.name);
        assert!(dir.join("config.json").is_file(), "{}", f.name);
        let feats = d.join(format!("{}.features.safetensors", f.name));
        let r = common::crossling(
            &[
                "features",
                "--model",
                dir.to_str().unwrap(),
                "--text",
                text.to_str().unwrap(),
                "--lang",
                "en",
                "--out",
                feats.to_str().unwrap(),
                "--batch-tokens",
                "96",
            ],
            None,
            d,
        );
        assert!(r.status.success(), "{}: crossling features failed:\n{}", f.name, common::text(&r));
        let notes: Vec<String> = String::from_utf8_lossy(&r.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix("note: ").map(str::to_string))
            .collect();

        let m = LoadedModel::open(&dir, Device::Cpu).unwrap();
        assert_eq!(m.has_mlm_head(), f.mlm, "{}: masked-LM head", f.name);
        let mut ids = Vec::new();
        let mut logits = Vec::new();
        for (lang, s) in SENTENCES {
            let e = m.tokenizer.encode_words(s, lang).unwrap().tokenized;
            assert_eq!(e.word_of.len(), e.ids.len());
            let x = Tensor::from_slice(&e.ids).view([1, -1]);
            let h = m.hidden_states(&x, None, lang).unwrap();
            let l = m.logits(h.last(), lang);
            if f.mlm {
                logits.push(l.unwrap().squeeze_dim(0));
            } else {
                let e = l.unwrap_err().to_string();
                assert!(e.contains("needs a masked-LM head") && e.lines().count() == 1, "{}: {e}", f.name);
            }
            ids.push(e.ids);
        }
        let out = root.join(format!("{}.reference.safetensors", f.name));
        let unk = m.tokenizer.specials().unk as i64;
        ours.push((f, feats, ids, logits, notes, out, unk));
    }

    let mut checked = Vec::new();
    for (f, feats, ids, logits, notes, out, unk) in ours {
        let what = format!("{} ({}, {})", f.name, f.class, f.format);
        let theirs: HashMap<String, Tensor> = Tensor::read_safetensors(&out).unwrap().into_iter().collect();
        let fe: HashMap<String, Tensor> = Tensor::read_safetensors(&feats).unwrap().into_iter().collect();
        let offsets = Vec::<i64>::try_from(&fe["offsets"]).unwrap();
        let feat_ids = Vec::<i64>::try_from(&fe["input_ids"]).unwrap();
        let (mut worst_h, mut worst_l) = (0f64, 0f64);
        for (i, (lang, s)) in SENTENCES.iter().enumerate() {
            let want = Vec::<i64>::try_from(&theirs[&format!("ids_{i}")]).unwrap();
            assert_eq!(ids[i], want, "{what}: tokenizer ids of the {lang} sentence {s:?}");
            let (a, b) = (offsets[i], offsets[i + 1]);
            assert_eq!(feat_ids[a as usize..b as usize], want[..], "{what}: features input_ids, line {}", i + 1);
            let h = &theirs[&format!("hidden_{i}")];
            let rows = fe["hidden_states"].narrow(1, a, b - a);
            assert_eq!(rows.size(), h.size(), "{what}: hidden-state shapes, line {}", i + 1);
            for layer in 0..h.size()[0] {
                let diff = max_diff(&rows.get(layer), &h.get(layer));
                assert!(diff <= TOL, "{what}: line {} layer {layer} differs from transformers by {diff:e}", i + 1);
                worst_h = worst_h.max(diff);
            }
            if f.mlm {
                let diff = max_diff(&logits[i], &theirs[&format!("logits_{i}")]);
                assert!(diff <= TOL, "{what}: logits of line {} differ from transformers by {diff:e}", i + 1);
                worst_l = worst_l.max(diff);
            } else {
                assert!(!theirs.contains_key(&format!("logits_{i}")));
            }
        }
        // Some ids must be real words: a tokenizer that maps everything to [UNK] would agree trivially.
        let known = ids.iter().flatten().filter(|&&i| i != unk).count();
        assert!(known * 10 > ids.iter().flatten().count() * 7, "{what}: mostly unknown tokens: {ids:?}");
        let c = Checked { name: f.name.clone(), hidden: worst_h, logits: f.mlm.then_some(worst_l), notes };
        eprintln!(
            "{what}: max |Δ| hidden {:.2e}{}; notes {:?}",
            c.hidden,
            c.logits.map(|l| format!(", logits {l:.2e}")).unwrap_or_default(),
            c.notes
        );
        checked.push(c);
    }
    checked
}

fn notes_of<'a>(checked: &'a [Checked], name: &str) -> &'a [String] {
    &checked.iter().find(|c| c.name == name).unwrap().notes
}

/// Runs the binary and returns its failure text (panics if it succeeds).
fn fails(args: &[&str], d: &Path) -> String {
    let r = common::crossling(args, None, d);
    assert!(!r.status.success(), "{args:?} should fail:\n{}", common::text(&r));
    common::text(&r)
}

/// Copies a reference folder to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn edit_config(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join("config.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&p, v.to_string()).unwrap();
}

#[test]
fn bert_for_masked_lm_in_every_file_format() {
    let dir = tempfile::tempdir().unwrap();
    let c = check_suite(
        "bert",
        dir.path(),
        &["BertForMaskedLM-st", "BertForMaskedLM-sharded", "BertForMaskedLM-bin", "BertForMaskedLM-bin-sharded"],
    );
    for x in &c {
        assert!(x.notes.is_empty(), "{}: {:?}", x.name, x.notes);
    }
}

#[test]
fn bert_model_layout_and_what_needs_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = check_suite("bert-model", d, &["BertModel-st", "BertModel-bin"]);
    for name in ["BertModel-st", "BertModel-bin"] {
        let notes = notes_of(&c, name).join("\n");
        assert!(notes.contains("ignored 2 tensor(s) pooler.* (pooler"), "{notes}");
        assert!(notes.contains("BertModel has no masked-LM head"), "{notes}");
    }
    let bare = d.join("hf/BertModel-st");
    let b = bare.to_str().unwrap();

    // What needs the head says so in one line; what does not runs (the features above).
    let corpus = d.join("corpus.txt");
    std::fs::write(&corpus, "the cat sat on the mat .\na dog ran to the house .\n").unwrap();
    let c = corpus.to_str().unwrap();
    let e = fails(
        &[
            "analyse",
            "lang",
            "--model",
            b,
            "--src",
            "en",
            "--corpus-src",
            c,
            "--tgt",
            "fr",
            "--corpus-tgt",
            c,
            "--test-src",
            c,
            "--test-ref",
            c,
        ],
        d,
    );
    let line: Vec<&str> = e.lines().filter(|l| l.contains("needs a masked-LM head")).collect();
    assert_eq!(line.len(), 1, "{e}");
    assert!(line[0].contains("MDS token translation (--test-src) needs a masked-LM head"), "{e}");
    let e = fails(&["export", "--model", b, "--out", d.join("exported").to_str().unwrap()], d);
    assert!(e.contains("has no masked-LM head") && !d.join("exported").exists(), "{e}");

    // Errors: unknown architecture, missing tokenizer, tensors that do not fit — each names what it found.
    let text = d.join("sentences.txt");
    let t = text.to_str().unwrap();
    let out = d.join("x.safetensors");
    let features = |dir: &Path| {
        fails(
            &[
                "features",
                "--model",
                dir.to_str().unwrap(),
                "--text",
                t,
                "--lang",
                "en",
                "--out",
                out.to_str().unwrap(),
            ],
            d,
        )
    };
    let gpt = d.join("gpt");
    copy_dir(&bare, &gpt);
    edit_config(&gpt, |v| {
        v["model_type"] = "gpt2".into();
        v["architectures"] = serde_json::json!(["GPT2LMHeadModel"]);
    });
    let e = features(&gpt);
    assert!(e.contains("'model_type' is 'gpt2' (architectures: GPT2LMHeadModel)"), "{e}");
    assert!(e.contains("crossling reads model_type bert (BertModel, BertForMaskedLM, BertForPreTraining"), "{e}");
    assert!(e.contains("xlm-roberta (XLMRobertaModel") && e.contains("electra (ElectraModel"), "{e}");

    let notok = d.join("notok");
    copy_dir(&bare, &notok);
    for f in ["tokenizer.json", "vocab.txt", "tokenizer_config.json"] {
        let _ = std::fs::remove_file(notok.join(f));
    }
    std::fs::write(notok.join("sentencepiece.bpe.model"), "not read").unwrap();
    let e = features(&notok);
    assert!(e.contains("no tokenizer crossling can read: it reads tokenizer.json (WordPiece, BPE or Unigram"), "{e}");
    assert!(
        e.contains("found sentencepiece.bpe.model, a SentencePiece model, which the tokenizers crate cannot read"),
        "{e}"
    );

    let shallow = d.join("shallow");
    copy_dir(&bare, &shallow);
    edit_config(&shallow, |v| v["num_hidden_layers"] = 1.into());
    let e = features(&shallow);
    assert!(
        e.contains("the tensors do not fit a BertModel (encoder only, no masked-LM head) of its config.json"),
        "{e}"
    );
    assert!(e.contains("unexpected: 16 tensors — encoder.layer.* (16); first: encoder.layer.1.attention."), "{e}");
    assert!(e.lines().count() < 12, "a mismatch is a few lines, not one per tensor:\n{e}");

    // A tokenizer with an id past the embedding table (an added token beyond config.json's vocab_size).
    let wide = d.join("wide");
    copy_dir(&bare, &wide);
    let rows = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(wide.join("config.json")).unwrap())
        .unwrap()["vocab_size"]
        .as_u64()
        .unwrap();
    let tj = wide.join("tokenizer.json");
    let mut tok: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&tj).unwrap()).unwrap();
    tok["added_tokens"].as_array_mut().unwrap().push(serde_json::json!({
        "id": rows, "content": "[EXTRA]", "single_word": false, "lstrip": false, "rstrip": false,
        "normalized": false, "special": true
    }));
    std::fs::write(&tj, tok.to_string()).unwrap();
    let e = features(&wide);
    assert!(e.contains(&format!("the tokenizer has {} ids", rows + 1)) && e.contains("would index past it"), "{e}");

    // A weights file cut short: the error names the file; nothing is written.
    let cut = d.join("cut");
    copy_dir(&bare, &cut);
    let weights = cut.join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let e = features(&cut);
    assert!(e.contains(weights.to_str().unwrap()), "the error names the weights file: {e}");
    assert!(e.lines().count() < 4, "one short error:\n{e}");
    assert!(!out.exists(), "nothing written after a failed load");
}

#[test]
fn bert_for_pre_training_layout() {
    // -bin-legacy: mBERT's hub checkpoint (bert-base-multilingual-cased), a pre-1.6 torch.save file of this class.
    let dir = tempfile::tempdir().unwrap();
    let c = check_suite("bert-pretraining", dir.path(), &["BertForPreTraining-st", "BertForPreTraining-bin-legacy"]);
    for x in &c {
        let notes = x.notes.join("\n");
        assert!(notes.contains("ignored 2 tensor(s) bert.pooler.*"), "{}: {notes}", x.name);
        assert!(
            notes.contains("ignored 2 tensor(s) cls.seq_relationship.* (next-sentence-prediction head"),
            "{}: {notes}",
            x.name
        );
        assert!(x.logits.is_some(), "{}", x.name);
    }
}

#[test]
fn bert_task_model_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let classes = [
        ("BertForSequenceClassification", "classifier"),
        ("BertForTokenClassification", "classifier"),
        ("BertForQuestionAnswering", "qa_outputs"),
        ("BertForMultipleChoice", "classifier"),
        ("BertForNextSentencePrediction", "cls.seq_relationship"),
    ];
    let names: Vec<String> = classes.iter().map(|(c, _)| format!("{c}-st")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let c = check_suite("bert-tasks", dir.path(), &names);
    for ((class, head), x) in classes.iter().zip(&c) {
        let notes = x.notes.join("\n");
        assert!(notes.contains(&format!("ignored 2 tensor(s) {head}.* (")), "{class}: {notes}");
        assert!(notes.contains(&format!("{class} has no masked-LM head")), "{class}: {notes}");
    }
}

/// The suite of a non-BERT architecture: its masked LM (ELECTRA: discriminator) in three formats, its bare
/// encoder and a sequence classifier.
fn architecture(suite: &str, prefix: &str, main: &str, extra: &[&str]) -> Vec<Checked> {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = ["st", "sharded", "bin"].iter().map(|f| format!("{prefix}{main}-{f}")).collect();
    names.push(format!("{prefix}Model-st"));
    names.extend(extra.iter().map(|c| format!("{prefix}{c}-st")));
    names.push(format!("{prefix}ForSequenceClassification-st"));
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let c = check_suite(suite, dir.path(), &names);
    let task = notes_of(&c, &format!("{prefix}ForSequenceClassification-st")).join("\n");
    assert!(task.contains("classifier.* (task head"), "{task}");
    c
}

#[test]
fn roberta() {
    let c = architecture("roberta", "Roberta", "ForMaskedLM", &[]);
    for f in ["st", "sharded", "bin"] {
        assert!(notes_of(&c, &format!("RobertaForMaskedLM-{f}")).is_empty(), "{:?}", c);
    }
    assert!(notes_of(&c, "RobertaModel-st").join("\n").contains("ignored 2 tensor(s) pooler.*"));
}

#[test]
fn xlm_roberta() {
    let c = architecture("xlm-roberta", "XLMRoberta", "ForMaskedLM", &[]);
    assert!(notes_of(&c, "XLMRobertaForMaskedLM-st").is_empty(), "{c:?}");
}

#[test]
fn distilbert() {
    let c = architecture("distilbert", "DistilBert", "ForMaskedLM", &[]);
    assert!(notes_of(&c, "DistilBertForMaskedLM-bin").is_empty(), "{c:?}");
    let task = notes_of(&c, "DistilBertForSequenceClassification-st").join("\n");
    assert!(task.contains("pre_classifier.*"), "{task}");
    assert!(notes_of(&c, "DistilBertModel-st").iter().all(|n| !n.contains("pooler")), "DistilBERT has no pooler");
}

#[test]
fn distilbert_legacy_checkpoint() {
    // The format of distilbert-base-multilingual-cased's pytorch_model.bin on the hub.
    let dir = tempfile::tempdir().unwrap();
    let c = check_suite("distilbert-legacy", dir.path(), &["DistilBertForMaskedLM-bin-legacy"]);
    assert!(c[0].notes.is_empty() && c[0].logits.is_some(), "{c:?}");
}

#[test]
fn electra_discriminator_and_generator() {
    let c = architecture("electra", "Electra", "ForPreTraining", &["ForMaskedLM"]);
    let disc = notes_of(&c, "ElectraForPreTraining-st").join("\n");
    assert!(disc.contains("discriminator_predictions.* (ELECTRA's replaced-token-detection head"), "{disc}");
    assert!(c.iter().find(|x| x.name == "ElectraForMaskedLM-st").unwrap().logits.is_some());
}
