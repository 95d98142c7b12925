//! One [`RunRecord`] implementation per [`RunKind`], and [`decode`] from the history.
use super::{Figure, RunKind, RunRecord};
use crate::{compare, doctor, mesh, path, rr, stream};

/// Compact JSON in the struct's field order. Our documents are plain structs with
/// string keys, which always serialize; the error arm keeps a failure visible as a
/// document that says what went wrong rather than as an empty string.
fn json<T: serde::Serialize>(doc: &T) -> String {
    serde_json::to_string(doc)
        .unwrap_or_else(|e| crate::error::ErrorDoc::new(e.to_string(), 1).json())
}

/// Reads a stored document back as the record of its kind.
///
/// # Errors
/// The document does not parse as its kind's schema.
pub fn decode(kind: RunKind, document: &str) -> Result<Box<dyn RunRecord>, serde_json::Error> {
    // What peers said, escaped as it came in; a document brought from elsewhere is
    // escaped here, so `show` and `report` never print it raw.
    let escaped = mtuperf_proto::text::escape_json_text(document)?;
    let document: &str = &escaped;
    if let Some(want) = schema_of(kind) {
        same_schema(document, want)?;
    }
    Ok(match kind {
        RunKind::Stream => Box::new(Stored(serde_json::from_str::<stream::Document>(document)?)),
        RunKind::Rr => Box::new(Stored(serde_json::from_str::<rr::Document>(document)?)),
        RunKind::Path => Box::new(path::decode(document)?),
        RunKind::Doctor => Box::new(serde_json::from_str::<doctor::Document>(document)?),
        RunKind::Compare => Box::new(serde_json::from_str::<compare::CompareDoc>(document)?),
        RunKind::Udp => decode_udp(document)?,
        RunKind::Mesh => Box::new(mesh::decode(document)?),
    })
}

/// The schema a kind's stored documents carry (path and mesh check their own, with
/// what changed in words).
fn schema_of(kind: RunKind) -> Option<&'static str> {
    match kind {
        RunKind::Stream => Some(stream::SCHEMA),
        RunKind::Rr => Some(rr::SCHEMA),
        RunKind::Doctor => Some(doctor::SCHEMA),
        RunKind::Compare => Some(compare::SCHEMA),
        RunKind::Udp => Some(stream::udp::SCHEMA),
        RunKind::Path | RunKind::Mesh => None,
    }
}

/// Refuses a document of another schema version by name, before its fields do.
fn same_schema(document: &str, want: &str) -> Result<(), serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Head {
        schema: String,
    }
    let head: Head = serde_json::from_str(document)?;
    if head.schema == want {
        return Ok(());
    }
    Err(serde::de::Error::custom(format!(
        "schema {} is not read by this version, which reads {want}; run the test again",
        head.schema
    )))
}

// --- stream: one run, stored as a one-run mtuperf.stream/7 document.

impl RunRecord for stream::RunDoc {
    fn kind(&self) -> RunKind {
        RunKind::Stream
    }
    fn started_unix_ms(&self) -> i64 {
        self.result.started_unix_ms
    }
    fn headline(&self) -> String {
        stream::headline(self)
    }
    fn headline_value(&self) -> Option<f64> {
        Some(self.metrics.headline_bps)
    }
    fn interrupted(&self) -> bool {
        self.result.interrupted
    }
    fn document(&self) -> String {
        json(&stream::Document::new(vec![self.clone()]))
    }
    fn figures(&self) -> Vec<Figure> {
        stream::figures(self)
    }
    fn text(&self) -> String {
        stream::text(&stream::Document::new(vec![self.clone()]))
    }
}

// --- UDP stream: one run, stored as a one-run mtuperf.stream-udp/5 document.

impl RunRecord for stream::udp::RunDoc {
    fn kind(&self) -> RunKind {
        RunKind::Udp
    }
    fn started_unix_ms(&self) -> i64 {
        self.result.started_unix_ms
    }
    fn headline(&self) -> String {
        stream::udp::headline(self)
    }
    fn headline_value(&self) -> Option<f64> {
        Some(self.metrics.goodput_bps)
    }
    fn interrupted(&self) -> bool {
        self.result.interrupted
    }
    fn document(&self) -> String {
        json(&stream::udp::Document::new(vec![self.clone()], None))
    }
    fn figures(&self) -> Vec<Figure> {
        stream::udp::figures(self)
    }
    fn text(&self) -> String {
        format!(
            "{}{}",
            stream::udp::header(&self.result),
            stream::udp::summary_text(self)
        )
    }
}

/// Reads a stored UDP stream document back as its first run's record.
///
/// # Errors
/// The document does not parse, or holds no run.
fn decode_udp(document: &str) -> Result<Box<dyn RunRecord>, serde_json::Error> {
    let doc: stream::udp::Document = serde_json::from_str(document)?;
    doc.runs
        .into_iter()
        .next()
        .map(|r| Box::new(r) as Box<dyn RunRecord>)
        .ok_or_else(|| serde::de::Error::custom("a stream-udp document without runs"))
}

