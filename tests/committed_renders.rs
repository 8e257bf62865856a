//! A committed record's tables say what its JSON says (issue 69): every `figures/**/ID.md` and `ID.csv` beside an
//! `ID.json` is byte-for-byte what `crossling plot ID` renders from that JSON today. A record remade without its
//! tables re-rendered (figures/emergence.md stated the 20M-token targets of the record before the one committed)
//! fails here until `crossling plot --out DIR ID` is run. Images are left to `tests/figures.rs`, which checks that a
//! re-render reproduces them on one machine (fonts may differ between machines).
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn committed_tables_are_what_their_json_renders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("figures");
    let mut files = Vec::new();
    common::records(&root, &mut files);
    let work = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut stale = Vec::new();
    for (i, json) in files.iter().enumerate() {
        let id = json.file_stem().unwrap().to_str().unwrap();
        let tables: Vec<PathBuf> =
            ["md", "csv"].iter().map(|e| json.with_extension(e)).filter(|p| p.is_file()).collect();
        if tables.is_empty() {
            continue;
        }
        let dir = work.path().join(i.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(json, dir.join(format!("{id}.json"))).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_crossling"))
            .args(["plot", "--out", dir.to_str().unwrap(), id])
            .output()
            .expect("run crossling plot");
        assert!(o.status.success(), "plot {}: {}", json.display(), String::from_utf8_lossy(&o.stderr));
        for t in tables {
            let rendered = dir.join(t.file_name().unwrap());
            let same = std::fs::read(&rendered).ok() == std::fs::read(&t).ok();
            if !same {
                stale.push(t.strip_prefix(&root).unwrap().display().to_string());
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no committed table under {}", root.display());
    assert!(
        stale.is_empty(),
        "differ from what their JSON renders (re-render with `crossling plot --out DIR ID`): {stale:?}"
    );
}
