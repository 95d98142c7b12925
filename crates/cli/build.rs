//! Stamps `mtuperf --version` with the git commit and the build date. Building from a
//! tarball without `.git` (or without git installed) says so instead of failing.
//! The date is UTC from SOURCE_DATE_EPOCH when set (reproducible builds), else now.
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// civil_from_days; written here to keep the build free of a date crate).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
    }
    if let Some(dir) = git(&["rev-parse", "--git-common-dir"]) {
        println!("cargo:rerun-if-changed={dir}/refs/heads");
        println!("cargo:rerun-if-changed={dir}/packed-refs");
    }
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
    let commit = match commit {
        Some(c) if dirty => format!("{c}-modified"),
        Some(c) => c,
        None => "no git commit".into(),
    };
    println!(
        "cargo:rustc-env=MTUPERF_VERSION={} ({commit}, built {y:04}-{m:02}-{d:02})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
}
