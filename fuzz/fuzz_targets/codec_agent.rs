//! Control frames as the agent reads them from an unauthenticated client.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::ClientMsg;

fuzz_target!(|data: &[u8]| {
    let mut codec = Codec::agent();
    let mut rest = data;
    // Decode frame after frame until the input runs out or is rejected.
    while let Ok(Some((_msg, used))) = codec.decode::<ClientMsg>(rest) {
        assert!(used > 4 && used <= rest.len());
        rest = &rest[used..];
    }
});
