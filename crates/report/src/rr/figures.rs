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
    for (name, v) in [("p50", lat.p50), ("p99", lat.p99), ("p999", lat.p999)] {
        if let Some(v) = v {
            f.push(Figure::new(name, "ns", v as f64));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::figure;
    use crate::rr::Document;

    /// A stored one-step document of a real rr run over loopback (udp, 8K, 1 client).
    fn step() -> StepDoc {
        let d: Document =
            serde_json::from_str(include_str!("../../tests/fixtures/rr_step_loopback.json"))
                .unwrap();
        d.steps.into_iter().next().unwrap()
    }

    #[test]
    fn figures_are_the_steps_numbers_labelled_with_the_protocol() {
        let s = step();
        let f = figures(&s);
        let v = |name: &str| figure(&f, name).map(|x| x.value);
        assert_eq!(v("block"), Some(8192.0));
        assert_eq!(v("clients"), Some(1.0));
        assert_eq!(v("p50"), s.result.client.latency.p50.map(|p| p as f64));
        assert_eq!(v("p999"), s.result.client.latency.p999.map(|p| p as f64));
        assert_eq!(v("blocks_per_s"), Some(s.metrics.blocks_per_s));
        assert_eq!(v("client_cpu_per_block"), s.metrics.client.cpu_us_per_block);
        assert_eq!(
            v("client_frames_per_block"),
            s.metrics.client.frames_per_block
        );
        assert!(f.iter().all(|x| x.labels == [("proto", "udp".to_string())]));
    }

    #[test]
    fn a_step_with_no_answered_block_has_no_latency_figures() {
        let mut s = step();
        let l = &mut s.result.client.latency;
        (l.count, l.p50, l.p99, l.p999) = (0, None, None, None);
        let f = figures(&s);
        for p in ["p50", "p99", "p999"] {
            assert!(figure(&f, p).is_none(), "{p} of no blocks");
        }
        assert!(figure(&f, "blocks_per_s").is_some());
    }
}
