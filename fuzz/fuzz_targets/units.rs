//! The unit parsers behind command-line values (sizes, rates, durations).
#![no_main]
use libfuzzer_sys::fuzz_target;
use mtuperf_proto::units::{format_duration, parse_duration, BitsPerSec, Bytes};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Bytes::parse(s);
    let _ = BitsPerSec::parse(s);
    if let Ok(d) = parse_duration(s) {
        let _ = format_duration(d);
    }
});
