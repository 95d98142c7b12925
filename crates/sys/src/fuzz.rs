//! Entry points for the fuzz targets (`fuzz/`) over what the kernel hands us: the
//! error-queue `sock_extended_err` and the netlink replies (messages, attributes,
//! routes, link kinds). Each takes arbitrary bytes and must never panic; the unsafe
//! that fetches the bytes stays in the modules that call these pure parsers.
use std::hint::black_box;

/// Parses `data` as an IP_RECVERR/IPV6_RECVERR control message payload.
pub fn extended_err(data: &[u8]) {
    black_box(crate::sockopt::errqueue::parse_extended_err(
        data,
        data.len(),
    ));
}

/// Parses `data` as a netlink datagram: every message's payload as a route and a
/// link reply, and every attribute run nested once.
pub fn netlink(data: &[u8]) {
    for (ty, seq, payload) in crate::netlink::messages(data) {
        black_box((ty, seq));
        black_box(crate::route::parse_route(payload, 100));
        black_box(crate::netdev::info::parse_link_kind(payload));
        for (t, v) in crate::netlink::attrs(payload) {
            black_box(t);
            black_box(crate::netlink::attrs(v));
            black_box(crate::netlink::u32_at(v, 0));
        }
    }
    // A bare payload too (the parsers are also called on one message's body).
    black_box(crate::route::parse_route(data, 100));
    black_box(crate::netdev::info::parse_link_kind(data));
}

#[cfg(test)]
mod tests {
    use super::{extended_err, netlink};

    /// A deterministic stand-in for the fuzzer in `cargo test`: random and mutated
    /// inputs through both entry points (cargo-fuzz runs them much longer in CI).
    #[test]
    fn kernel_input_parsers_take_any_bytes() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // A valid netlink message carrying one nested attribute, to mutate.
        let mut seed = vec![0u8; 16];
        seed.extend_from_slice(&[0u8; 12]);
        seed.extend_from_slice(&[8, 0, 4, 0, 1, 0, 0, 0]);
        let len = seed.len() as u32;
        seed[..4].copy_from_slice(&len.to_ne_bytes());
        for round in 0..20_000 {
            let n = (next() % 96) as usize;
            let mut data: Vec<u8> = if round % 2 == 0 {
                (0..n).map(|_| next() as u8).collect()
            } else {
                seed.clone()
            };
            for _ in 0..(next() % 4) {
                if !data.is_empty() {
                    let i = (next() as usize) % data.len();
                    data[i] = next() as u8;
                }
            }
            extended_err(&data);
            netlink(&data);
        }
    }
}
