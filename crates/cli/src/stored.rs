//! What the history tells a command besides listing it: for `doctor`, the newest stored
//! stream run's verdict about an end's buffers.
use mtuperf_engine::doctor::run::EvidenceSource;
use mtuperf_engine::doctor::StreamEvidence;
use mtuperf_engine::stream::End;

/// The history as the doctor's evidence: what the newest stored stream run (to
/// --peer's host, if given) says about the buffers of an end (this host is the client;
/// --peer the agent).
pub struct Evidence<'a> {
    pub store: Option<&'a mtuperf_store::Store>,
    pub peer: Option<&'a str>,
}

impl EvidenceSource for Evidence<'_> {
    fn evidence(&self, end: End) -> Option<StreamEvidence> {
        stream_evidence(self.store, self.peer, end)
    }
}

fn stream_evidence(
    store: Option<&mtuperf_store::Store>,
    peer: Option<&str>,
    end: End,
) -> Option<StreamEvidence> {
    // HOST, HOST:PORT, [IPv6]:PORT or a bare IPv6 address: the host part.
    let host = peer.map(|p| match p.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None if p.matches(':').count() == 1 => p.split(':').next().unwrap_or(p),
        None => p,
    });
    let run = store?
        .list(&mtuperf_store::Filter {
            kind: Some(mtuperf_report::record::RunKind::Stream),
            target: host.map(str::to_string),
            limit: Some(1),
            ..mtuperf_store::Filter::default()
        })
        .ok()?
        .into_iter()
        .next()?;
    let verdicts = mtuperf_report::stream::stored_verdicts(&run.document);
    StreamEvidence::of(run.id, &run.target, end, &verdicts)
}
