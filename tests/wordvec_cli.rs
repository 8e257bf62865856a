//! End to end through the binary: `crossling wordvec train` on a run folder's corpora writes vectors that read
//! back, in both formats, with every kind; bad settings and outputs are refused before anything is written.
mod common;

use common::{crossling, text};
use crossling::wordvec::WordVectors;
use std::path::Path;

/// A run folder with word corpora of two languages: topic words that co-occur only within their topic.
fn run_folder(dir: &Path) {
    let corpora = dir.join("corpora");
    std::fs::create_dir_all(&corpora).unwrap();
    let mut en = String::new();
    let mut fr = String::new();
    for i in 0..400 {
        let k = i % 4;
        en.push_str(&format!("cat{k} dog{k} pet{k} the\n"));
        fr.push_str(&format!("chat{k} chien{k} le\n"));
    }
    std::fs::write(corpora.join("en.train.txt"), en).unwrap();
    std::fs::write(corpora.join("fr.train.txt"), fr).unwrap();
}

#[test]
fn every_kind_trains_on_a_run_folder_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    run_folder(tmp.path());
    let run = tmp.path().display().to_string();
    for (kind, out) in [("word2vec", "w.vec"), ("fasttext", "f.safetensors"), ("glove", "g.vec")] {
        let out = tmp.path().join(out);
        let o = crossling(
            &[
                "wordvec",
                "train",
                "--run",
                &run,
                "--kind",
                kind,
                "--unit",
                "word",
                "--langs",
                "en,fr",
                "--set",
                "dim=16",
                "--set",
                "epochs=2",
                "--out",
                out.to_str().unwrap(),
                "--json",
            ],
            None,
            tmp.path(),
        );
        assert!(o.status.success(), "{kind}: {}", text(&o));
        let v = WordVectors::load(&out).unwrap();
        assert_eq!(v.dim(), 16, "{kind}");
        assert_eq!(v.len(), 22, "{kind}: 4 × 3 en + 4 × 2 fr topic words + the + le");
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["sentences"], 800, "{kind}");
    }
    assert!(std::fs::read_dir(tmp.path()).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("scratch")));
}

#[test]
fn bad_settings_and_outputs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    run_folder(tmp.path());
    let run = tmp.path().display().to_string();
    let out = tmp.path().join("x.vec");
    let args = |kind: &'static str, set: &'static str, out: &str| {
        crossling(
            &[
                "wordvec", "train", "--run", &run, "--kind", kind, "--unit", "word", "--langs", "en", "--set", set,
                "--out", out,
            ],
            None,
            tmp.path(),
        )
    };
    let o = args("word2vec", "dimm=16", out.to_str().unwrap());
    assert!(!o.status.success() && text(&o).contains("dimm"), "{}", text(&o));
    let o = args("word3vec", "dim=16", out.to_str().unwrap());
    assert!(!o.status.success() && text(&o).contains("expected word2vec, fasttext or glove"), "{}", text(&o));
    let o = args("word2vec", "dim=16", tmp.path().join("x.txt").to_str().unwrap());
    assert!(!o.status.success() && text(&o).contains(".vec or .safetensors"), "{}", text(&o));
    assert!(!out.exists(), "nothing written on refusal");
    let o = crossling(
        &[
            "wordvec",
            "train",
            "--run",
            &run,
            "--kind",
            "glove",
            "--unit",
            "word",
            "--langs",
            "de",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
        tmp.path(),
    );
    assert!(!o.status.success() && text(&o).contains("de.train.txt"), "{}", text(&o));
}
