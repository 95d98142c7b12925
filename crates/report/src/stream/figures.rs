//! A stream run's figures, as data (what `export`, the compare statistics and the
//! record layer read).

use super::{receiver_demand, RunDoc};
use crate::figure::Figure;

/// Block size, goodput (the headline), the receiver's CPU per MiB and its interface's
/// frames per block, and each end's interface MTU.
pub fn figures(run: &RunDoc) -> Vec<Figure> {
    let mut f = vec![
        Figure::new("block", "bytes", f64::from(run.result.request.block)),
        Figure::new("goodput", "bit/s", run.metrics.headline_bps),
    ];
    if let Some(v) = receiver_demand(run) {
        f.push(Figure::new("receiver_cpu", "us/MiB", v));
    }
    let recv = run.metrics.directions.first().map(|d| d.receiver);
    let fpb = run
        .metrics
        .ends
        .iter()
        .find(|e| Some(e.end) == recv)
        .and_then(|e| e.iface.as_ref())
        .and_then(|i| i.frames_per_block);
    if let Some(v) = fpb {
        f.push(Figure::new("frames_per_block", "frames", v));
    }
    for (end, iface) in [
        ("client", &run.result.client.iface),
        ("agent", &run.result.agent.iface),
    ] {
        if let Some(i) = iface {
            f.push(Figure::new("mtu", "bytes", f64::from(i.mtu)).label("end", end));
        }
    }
    f
}
