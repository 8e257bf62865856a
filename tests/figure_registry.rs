//! What is made from the figure registry (`src/figures/registry.rs`) stays made from it: README.md's figure table and
//! `notebooks/figures.json` match the registry and the committed records (`crossling figure list --write`, as
//! tests/claims.rs checks REPRODUCTION.md), `figure list --json` prints the registry, and a registered figure's
//! record takes its title from the registry, which its script may not contradict.
mod common;

use std::path::Path;

use common::{crossling, mirror, text};
use crossling::report::registry_files::{generated, WRITE_COMMAND};

#[test]
fn readme_table_and_notebook_registry_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, expected) in generated(root).expect("the registry's files are made") {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == expected,
            "{} is out of date with src/figures/registry.rs and figures/*.json: run `{WRITE_COMMAND}`{}",
            path.strip_prefix(root).unwrap_or(&path).display(),
            if path.ends_with("figures.json") { ", then `.venv/bin/python notebooks/build.py`" } else { "" }
        );
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.lines().count() <= 250, "README.md grew past 250 lines");
}

#[test]
fn figure_list_json_is_the_registry() {
    let work = tempfile::tempdir().unwrap();
    let o = crossling(&["figure", "list", "--json"], None, work.path());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), crossling::figures::registry_json());
    let o = crossling(&["figure", "list"], None, work.path());
    assert!(o.status.success() && text(&o).contains("fig7              Emerging Figure 7     yes"), "{}", text(&o));
    let o = crossling(&["figure", "fig7", "--json"], None, work.path());
    assert!(!o.status.success() && text(&o).contains("go with `figure list`"), "{}", text(&o));
}

#[test]
fn no_registered_script_sets_its_own_title() {
    let scripts = crossling::figures::scripts_dir();
    for f in crossling::figures::runnable(&scripts) {
        let script = std::fs::read_to_string(scripts.join(format!("{}.rhai", f.id))).unwrap();
        let libs = script.lines().filter_map(|l| l.trim().strip_prefix("import \"")?.split('"').next());
        for (name, text) in std::iter::once((format!("{}.rhai", f.id), script.clone())).chain(
            libs.map(|l| (format!("{l}.rhai"), std::fs::read_to_string(scripts.join(format!("{l}.rhai"))).unwrap())),
        ) {
            assert!(
                !text.contains("results::title("),
                "{}: scripts/{name} sets a title; the registry's is the record's",
                f.id
            );
        }
    }
}

#[test]
fn a_registered_figure_takes_the_registry_title() {
    let data = mirror();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let title = crossling::figures::info("fig2").unwrap().title;
    let o = crossling(
        &["figure", "fig2", "--scale", "smoke", "--out", out.to_str().unwrap()],
        data.as_deref(),
        work.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let rec = crossling::report::record::FigureRecord::load(&out.join("fig2.json")).unwrap();
    assert_eq!(rec.title, title);
    // A copy of the script that sets another title: refused as the registry's fig2, its own title under another folder.
    let scripts = work.path().join("scripts");
    std::fs::create_dir_all(scripts.join("lib")).unwrap();
    let real = crossling::figures::scripts_dir();
    std::fs::copy(real.join("lib/common.rhai"), scripts.join("lib/common.rhai")).unwrap();
    let retitled = std::fs::read_to_string(real.join("fig2.rhai")).unwrap() + "\nresults::title(\"Another title\");\n";
    std::fs::write(scripts.join("fig2.rhai"), &retitled).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_crossling"));
    cmd.args(["figure", "fig2", "--scale", "smoke", "--out", out.to_str().unwrap()])
        .env("CROSSLING_SCRIPTS", &scripts)
        .env("CROSSLING_CACHE", work.path().join("cache"))
        .env("CROSSLING_MODELS", work.path().join("models"))
        .env("CROSSLING_OFFLINE", "1");
    let o = cmd.output().unwrap();
    assert!(!o.status.success() && text(&o).contains("fig2's title is the registry's"), "{}", text(&o));
    let own = work.path().join("mine");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("fig2.rhai"), &retitled).unwrap(); // `import "lib/…"` resolves in the project's scripts/
    let o = crossling(
        &[
            "run",
            own.join("fig2.rhai").to_str().unwrap(),
            "--scale",
            "smoke",
            "--out",
            work.path().join("own").to_str().unwrap(),
        ],
        data.as_deref(),
        work.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let rec = crossling::report::record::FigureRecord::load(&work.path().join("own/fig2.json")).unwrap();
    assert_eq!(rec.title, "Another title");
}
