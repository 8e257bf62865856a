//! Figure records and what is made from them, without the Rhai engine (issue 68 §3): the claims, the plots, the job
//! graph and the notebooks read a record through this room alone.
//!
//! - [`record`]: the `figures/ID.json` record with its provenance; [`provenance`]: git revision and timestamps.
//! - [`charts`]: a script's chart or table spec checked against [`crate::plot`]'s types before it enters a record.
//! - [`render`]: record → PNG/SVG/MD/CSV with its footer; [`generations`]: which generation of the `cpu` presets
//!   made a record's models (footers, REPRODUCTION.md).
//! - [`script_drift`]: whether a record's script has changed since the record was made (REPRODUCTION.md marks it).
//! - [`reproduction`]: `REPRODUCTION.md` from the committed records (`crossling claims`); [`registry_files`]:
//!   README.md's figure table and `notebooks/figures.json` from the figure registry and the records
//!   (`crossling figure list --write`).
pub mod charts;
pub mod generations;
pub mod provenance;
pub mod record;
pub mod registry_files;
pub mod render;
pub mod reproduction;
pub mod script_drift;

pub use record::{FigureRecord, Provenance};
