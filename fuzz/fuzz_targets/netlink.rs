//! Netlink replies (route and link queries): messages, attributes, nested attributes,
//! a route's fields and a link's kind from any bytes, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mtuperf_sys::fuzz::netlink(data);
});
