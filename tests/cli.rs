//! End-to-end tests of the `crossling data` verbs through the real binary: bad input gives a clear message and a
//! non-zero exit; with the mirror present, verification, stats and corpus building work on the real files.
mod common;

use common::{crossling, mirror, text};
use std::path::{Path, PathBuf};

#[test]
fn unknown_dataset_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = crossling(&["data", "verify", "no-such-set"], None, tmp.path());
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("unknown dataset 'no-such-set'") && t.contains("eltec-en"), "{t}");
}

#[test]
fn missing_mirror_offline_names_file_url_and_variable() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty-mirror");
    std::fs::create_dir_all(&empty).unwrap();
    let o = crossling(&["data", "fetch", "xnli"], Some(&empty), &tmp.path().join("cache"));
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("xnli/") && t.contains("https://") && t.contains("CROSSLING_DATA"), "{t}");
    assert!(!tmp.path().join("cache/xnli").exists(), "nothing may be written to the cache");
}

/// Copy the files of `dataset` from the real mirror into a scratch mirror, so they can be tampered with.
fn scratch_mirror(real: &Path, dir: &Path, files: &[&str]) -> PathBuf {
    let m = dir.join("mirror");
    for f in files {
        let to = m.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(real.join(f), &to).unwrap();
    }
    m
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn wrong_sha256_and_truncated_gzip_fail_verification_naming_the_file() {
    let real = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let files = ["parallel/tico19/en-fr.tico19-test.fr.gz", "parallel/tico19/en-fr.tico19-test.en.gz"];
    let m = scratch_mirror(&real, tmp.path(), &files);
    // Truncate one gzip file: verification must name it and fail.
    let victim = m.join(files[0]);
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    let o = crossling(&["data", "verify", "tico19"], Some(&m), &tmp.path().join("cache"));
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("en-fr.tico19-test.fr.gz") && t.contains("sha256 mismatch"), "{t}");
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn verify_passes_on_the_whole_mirror() {
    let real = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let o = crossling(&["data", "verify"], Some(&real), tmp.path());
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("files of") && t.contains("verified"), "{t}");
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn stats_count_xnli_records_per_language() {
    let real = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let o = crossling(&["data", "stats", "xnli", "--json"], Some(&real), tmp.path());
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for lang in ["en", "fr", "de", "ru", "zh"] {
        // dev 2,490 + test 5,010 examples per language (shared/data/README.md).
        assert_eq!(v["xnli"][lang]["sentences"], 7500, "{lang}: {t}");
        assert_eq!(v["xnli"][lang]["documents"], 2, "{lang}");
    }
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn corpus_builder_caps_splits_and_is_deterministic() {
    let real = mirror().expect("the data mirror (without it this test is ignored)");
    let tmp = tempfile::tempdir().unwrap();
    let run = |out: &str| {
        let o = crossling(
            &[
                "data",
                "corpus",
                "--lang",
                "fr",
                "--dataset",
                "eltec-fr",
                "--max-sentences",
                "400",
                "--valid-per-mille",
                "50",
                "--seed",
                "3",
                "--out",
                out,
            ],
            Some(&real),
            &tmp.path().join("cache"),
        );
        assert!(o.status.success(), "{}", text(&o));
    };
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    run(a.to_str().unwrap());
    run(b.to_str().unwrap());
    let train = std::fs::read_to_string(a.join("fr.train.txt")).unwrap();
    assert_eq!(train.lines().count(), 400);
    assert!(train.lines().all(|l| !l.trim().is_empty() && !l.contains('<')));
    let valid = std::fs::read_to_string(a.join("fr.valid.txt")).unwrap();
    assert!(valid.lines().count() <= 20);
    assert_eq!(train, std::fs::read_to_string(b.join("fr.train.txt")).unwrap());
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("fr.corpus.json")).unwrap()).unwrap();
    assert_eq!(record["domains"][0], "novels");
    assert_eq!(record["train"]["sentences"], 400);
    assert!(!a.join("fr.train.txt.tmp").exists());
}
