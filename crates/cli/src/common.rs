//! Helpers shared by the subcommands: value parsers that name the allowed range,
//! the key file, the history store, Ctrl-C, and mapping engine errors to exit codes.

use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::compare::PathSpec;
use mtuperf_engine::config::bounds;
use mtuperf_engine::doctor::Profile;
use mtuperf_engine::EngineError;
use mtuperf_proto::auth::Key;
use mtuperf_proto::units::{parse_duration, BitsPerSec, Bytes};
use mtuperf_report::record::{RunKind, RunRecord};
use mtuperf_store::{Group, NewRun, Store, StoredRun};

use crate::exit::{self, Failure};
use crate::global::Global;

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

pub fn duration_in(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
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
    size_in(s, 1, bounds::MAX_BLOCK, " (e.g. 8K, 128K, 9000)").map(|v| v as u32)
}

/// --window: 1 KiB to 1 GiB.
pub fn parse_window(s: &str) -> Result<u32, String> {
    size_in(
        s,
        bounds::MIN_WINDOW,
        bounds::MAX_WINDOW,
        " (e.g. 256K, 4M)",
    )
    .map(|v| v as u32)
}

/// --bytes: 1 byte to 1 PiB.
pub fn parse_total(s: &str) -> Result<u64, String> {
    size_in(s, 1, bounds::MAX_TOTAL, " (e.g. 1G, 500M)")
}

/// --time: 100 ms to 24 h.
pub fn parse_test_time(s: &str) -> Result<Duration, String> {
    duration_in(s, bounds::MIN_TIME, bounds::MAX_TIME)
}

/// --interval: 10 ms to 1 h.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    duration_in(s, bounds::MIN_INTERVAL, bounds::MAX_INTERVAL)
}

/// --rx-coalesce: 0 to the agent's maximum (10 ms).
pub fn parse_rx_coalesce(s: &str) -> Result<Duration, String> {
    let max = Duration::from_micros(bounds::MAX_RX_COALESCE_US.into());
    duration_in(s, Duration::ZERO, max)
}

/// Durations from 0 up to 24 h (--omit, agent limits).
pub fn parse_any_duration(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::ZERO, bounds::MAX_TIME)
}

/// A count with SI suffixes (10k, 2.5k, 1M) from `min` to `max`.
pub fn count_in(s: &str, min: u64, max: u64, hint: &str) -> Result<u64, String> {
    let v = mtuperf_proto::units::parse_count(s)
        .map_err(|e| format!("{e}; allowed {min} to {max}{hint}"))?;
    if v < min || v > max {
        return Err(format!("{v} is out of range: allowed {min} to {max}{hint}"));
    }
    Ok(v)
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
    let hint =
        "give the file `mtuperf keygen` wrote, the one the agents run with (serve --key-file)";
    let text = std::fs::read_to_string(p).map_err(|e| {
        Failure::bad_value(
            "--key-file",
            &p.display().to_string(),
            "a readable key file",
            &format!("{e}; {hint}"),
        )
    })?;
    Key::parse_file(&text).map(Some).map_err(|e| {
        Failure::bad_value(
            "--key-file",
            &p.display().to_string(),
            "a key file",
            &format!("{e:#}; {hint}"),
        )
    })
}

pub fn connect_options(g: &Global, bind: Option<IpAddr>) -> Result<ConnectOptions, Failure> {
    Ok(ConnectOptions {
        bind,
        key: load_key(g.key_file.as_deref())?,
        ..ConnectOptions::default()
    })
}

/// Opens the history unless --no-store (a command that stores its runs).
pub fn open_store(g: &Global) -> Result<Option<Store>, Failure> {
    if g.no_store {
        return Ok(None);
    }
    open_history(g).map(Some)
}