// --- rr: one load step, stored as a one-step mtuperf.rr/6 document.

impl RunRecord for rr::StepDoc {
    fn kind(&self) -> RunKind {
        RunKind::Rr
    }
    fn started_unix_ms(&self) -> i64 {
        self.result.started_unix_ms
    }
    fn headline(&self) -> String {
        rr::headline(self)
    }
    fn headline_value(&self) -> Option<f64> {
        Some(self.metrics.blocks_per_s)
    }
    fn interrupted(&self) -> bool {
        self.result.interrupted
    }
    fn document(&self) -> String {
        json(&rr::Document::new(vec![self.clone()]))
    }
    fn figures(&self) -> Vec<Figure> {
        rr::figures(self)
    }
    fn text(&self) -> String {
        rr::text(&rr::Document::new(vec![self.clone()]))
    }
}

// --- stored stream and rr documents: the record is the first run, the text the whole.

/// A stored document of runs (stream) or steps (rr).
trait Runs: serde::Serialize {
    type Run: RunRecord;
    const KIND: RunKind;
    fn first(&self) -> Option<&Self::Run>;
    fn whole_text(&self) -> String;
}

impl Runs for stream::Document {
    type Run = stream::RunDoc;
    const KIND: RunKind = RunKind::Stream;
    fn first(&self) -> Option<&stream::RunDoc> {
        self.runs.first()
    }
    fn whole_text(&self) -> String {
        stream::text(self)
    }
}

impl Runs for rr::Document {
    type Run = rr::StepDoc;
    const KIND: RunKind = RunKind::Rr;
    fn first(&self) -> Option<&rr::StepDoc> {
        self.steps.first()
    }
    fn whole_text(&self) -> String {
        rr::text(self)
    }
}

/// A stored document read back from the history.
struct Stored<D>(D);

impl<D: Runs> RunRecord for Stored<D> {
    fn kind(&self) -> RunKind {
        D::KIND
    }
    fn started_unix_ms(&self) -> i64 {
        self.0.first().map_or(0, RunRecord::started_unix_ms)
    }
    fn headline(&self) -> String {
        self.0.first().map(RunRecord::headline).unwrap_or_default()
    }
    fn headline_value(&self) -> Option<f64> {
        self.0.first().and_then(RunRecord::headline_value)
    }
    fn interrupted(&self) -> bool {
        self.0.first().is_some_and(RunRecord::interrupted)
    }
    fn document(&self) -> String {
        json(&self.0)
    }
    fn figures(&self) -> Vec<Figure> {
        self.0.first().map(RunRecord::figures).unwrap_or_default()
    }
    fn text(&self) -> String {
        self.0.whole_text()
    }
}

// --- path, doctor, compare: the document is the record.

impl RunRecord for path::Document {
    fn kind(&self) -> RunKind {
        RunKind::Path
    }
    fn started_unix_ms(&self) -> i64 {
        self.started_unix_ms
    }
    fn headline(&self) -> String {
        self.headline()
    }
    fn headline_value(&self) -> Option<f64> {
        None
    }
    fn document(&self) -> String {
        json(self)
    }
    fn figures(&self) -> Vec<Figure> {
        path::figures(self)
    }
    fn text(&self) -> String {
        path::text(self)
    }
}

impl RunRecord for doctor::Document {
    fn kind(&self) -> RunKind {
        RunKind::Doctor
    }
    fn started_unix_ms(&self) -> i64 {
        self.started_unix_ms
    }
    fn headline(&self) -> String {
        doctor::headline(self)
    }
    fn headline_value(&self) -> Option<f64> {
        Some(self.counts.fail as f64)
    }
    fn document(&self) -> String {
        // The typed findings: their words are made when shown.
        json(&self.typed())
    }
    fn figures(&self) -> Vec<Figure> {
        let c = &self.counts;
        [
            ("pass", c.pass),
            ("warn", c.warn),
            ("fail", c.fail),
            ("skip", c.skip),
        ]
        .into_iter()
        .map(|(status, n)| Figure::new("findings", "findings", n as f64).label("status", status))
        .collect()
    }
    fn text(&self) -> String {
        doctor::text(self)
    }
}

