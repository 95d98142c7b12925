//! `doctor` documents: the JSON document (schema mtuperf.doctor/4), the text report
//! and the reviewable fix script. The findings are the engine's typed outcomes; their
//! words ([`words`]) and fix commands ([`shell`]) are made here when shown.

pub mod shell;
pub mod words;

use std::fmt::Write as _;

use mtuperf_engine::doctor::run::Checked;
use mtuperf_engine::doctor::{Finding, HostFacts, Profile, Status};
use mtuperf_proto::text::escape_control as esc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use words::Words;

pub const SCHEMA: &str = "mtuperf.doctor/4";

/// One finding: the engine's typed outcome, and (in what `doctor --json` prints, not
/// in the stored run) its words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingDoc {
    #[serde(flatten)]
    pub finding: Finding,
    /// measured, expected, why, source and fix, derived from the finding when shown.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub words: Option<Words>,
}

impl FindingDoc {
    /// A finding without its words (as stored).
    pub fn typed(finding: Finding) -> FindingDoc {
        FindingDoc {
            finding,
            words: None,
        }
    }

    /// The finding's words (made now: the stored ones are not trusted).
    pub fn words(&self) -> Words {
        words::of(&self.finding)
    }
}

/// Whose host a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostRole {
    /// The host `doctor` ran on.
    Local,
    /// The agent's host (`--peer`), as the user named the agent.
    Peer(String),
}

impl std::fmt::Display for HostRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostRole::Local => f.write_str("local"),
            HostRole::Peer(agent) => write!(f, "peer {agent}"),
        }
    }
}

/// One host's facts and findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostReport {
    pub hostname: String,
    pub role: HostRole,
    pub facts: HostFacts,
    pub findings: Vec<FindingDoc>,
}

/// How many findings have each status, over every host and the cross checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub skip: usize,
}

/// A check's overall outcome: its worst finding's status (a skipped check passes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

impl Verdict {
    /// Of the findings' counts: fail when any failed, warn when any warned, else pass.
    pub fn of(c: Counts) -> Verdict {
        if c.fail > 0 {
            Verdict::Fail
        } else if c.warn > 0 {
            Verdict::Warn
        } else {
            Verdict::Pass
        }
    }

    /// The word a headline starts with.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }
}

/// The `mtuperf.doctor/4` document, what `mtuperf doctor --json` prints (with each
/// finding's words) and the history stores (the typed findings alone). Counters are
/// since boot with their increase over `sample_ms`; sysctl values have whitespace
/// collapsed to one space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    pub run_id: Option<i64>,
    pub started_unix_ms: i64,
    pub profile: Profile,
    pub local: HostReport,
    pub peer: Option<HostReport>,
    /// Cross-node comparisons (ids "cross.*"), empty without --peer.
    pub cross: Vec<FindingDoc>,
    pub counts: Counts,
    /// "fail" when any finding is FAIL, "warn" when any is WARN, else "pass".
    pub verdict: Verdict,
}

impl Document {
    /// The document of one check: this host, the agent's host named `peer` (when the
    /// check had one) and their comparison.
    pub fn of(started_unix_ms: i64, profile: Profile, peer: &str, c: Checked) -> Document {
        let typed = |v: Vec<Finding>| v.into_iter().map(FindingDoc::typed).collect();
        let peer_report = c.peer.map(|p| HostReport {
            hostname: p.hostname,
            role: HostRole::Peer(peer.to_string()),
            facts: p.facts,
            findings: typed(p.findings),
        });
        let local = HostReport {
            hostname: c.local.hostname.clone(),
            role: HostRole::Local,
            facts: c.local,
            findings: typed(c.findings),
        };
        Document::new(started_unix_ms, profile, local, peer_report, typed(c.cross))
    }

