//! A committed record's caption states the pre-training that ran (issue 69): every "pre-trained for N steps" in it
//! is the step budget of a model in its provenance, read from that model's own config. Liu's captions said the
//! scale's 1,500 steps (`c::scale_note()`) for a multilingual model trained 4,500; the scripts now build that text
//! from the model (`c::scale_note_of(m)`, `train::describe(m)`). The records listed in `PREDATE_THE_FIX` were made
//! before and need trained models to remake; a record made since, or any new record, must agree.
mod common;

use std::collections::BTreeSet;
use std::path::Path;

/// Records committed before captions were built from the models' configs (docs/studies/reading.md), by path under
/// `figures/`. Remove an entry when its record is remade.
const PREDATE_THE_FIX: &[&str] = &[
    "liu-fig1.json",
    "liu-fig2.json",
    "liu-fig3.json",
    "liu-fig4.json",
    "liu-fig5.json",
    "liu-fig6.json",
    "regime/emergence-4x128.json",
    "regime/emergence-4x64.json",
    "regime/emergence-enx-4x128.json",
    "regime/emergence-preln.json",
];

/// Every N of "pre-trained for N steps" in `caption` (N with thousands commas).
fn stated_steps(caption: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let key = "pre-trained for ";
    let mut rest = caption;
    while let Some(i) = rest.find(key) {
        rest = &rest[i + key.len()..];
        let n: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',').collect();
        if rest[n.len()..].starts_with(" steps") {
            if let Ok(v) = n.replace(',', "").parse() {
                out.push(v);
            }
        }
    }
    out
}

/// The step budgets of the trained models in a record's provenance (snapshots, random encoders and given models
/// carry no config).
fn model_steps(rec: &serde_json::Value) -> BTreeSet<u64> {
    let models = rec["provenance"]["models"].as_object();
    models.into_iter().flatten().filter_map(|(_, m)| m["config"]["train"]["steps"].as_u64()).collect()
}

#[test]
fn stated_steps_are_read_with_their_commas() {
    let c = "cpu scale (4-layer, 128-wide models (4 heads) pre-trained for 1,500 steps of 32 × 64 tokens), each \
             pre-trained for 18,000 steps; pre-trained for long";
    assert_eq!(stated_steps(c), [1_500, 18_000]);
}

#[test]
fn committed_captions_state_the_steps_their_models_trained() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("figures");
    let mut files = Vec::new();
    common::records(&root, &mut files);
    let mut wrong = Vec::new();
    let mut still_stale = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let Some(caption) = rec["caption"].as_str() else { continue };
        let trained = model_steps(&rec);
        if trained.is_empty() {
            continue; // schematics read configs without training; given models state no steps of ours
        }
        let bad: Vec<u64> = stated_steps(caption).into_iter().filter(|n| !trained.contains(n)).collect();
        let listed = PREDATE_THE_FIX.contains(&rel.as_str());
        if !bad.is_empty() && !listed {
            wrong.push(format!("{rel}: caption states {bad:?} steps, its models trained {trained:?}"));
        }
        if bad.is_empty() && listed {
            still_stale.push(rel);
        }
    }
    assert!(wrong.is_empty(), "captions that misstate the pre-training:\n{}", wrong.join("\n"));
    assert!(still_stale.is_empty(), "remade records still listed in PREDATE_THE_FIX (remove them): {still_stale:?}");
}

/// Records whose en–zh NER read PAN-X Chinese in traditional script with models pre-trained on simplified Chinese
/// (about 2 F1 whatever the model), made before NER's `zh_script` option converted it (issue 69; table1, fig3 and
/// fig5 now ask for it through `tr::task_options`; fig5 was remade with it on 2026-12-07). Remove an entry when its
/// record is remade.
const PREDATE_ZH_SCRIPT: &[&str] = &["fig3.json", "table1.json"];

/// Whether a record's substitutions say its NER read PAN-X zh in traditional script with this project's models: the
/// "Tasks" note of the records before the option, or today's note for data read as it is (`tr::ner_note()`, for
/// pretrained encoders, which read traditional script) on models that we trained.
fn reads_traditional_zh(rec: &serde_json::Value) -> bool {
    let subs: Vec<&str> = rec["substitutions"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
    let old_note = subs.iter().any(|s| s.contains("whose Chinese set is in traditional script"));
    let as_is = subs.iter().any(|s| s.contains("PAN-X Chinese is read as the file gives it"));
    old_note || (as_is && !model_steps(rec).is_empty())
}

#[test]
fn committed_records_score_en_zh_ner_in_the_script_of_their_models() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("figures");
    let mut files = Vec::new();
    common::records(&root, &mut files);
    let mut wrong = Vec::new();
    let mut still_stale = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let listed = PREDATE_ZH_SCRIPT.contains(&rel.as_str());
        match (reads_traditional_zh(&rec), listed) {
            (true, false) => wrong.push(rel),
            (false, true) => still_stale.push(rel),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "records whose models read PAN-X zh in traditional script: {wrong:?}");
    assert!(still_stale.is_empty(), "remade records still listed in PREDATE_ZH_SCRIPT (remove them): {still_stale:?}");
}
