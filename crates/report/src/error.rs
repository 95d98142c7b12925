//! Failures in words: an engine error for people, and the `mtuperf.error/1` document
//! a command asked for JSON prints when it fails.
use mtuperf_engine::config::ConfigError;
use mtuperf_engine::error::{AuthFailure, Within};
use mtuperf_engine::EngineError;
use schemars::JsonSchema;
use serde::Serialize;

/// The `schema` of an error document.
pub const SCHEMA: &str = "mtuperf.error/1";

/// What a command asked for JSON (`--json` or `--format json`) prints on stdout when it
/// fails; the same message goes to stderr, and the process exits with `exit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorDoc {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: &'static str,
    /// The whole error chain on one line.
    pub error: String,
    /// The exit code (README, Exit codes).
    #[schemars(range(min = 1))]
    pub exit: u8,
}

impl ErrorDoc {
    pub fn new(error: String, exit: u8) -> ErrorDoc {
        ErrorDoc {
            schema: SCHEMA,
            error,
            exit,
        }
    }

    /// The document as compact JSON.
    pub fn json(&self) -> String {
        // Two strings and a number always serialize.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// An engine error in words for people: the engine's own text, a refusal in report's
/// words, and for the errors whose fix is a flag, the flag (the engine names no flag:
/// it has none).
pub fn engine_error(e: &EngineError) -> String {
    match e {
        EngineError::FromHost { host, source } => format!("--from {host}: {}", engine_error(source)),
        EngineError::Refused(r) => crate::refusal::refusal(r),
        EngineError::PeerRefused { peer, refusal } => {
            format!("agent error: {}", crate::refusal::peer_refused(peer, refusal))
        }
        EngineError::Auth(AuthFailure::AgentOpen) => "authentication: a key was given but the agent does not authenticate (it runs without --key-file); refusing to talk to an unauthenticated agent".into(),
        EngineError::NoSharedNetwork { within } => no_shared_network(within),
        EngineError::NoNodeAnswered { first } => format!(
            "agent error: no node's agent could be asked for its interfaces (first: {})",
            crate::refusal::failed(first)
        ),
        EngineError::NoFile { .. } => format!(
            "RLIMIT_NOFILE: {e}; raise it (ulimit -Hn, LimitNOFILE= in a systemd unit, /etc/security/limits.conf) or run fewer --clients"
        ),
        EngineError::Config(ConfigError::FromHosts {
            hosts,
            clients,
            rate,
        }) => format!(
            "{hosts} --from host(s) need at least one client and one request/s each (--clients {clients}, --rate {})",
            rate.map_or("none".into(), |r| r.to_string())
        ),
        _ => e.to_string(),
    }
}

/// Why a mesh has nothing to test: the networks it looked among, by the flag that chose them.
fn no_shared_network(within: &Within) -> String {
    match within {
        Within::Oifcfg => "no cluster_interconnect subnet of --oifcfg is held by two of the nodes (on the interface it names)".into(),
        Within::All => "no network is shared by two of the nodes".into(),
        Within::Nets(nets) => {
            let nets: Vec<String> = nets.iter().map(ToString::to_string).collect();
            format!(
                "no network is shared by two of the nodes within --net {}",
                nets.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_whose_fix_is_a_flag_name_it() {
        let open = EngineError::Auth(AuthFailure::AgentOpen);
        assert!(engine_error(&open).contains("(it runs without --key-file)"));
        let from = EngineError::FromHost {
            host: "n1".into(),
            source: Box::new(open),
        };
        assert!(
            engine_error(&from).starts_with("--from n1: authentication: a key was given")
                && engine_error(&from).contains("--key-file"),
            "{}",
            engine_error(&from)
        );
        let nets = EngineError::NoSharedNetwork {
            within: Within::Nets(vec![
                "192.168.0.0/16".parse().unwrap(),
                "fd00::/8".parse().unwrap(),
            ]),
        };
        assert_eq!(
            engine_error(&nets),
            "no network is shared by two of the nodes within --net 192.168.0.0/16, fd00::/8"
        );
        let oifcfg = EngineError::NoSharedNetwork {
            within: Within::Oifcfg,
        };
        assert!(engine_error(&oifcfg).contains("subnet of --oifcfg"));
        let all = EngineError::NoSharedNetwork {
            within: Within::All,
        };
        assert!(!engine_error(&all).contains("--"));
        let nofile = EngineError::NoFile {
            clients: 4000,
            want: 4128,
            hard: 1024,
        };
        assert_eq!(
            engine_error(&nofile),
            "RLIMIT_NOFILE: 4000 TCP clients need 4128 file descriptors, but the hard limit (RLIMIT_NOFILE) is 1024; raise it (ulimit -Hn, LimitNOFILE= in a systemd unit, /etc/security/limits.conf) or run fewer --clients"
        );
        let short = EngineError::Config(ConfigError::FromHosts {
            hosts: 2,
            clients: 1,
            rate: None,
        });
        assert_eq!(
            engine_error(&short),
            "2 --from host(s) need at least one client and one request/s each (--clients 1, --rate none)"
        );
        let refused = EngineError::Refused(mtuperf_proto::msg::Refusal::AuthFailed);
        assert_eq!(
            engine_error(&refused),
            "authentication failed: the keys differ"
        );
        let hooks = EngineError::FromHost {
            host: "n2".into(),
            source: Box::new(EngineError::Refused(
                mtuperf_proto::msg::Refusal::TestHooksOff,
            )),
        };
        assert_eq!(
            engine_error(&hooks),
            "--from n2: bad request: test hooks asked for, but the agent was not started with --test-hooks"
        );
    }

    /// A refusal, the agent's or its peer's, reads as it did when the engine worded
    /// it through a process-wide hook; the engine's own text names no flag.
    #[test]
    fn refusals_read_as_before_and_the_engine_text_names_no_flag() {
        use mtuperf_proto::msg::Refusal;
        let limit = Refusal::Limit {
            limit: "max-clients".into(),
            requested: 3,
            allowed: 2,
        };
        let peer = EngineError::PeerRefused {
            peer: "127.0.0.1:7001".into(),
            refusal: limit.clone(),
        };
        assert_eq!(
            engine_error(&peer),
            "agent error: the peer agent 127.0.0.1:7001 refused: request beyond the agent's limit --max-clients: asked 3, allowed 2"
        );
        let from = EngineError::FromHost {
            host: "n1".into(),
            source: Box::new(peer),
        };
        assert_eq!(
            engine_error(&from),
            "--from n1: agent error: the peer agent 127.0.0.1:7001 refused: request beyond the agent's limit --max-clients: asked 3, allowed 2"
        );
        for e in [
            EngineError::Refused(limit.clone()),
            EngineError::PeerRefused {
                peer: "p".into(),
                refusal: limit,
            },
        ] {
            assert!(!e.to_string().contains("--"), "{e}");
            assert!(e.to_string().contains("max-clients"), "{e}");
        }
    }
}