    /// The document with every finding's words, as `doctor --json` prints it.
    #[must_use]
    pub fn worded(&self) -> Document {
        let mut doc = self.clone();
        let word = |v: &mut Vec<FindingDoc>| {
            for f in v {
                f.words = Some(f.words());
            }
        };
        word(&mut doc.local.findings);
        if let Some(p) = &mut doc.peer {
            word(&mut p.findings);
        }
        word(&mut doc.cross);
        doc
    }

    /// The document as the history stores it: the typed findings, no words.
    #[must_use]
    pub fn typed(&self) -> Document {
        let mut doc = self.clone();
        let strip = |v: &mut Vec<FindingDoc>| v.iter_mut().for_each(|f| f.words = None);
        strip(&mut doc.local.findings);
        if let Some(p) = &mut doc.peer {
            strip(&mut p.findings);
        }
        strip(&mut doc.cross);
        doc
    }

    pub fn new(
        started_unix_ms: i64,
        profile: Profile,
        local: HostReport,
        peer: Option<HostReport>,
        cross: Vec<FindingDoc>,
    ) -> Document {
        let mut doc = Document {
            schema: SCHEMA.into(),
            run_id: None,
            started_unix_ms,
            profile,
            local,
            peer,
            cross,
            counts: Counts::default(),
            verdict: Verdict::Pass,
        };
        for f in doc.all() {
            match f.finding.status {
                Status::Pass => doc.counts.pass += 1,
                Status::Warn => doc.counts.warn += 1,
                Status::Fail => doc.counts.fail += 1,
                Status::Skip => doc.counts.skip += 1,
            }
        }
        doc.verdict = Verdict::of(doc.counts);
        doc
    }

    /// Every finding: local, peer, cross.
    pub fn all(&self) -> Vec<FindingDoc> {
        let mut v = self.local.findings.clone();
        if let Some(p) = &self.peer {
            v.extend(p.findings.iter().cloned());
        }
        v.extend(self.cross.iter().cloned());
        v
    }
}

/// One line for the history list.
pub fn headline(doc: &Document) -> String {
    format!(
        "{}: {} fail, {} warn, {} pass, {} skipped ({})",
        doc.verdict.word(),
        doc.counts.fail,
        doc.counts.warn,
        doc.counts.pass,
        doc.counts.skip,
        doc.profile.name()
    )
}

fn section(out: &mut String, title: &str, findings: &[FindingDoc]) {
    let _ = writeln!(out, "\n{title}");
    for doc in findings {
        let f = &doc.finding;
        let w = doc.words();
        let _ = writeln!(
            out,
            "  {:<4}  {:<36} {:<28} {}",
            f.status.as_str(),
            f.id,
            f.subject,
            w.measured
        );
        if matches!(f.status, Status::Warn | Status::Fail) {
            let _ = writeln!(out, "        expected: {}", w.expected);
            let _ = writeln!(out, "        why: {}", w.why);
            let _ = writeln!(out, "        source: {}", w.source);
            if !w.fix.is_empty() {
                let _ = writeln!(out, "        fix: {}", w.fix);
            }
        } else if f.status == Status::Skip {
            let _ = writeln!(out, "        skipped: {}", w.why);
        }
    }
}

fn host_title(h: &HostReport, profile: Profile) -> String {
    let names: Vec<&str> = h
        .facts
        .ifaces
        .iter()
        .map(|i| i.info.name.as_str())
        .collect();
    format!(
        "{} host {} (profile {}), interfaces {} ({}); counters sampled over {} ms",
        h.role,
        h.hostname,
        profile.name(),
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        },
        h.facts.selection,
        h.facts.sample_ms
    )
}

/// The text report.
pub fn text(doc: &Document) -> String {
    let mut out = format!(
        "mtuperf doctor, {}\n",
        crate::timestamp(doc.started_unix_ms)
    );
    section(
        &mut out,
        &host_title(&doc.local, doc.profile),
        &doc.local.findings,
    );
    if let Some(p) = &doc.peer {
        section(&mut out, &host_title(p, doc.profile), &p.findings);
    }
    if !doc.cross.is_empty() {
        section(&mut out, "cross-node comparison", &doc.cross);
    }
    let _ = writeln!(out, "\n{}", headline(doc));
    out
}

