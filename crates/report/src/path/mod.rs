//! Path MTU results: the `mtuperf.path/4` JSON document (the engine's typed results,
//! the diagnosis among them); its figures (`figures`), its human text and verdict
//! lines (`text`) and its HTML page (`html`).

mod figures;
pub mod html;
mod text;

use mtuperf_engine::diagnosis::Diagnosis;
use mtuperf_engine::path::hops::HopsResult;
use mtuperf_engine::path::icmp::IcmpResult;
use mtuperf_engine::path::{DirResult, PathResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use figures::figures;
pub use text::{text, verdicts};

pub const SCHEMA: &str = "mtuperf.path/4";

/// The run's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Agent,
    Icmp,
    Hops,
}

/// One `mtuperf path` run in one of its three modes: exactly one of `agent`, `icmp`,
/// `hops` is non-null, named by `mode`. Sizes are IP packet sizes in bytes (the UDP
/// payload and 28 for IPv4, 48 for IPv6). The verdict is typed: `faults`, each a class and a
/// location, the model `mesh` shares; the words are the report's.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    pub run_id: Option<i64>,
    pub started: String,
    pub mode: Mode,
    /// The path carries `expect` (in both directions where measured).
    pub ok: bool,
    pub agent: Option<PathResult>,
    pub icmp: Option<IcmpResult>,
    pub hops: Option<HopsResult>,
    /// When the run started (ms since the Unix epoch), for the history; not part of
    /// the document (which carries `started`).
    #[serde(skip)]
    pub started_unix_ms: i64,
}

/// Reads a stored path document. A document of another schema version (path/1 stored
/// its verdict as a sentence where path/2 stores the typed diagnosis; path/3 writes
/// every field, null where there is no value) is refused by name.
///
/// # Errors
/// The document is not a `mtuperf.path/4` document.
pub fn decode(document: &str) -> Result<Document, serde_json::Error> {
    #[derive(Deserialize)]
    struct Head {
        schema: String,
    }
    let head: Head = serde_json::from_str(document)?;
    if head.schema != SCHEMA {
        return Err(serde::de::Error::custom(format!(
            "schema {} is not read by this version, which reads {SCHEMA}; run the path check again",
            head.schema
        )));
    }
    serde_json::from_str(document)
}

impl Document {
    fn new(mode: Mode, ok: bool) -> Document {
        Document {
            schema: SCHEMA.into(),
            run_id: None,
            started: crate::timestamp(mtuperf_engine::unix_ms()),
            mode,
            ok,
            agent: None,
            icmp: None,
            hops: None,
            started_unix_ms: mtuperf_engine::unix_ms(),
        }
    }

    pub fn agent(r: PathResult) -> Document {
        let mut d = Document::new(Mode::Agent, r.ok);
        d.started = crate::timestamp(r.started_unix_ms);
        d.agent = Some(r);
        d
    }

    pub fn icmp(r: IcmpResult) -> Document {
        let mut d = Document::new(Mode::Icmp, r.ok);
        d.icmp = Some(r);
        d
    }

    pub fn hops(r: HopsResult) -> Document {
        let mut d = Document::new(Mode::Hops, r.ok);
        d.hops = Some(r);
        d
    }

    /// The mode as the history and the figures label it.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Agent => "agent",
            Mode::Icmp => "icmp",
            Mode::Hops => "hops",
        }
    }

    /// The faults the run found (none in ICMP mode, which locates nothing).
    pub fn faults(&self) -> &[Diagnosis] {
        if let Some(r) = &self.agent {
            &r.faults
        } else if let Some(r) = &self.hops {
            &r.faults
        } else {
            &[]
        }
    }

    /// The verdict in one line (also the history headline): the first fault, or what
    /// the path carries.
    pub fn headline(&self) -> String {
        verdicts(self)
            .into_iter()
            .next()
            .map(|(v, _)| v)
            .unwrap_or_default()
    }
}

/// A measured direction: its name ("forward", "reverse", or "both" for ICMP echo,
/// which measures the smaller of the two), its search, and the MTU it reads as.
pub type Dir<'a> = (&'static str, &'a DirResult, u32);

impl Document {
    /// The directions this run searched and the MTU they were held against (none for
    /// `--hops`, whose probes are not a search of each direction).
    pub fn directions(&self) -> (Vec<Dir<'_>>, u32) {
        if let Some(r) = &self.agent {
            (
                vec![
                    ("forward", &r.forward, r.forward_mtu),
                    ("reverse", &r.reverse, r.reverse_mtu),
                ],
                r.expect,
            )
        } else if let Some(r) = &self.icmp {
            (vec![("both", &r.both, r.both.largest_ok)], r.expect)
        } else {
            (Vec::new(), 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents of the first schema stored the verdict as a sentence: refused by
    /// name, with what to do.
    #[test]
    fn documents_of_the_first_schema_are_refused_by_name() {
        let old = include_str!("../../tests/fixtures/path_agent_v1_before_slack.json");
        let e = decode(old).unwrap_err().to_string();
        assert!(
            e.contains("schema mtuperf.path/1 is not read by this version"),
            "{e}"
        );
        assert!(e.contains("run the path check again"), "{e}");
    }

    /// A real run on the lab's mismatch link (the client at 9000, the server at 1500).
    pub(super) fn mismatch() -> Document {
        decode(include_str!(
            "../../tests/fixtures/path_agent_mismatch.json"
        ))
        .unwrap()
    }
}
