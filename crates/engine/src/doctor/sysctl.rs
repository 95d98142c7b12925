//! sysctl rules: UDP socket buffers (RAC minimums), TCP buffer maxima against the
//! bandwidth-delay product, backlog, PMTU probing, IP reassembly, metrics caching.
//!
//! Namespaces (checked on Linux 6.18 by writing each in a child namespace):
//! net.ipv4.* here (tcp_rmem, tcp_wmem, tcp_mtu_probing, tcp_no_metrics_save,
//! ipfrag_*, conf.*.rp_filter) are per network namespace; net.core.{r,w}mem_{default,max}
//! are host-wide (read-only inside a child namespace) and net.core.netdev_max_backlog
//! is not visible at all outside the initial namespace (SKIP there).

use super::finding::{skip, skip_with, sysctl_fix, FindingBuilder};
use super::{Finding, HostFacts, Options, Status};

const SRC_GI: &str = "Oracle Grid Infrastructure Installation Guide for Linux, kernel parameters";
const SRC_FRAG: &str = "MOS 2008933.1 (node evictions, IP reassembly thresholds)";

/// (name, minimum, why) of the UDP buffer parameters, from the GI kernel parameter table.
const BUFFERS: &[(&str, u64, &str)] = &[
    ("net.core.rmem_default", 262_144, "Cache Fusion sockets start with this receive buffer; too small and bursts of blocks overflow it (Udp RcvbufErrors)."),
    ("net.core.rmem_max", 4_194_304, "Caps the receive buffer a process may ask for; below it Oracle's request is silently clipped."),
    ("net.core.wmem_default", 262_144, "Default send buffer; too small and senders block on bursts of blocks."),
    ("net.core.wmem_max", 1_048_576, "Caps the send buffer a process may ask for."),
];

pub fn check(facts: &HostFacts, opts: &Options) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, min, why) in BUFFERS {
        out.push(minimum(
            facts,
            name,
            *min,
            opts.profile.below_minimum(),
            why,
            SRC_GI,
        ));
    }
    out.push(tcp_max(facts, opts, "net.ipv4.tcp_rmem"));
    out.push(tcp_max(facts, opts, "net.ipv4.tcp_wmem"));
    out.push(minimum(
        facts,
        "net.core.netdev_max_backlog",
        1000,
        Status::Warn,
        "Packets queued per CPU between the driver and the stack; at 10G+ rates a small queue drops bursts.",
        "Linux kernel documentation, networking/scaling and sysctl/net",
    ));
    out.push(mtu_probing(facts));
    out.push(minimum(
        facts,
        "net.ipv4.ipfrag_high_thresh",
        16_777_216,
        opts.profile.below_minimum(),
        "Memory for IP fragments awaiting reassembly; when full the kernel drops fragments, and 8 KiB blocks at MTU 1500 are lost (Ip ReasmFails), a cause of node evictions.",
        SRC_FRAG,
    ));
    out.push(minimum(
        facts,
        "net.ipv4.ipfrag_low_thresh",
        15_728_640,
        opts.profile.below_minimum(),
        "Reassembly memory is pruned down to this level once the high threshold is hit; too low a value throws away most queued fragments at once.",
        SRC_FRAG,
    ));
    out.push(ipfrag_time(facts));
    out.push(no_metrics_save(facts));
    out
}

/// The SKIP finding of a parameter that could not be read, with the reason.
fn unread(facts: &HostFacts, name: &str) -> Finding {
    skip(
        &format!("sysctl.{name}"),
        name,
        facts
            .unreadable
            .get(name)
            .cloned()
            .unwrap_or_else(|| "not read".into()),
    )
}

/// A numeric parameter with a documented minimum: `below` when under it.
fn minimum(
    facts: &HostFacts,
    name: &str,
    min: u64,
    below: Status,
    why: &str,
    source: &str,
) -> Finding {
    let Some(v) = facts.sysctls.get(name).cloned() else {
        return unread(facts, name);
    };
    let Ok(n) = v.parse::<u64>() else {
        return skip(
            &format!("sysctl.{name}"),
            name,
            format!("unparsable value {v:?}"),
        );
    };
    FindingBuilder::new(&format!("sysctl.{name}"), name)
        .status(if n < min { below } else { Status::Pass })
        .measured(v)
        .expected(format!(">= {min}"))
        .why(why)
        .source(source)
        .fix(sysctl_fix(name, &min.to_string()))
        .build()
}

