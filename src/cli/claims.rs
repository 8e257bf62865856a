//! `crossling claims`: every claim of both papers with the paper's numbers, ours with their 95 % intervals, the
//! seeds and the verdict, from the records in `figures/` (or `--dir`); `--write` regenerates `REPRODUCTION.md`.
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use crossling::report::reproduction as report;

#[derive(Args)]
pub struct ClaimsArgs {
    /// Folder of the figure records (default: the project's figures/).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Only records of this scale (smoke | cpu | paper); a record of another scale is an error.
    #[arg(long, value_enum)]
    scale: Option<crossling::Scale>,
    /// Write the report to REPRODUCTION.md at the project root (or to this file) instead of printing it.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    write: Option<String>,
}

/// `crossling claims …`.
pub fn run(a: ClaimsArgs) -> Result<()> {
    let project = crossling::paths::crate_dir();
    let dir = a.dir.unwrap_or_else(|| project.join("figures"));
    let entries = report::load(&dir)?;
    if let Some(scale) = &a.scale {
        for e in &entries {
            if let Some(r) = &e.record {
                if r.provenance.scale != scale.name() {
                    bail!(
                        "{}: record at scale '{}', not '{scale}'",
                        dir.join(format!("{}.json", e.id)).display(),
                        r.provenance.scale
                    );
                }
            }
        }
    }
    let md = report::markdown(&entries);
    match a.write {
        None => print!("{md}"),
        Some(path) => {
            let out = if path.is_empty() { project.join("REPRODUCTION.md") } else { PathBuf::from(path) };
            crossling::atomic_file::write_atomic(&out, md)?;
            println!("claims: wrote {}", out.display());
        }
    }
    Ok(())
}