impl RunRecord for compare::CompareDoc {
    fn kind(&self) -> RunKind {
        RunKind::Compare
    }
    fn started_unix_ms(&self) -> i64 {
        self.runs
            .first()
            .and_then(|r| humantime::parse_rfc3339(&r.started).ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64)
    }
    fn headline(&self) -> String {
        self.verdicts.join("; ")
    }
    fn headline_value(&self) -> Option<f64> {
        None
    }
    fn interrupted(&self) -> bool {
        self.interrupted
    }
    fn document(&self) -> String {
        json(self)
    }
    fn figures(&self) -> Vec<Figure> {
        self.summaries
            .iter()
            .map(|s| {
                Figure::new("mean", s.figure.unit(), s.summary.mean)
                    .label("figure", s.figure.label())
                    .label("path", &s.path)
                    .label("test", s.test.name())
                    .label("block", s.block.to_string())
                    .label("clients", s.clients.to_string())
            })
            .collect()
    }
    fn text(&self) -> String {
        compare::text(self)
    }
}

impl RunRecord for mesh::Document {
    fn kind(&self) -> RunKind {
        RunKind::Mesh
    }
    fn started_unix_ms(&self) -> i64 {
        self.result.started_unix_ms
    }
    fn headline(&self) -> String {
        self.headline.clone()
    }
    fn headline_value(&self) -> Option<f64> {
        Some(self.result.findings.len() as f64)
    }
    fn interrupted(&self) -> bool {
        self.result.interrupted
    }
    fn document(&self) -> String {
        json(self)
    }
    fn figures(&self) -> Vec<Figure> {
        let r = &self.result;
        let mut f = vec![
            Figure::new("findings", "findings", r.findings.len() as f64),
            Figure::new("elapsed", "ms", r.elapsed_ms as f64),
        ];
        for (ni, net) in r.networks.iter().enumerate() {
            let dirs: Vec<bool> = r
                .cells
                .iter()
                .filter(|c| c.net == ni)
                .flat_map(|c| [c.forward.as_ref(), c.reverse.as_ref()])
                .flatten()
                .map(|d| d.ok)
                .collect();
            let ok = dirs.iter().filter(|&&x| x).count();
            f.push(
                Figure::new("directions_ok", "directions", ok as f64)
                    .label("net", net.cidr.to_string()),
            );
            f.push(
                Figure::new("directions_limited", "directions", (dirs.len() - ok) as f64)
                    .label("net", net.cidr.to_string()),
            );
        }
        f
    }
    fn text(&self) -> String {
        mesh::text(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::decode;
    use crate::record::RunKind;

    #[test]
    fn a_document_of_another_schema_version_is_refused_by_name() {
        let old = include_str!("../../tests/fixtures/rr_step_loopback.json")
            .replace("mtuperf.rr/6", "mtuperf.rr/4");
        let e = decode(RunKind::Rr, &old).err().unwrap().to_string();
        assert!(
            e.contains("schema mtuperf.rr/4 is not read by this version, which reads mtuperf.rr/6"),
            "{e}"
        );
        assert!(decode(
            RunKind::Rr,
            include_str!("../../tests/fixtures/rr_step_loopback.json")
        )
        .is_ok());
    }

    /// A doctor run stored before the findings were typed (mtuperf.doctor/2: words
    /// only) is refused by name, not by a missing field.
    #[test]
    fn an_older_doctor_document_is_refused_by_name() {
        let old = r#"{"schema":"mtuperf.doctor/2","run_id":1,"started_unix_ms":0,"profile":"rac","local":{"hostname":"h","role":"local","facts":{},"findings":[{"id":"iface.mtu","subject":"eth0","status":"PASS","measured":"9000","expected":">= 9000 (jumbo frames)","why":"","source":"","fix":""}]},"peer":null,"cross":[],"counts":{"pass":1,"warn":0,"fail":0,"skip":0},"verdict":"pass"}"#;
        let e = decode(RunKind::Doctor, old).err().unwrap().to_string();
        assert!(
            e.contains(
                "schema mtuperf.doctor/2 is not read by this version, which reads mtuperf.doctor/4"
            ),
            "{e}"
        );
        let current = old.replace("mtuperf.doctor/2", "mtuperf.doctor/4");
        let e = decode(RunKind::Doctor, &current).err().unwrap().to_string();
        assert!(e.contains("missing field"), "{e}");
    }

    #[test]
    fn a_stored_document_with_raw_peer_text_reads_back_escaped() {
        // A document stored before peer text was escaped on arrival: the agent's
        // interface name carries an override, an escape sequence and a newline.
        let raw = include_str!("../../tests/fixtures/rr_step_loopback.json")
            .replace(r#""name":"lo""#, r#""name":"lo\u202e\u001b[31m\nFORGED""#);
        assert!(
            raw.contains(r"\u202e"),
            "the fixture names its interface lo"
        );
        let text = decode(RunKind::Rr, &raw).unwrap().text();
        assert!(!text.contains(['\u{202e}', '\u{1b}']), "{text}");
        assert!(text.contains(r"lo\u{202e}\x1b[31m\nFORGED"), "{text}");
        assert!(!text.lines().any(|l| l.starts_with("FORGED")), "{text}");
    }
}
