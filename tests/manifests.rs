//! The shipped manifests load, and — when the real-data mirror is present — list exactly the mirror's files.
use crossling::data::manifest::{read_sources_tsv, Catalog, Format};
use std::collections::BTreeSet;
mod common;

#[test]
fn default_catalog_loads() {
    let cat = Catalog::load_default().expect("data-manifests/ loads");
    assert!(cat.manifests().len() >= 35, "only {} manifests", cat.manifests().len());
    for id in ["eltec-en", "novels-zh", "news-mono", "muse", "xnli", "ud-zh-gsdsimp", "udpos"] {
        let m = cat.get(id).unwrap();
        assert!(!m.files.is_empty(), "{id} has no files");
        assert!(!m.citation.is_empty() && !m.licence.is_empty(), "{id}");
    }
    assert_eq!(cat.get("eltec-en").unwrap().format, Format::EltecTei);
    assert_eq!(cat.get("news-mono").unwrap().domain.as_deref(), Some("news"));
    assert!(cat.get("eltec-en").unwrap().files.iter().all(|f| f.gzip_in_mirror && f.lang.as_deref() == Some("en")));
    let err = cat.get("no-such-set").unwrap_err().to_string();
    assert!(err.contains("no-such-set") && err.contains("eltec-en"), "{err}");
    let ids: Vec<&str> = cat.manifests().iter().map(|m| m.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
}

#[test]
#[cfg_attr(no_data_mirror, ignore = "needs the data mirror: $CROSSLING_DATA or ../shared/data")]
fn manifests_match_the_mirror_sources_exactly() {
    let mirror = common::mirror().expect("the data mirror (without it this test is ignored)");
    let sources = mirror.join("SOURCES.tsv");
    let rows = read_sources_tsv(&sources).unwrap();
    let expected: BTreeSet<(String, u64, String, String)> =
        rows.iter().map(|r| (r.path.clone(), r.bytes, r.sha256.clone(), r.raw_url())).collect();
    assert_eq!(expected.len(), rows.len(), "SOURCES.tsv has duplicate rows");

    let cat = Catalog::load_default().unwrap();
    let mut listed = Vec::new();
    for m in cat.manifests() {
        for f in &m.files {
            listed.push((f.path.clone(), f.bytes, f.sha256.clone(), f.url.clone()));
        }
    }
    let got: BTreeSet<_> = listed.iter().cloned().collect();
    assert_eq!(got.len(), listed.len(), "a file is listed twice");
    let missing: Vec<_> = expected.difference(&got).take(5).collect();
    let extra: Vec<_> = got.difference(&expected).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing from manifests: {missing:#?}\nnot in SOURCES.tsv: {extra:#?}"
    );

    // Files the mirror gzips (mono/{en,fr,de,ru,zh}) are flagged, and exist under their mirror path.
    for m in cat.manifests() {
        for f in &m.files {
            let gz_dir = ["en", "fr", "de", "ru", "zh"].iter().any(|l| f.path.starts_with(&format!("mono/{l}/")));
            assert_eq!(f.gzip_in_mirror, gz_dir, "{}", f.path);
            assert!(mirror.join(&f.path).is_file(), "{} is not in the mirror", f.path);
        }
    }
}
