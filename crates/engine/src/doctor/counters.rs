//! Counter rules: each counter since boot and its increase over the sample. A counter
//! that grew during the sample is trouble happening now (WARN); a non-zero total
//! since boot alone is history and is reported as PASS with the figure.

use super::finding::{skip, FindingBuilder};
use super::{Finding, HostFacts, Status};

const SRC_SNMP: &str = "/proc/net/snmp (netstat -s); MOS 2008933.1";

pub fn check(facts: &HostFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    match facts.snmp {
        None => out.push(skip(
            "counter.snmp",
            "/proc/net/snmp",
            "cannot read /proc/net/snmp",
        )),
        Some(total) => {
            let d = facts.snmp_delta;
            let rows: [(&str, u64, Option<u64>, &str); 5] = [
                ("Ip ReasmFails", total.ip_reasm_fails, d.map(|d| d.ip_reasm_fails), "Datagrams lost because reassembly failed (fragment lost or reassembly memory full)."),
                ("Ip ReasmTimeout", total.ip_reasm_timeout, d.map(|d| d.ip_reasm_timeout), "Datagrams lost because a fragment did not arrive within ipfrag_time."),
                ("Udp InErrors", total.udp_in_errors, d.map(|d| d.udp_in_errors), "UDP datagrams received but not delivered (buffer full, checksum)."),
                ("Udp RcvbufErrors", total.udp_rcvbuf_errors, d.map(|d| d.udp_rcvbuf_errors), "UDP datagrams dropped because the socket receive buffer was full (raise rmem_default/rmem_max)."),
                ("Tcp RetransSegs", total.tcp_retrans_segs, d.map(|d| d.tcp_retrans_segs), "TCP segments sent again: loss or reordering on some path."),
            ];
            for (name, t, delta, why) in rows {
                let id = format!("counter.{}", name.replace(' ', ".").to_ascii_lowercase());
                out.push(counter(&id, name, t, delta, facts.sample_ms, why, SRC_SNMP));
            }
        }
    }
    for f in &facts.ifaces {
        let name = &f.info.name;
        let Some(c) = f.counters else {
            out.push(skip(
                "counter.iface",
                name,
                "cannot read /sys/class/net statistics",
            ));
            continue;
        };
        let d = f.counters_delta;
        let rows = [
            ("rx_errors", c.rx_errors, d.map(|d| d.rx_errors)),
            ("rx_dropped", c.rx_dropped, d.map(|d| d.rx_dropped)),
            ("tx_errors", c.tx_errors, d.map(|d| d.tx_errors)),
            ("tx_dropped", c.tx_dropped, d.map(|d| d.tx_dropped)),
        ];
        for (field, t, delta) in rows {
            out.push(counter(
                &format!("counter.iface.{field}"),
                &format!("{name} {field}"),
                t,
                delta,
                facts.sample_ms,
                "Frames the interface or driver lost: CRC errors, ring overruns, or frames larger than the MTU.",
                "/sys/class/net/IF/statistics (ip -s link)",
            ));
        }
    }
    out
}

fn counter(
    id: &str,
    subject: &str,
    total: u64,
    delta: Option<u64>,
    sample_ms: u64,
    why: &str,
    source: &str,
) -> Finding {
    let (measured, status) = match delta {
        Some(d) if sample_ms > 0 => {
            let rate = d as f64 * 1000.0 / sample_ms as f64;
            (
                format!("{total} since boot, +{d} in {sample_ms} ms ({rate:.1}/s)"),
                if d > 0 { Status::Warn } else { Status::Pass },
            )
        }
        _ => (
            format!("{total} since boot (no sample taken)"),
            Status::Pass,
        ),
    };
    FindingBuilder::new(id, subject)
        .status(status)
        .measured(measured)
        .expected("no increase during the sample")
        .why(why)
        .source(source)
        .fix(if status == Status::Warn {
            "# investigate: watch -d 'nstat -az' / ip -s link; see the related buffer and MTU findings".to_string()
        } else {
            String::new()
        })
        .build()
}
