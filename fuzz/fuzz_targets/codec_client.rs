//! Control frames as a client reads them from an (unauthenticated) agent.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::AgentMsg;

fuzz_target!(|data: &[u8]| {
    let mut codec = Codec::client();
    let mut rest = data;
    while let Ok(Some((_msg, used))) = codec.decode::<AgentMsg>(rest) {
        assert!(used > 4 && used <= rest.len());
        rest = &rest[used..];
    }
});
