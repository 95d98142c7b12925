//! Reaching an agent: the key file (its permissions warned about), the connection
//! options, and what an engine error means: its exit code and, for a refused
//! connection, what to start on the peer.

use std::net::IpAddr;
use std::path::Path;

use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::EngineError;
use mtuperf_proto::auth::Key;

use crate::exit::{self, Failure};
use crate::global::Global;

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
            errln!("{w}");
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

/// An engine error as one message, in report's words (which name the flag that fixes
/// it). Its text already carries its cause, so the cause is not chained again: `main`
/// prints the chain, and would print "Connection refused" twice. A refused connection
/// says what to start on the peer.
pub fn engine_error(e: EngineError) -> anyhow::Error {
    anyhow::Error::msg(format!(
        "{}{}",
        mtuperf_report::error::engine_error(&e),
        refused_hint(&e)
    ))
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

#[cfg(test)]
mod tests {
    use super::{engine_error, key_mode_warning};
    use mtuperf_engine::EngineError;
    use std::path::Path;

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