/// A shell script with one command per FAIL/WARN finding of this host (the peer's fixes
/// are printed as comments: they must be run there). Nothing is run by doctor itself.
pub fn fix_script(doc: &Document) -> String {
    let mut out = String::from(
        "#!/bin/sh\n# Generated by mtuperf doctor: review before running. Run as root.\nset -eu\n",
    );
    // Everything interpolated into a comment is escaped (a peer's hostname or finding may
    // hold a newline that would end the comment); only this host's own fixes, whose
    // values `shell` quoted, are emitted as commands, and only when they are one clean
    // line. A peer's fixes are untrusted: comments only.
    let mut emit = |doc: &FindingDoc, remote: Option<&str>| {
        let (f, w) = (&doc.finding, doc.words());
        if !matches!(f.status, Status::Warn | Status::Fail) || w.fix.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n# {} {} on {}: {}",
            esc(f.status.as_str()),
            esc(&f.id),
            esc(&f.subject),
            esc(&w.why)
        );
        let _ = writeln!(
            out,
            "# measured {}; expected {}; source: {}",
            esc(&w.measured),
            esc(&w.expected),
            esc(&w.source)
        );
        match remote {
            None if !w.fix.chars().any(char::is_control) => {
                let _ = writeln!(out, "{}", w.fix);
            }
            None => {
                let _ = writeln!(out, "# not emitted (control characters): {}", esc(&w.fix));
            }
            Some(h) => {
                let _ = writeln!(out, "# on {}: {}", esc(h), esc(&w.fix));
            }
        }
    };
    for f in &doc.local.findings {
        emit(f, None);
    }
    for f in &doc.cross {
        emit(f, Some("the node named in the fix"));
    }
    if let Some(p) = &doc.peer {
        for f in &p.findings {
            emit(f, Some(&p.hostname));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{fix_script, Counts, Document, FindingDoc, HostReport, HostRole, Verdict};
    use mtuperf_engine::doctor::{Check, Finding, Fix, HostFacts, MtuScope, Profile, Status};

    /// A host's role is a type: "local" or {"peer": AGENT} in JSON, read back the same,
    /// and the words of the text report's host titles.
    #[test]
    fn a_hosts_role_is_typed_in_json_and_worded_in_text() {
        let peer = HostRole::Peer("198.18.2.2:7878".into());
        let json = serde_json::to_value([&HostRole::Local, &peer]).unwrap();
        assert_eq!(
            json,
            serde_json::json!(["local", {"peer": "198.18.2.2:7878"}])
        );
        let back: Vec<HostRole> = serde_json::from_value(json).unwrap();
        assert_eq!(back, [HostRole::Local, peer.clone()]);
        assert_eq!(
            (HostRole::Local.to_string(), peer.to_string()),
            ("local".to_string(), "peer 198.18.2.2:7878".to_string())
        );
    }

    #[test]
    fn the_verdict_is_the_worst_status_and_keeps_its_json_word() {
        let counts = |warn, fail| Counts {
            pass: 3,
            warn,
            fail,
            skip: 1,
        };
        let cases = [
            (counts(0, 0), Verdict::Pass, "pass", "PASS"),
            (counts(2, 0), Verdict::Warn, "warn", "WARN"),
            (counts(2, 1), Verdict::Fail, "fail", "FAIL"),
        ];
        for (c, verdict, json, word) in cases {
            assert_eq!(Verdict::of(c), verdict);
            assert_eq!(verdict.word(), word);
            let text = serde_json::to_string(&verdict).unwrap();
            assert_eq!(text, format!("\"{json}\""));
            assert_eq!(serde_json::from_str::<Verdict>(&text).unwrap(), verdict);
        }
        let e = serde_json::from_str::<Verdict>(r#""PASS""#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `PASS`"), "{e}");
    }

    /// A FAIL finding whose values (read from a host) and fix carry injected lines.
    fn finding(subject: &str, fix: Fix) -> FindingDoc {
        FindingDoc::typed(Finding {
            id: "cross.net.core.rmem_max".into(),
            subject: subject.into(),
            status: Status::Fail,
            check: Check::CrossSysctl {
                sysctl: "net.core.rmem_max".into(),
                local: "1500\nmeasured-injected".into(),
                peer: "9000".into(),
            },
            remedy: Some(fix),
        })
    }

    fn host(name: &str, findings: Vec<FindingDoc>) -> HostReport {
        HostReport {
            hostname: name.into(),
            role: HostRole::Local,
            facts: HostFacts::default(),
            findings,
        }
    }

    #[test]
    fn peer_text_stays_inside_comments() {
        let mtu = |iface: &str| Fix::SetMtu {
            iface: iface.into(),
            mtu: 9000,
            scope: MtuScope::Iface,
        };
        let same = |sysctl: &str| Fix::SameOnBothNodes {
            sysctl: sysctl.into(),
        };
        let local = host(
            "here",
            vec![
                finding("eth0", mtu("eth0")),
                // An interface name no quoting makes safe: no command at all.
                finding("x\ny", mtu("x\nid")),
                // A fix whose words hold a line break: shown, never run.
                finding("z", same("a\nid")),
            ],
        );
        let peer = host(
            "evil\nrm -rf /tmp/peer-host",
            vec![
                finding("eth1\ntouch /tmp/peer-subject", mtu("eth1")),
                finding("eth2", same("x\ntouch /tmp/peer-fix")),
            ],
        );
        let doc = Document::new(0, Profile::Rac, local, Some(peer), Vec::new());
        let script = fix_script(&doc);
        let commands: Vec<&str> = script
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .collect();
        // Only the header and this host's one clean fix are commands.
        assert_eq!(
            commands,
            ["set -eu", "ip link set dev eth0 mtu 9000"],
            "{script}"
        );
        assert!(
            script.contains("# on evil\\nrm -rf /tmp/peer-host: ip link set dev eth1 mtu 9000"),
            "{script}"
        );
        assert!(
            script.contains("# on evil\\nrm -rf /tmp/peer-host: # set x\\ntouch /tmp/peer-fix to"),
            "{script}"
        );
        assert!(
            script.contains("# not emitted (control characters): # set a\\nid to"),
            "{script}"
        );
        assert!(
            script.contains("# measured local 1500\\nmeasured-injected, peer 9000;"),
            "{script}"
        );
    }

    /// The stored run holds the typed findings; `doctor --json` adds the words, and
    /// both read back.
    #[test]
    fn the_stored_document_is_typed_and_the_printed_one_worded() {
        let doc = Document::new(
            0,
            Profile::Rac,
            host("here", vec![finding("eth0", Fix::Investigate)]),
            None,
            Vec::new(),
        );
        let stored = serde_json::to_value(doc.typed()).unwrap();
        let f = &stored["local"]["findings"][0];
        assert_eq!(f["check"]["kind"], "cross_sysctl", "{f}");
        assert_eq!(f["remedy"]["kind"], "investigate", "{f}");
        assert!(f.get("why").is_none() && f.get("fix").is_none(), "{f}");
        let printed = serde_json::to_value(doc.worded()).unwrap();
        let f = &printed["local"]["findings"][0];
        assert_eq!(f["measured"], "local 1500\nmeasured-injected, peer 9000");
        assert_eq!(f["expected"], "equal on both ends");
        assert!(
            f["fix"].as_str().unwrap().starts_with("# investigate"),
            "{f}"
        );
        assert_eq!(f["check"]["kind"], "cross_sysctl", "{f}");
        for v in [stored, printed] {
            let back: Document = serde_json::from_value(v).unwrap();
            assert_eq!(back.typed(), doc);
        }
    }
}
