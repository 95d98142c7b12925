//! The local view: route and egress interface to the target, its MTU, bond members or
//! a VLAN's parent, and any cached path MTU exception.

use std::net::IpAddr;

use mtuperf_proto::host::{IfaceInfo, RouteInfo};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::EngineError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LocalView {
    pub route: RouteInfo,
    pub iface: Option<IfaceInfo>,
    /// The egress interface's MTU as the interface reports it (65536 on `lo`, as the
    /// agent reports it too); searches cap it at the largest IP packet, 65535.
    pub mtu: u32,
    /// No gateway: the target is on-link.
    pub same_segment: bool,
}

impl LocalView {
    pub fn toward(ip: IpAddr) -> Result<LocalView, EngineError> {
        let route = mtuperf_sys::route::route_to(ip)
            .map_err(|e| EngineError::Agent(format!("no route to {ip}: {e}")))?;
        let iface = mtuperf_sys::netdev::iface_info(&route.iface).ok();
        let mtu = iface.as_ref().map_or(1500, |i| i.mtu);
        Ok(LocalView {
            same_segment: route.gateway.is_none(),
            route,
            iface,
            mtu,
        })
    }

    /// The largest IP packet this interface can send: its MTU, at most 65535 (an IPv4
    /// or IPv6 packet without jumbogram cannot be larger, whatever `lo`'s 65536 says).
    pub fn max_packet(&self) -> u32 {
        self.mtu.min(mtuperf_proto::msg::path::MAX_PROBE_SIZE)
    }

    /// Remarks on the local configuration given the size the live path carries:
    /// bond members or a VLAN parent with a different MTU, and a cached PMTU exception
    /// that disagrees with the live measurement.
    pub fn notes(&self, live: u32) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(i) = &self.iface {
            for (m, mtu) in &i.members {
                if *mtu != i.mtu {
                    out.push(format!("bond member {m} has MTU {mtu}, the bond {}", i.mtu));
                }
            }
            if let Some((p, mtu)) = &i.parent {
                if *mtu < i.mtu {
                    out.push(format!(
                        "VLAN parent {p} has MTU {mtu}, below the VLAN's {}",
                        i.mtu
                    ));
                }
            }
        }
        if let Some(c) = self.route.cached_pmtu {
            let exp = self
                .route
                .cached_expires_s
                .map_or(String::new(), |s| format!(", expires in {s} s"));
            if c < live {
                out.push(format!(
                    "stale: the kernel caches path MTU {c} for this destination{exp}, but the live path carries {live}; sockets that honour the cache send at most {c}"
                ));
            } else {
                out.push(format!(
                    "the kernel caches path MTU {c} for this destination{exp}"
                ));
            }
        }
        out
    }
}
