//! What a cluster lab needs from the host, read by the environment check.
use super::{Cluster, Fault};

/// The programs a cluster needs: `nft` for a black hole's ICMP drops, inbound and
/// outbound drops and loss.
pub(crate) fn tools(c: &Cluster) -> Vec<&'static str> {
    let mut t = Vec::new();
    let nft = |f: &Fault| {
        matches!(
            f,
            Fault::Blackhole { .. }
                | Fault::Inbound { .. }
                | Fault::Outbound { .. }
                | Fault::Loss { .. }
        )
    };
    if c.faults.iter().any(nft) {
        t.push("nft");
    }
    t
}
