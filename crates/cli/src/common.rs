//! Helpers shared by the subcommands: value parsers that name the allowed range,
//! the key file, the history store, Ctrl-C, and mapping engine errors to exit codes.

use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::EngineError;
use mtuperf_proto::auth::Key;
use mtuperf_proto::units::{parse_duration, Bytes};
use mtuperf_store::{NewRun, Store};

use crate::cli::Global;
use crate::exit::{self, Failure};

fn size_in(s: &str, min: u64, max: u64, hint: &str) -> Result<u64, String> {
    let v = Bytes::parse(s)
        .map_err(|e| format!("{e}; allowed {} to {}{hint}", Bytes(min), Bytes(max)))?;
    if v.0 < min || v.0 > max {
        return Err(format!(
            "{} is out of range: allowed {} to {}{hint}",
            v.0,
            Bytes(min),
            Bytes(max)
        ));
    }
    Ok(v.0)
}

fn duration_in(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| e.to_string())?;
    if d < min || d > max {
        return Err(format!(
            "{s} is out of range: allowed {} to {}",
            humantime::format_duration(min),
            humantime::format_duration(max)
        ));
    }
    Ok(d)
}

/// --block: 1 byte to 16 MiB.
pub fn parse_block(s: &str) -> Result<u32, String> {
    size_in(s, 1, 16 << 20, " (e.g. 8K, 128K, 9000)").map(|v| v as u32)
}

/// --window: 1 KiB to 1 GiB.
pub fn parse_window(s: &str) -> Result<u32, String> {
    size_in(s, 1024, 1 << 30, " (e.g. 256K, 4M)").map(|v| v as u32)
}

/// --bytes: 1 byte to 1 PiB.
pub fn parse_total(s: &str) -> Result<u64, String> {
    size_in(s, 1, 1 << 50, " (e.g. 1G, 500M)")
}

/// --time: 100 ms to 24 h.
pub fn parse_test_time(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::from_millis(100), Duration::from_hours(24))
}

/// --interval: 10 ms to 1 h.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::from_millis(10), Duration::from_hours(1))
}

/// --rx-coalesce: 0 to the agent's maximum (10 ms).
pub fn parse_rx_coalesce(s: &str) -> Result<Duration, String> {
    let max = Duration::from_micros(mtuperf_proto::msg::MAX_RX_COALESCE_US.into());
    duration_in(s, Duration::ZERO, max)
}

/// Durations from 0 up to 24 h (--omit, agent limits).
pub fn parse_any_duration(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::ZERO, Duration::from_hours(24))
}

/// The warning for a key file that others than its owner may read, if it is one.
pub fn key_mode_warning(path: &Path, mode: u32) -> Option<String> {
    (mode & 0o077 != 0).then(|| {
        format!(
            "warning: key file {} is readable or writable by group or others (mode {:04o}); anyone who can read it can run tests against the agent: chmod 600 {}",
            path.display(),
            mode & 0o7777,
            path.display()
        )
    })
}

pub fn load_key(path: Option<&Path>) -> Result<Option<Key>, Failure> {
    let Some(p) = path else { return Ok(None) };
    if let Ok(meta) = std::fs::metadata(p) {
        use std::os::unix::fs::PermissionsExt;
        if let Some(w) = key_mode_warning(p, meta.permissions().mode()) {
            eprintln!("{w}");
        }
    }
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("reading key file {}", p.display()))
        .map_err(|e| Failure::new(exit::USAGE, e))?;
    Key::parse_file(&text)
        .with_context(|| format!("key file {}", p.display()))
        .map(Some)
        .map_err(|e| Failure::new(exit::USAGE, e))
}

pub fn connect_options(g: &Global, bind: Option<IpAddr>) -> Result<ConnectOptions, Failure> {
    Ok(ConnectOptions {
        bind,
        key: load_key(g.key_file.as_deref())?,
        ..ConnectOptions::default()
    })
}

/// Opens the history unless --no-store. Only the default location's directory is
/// created; an explicit --db whose directory is missing is an error naming it (a typo
/// must not become a directory tree, least of all as root).
pub fn open_store(g: &Global) -> Result<Option<Store>, Failure> {
    if g.no_store {
        return Ok(None);
    }
    if let Some(p) = &g.db {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                return Err(Failure::usage(
                    "--db",
                    &p.display().to_string(),
                    "a file in an existing directory",
                    &format!(
                        "directory {} does not exist; create it first (mkdir -p) or drop --db for the default location",
                        dir.display()
                    ),
                ));
            }
        }
    }
    let path = g.db.clone().unwrap_or_else(Store::default_path);
    Store::open(&path)
        .with_context(|| format!("opening history {}", path.display()))
        .map(Some)
        .map_err(|e| Failure::new(exit::FAILED, e))
}

/// Stores a run. A storage failure does not end the command: the document is kept as a
/// JSON file and the failure reported after the output, with exit 5 (`unsaved`).
#[allow(clippy::unnecessary_wraps)] // every subcommand calls it with `?`; kept for them
pub fn store_run(store: Option<&Store>, run: &NewRun) -> Result<Option<i64>, Failure> {
    let Some(s) = store else { return Ok(None) };
    match s.insert(run) {
        Ok(id) => Ok(Some(id)),
        Err(e) => {
            crate::unsaved::keep(s.path(), &run.kind, &run.document, &e.into());
            Ok(None)
        }
    }
}

/// Ctrl-C (SIGINT) and SIGTERM set the returned flag: the run in progress stops,
/// is printed and stored as interrupted, and the command exits 130 (SIGINT) or 143
/// (SIGTERM). A second signal of either kind exits at once with its code.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let code = exit::signal_code(sig);
        let _ = signal_hook::flag::register_conditional_shutdown(sig, code, flag.clone());
        let _ = signal_hook::flag::register_usize(sig, exit::last_signal(), sig as usize);
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}

/// The exit code of a measuring command whose runs were printed and stored: 130 or
/// 143 when a signal stopped it, 5 when a run ended early on its own (a deadline,
/// a stall, the agent gone; the reason goes to stderr), `ok` otherwise.
pub fn measured_exit(stop: &AtomicBool, interrupt_reason: Option<&str>, ok: u8) -> u8 {
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        exit::INTERRUPTED
    } else if let Some(why) = interrupt_reason {
        eprintln!("mtuperf: run interrupted: {why}");
        exit::FAILED
    } else {
        ok
    }
}

/// Exit code for an engine error: unreachable, refused, or failed.
pub fn engine_failure(e: EngineError) -> Failure {
    let code = if e.is_unreachable() {
        exit::UNREACHABLE
    } else if e.is_refusal() {
        exit::REFUSED
    } else {
        exit::FAILED
    };
    Failure::new(code, e)
}

#[cfg(test)]
mod tests {
    use super::key_mode_warning;
    use std::path::Path;

    #[test]
    fn key_files_others_can_read_are_warned_about() {
        let p = Path::new("/etc/mtuperf/key");
        assert!(key_mode_warning(p, 0o100_600).is_none());
        assert!(key_mode_warning(p, 0o100_400).is_none());
        let w = key_mode_warning(p, 0o100_644).unwrap();
        assert!(
            w.contains("mode 0644") && w.contains("chmod 600 /etc/mtuperf/key"),
            "{w}"
        );
        assert!(key_mode_warning(p, 0o100_660).is_some());
    }
}
