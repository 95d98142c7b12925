//! Counter rules: each counter since boot and its increase over the sample. A counter
//! that grew during the sample is trouble happening now (WARN); a non-zero total
//! since boot alone is history and is reported as PASS with the figure.

use super::finding::{finding, skip};
use super::{Check, Counter, Finding, Fix, HostFacts, SkipReason, Status};

pub fn check(facts: &HostFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    match facts.snmp {
        None => out.push(skip(
            "counter.snmp",
            "/proc/net/snmp",
            None,
            SkipReason::NoSnmp,
        )),
        Some(total) => {
            let d = facts.snmp_delta;
            let rows = [
                (
                    Counter::IpReasmFails,
                    total.ip_reasm_fails,
                    d.map(|d| d.ip_reasm_fails),
                ),
                (
                    Counter::IpReasmTimeout,
                    total.ip_reasm_timeout,
                    d.map(|d| d.ip_reasm_timeout),
                ),
                (
                    Counter::UdpInErrors,
                    total.udp_in_errors,
                    d.map(|d| d.udp_in_errors),
                ),
                (
                    Counter::UdpRcvbufErrors,
                    total.udp_rcvbuf_errors,
                    d.map(|d| d.udp_rcvbuf_errors),
                ),
                (
                    Counter::TcpRetransSegs,
                    total.tcp_retrans_segs,
                    d.map(|d| d.tcp_retrans_segs),
                ),
            ];
            for (counter, t, delta) in rows {
                let name = counter.name();
                let id = format!("counter.{}", name.replace(' ', ".").to_ascii_lowercase());
                out.push(grew(&id, name, counter, t, delta, facts.sample_ms));
            }
        }
    }
    for f in &facts.ifaces {
        let name = &f.info.name;
        let Some(c) = f.counters else {
            out.push(skip("counter.iface", name, None, SkipReason::NoIfaceStats));
            continue;
        };
        let d = f.counters_delta;
        let rows = [
            (Counter::RxErrors, c.rx_errors, d.map(|d| d.rx_errors)),
            (Counter::RxDropped, c.rx_dropped, d.map(|d| d.rx_dropped)),
            (Counter::TxErrors, c.tx_errors, d.map(|d| d.tx_errors)),
            (Counter::TxDropped, c.tx_dropped, d.map(|d| d.tx_dropped)),
        ];
        for (counter, t, delta) in rows {
            let field = counter.name();
            out.push(grew(
                &format!("counter.iface.{field}"),
                &format!("{name} {field}"),
                counter,
                t,
                delta,
                facts.sample_ms,
            ));
        }
    }
    out
}

/// WARN when the counter grew during a sample, else PASS.
fn grew(
    id: &str,
    subject: &str,
    counter: Counter,
    total: u64,
    delta: Option<u64>,
    sample_ms: u64,
) -> Finding {
    let grew = sample_ms > 0 && delta.is_some_and(|d| d > 0);
    finding(
        id,
        subject,
        if grew { Status::Warn } else { Status::Pass },
        Check::Counter {
            counter,
            total,
            delta,
            sample_ms,
        },
        Some(Fix::Investigate),
    )
}
