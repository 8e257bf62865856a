//! The record a figure script produces, written as `figures/ID.json`: our values, the paper's reported values,
//! the caption (scale and substitutions), chart and table specs to render from, and provenance. `crossling plot ID`
//! re-renders from this file alone.
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// Format version of the record.
pub const RECORD_FORMAT: u32 = 1;

/// One figure's or table's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureRecord {
    /// Always [`RECORD_FORMAT`].
    pub format: u32,
    /// Figure id (`fig7`, `liu-table2`, …).
    pub id: String,
    /// Title as shown on the chart.
    pub title: String,
    /// Caption: what is shown, at which scale, and every substitution of the study's setup.
    pub caption: String,
    /// Substitutions of the study's data or models, one sentence each (also in the caption).
    pub substitutions: Vec<String>,
    /// Our numbers, keyed by the script.
    pub values: BTreeMap<String, Value>,
    /// The paper's reported numbers where it gives them, keyed like `values`.
    pub paper: BTreeMap<String, Value>,
    /// Chart specs (`crate::plot` JSON) rendered to `ID.png` / `ID.svg` (several: `ID-2.png`, …).
    pub charts: Vec<Value>,
    /// Tables rendered to `ID.md` / `ID.csv`.
    pub tables: Vec<Value>,
    /// Scores with their 95 % intervals, keyed by the script (`results::score`); combined over seeds.
    #[serde(default)]
    pub scores: BTreeMap<String, crate::claims::Score>,
    /// The paper's claims behind this figure as predicates over `scores`, with their verdicts (`results::claim`).
    #[serde(default)]
    pub claims: Vec<crate::claims::Claim>,
    /// How the numbers were made.
    pub provenance: Provenance,
}

/// Where a record's numbers come from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// `git rev-parse HEAD` of the project, with `-dirty` when the tree had changes; `unknown` outside git.
    pub revision: String,
    pub crossling_version: String,
    pub libtorch: String,
    pub scale: String,
    pub seed: u64,
    /// Every seed the figure ran with (`figure ID --seeds N`); `values` and the charts are the first seed's, the
    /// scores combine them all. Empty in records made before seeds existed (then `seed` alone).
    #[serde(default)]
    pub seeds: Vec<u64>,
    pub device: String,
    /// libtorch's intra-op threads (`OMP_NUM_THREADS`, `--threads`): results are bit-identical for the same count,
    /// not across counts (float reduction order). Absent in records made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<i64>,
    /// The CPU model and logical CPUs ([`crate::device::machine::cpu_description`]): the same code, data, seed and
    /// threads can give other floats on another CPU. Absent in records made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Script path relative to the project, and its sha256 as the run started (a change while it ran is noted in
    /// the log, and the record then reads as made by an earlier version of the script).
    pub script: String,
    pub script_sha256: String,
    /// UTC start time (RFC 3339).
    pub started_at: String,
    pub wall_time_s: f64,
    /// Models used: name → cache key, config and folder.
    pub models: BTreeMap<String, Value>,
    /// Data files read: path in the mirror → sha256.
    pub data: BTreeMap<String, String>,
    /// The run log (`print` output and runtime notes).
    pub log: Vec<String>,
}

impl Provenance {
    /// Every seed the record ran with: `seeds`, or `[seed]` in records made before seeds existed.
    pub fn seeds_used(&self) -> Vec<u64> {
        if self.seeds.is_empty() {
            vec![self.seed]
        } else {
            self.seeds.clone()
        }
    }
}

impl FigureRecord {
    /// Reads a record; errors name the file.
    pub fn load(path: &Path) -> Result<FigureRecord> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let rec: FigureRecord =
            serde_json::from_str(&text).map_err(|e| Error::format(path, e.line(), e.to_string()))?;
        if rec.format != RECORD_FORMAT {
            return Err(Error::format_file(path, format!("record format {} (expected {RECORD_FORMAT})", rec.format)));
        }
        Ok(rec)
    }

    /// Writes the record atomically (temporary file, then rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Invalid(format!("record: {e}")))?;
        crate::atomic_file::write_atomic(path, text + "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = FigureRecord { format: RECORD_FORMAT, id: "fig7".into(), ..Default::default() };
        rec.values.insert("cka".into(), serde_json::json!([0.5, 0.25]));
        let p = dir.path().join("fig7.json");
        rec.save(&p).unwrap();
        assert_eq!(FigureRecord::load(&p).unwrap(), rec);
        std::fs::write(&p, "{\"format\": 1, \"id\": \"x\", \"bogus\": 2}").unwrap();
        assert!(FigureRecord::load(&p).unwrap_err().to_string().contains("bogus"));
        std::fs::write(&p, serde_json::to_string(&FigureRecord { format: 9, ..Default::default() }).unwrap()).unwrap();
        assert!(FigureRecord::load(&p).unwrap_err().to_string().contains("record format 9"));
    }
}
