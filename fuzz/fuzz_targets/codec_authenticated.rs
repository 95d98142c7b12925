//! Control frames in an authenticated session, both ends. The first byte picks the
//! end; a forged tag must never verify, so nothing but a frame this codec's peer
//! encoded may decode.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mtuperf_proto::auth::Key;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentMsg, ClientMsg};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let key = Key([0x5a; 32]);
    if which & 1 == 0 {
        let mut c = Codec::agent();
        c.authenticate(key);
        // Random bytes cannot carry a valid HMAC-SHA256 tag.
        assert!(!matches!(c.decode::<ClientMsg>(rest), Ok(Some(_))));
    } else {
        let mut c = Codec::client();
        c.authenticate(key);
        assert!(!matches!(c.decode::<AgentMsg>(rest), Ok(Some(_))));
    }
});
