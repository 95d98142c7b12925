//! A UDP stream run's figures, as data (what `export`, the compare statistics and the
//! record layer read).

use super::RunDoc;
use crate::figure::Figure;

/// Block size, goodput, loss, the receiver's CPU per GiB, and the first direction's
/// jitter, IP fragments and frames per datagram.
pub fn figures(run: &RunDoc) -> Vec<Figure> {
    let mut f = vec![
        Figure::new("block", "bytes", f64::from(run.result.request.block)),
        Figure::new("goodput", "bit/s", run.metrics.goodput_bps),
        Figure::new("loss", "%", run.loss_pct()),
    ];
    if let Some(v) = run.receiver_ms_per_gib() {
        f.push(Figure::new("receiver_cpu", "ms/GiB", v));
    }
    if let Some(d) = run.metrics.directions.first() {
        f.push(Figure::new("jitter", "us", d.jitter_us));
        if let Some(v) = d.fragments_per_datagram {
            f.push(Figure::new("fragments_per_datagram", "fragments", v));
        }
        if let Some(v) = d.tx_frames_per_datagram {
            f.push(Figure::new("frames_per_datagram", "frames", v));
        }
    }
    f
}
