//! `REPRODUCTION.md` is generated from the committed records (`crossling claims --write`): this test fails when a
//! record changed without regenerating it, and `crossling claims` must print the same text.
use std::path::Path;
use std::process::Command;

#[test]
fn reproduction_md_matches_the_committed_records() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = crossling::report::reproduction::load(&root.join("figures")).expect("records load");
    let expected = crossling::report::reproduction::markdown(&entries);
    let committed = std::fs::read_to_string(root.join("REPRODUCTION.md")).expect("REPRODUCTION.md exists");
    assert!(
        committed == expected,
        "REPRODUCTION.md is out of date with figures/*.json: run `cargo run --release -- claims --write`"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_crossling")).arg("claims").output().expect("run crossling claims");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), expected);
}

#[test]
fn a_record_of_another_scale_is_refused() {
    let o = Command::new(env!("CARGO_BIN_EXE_crossling"))
        .args(["claims", "--scale", "paper"])
        .output()
        .expect("run crossling claims");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not 'paper'"));
}