/// Opens the history (`--db`, else the default location). Only the default location's
/// directory is created; an explicit --db whose directory is missing is an error naming
/// it (a typo must not become a directory tree, least of all as root).
pub fn open_history(g: &Global) -> Result<Store, Failure> {
    if let Some(p) = &g.db {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                return Err(Failure::bad_value(
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
        .map_err(|e| Failure::new(exit::FAILED, e))
}

/// A stored run's kind, read at the edge of the history (which keeps it as text): a
/// name this build does not know is an error naming the run and the kinds it knows.
pub fn run_kind(run: &StoredRun) -> anyhow::Result<RunKind> {
    run.kind
        .parse()
        .map_err(|e: String| anyhow::anyhow!("run {}: {e}", run.id))
}

/// A stored group's kind (a comparison's, an rr load sweep's), read like [`run_kind`].
pub fn group_kind(g: &Group) -> anyhow::Result<RunKind> {
    g.kind
        .parse()
        .map_err(|e: String| anyhow::anyhow!("group {}: {e}", g.id))
}

/// `--kind`: a run kind by name.
pub fn parse_kind(s: &str) -> Result<RunKind, String> {
    s.parse()
}

/// Where a run sits in the history besides its own figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Place<'a> {
    /// The peer as the user named it.
    pub target: &'a str,
    /// The comparison group or sweep the run belongs to.
    pub group: Option<i64>,
    /// The run's role in its group (a path name, "clients=4") or the user's label.
    pub label: Option<&'a str>,
}

/// Stores any measured result: the one place a history record is built.
pub fn store_record(
    store: Option<&Store>,
    rec: &dyn RunRecord,
    at: Place<'_>,
) -> Result<Option<i64>, Failure> {
    store_run(
        store,
        &NewRun {
            kind: rec.kind().name().into(),
            target: at.target.to_string(),
            started_unix_ms: rec.started_unix_ms(),
            headline: rec.headline(),
            headline_value: rec.headline_value(),
            interrupted: rec.interrupted(),
            document: rec.document(),
            group_id: at.group,
            label: at.label.map(str::to_string),
        },
    )
}

/// Stores a run. A storage failure does not end the command: the document is kept as a
/// JSON file and the failure reported after the output, with exit 5 (`unsaved`).
#[allow(clippy::unnecessary_wraps)] // every subcommand calls it with `?`; kept for them
fn store_run(store: Option<&Store>, run: &NewRun) -> Result<Option<i64>, Failure> {
    let Some(s) = store else { return Ok(None) };
    match s.insert(run) {
        Ok(id) => {
            crate::out::stored(id);
            Ok(Some(id))
        }
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

/// `f` with the error exit code of a command that has one for every error (path,
/// mesh, doctor: 2), except an interruption (Ctrl-C while agents are started over
/// SSH), which keeps 130.
pub fn error_code(f: Failure, code: u8) -> Failure {
    if f.code == exit::INTERRUPTED {
        return f;
    }
    Failure { code, ..f }
}

/// The exit code of a measuring command whose runs were printed and stored: 130 or
/// 143 when a signal stopped it, 5 when a run ended early on its own (a deadline,
/// a stall, the agent gone, an `rr --from` host failed; the reason goes to stderr,
/// escaped), `ok` otherwise.
pub fn measured_exit(stop: &AtomicBool, interrupt_reason: Option<&str>, ok: u8) -> u8 {
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        exit::INTERRUPTED
    } else if let Some(why) = interrupt_reason {
        let why = mtuperf_proto::text::escape_control(why);
        eprintln!("mtuperf: run interrupted: {why}");
        exit::FAILED
    } else {
        ok
    }
}

/// This process's command line as the user would type it again ("mtuperf lab down
/// --name rac", words quoted for a shell): what a message tells to rerun under sudo.
pub fn invocation() -> String {
    let argv: Vec<String> = std::iter::once("mtuperf".to_string())
        .chain(std::env::args().skip(1))
        .collect();
    mtuperf_lab::shell_line(&argv)
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
    Failure::new(code, engine_error(e))
}

/// An engine error as one message. Its text already carries its cause (it is also
/// what the engine writes into reasons and logs), so the cause is not chained again:
/// `main` prints the chain, and would print "Connection refused" twice. A refused
/// connection says what to start on the peer.
pub fn engine_error(e: EngineError) -> anyhow::Error {
    anyhow::Error::msg(format!("{e}{}", refused_hint(&e)))
}

/// What to do when the peer refused the connection: no agent listens there.
fn refused_hint(e: &EngineError) -> String {
    match e {
        EngineError::Connect { addr, source }
            if source.kind() == std::io::ErrorKind::ConnectionRefused =>
        {
            format!(
                "; no mtuperf agent listens there: start one on the peer with `mtuperf serve`, \
                 or add --ssh to start one over SSH for this run; \
                 to check the path MTU without an agent: mtuperf path --icmp {}",
                addr.ip()
            )
        }
        _ => String::new(),
    }
}

/// `--ci-width`: a percentage from 0.1 to 50.
pub fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.1..=50.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s} is not a percentage from 0.1 to 50 (e.g. 5 for ±5%)"
        )),
    }
}

