//! IP, UDP and TCP counters from /proc/net/snmp and /proc/net/snmp6.
//!
//! /proc/net/snmp holds pairs of lines per protocol, a header (`Ip: Forwarding ...`)
//! then the values (`Ip: 1 64 ...`). /proc/net/snmp6 holds one `Name value` per line
//! (`Ip6ReasmFails 0`). TCP has no IPv6 table: its counters in /proc/net/snmp already
//! cover both families.

use std::fs;
use std::io;

use mtuperf_proto::host::SnmpCounters;

use crate::Error;

const SNMP: &str = "/proc/net/snmp";
const SNMP6: &str = "/proc/net/snmp6";

/// IPv4 + IPv6 counters summed (snmp6 is skipped when IPv6 is disabled).
pub fn read() -> Result<SnmpCounters, Error> {
    let v4 = fs::read_to_string(SNMP).map_err(|e| Error::read(SNMP, e))?;
    let mut c = parse(&v4);
    match fs::read_to_string(SNMP6) {
        Ok(v6) => feed_v6(&mut c, &v6),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::read(SNMP6, e)),
    }
    Ok(c)
}

/// Parses /proc/net/snmp. Unknown protocols, counters and unpaired lines are skipped.
pub fn parse(text: &str) -> SnmpCounters {
    let mut c = SnmpCounters::default();
    let mut header: Option<(&str, &str)> = None;
    for line in text.lines() {
        let Some((proto, rest)) = line.split_once(':') else {
            continue;
        };
        let first = rest.split_whitespace().next().unwrap_or("");
        // Value lines start with a number (possibly negative: Tcp MaxConn is -1).
        if !first.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            header = Some((proto, rest));
            continue;
        }
        if let Some((_, names)) = header.take().filter(|(p, _)| *p == proto) {
            for (name, value) in names.split_whitespace().zip(rest.split_whitespace()) {
                if let Ok(v) = value.parse::<u64>() {
                    add(&mut c, proto, name, v);
                }
            }
        }
    }
    c
}

/// Parses /proc/net/snmp6 into the same fields as the IPv4 counters.
pub fn parse6(text: &str) -> SnmpCounters {
    let mut c = SnmpCounters::default();
    feed_v6(&mut c, text);
    c
}

fn feed_v6(c: &mut SnmpCounters, text: &str) {
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(key), Some(value)) = (it.next(), it.next()) else {
            continue;
        };
        let Ok(v) = value.parse::<u64>() else {
            continue;
        };
        for (prefix6, proto) in [("Ip6", "Ip"), ("Udp6", "Udp")] {
            if let Some(name) = key.strip_prefix(prefix6) {
                add(c, proto, name, v);
            }
        }
    }
}

/// Adds one counter, named as in /proc/net/snmp (`Ip`, `ReasmFails`), to its field.
fn add(c: &mut SnmpCounters, proto: &str, name: &str, v: u64) {
    let field = match (proto, name) {
        ("Ip", "FragCreates") => &mut c.ip_frag_creates,
        ("Ip", "FragOKs") => &mut c.ip_frag_oks,
        ("Ip", "FragFails") => &mut c.ip_frag_fails,
        ("Ip", "ReasmReqds") => &mut c.ip_reasm_reqds,
        ("Ip", "ReasmOKs") => &mut c.ip_reasm_oks,
        ("Ip", "ReasmFails") => &mut c.ip_reasm_fails,
        ("Ip", "ReasmTimeout") => &mut c.ip_reasm_timeout,
        ("Udp", "InDatagrams") => &mut c.udp_in_datagrams,
        ("Udp", "OutDatagrams") => &mut c.udp_out_datagrams,
        ("Udp", "InErrors") => &mut c.udp_in_errors,
        ("Udp", "RcvbufErrors") => &mut c.udp_rcvbuf_errors,
        ("Udp", "SndbufErrors") => &mut c.udp_sndbuf_errors,
        ("Tcp", "RetransSegs") => &mut c.tcp_retrans_segs,
        ("Tcp", "OutSegs") => &mut c.tcp_out_segs,
        ("Tcp", "InSegs") => &mut c.tcp_in_segs,
        _ => return,
    };
    *field = field.saturating_add(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNMP_FIXTURE: &str = include_str!("../tests/fixtures/proc_net_snmp");
    const SNMP6_FIXTURE: &str = include_str!("../tests/fixtures/proc_net_snmp6");

    #[test]
    fn parses_v4_fixture() {
        let c = parse(SNMP_FIXTURE);
        let want = SnmpCounters {
            ip_frag_creates: 599_226,
            ip_frag_oks: 99_871,
            ip_frag_fails: 5,
            ip_reasm_reqds: 600_342,
            ip_reasm_oks: 100_045,
            ip_reasm_fails: 211,
            ip_reasm_timeout: 17,
            udp_in_datagrams: 43_020_111,
            udp_out_datagrams: 26_011_302,
            udp_in_errors: 7311,
            udp_rcvbuf_errors: 7290,
            udp_sndbuf_errors: 3,
            tcp_retrans_segs: 18_234,
            tcp_out_segs: 61_009_876,
            tcp_in_segs: 55_001_234,
        };
        assert_eq!(c, want);
    }

    #[test]
    fn parses_v6_fixture_ignoring_udplite() {
        let c = parse6(SNMP6_FIXTURE);
        let want = SnmpCounters {
            ip_frag_creates: 2500,
            ip_frag_oks: 500,
            ip_frag_fails: 1,
            ip_reasm_reqds: 3000,
            ip_reasm_oks: 990,
            ip_reasm_fails: 8,
            ip_reasm_timeout: 2,
            udp_in_datagrams: 1000,
            udp_out_datagrams: 900,
            udp_in_errors: 20,
            udp_rcvbuf_errors: 19,
            udp_sndbuf_errors: 4,
            ..SnmpCounters::default()
        };
        assert_eq!(c, want);
    }

    #[test]
    fn odd_input_is_skipped_not_fatal() {
        let cases: &[(&str, SnmpCounters)] = &[
            ("", SnmpCounters::default()),
            ("garbage\n\n:::\n", SnmpCounters::default()),
            // Values without a header, and a header of another protocol.
            (
                "Udp: 1 2 3\nIp: ReasmFails\nUdp: 9\n",
                SnmpCounters::default(),
            ),
            // Fewer values than names; a non-numeric value.
            (
                "Udp: InDatagrams NoPorts InErrors\nUdp: 5 x\n",
                SnmpCounters {
                    udp_in_datagrams: 5,
                    ..SnmpCounters::default()
                },
            ),
            (
                "Ip: ReasmFails\nIp: 18446744073709551615\n",
                SnmpCounters {
                    ip_reasm_fails: u64::MAX,
                    ..SnmpCounters::default()
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), *want, "{text:?}");
        }
        assert_eq!(
            parse6("Ip6ReasmFails\nUdp6InErrors -1\nIp6FragOKs 4 extra\n").ip_frag_oks,
            4
        );
    }

    #[test]
    fn live_read_sums_families() {
        let v4 = parse(&fs::read_to_string(SNMP).unwrap());
        let both = read().unwrap();
        assert!(both.tcp_in_segs >= v4.tcp_in_segs);
        assert!(both.udp_in_datagrams >= v4.udp_in_datagrams);
    }
}
