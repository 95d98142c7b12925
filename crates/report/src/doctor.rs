//! `doctor` documents: the JSON document (schema mtuperf.doctor/2), the text report
//! and the reviewable fix script.

use std::fmt::Write as _;

use mtuperf_engine::doctor::run::Checked;
use mtuperf_proto::msg::doctor::{Finding, HostFacts, Status};
use mtuperf_proto::text::escape_control as esc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "mtuperf.doctor/2";

/// One host's facts and findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostReport {
    pub hostname: String,
    /// "local", or the agent address for the peer.
    pub role: String,
    pub facts: HostFacts,
    pub findings: Vec<Finding>,
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

/// The `mtuperf.doctor/2` document, what `mtuperf doctor --json` prints and the history
/// stores. Counters are since boot with their increase over `sample_ms`; sysctl values
/// have whitespace collapsed to one space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    pub run_id: Option<i64>,
    pub started_unix_ms: i64,
    pub profile: String,
    pub local: HostReport,
    pub peer: Option<HostReport>,
    /// Cross-node comparisons (ids "cross.*"), empty without --peer.
    pub cross: Vec<Finding>,
    pub counts: Counts,
    /// "fail" when any finding is FAIL, "warn" when any is WARN, else "pass".
    pub verdict: Verdict,
}

impl Document {
    /// The document of one check: this host, the agent's host named `peer` (when the
    /// check had one) and their comparison.
    pub fn of(started_unix_ms: i64, profile: &str, peer: &str, c: Checked) -> Document {
        let peer_report = c.peer.map(|p| HostReport {
            hostname: p.hostname,
            role: format!("peer {peer}"),
            facts: p.facts,
            findings: p.findings,
        });
        let local = HostReport {
            hostname: c.local.hostname.clone(),
            role: "local".into(),
            facts: c.local,
            findings: c.findings,
        };
        Document::new(started_unix_ms, profile, local, peer_report, c.cross)
    }

    pub fn new(
        started_unix_ms: i64,
        profile: &str,
        local: HostReport,
        peer: Option<HostReport>,
        cross: Vec<Finding>,
    ) -> Document {
        let mut doc = Document {
            schema: SCHEMA.into(),
            run_id: None,
            started_unix_ms,
            profile: profile.into(),
            local,
            peer,
            cross,
            counts: Counts::default(),
            verdict: Verdict::Pass,
        };
        for f in doc.all() {
            match f.status {
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
    pub fn all(&self) -> Vec<Finding> {
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
        doc.profile
    )
}

fn section(out: &mut String, title: &str, findings: &[Finding]) {
    let _ = writeln!(out, "\n{title}");
    for f in findings {
        let _ = writeln!(
            out,
            "  {:<4}  {:<36} {:<28} {}",
            f.status.as_str(),
            f.id,
            f.subject,
            f.measured
        );
        if matches!(f.status, Status::Warn | Status::Fail) {
            let _ = writeln!(out, "        expected: {}", f.expected);
            let _ = writeln!(out, "        why: {}", f.why);
            let _ = writeln!(out, "        source: {}", f.source);
            if !f.fix.is_empty() {
                let _ = writeln!(out, "        fix: {}", f.fix);
            }
        } else if f.status == Status::Skip {
            let _ = writeln!(out, "        skipped: {}", f.why);
        }
    }
}

fn host_title(h: &HostReport, profile: &str) -> String {
    let names: Vec<&str> = h
        .facts
        .ifaces
        .iter()
        .map(|i| i.info.name.as_str())
        .collect();
    format!(
        "{} host {} (profile {profile}), interfaces {} ({}); counters sampled over {} ms",
        h.role,
        h.hostname,
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
        &host_title(&doc.local, &doc.profile),
        &doc.local.findings,
    );
    if let Some(p) = &doc.peer {
        section(&mut out, &host_title(p, &doc.profile), &p.findings);
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
    // values the engine shell-quoted, are emitted as commands, and only when they are one
    // clean line. A peer's fixes are untrusted: comments only.
    let mut emit = |f: &Finding, remote: Option<&str>| {
        if !matches!(f.status, Status::Warn | Status::Fail) || f.fix.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n# {} {} on {}: {}",
            esc(f.status.as_str()),
            esc(&f.id),
            esc(&f.subject),
            esc(&f.why)
        );
        let _ = writeln!(
            out,
            "# measured {}; expected {}; source: {}",
            esc(&f.measured),
            esc(&f.expected),
            esc(&f.source)
        );
        match remote {
            None if !f.fix.chars().any(char::is_control) => {
                let _ = writeln!(out, "{}", f.fix);
            }
            None => {
                let _ = writeln!(out, "# not emitted (control characters): {}", esc(&f.fix));
            }
            Some(h) => {
                let _ = writeln!(out, "# on {}: {}", esc(h), esc(&f.fix));
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
    use super::{fix_script, Counts, Document, HostReport, Verdict};
    use mtuperf_proto::msg::doctor::{Finding, HostFacts, Status};

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

    fn finding(subject: &str, fix: &str) -> Finding {
        Finding {
            id: "iface.mtu".into(),
            subject: subject.into(),
            status: Status::Fail,
            measured: "1500\nmeasured-injected".into(),
            expected: "9000".into(),
            why: "why\r\nwhy-injected".into(),
            source: "src".into(),
            fix: fix.into(),
        }
    }

    fn host(name: &str, findings: Vec<Finding>) -> HostReport {
        HostReport {
            hostname: name.into(),
            role: "local".into(),
            facts: HostFacts::default(),
            findings,
        }
    }

    #[test]
    fn peer_text_stays_inside_comments() {
        let local = host(
            "here",
            vec![
                finding("eth0", "ip link set dev eth0 mtu 9000"),
                finding("x\ny", "ip link set dev x\nid mtu 9000"),
            ],
        );
        let peer = host(
            "evil\nrm -rf /tmp/peer-host",
            vec![finding(
                "eth1\ntouch /tmp/peer-subject",
                "ip link set dev eth1 mtu 9000\ntouch /tmp/peer-fix",
            )],
        );
        let doc = Document::new(0, "rac", local, Some(peer), Vec::new());
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
        assert!(script.contains("# on evil\\nrm -rf /tmp/peer-host: ip link set dev eth1 mtu 9000\\ntouch /tmp/peer-fix"), "{script}");
        assert!(
            script.contains("# not emitted (control characters): ip link set dev x\\nid mtu 9000"),
            "{script}"
        );
    }
}
