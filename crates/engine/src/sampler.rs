//! Samples one end's host at the start and end of a measurement: CPU, the counters of
//! the interface that carries the route to the peer (asked of the kernel's routing
//! table, not guessed), and IP/UDP/TCP counters.

use std::net::IpAddr;
use std::time::Instant;

use mtuperf_proto::host::{HostSnapshot, IfaceInfo};

#[derive(Debug, Clone, Default)]
pub struct Sampler {
    pub iface: Option<IfaceInfo>,
    /// Why no interface could be found, if so.
    pub iface_error: Option<String>,
}

impl Sampler {
    /// The interface the kernel routes `peer` through, as seen from this process.
    pub fn toward(peer: IpAddr) -> Sampler {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            v4 @ IpAddr::V4(_) => v4,
        };
        match mtuperf_sys::route::route_to(peer) {
            Ok(route) => match mtuperf_sys::netdev::iface_info(&route.iface) {
                Ok(info) => Sampler {
                    iface: Some(info),
                    iface_error: None,
                },
                Err(e) => Sampler {
                    iface: None,
                    iface_error: Some(e.to_string()),
                },
            },
            Err(e) => Sampler {
                iface: None,
                iface_error: Some(e.to_string()),
            },
        }
    }

    pub fn snapshot(&self, t0: Instant) -> HostSnapshot {
        HostSnapshot {
            cpu: mtuperf_sys::cpu::sample().unwrap_or_default(),
            iface: self
                .iface
                .as_ref()
                .and_then(|i| mtuperf_sys::netdev::counters(&i.name).ok()),
            snmp: mtuperf_sys::snmp::read().ok(),
            at_ns: t0.elapsed().as_nanos() as u64,
        }
    }
}
