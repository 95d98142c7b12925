//! Every address configured on this host's interfaces, with its prefix length
//! (`ip -br addr` equivalent), through nix's safe getifaddrs wrapper.

use std::net::IpAddr;

use mtuperf_proto::msg::mesh::IfaceAddr;
use nix::ifaddrs::getifaddrs;

use crate::error::Error;

/// Every IPv4 and IPv6 address of every interface, loopback included, sorted by
/// interface then address.
pub fn addresses() -> Result<Vec<IfaceAddr>, Error> {
    let list = getifaddrs().map_err(|e| Error::Sys {
        op: "getifaddrs",
        subject: "this host's interfaces".into(),
        source: std::io::Error::from(e),
    })?;
    let mut out = Vec::new();
    for ifa in list {
        let (Some(addr), Some(mask)) = (ifa.address, ifa.netmask) else {
            continue;
        };
        let pair = match (addr.as_sockaddr_in(), mask.as_sockaddr_in()) {
            (Some(a), Some(m)) => Some((IpAddr::V4(a.ip()), u32::from(m.ip()).count_ones())),
            _ => match (addr.as_sockaddr_in6(), mask.as_sockaddr_in6()) {
                (Some(a), Some(m)) => Some((IpAddr::V6(a.ip()), u128::from(m.ip()).count_ones())),
                _ => None,
            },
        };
        if let Some((addr, prefix)) = pair {
            // An IPv4 address's label ("eth1:1", as HAIP's) names its interface "eth1":
            // Linux interface names hold no ':'.
            let iface = match ifa.interface_name.split_once(':') {
                Some((dev, _)) => dev.to_string(),
                None => ifa.interface_name,
            };
            out.push(IfaceAddr {
                iface,
                addr,
                prefix: prefix as u8,
            });
        }
    }
    out.sort_by(|a, b| (&a.iface, a.addr).cmp(&(&b.iface, b.addr)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_has_127_0_0_1_slash_8() {
        let all = addresses().unwrap();
        assert!(
            all.iter().any(|a| a.iface == "lo"
                && a.addr == IpAddr::from([127, 0, 0, 1])
                && a.prefix == 8),
            "{all:?}"
        );
    }
}