/// The third value of tcp_rmem/tcp_wmem must hold the bandwidth-delay product.
fn tcp_max(facts: &HostFacts, opts: &Options, name: &str) -> Finding {
    let id = format!("sysctl.{name}");
    let Some(v) = facts.sysctls.get(name).cloned() else {
        return unread(facts, name);
    };
    let parts: Vec<u64> = v
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let [lo, def, max] = parts[..] else {
        return skip(&id, name, format!("unparsable value {v:?}"));
    };
    // A stored stream run in which this very buffer held the sender back.
    let evidence = opts.evidence.as_ref().filter(|e| e.sysctl == name);
    let Some(bdp) = &opts.bdp else {
        if let Some(e) = evidence {
            return FindingBuilder::new(&id, name)
                .status(Status::Warn)
                .measured(v)
                .expected(format!("a maximum that does not limit TCP ({}: {})", e.source, e.line))
                .why("A TCP connection cannot keep more than its buffer maximum in flight; the kernel's tcp_info of a stored stream run says this buffer held the sender back.")
                .source("tcp_info tcpi_rwnd_limited / tcpi_sndbuf_limited (Linux 4.10+)")
                .fix(sysctl_fix(name, &format!("{lo} {def} {}", max.saturating_mul(2))))
                .build();
        }
        return skip_with(&id, name, &v, format!("maximum {max} not compared: give --rtt and --bandwidth (or --peer and --bandwidth, or an interface with a known link speed), or run `mtuperf stream` to this peer first"));
    };
    let need = bdp.bytes();
    let status = if max < need {
        opts.profile.below_minimum()
    } else if evidence.is_some() {
        Status::Warn
    } else {
        Status::Pass
    };
    let why = match evidence {
        Some(e) => format!("A TCP connection cannot keep more than its buffer maximum in flight, so below the bandwidth-delay product it cannot fill the path. Measured by {}: {}", e.source, e.line),
        None => "A TCP connection cannot keep more than its buffer maximum in flight, so below the bandwidth-delay product it cannot fill the path.".into(),
    };
    FindingBuilder::new(&id, name)
        .status(status)
        .measured(v)
        .expected(format!(
            "maximum >= {need} (bandwidth-delay product of {:.0} Mbit/s x {:.3} ms; {})",
            bdp.bits_per_sec / 1e6,
            bdp.rtt.as_secs_f64() * 1e3,
            bdp.source
        ))
        .why(why)
        .source("RFC 7323 section 1 (window size and the bandwidth-delay product)")
        .fix(sysctl_fix(
            name,
            &format!(
                "{lo} {def} {}",
                if max < need {
                    need
                } else {
                    max.saturating_mul(2)
                }
            ),
        ))
        .build()
}

fn mtu_probing(facts: &HostFacts) -> Finding {
    let name = "net.ipv4.tcp_mtu_probing";
    let Some(v) = facts.sysctls.get(name).cloned() else {
        return unread(facts, name);
    };
    FindingBuilder::new(&format!("sysctl.{name}"), name)
        .status(if v == "0" { Status::Warn } else { Status::Pass })
        .measured(v)
        .expected("1 (probe after an ICMP black hole is detected)")
        .why("Without packetization-layer PMTU discovery a path that drops ICMP \"fragmentation needed\" stalls TCP connections sending full-size segments.")
        .source("RFC 4821")
        .fix(sysctl_fix(name, "1"))
        .build()
}

fn ipfrag_time(facts: &HostFacts) -> Finding {
    let name = "net.ipv4.ipfrag_time";
    let Some(v) = facts.sysctls.get(name).cloned() else {
        return unread(facts, name);
    };
    let n = v.parse::<u64>().unwrap_or(0);
    FindingBuilder::new(&format!("sysctl.{name}"), name)
        .status(if n == 0 || n > 30 { Status::Warn } else { Status::Pass })
        .measured(format!("{v} s"))
        .expected("1 to 30 s (kernel default 30)")
        .why("Incomplete datagrams hold reassembly memory this long; longer times let a burst of losses fill ipfrag_high_thresh.")
        .source(SRC_FRAG)
        .fix(sysctl_fix(name, "30"))
        .build()
}

fn no_metrics_save(facts: &HostFacts) -> Finding {
    let name = "net.ipv4.tcp_no_metrics_save";
    let Some(v) = facts.sysctls.get(name).cloned() else {
        return unread(facts, name);
    };
    FindingBuilder::new(&format!("sysctl.{name}"), name)
        .measured(v.clone())
        .expected("reported (1 for repeatable benchmarks)")
        .why(if v == "0" {
            "TCP caches ssthresh and RTT per destination, so a benchmark run starts from what the previous one learned; set 1 while measuring."
        } else {
            "Metrics are not cached: each connection starts fresh."
        })
        .source("Linux kernel documentation, ip-sysctl (tcp_no_metrics_save)")
        .build()
}
