//! UDP datagram headers (rr and path): parse, and a parsed header writes back to the
//! same 40 bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mtuperf_proto::dgram::{checksum, Header};

fuzz_target!(|data: &[u8]| {
    let _ = checksum(data);
    if let Ok(h) = Header::read(data) {
        let mut out = [0u8; 40];
        assert!(h.write(&mut out));
        assert_eq!(&out[..], &data[..40]);
    }
});
