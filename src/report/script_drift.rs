//! Whether a record was made by its script as the script is now. A record's provenance holds the script's path
//! (relative to the project) and its sha256 at the run ([`super::record::Provenance`]); when the file's sha256
//! differs today, or the file is gone, the record's values and verdicts are those of an earlier version of the
//! script, and the report says so (`REPRODUCTION.md`: a mark on the figure's rows, a line in its section). Only the
//! main script is hashed in a record, not the libraries it imports (`scripts/lib/`), so an equal hash says that
//! the main script is unchanged, nothing more.
use std::path::Path;

use super::record::Provenance;
use crate::error::Result;

/// How a record's script differs from the one in the project now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptDrift {
    /// The file exists and its sha256 is not the record's.
    Changed,
    /// The file no longer exists.
    Removed,
}

/// The drift of the script that made a record with provenance `p`, the script's path read under `project`; `None`
/// when the file is the one the record names, or when the record names no script or hash (records older than
/// provenance).
pub fn script_drift(project: &Path, p: &Provenance) -> Result<Option<ScriptDrift>> {
    if p.script.is_empty() || p.script_sha256.is_empty() {
        return Ok(None);
    }
    let path = project.join(&p.script);
    if !path.is_file() {
        return Ok(Some(ScriptDrift::Removed));
    }
    let (_, now) = crate::data::resolve::hash_file(&path, false)?;
    Ok((now != p.script_sha256).then_some(ScriptDrift::Changed))
}

/// The sentence a figure's section of the report carries when its record's script has drifted.
pub fn drift_note(p: &Provenance, drift: ScriptDrift) -> String {
    let rev: String = p.revision.chars().take(7).collect();
    match drift {
        ScriptDrift::Changed => format!(
            "Made by an earlier version of `{}`: the file has changed since revision `{rev}` made this record, so its \
             values and verdicts are that version's until the record is remade (`git diff {rev} -- {}` shows the \
             change; docs/studies/reading.md, what each change is for).",
            p.script, p.script
        ),
        ScriptDrift::Removed => format!(
            "Made by `{}` at revision `{rev}`, a script the project no longer has: its values and verdicts are that \
             script's.",
            p.script
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provenance(script: &str, sha: &str) -> Provenance {
        Provenance {
            revision: "0123456789abcdef".into(),
            script: script.into(),
            script_sha256: sha.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_script_is_drifted_when_its_hash_or_its_file_is_not_the_records() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/fig7.rhai"), "let x = 1;\n").unwrap();
        let (_, sha) = crate::data::resolve::hash_file(&dir.path().join("scripts/fig7.rhai"), false).unwrap();
        let same = provenance("scripts/fig7.rhai", &sha);
        assert_eq!(script_drift(dir.path(), &same).unwrap(), None);
        std::fs::write(dir.path().join("scripts/fig7.rhai"), "let x = 2;\n").unwrap();
        assert_eq!(script_drift(dir.path(), &same).unwrap(), Some(ScriptDrift::Changed));
        let gone = provenance("scripts/gone.rhai", &sha);
        assert_eq!(script_drift(dir.path(), &gone).unwrap(), Some(ScriptDrift::Removed));
        assert_eq!(script_drift(dir.path(), &provenance("", "")).unwrap(), None);
        let note = drift_note(&same, ScriptDrift::Changed);
        assert!(note.contains("`0123456`") && note.contains("git diff 0123456 -- scripts/fig7.rhai"), "{note}");
    }
}
