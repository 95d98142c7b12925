//! An rr step's figures, as data (what `export`, the compare statistics and the
//! record layer read).

use mtuperf_proto::msg::rr::RrProto;

use super::StepDoc;
use crate::figure::Figure;

/// The request (block, request size, clients, offered rate), the client's latency
/// percentiles, blocks/s, loss, and the client's CPU and frames per block; each
/// labelled with the protocol.
pub fn figures(step: &StepDoc) -> Vec<Figure> {
    let q = &step.result.request;
    let lat = &step.result.client.latency;
    let proto = match q.proto {
        RrProto::Udp => "udp",
        RrProto::Tcp => "tcp",
    };
    let mut f = vec![
        Figure::new("block", "bytes", f64::from(q.block)),
        Figure::new("request", "bytes", f64::from(q.request)),
        Figure::new("clients", "clients", f64::from(q.clients)),
    ];
    // Percentiles only of blocks that came back: none answered is no latency, not 0.
    if lat.count > 0 {
        f.extend([
            Figure::new("p50", "ns", lat.p50 as f64),
            Figure::new("p99", "ns", lat.p99 as f64),
            Figure::new("p999", "ns", lat.p999 as f64),
        ]);
    }
    f.extend([
        Figure::new("blocks_per_s", "blocks/s", step.metrics.blocks_per_s),
        Figure::new("lost", "%", step.metrics.lost_pct),
    ]);
    if let Some(rate) = q.rate {
        f.push(Figure::new("rate", "blocks/s", rate as f64));
    }
    // The client's system-wide CPU and its interface's frames (both ways) per block.
    let client = &step.metrics.client;
    if let Some(v) = client.cpu_us_per_block {
        f.push(Figure::new("client_cpu_per_block", "us/block", v));
    }
    if let Some(v) = client.frames_per_block {
        f.push(Figure::new("client_frames_per_block", "frames", v));
    }
    f.into_iter().map(|x| x.label("proto", proto)).collect()
}
