//! The agent's configuration: where it listens, its key, limits, timeouts and log sink.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::auth::Key;
use mtuperf_proto::msg::Limits;

use super::logrl;
use crate::said::{Note, Said};

pub use crate::serve::LogLevel;

/// One line of the agent's log, formatted by the caller (text or JSON): its message
/// typed where its words are report's ([`Said`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LogLine {
    pub level: LogLevel,
    pub peer: Option<SocketAddr>,
    pub event: &'static str,
    pub message: Said,
    /// The message's figures as named values (for JSON logs), with human names for
    /// enumerations ("udp", not "Udp").
    pub fields: serde_json::Map<String, serde_json::Value>,
}

pub type LogFn = Arc<dyn Fn(&LogLine) + Send + Sync>;

#[derive(Clone)]
pub struct AgentConfig {
    pub binds: Vec<SocketAddr>,
    pub key: Option<Key>,
    pub limits: Limits,
    /// Clients allowed to connect; empty means everyone.
    pub allow: Vec<IpNet>,
    /// Bound on the handshake (Hello, Auth) and on a data connection's Hello.
    pub handshake_timeout: Duration,
    /// Bound on a control session's silence between tests.
    pub idle_timeout: Duration,
    /// Connections accepted but not yet through their handshake; more are closed at once.
    pub max_pending: usize,
    /// Honour fault-injection hooks in requests (tests of the measurement only).
    pub test_hooks: bool,
    /// `serve --cpus`: the processor set rr's `--agent-cpu` may pin serving threads
    /// to (None: every online CPU).
    pub cpus: Option<Vec<u32>>,
    pub log: LogFn,
    /// The agent's own counters, served on `/metrics` when asked.
    pub counters: super::counters::AgentCounters,
    /// Keeps the agent's own watch checks and the tests it serves apart.
    pub gate: Arc<super::gate::Gate>,
    /// The cap on the connections the agent holds (the metrics listener's included)
    /// and the connections promised to tests; set when the agent binds.
    pub(crate) conns: Arc<super::conns::Conns>,
    /// Connections in handshake, by source address.
    pub(crate) pending: Arc<super::pending::Pending>,
    /// Warnings per event are rate-limited (see `logrl`).
    limiter: Arc<logrl::LogLimiter>,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("binds", &self.binds)
            .field("limits", &self.limits)
            .field("allow", &self.allow)
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    pub fn new(binds: Vec<SocketAddr>) -> AgentConfig {
        AgentConfig {
            binds,
            key: None,
            limits: Limits::default(),
            allow: Vec::new(),
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_mins(2),
            max_pending: 1024,
            test_hooks: false,
            cpus: None,
            log: Arc::new(|_| {}),
            counters: super::counters::AgentCounters::default(),
            gate: Arc::default(),
            conns: super::conns::Conns::for_this_process(),
            pending: Arc::default(),
            limiter: Arc::default(),
        }
    }

    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 @ IpAddr::V4(_) => v4,
        };
        self.allow.is_empty() || self.allow.iter().any(|n| n.contains(&ip))
    }

    /// Logs one line. Control characters in the message's text (which may quote what
    /// a peer sent) are escaped so no line can be forged; warnings are rate-limited per
    /// event.
    pub fn log(
        &self,
        level: LogLevel,
        peer: Option<SocketAddr>,
        event: &'static str,
        message: impl Into<Said>,
    ) {
        self.log_fields(level, peer, event, message, serde_json::Map::new());
    }

    /// Logs a [`Note`] (the log function words it).
    pub fn note(&self, level: LogLevel, peer: Option<SocketAddr>, event: &'static str, note: Note) {
        self.log(level, peer, event, Said::Note(note));
    }

    /// [`Self::log`] with the message's figures as named fields.
    pub(crate) fn log_fields(
        &self,
        level: LogLevel,
        peer: Option<SocketAddr>,
        event: &'static str,
        message: impl Into<Said>,
        fields: serde_json::Map<String, serde_json::Value>,
    ) {
        if level == LogLevel::Warn {
            match self.limiter.check(event, std::time::Instant::now()) {
                logrl::Verdict::Drop => return,
                logrl::Verdict::Emit { suppressed: 0 } => {}
                logrl::Verdict::Emit { suppressed } => (self.log)(&LogLine {
                    level,
                    peer: None,
                    event,
                    message: Said::Text(format!(
                        "{suppressed} more {event:?} warnings suppressed in the last {} s",
                        logrl::WINDOW.as_secs()
                    )),
                    fields: serde_json::Map::new(),
                }),
            }
        }
        let message = match message.into() {
            Said::Text(t) => Said::Text(escaped(t)),
            Said::Failed { text, failed } => Said::Failed {
                text: escaped(text),
                failed,
            },
            n @ Said::Note(_) => n,
        };
        let fields = fields
            .into_iter()
            .map(|(k, v)| (k, escaped_value(v)))
            .collect();
        (self.log)(&LogLine {
            level,
            peer,
            event,
            message,
            fields,
        });
    }
}

/// `s` with control and format characters escaped (see `mtuperf_proto::text`).
fn escaped(s: String) -> String {
    match mtuperf_proto::text::escape_control(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(m) => m,
    }
}

/// A log field with every string in it escaped: a JSON log keeps a right-to-left
/// override or an escape sequence as the character itself, and whoever reads the
/// log on a terminal gets it.
fn escaped_value(v: serde_json::Value) -> serde_json::Value {
    mtuperf_proto::text::escape_json(v)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::{AgentConfig, LogLevel, LogLine, Said};

    #[test]
    fn log_levels_keep_their_words_in_text_and_json() {
        for (level, word) in [(LogLevel::Info, "info"), (LogLevel::Warn, "warn")] {
            assert_eq!(level.to_string(), word);
            assert_eq!(word.parse::<LogLevel>(), Ok(level));
            let json = serde_json::to_string(&level).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<LogLevel>(&json).unwrap(), level);
        }
    }

    #[test]
    fn an_unknown_log_level_is_refused_by_name() {
        let e = "error".parse::<LogLevel>().unwrap_err();
        assert_eq!(e, r#"unknown log level "error"; one of info, warn"#);
        assert!(serde_json::from_str::<LogLevel>(r#""Warn""#).is_err());
    }

    #[test]
    fn peer_text_in_a_log_line_and_its_fields_is_escaped() {
        let lines: Arc<Mutex<Vec<LogLine>>> = Arc::default();
        let mut config = AgentConfig::new(Vec::new());
        let sink = lines.clone();
        config.log = Arc::new(move |l: &LogLine| sink.lock().unwrap().push(l.clone()));
        let fields = serde_json::json!({
            "name": "eth0\u{202e}gpj.exe",
            "list": ["a\u{2066}b", 3],
            "inner": { "x\ny": "\u{1b}[2J" },
        });
        let serde_json::Value::Object(fields) = fields else {
            unreachable!()
        };
        config.log_fields(
            LogLevel::Info,
            None,
            "test",
            "from peer: node\u{202e}txt.exe\n2026 forged".to_string(),
            fields,
        );
        let got = lines.lock().unwrap().pop().unwrap();
        assert_eq!(
            got.message,
            Said::Text("from peer: node\\u{202e}txt.exe\\n2026 forged".into())
        );
        let json = serde_json::Value::Object(got.fields).to_string();
        assert_eq!(
            json,
            r#"{"inner":{"x\\ny":"\\x1b[2J"},"list":["a\\u{2066}b",3],"name":"eth0\\u{202e}gpj.exe"}"#
        );
    }
}