/// NAME=HOST[,bind=ADDR]
pub fn parse_path(s: &str) -> Result<PathSpec, String> {
    let hint = "expected NAME=HOST[,bind=LOCAL_ADDR], e.g. jumbo=10.0.9.2,bind=10.0.9.1";
    let (name, rest) = s.split_once('=').ok_or_else(|| format!("{s}: {hint}"))?;
    let ok_name = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok_name {
        return Err(format!(
            "{name:?}: a path name is 1 to 32 letters, digits, '-' or '_'; {hint}"
        ));
    }
    let mut parts = rest.split(',');
    let target = parts.next().unwrap_or_default().to_string();
    if target.is_empty() {
        return Err(format!("{s}: no host; {hint}"));
    }
    let mut bind = None;
    for p in parts {
        match p.split_once('=') {
            Some(("bind", a)) => {
                bind = Some(
                    a.parse::<IpAddr>()
                        .map_err(|e| format!("bind={a}: {e}; {hint}"))?,
                );
            }
            _ => return Err(format!("{p}: unknown path option; {hint}")),
        }
    }
    Ok(PathSpec {
        name: name.to_string(),
        target,
        bind,
    })
}

/// doctor `--profile`.
pub fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

/// doctor `--rtt`: 1us to 10s.
pub fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = parse_any_duration(s)?;
    if d.is_zero() || d > Duration::from_secs(10) {
        return Err(format!(
            "{s} is out of range: allowed 1us to 10s (e.g. 200us, 25ms)"
        ));
    }
    Ok(d)
}

/// doctor `--sample`: 0s to 60s.
pub fn parse_sample(s: &str) -> Result<Duration, String> {
    let d = parse_any_duration(s)?;
    if d > Duration::from_mins(1) {
        return Err(format!("{s} is out of range: allowed 0s to 60s (e.g. 1s)"));
    }
    Ok(d)
}

/// doctor `--bandwidth`: a rate such as 10G.
pub fn parse_bandwidth(s: &str) -> Result<f64, String> {
    BitsPerSec::parse(s).map(|b| b.0).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::{count_in, engine_error, key_mode_warning, parse_test_time};
    use mtuperf_engine::EngineError;
    use std::path::Path;

    #[test]
    fn counts_take_si_suffixes_and_name_the_range() {
        assert_eq!(
            count_in("10k", 1, 100, ""),
            Err("10000 is out of range: allowed 1 to 100".into())
        );
        assert_eq!(count_in("2.5k", 1, 1_000_000, ""), Ok(2500));
        let e = count_in("1.5", 1, 100, " requests/s").unwrap_err();
        assert!(
            e.contains("\"1.5\"") && e.contains("allowed 1 to 100 requests/s"),
            "{e}"
        );
    }

    #[test]
    fn a_zero_maximum_duration_is_refused() {
        assert!(parse_test_time("0s").is_err());
        assert!(parse_test_time("2s").is_ok());
    }

    #[test]
    fn an_engine_error_names_its_cause_once() {
        let e = EngineError::Connect {
            addr: "127.0.0.1:1".parse().unwrap(),
            source: std::io::ErrorKind::ConnectionRefused.into(),
        };
        let text = format!("{:#}", engine_error(e));
        assert_eq!(text.matches("refused").count(), 1, "{text}");
        assert!(
            text.contains("start one on the peer with `mtuperf serve`")
                && text.contains("--ssh")
                && text.ends_with("mtuperf path --icmp 127.0.0.1"),
            "{text}"
        );
        let timeout = EngineError::Connect {
            addr: "127.0.0.1:1".parse().unwrap(),
            source: std::io::ErrorKind::TimedOut.into(),
        };
        assert!(!format!("{:#}", engine_error(timeout)).contains("mtuperf serve"));
    }

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
