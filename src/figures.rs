//! The figure registry: every figure and table id of DESIGN.md with its study, what it shows, and its script
//! (`scripts/ID.rhai`). An id is runnable when its script exists; `crossling figure list` shows which are.
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One figure or table of the two studies, or one of crossling's own measurements (study `crossling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FigureInfo {
    pub id: &'static str,
    /// `Emerging` (Wu, Conneau et al. 2020), `Liu` (Liu et al. 2020) or `crossling` (this project's own).
    pub study: &'static str,
    pub title: &'static str,
}

/// Every id of DESIGN.md, in the studies' order.
pub const FIGURES: &[FigureInfo] = &[
    FigureInfo { id: "fig1", study: "Emerging", title: "Parameter-sharing ablations (schematic)" },
    FigureInfo { id: "fig2", study: "Emerging", title: "Monolingual alignment probe (schematic)" },
    FigureInfo { id: "fig3", study: "Emerging", title: "Zero-shot transfer of the ablations" },
    FigureInfo { id: "fig4", study: "Emerging", title: "Word alignment of monolingual models" },
    FigureInfo { id: "fig5", study: "Emerging", title: "Contextual word alignment transfer per layer" },
    FigureInfo { id: "fig6", study: "Emerging", title: "Sentence retrieval after Procrustes per layer" },
    FigureInfo { id: "fig7", study: "Emerging", title: "Linear CKA per layer" },
    FigureInfo { id: "table1", study: "Emerging", title: "Ablation results (XNLI, NER, parsing)" },
    FigureInfo {
        id: "table1-synthetic",
        study: "crossling",
        title: "Table 1's ablations on the synthetic pair en–enx",
    },
    FigureInfo { id: "emergence", study: "crossling", title: "Emergence curves over the pre-training budget" },
    FigureInfo { id: "emergence-enx", study: "crossling", title: "Emergence curves of the synthetic pair en–enx" },
    FigureInfo { id: "liu-fig1", study: "Liu", title: "Word retrieval MRR, small data" },
    FigureInfo { id: "liu-fig2", study: "Liu", title: "XNLI, small data" },
    FigureInfo { id: "liu-fig3", study: "Liu", title: "Word retrieval MRR, big data" },
    FigureInfo { id: "liu-fig4", study: "Liu", title: "XNLI, big data" },
    FigureInfo { id: "liu-fig5", study: "Liu", title: "Context window and MRR" },
    FigureInfo { id: "liu-fig6", study: "Liu", title: "Context window and XNLI" },
    FigureInfo { id: "liu-fig7", study: "Liu", title: "Convert rate over alpha x layer" },
    FigureInfo { id: "liu-fig8", study: "Liu", title: "BLEU-1 of unsupervised token translation" },
    FigureInfo { id: "liu-table1", study: "Liu", title: "Sample token translations" },
    FigureInfo { id: "liu-table2", study: "Liu", title: "Best BLEU-1 per pair" },
    FigureInfo { id: "liu-table3", study: "Liu", title: "Token-set sizes" },
    FigureInfo { id: "liu-table4", study: "Liu", title: "XNLI with the mean-difference shift" },
];

/// The figure `id`, or an error listing the known ids.
pub fn info(id: &str) -> Result<&'static FigureInfo> {
    FIGURES.iter().find(|f| f.id == id).ok_or_else(|| {
        Error::Invalid(format!(
            "unknown figure '{id}'; known: {}",
            FIGURES.iter().map(|f| f.id).collect::<Vec<_>>().join(", ")
        ))
    })
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
        assert_eq!(info("fig7").unwrap().study, "Emerging");
        assert!(info("fig9").unwrap_err().to_string().contains("known: fig1"));
    }
}
