//! The files made from the figure registry ([`crate::figures`]): README.md's figure table — each registered figure
//! with what it reproduces and tests, its record's claims by verdict (`figures/ID.json`; its id marked † when an
//! earlier version of its script made the record, as in REPRODUCTION.md), and its measured cost at `cpu` — between
//! two marker comments, and `notebooks/figures.json` (the registry as JSON, which
//! `notebooks/build.py` reads). Written by `crossling figure list --write`; tests/figure_registry.rs checks that the
//! committed files match, as tests/claims.rs does for `REPRODUCTION.md`.
use std::path::{Path, PathBuf};

use super::record::FigureRecord;
use super::reproduction::{is_schematic, verdict_index, Entry};
use crate::error::{Error, Result};
use crate::figures::{self, CROSSLING};

/// The line before README.md's figure table.
pub const TABLE_BEGIN: &str =
    "<!-- figure table: made by `crossling figure list --write` from src/figures/registry.rs \
                               and figures/*.json; do not edit by hand -->";
/// The line after it.
pub const TABLE_END: &str = "<!-- end of the figure table -->";

/// The command that rewrites every file of [`generated`].
pub const WRITE_COMMAND: &str = "cargo run --release -- figure list --write";

/// Every file made from the registry, as `(path under project, expected text)`: README.md with its figure table
/// made from the registry and the records in `project/figures/`, and `notebooks/figures.json`.
pub fn generated(project: &Path) -> Result<Vec<(PathBuf, String)>> {
    let entries = super::reproduction::load(&project.join("figures"))?;
    let readme = project.join("README.md");
    let text = std::fs::read_to_string(&readme).map_err(|e| Error::io(&readme, e))?;
    let readme_text =
        splice(&text, &table(&entries)).map_err(|e| Error::Invalid(format!("{}: {e}", readme.display())))?;
    Ok(vec![(readme, readme_text), (project.join("notebooks").join("figures.json"), figures::registry_json())])
}

/// The Markdown table: one row per registered figure, in registry order (the runs on pretrained encoders of
/// `entries` are left out: they are no figure of the registry). The records' own wall times and dates are in
/// docs/usage/figures.md, not here: README.md is no measurement log.
pub fn table(entries: &[Entry]) -> String {
    let mut md = String::from(
        "| id | reproduces | what it tests | claims: supported / contradicted / inconclusive | a run at `cpu`, 2 \
         cores |\n|---|---|---|---|---|\n",
    );
    for e in entries.iter().filter(|e| e.model.is_none()) {
        let Some(f) = figures::find(&e.id) else { continue };
        let reproduces = if f.study == CROSSLING { "— (crossling)".to_string() } else { f.reference() };
        let claims = e.record.as_ref().map_or_else(|| "no record".to_string(), claims_cell);
        md.push_str(&format!(
            "| {} | {reproduces} | {} | {claims} | {} |\n",
            e.shown_id(),
            f.tests,
            f.budget.cpu.unwrap_or("not measured")
        ));
    }
    md
}

/// The claims of a record by verdict (`3 / 0 / 1`), `schematic` for a figure that draws a setup, `none` otherwise.
fn claims_cell(r: &FigureRecord) -> String {
    if r.claims.is_empty() {
        return if is_schematic(r) { "schematic".into() } else { "none".into() };
    }
    let mut counts = [0usize; 3];
    for c in &r.claims {
        counts[verdict_index(c.verdict)] += 1;
    }
    format!("{} / {} / {}", counts[0], counts[1], counts[2])
}

/// `readme` with everything between its [`TABLE_BEGIN`] and [`TABLE_END`] lines replaced by `table`.
pub fn splice(readme: &str, table: &str) -> std::result::Result<String, String> {
    let begin =
        readme.find(TABLE_BEGIN).ok_or_else(|| format!("no line '{TABLE_BEGIN}' to put the figure table after"))?;
    let after = begin + TABLE_BEGIN.len();
    let end = readme[after..]
        .find(TABLE_END)
        .map(|i| after + i)
        .ok_or_else(|| format!("no line '{TABLE_END}' after the figure table's first marker"))?;
    Ok(format!("{}\n{table}{}", &readme[..after], &readme[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_row_per_figure_with_its_record_s_claims_and_cost() {
        let project = tempfile::tempdir().unwrap();
        let dir = project.path().join("figures");
        std::fs::create_dir_all(project.path().join("scripts")).unwrap();
        std::fs::write(project.path().join("scripts/fig7.rhai"), "// edited since the record\n").unwrap();
        let mut r = FigureRecord {
            format: crate::report::record::RECORD_FORMAT,
            id: "fig7".into(),
            title: "CKA".into(),
            ..Default::default()
        };
        r.provenance.scale = "cpu".into();
        r.provenance.wall_time_s = 3457.64;
        r.provenance.seeds = vec![0, 1, 2];
        r.provenance.started_at = "2026-12-02T01:29:04Z".into();
        let mut fig1 = FigureRecord { id: "fig1".into(), ..r.clone() };
        fig1.paper.insert("paper_values".into(), "schematic".into());
        fig1.provenance.seeds = vec![0];
        fig1.save(&dir.join("fig1.json")).unwrap();
        r.provenance.script = "scripts/fig7.rhai".into();
        r.provenance.script_sha256 = "0".repeat(64);
        r.save(&dir.join("fig7.json")).unwrap();
        let md = table(&super::super::reproduction::load(&dir).unwrap());
        assert_eq!(md.lines().count(), 2 + figures::FIGURES.len(), "{md}");
        assert!(
            md.contains(
                "| fig1 | Emerging Figure 1 | the parameter-sharing ablations (schematic) | schematic | 0.4 s |"
            ),
            "{md}"
        );
        let fig7 =
            "| fig7 † | Emerging Figure 7 | linear CKA per layer: bilingual, monolingual, random | none | 2.2–2.5 h";
        assert!(md.contains(fig7), "a record its script no longer makes is marked: {md}");
        assert!(
            md.contains("| table1 | Emerging Table 1 | the ten ablations × en–fr/ru/zh on XNLI, NER, parsing | no record | 9.45"),
            "{md}"
        );
        assert!(md.contains("| emergence | — (crossling) |"), "{md}");
        assert!(!md.contains("2026-"), "README's table holds no dates: {md}");
    }

    #[test]
    fn splicing_replaces_only_what_is_between_the_markers() {
        let readme = format!("# x\n\nintro\n{TABLE_BEGIN}\n| old |\n{TABLE_END}\nafter\n");
        let new = splice(&readme, "| new |\n").unwrap();
        assert_eq!(new, format!("# x\n\nintro\n{TABLE_BEGIN}\n| new |\n{TABLE_END}\nafter\n"));
        assert_eq!(splice(&new, "| new |\n").unwrap(), new);
        assert!(splice("# x\n", "t").unwrap_err().contains("no line"));
        assert!(splice(&format!("{TABLE_BEGIN}\n"), "t").unwrap_err().contains("after the figure table's first"));
    }
}
