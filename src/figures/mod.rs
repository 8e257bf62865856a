//! The figure registry: every figure and table of the two studies, and crossling's own measurements, with the figure
//! or table it reproduces, its title, what it tests, its data, models and cost per scale ([`registry`], the one place
//! this is written), and its script (`scripts/ID.rhai`). An id is runnable when its script exists.
//!
//! Made from it, never written by hand: `crossling figure list` (`--json` for other tools), the title of every record
//! a figure's own script makes (the runner sets it; `results::title` may not say otherwise), README.md's figure table and
//! `notebooks/figures.json`, which `notebooks/build.py` reads (`crossling figure list --write` regenerates both;
//! tests/figure_registry.rs checks they are current).
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

mod registry;
pub use registry::{CROSSLING, EMERGING, FIGURES, LIU};

/// One figure or table of the two studies, or one of crossling's own measurements (study [`CROSSLING`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FigureInfo {
    /// `fig7`, `liu-table2`, …: the script is `scripts/ID.rhai`, the record `figures/ID.json`.
    pub id: &'static str,
    /// [`EMERGING`] (Wu, Conneau et al. 2020), [`LIU`] (Liu et al. 2020) or [`CROSSLING`] (this project's own).
    pub study: &'static str,
    /// What of the study it reproduces (`Figure 7`, `Table 1`); for crossling's own, the issue that asked for it.
    pub reproduces: &'static str,
    /// The record's title (set by the runner), the notebook's heading.
    pub title: &'static str,
    /// What it tests, one line (`figure list`, README.md's table).
    pub tests: &'static str,
    /// What the study argues with it, a paragraph (the notebook's *Claim*).
    pub claim: &'static str,
    /// The data the script reads.
    pub data: &'static str,
    /// The models (and static vectors) it trains or reuses.
    pub models: &'static str,
    /// What a run costs at each scale, where measured.
    pub budget: Budget,
}

/// The measured cost of one figure at each scale (wall time on this project's 2-core machine, with what was cached
/// then), `None` where it has not been run. The details of each measurement: docs/usage/figures.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub smoke: Option<&'static str>,
    pub cpu: Option<&'static str>,
    pub paper: Option<&'static str>,
}

impl FigureInfo {
    /// The study and what of it this reproduces: `Emerging Figure 7`, `crossling issue 25`.
    pub fn reference(&self) -> String {
        format!("{} {}", self.study, self.reproduces)
    }
}

/// The figure `id`, or an error listing the known ids.
pub fn info(id: &str) -> Result<&'static FigureInfo> {
    find(id).ok_or_else(|| {
        Error::Invalid(format!(
            "unknown figure '{id}'; known: {}",
            FIGURES.iter().map(|f| f.id).collect::<Vec<_>>().join(", ")
        ))
    })
}

/// The figure `id` if it is registered.
pub fn find(id: &str) -> Option<&'static FigureInfo> {
    FIGURES.iter().find(|f| f.id == id)
}

/// The registry row of `id` when `script_file` is that figure's own script (`scripts/ID.rhai` in `scripts`), so that
/// running it makes the figure's record, whose title is the registry's; `None` for any other script, one's own or one
/// whose file stem happens to be an id (`scripts/prefill/emergence-enx.rhai`).
pub fn registered_run(scripts: &Path, id: &str, script_file: &Path) -> Option<&'static FigureInfo> {
    let own = std::fs::canonicalize(script(scripts, id)?).ok()?;
    (std::fs::canonicalize(script_file).ok()? == own).then(|| find(id)).flatten()
}

/// The registry as pretty JSON, one object per figure in registry order, ending in a newline: what
/// `crossling figure list --json` prints and `notebooks/figures.json` holds.
pub fn registry_json() -> String {
    // Plain strings and options: serialising cannot fail.
    serde_json::to_string_pretty(FIGURES).unwrap_or_default() + "\n"
}

