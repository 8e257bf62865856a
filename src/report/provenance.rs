//! Facts recorded with every result: the project's git revision, versions, and UTC timestamps.
use std::path::Path;
use std::process::Command;

/// Tracked paths whose changes do not make a revision dirty: what `crossling` itself writes (records, images,
/// `REPRODUCTION.md`). A grid's figure jobs run one after another in one checkout, so without this every figure after
/// the first would be marked dirty by the records of the figures before it.
const OUTPUT_PATHSPECS: [&str; 2] = [":(exclude)figures", ":(exclude)REPRODUCTION.md"];

/// `git rev-parse HEAD` in `dir`, with `-dirty` when tracked files other than the outputs ([`OUTPUT_PATHSPECS`])
/// changed; `unknown` outside a git checkout.
pub fn git_revision(dir: &Path) -> String {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--", "."];
            status.extend(OUTPUT_PATHSPECS);
            let dirty = run(&status).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        _ => "unknown".to_string(),
    }
}

/// Seconds since the Unix epoch as an RFC 3339 UTC timestamp (`2026-11-22T21:50:43Z`).
pub fn utc_rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Now, as [`utc_rfc3339`].
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    utc_rfc3339(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(utc_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_rfc3339(1_795_384_243), "2026-11-22T21:50:43Z");
    }

    #[test]
    fn revision_of_this_checkout() {
        let rev = git_revision(crate::paths::crate_dir());
        assert!(rev == "unknown" || rev.len() >= 40, "{rev}");
        assert_eq!(git_revision(Path::new("/")), "unknown");
    }

    #[test]
    fn outputs_do_not_make_the_revision_dirty() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(dir.path())
                .output()
                .map(|o| o.status.success());
            assert!(matches!(ok, Ok(true)), "git {args:?}");
        };
        std::fs::create_dir_all(dir.path().join("figures")).unwrap();
        std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
        for f in ["figures/fig7.json", "REPRODUCTION.md", "scripts/fig7.rhai"] {
            std::fs::write(dir.path().join(f), "a").unwrap();
        }
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "x"]);
        let clean = git_revision(dir.path());
        assert_eq!(clean.len(), 40, "{clean}");
        std::fs::write(dir.path().join("figures/fig7.json"), "b").unwrap();
        std::fs::write(dir.path().join("REPRODUCTION.md"), "b").unwrap();
        assert_eq!(git_revision(dir.path()), clean, "changed outputs only");
        std::fs::write(dir.path().join("scripts/fig7.rhai"), "b").unwrap();
        assert_eq!(git_revision(dir.path()), format!("{clean}-dirty"), "a changed script");
    }
}