/// The project's `scripts/` folder: `$CROSSLING_SCRIPTS`, else the one beside the crate.
pub fn scripts_dir() -> PathBuf {
    crate::paths::env_or_beside_crate("CROSSLING_SCRIPTS", "scripts")
}

/// The script of `id` in `scripts`, if it exists.
pub fn script(scripts: &Path, id: &str) -> Option<PathBuf> {
    let p = scripts.join(format!("{id}.rhai"));
    p.is_file().then_some(p)
}

/// The runnable figures: those whose script exists.
pub fn runnable(scripts: &Path) -> Vec<&'static FigureInfo> {
    FIGURES.iter().filter(|f| script(scripts, f.id).is_some()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_known() {
        let mut ids: Vec<_> = FIGURES.iter().map(|f| f.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), FIGURES.len());
        assert_eq!(info("fig7").unwrap().study, EMERGING);
        assert!(info("fig9").unwrap_err().to_string().contains("known: fig1"));
    }

    #[test]
    fn a_registered_run_is_the_figure_s_own_script() {
        let dir = tempfile::tempdir().unwrap();
        let (scripts, prefill) = (dir.path().join("scripts"), dir.path().join("scripts/prefill"));
        std::fs::create_dir_all(&prefill).unwrap();
        for p in [scripts.join("fig7.rhai"), prefill.join("fig7.rhai"), scripts.join("mine.rhai")] {
            std::fs::write(p, "").unwrap();
        }
        let run = |id: &str, file: &Path| registered_run(&scripts, id, file).map(|f| f.title);
        assert_eq!(run("fig7", &scripts.join("fig7.rhai")), Some(info("fig7").unwrap().title));
        assert_eq!(run("fig7", &scripts.join("prefill/../fig7.rhai")), Some(info("fig7").unwrap().title));
        assert_eq!(run("fig7", &prefill.join("fig7.rhai")), None);
        assert_eq!(run("mine", &scripts.join("mine.rhai")), None);
        assert_eq!(run("fig6", &scripts.join("fig6.rhai")), None, "no script there");
    }

    #[test]
    fn every_row_is_filled_in_and_names_a_known_study() {
        for f in FIGURES {
            assert!([EMERGING, LIU, CROSSLING].contains(&f.study), "{}: study {}", f.id, f.study);
            for (field, text) in [
                ("reproduces", f.reproduces),
                ("title", f.title),
                ("tests", f.tests),
                ("claim", f.claim),
                ("data", f.data),
                ("models", f.models),
            ] {
                assert!(!text.trim().is_empty(), "{}: empty {field}", f.id);
                // One line each: the README table and the notebooks' Markdown read them as cells and sentences.
                assert!(!text.contains('\n') && !text.contains('|'), "{}: {field} has a newline or '|'", f.id);
                assert_eq!(text, text.trim(), "{}: {field} has surrounding spaces", f.id);
            }
            // The study's ids name the study's own figures; crossling's own say which issue they answer.
            let expected = match f.study {
                CROSSLING => "issue ",
                _ if f.id.contains("table") => "Table ",
                _ => "Figure ",
            };
            assert!(f.reproduces.starts_with(expected), "{}: reproduces '{}'", f.id, f.reproduces);
        }
        assert_eq!(info("liu-table4").unwrap().reference(), "Liu Table 4");
        assert_eq!(info("fig7").unwrap().budget.paper, None);
    }

    #[test]
    fn the_json_holds_every_row_in_order() {
        let v: serde_json::Value = serde_json::from_str(&registry_json()).unwrap();
        let rows = v.as_array().unwrap();
        assert_eq!(rows.len(), FIGURES.len());
        for (row, f) in rows.iter().zip(FIGURES) {
            assert_eq!(row["id"], f.id);
            assert_eq!(row["title"], f.title);
            assert_eq!(row["budget"]["cpu"].as_str(), f.budget.cpu);
        }
        assert!(registry_json().ends_with("}\n]\n"));
    }
}
